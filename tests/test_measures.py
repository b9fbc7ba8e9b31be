"""jaxtests.measures against scikit-learn metrics (rtol 1e-12 in float64)."""

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import python
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn import metrics as skm

from jaxtests import measures as M

RTOL = 1e-12


def _binary(rng, n, ties=False):
    y = rng.integers(0, 2, n)
    s = rng.normal(size=n) + y
    if ties:
        s = np.round(s, 1)
    return y, s


def test_seed_002_hand_counts():
    # Seed 002: rows true class, columns predicted; tp, fn, fp, tn.
    y = [1, 1, 1, 0, 0, 0, 0]
    p = [1, 1, 0, 1, 0, 0, 0]
    c = M.confusion_counts(y, p)
    assert [float(v) for v in c] == [2.0, 1.0, 1.0, 3.0]
    assert float(M.precision(c)) == pytest.approx(2 / 3)
    assert float(M.recall(c)) == pytest.approx(2 / 3)
    assert float(M.accuracy(c)) == pytest.approx(5 / 7)
    assert float(M.error(c)) == pytest.approx(2 / 7)
    assert float(M.specificity(c)) == pytest.approx(3 / 4)
    assert float(M.fpr(c)) == pytest.approx(1 / 4)
    # F_beta = (1 + b^2) P R / (b^2 P + R) with P = R = 2/3.
    assert float(M.f_beta(c, 2.0)) == pytest.approx(2 / 3)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_binary_measures_match_sklearn(rng, beta):
    y = rng.choice([-1, 1], size=(6, 40))
    p = rng.choice([-1, 1], size=(6, 40))
    c = M.confusion_counts(y, p)
    for i in range(6):
        tn, fp, fn, tp = skm.confusion_matrix(y[i], p[i], labels=[-1, 1]).ravel()
        np.testing.assert_array_equal([c.tp[i], c.fn[i], c.fp[i], c.tn[i]], [tp, fn, fp, tn])
        pr, rc, fb, _ = skm.precision_recall_fscore_support(
            y[i], p[i], beta=beta, average="binary", zero_division=np.nan
        )
        np.testing.assert_allclose(M.precision(c)[i], pr, rtol=RTOL)
        np.testing.assert_allclose(M.recall(c)[i], rc, rtol=RTOL)
        np.testing.assert_allclose(M.f_beta(c, beta)[i], fb, rtol=RTOL)
        np.testing.assert_allclose(M.accuracy(c)[i], skm.accuracy_score(y[i], p[i]), rtol=RTOL)
        np.testing.assert_allclose(
            M.specificity(c)[i], skm.recall_score(y[i], p[i], pos_label=-1), rtol=RTOL
        )


@pytest.mark.parametrize("average", [None, "macro", "micro", "weighted"])
def test_multiclass_match_sklearn(rng, average):
    yt = rng.integers(0, 4, 150)
    yp = np.where(rng.random(150) < 0.6, yt, rng.integers(0, 4, 150))
    cm = M.confusion_matrix(yt, yp)
    np.testing.assert_array_equal(cm, skm.confusion_matrix(yt, yp))
    pr, rc, f1, _ = skm.precision_recall_fscore_support(yt, yp, average=average)
    np.testing.assert_allclose(M.precision(cm, average=average), pr, rtol=RTOL)
    np.testing.assert_allclose(M.recall(cm, average=average), rc, rtol=RTOL)
    np.testing.assert_allclose(M.f1(cm, average=average), f1, rtol=RTOL)
    np.testing.assert_allclose(M.accuracy(cm), skm.accuracy_score(yt, yp), rtol=RTOL)
    np.testing.assert_allclose(M.error(cm), 1 - skm.accuracy_score(yt, yp), rtol=RTOL)


def test_mcc_matches_sklearn_binary_multiclass_and_degenerate(rng):
    # Reference: scikit-learn's matthews_corrcoef, binary counts and confusion matrices
    # (batched), and the 0/0 cases (one true or one predicted class), where it returns 0.
    y = rng.choice([-1, 1], size=(4, 30))
    p = np.where(rng.random((4, 30)) < 0.7, y, -y)
    p[3] = 1  # every prediction positive: 0/0
    got = np.asarray(M.mcc(M.confusion_counts(y, p)))
    np.testing.assert_allclose(got, [skm.matthews_corrcoef(a, b) for a, b in zip(y, p)], rtol=RTOL)
    assert got[3] == 0.0
    assert np.isnan(M.mcc(M.confusion_counts(y[3], p[3]), zero_division=np.nan))
    yt = rng.integers(0, 4, (3, 80))
    yp = np.where(rng.random((3, 80)) < 0.5, yt, rng.integers(0, 4, (3, 80)))
    yp[2] = 1
    cm = M.confusion_matrix(yt, yp, 4)
    want = [skm.matthews_corrcoef(a, b) for a, b in zip(yt, yp)]
    np.testing.assert_allclose(M.mcc(cm), want, rtol=RTOL, atol=1e-15)
    assert want[2] == 0.0


def test_confusion_matrix_batched_matches_sklearn(rng):
    # scatter-add kernel: every batch row equals scikit-learn's matrix, and a label
    # outside [0, n_classes) counts nowhere (as a zero one-hot row did)
    yt = rng.integers(0, 5, (3, 2, 40))
    yp = rng.integers(0, 5, (3, 2, 40))
    cm = np.asarray(M.confusion_matrix(yt, yp, n_classes=6))
    assert cm.shape == (3, 2, 6, 6)
    for i in range(3):
        for j in range(2):
            ref = skm.confusion_matrix(yt[i, j], yp[i, j], labels=np.arange(6))
            np.testing.assert_array_equal(cm[i, j], ref)
    from jaxtests.kernels import measures as kmeasures

    out = kmeasures.confusion_matrix(jnp.asarray([0, 1, 3]), jnp.asarray([1, 3, 1]), 2)
    np.testing.assert_array_equal(out, [[0, 1], [0, 0]])


def test_confusion_matrix_huge_label_is_refused_not_aborted():
    # Issue 18.5: labels [0, 100000] asked for a 100001^2 matrix; printing the lazy
    # result aborted the interpreter (exit 134), so run it in a subprocess.
    code = (
        "from jaxtests import measures\n"
        "try:\n"
        "    print(measures.confusion_matrix([0, 100000], [0, 1]))\n"
        "except ValueError as e:\n"
        "    print('ValueError:', e)\n"
    )
    out = python(code)
    assert out.stdout.startswith("ValueError: `y_true` holds the label 100000"), out.stdout
    with pytest.raises(ValueError, match=r"`y_pred` holds the label 100000"):
        M.confusion_matrix([0, 1], [100000, 0])
    with pytest.raises(ValueError, match=r"`n_classes`=1000000 is too large"):
        M.confusion_matrix([0, 1], [1, 0], n_classes=10**6)
    with pytest.raises(ValueError, match=r"`y_true` holds the label 10000000000"):
        M.confusion_matrix([0, 10**10], [0, 1])  # beyond int32: refused before the cast
    # the bound counts batch rows: 64 rows of 2048 classes exceed 2^27 cells
    with pytest.raises(ValueError, match=r"at most 1448 classes"):
        M.confusion_matrix(np.zeros((64, 3), int), np.full((64, 3), 2047))


def test_multiclass_class_counts_seed_002():
    # FP_i is the column sum off the diagonal, FN_i the row sum off the diagonal.
    cm = np.array([[5, 1, 0], [2, 3, 1], [0, 4, 6]])
    c = M.class_counts(cm)
    np.testing.assert_array_equal(c.tp, [5, 3, 6])
    np.testing.assert_array_equal(c.fp, [2, 5, 1])
    np.testing.assert_array_equal(c.fn, [1, 3, 4])
    np.testing.assert_array_equal(c.tn, [14, 11, 11])


def test_undefined_ratio_is_nan_by_default():
    c = M.ConfusionCounts(0.0, 0.0, 0.0, 5.0)  # no positive instance, no positive prediction
    assert np.isnan(M.precision(c)) and np.isnan(M.recall(c)) and np.isnan(M.f1(c))
    assert float(M.precision(c, zero_division=0.0)) == 0.0
    assert float(M.fpr(c)) == 0.0
    # scikit-learn's default zero_division="warn" reports 0.
    assert skm.precision_score([0, 0], [0, 0], zero_division=0.0) == 0.0
    c2 = M.ConfusionCounts(0.0, 3.0, 2.0, 5.0)  # tp = 0 but F is defined: 0
    assert float(M.f1(c2)) == 0.0


@pytest.mark.parametrize("ties", [False, True])
def test_roc_and_pr_match_sklearn(rng, ties):
    y, s = _binary(rng, 120, ties=ties)
    np.testing.assert_allclose(M.roc_auc(y, s), skm.roc_auc_score(y, s), rtol=RTOL)
    np.testing.assert_allclose(M.pr_auc(y, s), skm.average_precision_score(y, s), rtol=RTOL)
    for ours, ref in zip(M.roc_curve(y, s), skm.roc_curve(y, s)):
        np.testing.assert_allclose(ours, ref, rtol=RTOL)
    for ours, ref in zip(M.pr_curve(y, s), skm.precision_recall_curve(y, s)):
        np.testing.assert_allclose(ours, ref, rtol=RTOL)


def test_auc_is_mann_whitney(rng):
    y, s = _binary(rng, 60, ties=True)
    u = stats.mannwhitneyu(s[y == 1], s[y == 0]).statistic
    np.testing.assert_allclose(M.roc_auc(y, s), u / ((y == 1).sum() * (y == 0).sum()), rtol=RTOL)


def test_batched_auc_equals_looped(rng):
    y = rng.integers(0, 2, (5, 30))
    s = np.round(rng.normal(size=(5, 30)) + y, 1)
    auc = M.roc_auc(y, s)
    ap = M.pr_auc(y, s)
    for i in range(5):
        np.testing.assert_allclose(auc[i], skm.roc_auc_score(y[i], s[i]), rtol=RTOL)
        np.testing.assert_allclose(ap[i], skm.average_precision_score(y[i], s[i]), rtol=RTOL)
    assert np.isnan(M.roc_auc([1, 1, 1], [0.1, 0.2, 0.3]))


def test_regression_match_references(rng):
    y = rng.normal(size=(3, 50))
    f = y + rng.normal(size=(3, 50))
    for i in range(3):
        np.testing.assert_allclose(
            M.rmse(y, f)[i], np.sqrt(skm.mean_squared_error(y[i], f[i])), rtol=RTOL
        )
        np.testing.assert_allclose(M.pearson(f, y)[i], stats.pearsonr(f[i], y[i])[0], rtol=RTOL)
    assert np.isnan(M.pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))


def test_jit_parity(rng):
    y = rng.choice([-1, 1], size=(4, 25)).astype(float)
    p = rng.choice([-1, 1], size=(4, 25)).astype(float)
    eager = M.f1(M.confusion_counts(y, p))
    jitted = jax.jit(lambda y, p: M.f1(M.confusion_counts(y, p)))(y, p)
    np.testing.assert_allclose(jitted, eager, rtol=RTOL)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_counts_properties(data):
    shape = data.draw(st.tuples(st.integers(1, 3), st.integers(1, 15)))
    y = data.draw(hnp.arrays(np.int64, shape, elements=st.sampled_from([-1, 1])))
    p = data.draw(hnp.arrays(np.int64, shape, elements=st.sampled_from([-1, 1])))
    c = M.confusion_counts(y, p)
    np.testing.assert_array_equal(c.tp + c.fn + c.fp + c.tn, shape[1])
    acc = np.asarray(M.accuracy(c))
    np.testing.assert_allclose(acc, np.mean(y == p, axis=-1), rtol=RTOL)
    np.testing.assert_allclose(np.asarray(M.error(c)), 1 - acc, atol=1e-15)
    looped = [M.confusion_counts(y[i], p[i]) for i in range(shape[0])]
    for field in range(4):
        np.testing.assert_array_equal(c[field], [lc[field] for lc in looped])


def test_validation_messages():
    with pytest.raises(ValueError, match=r"`y_pred` must hold binary labels.*found value 2"):
        M.confusion_counts([1, 0], [1, 2])
    with pytest.raises(ValueError, match=r"`y_true` and `y_pred` must have the same shape"):
        M.confusion_counts([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match=r"`y_true` is empty"):
        M.confusion_counts([], [])
    with pytest.raises(ValueError, match=r"`scores` contains NaN at index 2"):
        M.roc_auc([1, 0, 1], [0.1, 0.2, np.nan])
    with pytest.raises(ValueError, match=r"`y_true` must hold integer class labels"):
        M.confusion_matrix([0.5, 1], [0, 1])
    with pytest.raises(ValueError, match=r"`n_classes`=2 is too small"):
        M.confusion_matrix([0, 2], [0, 1], n_classes=2)
    with pytest.raises(ValueError, match=r"confusion matrix of shape \(\.\.\., C, C\)"):
        M.precision(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"`average` must be one of"):
        M.precision(np.eye(3), average="samples")
    with pytest.raises(ValueError, match=r"`average` applies to a multiclass"):
        M.precision(M.ConfusionCounts(1.0, 1.0, 1.0, 1.0), average="macro")
    with pytest.raises(ValueError, match=r"`counts.fp` must be non-negative"):
        M.precision((1.0, 1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match=r"`beta` must be finite and > 0"):
        M.f_beta((1.0, 1.0, 1.0, 1.0), 0.0)
    with pytest.raises(ValueError, match=r"`zero_division` must be nan or in \[0, 1\]"):
        M.precision((1.0, 1.0, 1.0, 1.0), zero_division=2.0)
    with pytest.raises(ValueError, match=r"both classes"):
        M.roc_curve([1, 1], [0.2, 0.3])
    with pytest.raises(ValueError, match=r"`x` needs at least 2 instance"):
        M.pearson([1.0], [2.0])
