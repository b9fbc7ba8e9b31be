"""Tests of jaxtests.study: batched test kernels against scipy, power and calibration
studies, MacKay's loss study (seed 001) and agreement tables (seeds 000, 004).

Failure budget of the stochastic tests: every random quantity uses a fixed key,
so the tests are deterministic; the tolerances (4 binomial standard errors, or
stated bounds) would be exceeded with probability < 1e-4 each for a fresh key.
"""

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtests.kernels import study as kstudy
from scipy import stats

from jaxtests import datasets, models, study
from jaxtests._cv import cross_validate
from jaxtests._hotelling import hotelling_t2
from jaxtests._studies.calibration import _uniform_distances
from jaxtests._studies.generators import _simulate

ALTS = ("two-sided", "less", "greater")
# Jitted once per module: op-by-op dispatch of the rank kernel costs seconds per shape.
_wilcoxon = jax.jit(kstudy.wilcoxon_pvalue, static_argnums=1)
_sign = jax.jit(kstudy.sign_pvalue, static_argnums=1)
_ttest = jax.jit(kstudy.ttest_pvalue, static_argnums=1)


def _rows(rng, n, m, ties=False):
    d = rng.standard_normal((n, m))
    if ties:
        d = np.round(d * 2) / 2  # ties and zeros
    return d


# ----------------------------------------------------------------------------------------
# Kernels vs scipy
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("m", [9, 25, 60])
def test_wilcoxon_matches_scipy_without_ties(rng, alternative, m):
    d = _rows(rng, 12, m)
    got = np.asarray(_wilcoxon(jnp.asarray(d), alternative))
    # scipy.stats.wilcoxon, method="auto": exact for m <= 50 without ties, else normal
    ref = [stats.wilcoxon(row, alternative=alternative).pvalue for row in d]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("alternative", ALTS)
def test_wilcoxon_matches_scipy_asymptotic_with_ties_and_zeros(rng, alternative):
    d = _rows(rng, 20, 30, ties=True)
    assert np.any(d == 0)
    got = np.asarray(_wilcoxon(jnp.asarray(d), alternative))
    ref = [stats.wilcoxon(row, alternative=alternative, method="asymptotic").pvalue for row in d]
    np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_wilcoxon_ternary_rows_match_scipy():
    # 0/1-loss differences: every nonzero |d| is tied.
    d = np.array([[1, -1, 0, 1, 1, 0, 1, 1, -1, 1, 1, 1, 0, 1, 1.0]])
    got = float(_wilcoxon(jnp.asarray(d), "two-sided")[0])
    ref = stats.wilcoxon(d[0], method="asymptotic").pvalue
    assert got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("alternative", ALTS)
def test_sign_test_matches_binomtest(rng, alternative):
    d = _rows(rng, 25, 15, ties=True)
    got = np.asarray(_sign(jnp.asarray(d), alternative))
    ref = [
        stats.binomtest(
            int((r > 0).sum()), int((r != 0).sum()), 0.5, alternative=alternative
        ).pvalue
        for r in d
    ]
    np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_sign_test_literal_and_all_zero():
    # scipy 1.17: binomtest(8, 10).pvalue = 0.109375 (= 2 * 56 / 1024)
    d = jnp.asarray([[1.0] * 8 + [-1.0] * 2, [0.0] * 10])
    p = np.asarray(_sign(d, "two-sided"))
    assert p[0] == pytest.approx(0.109375, rel=1e-12)
    assert p[1] == 1.0


@pytest.mark.parametrize("alternative", ALTS)
def test_ttest_matches_scipy(rng, alternative):
    d = _rows(rng, 10, 12)
    got = np.asarray(_ttest(jnp.asarray(d), alternative))
    ref = stats.ttest_1samp(d, 0.0, axis=-1, alternative=alternative).pvalue
    np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_hotelling_pvalue_matches_package_and_f_formula(rng):
    d = rng.standard_normal((6, 12, 2)) + np.array([0.3, -0.2])
    got = np.asarray(kstudy.hotelling_pvalue(jnp.asarray(d)))
    pkg = np.asarray(hotelling_t2(d, np.zeros_like(d)).pvalue)
    np.testing.assert_allclose(got, pkg, rtol=1e-10)
    # Independent formula: T² = k dbar' S^-1 dbar, (k-p)/(p(k-1)) T² ~ F(p, k-p) (seed 004)
    for row, p in zip(d, got, strict=True):
        k, q = row.shape
        dbar = row.mean(0)
        t2 = k * dbar @ np.linalg.solve(np.cov(row.T), dbar)
        assert p == pytest.approx(stats.f.sf(t2 * (k - q) / (q * (k - 1)), q, k - q), rel=1e-9)


def test_kernels_jit_parity_and_batched_equals_looped(rng):
    d = jnp.asarray(_rows(rng, 6, 14, ties=True).reshape(2, 3, 14))
    for fn, jitted_fn in (
        (kstudy.wilcoxon_pvalue, _wilcoxon),
        (kstudy.sign_pvalue, _sign),
        (kstudy.ttest_pvalue, _ttest),
    ):
        jitted = np.asarray(jitted_fn(d, "two-sided"))
        looped = np.array(
            [[float(jitted_fn(d[i, j], "two-sided")) for j in range(3)] for i in range(2)]
        )
        np.testing.assert_allclose(looped, jitted, rtol=1e-12)
        if fn is not kstudy.wilcoxon_pvalue:  # op-by-op dispatch of the rank kernel is slow
            np.testing.assert_allclose(np.asarray(fn(d, "two-sided")), jitted, rtol=1e-12)


def test_signed_rank_table_literals():
    # Exact null of W+ for m = 3: sums 0..6 with counts 1,1,1,2,1,1,1 over 8 patterns.
    cdf, sf = kstudy.signed_rank_table(3)
    np.testing.assert_allclose(cdf, np.cumsum([1, 1, 1, 2, 1, 1, 1]) / 8)
    assert sf[0] == 1.0 and sf[6] == 1 / 8


# ----------------------------------------------------------------------------------------
# power
# ----------------------------------------------------------------------------------------


def _decisions_scipy(d, alpha):
    """Decisions of the five univariate tests by scipy on each row of ``d``."""
    out = {"t": [], "signflip": [], "wilcoxon": [], "sign": []}
    for row in d:
        out["t"].append(stats.ttest_1samp(row, 0.0).pvalue)
        # m = 10: 2^10 patterns <= n_resamples, so scipy enumerates them all (exact),
        # as the jaxtests engine does.
        pr = stats.permutation_test(
            (row,),
            lambda x, axis: np.mean(x, axis=axis),
            permutation_type="samples",
            n_resamples=np.inf,
            vectorized=True,
        ).pvalue
        out["signflip"].append(pr)
        out["wilcoxon"].append(stats.wilcoxon(row).pvalue)
        out["sign"].append(stats.binomtest(int((row > 0).sum()), int((row != 0).sum())).pvalue)
    return {k: np.asarray(val) for k, val in out.items()}


def test_power_decisions_match_scipy():
    n, m, alpha, seed = 60, 10, 0.05, 7
    res = study.power(
        None,
        "t",
        n_experiments=n,
        m=m,
        effect=[0.0, 0.8],
        key=seed,
        n_resamples=2048,
        keep_pvalues=True,
    )
    gen = study.generator("t")
    data_key = jax.random.fold_in(jax.random.key(seed), 0)
    with jax.enable_x64(True):
        for j, e in enumerate(res.effects):
            d = np.asarray(_simulate(gen, data_key, e, n, m))
            ref = _decisions_scipy(d, alpha)
            p = np.asarray(res.pvalues[:, j])
            for i, name in enumerate(res.tests):
                r = ref["signflip" if name.startswith("signflip") else name]
                np.testing.assert_allclose(p[i], r, rtol=1e-9, atol=1e-12, err_msg=name)
                np.testing.assert_array_equal(p[i] <= alpha, r <= alpha)
            np.testing.assert_array_equal(
                np.asarray(res.n_rejections[:, j]), np.sum(p <= alpha, axis=-1)
            )
    assert res.signflip_methods == ("exact",)


def test_power_rates_intervals_and_ordering():
    res = study.power(["t", "sign"], "normal", n_experiments=400, m=20, effect=[0.0, 0.7], key=3)
    r = np.asarray(res.rejection_rate)
    lo, hi = (np.asarray(a) for a in res.confidence_interval())
    assert np.all(lo <= r) and np.all(r <= hi)
    # Clopper-Pearson of 20/400 from scipy.stats.binomtest(...).proportion_ci('exact')
    ci = stats.binomtest(int(res.n_rejections[0, 0]), 400).proportion_ci(0.95, "exact")
    assert (lo[0, 0], hi[0, 0]) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert r[0, 1] > r[1, 1] > r[0, 0]  # t beats the sign test under normal noise
    assert r[0, 1] > 0.8


def test_signflip_mean_and_t_coincide_and_bernoulli_uses_binomial():
    res = study.power(
        ["signflip_mean", "signflip_t", "sign"],
        "bernoulli",
        n_experiments=400,
        m=20,
        effect=0.1,
        key=1,
        n_resamples=1000,
        keep_pvalues=True,
    )
    p = np.asarray(res.pvalues)
    np.testing.assert_array_equal(p[0], p[1])
    # Ternary differences: the engine's closed form is the sign test.
    np.testing.assert_allclose(p[0], p[2], rtol=1e-10)
    assert res.signflip_methods == ("binomial",)


def test_multivariate_hotelling_detects_what_error_misses():
    # Mean 1.5 (1, 1)/sqrt(2), correlation 0.5: noncentrality m mu' S^-1 mu = 30.
    res = study.power(["hotelling", "t"], "mvnormal", n_experiments=400, m=20, effect=1.5, key=2)
    r = np.asarray(res.rejection_rate)[:, 0]
    # Threshold shift along (1, 1): the error combination (-0.5, 0.5) has mean zero.
    assert r[0] > 0.9
    assert abs(r[1] - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 400)


def test_from_data_generator_null_and_alternative():
    rng = np.random.default_rng(5)
    d = rng.standard_normal(300) * 0.2 + 0.2  # 1 sd: power ~0.99 at m = 20
    null = study.power(["t"], study.from_data(d), n_experiments=400, m=20, effect=0.0, key=4)
    alt = study.power(
        ["t"], study.from_data(d, centre=False), n_experiments=400, m=20, effect=0.0, key=4
    )
    assert abs(float(null.rejection_rate[0, 0]) - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 400)
    assert float(alt.rejection_rate[0, 0]) > 0.9


def test_power_reproducible_with_fixed_key():
    kw = dict(n_experiments=400, m=20, effect=0.4, n_resamples=1000, keep_pvalues=True)
    a = study.power(["t", "signflip_mean"], "cauchy", key=11, **kw)
    b = study.power(["t", "signflip_mean"], "cauchy", key=11, **kw)
    c = study.power(["t"], "cauchy", key=12, **kw)
    np.testing.assert_array_equal(np.asarray(a.pvalues), np.asarray(b.pvalues))
    assert a.seed == 11
    assert not np.array_equal(np.asarray(a.pvalues[0]), np.asarray(c.pvalues[0]))
    # Monte Carlo p-values (m = 20: 2^20 patterns > 1000 draws) are never below 1/(B+1).
    assert a.signflip_methods == ("monte-carlo",)
    assert float(np.min(np.asarray(a.pvalues[1]))) >= 1 / 1001


# ----------------------------------------------------------------------------------------
# calibration
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_calibration_t_under_normal_null_within_mc_error():
    n = 4000
    cal = study.calibration(["t", "wilcoxon"], "normal", n_experiments=n, m=20, key=2013)
    se = math.sqrt(0.05 * 0.95 / n)
    for i in range(2):
        assert abs(float(cal.type_one_error[i]) - 0.05) < 4 * se
        assert not bool(cal.flagged[i])
    # t p-values are continuous and uniform: Kolmogorov distance ~ 1/sqrt(n).
    assert float(cal.ks_distance[0]) < 1.63 / math.sqrt(n)  # 1% critical value
    u, p = cal.qq("t")
    assert u.shape == p.shape == (n,) and np.all(np.diff(p) >= 0)


def test_calibration_flags_symmetry_tests_under_skewed_null():
    cal = study.calibration(["t", "sign"], "lognormal", n_experiments=400, m=20, key=0)
    flagged = dict(zip(cal.tests, np.asarray(cal.flagged), strict=True))
    # Mean-zero lognormal noise has median < 0: the sign test's H0 is false.
    assert flagged["sign"]
    k, n = int(cal.n_rejections[1]), 400
    assert float(cal.excess_pvalue[1]) == pytest.approx(stats.binom.sf(k - 1, n, 0.05))


def test_uniform_distances_literal():
    # p = (0.1, 0.2, 0.9): F_n - u peaks at 2/3 - 0.2; u - F_n at 0.9 - 2/3.
    ks, mx = _uniform_distances(np.array([[0.1, 0.2, 0.9]]))
    assert ks[0] == pytest.approx(2 / 3 - 0.2)
    assert mx[0] == pytest.approx(2 / 3 - 0.2)


# ----------------------------------------------------------------------------------------
# loss_study (seed 001)
# ----------------------------------------------------------------------------------------


def test_loss_study_mackay_facts():
    res = study.loss_study(("t",), n_experiments=4000, m=20, effect=(0.0, 1.0), key=1997)
    pw = res.powers
    means = dict(zip(pw, np.asarray(res.loss_mean), strict=True))
    exact = dict(zip(pw, np.asarray(res.analytic_mean), strict=True))
    # Seed 001: for Cauchy errors, E|e|^(1/2) = sqrt(2); E|e|^p = 1/cos(p pi/2) for p < 1.
    assert exact[0.5] == pytest.approx(math.sqrt(2), rel=1e-14)
    assert exact[0.1] == pytest.approx(1 / math.cos(0.05 * math.pi), rel=1e-14)
    assert math.isinf(exact[2.0]) and math.isinf(exact[1.0])
    # Var |e|^0.5 is (log-)infinite: the error of the mean of 1e5 draws is ~0.01.
    assert means[0.5] == pytest.approx(math.sqrt(2), abs=0.05)
    assert means[0.1] == pytest.approx(exact[0.1], abs=0.005)
    r = np.asarray(res.rejection_rate)
    # MacKay's point: p < 2 is more sensitive; p = 0.1 beats the squared error loss.
    assert r[3, 0, 1] > r[2, 0, 1] > r[0, 0, 1]
    assert r[3, 0, 1] > 2 * r[0, 0, 1]
    assert abs(r[3, 0, 0] - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 4000)


def test_loss_distribution_matches_seed_density():
    # Seed 001 eq. (3): the density of E = |e|^(1/2) is (4/pi) E / (1 + E^4), whose CDF
    # is (2/pi) arctan(E^2).
    with jax.enable_x64(True):
        e = np.asarray(kstudy.noise(jax.random.key(3), (20000,), "cauchy", 0.0, jnp.float64))
    loss = np.abs(e) ** 0.5
    ks = stats.kstest(loss, lambda x: 2 / np.pi * np.arctan(x**2))
    assert ks.pvalue > 1e-3


# ----------------------------------------------------------------------------------------
# agreement (seeds 000 and 004)
# ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cv_clf():
    X, y = datasets.load_pima()
    X = (X - X.mean(0)) / X.std(0)
    ms = {
        "lda": models.lda(),
        "centroid": models.nearest_centroid(),
        "ridge": models.ridge_classifier(10.0),
    }
    return cross_validate(ms, X[:300], y[:300], cv=5, repeats=3, key=0)


@pytest.fixture(scope="module")
def cv_reg():
    X, y = datasets.load_diabetes()
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    ms = {"ridge": models.ridge(1.0), "ridge100": models.ridge(100.0)}
    return cross_validate(ms, X, y, cv=5, repeats=4, key=0)


def test_agreement_error_hinge_counts_and_decisions(cv_clf):
    res = study.agreement(cv_clf, "error_hinge")
    n_pairs, repeats = 3, 3
    assert int(np.asarray(res.counts).sum()) == n_pairs * repeats == res.n_comparisons
    np.testing.assert_array_equal(np.asarray(res.pair_counts).sum(0), np.asarray(res.counts))
    assert float(np.asarray(res.percentages()).sum()) == pytest.approx(100.0)
    # Decisions equal scipy.stats.ttest_rel on the per-fold total losses (seed 000).
    p = np.asarray(res.pvalues).reshape(n_pairs, repeats, 2)
    for i, (a, b) in enumerate([("lda", "centroid"), ("lda", "ridge"), ("centroid", "ridge")]):
        for j, loss in enumerate(["zero_one", "hinge"]):
            la = np.asarray(cv_clf.fold_losses(a, loss, reduce="sum"))
            lb = np.asarray(cv_clf.fold_losses(b, loss, reduce="sum"))
            ref = stats.ttest_rel(la, lb, axis=-1).pvalue
            np.testing.assert_allclose(p[i, :, j], ref, rtol=1e-9)
    sw, md = np.asarray(res.normality_shapiro), np.asarray(res.normality_mardia)
    assert sw.shape == md.shape == (3, 2)
    assert np.all((sw >= 0) & (sw <= 1)) and np.all((md >= 0) & (md <= 1))


def test_agreement_multivariate_matches_hotelling_and_pools_datasets(cv_clf):
    res = study.agreement([cv_clf, cv_clf], "error_tpr_fpr", names=["a", "b"])
    assert res.n_comparisons == 2 * 3 * 3
    assert res.tests == ("error", "(tpr, fpr)")
    p = np.asarray(res.pvalues)[:3, 1]  # first pair, three runs
    ta = np.stack([np.asarray(cv_clf.fold_scores("lda", s)) for s in ("tpr", "fpr")], -1)
    tb = np.stack([np.asarray(cv_clf.fold_scores("centroid", s)) for s in ("tpr", "fpr")], -1)
    np.testing.assert_allclose(p, np.asarray(hotelling_t2(ta, tb).pvalue), rtol=1e-9)
    assert np.all(np.isnan(np.asarray(res.normality_shapiro)[:, 1]))
    assert res.pairs[0] == "a: lda vs centroid"
    d = res.direction()
    assert d["first_only"] == int(res.counts[1, 0])


def test_agreement_regression_square_epsilon(cv_reg):
    res = study.agreement(
        cv_reg, "square_epsilon", loss_kwargs={"epsilon_insensitive": {"epsilon": 0.2}}
    )
    assert res.n_comparisons == 4
    assert res.tests == ("square", "epsilon_insensitive")
    la = np.asarray(cv_reg.fold_losses("ridge", "epsilon_insensitive", reduce="sum", epsilon=0.2))
    lb = np.asarray(
        cv_reg.fold_losses("ridge100", "epsilon_insensitive", reduce="sum", epsilon=0.2)
    )
    np.testing.assert_allclose(
        np.asarray(res.pvalues)[:, 1], stats.ttest_rel(la, lb, axis=-1).pvalue, rtol=1e-9
    )


# ----------------------------------------------------------------------------------------
# Reports, figures, validation
# ----------------------------------------------------------------------------------------


def test_tables_and_dicts(cv_clf):
    pw = study.power(["t"], "normal", n_experiments=400, m=20, effect=[0, 1], key=0)
    cal = study.calibration(["t"], "normal", n_experiments=400, m=20, key=0)
    ls = study.loss_study(n_experiments=400, m=20, effect=1.0, key=0)
    ag = study.agreement(cv_clf, "f1_precision_recall")
    for r, word in ((pw, "effect=1"), (cal, "type-I"), (ls, "|e|^0.5"), (ag, "(precision")):
        assert word in r.table()
        text = json.dumps(r.to_dict(), allow_nan=False)
        assert json.loads(text)["study"] in ("power", "calibration", "loss_study", "agreement")


def test_plots_return_figures_with_titles(cv_clf):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pw = study.power(["t", "sign"], "normal", n_experiments=400, m=20, effect=[0, 0.5, 1], key=0)
    cal = study.calibration(["t"], "normal", n_experiments=400, m=20, key=0)
    ag = study.agreement(cv_clf, "error_hinge")
    figs = [
        (study.plot_power(pw), "Power: normal(), m = 20"),
        (study.plot_calibration(cal), "p-value QQ plot under H0: normal(), m = 20"),
        (study.plot_agreement(ag), "Agreement: zero_one vs hinge"),
    ]
    for fig, title in figs:
        ax = fig.axes[0]
        assert ax.get_title() == title
        assert ax.lines or ax.images
        plt.close(fig)


def test_validation_messages(cv_clf, cv_reg):
    cases = [
        (lambda: study.power(["bogus"]), ValueError, r"`tests` must be one of"),
        (lambda: study.power(["hotelling"], "normal"), ValueError, r"needs a multivariate"),
        (lambda: study.power(["t", "t"]), ValueError, r"`tests` has duplicates"),
        (lambda: study.power([]), ValueError, r"`tests` is empty"),
        (lambda: study.power(["t"], 3), TypeError, r"`generator` must be a name"),
        # Issue 18.6: the argument is `generator` (it named `kind`, generator()'s).
        (lambda: study.power(["t"], "weird"), ValueError, r"`generator` must be one of"),
        (lambda: study.power(generator="gamma"), ValueError, r"`generator` must be one of"),
        (lambda: study.generator("weird"), ValueError, r"`kind` must be one of"),
        (lambda: study.power(["t"], m=2), ValueError, r"`m` must be at least 3"),
        (lambda: study.power(["t"], n_experiments=1.5), TypeError, r"`n_experiments` must be"),
        (lambda: study.power(["t"], effect=[]), ValueError, r"`effect` must be a non-empty"),
        (lambda: study.power(["t"], effect=None), TypeError, r"`effect` must be a real"),
        (lambda: study.power(["t"], alpha=1.5), ValueError, r"`alpha` must lie in"),
        (lambda: study.power(["t"], alternative="up"), ValueError, r"`alternative` must be"),
        (lambda: study.power(["t"], keep_pvalues=1), TypeError, r"`keep_pvalues` must be"),
        (
            lambda: study.power(["t"], "bernoulli", effect=0.5),
            ValueError,
            r"`effect`=0.5 is impossible",
        ),
        (
            lambda: study.power(["hotelling"], "mvnormal", alternative="less"),
            ValueError,
            r"'two-sided' with 'hotelling'",
        ),
        (lambda: study.power(["hotelling"], "mvnormal", m=3), ValueError, r"too small"),
        (lambda: study.generator("t", df=-1), ValueError, r"`df` must be finite"),
        # Issue 18.7: unit variance needs df > 2 (the variance df / (df - 2)).
        (lambda: study.generator("t", df=2), ValueError, r"`df` must be finite, > 2"),
        (lambda: study.generator("t", df=1), ValueError, r"`df` must be finite, > 2"),
        (lambda: study.generator("t", nu=3), TypeError, r"no parameter 'nu'"),
        (
            lambda: study.generator("mvnormal", weights=(1, 2, 3)),
            ValueError,
            r"`weights` has 3 entries",
        ),
        (lambda: study.generator("mvnormal", direction=(0, 0)), ValueError, r"zero vector"),
        (lambda: study.generator("mvnormal", rho=1.0), ValueError, r"`rho` must be < 1"),
        (lambda: study.from_data([1.0, 1.0]), ValueError, r"not all equal"),
        (lambda: study.from_data([1.0, np.nan]), ValueError, r"`differences` contains NaN"),
        (lambda: study.from_data([1.0, 2.0], centre=1), TypeError, r"`centre` must be a bool"),
        (lambda: study.calibration(["t"], flag_level=0), ValueError, r"`flag_level` must lie"),
        (lambda: study.loss_study(powers=(2, -1)), ValueError, r"`powers` must be positive"),
        (lambda: study.loss_study(effect=-1), ValueError, r"`effect` must be > -1"),
        (lambda: study.agreement(cv_clf, "nope"), ValueError, r"`tests` must be one of"),
        (lambda: study.agreement(cv_clf, ("zero_one",)), ValueError, r"exactly two"),
        (lambda: study.agreement(cv_clf, "square_epsilon"), ValueError, r"regression loss"),
        (lambda: study.agreement(cv_reg, "error_hinge"), ValueError, r"needs a classification"),
        (
            lambda: study.agreement(cv_reg, ("square", ("a", "b"))),
            ValueError,
            r"needs a classification",
        ),
        (lambda: study.agreement(cv_clf, ("error", ("tpr",))), ValueError, r"tuple of >= 2"),
        (lambda: study.agreement(cv_clf, models=["lda", "zz"]), ValueError, r"`models`: 'zz'"),
        (lambda: study.agreement(cv_clf, models=["lda"]), ValueError, r"at least 2 models"),
        (lambda: study.agreement(42), TypeError, r"`cv_result` must be a CVResult"),
        (lambda: study.agreement(cv_clf, names=["a", "b"]), ValueError, r"`names` must have"),
        (lambda: study.agreement(cv_clf, loss_kwargs=[1]), TypeError, r"`loss_kwargs` must"),
        (lambda: study.plot_power(3), TypeError, r"`res` must be a PowerResult"),
        (lambda: study.plot_calibration(3), TypeError, r"CalibrationResult"),
        (lambda: study.plot_agreement(3), TypeError, r"AgreementResult"),
    ]
    for fn, exc, pattern in cases:
        with pytest.raises(exc, match=pattern):
            fn()
