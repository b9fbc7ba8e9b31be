"""Paired t, 5x2cv t/F, corrected resampled t and McNemar against scipy, statsmodels,
mlxtend, R literals and seed 002's worked example."""

import warnings

import jax
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from jaxtests._mcnemar import mcnemar
from jaxtests._ttests import ftest_5x2cv, ttest_5x2cv, ttest_corrected, ttest_paired

# Seed 002, "t-test example": test errors of two algorithms on 10 folds.
SEED_A = [0.81, 0.82, 0.84, 0.78, 0.85, 0.86, 0.82, 0.83, 0.82, 0.81]
SEED_B = [0.80, 0.77, 0.70, 0.83, 0.80, 0.78, 0.75, 0.80, 0.78, 0.77]


# ----------------------------------------------------------------------------------------
# ttest_paired
# ----------------------------------------------------------------------------------------


def test_seed002_worked_example():
    res = ttest_paired(SEED_A, SEED_B)
    # Seed 002: mean 0.046, sqrt(Var[mean]) = 0.0154344, t = 0.046 / 0.0154344 = 2.98.
    np.testing.assert_allclose(res.mean_difference, 0.046, rtol=1e-12)
    np.testing.assert_allclose(res.standard_error, 0.0154344, rtol=0, atol=5e-8)  # 7 digits
    assert round(float(res.statistic), 2) == 2.98
    # Seed 002's t table: t_{9, 0.025} = 2.262 < 2.98, so H0 is rejected at 0.05.
    assert res.df == 9
    assert float(res.statistic) > 2.262
    assert float(res.pvalue) < 0.05


def test_seed002_against_r():
    res = ttest_paired(SEED_A, SEED_B)
    # R 4.2.2: t.test(a, b, paired=TRUE)$statistic, $p.value, $conf.int
    np.testing.assert_allclose(res.statistic, 2.9803460682556917, rtol=1e-10)
    np.testing.assert_allclose(res.pvalue, 0.015440907267859788, rtol=1e-10)
    ci = res.confidence_interval()
    np.testing.assert_allclose(ci.low, 0.011084850179959058, rtol=1e-10)
    np.testing.assert_allclose(ci.high, 0.080915149820040902, rtol=1e-10)


def test_one_sided_against_r():
    less = ttest_paired(SEED_A, SEED_B, alternative="less")
    # R 4.2.2: t.test(a, b, paired=TRUE, alternative="less", conf.level=0.9)
    np.testing.assert_allclose(less.pvalue, 0.99227954636607008, rtol=1e-10)
    ci = less.confidence_interval(0.9)
    assert np.isneginf(ci.low)
    np.testing.assert_allclose(ci.high, 0.067346286810068157, rtol=1e-10)
    greater = ttest_paired(SEED_A, SEED_B, alternative="greater")
    # R 4.2.2: t.test(a, b, paired=TRUE, alternative="greater", conf.level=0.99)
    np.testing.assert_allclose(greater.pvalue, 0.0077204536339298942, rtol=1e-10)
    ci = greater.confidence_interval(confidence_level=0.99)
    np.testing.assert_allclose(ci.low, 0.0024526596647391572, rtol=1e-10)
    assert np.isposinf(ci.high)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_batched_against_scipy(rng, alternative):
    a = rng.normal(size=(4, 7, 3))
    b = a + rng.normal(0.3, 1.0, size=(4, 7, 3))
    res = ttest_paired(a, b, axis=1, alternative=alternative)
    ref = scipy.stats.ttest_rel(a, b, axis=1, alternative=alternative)
    assert res.statistic.shape == (4, 3)
    assert res.statistic.dtype == np.float64
    np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-10)
    np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=1e-10)
    assert res.df == ref.df.flat[0]
    ci, ref_ci = res.confidence_interval(0.9), ref.confidence_interval(0.9)
    np.testing.assert_allclose(ci.low, ref_ci.low, rtol=1e-10)
    np.testing.assert_allclose(ci.high, ref_ci.high, rtol=1e-10)


def test_far_tail_precision():
    # Differences with t near 60 and 600: the p-values (1e-12, 1e-21) keep full
    # relative precision because they are computed as I_x(df/2, 1/2), not 1 - cdf.
    base = np.array([1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.0])
    for shift in (0.0, 9.0):
        d = base + shift
        res = ttest_paired(d, np.zeros_like(d))
        ref = scipy.stats.ttest_rel(d, np.zeros_like(d))
        np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=1e-10)
        assert float(res.pvalue) < 1e-11
    # And near p = 1 (t ~ 1e-5), where I_x(df/2, 1/2) at x ~ 1 would lose 1e-10 absolute.
    d = base - base.mean() + 1e-7
    res = ttest_paired(d, np.zeros_like(d))
    ref = scipy.stats.ttest_rel(d, np.zeros_like(d))
    np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=1e-13)


def test_batched_equals_looped_and_no_recompile(rng):
    a = rng.normal(size=(6, 10))
    b = rng.normal(size=(6, 10))
    batched = ttest_paired(a, b)
    for i in range(6):
        one = ttest_paired(a[i], b[i])
        np.testing.assert_allclose(one.statistic, batched.statistic[i], rtol=1e-13)
        np.testing.assert_allclose(one.pvalue, batched.pvalue[i], rtol=1e-13)
    from jaxtests._monitoring import CompileCounter

    with CompileCounter() as counter:  # concrete data: numpy on the host, nothing compiled
        ttest_paired(a + 1.0, b)
        ttest_paired(a[0] * 2.0, b[0])
        ttest_corrected(a, b, n_train=90, n_test=10)
    assert counter.compiles == 0 and counter.traces == 0


def test_jit_parity(rng):
    a = rng.normal(size=(3, 8))
    b = rng.normal(size=(3, 8))
    eager = ttest_paired(a, b)
    traced = jax.jit(lambda x, y: ttest_paired(x, y))(a, b)
    np.testing.assert_allclose(traced.statistic, eager.statistic, rtol=1e-13)
    np.testing.assert_allclose(traced.pvalue, eager.pvalue, rtol=1e-13)
    assert traced.df == eager.df


def test_zero_variance_as_scipy():
    a = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    b = np.array([[0.5, 1.5, 2.5], [1.0, 2.0, 3.0]])
    with pytest.warns(RuntimeWarning, match="zero variance in 2 of 2"):
        res = ttest_paired(a, b)
    assert np.isposinf(res.statistic[0]) and float(res.pvalue[0]) == 0.0
    assert np.isnan(res.statistic[1]) and np.isnan(res.pvalue[1])


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (2, 6), elements=st.floats(-10, 10, width=32)))
def test_swap_symmetry(x):
    a, b = x[0], x[0] + x[1]
    if np.ptp(b - a) < 1e-6:
        return
    ab, ba = ttest_paired(a, b), ttest_paired(b, a)
    np.testing.assert_allclose(ab.statistic, -ba.statistic, rtol=1e-12)
    np.testing.assert_allclose(ab.pvalue, ba.pvalue, rtol=1e-12)
    assert 0.0 <= float(ab.pvalue) <= 1.0


def test_validation_messages():
    with pytest.raises(ValueError, match="`a` and `b` must have the same shape"):
        ttest_paired([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least 2 paired observations"):
        ttest_paired([1.0], [2.0])
    with pytest.raises(ValueError, match="`b` contains NaN at index 1"):
        ttest_paired([1.0, 2.0, 3.0], [1.0, np.nan, 3.0])
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        ttest_paired(SEED_A, SEED_B, alternative="both")
    with pytest.raises(ValueError, match="`method` must be one of 'parametric', 'permutation'"):
        ttest_paired(SEED_A, SEED_B, method="bootstrap")
    with pytest.raises(ValueError, match="`method` must be one of 'parametric'; got 'perm"):
        ttest_corrected(SEED_A, SEED_B, n_train=90, n_test=10, method="permutation")
    with pytest.raises(ValueError, match="`axis`=2 is out of range"):
        ttest_paired(SEED_A, SEED_B, axis=2)
    with pytest.raises(TypeError, match="`a` must be an array of real numbers"):
        ttest_paired(["x", "y"], ["x", "y"])
    with pytest.raises(ValueError, match="`confidence_level` must lie in"):
        ttest_paired(SEED_A, SEED_B).confidence_interval(1.5)
    with pytest.raises(ValueError, match=r"must end in shape \(5, 2\)"):
        ttest_5x2cv(np.zeros((5, 3)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match="`n_test` must be at least 1"):
        ttest_corrected(SEED_A, SEED_B, n_train=90, n_test=0)
    with pytest.raises(TypeError, match="`n_train` must be an int"):
        ttest_corrected(SEED_A, SEED_B, n_train=90.0, n_test=10)
    with pytest.raises(ValueError, match="`method` must be one of 'exact', 'midp', 'chi2'"):
        mcnemar([0, 1], [0, 1], [1, 1], method="asymptotic")
    with pytest.raises(ValueError, match="`y_true` and `pred_b` must have the same shape"):
        mcnemar([0, 1], [0, 1], [1, 1, 0])
    with pytest.raises(TypeError, match="`pred_a` must hold numeric or boolean labels"):
        mcnemar([0, 1], ["a", "b"], [1, 1])
    with pytest.raises(TypeError, match="`correction` must be a bool"):
        mcnemar([0, 1], [0, 1], [1, 1], correction="yes")


# ----------------------------------------------------------------------------------------
# 5x2cv t and F against mlxtend's formulas
# ----------------------------------------------------------------------------------------


class _Fixed:
    """An 'estimator' whose scores come from a queue; mlxtend only calls fit()."""

    def fit(self, X, y):
        return self


def _mlxtend_5x2(fn, a, b):
    # mlxtend scores estimator1 then estimator2 on fold 1, then both on fold 2, per
    # replication; a scorer that pops precomputed scores reproduces any (5, 2) input.
    queue = []
    for i in range(5):
        for j in range(2):
            queue += [a[i, j], b[i, j]]
    queue.reverse()
    X = np.arange(20.0).reshape(10, 2)
    y = np.array([0, 1] * 5)
    return fn(_Fixed(), _Fixed(), X, y, scoring=lambda est, X, y: queue.pop(), random_seed=1)


def test_5x2cv_against_mlxtend(rng):
    from mlxtend.evaluate import combined_ftest_5x2cv, paired_ttest_5x2cv

    a = rng.uniform(0.7, 0.9, size=(3, 5, 2))
    b = rng.uniform(0.7, 0.9, size=(3, 5, 2))
    t = ttest_5x2cv(a, b)
    f = ftest_5x2cv(a, b)
    assert t.df == 5 and f.df == (10, 5)
    for i in range(3):
        t_ref, p_ref = _mlxtend_5x2(paired_ttest_5x2cv, a[i], b[i])
        np.testing.assert_allclose(t.statistic[i], t_ref, rtol=1e-10)
        np.testing.assert_allclose(t.pvalue[i], p_ref, rtol=1e-10)
        f_ref, pf_ref = _mlxtend_5x2(combined_ftest_5x2cv, a[i], b[i])
        np.testing.assert_allclose(f.statistic[i], f_ref, rtol=1e-10)
        np.testing.assert_allclose(f.pvalue[i], pf_ref, rtol=1e-10)


def test_5x2cv_formulas_and_one_sided(rng):
    a = rng.normal(size=(5, 2))
    b = rng.normal(size=(5, 2))
    d = a - b
    s2 = ((d - d.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    t = d[0, 0] / np.sqrt(s2.mean())  # Dietterich (1998), eq. for t~
    f = (d**2).sum() / (2 * s2.sum())  # Alpaydin (1999), eq. for f
    res = ttest_5x2cv(a, b, alternative="greater")
    np.testing.assert_allclose(res.statistic, t, rtol=1e-12)
    np.testing.assert_allclose(res.pvalue, scipy.stats.t.sf(t, 5), rtol=1e-10)
    resf = ftest_5x2cv(a, b)
    np.testing.assert_allclose(resf.statistic, f, rtol=1e-12)
    np.testing.assert_allclose(resf.pvalue, scipy.stats.f.sf(f, 10, 5), rtol=1e-10)


# ----------------------------------------------------------------------------------------
# Corrected resampled t
# ----------------------------------------------------------------------------------------


def test_corrected_t(rng):
    a = rng.normal(0.8, 0.02, size=(3, 15))
    b = rng.normal(0.79, 0.02, size=(3, 15))
    res = ttest_corrected(a, b, n_train=900, n_test=100)
    naive = scipy.stats.ttest_rel(a, b, axis=-1)
    # Nadeau & Bengio (2003): var(mean) = (1/J + n_test/n_train) s^2 instead of s^2 / J.
    t = naive.statistic * np.sqrt(1 / 15) / np.sqrt(1 / 15 + 100 / 900)
    np.testing.assert_allclose(res.statistic, t, rtol=1e-12)
    np.testing.assert_allclose(res.pvalue, 2 * scipy.stats.t.sf(np.abs(t), 14), rtol=1e-10)
    assert res.df == 14
    se = np.std(a - b, axis=-1, ddof=1) * np.sqrt(1 / 15 + 1 / 9)
    np.testing.assert_allclose(res.standard_error, se, rtol=1e-12)
    q = scipy.stats.t.ppf(0.975, 14)
    ci = res.confidence_interval()
    np.testing.assert_allclose(ci.low, (a - b).mean(axis=-1) - q * se, rtol=1e-10)
    # With n_test / n_train -> 0 it is the ordinary paired t.
    tiny = ttest_corrected(a, b, n_train=10**12, n_test=1)
    np.testing.assert_allclose(tiny.statistic, naive.statistic, rtol=1e-9)


# ----------------------------------------------------------------------------------------
# McNemar
# ----------------------------------------------------------------------------------------


def _predictions(n11, n01, n10, n00):
    """Labels and predictions with the given agreement counts (1 = correct)."""
    y = np.zeros(n11 + n01 + n10 + n00, dtype=np.int64)
    a = np.concatenate([np.zeros(n11 + n01, np.int64), np.ones(n10 + n00, np.int64)])
    b = np.concatenate(
        [
            np.zeros(n11, np.int64),
            np.ones(n01, np.int64),
            np.zeros(n10, np.int64),
            np.ones(n00, np.int64),
        ]
    )
    return y, a, b


def test_mcnemar_against_r():
    # R table matrix(c(30, 12, 4, 54), 2, byrow=TRUE): both right 30, only a right 12,
    # only b right 4, both wrong 54.
    y, a, b = _predictions(30, 12, 4, 54)
    chi = mcnemar(y, a, b, method="chi2")
    assert float(chi.n01) == 12 and float(chi.n10) == 4
    # R 4.2.2: mcnemar.test(tab)$statistic, $p.value
    np.testing.assert_allclose(chi.statistic, 3.0625, rtol=1e-12)
    np.testing.assert_allclose(chi.pvalue, 0.080118313727634338, rtol=1e-10)
    nc = mcnemar(y, a, b, method="chi2", correction=False)
    # R 4.2.2: mcnemar.test(tab, correct=FALSE)
    np.testing.assert_allclose(nc.statistic, 4.0, rtol=1e-12)
    np.testing.assert_allclose(nc.pvalue, 0.045500263896358473, rtol=1e-10)
    ex = mcnemar(y, a, b)
    # R 4.2.2: binom.test(4, 16)$p.value
    np.testing.assert_allclose(ex.pvalue, 0.076812744140625042, rtol=1e-10)
    # Tie n01 == n10: R's mcnemar.test(matrix(c(10,5,5,10),2)) gives statistic 0, p 1.
    tie = mcnemar(*_predictions(10, 5, 5, 10), method="chi2")
    assert float(tie.statistic) == 0.0 and float(tie.pvalue) == 1.0


@pytest.mark.parametrize("method", ["exact", "chi2"])
def test_mcnemar_against_statsmodels(rng, method):
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    y = rng.integers(0, 3, size=(5, 60))
    pa = np.where(rng.uniform(size=y.shape) < 0.8, y, (y + 1) % 3)
    pb = np.where(rng.uniform(size=y.shape) < 0.65, y, (y + 2) % 3)
    res = mcnemar(y, pa, pb, method=method)
    for i in range(5):
        ca, cb = pa[i] == y[i], pb[i] == y[i]
        table = [[np.sum(ca & cb), np.sum(ca & ~cb)], [np.sum(~ca & cb), np.sum(~ca & ~cb)]]
        ref = sm_mcnemar(table, exact=method == "exact", correction=True)
        np.testing.assert_allclose(res.statistic[i], ref.statistic, rtol=1e-10)
        np.testing.assert_allclose(res.pvalue[i], ref.pvalue, rtol=1e-10)


def test_mcnemar_exact_near_ties_is_one_and_statsmodels_elsewhere():
    # Issue 39.7: n01 = 7, n10 = 8 gave 0.9999999999999997 (2 P(X <= 7), X ~ Bin(15, 1/2),
    # is 1 exactly). statsmodels' mcnemar(exact=True) on the same tables; where it rounds
    # (49 vs 50: 0.9999999999999987) the exact 1 is within 1e-12.
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    for n01, n10 in [(7, 8), (8, 7), (20, 21), (49, 50), (100, 101), (3, 3), (0, 1), (3, 9)]:
        r = mcnemar(*_predictions(5, n01, n10, 5))
        ref = sm_mcnemar([[5, n01], [n10, 5]], exact=True).pvalue
        np.testing.assert_allclose(r.pvalue, ref, rtol=1e-12)
        traced = jax.jit(mcnemar)(*_predictions(5, n01, n10, 5)).pvalue
        if abs(n01 - n10) <= 1:
            assert r.pvalue == 1.0 == traced and type(r.pvalue) is np.float64
        np.testing.assert_allclose(traced, r.pvalue, rtol=1e-12)


def test_mcnemar_midp_and_degenerate():
    y, a, b = _predictions(30, 12, 4, 54)
    res = mcnemar(y, a, b, method="midp")
    # Mid-p (Fagerland et al. 2013): 2 P(X <= 4) - P(X = 4), X ~ Bin(16, 1/2), via scipy.
    ref = 2 * scipy.stats.binom.cdf(4, 16, 0.5) - scipy.stats.binom.pmf(4, 16, 0.5)
    np.testing.assert_allclose(res.pvalue, ref, rtol=1e-10)
    assert float(res.pvalue) < float(mcnemar(y, a, b).pvalue)
    same = np.array([1, 0, 1, 1])
    for method in ("exact", "midp", "chi2"):
        r = mcnemar(same, same, same, method=method)  # no discordant pair
        assert float(r.pvalue) == 1.0 and float(r.statistic) == 0.0


# ----------------------------------------------------------------------------------------
# Degenerate data (issue 18): zero variance is exact, not a ratio of rounding residues
# ----------------------------------------------------------------------------------------


def _rounded_constant_difference(rng, c=0.1, n=10):
    """``a``, ``b`` with ``a - b`` equal to ``c`` up to one ulp (a rounded constant)."""
    d = np.full(n, c)
    d[::3] = np.nextafter(c, 1.0)
    return d, np.zeros(n)


def test_zero_variance_rule_matches_scipy(rng):
    f = rng.normal(0.8, 0.05, 10)
    # scipy 1.17: ttest_rel(f, f) -> nan, nan; ttest_rel(f + 0.1, f) (here exactly
    # constant differences) -> inf, 0.0.
    with pytest.warns(RuntimeWarning, match="zero variance"):
        same = ttest_paired(f, f)
    assert np.isnan(same.statistic) and np.isnan(same.pvalue)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy: "Precision loss ..."
        ref = scipy.stats.ttest_rel(f + 0.1, f)
    assert np.isposinf(ref.statistic) and ref.pvalue == 0.0
    # A constant difference that rounding spread over 1e-16: scipy reports the ratio of
    # residues (t ~ 4e15); the rule reads it as the constant difference it is: inf.
    a, b = _rounded_constant_difference(rng)
    with pytest.warns(RuntimeWarning, match="zero variance"):
        res = ttest_paired(a, b)
    assert np.isposinf(res.statistic) and float(res.pvalue) == 0.0
    assert float(res.standard_error) == 0.0
    with pytest.warns(RuntimeWarning, match="zero variance"):
        cor = ttest_corrected(a, b, n_train=90, n_test=10)
    assert np.isposinf(cor.statistic) and float(cor.pvalue) == 0.0
    with pytest.warns(RuntimeWarning, match="zero variance"):
        low = ttest_paired(b, a, alternative="less")
    assert np.isneginf(low.statistic) and float(low.pvalue) == 0.0


def test_5x2cv_degenerate(rng):
    a = rng.uniform(0.7, 0.9, size=(5, 2))
    # Identical algorithms: d = 0, t and F are 0/0 = NaN (as ttest_rel on identical data).
    with pytest.warns(RuntimeWarning, match="zero variance"):
        t = ttest_5x2cv(a, a)
    with pytest.warns(RuntimeWarning, match="zero variance"):
        f = ftest_5x2cv(a, a)
    assert np.isnan(t.statistic) and np.isnan(f.statistic) and np.isnan(f.pvalue)
    # A constant difference up to rounding: s_i^2 are residues, t and F are inf.
    d, _ = _rounded_constant_difference(rng, 0.05)
    b = np.zeros((5, 2))
    with pytest.warns(RuntimeWarning, match="zero variance"):
        t = ttest_5x2cv(d.reshape(5, 2), b)
    with pytest.warns(RuntimeWarning, match="zero variance"):
        f = ftest_5x2cv(d.reshape(5, 2), b)
    assert np.isposinf(t.statistic) and float(t.pvalue) == 0.0
    assert np.isposinf(f.statistic) and float(f.pvalue) == 0.0


@pytest.mark.parametrize("scale", [1e-160, 1e-300, 2.0**-1040, 1e200])
def test_tiny_and_huge_scales_as_scipy(rng, scale):
    # Issue 18.14: XLA:CPU flushes subnormals and squares of 1e-160 underflow, which gave
    # t = inf, p = 0. The power-of-two rescale is exact and t is scale-invariant.
    a = rng.normal(0.3, 1.0, 8)
    b = rng.normal(0.0, 1.0, 8)
    ref = scipy.stats.ttest_rel(a, b)  # scipy 1.17 on the unscaled data
    res = ttest_paired(a * scale, b * scale)
    rtol = 1e-12 if scale > 1e-300 else 1e-3  # 2^-1040 keeps ~12 bits per value
    np.testing.assert_allclose(res.statistic, ref.statistic, rtol=rtol)
    np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=rtol)
    np.testing.assert_allclose(np.asarray(res.mean_difference) / scale, np.mean(a - b), rtol=rtol)
    cor = ttest_corrected(a * scale, b * scale, n_train=90, n_test=10)
    np.testing.assert_allclose(
        cor.statistic, ref.statistic * np.sqrt(1 / 8) / np.sqrt(1 / 8 + 1 / 9), rtol=rtol
    )
    a5, b5 = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    np.testing.assert_allclose(
        ttest_5x2cv(a5 * scale, b5 * scale).statistic, ttest_5x2cv(a5, b5).statistic, rtol=rtol
    )
    np.testing.assert_allclose(
        ftest_5x2cv(a5 * scale, b5 * scale).pvalue, ftest_5x2cv(a5, b5).pvalue, rtol=rtol
    )


def test_ordinary_scale_untouched(rng):
    # The rescale never touches data within [1.2e-77, 1.3e77]: bit-identical results.
    a, b = rng.normal(size=(2, 3, 9))
    for s in (1.0, 2.0**-200, 2.0**200):
        res = ttest_paired(a * s, b * s)
        base = ttest_paired(a, b)
        assert np.array_equal(res.statistic, base.statistic)
        assert np.array_equal(res.pvalue, base.pvalue)


# ----------------------------------------------------------------------------------------
# McNemar labels (issue 18.3)
# ----------------------------------------------------------------------------------------


def _sm_mcnemar(y, pa, pb):
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    ca, cb = pa == y, pb == y
    table = [[np.sum(ca & cb), np.sum(ca & ~cb)], [np.sum(~ca & cb), np.sum(~ca & ~cb)]]
    return sm_mcnemar(table, exact=True).pvalue


def test_mcnemar_reads_01_as_pm1(rng):
    y = rng.choice([-1, 1], 40)
    pa = np.where(rng.uniform(size=40) < 0.85, y, -y)
    pb = np.where(rng.uniform(size=40) < 0.65, y, -y)
    ref = _sm_mcnemar(y, pa, pb)  # statsmodels on the ±1 encoding
    for yy, a, b in [
        (y, pa, pb),
        (y, (pa + 1) // 2, (pb + 1) // 2),  # predictions in {0, 1}
        ((y + 1) // 2, pa, pb),  # labels in {0, 1}
        (y > 0, pa, pb),  # bool labels
        (y > 0, pa > 0, (pb + 1) // 2),
    ]:
        np.testing.assert_allclose(mcnemar(yy, a, b).pvalue, ref, rtol=1e-12)


def test_mcnemar_refuses_scores(rng):
    y = rng.choice([-1, 1], 30)
    f = y * rng.uniform(0.1, 2.0, 30)
    with pytest.raises(ValueError, match=r"`pred_a` must hold class labels.*threshold"):
        mcnemar(y, f, np.sign(f))
    with pytest.raises(ValueError, match="`y_true` must hold class labels"):
        mcnemar(y + 0.5, y, y)
