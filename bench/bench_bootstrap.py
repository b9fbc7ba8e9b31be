"""Benchmark: bootstrap intervals and DeLong's test against scipy and numpy, side by side.

Workloads (full mode; ``--smoke`` shrinks them to seconds):
  * BCa interval of an AUC difference, n = 10,000 paired instances, 10^5 resamples:
    ``jaxtests.bootstrap(..., "roc_auc_difference")`` (each resample's counts read in each
    score's sorted layout, closed-form jackknife) vs ``scipy.stats.bootstrap`` with a
    vectorised numpy AUC (``scipy.stats.rankdata`` along the resample axis, ``batch=250``).
    scipy's run is timed at
    ``--scipy-resamples`` (default 1,000) for its percentile interval and again for BCa (whose
    jackknife of n statistics is fixed work); its time at 10^5 is extrapolated as
    ``t_BCa(B_s) + (10^5 / B_s - 1) t_percentile(B_s)`` (linear in the resamples), and
    ``--scipy-full`` runs it instead.
  * DeLong's test on n = 10^6 instances: ``jaxtests.delong_test`` vs a numpy fast DeLong
    (Sun & Xu 2014 with ``scipy.stats.rankdata`` midranks), the same numbers first.

  * Where the interval's time goes (``--components``): process CPU time per resample of the
    jitted pieces, one block of the library's resample kernel at a time: the random indices
    alone, the indices and each resample's scatter into counts, and the whole kernel (both
    AUCs).

Correctness first: the intervals agree within Monte Carlo error (0.25 standard errors) and the
DeLong z and covariance to 1e-9. Reports the first call (compile included, in this process: run
with ``JAXTESTS_CACHE_DIR=`` for a cold compile), the best warm call and their difference (the
compile time), with the load average (the machine is shared); prints JSON lines.

Usage: python bench/bench_bootstrap.py [--smoke] [--scipy-resamples B] [--scipy-full]
       [--components]
"""

import argparse
import json
import os
import platform
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy
import scipy.stats

import jaxtests
from jaxtests import _bootstrap_draws
from jaxtests._precision import x64

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")


def _np_auc(y, s, axis=-1):
    r = scipy.stats.rankdata(s, axis=axis)
    pos = y > 0
    n_pos = pos.sum(axis=axis)
    n_neg = y.shape[axis] - n_pos
    return ((r * pos).sum(axis=axis) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _np_auc_diff(y, a, b, axis=-1):
    return _np_auc(y, a, axis) - _np_auc(y, b, axis)


def _np_delong(y, a, b):
    """Sun & Xu (2014) in numpy: midranks overall and within each class."""
    pos = y > 0
    m, n = pos.sum(), (~pos).sum()
    out_auc, v10s, v01s = [], [], []
    for s in (a, b):
        t = scipy.stats.rankdata(s)
        tx = scipy.stats.rankdata(s[pos])
        ty = scipy.stats.rankdata(s[~pos])
        auc = (t[pos].sum() - m * (m + 1) / 2) / (m * n)
        v10s.append((t[pos] - tx) / n)
        v01s.append(1 - (t[~pos] - ty) / m)
        out_auc.append(auc)
    cov = np.cov(np.stack(v10s)) / m + np.cov(np.stack(v01s)) / n
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    return np.array(out_auc), cov, (out_auc[0] - out_auc[1]) / np.sqrt(var)


_CPU = {}  # process CPU seconds of the last _timed call (robust to other load on the machine)


def _timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    _CPU["last"] = time.process_time() - c0
    return out, time.perf_counter() - t0


def _data(n, seed):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1, -1)
    a = rng.normal(size=n) + 1.0 * (y > 0)
    b = 0.4 * a + rng.normal(size=n) + 0.8 * (y > 0)
    return y, a, b


def _record(**kw):
    kw.update(
        device=str(jax.devices()[0]),
        platform=platform.machine(),
        jax=jax.__version__,
        scipy=scipy.__version__,
        numpy=np.__version__,
        load_avg_1min=os.getloadavg()[0],
        cpus=os.cpu_count(),
        # dispatches in flight for a built-in statistic (one per core on the CPU)
        host_threads=_bootstrap_draws.host_threads("mean", (jnp.zeros(1),)),
    )
    print(json.dumps(kw))


def bench_bca(n, n_resamples, scipy_resamples, scipy_full):
    y, a, b = _data(n, 0)
    data = (y, a, b)
    r, first = _timed(
        lambda: jaxtests.bootstrap(data, "roc_auc_difference", n_resamples=n_resamples, key=0)
    )
    _, warm = _timed(
        lambda: jaxtests.bootstrap(data, "roc_auc_difference", n_resamples=n_resamples, key=1)
    )
    cpu_warm = _CPU["last"]
    b_s = n_resamples if scipy_full else min(scipy_resamples, n_resamples)
    kw = dict(paired=True, n_resamples=b_s, batch=250, rng=0)
    s_bca, t_bca = _timed(lambda: scipy.stats.bootstrap(data, _np_auc_diff, method="BCa", **kw))
    c_bca = _CPU["last"]
    if scipy_full:
        t_scipy, how, c_scipy = t_bca, "measured", c_bca
    else:
        _, t_pct = _timed(
            lambda: scipy.stats.bootstrap(data, _np_auc_diff, method="percentile", **kw)
        )
        t_scipy = t_bca + (n_resamples / b_s - 1) * t_pct
        c_scipy = c_bca + (n_resamples / b_s - 1) * _CPU["last"]
        how = f"extrapolated from {b_s} resamples (BCa {t_bca:.2f} s, percentile {t_pct:.2f} s)"
    # Correctness: the intervals within Monte Carlo error of scipy's (its B_s resamples)
    se = float(s_bca.standard_error)
    d_lo = abs(r.confidence_interval.low - s_bca.confidence_interval.low) / se
    d_hi = abs(r.confidence_interval.high - s_bca.confidence_interval.high) / se
    ok = bool(d_lo < 0.25 and d_hi < 0.25)
    name = f"BCa AUC difference n={n} B={n_resamples}"
    print(
        f"{name}   (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)\n"
        f"  jaxtests  warm {warm:8.2f} s ({cpu_warm:.2f} s CPU)   first call {first:8.2f} s "
        f"(compile and first run; compile ~{first - warm:.2f} s)\n"
        f"  scipy     {t_scipy:8.2f} s ({how})\n"
        f"  ratio scipy/jaxtests = {t_scipy / warm:.3g} warm, {t_scipy / first:.3g} first call; "
        f"CPU time {c_scipy:.1f} s / {cpu_warm:.1f} s = {c_scipy / cpu_warm:.3g}\n"
        f"  interval jaxtests ({r.confidence_interval.low:.5f}, {r.confidence_interval.high:.5f})"
        f" scipy ({s_bca.confidence_interval.low:.5f}, {s_bca.confidence_interval.high:.5f})"
        f" -> within {max(d_lo, d_hi):.3f} se: {'ok' if ok else 'MISMATCH'}"
    )
    _record(
        workload=name,
        jax_s=warm,
        jax_first_s=first,
        jax_compile_s=first - warm,
        ref="scipy.stats.bootstrap + numpy rankdata AUC",
        ref_s=t_scipy,
        ref_how=how,
        ratio_warm=t_scipy / warm,
        jax_cpu_s=cpu_warm,
        ref_cpu_s=c_scipy,
        ratio_cpu=c_scipy / cpu_warm,
        agree=bool(ok),
    )
    return ok


def bench_delong(n):
    y, a, b = _data(n, 1)
    r, first = _timed(lambda: jaxtests.delong_test(y, a, b))
    runs = [(_timed(lambda: jaxtests.delong_test(y, a, b))[1], _CPU["last"]) for _ in range(3)]
    warm, cpu_warm = min(runs)
    (auc, cov, z), t_np = _timed(lambda: _np_delong(y, a, b))
    cpu_np = _CPU["last"]
    ok = np.allclose([r.auc_a, r.auc_b], auc, rtol=1e-12) and np.allclose(
        r.covariance, cov, rtol=1e-9
    )
    ok = bool(ok and abs(r.statistic - z) <= 1e-9 * abs(z))
    name = f"DeLong n={n}"
    print(
        f"{name}\n  jaxtests  warm {warm:8.3f} s   first call {first:8.3f} s\n"
        f"  numpy     {t_np:8.3f} s (Sun & Xu with scipy rankdata)   ratio {t_np / warm:.3g}; "
        f"CPU time {cpu_np:.3f} s / {cpu_warm:.3f} s\n"
        f"  z {float(r.statistic):.6f} vs {z:.6f}: {'ok' if ok else 'MISMATCH'}"
    )
    _record(workload=name, jax_s=warm, jax_first_s=first, ref="numpy fast DeLong", ref_s=t_np,
            ratio_warm=t_np / warm, jax_cpu_s=cpu_warm, ref_cpu_s=cpu_np,
            agree=bool(ok))  # fmt: skip
    return ok


@x64
def bench_components(n, reps=5):
    """CPU microseconds per resample of the resample kernel's pieces (one dispatch of blocks)."""
    from jaxtests.kernels import bootstrap as kboot

    y, a, b = _data(n, 0)
    samples = tuple(jnp.asarray(v) for v in (y, a, b))
    layouts = _bootstrap_draws.layouts("roc_auc_difference", [y, a, b])
    draws, n_blocks = _bootstrap_draws.block_draws(samples, True), 8
    key = jax.random.key(0)

    def blocks(piece):
        @jax.jit
        def run(key):
            def one(g):
                idx = kboot.draw_indices(key, g * draws, draws, 0, n)
                if piece == "indices":
                    return jnp.sum(idx, dtype=jnp.uint32).astype(jnp.int32)

                def row(i):  # a reduction per row: nothing of size n written back, as the kernel
                    c = jnp.zeros((n + 1,), jnp.int32).at[i].add(1, mode="promise_in_bounds")
                    return jnp.max(c)

                return jnp.sum(jax.lax.map(row, idx), dtype=jnp.int32)

            return jax.lax.map(one, jnp.arange(n_blocks, dtype=jnp.int64))

        return lambda: run(key)

    pieces = {
        "random indices (threefry key per draw, hash words, multiply-shift)": blocks("indices"),
        "indices + per-resample scatter into counts": blocks("counts"),
        "whole kernel (indices, counts, both AUCs from the sorted layouts)": lambda: (
            _bootstrap_draws.resample_blocks(
                key, jnp.int64(0), samples, layouts, "roc_auc_difference", True, draws, n_blocks
            )
        ),
    }
    print(
        f"Resample kernel pieces, n={n}, {draws} draws a block, CPU us per resample (min of {reps})"
    )
    out = {}
    for name, fn in pieces.items():
        jax.block_until_ready(fn())
        cpu = []
        for _ in range(reps):
            _timed(lambda fn=fn: jax.block_until_ready(fn()))
            cpu.append(_CPU["last"])
        best = min(cpu)
        out[name] = best / (draws * n_blocks) * 1e6
        print(f"  {out[name]:8.2f}  {name}")
    _record(workload=f"bootstrap kernel pieces n={n}", us_per_resample_cpu=out)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="small sizes (seconds)")
    ap.add_argument("--scipy-resamples", type=int, default=1000)
    ap.add_argument("--scipy-full", action="store_true")
    ap.add_argument("--components", action="store_true", help="time the kernel's pieces only")
    args = ap.parse_args()
    if args.components:
        bench_components(1000 if args.smoke else 10_000)
        return
    if args.smoke:
        ok = bench_bca(1000, 2000, 400, args.scipy_full) & bench_delong(10_000)
    else:
        ok = bench_bca(10_000, 100_000, args.scipy_resamples, args.scipy_full)
        ok &= bench_delong(1_000_000)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
