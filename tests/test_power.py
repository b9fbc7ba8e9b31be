"""jaxtests.power: analytic power against statsmodels' TTestPower, exact enumeration of
McNemar's test and simulations; the simulated power of the resampling tests."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

import jaxtests
from jaxtests import power
from jaxtests._mcnemar import _mcnemar

SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}


def _sm_power(d, n, alpha, alternative):
    return TTestPower().power(
        effect_size=d, nobs=n, alpha=alpha, alternative=SM_ALTERNATIVE[alternative]
    )


# ----------------------------------------------------------------------------------------
# Paired t
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("d, n, alpha", [(0.5, 30, 0.05), (0.2, 200, 0.01), (1.1, 5, 0.1)])
def test_t_power_equals_statsmodels(d, n, alpha, alternative):
    d = -d if alternative == "less" else d
    r = power.ttest_paired_power(n=n, effect_size=d, alpha=alpha, alternative=alternative)
    assert r.solved_for == "power" and r.n == n and r.df == n - 1
    assert r.power == pytest.approx(_sm_power(d, n, alpha, alternative), abs=1e-10)


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_t_solves_n_and_effect_as_statsmodels(alternative):
    sm = TTestPower()
    alt = SM_ALTERNATIVE[alternative]
    r = power.ttest_paired_power(effect_size=0.35, power=0.9, alpha=0.05, alternative=alternative)
    n_sm = sm.solve_power(effect_size=0.35, nobs=None, alpha=0.05, power=0.9, alternative=alt)
    assert r.n_real == pytest.approx(n_sm, rel=1e-6)  # statsmodels' own root is ~1e-8
    assert _sm_power(0.35, r.n_real, 0.05, alternative) == pytest.approx(0.9, abs=1e-10)
    assert r.n == math.ceil(r.n_real) and r.power >= 0.9 > _sm_power(
        0.35, r.n - 1, 0.05, alternative
    )
    assert r.power == pytest.approx(_sm_power(0.35, r.n, 0.05, alternative), abs=1e-10)
    e = power.ttest_paired_power(n=120, power=0.8, alpha=0.05, alternative=alternative)
    e_sm = sm.solve_power(effect_size=None, nobs=120, alpha=0.05, power=0.8, alternative=alt)
    # statsmodels' own root is loose here (its power at it: 0.7999967 one-sided); ours
    # gives statsmodels' power 0.8 to 1e-10
    assert e.effect_size == pytest.approx(e_sm, rel=1e-4)
    assert _sm_power(e.effect_size, 120, 0.05, alternative) == pytest.approx(0.8, abs=1e-10)
    if alternative == "greater":  # the t is symmetric: "less" detects the mirror effect
        less = power.ttest_paired_power(n=120, power=0.8, alternative="less")
        assert less.effect_size == pytest.approx(-e.effect_size, rel=1e-12)


def test_t_difference_from_the_two_models_scores():
    # sd of a - b = sqrt(sd_a^2 + sd_b^2 - 2 r sd_a sd_b), worked in numpy
    sd = math.sqrt(0.3**2 + 0.25**2 - 2 * 0.6 * 0.3 * 0.25)
    r = power.ttest_paired_power(n=150, difference=0.05, sd_a=0.3, sd_b=0.25, correlation=0.6)
    assert r.sd == pytest.approx(sd, rel=1e-14)
    assert r.effect_size == pytest.approx(0.05 / sd, rel=1e-14)
    assert r.power == pytest.approx(_sm_power(0.05 / sd, 150, 0.05, "two-sided"), abs=1e-10)
    # solving for the effect reports it in the scores' units too
    e = power.ttest_paired_power(n=150, power=0.8, sd=0.2)
    assert e.difference == pytest.approx(0.2 * e.effect_size, rel=1e-14)


def test_clustered_t_is_the_t_on_cluster_means():
    # Equal clusters of m: a cluster mean has sd sqrt(DE / m) in units of sd(d), so the
    # design is TTestPower on G cluster means with effect d sqrt(m / DE).
    m, icc, g, d = 8, 0.2, 25, 0.15
    de = 1 + (m - 1) * icc
    r = power.ttest_paired_power(n=g * m, effect_size=d, cluster_size=m, icc=icc)
    assert r.design_effect == pytest.approx(de, rel=1e-15)
    assert r.n_clusters == g and r.df == g - 1
    assert r.power == pytest.approx(
        _sm_power(d * math.sqrt(m / de), g, 0.05, "two-sided"), abs=1e-10
    )
    # solving rounds up to whole clusters
    s = power.ttest_paired_power(effect_size=d, power=0.9, cluster_size=m, icc=icc)
    assert s.n == s.n_clusters * m and s.n_clusters == math.ceil(s.n_real / m)
    assert s.power >= 0.9 and s.n_clusters - 1 < s.n_real / m
    # Eldridge et al. (2006), eq. 6: unequal sizes with coefficient of variation cv
    u = power.ttest_paired_power(n=200, effect_size=d, cluster_size=m, icc=icc, cluster_size_cv=0.5)
    assert u.design_effect == pytest.approx(1 + ((0.5**2 + 1) * m - 1) * icc, rel=1e-15)


def test_clustered_t_power_against_a_simulation():
    # Clustered normal differences d_ij = delta + sqrt(icc) u_j + sqrt(1 - icc) e_ij (sd 1),
    # analysed as the lead's cluster-robust t reduces to for equal sizes: scipy's one-sample
    # t on the G cluster means. 4,000 data sets: SE <= 0.008; 4 SE (budget ~1e-4).
    m, icc, g, d = 5, 0.3, 20, 0.3
    rng = np.random.default_rng(38)
    reps = 4000
    u = rng.standard_normal((reps, g, 1))
    e = rng.standard_normal((reps, g, m))
    x = d + math.sqrt(icc) * u + math.sqrt(1 - icc) * e
    p = stats.ttest_1samp(x.mean(axis=-1), 0.0, axis=-1).pvalue
    rate = np.mean(p <= 0.05)
    r = power.ttest_paired_power(n=g * m, effect_size=d, cluster_size=m, icc=icc)
    assert 0.3 < r.power < 0.9
    assert abs(rate - r.power) <= 4 * math.sqrt(r.power * (1 - r.power) / reps)
    # the naive per-item power is far higher: it ignores the clustering
    assert power.ttest_paired_power(n=g * m, effect_size=d).power > r.power + 0.2


# ----------------------------------------------------------------------------------------
# McNemar
# ----------------------------------------------------------------------------------------


def _brute_force(n, p01, p10, alpha, method, correction):
    """Sum of the trinomial over every (n01, n10), rejected by jaxtests.mcnemar's p-value."""
    n01, n10 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = n01 + n10 <= n
    n01, n10 = n01[ok].astype(float), n10[ok].astype(float)
    _, p = _mcnemar(n01, n10, method, correction)
    pmf = stats.multinomial.pmf(
        np.stack([n01, n10, n - n01 - n10], axis=-1), n, [p01, p10, 1 - p01 - p10]
    )
    return float(np.sum(pmf * (p <= alpha)))


@pytest.mark.parametrize(
    "method, correction", [("exact", True), ("midp", True), ("chi2", True), ("chi2", False)]
)
def test_mcnemar_enumerated_power_is_exact(method, correction):
    for n, p01, p10 in [(25, 0.2, 0.05), (40, 0.12, 0.08)]:
        r = power.mcnemar_power(n=n, p01=p01, p10=p10, method=method, correction=correction)
        assert r.power == pytest.approx(
            _brute_force(n, p01, p10, 0.05, method, correction), abs=1e-12
        )


def test_mcnemar_accuracies_and_phi():
    p1, p2, phi = 0.82, 0.78, 0.4
    # the 2x2 table of correctness worked in numpy: p11 = p1 p2 + phi sd1 sd2
    p11 = p1 * p2 + phi * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    r = power.mcnemar_power(n=300, p1=p1, p2=p2, correlation=phi)
    assert (r.p01, r.p10) == pytest.approx((p1 - p11, p2 - p11), abs=1e-15)
    assert r.difference == pytest.approx(p1 - p2, abs=1e-15)
    d = power.mcnemar_power(n=300, p01=r.p01, p10=r.p10)
    assert d.power == r.power and d.p1 is None


def test_mcnemar_power_against_simulated_mcnemar():
    # jaxtests.mcnemar (exact, its default) on simulated correctness of two models:
    # 2,000 test sets of 200 items, batched; 4 SE of the rejection rate (budget ~1e-4).
    p1, p2, phi, n, reps = 0.8, 0.74, 0.35, 200, 2000
    r = power.mcnemar_power(n=n, p1=p1, p2=p2, correlation=phi)
    rng = np.random.default_rng(7)
    cell = rng.choice(
        4, size=(reps, n), p=[1 - r.p01 - r.p10 - (p1 - r.p01), r.p01, r.p10, p1 - r.p01]
    )
    # cells: 0 both wrong, 1 A only right, 2 B only right, 3 both right
    y = np.ones((reps, n), int)
    a = np.where((cell == 1) | (cell == 3), 1, -1)
    b = np.where((cell == 2) | (cell == 3), 1, -1)
    rate = np.mean(np.asarray(jaxtests.mcnemar(y, a, b).pvalue) <= 0.05)
    assert 0.2 < r.power < 0.9
    assert abs(rate - r.power) <= 4 * math.sqrt(r.power * (1 - r.power) / reps)


def test_mcnemar_connor_formula():
    # Connor (1987), eqs. 3-4, worked in numpy
    p01, p10, alpha = 0.15, 0.08, 0.05
    psi, delta = p01 + p10, p01 - p10
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(0.85)
    n_connor = (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2
    kw = dict(p01=p01, p10=p10, method="chi2", correction=False, power_method="connor")
    r = power.mcnemar_power(power=0.85, **kw)
    assert r.n_real == pytest.approx(n_connor, rel=1e-14) and r.n == math.ceil(n_connor)
    q = power.mcnemar_power(n=400, **kw)
    z = (delta * math.sqrt(400) - za * math.sqrt(psi)) / math.sqrt(psi - delta**2)
    assert q.power == pytest.approx(stats.norm.cdf(z), abs=1e-14)
    # and it approximates the exact power of the test it is for (uncorrected chi-square)
    exact = power.mcnemar_power(n=400, p01=p01, p10=p10, method="chi2", correction=False)
    assert abs(exact.power - q.power) < 0.01


def test_mcnemar_solves_the_smallest_n_and_the_effect():
    kw = dict(p01=0.2, p10=0.08)
    r = power.mcnemar_power(power=0.8, **kw)
    assert r.n_real is None and r.power >= 0.8
    below = [power.mcnemar_power(n=k, **kw).power for k in range(1, r.n)]
    assert max(below) < 0.8  # no smaller n reaches the target (the exact power saw-tooths)
    e = power.mcnemar_power(n=500, p2=0.7, correlation=0.3, power=0.9)
    assert e.p1 > 0.7 and e.power == pytest.approx(0.9, abs=1e-9)
    assert power.mcnemar_power(n=500, p1=e.p1, p2=0.7, correlation=0.3).power == pytest.approx(
        0.9, abs=1e-9
    )
    f = power.mcnemar_power(n=500, p10=0.05, power=0.9)
    assert f.p01 > 0.05 and f.power == pytest.approx(0.9, abs=1e-9)


def test_phi_bounds():
    p1, p2 = 0.9, 0.6
    # phi's bounds from p11 in [max(0, p1 + p2 - 1), min(p1, p2)]
    s = math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    hi = (min(p1, p2) - p1 * p2) / s
    assert power.mcnemar_power(n=100, p1=p1, p2=p2, correlation=hi).p10 == pytest.approx(
        0, abs=1e-12
    )
    with pytest.raises(
        ValueError, match=r"`correlation`=0.45 is impossible .* \[-0.2722, 0.4082\]"
    ):
        power.mcnemar_power(n=100, p1=p1, p2=p2, correlation=0.45)


# ----------------------------------------------------------------------------------------
# Simulated power
# ----------------------------------------------------------------------------------------

# n = 100 items, d_z = 0.25: analytic t power 0.697. 1,000 data sets: SE <= 0.015, 4 SE.
N, EFFECT, REPS = 100, 0.25, 1000


@pytest.mark.parametrize("test, bias", [("t", 0.0), ("signflip", 0.0), ("bootstrap", 0.02)])
def test_simulated_power_agrees_with_the_t_power(test, bias):
    # bias: the shifted bootstrap test is liberal at small n (measured size 5.4% at
    # n = 100 on 4,000 null data sets, its power 0.704 against the t's 0.697)
    target = power.ttest_paired_power(n=N, effect_size=EFFECT).power
    r = power.simulated_power(test, N, EFFECT, n_datasets=REPS, key=3)
    assert r.standard_error == pytest.approx(math.sqrt(r.power * (1 - r.power) / REPS))
    assert abs(r.power - target) <= 4 * math.sqrt(target * (1 - target) / REPS) + bias
    lo, hi = r.confidence_interval()
    assert lo < r.power < hi and r.n_rejections == round(r.power * REPS)


def test_simulated_signflip_and_t_decide_alike_on_the_same_data():
    # the same key draws the same data sets: the two tests' rates differ by the few
    # data sets near the boundary, far less than their Monte Carlo error
    t = power.simulated_power("t", N, EFFECT, n_datasets=REPS, key=3)
    s = power.simulated_power("signflip", N, EFFECT, n_datasets=REPS, key=3)
    assert abs(t.power - s.power) <= 0.02
    again = power.simulated_power("signflip", N, EFFECT, n_datasets=REPS, key=3)
    assert again == s and s.seed == 3


def test_simulated_signflip_on_zero_one_losses_is_exact_mcnemar():
    # On 0/1-loss differences in {-1, 0, 1} the sign flip of the mean is the two-sided
    # binomial test of the discordant items, McNemar's exact test: the simulated power
    # agrees with the enumerated one within 4 SE (budget ~1e-4)
    gen = jaxtests.study.generator("bernoulli", disagreement=0.3)
    r = power.simulated_power("signflip", N, 0.12, generator=gen, n_datasets=REPS, key=3)
    exact = power.mcnemar_power(n=N, p01=0.21, p10=0.09).power
    assert abs(r.power - exact) <= 4 * math.sqrt(exact * (1 - exact) / REPS)


# ----------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(effect_size=0.5), ValueError, r"exactly one of `n`.*got 2 None"),
        (dict(n=30, effect_size=0.5, power=0.8), ValueError, r"exactly one .*got 0 None"),
        (dict(n=30, effect_size=0.5, alpha=1.5), ValueError, r"`alpha` must lie in \(0, 1\)"),
        (dict(n=30, power=0.03), ValueError, r"`power`=0.03 must exceed `alpha`"),
        (dict(n=1, effect_size=0.5), ValueError, r"`n` must be at least 2"),
        (dict(n=30.5, effect_size=0.5), TypeError, r"`n` must be an int"),
        (dict(n=30, difference=0.1), ValueError, r"`difference` needs `sd`"),
        (dict(n=30, effect_size=0.5, difference=0.1, sd=1), ValueError, r"either `effect_size`"),
        (dict(n=30, difference=0.1, sd=1, sd_a=1), ValueError, r"either `sd` or `sd_a`"),
        (dict(n=30, difference=0.1, sd_a=1, sd_b=1), ValueError, r"go together"),
        (dict(n=30, difference=0.1, sd_a=1, sd_b=1, correlation=1), ValueError, r"sd 0"),
        (dict(n=30, difference=0.1, sd=-1), ValueError, r"`sd` must lie in \(0, inf\]"),
        (dict(n=30, effect_size=0.5, icc=0.1), ValueError, r"need `cluster_size`"),
        (dict(n=30, effect_size=0.5, cluster_size=5), ValueError, r"needs `icc`"),
        (dict(n=30, effect_size=0.5, cluster_size=5, icc=1.5), ValueError, r"`icc` must lie"),
        (dict(n=5, effect_size=0.5, cluster_size=5, icc=0.1), ValueError, r"at least 10"),
        (dict(n=30, effect_size=0.5, alternative="larger"), ValueError, r"`alternative` must be"),
        (dict(n=30, effect_size=-0.5, alternative="greater"), ValueError, r"other side"),
        (dict(power=0.8, effect_size=0.0), ValueError, r"no `n` gives power above alpha"),
    ],
)
def test_ttest_paired_power_messages(kwargs, error, match):
    with pytest.raises(error, match=match):
        power.ttest_paired_power(**kwargs)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(p1=0.8, p2=0.7, correlation=0.3), ValueError, r"exactly one of `n`, `p1`"),
        (dict(n=100, p1=1.2, p2=0.7, correlation=0.3), ValueError, r"`p1` must lie in \[0, 1\]"),
        (dict(n=100, p1=0.8, p2=0.7, p01=0.1, p10=0.1), ValueError, r"not both"),
        (dict(n=100, p01=0.1), ValueError, r"`p10` is needed"),
        (dict(n=100, p1=0.8, correlation=0.3), ValueError, r"give `p2` and `correlation`"),
        (dict(n=100, p01=0.7, p10=0.5), ValueError, r"`p01` \+ `p10` must be at most 1"),
        (dict(n=100, p1=0.8, p2=0.7, correlation=0.3, method="z"), ValueError, r"`method`"),
        (dict(n=100, p01=0.2, p10=0.1, correction="yes"), TypeError, r"`correction` must be"),
        (dict(n=100, p01=0.2, p10=0.1, power_method="connor"), ValueError, r"uncorrected"),
        (dict(n=100, p01=0.2, p10=0.1, power_method="normal"), ValueError, r"`power_method`"),
        (dict(power=0.8, p01=0.1, p10=0.1), ValueError, r"equally accurate"),
        (dict(n=10, p10=0.3, power=0.99), ValueError, r"no `p01` reaches power 0.99"),
        (dict(n=0, p01=0.2, p10=0.1), ValueError, r"`n` must be at least 1"),
    ],
)
def test_mcnemar_power_messages(kwargs, error, match):
    with pytest.raises(error, match=match):
        power.mcnemar_power(**kwargs)


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (("wilcoxon", 30, 0.5), {}, ValueError, r"`test` must be one of"),
        (("t", 1, 0.5), {}, ValueError, r"`n` must be at least 2"),
        (("t", 30, 0.5), dict(n_datasets=1), ValueError, r"`n_datasets` must be at least 2"),
        (("t", 30, 0.5), dict(generator="mvnormal"), ValueError, r"multivariate"),
        (("t", 30, 0.5), dict(generator="bernoulli"), ValueError, r"`effect`=0.5 is impossible"),
        (("t", 30, "big"), {}, TypeError, r"`effect` must be a real number"),
        (("t", 30, 0.5), dict(alternative="two"), ValueError, r"`alternative`"),
    ],
)
def test_simulated_power_messages(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        power.simulated_power(*args, **kwargs)


def test_results_serialise():
    r = power.ttest_paired_power(effect_size=0.5, power=0.8)
    d = r.to_dict()
    assert d["n"] == 34 and d["solved_for"] == "n" and isinstance(d["power"], float)
    assert "TtestPowerResult(power=0.807" in repr(r)
    m = power.mcnemar_power(n=100, p01=0.2, p10=0.1).to_dict()
    assert m["n_real"] is None and m["method"] == "exact"
    assert jaxtests.power is power


def test_simulated_clustered_power_agrees_with_the_design_effect():
    # Issue 38: clustered designs simulated through the tests' cluster= against the analytic
    # power of ttest_paired_power (design effect 1 + 9 * 0.3, G - 1 = 39 df): 0.860. Within 4
    # Monte Carlo SE (1,000 data sets: SE about 0.011); the shifted bootstrap is liberal at
    # 40 clusters, so 4 SE + 0.03 for it.
    from jaxtests import power

    analytic = power.ttest_paired_power(n=400, effect_size=0.3, cluster_size=10, icc=0.3).power
    for test, slack in (("t", 0.0), ("signflip", 0.0), ("wild", 0.0), ("bootstrap", 0.03)):
        r = power.simulated_power(test, 400, 0.3, cluster_size=10, icc=0.3, n_datasets=1000, key=0)
        assert r.cluster_size == 10 and r.icc == 0.3
        assert abs(r.power - analytic) <= 4 * r.standard_error + slack, (test, r.power)
    naive = power.simulated_power("t", 400, 0.3, n_datasets=400, key=0)
    assert naive.power > 0.99  # unclustered, the same effect is easy to detect
    with pytest.raises(ValueError, match="`test`='wild'"):
        power.simulated_power("wild", 400, 0.3)
    with pytest.raises(ValueError, match="both `cluster_size` and `icc`"):
        power.simulated_power("t", 400, 0.3, cluster_size=10)
    with pytest.raises(ValueError, match="whole number"):
        power.simulated_power("t", 405, 0.3, cluster_size=10, icc=0.1)
    with pytest.raises(ValueError, match="`icc`"):
        power.simulated_power("t", 400, 0.3, cluster_size=10, icc=1.0)
    with pytest.raises(ValueError, match="'normal'"):
        power.simulated_power("t", 400, 0.1, cluster_size=10, icc=0.1, generator="bernoulli")
