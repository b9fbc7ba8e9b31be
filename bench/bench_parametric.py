"""Benchmark: batched parametric tests against scipy and per-test loops.

Workloads (full mode):
  * 100,000 paired t tests on 10 folds: ``jaxtests.ttest_paired`` on a (100000, 10) array,
    scipy's vectorized ``ttest_rel(axis=-1)``, and a loop over ``pingouin.ttest(paired=True)``
    timed on a subset and scaled.
  * 10,000 paired Hotelling T² tests on 10 folds x 2 measures: ``hotelling_t2`` on a
    (10000, 10, 2) array vs a loop over ``pingouin.multivariate_ttest(paired=True)`` and
    over a numpy/scipy implementation, timed on a subset and scaled.

Correctness is checked before timing. Compilation is timed separately (first call);
timed calls are warm and ``block_until_ready``-ed. Prints ratios and JSON lines.

Usage: python bench/bench_parametric.py [--smoke]
"""

import argparse
import json
import platform
import time
import warnings

import jax
import numpy as np
import scipy.stats

from jaxtests._hotelling import hotelling_t2
from jaxtests._ttests import ttest_paired


def _best(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _block(res):
    jax.block_until_ready((res.statistic, res.pvalue))
    return res


def _emit(record):
    record.update(
        device=str(jax.devices()[0]),
        platform=platform.machine(),
        jax=jax.__version__,
        scipy=scipy.__version__,
    )
    print(json.dumps(record))


def bench_ttest(n_tests, n_loop, repeats, rng):
    import pingouin

    k = 10
    a = rng.normal(0.8, 0.02, size=(n_tests, k))
    b = a + rng.normal(0.005, 0.02, size=(n_tests, k))

    t0 = time.perf_counter()
    res = _block(ttest_paired(a, b))
    compile_s = time.perf_counter() - t0
    ref = scipy.stats.ttest_rel(a, b, axis=-1)
    np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-10)
    np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=1e-10)
    pg = pingouin.ttest(a[0], b[0], paired=True)
    np.testing.assert_allclose(
        res.pvalue[0], pg["p_val"].iloc[0] if "p_val" in pg else pg["p-val"].iloc[0], rtol=1e-10
    )

    jax_s = _best(lambda: _block(ttest_paired(a, b)), repeats)
    scipy_s = _best(lambda: scipy.stats.ttest_rel(a, b, axis=-1), repeats)

    def loop():
        for i in range(n_loop):
            pingouin.ttest(a[i], b[i], paired=True)

    loop_s = _best(loop, 1) * n_tests / n_loop
    print(f"paired t, {n_tests} tests x {k} folds")
    print(
        f"  jaxtests (warm)        {jax_s * 1e3:10.2f} ms   (first call incl. compile "
        f"{compile_s * 1e3:.0f} ms)"
    )
    print(
        f"  scipy ttest_rel (vec.) {scipy_s * 1e3:10.2f} ms   ratio scipy/jax = "
        f"{scipy_s / jax_s:.2f}"
    )
    print(
        f"  pingouin loop (scaled) {loop_s * 1e3:10.0f} ms   ratio loop/jax = "
        f"{loop_s / jax_s:.0f}  (timed {n_loop} tests)"
    )
    _emit(
        dict(
            workload="ttest_paired",
            n_tests=n_tests,
            k=k,
            jax_s=jax_s,
            compile_s=compile_s,
            scipy_s=scipy_s,
            pingouin_loop_s_scaled=loop_s,
            pingouin_loop_n=n_loop,
            ratio_scipy=scipy_s / jax_s,
            ratio_pingouin=loop_s / jax_s,
        )
    )


def _hotelling_numpy(a, b):
    d = a - b
    k, p = d.shape
    dbar = d.mean(axis=0)
    t2 = k * dbar @ np.linalg.solve(np.cov(d, rowvar=False), dbar)
    f = t2 * (k - p) / (p * (k - 1))
    return t2, scipy.stats.f.sf(f, p, k - p)


def bench_hotelling(n_tests, n_loop, repeats, rng):
    import pingouin

    k, p = 10, 2
    a = rng.normal(size=(n_tests, k, p)) * 0.02 + np.array([0.9, 0.1])
    b = a + rng.normal(size=(n_tests, k, p)) * 0.02 + np.array([0.01, 0.0])

    t0 = time.perf_counter()
    res = _block(hotelling_t2(a, b))
    compile_s = time.perf_counter() - t0
    for i in range(3):
        ref = pingouin.multivariate_ttest(a[i], b[i], paired=True)
        np.testing.assert_allclose(res.statistic[i], ref["T2"].iloc[0], rtol=1e-10)
        np.testing.assert_allclose(res.pvalue[i], ref["pval"].iloc[0], rtol=1e-10)
        np.testing.assert_allclose(res.pvalue[i], _hotelling_numpy(a[i], b[i])[1], rtol=1e-10)

    jax_s = _best(lambda: _block(hotelling_t2(a, b)), repeats)

    def loop_pg():
        for i in range(n_loop):
            pingouin.multivariate_ttest(a[i], b[i], paired=True)

    def loop_np():
        for i in range(n_loop):
            _hotelling_numpy(a[i], b[i])

    pg_s = _best(loop_pg, 1) * n_tests / n_loop
    np_s = _best(loop_np, 1) * n_tests / n_loop
    print(f"paired Hotelling T², {n_tests} tests x {k} folds x {p} measures")
    print(
        f"  jaxtests (warm)        {jax_s * 1e3:10.2f} ms   (first call incl. compile "
        f"{compile_s * 1e3:.0f} ms; includes per-measure t tests, Holm, singularity check)"
    )
    print(
        f"  pingouin loop (scaled) {pg_s * 1e3:10.0f} ms   ratio loop/jax = "
        f"{pg_s / jax_s:.0f}  (timed {n_loop} tests)"
    )
    print(
        f"  numpy/scipy loop       {np_s * 1e3:10.0f} ms   ratio loop/jax = "
        f"{np_s / jax_s:.0f}  (timed {n_loop} tests)"
    )
    _emit(
        dict(
            workload="hotelling_t2",
            n_tests=n_tests,
            k=k,
            p=p,
            jax_s=jax_s,
            compile_s=compile_s,
            pingouin_loop_s_scaled=pg_s,
            numpy_loop_s_scaled=np_s,
            loop_n=n_loop,
            ratio_pingouin=pg_s / jax_s,
            ratio_numpy=np_s / jax_s,
        )
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, runs in seconds")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)
    rng = np.random.default_rng(0)
    if args.smoke:
        bench_ttest(2_000, 20, 2, rng)
        bench_hotelling(500, 10, 2, rng)
    else:
        bench_ttest(100_000, 500, 5, rng)
        bench_hotelling(10_000, 300, 5, rng)


if __name__ == "__main__":
    main()
