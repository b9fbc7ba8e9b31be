"""Non-finite statistics in the permutation engine: exact ties at +-inf, NaN as scipy.

References: ``scipy.stats.permutation_test(..., n_resamples=np.inf)`` (exact) where the
observed statistic is finite; where it is infinite scipy 1.17 misses the ties (its
threshold ``t - 100 eps |t|`` is NaN), so the reference there is a brute-force numpy
enumeration of every rearrangement (``_brute_*`` below), plus literal counts derived
by hand in the comments.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import sign_patterns, tail_pvalues
from scipy import stats

from jaxtests._permutation import (
    permutation_test,
    signflip_test,
    swap_test,
)
from jaxtests._within_block import within_block_pvalue

EPS = np.finfo(np.float64).eps
ALTS = ("two-sided", "greater", "less")


def _t_one(d):
    """One-sample t; +-inf when every |d_i| is equal and the signs agree."""
    return jnp.mean(d) * jnp.sqrt(d.shape[-1]) / jnp.std(d, ddof=1)


def _md_over_sdx(x, y):
    """Mean difference over the spread of ``x``: +-inf for splits with a constant ``x``."""
    return (jnp.mean(x) - jnp.mean(y)) / jnp.std(x)


def _sum_nan_below_zero(d):
    """Sum of the flipped data, NaN where it is negative (a statistic with NaN draws)."""
    s = jnp.sum(d)
    return jnp.where(s < 0, jnp.nan, s)


def _brute_signflip_null(stat_np, d):
    m = d.shape[-1]
    signs = sign_patterns(m)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.array([stat_np(s * d) for s in signs])


def _t_one_np(d):
    return np.mean(d) * np.sqrt(d.size) / np.std(d, ddof=1)


@pytest.mark.parametrize("alternative", ALTS)
def test_signflip_equal_differences_t_is_inf(alternative):
    # d all equal: only the identity flip keeps t = +inf and only the all-minus flip
    # gives -inf, so P(T >= inf) = 1/64 and P(T <= inf) = 1 (hand count, 2^6 flips).
    d = np.full(6, 0.5)
    expect = {"greater": 1 / 64, "less": 1.0, "two-sided": 2 / 64}[alternative]
    brute = tail_pvalues(_brute_signflip_null(_t_one_np, d), np.inf, exact=True)[alternative]
    assert brute == expect  # brute-force numpy enumeration of the 64 flips
    r = signflip_test(d, statistic=_t_one, method="exact", alternative=alternative)
    assert r.method == "exact" and np.isposinf(r.statistic)
    assert float(r.pvalue) == expect
    # -inf observed: the mirror image.
    mirror = {"greater": "less", "less": "greater", "two-sided": "two-sided"}[alternative]
    r = signflip_test(-d, statistic=_t_one, method="exact", alternative=mirror)
    assert np.isneginf(r.statistic) and float(r.pvalue) == expect
    # The built-in "t" (counted on the mean, which is finite) agrees.
    r = signflip_test(d, statistic="t", method="exact", alternative=alternative)
    assert float(r.pvalue) == expect


def test_signflip_monte_carlo_counts_inf_draws():
    # m = 4: 1/16 of the draws give t = +inf. The p-value must count them: compare with
    # the returned null distribution (Phipson & Smyth: (b + 1) / (B + 1)).
    d = np.full(4, 2.0)
    r = signflip_test(
        d, statistic=_t_one, method="monte-carlo", n_resamples=3000, key=7, return_null=True
    )
    null = np.asarray(r.null_distribution)
    b = np.count_nonzero(np.isposinf(null))
    assert 100 < b < 300  # about 3000/16 = 187
    assert float(r.pvalue) == min(1.0, 2 * (b + 1) / 3001)
    assert int(r.n_extreme) == b
    assert float(r.pvalue) == tail_pvalues(null, np.inf, exact=False)["two-sided"]


def test_signflip_sequential_stops_at_inf_ties():
    # Besag-Clifford with h = 5: stops at the 5th draw with t = +inf, p = h / L. The
    # draws are those of the plain Monte Carlo run with the same key (draw-indexed bits).
    d = np.full(4, 2.0)
    full = signflip_test(
        d,
        statistic=_t_one,
        method="monte-carlo",
        n_resamples=3000,
        key=11,
        alternative="greater",
        return_null=True,
    )
    hits = np.flatnonzero(np.isposinf(np.asarray(full.null_distribution)))
    n_used = hits[4] + 1
    r = signflip_test(
        d, statistic=_t_one, n_resamples=3000, key=11, alternative="greater", sequential=5
    )
    assert int(r.n_draws) == n_used < 3000
    assert float(r.pvalue) == 5 / n_used


def test_signflip_maxt_inf_and_nan_hypotheses():
    # Rows: t = +inf (equal differences), t = NaN for every flip (zeros), two ordinary.
    d = np.array(
        [
            [0.5] * 7,
            [0.0] * 7,
            [0.3, 1.9, -0.4, 1.2, 0.8, 2.1, 0.4],
            [-0.2, 0.7, 0.1, -1.3, 0.6, -0.9, 0.5],
        ]
    )
    for alt in ALTS:
        r = signflip_test(d, statistic=_t_one, method="exact", correction="maxT", alternative=alt)
        # Brute-force numpy enumeration of the 128 shared flips; NaN left out of the max.
        nulls = np.stack([_brute_signflip_null(_t_one_np, row) for row in d])
        obs = np.asarray(r.statistic)
        with np.errstate(invalid="ignore"):
            if alt == "greater":
                hit = (
                    np.nanmax(nulls, axis=0)[None, :]
                    >= np.where(np.isfinite(obs), obs - 100 * EPS * np.abs(obs), obs)[:, None]
                )
            elif alt == "less":
                hit = (
                    np.nanmin(nulls, axis=0)[None, :]
                    <= np.where(np.isfinite(obs), obs + 100 * EPS * np.abs(obs), obs)[:, None]
                )
            else:
                a = np.abs(obs)
                hit = (
                    np.nanmax(np.abs(nulls), axis=0)[None, :]
                    >= np.where(np.isfinite(a), a - 100 * EPS * a, a)[:, None]
                )
        raw = np.array([tail_pvalues(nulls[h], obs[h], exact=True)[alt] for h in range(4)])
        adj = np.maximum(raw, hit.mean(axis=1))
        ok = np.array([0, 2, 3])
        np.testing.assert_allclose(np.asarray(r.pvalue)[ok], raw[ok], rtol=1e-12)
        np.testing.assert_allclose(np.asarray(r.pvalue_adjusted)[ok], adj[ok], rtol=1e-12)
        assert np.isnan(r.pvalue[1]) and np.isnan(r.pvalue_adjusted[1])
    # The +inf row under "greater": exactly one flip of 128 reaches +inf.
    r = signflip_test(d, statistic=_t_one, method="exact", correction="maxT", alternative="greater")
    assert float(r.pvalue[0]) == float(r.pvalue_adjusted[0]) == 1 / 128


def test_signflip_maxt_mean_with_all_zero_hypothesis():
    # "mean" scales by the null sd, which is 0 for an all-zero row (z = 0/0): that row
    # must not hide the other rows' maxima. Brute force: max |mean / sd| over rows 1-2.
    d = np.array(
        [
            [0.0] * 8,
            [0.3, 1.9, -0.4, 1.2, 0.8, 2.1, 0.4, 1.1],
            [-0.2, 0.7, 0.1, -1.3, 0.6, -0.9, 0.5, 0.2],
        ]
    )
    r = signflip_test(d, statistic="mean", method="exact", correction="maxT")
    sd = np.sqrt(np.sum(d[1:] ** 2, axis=1)) / 8
    z = np.stack([_brute_signflip_null(np.mean, row) for row in d[1:]]) / sd[:, None]
    zo = np.abs(d[1:].mean(axis=1) / sd)
    hit = np.max(np.abs(z), axis=0)[None, :] >= (zo * (1 - 1e-9))[:, None]
    raw = np.asarray(r.pvalue[1:])
    np.testing.assert_allclose(r.pvalue_adjusted[1:], np.maximum(raw, hit.mean(axis=1)))
    assert float(r.pvalue[0]) == float(r.pvalue_adjusted[0]) == 1.0
    assert np.any(np.asarray(r.pvalue_adjusted[1:]) > raw)


@pytest.mark.parametrize("alternative", ALTS)
def test_signflip_nan_draws_as_scipy(alternative):
    # Finite observed statistic, NaN for half of the flips: scipy never counts NaN
    # draws as extreme but keeps them in N.
    d = np.array([1.0, 2.0, 0.5, -0.3, 1.2])
    ref = stats.permutation_test(
        (d,),
        lambda x, axis: np.where(np.sum(x, axis) < 0, np.nan, np.sum(x, axis)),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alternative,
    )
    r = signflip_test(d, statistic=_sum_nan_below_zero, method="exact", alternative=alternative)
    assert np.isnan(ref.null_distribution).sum() > 0
    np.testing.assert_allclose(r.pvalue, ref.pvalue, rtol=1e-12)


def test_nan_observed_gives_nan_pvalue():
    # t of all-zero differences is 0/0 for every flip; scipy's parametric t test gives
    # a NaN p-value (scipy.stats.ttest_1samp), and so do the engine's generic paths.
    assert np.isnan(stats.ttest_1samp(np.zeros(6), 0.0).pvalue)
    z = np.zeros(6)
    for kw in (
        {"method": "exact"},
        {"method": "monte-carlo", "n_resamples": 200, "key": 1},
        {"n_resamples": 200, "key": 1, "sequential": 3},
        {"method": "exact", "correction": "maxT"},
    ):
        r = signflip_test(z, statistic=_t_one, **kw)
        assert np.isnan(r.statistic) and np.isnan(r.pvalue), kw
        assert np.all(np.isnan(r.pvalue_interval)) and int(r.n_extreme) == 0
    assert np.isnan(r.pvalue_adjusted)
    # Batched: the NaN row does not touch the others.
    d = np.stack([z, [0.3, 1.9, -0.4, 1.2, 0.8, 2.1]])
    r = signflip_test(d, statistic=_t_one, method="exact")
    one = signflip_test(d[1], statistic=_t_one, method="exact")
    assert np.isnan(r.pvalue[0]) and float(r.pvalue[1]) == float(one.pvalue)
    r = permutation_test([2.0, 2.0, 2.0], [2.0, 2.0], statistic=_md_over_sdx, method="exact")
    assert np.isnan(r.statistic) and np.isnan(r.pvalue)


def test_builtin_t_without_variation_is_the_means_p_of_one():
    # The built-in "t" is compared through the mean (difference): with no variation at
    # all every rearrangement gives the same data, and p = 1 (every pattern ties), as
    # anova's F = 0/0; the reported statistic stays NaN.
    for kw in ({}, {"method": "exact"}, {"method": "monte-carlo", "n_resamples": 200}):
        r = signflip_test(np.zeros(6), statistic="t", key=1, **kw)
        assert np.isnan(r.statistic) and float(r.pvalue) == 1.0, kw
        assert float(signflip_test(np.zeros(6), key=1, **kw).pvalue) == 1.0
    r = permutation_test([2.0, 2.0, 2.0], [2.0, 2.0], statistic="t")
    assert np.isnan(r.statistic) and float(r.pvalue) == 1.0


def _brute_twosample_null(stat_np, x, y):
    z = np.concatenate([x, y])
    n, n1 = z.size, x.size
    out = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for idx in itertools.combinations(range(n), n1):
            mask = np.zeros(n, bool)
            mask[list(idx)] = True
            out.append(stat_np(z[mask], z[~mask]))
    return np.array(out)


def _md_over_sdx_np(x, y):
    return (np.mean(x) - np.mean(y)) / np.std(x)


@pytest.mark.parametrize("alternative", ALTS)
def test_permutation_test_inf_observed(alternative):
    # x constant: observed -inf. Of the C(6, 3) = 20 splits, only x = (1, 1, 1) gives
    # -inf and only x = (4, 4, 4) gives +inf (brute-force numpy enumeration agrees).
    x, y = np.array([1.0, 1.0, 1.0]), np.array([4.0, 4.0, 4.0])
    expect = {"greater": 1.0, "less": 1 / 20, "two-sided": 2 / 20}[alternative]
    null = _brute_twosample_null(_md_over_sdx_np, x, y)
    assert tail_pvalues(null, -np.inf, exact=True)[alternative] == expect
    r = permutation_test(x, y, statistic=_md_over_sdx, method="exact", alternative=alternative)
    assert np.isneginf(r.statistic) and float(r.pvalue) == expect


@pytest.mark.parametrize("alternative", ALTS)
def test_permutation_test_inf_draws_as_scipy(alternative):
    # Finite observed statistic; the splits with a constant x give +-inf draws, which
    # scipy counts correctly (its threshold is finite here). 3 + 3 values, as above: the
    # same program for each alternative.
    x, y = np.array([1.0, 1.0, 3.0]), np.array([1.0, 2.0, 3.0])
    with np.errstate(divide="ignore"):
        ref = stats.permutation_test(
            (x, y),
            lambda a, b, axis: (np.mean(a, axis) - np.mean(b, axis)) / np.std(a, axis=axis),
            permutation_type="independent",
            vectorized=True,
            n_resamples=np.inf,
            alternative=alternative,
        )
    assert np.isinf(ref.null_distribution).sum() > 0
    r = permutation_test(x, y, statistic=_md_over_sdx, method="exact", alternative=alternative)
    np.testing.assert_allclose(r.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(r.pvalue, ref.pvalue, rtol=1e-12)


def _inv_errors(y, pred):
    """1 / (number of errors): +inf for a perfect prediction."""
    return 1.0 / jnp.sum((pred != y).astype(jnp.float64))


def test_swap_test_callable_inf():
    # A is perfect (measure +inf), B errs on 3 of the 5 instances where they differ.
    y = np.array([1.0, 0, 1, 1, 0, 0, 1])
    a = y.copy()
    b = np.array([0.0, 1, 1, 0, 1, 0, 0])  # differs from A at 0, 1, 3, 4, 6
    diff = np.flatnonzero(a != b)
    null = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for bits in itertools.product([False, True], repeat=diff.size):
            sa, sb = a.copy(), b.copy()
            sa[diff[list(bits)]], sb[diff[list(bits)]] = b[diff[list(bits)]], a[diff[list(bits)]]
            null.append(1 / np.sum(sa != y) - 1 / np.sum(sb != y))
    null = np.array(null)
    for alt in ALTS:
        r = swap_test(y, a, b, measure=_inv_errors, method="exact", alternative=alt)
        assert np.isposinf(r.statistic)
        # Brute-force numpy enumeration of the 2^5 swaps: only "no swap" gives +inf.
        expect = tail_pvalues(null, np.inf, exact=True)[alt]
        assert float(r.pvalue) == expect
    assert float(swap_test(y, a, b, measure=_inv_errors, alternative="greater").pvalue) == 1 / 32


def _inf_if_first_block_descends(x):
    """+inf when block 0 puts group 0 above group 1, else a finite spread."""
    spread = jnp.sum(jnp.abs(x[:, 0] - x[:, 1]))
    return jnp.where(x[0, 0] > x[0, 1], jnp.inf, spread)


def test_within_block_counts_inf_draws():
    # Block 0's order decides +inf: half of the draws; the p-value must count them.
    x = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.4, 0.1, 0.9]])
    r = within_block_pvalue(
        _inf_if_first_block_descends, jnp.asarray(x), n_resamples=2000, key=3, return_null=True
    )
    null = np.asarray(r.null_distribution)
    b = np.count_nonzero(np.isposinf(null))
    assert np.isposinf(r.statistic) and 0.4 < b / 2000 < 0.6
    assert float(r.pvalue) == (b + 1) / 2001


def test_jit_statistic_parity_with_inf():
    # Same counts whether the user statistic is jitted or not (it is vmapped either way).
    d = np.full(5, 1.5)
    a = signflip_test(d, statistic=_t_one, method="exact", alternative="greater")
    b = signflip_test(d, statistic=jax.jit(_t_one), method="exact", alternative="greater")
    assert float(a.pvalue) == float(b.pvalue) == 1 / 32
