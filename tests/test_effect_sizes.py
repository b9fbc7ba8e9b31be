"""Effect sizes beside the tests: Cohen's d_z with its exact noncentral-t interval for
the paired and corrected t tests, eta² and partial eta² for ANOVA, and the compare
command's effect cells; against pingouin, scipy and the formulas in numpy."""

import itertools
import warnings

import jax
import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
import scipy.stats

from jaxtests._anova import anova
from jaxtests._cli._compare_tests import _effect_fields
from jaxtests._ttests import ttest_corrected, ttest_paired

# Seed 002, "t-test example": test errors of two algorithms on 10 folds.
SEED_A = np.array([0.81, 0.82, 0.84, 0.78, 0.85, 0.86, 0.82, 0.83, 0.82, 0.81])
SEED_B = np.array([0.80, 0.77, 0.70, 0.83, 0.80, 0.78, 0.75, 0.80, 0.78, 0.77])
# 3 algorithms x 5 folds (anova's docstring) and 4 algorithms x 6 folds.
X35 = np.array(
    [[0.80, 0.82, 0.79, 0.81, 0.83], [0.75, 0.78, 0.74, 0.77, 0.76], [0.80, 0.81, 0.78, 0.80, 0.82]]
)
X46 = np.array(
    [
        [0.91, 0.88, 0.93, 0.90, 0.87, 0.92],
        [0.89, 0.87, 0.90, 0.91, 0.85, 0.90],
        [0.85, 0.86, 0.88, 0.84, 0.83, 0.87],
        [0.90, 0.89, 0.92, 0.88, 0.88, 0.91],
    ]
)


def _dz(a, b):
    d = np.asarray(a) - np.asarray(b)
    return d.mean(axis=-1) / d.std(axis=-1, ddof=1)


def _nct_cdf_by_definition(t, df, nc):
    """P(T <= t) for T = (Z + nc) / sqrt(V / df): E_V[Phi(t sqrt(V / df) - nc)] with
    V ~ chi2(df), integrated by quad (independent of scipy's Boost noncentral t)."""

    def f(v):
        return scipy.stats.norm.cdf(t * np.sqrt(v / df) - nc) * scipy.stats.chi2.pdf(v, df)

    # pieces split at the chi2 mean and where Phi's argument is 0 (a step for large t)
    cuts = sorted({0.0, float(df), df * (nc / t) ** 2 if t and nc > 0 else 0.0, 50.0 * df + 1e3})
    pieces = [*itertools.pairwise(cuts), (cuts[-1], np.inf)]
    return sum(
        scipy.integrate.quad(f, lo, hi, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
        for lo, hi in pieces
    )


def _brute_ncp(t, df, prob, cdf=_nct_cdf_by_definition, near=None):
    """Noncentrality with P(T <= t | df, nc) = prob: brentq on the CDF (decreasing in nc),
    on a bracket grown until the CDF changes sides (from ``near`` ± 0.1%: fewer steps)."""
    f = lambda nc: cdf(t, df, nc) - prob  # noqa: E731
    c, w = (t, 1.0) if near is None else (near, 1e-3 * (1 + abs(near)))
    lo, hi = c - w, c + w
    while f(lo) < 0:
        lo -= 2 * (hi - lo)
    while f(hi) > 0:
        hi += 2 * (hi - lo)
    return scipy.optimize.brentq(f, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)


def _scipy_nct_cdf(t, df, nc):
    return scipy.stats.nct.cdf(t, df, nc)


# ----------------------------------------------------------------------------------------
# Cohen's d_z
# ----------------------------------------------------------------------------------------


def test_dz_point_against_pingouin_and_definition():
    res = ttest_paired(SEED_A, SEED_B)
    # pingouin 0.7.0: compute_effsize(SEED_A, SEED_B, paired=True, eftype="cohen_dz")
    np.testing.assert_allclose(res.effect_size, 0.9424681791215638, rtol=1e-13)
    np.testing.assert_allclose(res.effect_size, _dz(SEED_A, SEED_B), rtol=1e-13)
    # d_z = t / sqrt(n) (Lakens 2013, eq. 7)
    np.testing.assert_allclose(res.effect_size, res.statistic / np.sqrt(10), rtol=1e-13)
    # pingouin's paired eftype="cohen" is d_av (average SD of a and b), not d_z:
    # compute_effsize(SEED_A, SEED_B, paired=True, eftype="cohen") = 1.5526213032779184
    assert abs(float(res.effect_size) - 1.5526213032779184) > 0.5
    c = [0.71, 0.74, 0.69, 0.73, 0.70, 0.75]
    d = [0.73, 0.78, 0.70, 0.74, 0.74, 0.77]
    # pingouin 0.7.0: compute_effsize(c, d, paired=True, eftype="cohen_dz")
    np.testing.assert_allclose(ttest_paired(c, d).effect_size, -1.7078251276599332, rtol=1e-13)


def test_dz_interval_against_brute_force_nct_inversion():
    res = ttest_paired(SEED_A, SEED_B)
    t, df, n = float(res.statistic), 9, 10
    ci = res.effect_size_interval()
    # brentq on scipy.stats.nct.cdf, and on the CDF by its definition: the noncentralities
    # that put t at the 97.5% / 2.5% quantiles
    for cdf in (_scipy_nct_cdf, _nct_cdf_by_definition):
        lo = _brute_ncp(t, df, 0.975, cdf) / np.sqrt(n)
        hi = _brute_ncp(t, df, 0.025, cdf) / np.sqrt(n)
        np.testing.assert_allclose([ci.low, ci.high], [lo, hi], rtol=1e-9)
    # Literal of that inversion (scipy 1.17.1), to pin the numbers themselves.
    np.testing.assert_allclose([ci.low, ci.high], [0.17152091, 1.67888098], rtol=1e-7)
    # pingouin 0.7.0's compute_esci(0.94247, 10, 10, paired=True) is the approximate
    # d ± t_q sqrt(1/n + d²/(2n)) = [0.08281181, 1.80212455]: wider at n = 10.
    assert 0.08281181 < ci.low and ci.high < 1.80212455
    ci90 = res.effect_size_interval(0.9)
    lo90 = _brute_ncp(t, df, 0.95) / np.sqrt(n)
    np.testing.assert_allclose(ci90.low, lo90, rtol=1e-9)
    assert ci.low < ci90.low < ci90.high < ci.high


def test_dz_interval_batched_signs_and_one_sided(rng):
    # Negative, positive, tiny and large effects in one batch of shape (2, 3, 7).
    shift = np.array([[-2.0, -0.3, 0.0], [0.05, 0.8, 6.0]])[..., None]
    d = shift + rng.standard_normal((2, 3, 7))
    res = ttest_paired(d, np.zeros_like(d))
    assert res.effect_size.shape == (2, 3)
    np.testing.assert_allclose(res.effect_size, _dz(d, 0.0), rtol=1e-12)
    ci = res.effect_size_interval()  # 95% two-sided: limits at 97.5% and 2.5%
    ci90 = res.effect_size_interval(0.9)  # 90% two-sided: the 95% one-sided limits
    assert ci.low.shape == ci.high.shape == ci90.low.shape == (2, 3)
    greater = ttest_paired(d, np.zeros_like(d), alternative="greater").effect_size_interval()
    less = ttest_paired(d, np.zeros_like(d), alternative="less").effect_size_interval()
    np.testing.assert_allclose(greater.low, ci90.low, rtol=1e-13)
    np.testing.assert_allclose(less.high, ci90.high, rtol=1e-13)
    assert np.all(greater.high == np.inf) and np.all(less.low == -np.inf)
    # Each limit by brentq on the noncentral t CDF by its definition (quad); the 90%
    # (one-sided) limits are checked the same way in the seed 002 test.
    for idx in np.ndindex(2, 3):
        t = float(res.statistic[idx])
        for got, prob in ((ci.low, 0.975), (ci.high, 0.025)):
            want = _brute_ncp(t, 6, prob, near=float(got[idx]) * np.sqrt(7)) / np.sqrt(7)
            np.testing.assert_allclose(got[idx], want, rtol=1e-9, atol=1e-12)
    # batched equals looped
    one = ttest_paired(d[1, 2], np.zeros(7)).effect_size_interval()
    np.testing.assert_allclose([one.low, one.high], [ci.low[1, 2], ci.high[1, 2]], rtol=1e-12)


def test_dz_interval_large_t():
    # Tiny spread: t ~ 2e5, past where scipy's noncentral t CDF is used (|t| > 1e3).
    d = 1.0 + 1e-5 * np.array([0.3, -1.2, 0.8, 0.1, -0.4, 0.9])
    res = ttest_paired(d, np.zeros(6))
    t = float(res.statistic)
    assert t > 1e5
    ci = res.effect_size_interval()
    for got, prob in ((ci.low, 0.975), (ci.high, 0.025)):
        want = _brute_ncp(t, 5, prob, near=float(got) * np.sqrt(6)) / np.sqrt(6)
        np.testing.assert_allclose(got, want, rtol=1e-9)
        # As nc -> inf, T / nc -> sqrt(df / V): nc = t sqrt(chi2.isf(prob, df) / df)
        # (scipy.stats.chi2), up to O(1 / nc).
        asymptotic = t * np.sqrt(scipy.stats.chi2.isf(prob, 5) / 5) / np.sqrt(6)
        np.testing.assert_allclose(got, asymptotic, rtol=1e-4)


def test_dz_interval_coverage():
    # The exact interval covers the true d_z at its level: 2000 normal samples of n = 8
    # with d_z = 0.5. Binomial SE sqrt(.95 .05 / 2000) = 0.0049; 4.5 SE tolerance
    # (failure budget ~7e-6 for a correct interval; fixed seed, so deterministic).
    rng = np.random.default_rng(7)
    d = 0.5 + rng.standard_normal((2000, 8))
    ci = ttest_paired(d, np.zeros_like(d)).effect_size_interval()
    coverage = np.mean((ci.low <= 0.5) & (0.5 <= ci.high))
    assert abs(coverage - 0.95) < 4.5 * np.sqrt(0.95 * 0.05 / 2000), coverage
    # One-sided: the lower bound alone misses 5%.
    lo = ttest_paired(d, np.zeros_like(d), alternative="greater").effect_size_interval().low
    assert abs(np.mean(lo <= 0.5) - 0.95) < 4.5 * np.sqrt(0.95 * 0.05 / 2000)


def test_dz_permutation_jit_and_validation():
    res = ttest_paired(SEED_A, SEED_B)
    perm = ttest_paired(SEED_A, SEED_B, method="permutation")
    np.testing.assert_allclose(perm.effect_size, res.effect_size, rtol=1e-13)
    np.testing.assert_allclose(perm.effect_size_interval(), res.effect_size_interval())
    traced = jax.jit(lambda x, y: ttest_paired(x, y))(SEED_A, SEED_B)
    np.testing.assert_allclose(traced.effect_size, res.effect_size, rtol=1e-13)
    with pytest.raises(ValueError, match="`confidence_level`"):
        res.effect_size_interval(1.5)


def test_dz_zero_variance_follows_t():
    a = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    b = a - np.array([[0.5], [-0.5], [0.0]])  # d = +0.5, -0.5, 0: constant
    with pytest.warns(RuntimeWarning, match="zero variance"):
        res = ttest_paired(a, b)
    # As t (scipy.stats.ttest_rel): +inf, -inf, NaN.
    np.testing.assert_array_equal(res.statistic, [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(res.effect_size, [np.inf, -np.inf, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = res.effect_size_interval()
    np.testing.assert_array_equal(ci.low, [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(ci.high, [np.inf, -np.inf, np.nan])


def test_corrected_dz_uncorrected_point_corrected_interval(rng):
    a = 0.8 + 0.02 * rng.standard_normal((3, 15))
    b = a - 0.01 - 0.02 * rng.standard_normal((3, 15))
    res = ttest_corrected(a, b, n_train=80, n_test=20)
    # The point d_z is the paired one (the definition in numpy).
    np.testing.assert_allclose(res.effect_size, _dz(a, b), rtol=1e-12)
    np.testing.assert_allclose(res.effect_size, ttest_paired(a, b).effect_size, rtol=1e-12)
    assert res.test_train_ratio == 0.25
    # The interval inverts the corrected t: nc = d_z / sqrt(1/J + n_test/n_train).
    scale = np.sqrt(1 / 15 + 0.25)
    ci = res.effect_size_interval()
    paired = ttest_paired(a, b).effect_size_interval()
    for i in range(3):
        t = float(res.statistic[i])
        want = [
            _brute_ncp(t, 14, 0.975, near=ci.low[i] / scale) * scale,
            _brute_ncp(t, 14, 0.025, near=ci.high[i] / scale) * scale,
        ]
        np.testing.assert_allclose([ci.low[i], ci.high[i]], want, rtol=1e-9)
    # Wider than the paired interval, which takes the correlated splits as independent.
    assert np.all(ci.high - ci.low > paired.high - paired.low)


# ----------------------------------------------------------------------------------------
# eta² and partial eta²
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "n2", "np2_blocked"),
    [
        # pingouin 0.7.0: anova(effsize="n2" / "np2") one-way (both the first number),
        # rm_anova(within="alg", subject="fold", effsize="n2") the first number too,
        # rm_anova(..., effsize="np2") the second.
        (X35, 0.7146631439894318, 0.9408695652173916),
        (X46, 0.4876543209876542, 0.8061224489795917),
    ],
)
def test_eta_squared_against_pingouin(x, n2, np2_blocked):
    one = anova(x)
    np.testing.assert_allclose([one.eta_squared, one.partial_eta_squared], [n2, n2], rtol=1e-12)
    blk = anova(x, blocked=True)
    np.testing.assert_allclose(blk.eta_squared, n2, rtol=1e-12)
    np.testing.assert_allclose(blk.partial_eta_squared, np2_blocked, rtol=1e-12)
    # The formulas in numpy: SS_alg / SS_total and F df1 / (F df1 + df2).
    ss_total = np.sum((x - x.mean()) ** 2)
    ss_alg = x.shape[1] * np.sum((x.mean(1) - x.mean()) ** 2)
    np.testing.assert_allclose(blk.eta_squared, ss_alg / ss_total, rtol=1e-12)
    for r in (one, blk):
        f, (df1, df2) = float(r.statistic), r.df
        np.testing.assert_allclose(r.partial_eta_squared, f * df1 / (f * df1 + df2), rtol=1e-12)


def test_eta_squared_against_statsmodels_anovarm(rng):
    pd = pytest.importorskip("pandas")
    from statsmodels.stats.anova import AnovaRM

    x = rng.standard_normal((3, 8)) + np.array([[0.0], [0.4], [0.9]]) + rng.standard_normal(8)
    df = pd.DataFrame({"alg": np.repeat(np.arange(3), 8), "fold": np.tile(np.arange(8), 3)})
    df["y"] = x.ravel()
    table = AnovaRM(df, "y", "fold", within=["alg"]).fit().anova_table
    f, df1, df2 = table["F Value"].iloc[0], table["Num DF"].iloc[0], table["Den DF"].iloc[0]
    res = anova(x, blocked=True)
    np.testing.assert_allclose(res.partial_eta_squared, f * df1 / (f * df1 + df2), rtol=1e-10)


def test_eta_squared_batched_and_degenerate(rng):
    x = rng.standard_normal((2, 3, 4, 5))
    for blocked in (False, True):
        res = anova(x, blocked=blocked)
        assert res.eta_squared.shape == res.partial_eta_squared.shape == (2, 3)
        one = anova(x[1, 2], blocked=blocked)
        np.testing.assert_allclose(res.eta_squared[1, 2], one.eta_squared, rtol=1e-12)
        np.testing.assert_allclose(
            res.partial_eta_squared[1, 2], one.partial_eta_squared, rtol=1e-12
        )
    same = np.tile(rng.standard_normal(5), (3, 1))  # identical algorithms: F = 0
    const_folds = np.array([[1.0] * 4, [2.0] * 4, [3.0] * 4])  # F = inf
    const = np.ones((3, 4))  # one-way F = NaN, blocked F = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x_, one_way, blocked in (
            (same, (0.0, 0.0), (0.0, 0.0)),
            (const_folds, (1.0, 1.0), (1.0, 1.0)),
            (const, (np.nan, np.nan), (0.0, 0.0)),
        ):
            r1, r2 = anova(x_), anova(x_, blocked=True)
            np.testing.assert_array_equal([r1.eta_squared, r1.partial_eta_squared], one_way)
            np.testing.assert_array_equal([r2.eta_squared, r2.partial_eta_squared], blocked)


# ----------------------------------------------------------------------------------------
# compare's effect cells
# ----------------------------------------------------------------------------------------


def test_compare_effect_cells():
    res = ttest_paired(SEED_A, SEED_B)
    row = _effect_fields(res, 0.95)
    ci, dz = res.confidence_interval(), res.effect_size_interval()
    # t interval, 4 digits of the smallest number, one format per cell (issue 39.7)
    assert row["difference"] == "0.04600 [0.01108, 0.08092]"
    assert row["effect"] == "d_z 0.9425 [0.1715, 1.6789]"
    np.testing.assert_allclose(row["mean_difference_interval"], [ci.low, ci.high], rtol=1e-15)
    np.testing.assert_allclose(row["effect_size_interval"], [dz.low, dz.high], rtol=1e-15)
    assert _effect_fields(anova(X35), 0.95)["effect"] == "eta² 0.7147"
    blocked = _effect_fields(anova(X35, blocked=True), 0.95)
    assert blocked["effect"] == "eta² 0.7147, partial eta² 0.9409"
    assert "difference" not in blocked
