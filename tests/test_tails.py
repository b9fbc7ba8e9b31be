"""Issue 37: the tails of the reference distributions run on the host (scipy.special) for
concrete statistics and traced (jax.scipy) under the caller's jit, in the same forms: both
give the same p-values, exact against closed forms."""

import jax
import numpy as np
import pytest

import jaxtests
from jaxtests import _tails

RNG = np.random.default_rng(37)
A, B = RNG.normal(0.8, 0.02, size=(2, 3, 10))  # three tests of ten folds
FIVE = RNG.normal(0.8, 0.02, size=(2, 3, 5, 2))
X, Y = RNG.normal(size=(2, 3, 10, 2)) + np.array([0.0, 0.3])[:, None, None, None]
G = RNG.normal(size=(3, 4, 8)) + np.arange(4)[:, None] * 0.3  # 3 tables of 4 algorithms
Y_TRUE = RNG.integers(0, 2, size=(3, 60))
PRED = [np.where(RNG.random((3, 60)) < q, Y_TRUE, 1 - Y_TRUE) for q in (0.8, 0.65)]

# Every public function with both paths: the p-value fields that come from a tail.
CASES = {
    "ttest_paired": (lambda a, b: jaxtests.ttest_paired(a, b), (A, B), ("pvalue",)),
    "ttest_paired less": (
        lambda a, b: jaxtests.ttest_paired(a, b, alternative="less"),
        (A, B),
        ("pvalue",),
    ),
    "ttest_paired greater": (
        lambda a, b: jaxtests.ttest_paired(a, b, alternative="greater"),
        (A, B),
        ("pvalue",),
    ),
    "ttest_corrected": (
        lambda a, b: jaxtests.ttest_corrected(a, b, n_train=90, n_test=10),
        (A, B),
        ("pvalue",),
    ),
    "ttest_5x2cv": (lambda a, b: jaxtests.ttest_5x2cv(a, b), FIVE, ("pvalue",)),
    "ftest_5x2cv": (lambda a, b: jaxtests.ftest_5x2cv(a, b), FIVE, ("pvalue",)),
    "anova": (lambda g: jaxtests.anova(g), (G,), ("pvalue",)),
    "anova blocked": (lambda g: jaxtests.anova(g, blocked=True), (G,), ("pvalue",)),
    "manova": (
        lambda x: jaxtests.manova(x),
        (RNG.normal(size=(3, 6, 2)) + np.array([0.0, 0.4, 0.8])[:, None, None],),
        ("pvalue", "bartlett_pvalue", "pillai_pvalue", "hotelling_lawley_pvalue", "roy_pvalue"),
    ),
    "hotelling_t2": (
        lambda x, y: jaxtests.hotelling_t2(x, y),
        (X, Y),
        ("pvalue", "univariate_pvalue", "univariate_pvalue_adjusted"),
    ),
    "hotelling_t2 two-sample": (
        lambda x, y: jaxtests.hotelling_t2(x, y, paired=False, correction="hommel"),
        (X, Y[:, :8]),
        ("pvalue", "univariate_pvalue", "univariate_pvalue_adjusted"),
    ),
    "mardia": (
        lambda x: jaxtests.mardia(x),
        (RNG.normal(size=(3, 30, 2)),),
        ("skewness_pvalue", "kurtosis_pvalue"),
    ),
    **{
        f"mcnemar {m}": (
            lambda y, a, b, m=m: jaxtests.mcnemar(y, a, b, method=m),
            (Y_TRUE, *PRED),
            ("pvalue",),
        )
        for m in ("exact", "midp", "chi2")
    },
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_and_traced_paths_agree(name):
    fn, args, fields = CASES[name]
    eager = fn(*args)
    traced = jax.jit(fn)(*args)
    for field in fields:
        e, t = np.asarray(getattr(eager, field)), np.asarray(getattr(traced, field))
        assert np.all((e > 1e-12) & (e <= 1)), (field, e)  # ordinary p-values, compared
        np.testing.assert_allclose(t, e, rtol=1e-12, atol=0, err_msg=field)


def _both(fn, *args):
    return fn(*args), np.asarray(jax.jit(fn)(*args))


def test_tails_agree_with_the_traced_forms_on_a_grid():
    # p-values from 1 down to about 1e-200: relative agreement 1e-12 (measured up to 4e-13)
    t = np.array([-3.0, -0.5, 0.0, 1e-8, 0.3, 1.0, 2.0, 5.0, 10.0, 40.0])
    for df in (4.0, 9.0, 29.0, 199.0):
        for alt in ("two-sided", "greater", "less"):
            host, traced = _both(lambda t, df=df, alt=alt: _tails.t_pvalue(t, df, alt), t)
            np.testing.assert_allclose(traced, host, rtol=1e-12, atol=0)
    f = np.array([0.0, 1e-6, 0.5, 1.0, 3.0, 10.0, 100.0, 1e4])
    for dfn, dfd in ((1, 1), (2, 7), (10, 5), (3, 100), (50, 2000)):
        host, traced = _both(lambda f, a=dfn, b=dfd: _tails.f_sf(f, a, b), f)
        np.testing.assert_allclose(traced, host, rtol=1e-12, atol=0)
    x = np.array([0.0, 1e-6, 0.5, 1.0, 3.0, 10.0, 100.0, 1e3])
    for df in (1, 2, 5, 20, 300):
        host, traced = _both(lambda x, df=df: _tails.chi2_sf(x, df), x)
        np.testing.assert_allclose(traced, host, rtol=1e-12, atol=0)
    z = np.array([-5.0, -1.0, 0.0, 1.0, 5.0, 20.0, 37.0])
    np.testing.assert_allclose(*_both(_tails.norm_sf, z)[::-1], rtol=1e-12, atol=0)
    k = np.arange(-1.0, 62.0)
    for n in (1.0, 50.0, 61.0):
        cdf = _both(lambda k, n=n: _tails.binom_cdf(k, n, 0.5), k)
        np.testing.assert_allclose(cdf[1], cdf[0], rtol=1e-12, atol=0)
        kk = k[(k >= 0) & (k <= n)]
        pmf = _both(lambda k, n=n: _tails.binom_pmf(k, n, 0.5), kk)
        np.testing.assert_allclose(pmf[1], pmf[0], rtol=1e-12, atol=0)
    # edges: NaN stays NaN, inf gives 0 (both paths)
    edge = np.array([np.nan, np.inf])
    for fn in (lambda v: _tails.t_pvalue(v, 9.0, "two-sided"), lambda v: _tails.f_sf(v, 2, 7)):
        host, traced = _both(fn, edge)
        np.testing.assert_array_equal(host, [np.nan, 0.0])
        np.testing.assert_array_equal(traced, [np.nan, 0.0])


def test_host_tails_are_exact_where_the_traced_forms_lose_digits():
    # Closed forms: Student t with 1 df (Cauchy): P(|T| > t) = 2 atan(1/t) / pi; with 2 df:
    # 1 - t / sqrt(2 + t^2) = 2 / (sqrt(2 + t^2) (sqrt(2 + t^2) + t)); chi-square with 2 df:
    # exp(-x/2); F(2, 2): 1 / (1 + f); binomial(n, 1/2): P(X <= 0) = 2^-n.
    t = np.array([1e-8, 0.3, 1.0, 10.0, 1e3, 1e10])
    cauchy = 2 * np.arctan(1 / t) / np.pi
    np.testing.assert_allclose(_tails.t_pvalue(t, 1, "two-sided"), cauchy, rtol=1e-15)
    s = np.sqrt(2 + t * t)
    np.testing.assert_allclose(_tails.t_pvalue(t, 2, "two-sided"), 2 / (s * (s + t)), rtol=1e-14)
    x = np.array([0.5, 10.0, 500.0, 1400.0])
    np.testing.assert_allclose(_tails.chi2_sf(x, 2), np.exp(-x / 2), rtol=1e-13)
    f = np.array([1e-9, 0.5, 10.0, 1e8])
    np.testing.assert_allclose(_tails.f_sf(f, 2, 2), 1 / (1 + f), rtol=1e-14)
    np.testing.assert_allclose(_tails.binom_cdf(0.0, 1000.0, 0.5), 2.0**-1000, rtol=1e-13)
    # scipy.special.stdtr is 1.6e-9 off near p = 1 (df = 1, t = 1e-8): the mirrored
    # betainc form here is not
    from scipy import special

    assert abs(2 * special.stdtr(1, -1e-8) / cauchy[0] - 1) > 1e-9


def test_eager_p_values_are_scipys():
    # scipy.stats.ttest_rel and f_oneway to a few ulps (their statistics are computed in
    # another order, their tails by stdtr and fdtrc)
    from scipy import stats

    r = jaxtests.ttest_paired(A, B)
    np.testing.assert_allclose(r.pvalue, stats.ttest_rel(A, B, axis=-1).pvalue, rtol=1e-15)
    f = jaxtests.anova(G)
    np.testing.assert_allclose(f.pvalue, stats.f_oneway(*np.moveaxis(G, 1, 0), axis=-1).pvalue,
                               rtol=1e-13)  # fmt: skip
