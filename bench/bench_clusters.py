"""Benchmark of the clustered tests (issue 38): 10^6 items in 10^4 clusters.

Rows, one run, one machine:

- the cluster sign flip at 10^6 draws (``signflip_test(d, cluster=g)``) beside a numpy
  loop doing the same count (a (1024, G) matrix of random signs times the clusters' sums
  per block);
- the cluster-robust t (CR1 and CR2) beside statsmodels' ``OLS(...).fit(cov_type="cluster")``;
- the wild cluster bootstrap (Rademacher) beside wildboottest on 10^5 items in 200 clusters
  (wildboottest's G x G loop in Python does not finish at 10^4 clusters), 9,999 draws.

Each jaxtests row gives the first call (compiling included) beside the best warm call.
Then the level study: rejection rates at alpha = 5% under H0 with intra-cluster
correlation 0.3, 40 clusters of 10 items, of the clustered tests beside the naive ones.
``--smoke`` shrinks the sizes to run in seconds.
"""

import argparse
import os
import time

import numpy as np

import jaxtests

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")


def timed(fn, repeat=2):
    """(first call, best warm call) in seconds, and the last result."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return first, best, out


def numpy_cluster_flips(d, labels, n_draws, seed):
    """The count of a two-sided cluster sign flip of the mean, written plainly in numpy."""
    sums = np.bincount(labels, weights=d)
    rng = np.random.default_rng(seed)
    t = sums.sum()
    ge = le = 0
    for _ in range(n_draws // 1024):
        s = rng.integers(0, 2, (1024, sums.size), dtype=np.int8) * 2 - 1
        flipped = s @ sums
        ge += int(np.sum(flipped >= t))
        le += int(np.sum(flipped <= t))
    n = n_draws // 1024 * 1024
    return min(1.0, 2 * min((ge + 1) / (n + 1), (le + 1) / (n + 1)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (seconds)")
    args = parser.parse_args()
    m, g, draws = (10**6, 10**4, 10**6) if not args.smoke else (2000, 50, 4096)
    m_w, g_w, wild_draws = (10**5, 200, 9999) if not args.smoke else (500, 20, 99)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, g, m)
    labels[:g] = np.arange(g)  # every cluster present
    d = 0.3 * rng.normal(size=g)[labels] + rng.normal(size=m) + 0.001
    zero = np.zeros(m)
    rows = []

    first, warm, r = timed(
        lambda: jaxtests.signflip_test(d, cluster=labels, n_resamples=draws, key=1)
    )
    t0 = time.perf_counter()
    p_np = numpy_cluster_flips(d, labels, draws, 1)
    t_np = time.perf_counter() - t0
    rows.append(
        (
            f"cluster sign flip, m = {m:,}, G = {g:,}, {draws:,} draws",
            first,
            warm,
            f"numpy loop {t_np:.2f} s (p {p_np:.4f} vs {float(r.pvalue):.4f})",
        )
    )

    import statsmodels.api as sm

    for kind in ("CR1", "CR2"):
        first, warm, r = timed(
            lambda kind=kind: jaxtests.ttest_paired(d, zero, cluster=labels, cluster_se=kind)
        )
        peer = ""
        if kind == "CR1":
            t0 = time.perf_counter()
            fit = sm.OLS(d, np.ones((m, 1))).fit(
                cov_type="cluster", cov_kwds={"groups": labels}, use_t=True
            )
            t_sm = time.perf_counter() - t0
            peer = f"statsmodels {t_sm:.2f} s (t {fit.tvalues[0]:.6f} vs {float(r.statistic):.6f})"
        rows.append((f"ttest_paired cluster_se={kind}, m = {m:,}, G = {g:,}", first, warm, peer))

    labels_w = rng.integers(0, g_w, m_w)
    labels_w[:g_w] = np.arange(g_w)
    d_w = 0.3 * rng.normal(size=g_w)[labels_w] + rng.normal(size=m_w)
    first, warm, r = timed(
        lambda: jaxtests.wild_cluster_bootstrap(
            d_w, np.zeros(m_w), cluster=labels_w, n_resamples=wild_draws, key=1
        ),
        repeat=1,
    )
    peer = "wildboottest not installed"
    try:
        from wildboottest.wildboottest import wildboottest
    except ImportError:
        pass
    else:
        import pandas as pd

        frame = pd.DataFrame({"d": d_w, "one": 1.0})
        model = sm.OLS(frame["d"], frame[["one"]])
        wildboottest(model, B=9, cluster=labels_w, param="one", seed=1, show=False)  # numba
        t0 = time.perf_counter()
        out = wildboottest(model, B=wild_draws, cluster=labels_w, param="one", seed=1, show=False)
        t_w = time.perf_counter() - t0
        peer = (
            f"wildboottest {t_w:.2f} s (p {float(out['p-value'].iloc[0]):.4f} vs "
            f"{float(r.pvalue):.4f})"
        )
    rows.append(
        (f"wild cluster bootstrap, m = {m_w:,}, G = {g_w}, {wild_draws:,} draws", first, warm, peer)
    )

    print("| workload | first call | warm | peer |")
    print("| --- | --- | --- | --- |")
    for name, first, warm, peer in rows:
        print(f"| {name} | {first:.2f} s | {warm:.3f} s | {peer} |")
    print()
    print(level_study(200 if args.smoke else 4000))


def level_study(n_sets, g=40, size=10, icc=0.3):
    """Rejection rates at 5% under H0 (a markdown table), clustered beside naive."""
    rng = np.random.default_rng(2026)
    labels = np.repeat(np.arange(g), size)
    d = np.sqrt(icc) * rng.normal(size=(n_sets, g))[:, labels]
    d = d + np.sqrt(1 - icc) * rng.normal(size=(n_sets, g * size))
    zero = np.zeros_like(d)
    kw = {"n_resamples": 999, "key": 1}
    tests = {
        "paired t": (
            lambda: jaxtests.ttest_paired(d, zero),
            lambda: jaxtests.ttest_paired(d, zero, cluster=labels),
        ),
        "paired t, CR2": (
            None,
            lambda: jaxtests.ttest_paired(d, zero, cluster=labels, cluster_se="CR2"),
        ),
        "sign flip": (
            lambda: jaxtests.signflip_test(d, **kw),
            lambda: jaxtests.signflip_test(d, cluster=labels, **kw),
        ),
        "wild cluster bootstrap": (
            None,
            lambda: jaxtests.wild_cluster_bootstrap(d, zero, cluster=labels, **kw),
        ),
        "bootstrap test (percentile)": (
            lambda: jaxtests.bootstrap_test((d, zero), method="percentile", **kw),
            lambda: jaxtests.bootstrap_test((d, zero), cluster=labels, method="percentile", **kw),
        ),
    }
    se = np.sqrt(0.05 * 0.95 / n_sets)
    lines = [
        f"Level at alpha = 5%, H0, ICC {icc}, {g} clusters of {size}, {n_sets:,} data sets "
        f"(Monte Carlo SE {se:.4f}):",
        "",
        "| test | naive | clustered |",
        "| --- | --- | --- |",
    ]
    for name, (naive, clustered) in tests.items():
        rate = lambda fn: "" if fn is None else f"{np.mean(fn().pvalue < 0.05):.4f}"  # noqa: E731
        lines.append(f"| {name} | {rate(naive)} | {rate(clustered)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
