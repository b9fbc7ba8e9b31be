"""Bad-input battery (issue 18): every public parametric and permutation function meets NaN,
inf, empty arrays, wrong shapes and dtypes, and degenerate data (identical algorithms,
constant measures, singular covariance, tiny scales). Each case asserts either a clear
error that names the argument, or the right answer from an independent reference
(scipy, statsmodels, the algebra), named beside it.

The corrupted inputs keep one shape per function, so JAX compiles each kernel once;
most cases raise before anything is compiled.
"""

import warnings

import numpy as np
import pytest
import scipy.stats

import jaxtests as jt
from jaxtests import study

_RNG = np.random.default_rng(18)
A10 = _RNG.normal(0.8, 0.05, 10)
B10 = _RNG.normal(0.78, 0.05, 10)
A52 = _RNG.uniform(0.7, 0.9, (5, 2))
B52 = _RNG.uniform(0.7, 0.9, (5, 2))
HA = _RNG.normal(size=(10, 2)) + np.array([0.5, 0.0])
HB = _RNG.normal(size=(10, 2))
X35 = _RNG.normal(size=(3, 5)) + np.array([0.0, 0.5, 1.0])[:, None]
X352 = _RNG.normal(size=(3, 5, 2))
M12 = _RNG.normal(size=(12, 2))
PH = _RNG.normal(size=(3, 6))
PH3 = _RNG.normal(size=(3, 8, 2))
Y12 = np.array([1, -1] * 6)
PA12 = np.where(np.arange(12) % 5 == 0, -Y12, Y12)
PB12 = np.where(np.arange(12) % 3 == 0, -Y12, Y12)
D8 = _RNG.normal(0.2, 1.0, 8)
X5, Y4 = _RNG.normal(0.5, 1.0, 5), _RNG.normal(0.0, 1.0, 4)
P3 = np.array([0.01, 0.04, 0.2])
REJ = np.array([[False, True, False], [True, False, False], [False, False, False]])

# (function, positional arguments, keyword arguments, names of the float array arguments)
FLOAT_TARGETS = {
    "ttest_paired": (jt.ttest_paired, (A10, B10), {}, ("a", "b")),
    "ttest_paired_perm": (
        jt.ttest_paired,
        (A10, B10),
        {"method": "permutation", "key": 0},
        ("a", "b"),
    ),
    "ttest_5x2cv": (jt.ttest_5x2cv, (A52, B52), {}, ("a", "b")),
    "ftest_5x2cv": (jt.ftest_5x2cv, (A52, B52), {}, ("a", "b")),
    "ttest_corrected": (jt.ttest_corrected, (A10, B10), {"n_train": 90, "n_test": 10}, ("a", "b")),
    "hotelling_t2": (jt.hotelling_t2, (HA, HB), {}, ("a", "b")),
    "hotelling_t2_unpaired": (jt.hotelling_t2, (HA, HB), {"paired": False}, ("a", "b")),
    "anova": (jt.anova, (X35,), {}, ("x",)),
    "anova_blocked": (jt.anova, (X35,), {"blocked": True}, ("x",)),
    "manova": (jt.manova, (X352,), {}, ("x",)),
    "mardia": (jt.mardia, (M12,), {}, ("x",)),
    "posthoc": (jt.posthoc, (PH,), {}, ("x",)),
    "posthoc_hotelling": (jt.posthoc, (PH3,), {"test": "hotelling"}, ("x",)),
    "adjust_pvalues": (jt.adjust_pvalues, (P3,), {}, ("p",)),
    "hoeffding_interval": (jt.hoeffding_interval, (np.array([0.1, 0.2]), 100), {}, ("error",)),
    "signflip_test": (jt.signflip_test, (D8,), {}, ("d",)),
    "signflip_test_t": (jt.signflip_test, (D8,), {"statistic": "t"}, ("d",)),
    "signflip_test_hotelling": (
        jt.signflip_test,
        (HA - HB,),
        {"statistic": "hotelling", "n_resamples": 2000, "key": 0},
        ("d",),
    ),
    "permutation_test": (jt.permutation_test, (X5, Y4), {}, ("x", "y")),
}

LABEL_TARGETS = {
    "mcnemar": (jt.mcnemar, (Y12, PA12, PB12), {}, ("y_true", "pred_a", "pred_b")),
    "swap_test": (jt.swap_test, (Y12, PA12, PB12), {"measure": "accuracy"}, ("y_true",)),
}


def _corrupt(base, how):
    base = np.asarray(base)
    if how == "nan":
        out = base.astype(float).copy()
        out.flat[1] = np.nan
        return out, ValueError, "contains NaN at index"
    if how == "inf":
        out = base.astype(float).copy()
        out.flat[1] = -np.inf
        return out, ValueError, "contains inf at index"
    if how == "empty":
        return np.zeros((0,) * base.ndim), ValueError, ""
    if how == "scalar":
        return 1.0, ValueError, ""
    if how == "strings":
        return np.full(base.shape, "x"), TypeError, ""
    if how == "complex":
        return base.astype(complex), TypeError, ""
    if how == "ragged":
        return [[1.0, 2.0], [3.0]], TypeError, ""
    if how == "none":
        return None, TypeError, ""
    raise AssertionError(how)


CORRUPTIONS = ("nan", "inf", "empty", "scalar", "strings", "complex", "ragged", "none")


SCALAR_OK = {"hoeffding_interval"}  # a scalar error rate is valid input there


def _cases(targets, corruptions):
    return [
        pytest.param(fn, args, kwargs, i, name, how, id=f"{tname}-{name}-{how}")
        for tname, (fn, args, kwargs, names) in targets.items()
        for i, name in enumerate(names)
        for how in corruptions
        if not (how == "scalar" and tname in SCALAR_OK)
    ]


@pytest.mark.parametrize(
    ("fn", "args", "kwargs", "index", "name", "how"), _cases(FLOAT_TARGETS, CORRUPTIONS)
)
def test_float_argument_refused(fn, args, kwargs, index, name, how):
    bad, exc, pattern = _corrupt(args[index], how)
    args = (*args[:index], bad, *args[index + 1 :])
    with pytest.raises(exc, match=rf"`{name}`.*{pattern}" if pattern else rf"`{name}`"):
        fn(*args, **kwargs)


LABEL_CORRUPTIONS = ("nan", "inf", "empty", "scalar", "strings", "complex", "none")


@pytest.mark.parametrize(
    ("fn", "args", "kwargs", "index", "name", "how"), _cases(LABEL_TARGETS, LABEL_CORRUPTIONS)
)
def test_label_argument_refused(fn, args, kwargs, index, name, how):
    bad, exc, pattern = _corrupt(args[index], how)
    args = (*args[:index], bad, *args[index + 1 :])
    with pytest.raises(exc, match=rf"`{name}`.*{pattern}" if pattern else rf"`{name}`"):
        fn(*args, **kwargs)


# ----------------------------------------------------------------------------------------
# Wrong shapes, options and values: (call, exception, message)
# ----------------------------------------------------------------------------------------

ERRORS = {
    "ttest_paired-shape": (
        lambda: jt.ttest_paired(A10, B10[:9]),
        ValueError,
        "`a` and `b` must have the same shape",
    ),
    "ttest_paired-one": (
        lambda: jt.ttest_paired(A10[:1], B10[:1]),
        ValueError,
        "at least 2 paired",
    ),
    "ttest_paired-axis": (
        lambda: jt.ttest_paired(A10, B10, axis=1),
        ValueError,
        "`axis`=1 is out of range",
    ),
    "ttest_paired-alternative": (
        lambda: jt.ttest_paired(A10, B10, alternative="bigger"),
        ValueError,
        "`alternative`",
    ),
    "ttest_paired-key": (lambda: jt.ttest_paired(A10, B10, key="k"), TypeError, "`key`"),
    "ttest_5x2cv-shape": (lambda: jt.ttest_5x2cv(A10, B10), ValueError, "`a` must have at least 2"),
    "ttest_5x2cv-shape2": (
        lambda: jt.ttest_5x2cv(A10[:9].reshape(3, 3), B10[:9].reshape(3, 3)),
        ValueError,
        r"`a` and `b` must end in shape \(5, 2\)",
    ),
    "ftest_5x2cv-shape": (lambda: jt.ftest_5x2cv(A52.T, B52.T), ValueError, r"\(5, 2\)"),
    "ttest_corrected-n_train": (
        lambda: jt.ttest_corrected(A10, B10, n_train=0, n_test=1),
        ValueError,
        "`n_train`",
    ),
    "ttest_corrected-n_test": (
        lambda: jt.ttest_corrected(A10, B10, n_train=9, n_test=1.5),
        TypeError,
        "`n_test`",
    ),
    "mcnemar-scores": (
        lambda: jt.mcnemar(Y12, PA12 * 0.7, PB12),
        ValueError,
        "`pred_a` must hold class labels",
    ),
    "mcnemar-shape": (lambda: jt.mcnemar(Y12, PA12[:5], PB12), ValueError, "`y_true` and `pred_a`"),
    "mcnemar-method": (lambda: jt.mcnemar(Y12, PA12, PB12, method="z"), ValueError, "`method`"),
    "hotelling-singular": (
        lambda: jt.hotelling_t2(np.c_[A10, A10], np.c_[B10, B10]),
        ValueError,
        "singular",
    ),
    "hotelling-constant": (
        lambda: jt.hotelling_t2(np.c_[A10, np.ones(10)], np.c_[B10, np.ones(10)]),
        ValueError,
        "singular",
    ),
    "hotelling-few": (
        lambda: jt.hotelling_t2(HA[:2], HB[:2]),
        ValueError,
        "more folds than measures",
    ),
    "hotelling-1d": (lambda: jt.hotelling_t2(A10, B10), ValueError, "`a` must have at least 2"),
    "hotelling-names": (
        lambda: jt.hotelling_t2(HA, HB, names=["x"]),
        ValueError,
        "`names` must have 2",
    ),
    "hotelling-less": (lambda: jt.hotelling_t2(HA, HB, paired="yes"), TypeError, "`paired`"),
    "anova-one-group": (lambda: jt.anova(X35[:1]), ValueError, "at least 2 algorithms"),
    "anova-blocked": (lambda: jt.anova(X35, blocked=1), TypeError, "`blocked`"),
    "manova-singular": (
        lambda: jt.manova(np.stack([X352[..., 0]] * 2, -1)),
        ValueError,
        "singular",
    ),
    "manova-few": (lambda: jt.manova(X352[:, :1]), ValueError, "at least 2 folds"),
    "mardia-singular": (lambda: jt.mardia(np.c_[M12[:, 0], M12[:, 0]]), ValueError, "singular"),
    "mardia-few": (lambda: jt.mardia(M12[:2]), ValueError, "n > p"),
    "posthoc-shape": (lambda: jt.posthoc(PH3), ValueError, r"`x` must have shape \(L, k\)"),
    "posthoc-singular": (
        lambda: jt.posthoc(np.stack([PH, PH], -1), test="hotelling"),
        ValueError,
        "singular",
    ),
    "posthoc-alpha": (lambda: jt.posthoc(PH, alpha=2), ValueError, "`alpha`"),
    "posthoc-names": (
        lambda: jt.posthoc(PH, names=["a", "a", "b"]),
        ValueError,
        "`names` must be distinct",
    ),
    "cliques-square": (
        lambda: jt.cliques(np.zeros((2, 3), bool)),
        ValueError,
        "`reject` must be a square",
    ),
    "cliques-dtype": (
        lambda: jt.cliques(np.zeros((3, 3))),
        TypeError,
        "`reject` must be a boolean",
    ),
    "cliques-asymmetric": (
        lambda: jt.cliques(np.triu(np.ones((3, 3), bool), 1)),
        ValueError,
        "symmetric",
    ),
    "ordering-nan": (
        lambda: jt.ordering([0.1, np.nan, 0.3], REJ),
        ValueError,
        "`means` contains NaN",
    ),
    "ordering-inf": (
        lambda: jt.ordering([0.1, 0.2, np.inf], REJ),
        ValueError,
        "`means` contains inf",
    ),
    "ordering-strings": (lambda: jt.ordering(["a", "b", "c"], REJ), TypeError, "`means`"),
    "ordering-shape": (lambda: jt.ordering([0.1, 0.2], REJ), ValueError, "`means` must have shape"),
    "adjust-range": (
        lambda: jt.adjust_pvalues([0.1, 1.5]),
        ValueError,
        "`p` must hold probabilities",
    ),
    "adjust-method": (lambda: jt.adjust_pvalues(P3, "sidak2"), ValueError, "`method`"),
    "clopper-k-gt-n": (lambda: jt.clopper_pearson(5, 3), ValueError, "`k` must not exceed `n`"),
    "clopper-negative": (lambda: jt.clopper_pearson(-1, 3), ValueError, "`k` must be non-negative"),
    "clopper-fraction": (
        lambda: jt.clopper_pearson(1.5, 3),
        TypeError,
        "`k` must hold whole numbers",
    ),
    "clopper-nan": (lambda: jt.clopper_pearson(np.nan, 3), (TypeError, ValueError), "`k`"),
    "clopper-n0": (lambda: jt.clopper_pearson(0, 0), ValueError, "`n` must be at least 1"),
    "clopper-level": (
        lambda: jt.clopper_pearson(1, 3, confidence_level=1.0),
        ValueError,
        "`confidence_level`",
    ),
    "hoeffding-range": (lambda: jt.hoeffding_interval(1.5, 10), ValueError, "`error` must lie in"),
    "hoeffding-m": (lambda: jt.hoeffding_interval(0.1, 0), ValueError, "`m` must be at least 1"),
    "hoeffding-m-float": (
        lambda: jt.hoeffding_interval(0.1, 2.5),
        TypeError,
        "`m` must hold integers",
    ),
    "sample-size-zero": (
        lambda: jt.hoeffding_sample_size(0.0),
        ValueError,
        "`epsilon` must lie in",
    ),
    "sample-size-nan": (lambda: jt.hoeffding_sample_size(np.nan), ValueError, "`epsilon`"),
    "sample-size-string": (lambda: jt.hoeffding_sample_size("a"), TypeError, "`epsilon`"),
    "sample-size-tiny": (
        lambda: jt.hoeffding_sample_size(1e-200),
        ValueError,
        "`epsilon` is too small",
    ),
    "sample-size-array-overflow": (
        lambda: jt.hoeffding_sample_size([0.1, 4e-10]),
        ValueError,
        "int64",
    ),
    "signflip-hotelling-singular": (
        lambda: jt.signflip_test(np.c_[D8, D8], statistic="hotelling", n_resamples=100, key=0),
        ValueError,
        "covariance of `d` is singular",
    ),
    "signflip-hotelling-few": (
        lambda: jt.signflip_test(HA[:2] - HB[:2], statistic="hotelling", key=0),
        ValueError,
        "`d` has 2 rows for 2 measures",
    ),
    "signflip-statistic": (
        lambda: jt.signflip_test(D8, statistic="median"),
        ValueError,
        "`statistic`",
    ),
    "signflip-one": (lambda: jt.signflip_test(D8[:1]), ValueError, "`d` needs at least 2"),
    "signflip-binomial": (lambda: jt.signflip_test(D8, method="binomial"), ValueError, "binomial"),
    "signflip-n_resamples": (
        lambda: jt.signflip_test(D8, n_resamples=0),
        ValueError,
        "`n_resamples`",
    ),
    "permutation-shape": (lambda: jt.permutation_test(PH, X5), ValueError, "`x` and `y`"),
    "permutation-statistic": (
        lambda: jt.permutation_test(X5, Y4, statistic="t2"),
        ValueError,
        "`statistic`",
    ),
    "swap-measure": (
        lambda: jt.swap_test(Y12, PA12, PB12, measure="kappa"),
        ValueError,
        "`measure`",
    ),
    "swap-labels": (lambda: jt.swap_test(Y12 + 2, PA12, PB12), ValueError, "`y_true`"),
    "generator-df2": (lambda: study.generator("t", df=2), ValueError, "`df` must be finite, > 2"),
    "generator-df1": (lambda: study.generator("t", df=1.0), ValueError, "`df` must be finite, > 2"),
    "power-generator": (
        lambda: study.power(generator="gamma"),
        ValueError,
        "`generator` must be one of",
    ),
}


@pytest.mark.parametrize("case", list(ERRORS), ids=list(ERRORS))
def test_error_names_the_argument(case):
    fn, exc, pattern = ERRORS[case]
    with pytest.raises(exc, match=pattern):
        fn()


def test_permutation_test_score_progress_must_be_callable():
    # Issue 18.6: progress=1 failed deep inside with "'int' object is not callable".
    from jaxtests import models

    X = _RNG.normal(size=(20, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(TypeError, match="`progress` must be a callable"):
        jt.permutation_test_score(models.lda(), X, y, cv=2, n_permutations=3, progress=1)


# ----------------------------------------------------------------------------------------
# Degenerate data with a right answer: (call, check)
# ----------------------------------------------------------------------------------------

F10 = _RNG.normal(0.8, 0.05, 10)
CONST_D = np.full(10, 0.1)
CONST_D[::3] = np.nextafter(0.1, 1.0)  # a constant up to one ulp: rounding residue
SUBNORMAL = np.array([1e-320, -1e-320, 2e-320, 3e-320, 1e-320])


def _nan(res):
    return np.isnan(res.statistic) and np.isnan(res.pvalue)


def _scipy_rel(a, b):
    return scipy.stats.ttest_rel(a, b)


ANSWERS = {
    # scipy 1.17 ttest_rel(f, f): nan, nan.
    "ttest_paired-identical": (lambda: jt.ttest_paired(F10, F10), _nan),
    # scipy 1.17 ttest_rel on an exactly constant difference: inf, 0.
    "ttest_paired-constant": (
        lambda: jt.ttest_paired(CONST_D, np.zeros(10)),
        lambda r: np.isposinf(r.statistic) and float(r.pvalue) == 0.0,
    ),
    "ttest_corrected-identical": (lambda: jt.ttest_corrected(F10, F10, n_train=9, n_test=1), _nan),
    "ttest_5x2cv-identical": (lambda: jt.ttest_5x2cv(A52, A52), _nan),
    "ftest_5x2cv-identical": (lambda: jt.ftest_5x2cv(A52, A52), _nan),
    # Issue 18.14; scipy 1.17 ttest_rel on the unscaled data.
    "ttest_paired-1e-160": (
        lambda: jt.ttest_paired(A10 * 1e-160, B10 * 1e-160),
        lambda r: np.isclose(float(r.pvalue), _scipy_rel(A10, B10).pvalue, rtol=1e-12),
    ),
    # Identical algorithms: SS_alg = 0 exactly, F = 0, p = 1 (issue 18.1; AnovaRM 0, 1).
    "anova_blocked-identical": (
        lambda: jt.anova(np.tile(F10, (3, 1)), blocked=True),
        lambda r: float(r.statistic) == 0.0 and float(r.pvalue) == 1.0,
    ),
    "anova-identical": (
        lambda: jt.anova(np.tile(F10, (3, 1))),
        lambda r: float(r.statistic) == 0.0 and float(r.pvalue) == 1.0,
    ),
    # scipy 1.17 f_oneway on constant data: nan; statsmodels AnovaRM: F = 0, p = 1.
    "anova-constant": (lambda: jt.anova(np.full((3, 5), 0.3)), _nan),
    "anova_blocked-constant": (
        lambda: jt.anova(np.full((3, 5), 0.3), blocked=True),
        lambda r: float(r.statistic) == 0.0 and float(r.pvalue) == 1.0,
    ),
    # scipy 1.17 f_oneway([1, 1], [2, 2]): inf, 0.
    "anova-constant-groups": (
        lambda: jt.anova(np.array([[1.0, 1.0], [2.0, 2.0]])),
        lambda r: np.isposinf(r.statistic) and float(r.pvalue) == 0.0,
    ),
    # H = 0: Wilks' Lambda = |E| / |E + H| = 1, p = 1.
    "manova-identical": (
        lambda: jt.manova(np.stack([X352[0]] * 3)),
        lambda r: float(r.statistic) == 1.0 and float(r.pvalue) == 1.0,
    ),
    # statsmodels mcnemar(table with no discordant pair, exact=True): p = 1.
    "mcnemar-identical": (
        lambda: jt.mcnemar(Y12, PA12, PA12),
        lambda r: float(r.pvalue) == 1.0 and float(r.statistic) == 0.0,
    ),
    # Issue 18.3: y in ±1, predictions in {0, 1}, read as ±1 (statsmodels on ±1: below).
    "mcnemar-01-predictions": (
        lambda: jt.mcnemar(Y12, (PA12 + 1) // 2, (PB12 + 1) // 2),
        lambda r: float(r.pvalue) == float(jt.mcnemar(Y12, PA12, PB12).pvalue),
    ),
    "mcnemar-bool-labels": (
        lambda: jt.mcnemar(Y12 > 0, PA12, PB12),
        lambda r: float(r.pvalue) == float(jt.mcnemar(Y12, PA12, PB12).pvalue),
    ),
    # scipy.stats.permutation_test on all-zero differences: p = 1.
    "signflip-zeros": (lambda: jt.signflip_test(np.zeros(8)), lambda r: float(r.pvalue) == 1.0),
    # Issue 18.14: scipy 1.17 permutation_test(..., permutation_type="samples"): 0.25.
    "signflip-subnormal": (
        lambda: jt.signflip_test(SUBNORMAL, method="exact"),
        lambda r: float(r.pvalue) == 0.25 and float(r.statistic) == np.mean(SUBNORMAL),
    ),
    "permutation-identical": (
        lambda: jt.permutation_test(np.ones(4), np.ones(4)),
        lambda r: float(r.pvalue) == 1.0,
    ),
    "swap-identical": (
        lambda: jt.swap_test(Y12, PA12, PA12, measure="accuracy"),
        lambda r: float(r.pvalue) == 1.0,
    ),
    # Issue 18.7: math.ceil(log(2 / (1 - 0.95)) / (2 * 4e-10**2)), an exact Python int.
    "sample-size-large": (
        lambda: jt.hoeffding_sample_size(4e-10),
        lambda m: isinstance(m, int) and m == 11527748294106046464,
    ),
}


@pytest.mark.parametrize("case", list(ANSWERS), ids=list(ANSWERS))
def test_degenerate_right_answer(case):
    fn, check = ANSWERS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the zero-variance notes
        out = fn()
    assert check(out)
