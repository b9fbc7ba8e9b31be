"""Benchmark: the rank tests over many data sets against scipy, side by side.

Workloads (full mode; ``--smoke`` shrinks them to seconds):
  * Wilcoxon exact, one test of n = 50 (scipy's "auto" exact limit) and n = 500 paired scores
    without ties: ``jaxtests.wilcoxon(method="exact")`` (the sign-flip engine's subset-sum
    counts of the doubled ranks) vs ``scipy.stats.wilcoxon(method="exact")`` (its recursion).
  * Wilcoxon with ties and zeros, n = 30: jaxtests exact (every sign pattern, 2^28 of them
    counted by the engine) vs scipy's ``PermutationMethod`` (Monte Carlo, 9,999 draws: its
    answer when there are ties and n > 13 is the normal approximation or this).
  * Wilcoxon Monte Carlo at equal draws (9,999), n = 30 with ties: ``method="permutation"``
    vs scipy's ``PermutationMethod``.
  * 10,000 Friedman tests (N = 20 data sets, k = 5 learners): one batched ``jaxtests.friedman``
    vs ``scipy.stats.friedmanchisquare(axis=-1)``.
  * Friedman exact, 1,000 tables of N = 5 data sets, k = 5 learners with ties (scores rounded
    to 0, 1, 2, 3): one batched ``jaxtests.friedman(method="exact")`` (each distinct multiset
    of data sets counted once, shared parts once; issue 42.3) vs scipy's
    ``permutation_test(permutation_type="samples")`` per table (Monte Carlo, 9,999 draws:
    scipy has no exact Friedman null), timed on 10 tables and scaled.
  * Friedman permutation (within-data-set permutations), N = 20, k = 5, 99,999 draws:
    ``jaxtests.friedman(method="permutation")`` vs ``scipy.stats.permutation_test(
    permutation_type="samples")`` on ``friedmanchisquare`` (vectorized).

Each workload checks agreement first, then reports the first call (compile included, in
this process: run with ``JAXTESTS_CACHE_DIR=`` for a cold compile) and the best warm call.
Prints a table and JSON lines.

Usage: python bench/bench_ranks.py [--smoke]
"""

import argparse
import json
import os
import platform
import time
import warnings

import jax
import numpy as np
import scipy.stats

import jaxtests

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")


def _best(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _first(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _p(res):
    return np.asarray(jax.block_until_ready(res.pvalue))


def _report(name, jax_first, jax_s, ref_name, ref_s, extra):
    print(
        f"{name}\n  jaxtests  warm {jax_s * 1e3:10.2f} ms   first call {jax_first * 1e3:8.0f} ms\n"
        f"  {ref_name:<8}  warm {ref_s * 1e3:10.2f} ms   ratio {ref_name}/jaxtests = "
        f"{ref_s / jax_s:.3g} warm, {ref_s / jax_first:.3g} first call"
    )
    record = dict(
        workload=name,
        jax_s=jax_s,
        jax_first_s=jax_first,
        ref=ref_name,
        ref_s=ref_s,
        ratio_warm=ref_s / jax_s,
        ratio_first=ref_s / jax_first,
        cache=os.environ.get("JAXTESTS_CACHE_DIR", "default"),
        device=str(jax.devices()[0]),
        platform=platform.machine(),
        jax=jax.__version__,
        scipy=scipy.__version__,
        **extra,
    )
    print(json.dumps(record))


def bench_wilcoxon_exact(n, repeats, rng):
    x = rng.normal(0.2, 1, n)
    y = rng.normal(0, 1, n)
    res, first = _first(lambda: _p(jaxtests.wilcoxon(x, y, method="exact")))
    ref = scipy.stats.wilcoxon(x, y, method="exact")
    np.testing.assert_allclose(res, ref.pvalue, rtol=1e-10)
    jax_s = _best(lambda: _p(jaxtests.wilcoxon(x, y, method="exact")), repeats)
    ref_s = _best(lambda: scipy.stats.wilcoxon(x, y, method="exact"), repeats)
    _report(f"wilcoxon exact, n = {n}, no ties", first, jax_s, "scipy", ref_s, dict(n=n))


def _tied(n, rng):
    x = np.round(rng.normal(0.3, 1, n), 1)
    y = np.round(rng.normal(0, 1, n), 1)
    y[:2] = x[:2]  # two zero differences
    return x, y


def bench_wilcoxon_ties(n, draws, repeats, rng):
    x, y = _tied(n, rng)
    method = scipy.stats.PermutationMethod(n_resamples=draws, rng=1)
    res, first = _first(lambda: _p(jaxtests.wilcoxon(x, y, method="exact")))
    ref = scipy.stats.wilcoxon(x, y, method=method)
    # scipy's Monte Carlo p against the exact one: within 5 standard errors.
    se = np.sqrt(max(float(res), 1 / draws) * (1 - float(res)) / draws)
    assert abs(ref.pvalue - float(res)) <= 5 * se + 1 / draws, (ref.pvalue, res)
    jax_s = _best(lambda: _p(jaxtests.wilcoxon(x, y, method="exact")), repeats)
    ref_s = _best(lambda: scipy.stats.wilcoxon(x, y, method=method), repeats)
    name = f"wilcoxon with ties, n = {n}: jaxtests exact (2^{n - 2} patterns) vs scipy MC"
    # (scipy has no exact null with ties: its "auto" is the normal approximation here.)
    _report(name, first, jax_s, "scipy", ref_s, dict(n=n, scipy_draws=draws))

    def mc():
        return _p(jaxtests.wilcoxon(x, y, method="permutation", n_resamples=draws, key=1))

    res_mc, first = _first(mc)
    se = np.sqrt(max(float(res), 1 / draws) * (1 - float(res)) / draws)
    assert abs(float(res_mc) - float(res)) <= 5 * se + 1 / draws, (res_mc, res)
    jax_s = _best(mc, repeats)
    name = f"wilcoxon Monte Carlo, n = {n} with ties, {draws} draws each"
    _report(name, first, jax_s, "scipy", ref_s, dict(n=n, draws=draws))


def bench_friedman_batch(n_tests, n, k, repeats, rng):
    x = rng.normal(size=(n_tests, n, k)) + np.linspace(0, 0.3, k)
    res, first = _first(lambda: _p(jaxtests.friedman(x)))
    ref = scipy.stats.friedmanchisquare(*np.moveaxis(x, -1, 0), axis=-1)
    np.testing.assert_allclose(res, ref.pvalue, rtol=1e-10)
    jax_s = _best(lambda: _p(jaxtests.friedman(x)), repeats)

    def ref_call():
        return scipy.stats.friedmanchisquare(*np.moveaxis(x, -1, 0), axis=-1)

    ref_s = _best(ref_call, repeats)
    name = f"friedman chi2, {n_tests} tests of N = {n} x k = {k} (one batched call)"
    _report(name, first, jax_s, "scipy", ref_s, dict(n_tests=n_tests, N=n, k=k))


def bench_friedman_exact_ties(n_tests, n, k, draws, repeats, rng):
    from jaxtests import _friedman_exact

    x = rng.integers(0, 4, size=(n_tests, n, k)).astype(float)

    def ours():
        _friedman_exact._NULLS.clear()  # count every table again: no result kept from before
        return _p(jaxtests.friedman(x, method="exact"))

    def theirs(table):
        return _scipy_friedman_permutation(table, draws, seed=3)

    res, first = _first(ours)
    n_ref = 10
    t0 = time.perf_counter()
    refs = [theirs(x[i]) for i in range(n_ref)]
    ref_s = (time.perf_counter() - t0) / n_ref * n_tests
    for got, ref in zip(res[:n_ref], refs):
        # scipy's Monte Carlo p (an exact rank null with ties) within 5 standard errors
        se = np.sqrt(max(float(got), 1 / draws) * (1 - float(got)) / draws)
        assert abs(ref - float(got)) <= 5 * se + 2 / draws, (ref, got)
    for i in range(3):  # the batch equals each table alone
        _friedman_exact._NULLS.clear()
        one = float(jaxtests.friedman(x[i], method="exact").pvalue)
        assert one == float(res[i]), (one, res[i])
    jax_s = _best(ours, repeats)
    name = (
        f"friedman exact, {n_tests} tables of N = {n} x k = {k} with ties (one batched call) "
        f"vs scipy Monte Carlo ({draws} draws) per table"
    )
    _report(name, first, jax_s, "scipy", ref_s, dict(n_tests=n_tests, N=n, k=k, draws=draws))


def _scipy_friedman_permutation(table, draws, seed):
    """scipy's Monte Carlo p-value of Friedman's chi-square, rows permuted within data sets."""

    def stat(*samples, axis=-1):
        return scipy.stats.friedmanchisquare(*samples, axis=axis).statistic

    return scipy.stats.permutation_test(
        tuple(np.asarray(table).T),
        stat,
        permutation_type="samples",
        n_resamples=draws,
        vectorized=True,
        alternative="greater",
        rng=seed,
    ).pvalue


def bench_friedman_permutation(n, k, draws, repeats, rng):
    x = rng.normal(size=(n, k)) + np.linspace(0, 0.25, k)

    def ours():
        return _p(jaxtests.friedman(x, method="permutation", n_resamples=draws, key=2))

    def theirs():
        return _scipy_friedman_permutation(x, draws, seed=2)

    res, first = _first(ours)
    ref = theirs()
    se = np.sqrt(max(float(ref), 1 / draws) * (1 - float(ref)) / draws)
    assert abs(float(res) - ref) <= 6 * se + 2 / draws, (res, ref)
    jax_s = _best(ours, repeats)
    ref_s = _best(theirs, max(1, repeats // 2))
    name = f"friedman permutation, N = {n} x k = {k}, {draws} draws"
    _report(name, first, jax_s, "scipy", ref_s, dict(N=n, k=k, draws=draws))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, runs in seconds")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)
    rng = np.random.default_rng(0)
    if args.smoke:
        bench_wilcoxon_exact(20, 2, rng)
        bench_wilcoxon_ties(16, 999, 2, rng)
        bench_friedman_batch(200, 10, 4, 2, rng)
        bench_friedman_exact_ties(100, 5, 5, 999, 2, rng)
        bench_friedman_permutation(10, 4, 999, 2, rng)
    else:
        bench_wilcoxon_exact(50, 5, rng)
        bench_wilcoxon_exact(500, 3, rng)
        bench_wilcoxon_ties(30, 9_999, 3, rng)
        bench_friedman_batch(10_000, 20, 5, 5, rng)
        bench_friedman_exact_ties(1000, 5, 5, 9_999, 3, rng)
        bench_friedman_permutation(20, 5, 99_999, 3, rng)


if __name__ == "__main__":
    main()
