"""swap_test: exact enumeration of swaps vs numpy, count path vs generic path."""

import itertools

import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.metrics import f1_score, matthews_corrcoef, roc_auc_score

from jaxtests._permutation import swap_test

Y = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1])
A = np.array([1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1])
B = np.array([0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0])


def _enumerate(y, a, b, fn):
    """Every swap of the differing instances in numpy (2^m patterns); scipy's conventions."""
    idx = np.flatnonzero(a != b)
    obs = fn(y, a) - fn(y, b)
    null = []
    for s in itertools.product([0, 1], repeat=idx.size):
        aa, bb = a.copy(), b.copy()
        sw = idx[np.array(s, bool)]
        aa[sw], bb[sw] = b[sw], a[sw]
        null.append(fn(y, aa) - fn(y, bb))
    null = np.array(null)
    ge = np.mean(null >= obs - 1e-12)
    le = np.mean(null <= obs + 1e-12)
    return obs, min(1.0, 2 * min(ge, le))


def test_f1_exact_equals_enumeration_with_sklearn():
    obs, p = _enumerate(Y, A, B, lambda y, p: f1_score(y, p, zero_division=0))
    r = swap_test(Y, A, B)
    assert r.method == "exact"
    np.testing.assert_allclose(r.statistic, obs, rtol=1e-12)
    np.testing.assert_allclose(r.pvalue, p, rtol=1e-12)


def test_macro_f1_and_auc_exact():
    y = np.array([0, 1, 2, 2, 1, 0, 1, 2, 0])
    a = np.array([0, 1, 2, 1, 1, 0, 2, 2, 0])
    b = np.array([0, 2, 2, 1, 0, 0, 1, 2, 1])
    macro = lambda t, p: f1_score(t, p, average="macro", zero_division=0)  # noqa: E731
    obs, p = _enumerate(y, a, b, macro)
    r = swap_test(y, a, b, measure="macro_f1")
    np.testing.assert_allclose([r.statistic, r.pvalue], [obs, p], rtol=1e-12)
    rng = np.random.default_rng(0)
    yy = rng.integers(0, 2, 10)
    sa = rng.normal(yy, 1.0)
    sb = rng.normal(yy * 0.3, 1.0)
    obs, p = _enumerate(yy, sa, sb, roc_auc_score)
    r = swap_test(yy, sa, sb, measure="auc")
    np.testing.assert_allclose([r.statistic, r.pvalue], [obs, p], rtol=1e-12)


def test_mcc_exact_equals_enumeration_with_sklearn():
    # Reference: scikit-learn's matthews_corrcoef on every swap (_enumerate), binary labels
    # and class indices; a swap where one model predicts one class scores 0 there (0/0).
    for y, a, b in ((Y, A, B), MACRO_CASES[0]):
        y, a, b = (np.asarray(v) for v in (y, a, b))
        obs, p = _enumerate(y, a, b, matthews_corrcoef)
        r = swap_test(y, a, b, measure="mcc", method="exact")
        np.testing.assert_allclose([r.statistic, r.pvalue], [obs, p], rtol=1e-12, atol=1e-15)


def test_monte_carlo_count_path_equals_generic_path_distribution():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    a = np.where(rng.random(300) < 0.85, y, 1 - y)
    b = np.where(rng.random(300) < 0.8, y, 1 - y)
    r = swap_test(y, a, b, n_resamples=20_000, key=4)
    f1 = lambda t, p: 2 * jnp.sum((t > 0) & (p > 0)) / (jnp.sum(t > 0) + jnp.sum(p > 0))  # noqa: E731
    g = swap_test(y, a, b, measure=f1, n_resamples=20_000, key=4)
    np.testing.assert_allclose(r.statistic, g.statistic, rtol=1e-12)
    lo, hi = np.asarray(r.pvalue_interval)
    assert lo <= float(g.pvalue) <= hi  # both estimate the same p (99% interval, fixed keys)


@pytest.mark.slow
def test_calibration_under_null():
    rng = np.random.default_rng(3)
    rates = []
    for i in range(60):
        y = rng.integers(0, 2, 60)
        a = np.where(rng.random(60) < 0.8, y, 1 - y)
        b = np.where(rng.random(60) < 0.8, y, 1 - y)
        rates.append(
            float(swap_test(y, a, b, n_resamples=199, key=i, method="monte-carlo").pvalue) <= 0.1
        )
    assert np.mean(rates) <= 0.1 + 3 * np.sqrt(0.09 / 60)


def test_validation_messages():
    with pytest.raises(ValueError, match="`pred_b` must have the same shape"):
        swap_test(Y, A, B[:-1])
    with pytest.raises(ValueError, match="`measure` must be one of"):
        swap_test(Y, A, B, measure="kappa")
    with pytest.raises(ValueError, match="`beta` must be a positive number"):
        swap_test(Y, A, B, measure="f_beta", beta=0)
    with pytest.raises(ValueError, match="binary labels"):
        swap_test(Y * 3, A, B)
    with pytest.raises(ValueError, match="`y_true` contains NaN"):
        swap_test(np.where(Y > 0, np.nan, 0.0), A, B)


def test_auc_ties_at_zero_are_ties():
    # Issue 13, item 13: observed AUC difference 0; some swaps give -4.16e-17, a tie in
    # exact arithmetic. The enumeration of all 256 swaps with sklearn's roc_auc_score
    # (tolerance 1e-12) gives 0.625 ("greater") and 1.0 (two-sided); before: 0.375, 0.75.
    y = np.array([0, 0, 0, 0, 1, 1, 1, 0])
    sa = np.array([1.55, 0.55, -0.51, -0.18, 1.54, 2.94, 0.73, -0.24])
    sb = np.array([1.00, -0.89, -0.29, 0.88, 1.08, 0.59, 1.17, -2.83])
    obs, p2 = _enumerate(y, sa, sb, roc_auc_score)
    assert obs == 0.0 and p2 == 1.0
    assert float(swap_test(y, sa, sb, measure="auc").pvalue) == 1.0
    r = swap_test(y, sa, sb, measure="auc", alternative="greater")
    assert float(r.pvalue) == 0.625


def _sk_macro(metric):
    # scikit-learn's macro average with labels=None: the classes in y_true or y_pred.
    return lambda t, p: metric(t, p, average="macro", zero_division=0)


MACRO_CASES = [
    # Issue 29, item 4: class 2 is predicted once by A only, so it occurs in A's
    # predictions (and in B* on the swaps that move it) but never in y_true. scikit-learn's
    # difference is -0.2286; averaging over all three classes gave +0.0476.
    ([0, 1, 1, 0, 1, 0], [0, 1, 2, 0, 1, 0], [0, 1, 1, 0, 0, 0]),
    # Class 3 only in y_true (never predicted), class 0 only in B's predictions.
    ([1, 2, 3, 1, 2, 2, 3, 1], [1, 2, 1, 1, 2, 2, 2, 1], [0, 2, 1, 1, 0, 2, 2, 2]),
    # One class in y_true: macro F1 over {0} and whatever each prediction adds.
    ([0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]),
]


@pytest.mark.parametrize("case", range(len(MACRO_CASES)))
def test_macro_f1_is_sklearns_on_every_swap(case):
    # Reference: scikit-learn's f1_score(average="macro") of each swapped prediction
    # vector, all 2^m swaps enumerated (_enumerate): the statistic and the exact p-value.
    y, a, b = (np.asarray(v) for v in MACRO_CASES[case])
    obs, p = _enumerate(y, a, b, _sk_macro(f1_score))
    r = swap_test(y, a, b, measure="macro_f1", method="exact")
    np.testing.assert_allclose([r.statistic, r.pvalue], [obs, p], rtol=1e-12, atol=1e-15)


def test_macro_f1_monte_carlo_draws_are_sklearns_values():
    # Every Monte Carlo draw is scikit-learn's difference on some swap: its null values lie
    # in the set of the 2^m enumerated ones (reference: _enumerate's swaps with sklearn).
    y, a, b = (np.asarray(v) for v in MACRO_CASES[1])
    idx = np.flatnonzero(a != b)
    values = []
    for s in itertools.product([0, 1], repeat=idx.size):
        aa, bb = a.copy(), b.copy()
        sw = idx[np.array(s, bool)]
        aa[sw], bb[sw] = b[sw], a[sw]
        values.append(f1_score(y, aa, average="macro") - f1_score(y, bb, average="macro"))
    r = swap_test(
        y, a, b, measure="macro_f1", method="monte-carlo", n_resamples=500, key=1, return_null=True
    )
    null = np.asarray(r.null_distribution)
    dist = np.min(np.abs(null[:, None] - np.asarray(values)[None, :]), axis=1)
    assert np.max(dist) < 1e-12


def test_macro_averages_leave_out_classes_that_never_occur():
    # measures.precision/recall/f1(cm, average="macro") against scikit-learn's with
    # labels=None, for each zero_division: class 4 occurs nowhere (a zero row and column of
    # the 6 x 6 matrix), class 5 is predicted only, class 3 is true only.
    from sklearn.metrics import precision_score, recall_score

    from jaxtests import measures as M

    yt = np.array([0, 1, 2, 3, 0, 1, 2, 3, 1, 2])
    yp = np.array([0, 1, 2, 1, 0, 5, 2, 0, 1, 1])
    cm = M.confusion_matrix(yt, yp, n_classes=6)
    for z in (0.0, 1.0, np.nan):
        for ours, ref in (
            (M.precision, precision_score),
            (M.recall, recall_score),
            (M.f1, f1_score),
        ):
            want = ref(yt, yp, average="macro", zero_division=z)
            np.testing.assert_allclose(float(ours(cm, average="macro", zero_division=z)), want)


def _fold_auc(folds):
    # Reference: scikit-learn's roc_auc_score on each fold, averaged over the folds.
    return lambda t, s: np.mean([roc_auc_score(t[folds == k], s[folds == k]) for k in set(folds)])


def test_auc_with_folds_is_the_mean_per_fold_auc():
    # Issue 29, item 5: scores of different fold models live on different scales (fold 2's
    # are shifted by 5), so a pooled AUC mixes them. With `folds`, the statistic is the
    # mean per-fold AUC difference and every swap is scored the same way: all 2^10 swaps
    # enumerated with scikit-learn (_enumerate) give the exact p-value.
    rng = np.random.default_rng(2)
    folds = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
    y = np.array([1, 0, 1, 0, 1, 0, 0, 1, 0, 1])
    sa = rng.normal(y, 1.0) + 5.0 * (folds == 2)
    sb = rng.normal(0.5 * y, 1.0) - 5.0 * (folds == 2)
    sb[0] = sa[0] + 0.0  # a tie between the two models' scores (counted 1/2 within its fold)
    obs, p = _enumerate(y, sa, sb, _fold_auc(folds))
    r = swap_test(y, sa, sb, measure="auc", folds=folds, method="exact")
    np.testing.assert_allclose([r.statistic, r.pvalue], [obs, p], rtol=1e-12, atol=1e-15)
    pooled = roc_auc_score(y, sa) - roc_auc_score(y, sb)
    assert abs(pooled - obs) > 0.05  # the data tell the two statistics apart
    # String fold labels, and Monte Carlo draws of the same statistic.
    names = np.array(["x", "y", "z"])[folds]
    r = swap_test(y, sa, sb, measure="auc", folds=names, n_resamples=300, key=0)
    np.testing.assert_allclose(r.statistic, obs, rtol=1e-12)


def test_folds_validation():
    y, s = np.array([1, 0, 1, 0, 1, 0]), np.arange(6.0)
    with pytest.raises(ValueError, match="`folds` applies to measure='auc' only"):
        swap_test(y, y, 1 - y, folds=[0, 0, 0, 1, 1, 1])
    with pytest.raises(ValueError, match=r"`folds` must hold one fold label per instance"):
        swap_test(y, s, s[::-1], measure="auc", folds=[0, 1])
    with pytest.raises(ValueError, match="`folds`: fold 1 has no negative instance"):
        swap_test(y, s, s[::-1], measure="auc", folds=[0, 0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="`folds` contains NaN"):
        swap_test(y, s, s[::-1], measure="auc", folds=[0, 0, 0, 1, 1, np.nan])


@pytest.mark.slow
def test_auc_with_folds_calibration_under_null():
    # Two equally good learners whose fold models each have their own scale and offset
    # (5 folds of 16): the pooled AUC rejected 7.3% at alpha 0.05 in the audit
    # (8.3% over 300 such data sets here). Failure budget: rejections at most
    # 0.05 + 3 binomial standard errors over 120 data sets (a calibrated test fails with
    # probability < 0.3%); the per-fold statistic rejected 1% over 300 (conservative: a
    # swap mixes two models' scales within a fold).
    rng = np.random.default_rng(1)
    folds = np.repeat(np.arange(5), 16)
    n_sets, rejected = 120, 0
    for i in range(n_sets):
        y = rng.integers(0, 2, folds.size)
        s = [
            np.exp(rng.normal(0, 1, 5))[folds] * (y + rng.normal(size=folds.size))
            + rng.normal(0, 2, 5)[folds]
            for _ in range(2)
        ]
        r = swap_test(y, *s, measure="auc", folds=folds, n_resamples=199, key=i)
        rejected += float(r.pvalue) <= 0.05
    assert rejected / n_sets <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_sets)


def test_count_measures_bit_identical_to_before_the_measure_table():
    # Issue 27: the measure table replaced the count path's if-chain. For a fixed key the
    # statistic, p-value and null distribution (its sum) are bit for bit those of the code
    # before it (main at 4871684, printed as float.hex).
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    a = np.where(rng.random(200) < 0.75, y, 1 - y)
    b = np.where(rng.random(200) < 0.7, y, 1 - y)
    yc = rng.integers(0, 3, 60)
    ac = np.where(rng.random(60) < 0.6, yc, rng.integers(0, 3, 60))
    bc = np.where(rng.random(60) < 0.5, yc, rng.integers(0, 3, 60))
    want = {
        "f1": ("0x1.a60d077640b40p-5", "0x1.ffbe7f2b1d4c2p-3", "0x1.8c2ebbfc8e120p-3"),
        "macro_f1": ("0x1.5807c88268000p-14", "0x1.feb87bd7927cap-1", "0x1.a8e27dde9bf84p+0"),
    }
    for measure, (t, p, n) in want.items():
        data = (y, a, b) if measure == "f1" else (yc, ac, bc)
        r = swap_test(*data, measure=measure, n_resamples=2000, key=4, return_null=True)
        got = (float(r.statistic), float(r.pvalue), float(np.sum(r.null_distribution)))
        assert [v.hex() for v in got] == [t, p, n], measure
