"""method="permutation" of ttest_paired, hotelling_t2, anova, manova and posthoc.

References: the permutation engine itself (signflip_test / permutation_test with the same
key must give identical p-values), exact enumerations written here in numpy, and the
parametric tests (scipy, statsmodels and R are parametric, so only loose agreement is
expected: both p-values small for a large effect).

Failure budget of the stochastic checks: every key is fixed, so the suite is
deterministic; the tolerances are chosen so that a correct implementation would fail a
check for fewer than 1 in 1000 keys (99% Clopper-Pearson intervals are used where a single
interval is checked, and one check per test).
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from _helpers import sign_patterns, tail_pvalues
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from jaxtests._anova import anova, manova
from jaxtests._hotelling import hotelling_t2
from jaxtests._permutation import permutation_test, signflip_test
from jaxtests._posthoc import posthoc
from jaxtests._ttests import ttest_paired

ALTERNATIVES = ("two-sided", "less", "greater")


def _t(d):
    return d.mean(-1) * np.sqrt(d.shape[-1]) / d.std(-1, ddof=1)


# ----------------------------------------------------------------------------------------
# ttest_paired
# ----------------------------------------------------------------------------------------


def test_ttest_paired_equals_signflip_test_same_key(rng):
    a = rng.normal(0.3, 1.0, (3, 16))
    b = rng.normal(0.0, 1.0, (3, 16))
    ref = signflip_test(a - b, statistic="t", n_resamples=3000, key=11)
    for key in (11, jax.random.key(11)):
        res = ttest_paired(a, b, method="permutation", n_resamples=3000, key=key)
        np.testing.assert_array_equal(res.pvalue, ref.pvalue)
        np.testing.assert_array_equal(res.pvalue_interval, ref.pvalue_interval)
    assert res.permutation_method == "monte-carlo" and res.n_resamples == 3000
    assert ttest_paired(a, b, method="permutation", n_resamples=3000, key=11).seed == 11
    # The statistic is the parametric one; the axis argument is honoured.
    np.testing.assert_allclose(res.statistic, scipy.stats.ttest_rel(a, b, axis=-1).statistic)
    res_t = ttest_paired(a.T, b.T, axis=0, method="permutation", n_resamples=3000, key=11)
    np.testing.assert_array_equal(res_t.pvalue, ref.pvalue)
    lo, hi = np.asarray(res.pvalue_interval).T
    assert np.all(lo <= np.asarray(res.pvalue)) and np.all(np.asarray(res.pvalue) <= hi)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_ttest_paired_exact_matches_numpy_enumeration(rng, alternative):
    d = rng.normal(0.4, 1.0, 9)
    res = ttest_paired(d, np.zeros(9), alternative=alternative, method="permutation")
    null = _t(sign_patterns(9) * d)  # all 512 sign patterns of the same t statistic
    expected = tail_pvalues(null, _t(d))[alternative]
    np.testing.assert_allclose(res.pvalue, expected, rtol=1e-12)
    assert res.permutation_method == "exact" and res.n_resamples == 2**9 and res.seed is None
    np.testing.assert_array_equal(res.pvalue_interval, [res.pvalue, res.pvalue])


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (2, 9), elements=st.floats(-10, 10, width=32)))
def test_ttest_paired_permutation_swap_symmetry(x):
    # Exact sign-flip p-values (or binomial ones for {-c, 0, c} data): swapping the two
    # algorithms mirrors the null, so the two-sided p is unchanged and one-sided ones swap.
    a, b = x[0], x[1]
    ab = ttest_paired(a, b, method="permutation")
    ba = ttest_paired(b, a, method="permutation")
    assert ab.pvalue == ba.pvalue and 2 / 2**9 <= float(ab.pvalue) <= 1.0
    gt = ttest_paired(a, b, alternative="greater", method="permutation")
    lt = ttest_paired(b, a, alternative="less", method="permutation")
    assert gt.pvalue == lt.pvalue and ab.permutation_method in ("exact", "binomial")


def test_ttest_paired_binomial_for_ternary_differences():
    # 0/1-loss differences take values {-1, 0, 1}: the sign-flip null is binomial.
    a = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1] * 4, float)
    b = np.array([0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1] * 4, float)
    res = ttest_paired(a, b, method="permutation")
    n_pos, n_nz = int(np.sum(a > b)), int(np.sum(a != b))
    assert res.permutation_method == "binomial"
    # scipy 1.x: binomtest(n_pos, n_nz, 0.5).pvalue, the sign test
    np.testing.assert_allclose(
        res.pvalue, scipy.stats.binomtest(n_pos, n_nz, 0.5).pvalue, rtol=1e-10
    )


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_binomial_closed_form_is_the_exact_rational(alternative):
    # the tails were cephes' bdtr/bdtrc, a few ulps off: 0.4531249999999996 for 29/64 where
    # "auto" and "exact" disagreed; now the float nearest the exact sums of C(n, j) / 2^n
    # (scipy.stats.binomtest and exact enumeration give these values)
    from fractions import Fraction
    from math import comb

    from jaxtests import signflip_test

    for d in ([1, -1, 1, 1, 0, 1, -1, 1], [1] * 12 + [-1] * 3, [2] * 15 + [-2] * 4 + [0]):
        d = np.asarray(d, float)
        k, n = int(np.sum(d > 0)), int(np.sum(d != 0))
        le = Fraction(sum(comb(n, j) for j in range(k + 1)), 2**n)
        ge = Fraction(sum(comb(n, j) for j in range(k, n + 1)), 2**n)
        ref = {"less": le, "greater": ge, "two-sided": min(Fraction(1), 2 * min(le, ge))}
        closed = signflip_test(d, alternative=alternative)
        assert closed.method == "binomial"
        assert float(closed.pvalue) == float(ref[alternative])
        assert float(closed.pvalue) == float(
            signflip_test(d, alternative=alternative, method="exact").pvalue
        )


# ----------------------------------------------------------------------------------------
# hotelling_t2
# ----------------------------------------------------------------------------------------


def _t2(d):
    """Paired T² of ``d : (..., k, p)`` in numpy."""
    k = d.shape[-2]
    m = d.mean(-2)
    dc = d - m[..., None, :]
    s = np.einsum("...ki,...kj->...ij", dc, dc) / (k - 1)
    return k * np.einsum("...i,...i->...", m, np.linalg.solve(s, m[..., None])[..., 0])


def _t2_two_sample(a, b):
    n1, n2 = a.shape[-2], b.shape[-2]
    m = a.mean(-2) - b.mean(-2)
    ac, bc = a - a.mean(-2, keepdims=True), b - b.mean(-2, keepdims=True)
    s = (np.einsum("...ki,...kj->...ij", ac, ac) + np.einsum("...ki,...kj->...ij", bc, bc)) / (
        n1 + n2 - 2
    )
    w = np.linalg.solve(s, m[..., None])[..., 0]
    return n1 * n2 / (n1 + n2) * np.einsum("...i,...i->...", m, w)


def test_hotelling_paired_exact_matches_numpy_enumeration(rng):
    a = rng.normal(size=(7, 2)) + np.array([0.6, -0.3])
    b = rng.normal(size=(7, 2))
    res = hotelling_t2(a, b, method="permutation")
    d = a - b
    null = _t2(sign_patterns(7)[:, :, None] * d)  # whole rows flipped: 128 patterns
    np.testing.assert_allclose(res.pvalue, tail_pvalues(null, _t2(d))["greater"], rtol=1e-12)
    assert res.permutation_method == "exact" and res.n_resamples == 128
    np.testing.assert_allclose(res.statistic, hotelling_t2(a, b).statistic, rtol=1e-12)


def test_hotelling_unpaired_exact_matches_numpy_enumeration(rng):
    a = rng.normal(size=(4, 2)) + np.array([1.0, 0.5])
    b = rng.normal(size=(5, 2))
    res = hotelling_t2(a, b, paired=False, method="permutation")
    z = np.concatenate([a, b])
    splits = [list(c) for c in itertools.combinations(range(9), 4)]
    rest = [[i for i in range(9) if i not in c] for c in splits]
    null = _t2_two_sample(z[np.array(splits)], z[np.array(rest)])  # C(9, 4) = 126 splits
    expected = tail_pvalues(null, _t2_two_sample(a, b))["greater"]
    np.testing.assert_allclose(res.pvalue, expected, rtol=1e-12)
    assert res.permutation_method == "exact" and res.n_resamples == 126


# ----------------------------------------------------------------------------------------
# anova and manova: labels permuted within folds
# ----------------------------------------------------------------------------------------


def _within_fold_arrangements(x):
    """All (L!)^k arrangements of ``x : (L, k, ...)`` with labels permuted within folds."""
    n_groups, k = x.shape[0], x.shape[1]
    perms = list(itertools.permutations(range(n_groups)))
    idx = np.array(list(itertools.product(perms, repeat=k)))  # (N, k, L)
    folds = np.arange(k)[None, :, None]
    return np.moveaxis(x[idx, folds], 1, 2)  # (N, L, k, ...)


def _f_blocked(x):
    n_groups, k = x.shape[-2], x.shape[-1]
    rows, cols = x.mean(-1), x.mean(-2)
    grand = x.mean((-2, -1))
    sst = k * np.sum((rows - grand[..., None]) ** 2, -1)
    resid = x - rows[..., :, None] - cols[..., None, :] + grand[..., None, None]
    return sst / (n_groups - 1) / (np.sum(resid**2, (-2, -1)) / ((n_groups - 1) * (k - 1)))


def _f_oneway(x):
    n_groups, k = x.shape[-2], x.shape[-1]
    rows = x.mean(-1)
    ssb = k * np.sum((rows - rows.mean(-1, keepdims=True)) ** 2, -1)
    ssw = np.sum((x - rows[..., None]) ** 2, (-2, -1))
    return ssb / (n_groups - 1) / (ssw / (n_groups * (k - 1)))


def _wilks(x):
    gm = x.mean(-2)
    dc = gm - gm.mean(-2, keepdims=True)
    h = x.shape[-2] * np.einsum("...li,...lj->...ij", dc, dc)
    xc = x - gm[..., :, None, :]
    e = np.einsum("...lki,...lkj->...ij", xc, xc)
    return np.linalg.det(e) / np.linalg.det(e + h)


X34 = np.array(
    [
        [0.81, 0.84, 0.78, 0.86],
        [0.80, 0.70, 0.79, 0.78],
        [0.75, 0.78, 0.77, 0.74],
    ]
)  # (L=3, k=4): (3!)^4 = 1296 within-fold arrangements


def test_anova_permutation_against_numpy_enumeration():
    arr = _within_fold_arrangements(X34)
    results = {}
    for blocked, fn in ((True, _f_blocked), (False, _f_oneway)):
        exact = tail_pvalues(fn(arr), fn(X34))["greater"]
        res = anova(X34, blocked=blocked, method="permutation", n_resamples=20_000, key=5)
        lo, hi = np.asarray(res.pvalue_interval)
        assert lo <= exact <= hi  # 99% Clopper-Pearson interval of the Monte Carlo p
        assert hi - lo < 0.03
        assert res.permutation_method == "monte-carlo" and res.seed == 5
        np.testing.assert_allclose(res.statistic, anova(X34, blocked=blocked).statistic)
        results[blocked] = (exact, res)
    # Within folds, both F's are increasing in SS_alg: identical p-values for one key.
    assert results[True][0] == results[False][0]
    np.testing.assert_array_equal(results[True][1].pvalue, results[False][1].pvalue)


def test_anova_permutation_zero_error_variance():
    # Additive integers: SS_error = 0 and F = inf. Only the 3! arrangements that permute
    # every fold alike keep F = inf: exact p = 6 / 1296, not the 1 / (B + 1) that an
    # uncounted tie at inf would give.
    x = np.array([[0.0, 1, 5, 2], [1, 2, 6, 3], [3, 4, 8, 5]])
    with pytest.warns(RuntimeWarning, match=r"F is inf \(ranked above every finite F\)"):
        res = anova(x, blocked=True, method="permutation", n_resamples=20_000, key=1)
    lo, hi = np.asarray(res.pvalue_interval)
    assert np.isposinf(res.statistic) and lo <= 6 / 1296 <= hi
    # Identical algorithms: no algorithm effect, F = 0 (statsmodels' AnovaRM), and every
    # arrangement is the same data, p = 1.
    flat = np.tile(x[:1], (3, 1))
    with pytest.warns(RuntimeWarning, match=r"0 \(p = 1, as statsmodels' AnovaRM\)"):
        res = anova(flat, blocked=True, method="permutation", n_resamples=20_000, key=1)
    assert float(res.statistic) == 0.0 and float(res.pvalue) == 1.0


def test_manova_permutation_against_numpy_enumeration(rng):
    x = (
        rng.normal(size=(3, 4, 2)) * 0.03
        + np.array([[0.80, 0.1], [0.82, 0.1], [0.84, 0.12]])[:, None, :]
    )
    null = _wilks(_within_fold_arrangements(x))
    # Small Lambda is extreme: P(Lambda* <= Lambda).
    exact = tail_pvalues(null, _wilks(x))["less"]
    res = manova(x, method="permutation", n_resamples=20_000, key=3)
    lo, hi = np.asarray(res.pvalue_interval)
    assert lo <= exact <= hi and hi - lo < 0.03
    par = manova(x)
    np.testing.assert_allclose(res.statistic, par.statistic)
    # Only the Wilks p-value is replaced.
    np.testing.assert_array_equal(res.pillai_pvalue, par.pillai_pvalue)
    assert res.method == "permutation" and par.pvalue_interval is None


def test_anova_manova_batched_equal_looped_and_reproducible(rng):
    xs = np.stack([X34, X34[::-1] + 0.01 * rng.normal(size=X34.shape)])
    batched = anova(xs, blocked=True, method="permutation", n_resamples=20_000, key=5)
    for i in range(2):
        one = anova(xs[i], blocked=True, method="permutation", n_resamples=20_000, key=5)
        np.testing.assert_array_equal(batched.pvalue[i], one.pvalue)
        np.testing.assert_array_equal(batched.pvalue_interval[i], one.pvalue_interval)
    assert batched.pvalue_interval.shape == (2, 2)
    x3 = np.stack([X34, X34 + 0.1 * rng.normal(size=X34.shape)], -1)  # (3, 4, 2)
    r1 = manova(x3, method="permutation", n_resamples=20_000, key=jax.random.key(8))
    r2 = manova(x3, method="permutation", n_resamples=20_000, key=jax.random.key(8))
    np.testing.assert_array_equal(r1.pvalue, r2.pvalue)
    assert r1.seed == (0, 8)
    fresh = manova(x3, method="permutation", n_resamples=20_000)  # key=None: a new seed
    again = manova(x3, method="permutation", n_resamples=20_000, key=fresh.seed)
    assert isinstance(fresh.seed, int)
    np.testing.assert_array_equal(fresh.pvalue, again.pvalue)


def test_large_effect_small_pvalues_both_ways(rng):
    # scipy, statsmodels and R are parametric: only loose agreement is expected.
    a = rng.normal(1.0, 0.3, 9)  # m = 9 as above: exact, smallest p 2 / 512
    b = rng.normal(0.0, 0.3, 9)
    perm = ttest_paired(a, b, method="permutation", key=0)
    assert perm.pvalue < 0.01 and scipy.stats.ttest_rel(a, b).pvalue < 0.01
    # Shapes and draws as in the tests above, so nothing recompiles. With L = 3, k = 4
    # the smallest within-fold p-value is 3! / (3!)^4 = 0.0046.
    x = rng.normal(size=(3, 4)) * 0.1 + np.array([0.0, 1.0, 2.0])[:, None]
    permf = anova(x, method="permutation", n_resamples=20_000, key=0)
    assert permf.pvalue < 0.01 and scipy.stats.f_oneway(*x).pvalue < 0.01
    x3 = rng.normal(size=(3, 4, 2)) * 0.1 + np.array([0.0, 1.0, 2.0])[:, None, None]
    assert manova(x3, method="permutation", n_resamples=20_000, key=0).pvalue < 0.01
    assert manova(x3).pvalue < 0.01


# ----------------------------------------------------------------------------------------
# posthoc
# ----------------------------------------------------------------------------------------

X38 = np.array(
    [
        [0.21, 0.25, 0.19, 0.27, 0.22, 0.24, 0.20, 0.26],
        [0.23, 0.24, 0.22, 0.28, 0.21, 0.27, 0.24, 0.25],
        [0.30, 0.29, 0.26, 0.33, 0.28, 0.31, 0.27, 0.32],
    ]
)  # (L=3, k=8): 2^8 = 256 sign patterns per pair


def test_posthoc_maxt_matches_numpy_westfall_young():
    res = posthoc(X38, test="permutation", correction="maxT")
    pairs = [(0, 1), (0, 2), (1, 2)]
    d = np.stack([X38[i] - X38[j] for i, j in pairs])
    null = _t(sign_patterns(8)[:, None, :] * d[None])  # (256, 3): every pair under every pattern
    obs = _t(d)
    big = np.max(np.abs(null), axis=1)
    for (i, j), t_obs, h in zip(pairs, obs, range(3)):
        raw = tail_pvalues(null[:, h], t_obs)["two-sided"]
        # Westfall & Young (1993) single step, never below the raw p-value.
        adj = max(raw, np.mean(big >= abs(t_obs) * (1 - 1e-9)))
        np.testing.assert_allclose(res.pvalue[i, j], raw, rtol=1e-12)
        np.testing.assert_allclose(res.pvalue_adjusted[j, i], adj, rtol=1e-12)
        assert res.pvalue_adjusted[i, j] >= res.pvalue[i, j]
    assert res.method == "permutation" and res.permutation_method == "exact"
    assert res.correction == "maxT" and res.pvalue_interval.shape == (3, 3, 2)
    assert "exact permutation" in res.text()


def test_posthoc_permutation_raw_equals_engine_and_holm(rng):
    from statsmodels.stats.multitest import multipletests

    x = rng.normal(size=(4, 12)) * 0.02 + np.array([0.10, 0.11, 0.15, 0.2])[:, None]
    res = posthoc(x, test="permutation", n_resamples=2000, key=4, names=list("abcd"))
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    d = np.stack([x[i] - x[j] for i, j in pairs])
    ref = signflip_test(d, statistic="t", n_resamples=2000, key=4)
    holm = multipletests(np.asarray(ref.pvalue), method="holm")[1]
    for (i, j), p, h in zip(pairs, np.asarray(ref.pvalue), holm):
        assert res.pvalue[i, j] == p and res.pvalue[j, i] == p
        np.testing.assert_allclose(res.pvalue_adjusted[i, j], h, rtol=1e-12)
    assert res.seed == 4 and res.n_resamples == 2000
    np.testing.assert_allclose(res.statistic, posthoc(x).statistic, rtol=1e-12)
    assert res.ordering.labels[0] == "a"


def test_posthoc_unpaired_and_hotelling_permutation(rng):
    x = rng.normal(size=(3, 8)) + np.arange(3.0)[:, None]
    res = posthoc(x, method="permutation", paired=False, correction="maxT", n_resamples=3000, key=2)
    ref = permutation_test(x[[0, 0, 1]], x[[1, 2, 2]], statistic="t", n_resamples=3000, key=2)
    np.testing.assert_array_equal(
        [res.pvalue[0, 1], res.pvalue[0, 2], res.pvalue[1, 2]], ref.pvalue
    )
    assert np.all(np.asarray(res.pvalue_adjusted) >= np.asarray(res.pvalue))
    x3 = np.stack([X38, X38 * 0.5 + 0.1 * rng.normal(size=X38.shape)], -1)  # (3, 8, 2)
    hot = posthoc(x3, test="hotelling", method="permutation", correction="bonferroni")
    d = x3[0] - x3[2]
    exact = tail_pvalues(_t2(sign_patterns(8)[:, :, None] * d), _t2(d))["greater"]
    np.testing.assert_allclose(hot.pvalue[0, 2], exact, rtol=1e-12)
    np.testing.assert_allclose(hot.pvalue_adjusted[0, 2], min(1.0, 3 * exact), rtol=1e-12)


# ----------------------------------------------------------------------------------------
# Result fields and validation
# ----------------------------------------------------------------------------------------


def test_parametric_results_leave_permutation_fields_empty(rng):
    a, b = rng.normal(size=(2, 9))
    res = ttest_paired(a, b)
    assert res.method == "parametric" and res.pvalue_interval is None
    assert res.n_resamples is None and res.seed is None and res.permutation_method is None
    assert "seed" not in repr(res) and "pvalue_interval" not in repr(res)
    text = repr(ttest_paired(a, b, method="permutation"))
    assert "method='permutation'" in text and "n_resamples=512" in text


def test_permutation_validation_messages(rng):
    a, b = rng.normal(size=(2, 6))
    x = rng.normal(size=(3, 6))
    with pytest.raises(ValueError, match="`n_resamples` must be at least 1"):
        ttest_paired(a, b, method="permutation", n_resamples=0)
    with pytest.raises(TypeError, match="`n_resamples` must be an int"):
        anova(x, method="permutation", n_resamples=100.0)
    with pytest.raises(TypeError, match="`key` must be an int seed or a JAX key"):
        manova(x[..., None].repeat(2, -1) + rng.normal(size=(3, 6, 2)), key="seed")
    with pytest.raises(ValueError, match=r"`key` must be an int seed in \[0, 2\*\*63\)"):
        hotelling_t2(x[:, :2], x[:, 2:4], method="permutation", key=-1)
    with pytest.raises(ValueError, match="`method` must be one of 'parametric', 'permutation'"):
        anova(x, method="exact")
    with pytest.raises(ValueError, match="`method` must be one of 'parametric', 'permutation'"):
        posthoc(x, method="monte-carlo")
    with pytest.raises(ValueError, match="`test` must be one of 't', 'hotelling', 'permutation'"):
        posthoc(x, test="wilcoxon")
    with pytest.raises(ValueError, match=r"shape \(L, k\) for test='permutation'"):
        posthoc(x[..., None], test="permutation")
    with pytest.raises(ValueError, match="`correction`='maxT' adjusts with the permutation"):
        posthoc(x, correction="maxT")
    with pytest.raises(ValueError, match="`correction` must be one of"):
        hotelling_t2(x[:, :2], x[:, 2:4], correction="maxT")
    with pytest.raises(TypeError, match="`a` is traced: method='permutation'"):
        jax.jit(lambda u, v: ttest_paired(u, v, method="permutation").pvalue)(a, b)
    with pytest.raises(TypeError, match="`x` is traced"):
        jax.jit(lambda u: anova(u, method="permutation").pvalue)(jnp.asarray(x))


# ----------------------------------------------------------------------------------------
# Calibration under H0
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ttest_paired_permutation_calibration(rng):
    """P(p <= alpha) <= alpha under H0 (symmetric, heavy-tailed differences).

    2000 exact tests (2^10 sign patterns each): binomial SE 0.0049 at alpha = 0.05; the
    bound alpha + 3.5 SE fails a correct test with probability < 3e-4, the lower bound
    (attainable size - 4 SE) < 1e-4. Monte Carlo p-values are bit-identical to
    signflip_test's (tested above), whose calibration tests/test_signflip.py checks.
    """
    d = rng.laplace(size=(2000, 10))
    res = ttest_paired(d, np.zeros_like(d), method="permutation")
    assert res.permutation_method == "exact"
    p = np.asarray(res.pvalue)
    for alpha in (0.05, 0.1):
        # Two-sided exact p-values are multiples of 2 / 1024: the attainable size <= alpha.
        size = np.floor(alpha * 512) / 512
        se = np.sqrt(alpha * (1 - alpha) / 2000)
        assert size - 4 * se <= np.mean(p <= alpha) <= alpha + 3.5 * se
