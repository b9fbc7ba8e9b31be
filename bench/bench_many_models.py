"""Many models on one benchmark (issue 38): all pairs of k models on m items with max-T.

``jaxtests.compare_models`` (one (draws, m) @ (m, k) product per block of sign patterns,
counts accumulated per block) beside the nearest peer, a numpy loop doing the same
computation (blocks of +-1 sign patterns from numpy's generator, the same product, the
same pair differences and max-T counts). Correctness first, on a small problem: the
raw and max-T p-values equal ``jaxtests.signflip_test`` of the stacked pair differences
with the same key, and the numpy loop's p-values agree within Monte Carlo error.

Timed: the first call in this process (compile + run) and a warm call; the numpy loop
once. Prints a table and JSON lines. Full size: 100 models x 10^5 items x 10^4 draws;
``--smoke``: tiny sizes (the test suite runs it).
"""

import argparse
import json
import os
import platform
import time

import jax
import numpy as np

import jaxtests

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")


def data(k, m, seed=0):
    """0/1 correctness of k models whose accuracies spread from 0.60 to 0.70."""
    rng = np.random.default_rng(seed)
    acc = np.linspace(0.60, 0.70, k)[:, None]
    # a shared item difficulty: models agree on items, as on real benchmarks
    easy = rng.random(m) < 0.5
    p = np.where(easy, np.minimum(acc + 0.25, 1.0), np.maximum(acc - 0.25, 0.0))
    return (rng.random((k, m)) < p).astype(np.float64)


def numpy_maxt(x, n_resamples, seed, block=256):
    """Raw and max-T adjusted two-sided sign-flip p-values of all pairs, in numpy."""
    k, m = x.shape
    y = x - x.mean(axis=0)
    ia, ib = np.triu_indices(k, 1)
    t_obs = (y.sum(1)[ia] - y.sum(1)[ib]) / m
    sd = np.sqrt(np.array([np.sum((y[a] - y[b]) ** 2) for a, b in zip(ia, ib)])) / m
    sd = np.where(sd > 0, sd, 1.0)
    tol = 1e-9 * np.maximum(np.abs(t_obs), 1e-300)
    ge = np.zeros(len(ia), np.int64)
    mx = np.zeros(len(ia), np.int64)
    rng = np.random.default_rng(seed)
    zo = np.abs(t_obs) / sd
    for start in range(0, n_resamples, block):
        b = min(block, n_resamples - start)
        s = rng.integers(0, 2, size=(b, m), dtype=np.int8) * 2.0 - 1.0
        t = s @ y.T
        pair = (t[:, ia] - t[:, ib]) / m  # (b, P)
        ge += np.sum(np.abs(pair) >= np.abs(t_obs) - tol, axis=0)
        mx += np.sum(np.max(np.abs(pair) / sd, axis=1)[:, None] >= zo - 1e-9, axis=0)
    p = np.minimum(1.0, (ge + 1) / (n_resamples + 1))
    return p, np.maximum(p, (mx + 1) / (n_resamples + 1))


def check(k, m, n_resamples):
    x = data(k, m, seed=1)
    r = jaxtests.compare_models(x, n_resamples=n_resamples, n_bootstrap=0, key=7)
    ia, ib = r.pairs.T
    s = jaxtests.signflip_test(
        x[ia] - x[ib], method="monte-carlo", n_resamples=n_resamples, key=7, correction="maxT"
    )
    assert np.array_equal(r.pvalue, s.pvalue), "raw p differs from signflip_test"
    assert np.array_equal(r.pvalue_adjusted, s.pvalue_adjusted), "max-T differs"
    p, padj = numpy_maxt(x, n_resamples, seed=7)
    # two independent Monte Carlo estimates: within 5 binomial standard errors
    se = np.sqrt(2 * np.maximum(p, 1 / n_resamples) * (1 - p) / n_resamples)
    assert np.all(np.abs(p - r.pvalue) <= 5 * se + 1e-12), "numpy loop disagrees (raw)"
    se = np.sqrt(2 * np.maximum(padj, 1 / n_resamples) * (1 - padj) / n_resamples)
    assert np.all(np.abs(padj - r.pvalue_adjusted) <= 5 * se + 1e-12), "numpy loop (max-T)"
    return f"k={k} m={m} B={n_resamples}: equal to signflip_test; numpy loop within 5 SE"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="tiny sizes")
    ap.add_argument("--no-peer", action="store_true", help="skip the numpy loop")
    args = ap.parse_args()
    k, m, b = (6, 500, 300) if args.smoke else (100, 100_000, 10_000)
    print("check:", check(5, 300, 400) if args.smoke else check(8, 2000, 2000))
    x = data(k, m)
    rows = []
    t0 = time.perf_counter()
    r = jaxtests.compare_models(x, n_resamples=b, n_bootstrap=0, key=0)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = jaxtests.compare_models(x, n_resamples=b, n_bootstrap=0, key=1)
    warm = time.perf_counter() - t0
    rows.append(("jaxtests.compare_models (maxT)", first, warm))
    nb = 100 if args.smoke else 1000
    t0 = time.perf_counter()
    jaxtests.compare_models(x, n_resamples=b, n_bootstrap=nb, key=1)
    first_ranks = time.perf_counter() - t0
    t0 = time.perf_counter()
    jaxtests.compare_models(x, n_resamples=b, n_bootstrap=nb, key=2)
    with_ranks = time.perf_counter() - t0
    rows.append((f"same + rank intervals ({nb} bootstrap resamples)", first_ranks, with_ranks))
    if not args.no_peer:
        t0 = time.perf_counter()
        numpy_maxt(x, b, seed=0)
        peer = time.perf_counter() - t0
        rows.append(("numpy loop (blocks of 256 draws)", None, peer))
    print(f"\n{k} models x {m:,} items, {k * (k - 1) // 2:,} pairs, max-T at {b:,} draws")
    print(f"reject {int(r.reject.sum())} of {len(r.reject)} pairs at 5% family-wise")
    print("| what | first call (s) | warm (s) |\n| --- | --- | --- |")
    for name, f, w in rows:
        print(f"| {name} | {'' if f is None else f'{f:.2f}'} | {w:.2f} |")
    if not args.no_peer:
        print(f"numpy loop / jaxtests warm: {peer / warm:.1f}x")
    info = dict(
        device=str(jax.devices()[0]),
        jax=jax.__version__,
        cpus=os.cpu_count(),
        machine=platform.processor() or platform.machine(),
        k=k,
        m=m,
        draws=b,
    )
    for name, f, w in rows:
        print(json.dumps(dict(info, what=name, first_s=f, warm_s=w)))


if __name__ == "__main__":
    main()
