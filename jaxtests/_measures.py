"""Performance measures: the implementation behind :mod:`jaxtests.measures`."""

import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests._precision import x64
from jaxtests._validation import (
    as_float_array,
    as_label_array,
    check_choice,
    check_same_shape,
    is_concrete,
)
from jaxtests.kernels import measures as kmeasures

__all__ = [
    "ConfusionCounts",
    "accuracy",
    "class_counts",
    "confusion_counts",
    "confusion_matrix",
    "error",
    "f1",
    "f_beta",
    "fpr",
    "mcc",
    "pearson",
    "pr_auc",
    "pr_curve",
    "precision",
    "recall",
    "rmse",
    "roc_auc",
    "roc_curve",
    "specificity",
    "tpr",
]

ConfusionCounts = kmeasures.ConfusionCounts

_AVERAGES = (None, "macro", "micro", "weighted")


# ---------------------------------------------------------------------------
# Confusion counts
# ---------------------------------------------------------------------------


@jax.jit
def _confusion_counts(y_true, y_pred):
    return kmeasures.confusion_counts(y_true, y_pred)


@x64
def confusion_counts(y_true, y_pred):
    """Binary confusion counts (tp, fn, fp, tn) over the last axis.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (..., n_instances)
        Labels in {-1, +1} or {0, 1}; +1 (or 1) is the positive class.

    Returns
    -------
    counts : ConfusionCounts
        Named tuple of float arrays of shape ``(...)``: ``tp``, ``fn``, ``fp``, ``tn``.

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 0, 0], [1, 0, 1, 0])
    >>> [float(v) for v in c]
    [1.0, 1.0, 1.0, 1.0]
    """
    y_true = as_label_array(y_true, "y_true")
    y_pred = as_label_array(y_pred, "y_pred")
    check_same_shape(y_true, y_pred, "y_true", "y_pred")
    return _confusion_counts(y_true, y_pred)


@functools.partial(jax.jit, static_argnames=("n_classes",))
def _confusion_matrix(y_true, y_pred, n_classes):
    return kmeasures.confusion_matrix(y_true, y_pred, n_classes, dtype=jnp.float64)


def _class_labels_iv(y, name):
    arr = y if isinstance(y, jax.Array) else np.asarray(y)
    if np.dtype(arr.dtype).kind not in "biuf":
        raise TypeError(f"`{name}` must hold integer class labels, got dtype {arr.dtype}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty (shape {tuple(arr.shape)}).")
    if is_concrete(arr):
        a = np.asarray(arr)
        if a.dtype.kind == "f":
            bad = ~np.isfinite(a) | (a != np.round(a))
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                raise ValueError(
                    f"`{name}` must hold integer class labels; found {a[idx]!r} at index "
                    f"{idx[0] if len(idx) == 1 else idx}."
                )
        if (a < 0).any():
            raise ValueError(f"`{name}` must hold class indices >= 0; found {a.min()!r}.")
        if a.size and a.max() >= _MAX_CELLS:
            raise ValueError(
                f"`{name}` holds the label {int(a.max())}: labels must be class indices "
                f"0, 1, ..., C - 1 with C at most {_max_classes(1)} (map arbitrary labels to "
                "indices with np.unique(labels, return_inverse=True))."
            )
    return jnp.asarray(arr, dtype=jnp.int32)


# Largest confusion matrix (all batch rows together): 2^27 float64 cells, 1 GiB.
_MAX_CELLS = 2**27


def _max_classes(rows):
    return int(np.sqrt(_MAX_CELLS // max(rows, 1)))


@x64
def confusion_matrix(y_true, y_pred, n_classes=None):
    """Multiclass confusion matrix, rows true class and columns predicted ("Evaluation").

    Parameters
    ----------
    y_true, y_pred : array_like of int, shape (..., n_instances)
        Class indices in ``[0, n_classes)``.
    n_classes : int, optional
        Number of classes; inferred as ``max(label) + 1`` when omitted. The
        matrix is bounded at ``2^27`` cells over all batch rows (11585 classes
        for one matrix); a larger class count raises ``ValueError``.

    Returns
    -------
    cm : jax.Array, shape (..., n_classes, n_classes)
        ``cm[..., i, j]`` counts instances of class ``i`` predicted as ``j``.

    References
    ----------
    Lecture notes, "Evaluation".

    Examples
    --------
    >>> import numpy as np
    >>> from jaxtests import measures
    >>> np.asarray(measures.confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1])).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    """
    t = _class_labels_iv(y_true, "y_true")
    p = _class_labels_iv(y_pred, "y_pred")
    check_same_shape(t, p, "y_true", "y_pred")
    top_t, top_p = int(np.max(np.asarray(t))), int(np.max(np.asarray(p)))
    top = max(top_t, top_p) + 1
    rows = int(np.prod(t.shape[:-1], dtype=np.int64))
    cap = _max_classes(rows)
    if n_classes is None:
        if top > cap:
            name = "y_true" if top_t >= top_p else "y_pred"
            raise ValueError(
                f"`{name}` holds the label {top - 1}, so the confusion matrix would have "
                f"{top} classes ({rows * top * top:.3g} cells); at most {cap} classes fit "
                f"the {_MAX_CELLS} cell budget. Labels must be class indices 0, 1, ..., C - 1 "
                "(map arbitrary labels with np.unique(labels, return_inverse=True))."
            )
        n_classes = top
    elif isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
        raise TypeError(f"`n_classes` must be an int, got {type(n_classes).__name__}.")
    elif n_classes < 1 or n_classes < top:
        raise ValueError(f"`n_classes`={n_classes} is too small: labels go up to {top - 1}.")
    elif n_classes > cap:
        raise ValueError(
            f"`n_classes`={n_classes} is too large: at most {cap} classes fit the "
            f"{_MAX_CELLS} cell budget of the confusion matrix."
        )
    return _confusion_matrix(t, p, int(n_classes))


def _counts_iv(counts):
    """Return (ConfusionCounts of float64 arrays, is_matrix)."""
    if isinstance(counts, ConfusionCounts) or (
        isinstance(counts, tuple | list) and len(counts) == 4
    ):
        fields = [
            as_float_array(c, f"counts.{n}", allow_empty=True)
            for c, n in zip(counts, ConfusionCounts._fields)
        ]
        shapes = {tuple(f.shape) for f in fields}
        if len(shapes) != 1:
            raise ValueError(f"`counts` fields must share one shape, got {sorted(shapes)}.")
        for f, n in zip(fields, ConfusionCounts._fields):
            if is_concrete(f) and (np.asarray(f) < 0).any():
                raise ValueError(f"`counts.{n}` must be non-negative.")
        return ConfusionCounts(*fields), False
    cm = as_float_array(counts, "counts")
    if cm.ndim < 2 or cm.shape[-1] != cm.shape[-2]:
        raise ValueError(
            "`counts` must be a ConfusionCounts (tp, fn, fp, tn) or a confusion matrix of "
            f"shape (..., C, C); got an array of shape {tuple(cm.shape)}."
        )
    if is_concrete(cm) and (np.asarray(cm) < 0).any():
        raise ValueError("`counts` (confusion matrix) must be non-negative.")
    return kmeasures.class_counts(cm), True


@x64
def class_counts(cm):
    """One-vs-rest (tp, fn, fp, tn) per class from a confusion matrix ("Evaluation" lecture notes).

    Parameters
    ----------
    cm : array_like, shape (..., C, C)
        Confusion matrix, rows true class.

    Returns
    -------
    counts : ConfusionCounts
        Fields of shape ``(..., C)``: ``FP_i = sum_{j != i} n_ji``, ``FN_i = sum_{j != i} n_ij``.

    References
    ----------
    Lecture notes, "Evaluation".

    Examples
    --------
    >>> from jaxtests import measures
    >>> cm = measures.confusion_matrix([0, 1, 2, 2], [0, 2, 2, 1])
    >>> [v.tolist() for v in measures.class_counts(cm)]  # tp, fn, fp, tn per class
    [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [3.0, 2.0, 1.0]]
    """
    counts, is_matrix = _counts_iv(cm)
    if not is_matrix:
        raise ValueError("`cm` must be a confusion matrix of shape (..., C, C).")
    return counts


@functools.partial(jax.jit, static_argnames="names")
def _binary_measures(y_true, y_pred, names):
    c = kmeasures.confusion_counts(y_true, y_pred)
    return jnp.stack([kmeasures.MEASURES[n].of_binary(c, jnp.nan) for n in names], axis=-1)


@x64
def binary_measures(y_true, y_pred, names):
    """Measures ``names`` of the table from binary labels ``(..., n)``: ``(..., len(names))``.

    One compiled program for all of them; a ratio's 0/0 is NaN. Internal (the
    command line's per-fold table).
    """
    y_true = as_label_array(y_true, "y_true")
    y_pred = as_label_array(y_pred, "y_pred")
    check_same_shape(y_true, y_pred, "y_true", "y_pred")
    return _binary_measures(y_true, y_pred, tuple(names))


def _zero_division_iv(zero_division):
    if isinstance(zero_division, bool) or not isinstance(zero_division, numbers.Real):
        raise TypeError("`zero_division` must be a real number or nan.")
    z = float(zero_division)
    if not (np.isnan(z) or 0.0 <= z <= 1.0):
        raise ValueError(f"`zero_division` must be nan or in [0, 1], got {z}.")
    return z


def _weighted_nanmean(v, w):
    ok = ~jnp.isnan(v)
    num = jnp.sum(jnp.where(ok, v * w, 0), axis=-1)
    den = jnp.sum(jnp.where(ok, w, 0), axis=-1)
    return kmeasures.ratio(num, den, jnp.nan)


def _ratio_measure(kernel, counts, average, zero_division, **kw):
    c, is_matrix = _counts_iv(counts)
    check_choice(average, "average", _AVERAGES)
    z = _zero_division_iv(zero_division)
    if average is None:
        return kernel(c, zero_division=z, **kw)
    if not is_matrix:
        raise ValueError(
            "`average` applies to a multiclass confusion matrix; got binary counts "
            "(use average=None)."
        )
    if average == "micro":
        summed = ConfusionCounts(*(jnp.sum(f, axis=-1) for f in c))
        return kernel(summed, zero_division=z, **kw)
    per_class = kernel(c, zero_division=z, **kw)
    if average == "macro":
        return kmeasures.macro_mean(c, per_class)
    return _weighted_nanmean(per_class, c.tp + c.fn)  # weighted by support


_PARAMS = """
    Parameters
    ----------
    counts : ConfusionCounts or array_like
        Binary counts ``(tp, fn, fp, tn)`` (each of any batch shape), or a
        multiclass confusion matrix of shape ``(..., C, C)`` (one-vs-rest per class).
    average : {None, 'macro', 'micro', 'weighted'}, optional
        For a confusion matrix: per class (None), unweighted mean over the
        classes that occur (a nonzero row or column: scikit-learn's
        ``average="macro"`` with ``labels=None``, whose classes are those in
        ``y_true`` or ``y_pred``; a class absent from both is left out, not
        scored ``zero_division``), from summed counts, or mean weighted by class
        support. NaN values (``zero_division=nan``) are left out of the means.
    zero_division : float, default nan
        Value of a ratio with zero denominator (0, 1 or nan).

    Returns
    -------
    value : jax.Array
        The measure, of the batch shape (with a trailing class axis when
        ``average`` is None and ``counts`` is a matrix).
"""


_EXAMPLE = """
    References
    ----------
    Lecture notes, "Evaluation".

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 1, -1, -1], [1, 1, -1, 1, -1])
    >>> round(float(measures.{name}(c)), 4)
    {value}
"""
_EX_TPR = _EXAMPLE.format(name="tpr", value="0.6667")
_EX_RECALL = _EXAMPLE.format(name="recall", value="0.6667")
_EX_FPR = _EXAMPLE.format(name="fpr", value="0.5")
_EX_PRECISION = _EXAMPLE.format(name="precision", value="0.6667")
_EX_SPECIFICITY = _EXAMPLE.format(name="specificity", value="0.5")


def _doc(summary, example):
    def deco(fn):
        fn.__doc__ = summary + "\n" + _PARAMS + example
        return fn

    return deco


@_doc("True positive rate (recall, sensitivity) ``tp / (tp + fn)``.", _EX_TPR)
@x64
def tpr(counts, *, average=None, zero_division=np.nan):
    return _ratio_measure(kmeasures.tpr, counts, average, zero_division)


@_doc("Recall ``tp / (tp + fn)``, the same as :func:`tpr`.", _EX_RECALL)
@x64
def recall(counts, *, average=None, zero_division=np.nan):
    return _ratio_measure(kmeasures.tpr, counts, average, zero_division)


@_doc("False positive rate ``fp / (fp + tn)``.", _EX_FPR)
@x64
def fpr(counts, *, average=None, zero_division=np.nan):
    return _ratio_measure(kmeasures.fpr, counts, average, zero_division)


@_doc("Precision ``tp / (tp + fp)``.", _EX_PRECISION)
@x64
def precision(counts, *, average=None, zero_division=np.nan):
    return _ratio_measure(kmeasures.precision, counts, average, zero_division)


@_doc("Specificity ``tn / (tn + fp)``.", _EX_SPECIFICITY)
@x64
def specificity(counts, *, average=None, zero_division=np.nan):
    return _ratio_measure(kmeasures.specificity, counts, average, zero_division)


def _overall(name, counts, zero_division):
    """A measure of the whole table (its row's kernels): binary counts or a confusion matrix."""
    c, is_matrix = _counts_iv(counts)
    z = _zero_division_iv(zero_division)
    row = kmeasures.MEASURES[name]
    return row.classes(c, z, -1) if is_matrix else row.of_binary(c, z)


@x64
def accuracy(counts, *, zero_division=np.nan):
    """Accuracy ``(tp + tn) / total``; for a confusion matrix, trace over total.

    Parameters
    ----------
    counts : ConfusionCounts or array_like
        Binary counts or a multiclass confusion matrix ``(..., C, C)``.
    zero_division : float, default nan
        Value when there are no instances.

    Returns
    -------
    value : jax.Array
        Accuracy of the batch shape.

    References
    ----------
    Lecture notes, "Evaluation".

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 1, -1, -1], [1, 1, -1, 1, -1])
    >>> round(float(measures.accuracy(c)), 4)
    0.6
    """
    return _overall("accuracy", counts, zero_division)


@x64
def error(counts, *, zero_division=np.nan):
    """Misclassification rate ``(fp + fn) / total`` (``1 - accuracy``).

    Parameters
    ----------
    counts : ConfusionCounts or array_like
        Binary counts or a multiclass confusion matrix ``(..., C, C)``.
    zero_division : float, default nan
        Value when there are no instances.

    Returns
    -------
    value : jax.Array
        Error rate of the batch shape.

    References
    ----------
    Lecture notes, "Evaluation".

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 1, -1, -1], [1, 1, -1, 1, -1])
    >>> round(float(measures.error(c)), 4)
    0.4
    """
    return _overall("error", counts, zero_division)


@x64
def f_beta(counts, beta=1.0, *, average=None, zero_division=np.nan):
    """F-beta measure ``(1 + b^2) P R / (b^2 P + R)`` ("Evaluation" lecture notes).

    Computed as ``(1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)``, which equals
    the formula above wherever precision and recall are defined and is 0
    when ``tp = 0`` with some positive instance or prediction.

    Parameters
    ----------
    counts : ConfusionCounts or array_like
        Binary counts or a multiclass confusion matrix ``(..., C, C)``.
    beta : float, default 1.0
        Weight of recall relative to precision; ``> 0``.
    average : {None, 'macro', 'micro', 'weighted'}, optional
        Averaging over classes for a confusion matrix, as in :func:`precision`
        ("macro": the classes that occur, scikit-learn's ``labels=None``).
    zero_division : float, default nan
        Value when ``tp + fn + fp = 0``.

    Returns
    -------
    value : jax.Array
        F-beta of the batch shape.

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 1, -1, -1], [1, 1, -1, 1, -1])
    >>> round(float(measures.f_beta(c, 2.0)), 4)
    0.6667
    """
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"`beta` must be a real number, got {type(beta).__name__}.")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"`beta` must be finite and > 0, got {beta}.")
    return _ratio_measure(kmeasures.f_beta, counts, average, zero_division, beta=float(beta))


@x64
def f1(counts, *, average=None, zero_division=np.nan):
    """F1 measure, the harmonic mean of precision and recall (``f_beta`` with beta=1).

    Parameters
    ----------
    counts : ConfusionCounts or array_like
        Binary counts or a multiclass confusion matrix ``(..., C, C)``.
    average : {None, 'macro', 'micro', 'weighted'}, optional
        Averaging over classes for a confusion matrix, as in :func:`precision`
        ("macro": the classes that occur, scikit-learn's ``labels=None``).
    zero_division : float, default nan
        Value when ``tp + fn + fp = 0``.

    Returns
    -------
    value : jax.Array
        F1 of the batch shape.

    References
    ----------
    Lecture notes, "Evaluation".

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 1, -1, -1], [1, 1, -1, 1, -1])
    >>> round(float(measures.f1(c)), 4)
    0.6667
    """
    return f_beta(counts, 1.0, average=average, zero_division=zero_division)


@x64
def mcc(counts, *, zero_division=0.0):
    """Matthews correlation coefficient, binary or multiclass (Gorodkin's R_K).

    For two classes ``(tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn))``;
    for a confusion matrix with ``c`` correct of ``s`` instances, ``t_k`` true
    and ``p_k`` predicted instances of class ``k``::

        (c s - sum_k t_k p_k) / sqrt((s^2 - sum_k p_k^2) (s^2 - sum_k t_k^2))

    which is the two-class formula for ``C = 2``; scikit-learn's
    ``matthews_corrcoef``. It lies in ``[-1, 1]``: 1 for perfect predictions, 0
    for predictions unrelated to the labels.

    Parameters
    ----------
    counts : ConfusionCounts or array_like
        Binary counts ``(tp, fn, fp, tn)`` or a multiclass confusion matrix
        ``(..., C, C)`` (rows true class).
    zero_division : float, default 0.0
        Value where the true or the predicted labels are all one class (the
        denominator is 0): scikit-learn's 0, no correlation; nan to mark it.

    Returns
    -------
    value : jax.Array
        MCC of the batch shape.

    References
    ----------
    Matthews, B. W. (1975). Comparison of the predicted and observed secondary structure
    of T4 phage lysozyme. Biochimica et Biophysica Acta 405(2), 442-451.
    Gorodkin, J. (2004). Comparing two K-category assignments by a K-category correlation
    coefficient. Computational Biology and Chemistry 28(5), 367-374.

    Examples
    --------
    >>> from jaxtests import measures
    >>> c = measures.confusion_counts([1, 1, 1, -1, -1], [1, 1, -1, 1, -1])
    >>> round(float(measures.mcc(c)), 4)
    0.1667
    """
    c, is_matrix = _counts_iv(counts)
    z = _zero_division_iv(zero_division)
    return kmeasures.mcc(c if is_matrix else kmeasures.two_classes(c), z)


# ---------------------------------------------------------------------------
# Scores: ROC and precision-recall
# ---------------------------------------------------------------------------


def _scores_iv(y_true, scores):
    y = as_label_array(y_true, "y_true")
    s = as_float_array(scores, "scores")
    check_same_shape(y, s, "y_true", "scores")
    return y, s


_rmse = jax.jit(kmeasures.rmse)
_pearson = jax.jit(kmeasures.pearson)
_binary_clf_curve = jax.jit(kmeasures.binary_clf_curve)


@jax.jit
def _roc_auc(y, s):
    return kmeasures.roc_auc(y, s)


@jax.jit
def _average_precision(y, s):
    return kmeasures.average_precision(y, s)


@x64
def roc_auc(y_true, scores):
    """Area under the ROC curve (Mann-Whitney form; tied scores count 1/2).

    Parameters
    ----------
    y_true : array_like, shape (..., n_instances)
        Labels in {-1, +1} or {0, 1}.
    scores : array_like, shape (..., n_instances)
        Scores, larger meaning more positive.

    Returns
    -------
    auc : jax.Array, shape (...)
        NaN where a row has only one class.

    Examples
    --------
    >>> from jaxtests import measures
    >>> float(measures.roc_auc([1, 1, -1, -1], [0.9, 0.4, 0.5, 0.1]))
    0.75
    """
    return _roc_auc(*_scores_iv(y_true, scores))


@x64
def pr_auc(y_true, scores):
    """Area under the precision-recall curve as average precision ("Evaluation" lecture notes).

    ``AP = sum_n (R_n - R_{n-1}) P_n`` over the distinct score thresholds, the
    step-wise area that scikit-learn's ``average_precision_score`` reports
    (no linear interpolation, which would be optimistic).

    Parameters
    ----------
    y_true : array_like, shape (..., n_instances)
        Labels in {-1, +1} or {0, 1}.
    scores : array_like, shape (..., n_instances)
        Scores, larger meaning more positive.

    Returns
    -------
    ap : jax.Array, shape (...)
        NaN where a row has no positive instance.

    Examples
    --------
    >>> from jaxtests import measures
    >>> round(float(measures.pr_auc([1, 1, -1, -1], [0.9, 0.4, 0.5, 0.1])), 4)
    0.8333
    """
    return _average_precision(*_scores_iv(y_true, scores))


def _curve_counts(y_true, scores):
    y, s = _scores_iv(y_true, scores)
    if y.ndim != 1:
        raise ValueError(f"`y_true` must be 1-dimensional for a curve, got shape {tuple(y.shape)}.")
    fps, tps, thr, last = (np.asarray(a) for a in _binary_clf_curve(y, s))
    return fps[last], tps[last], thr[last]


@x64
def roc_curve(y_true, scores):
    """ROC curve: false and true positive rates at every distinct threshold.

    Collinear intermediate points are dropped and a first point (0, 0) at
    threshold ``inf`` is added, as scikit-learn's ``roc_curve`` does.

    Parameters
    ----------
    y_true : array_like, shape (n_instances,)
        Labels in {-1, +1} or {0, 1}; both classes must occur.
    scores : array_like, shape (n_instances,)
        Scores, larger meaning more positive.

    Returns
    -------
    fpr, tpr, thresholds : numpy.ndarray
        Rates for predictions ``scores >= threshold``, thresholds decreasing.

    Examples
    --------
    >>> from jaxtests import measures
    >>> fpr, tpr, thresholds = measures.roc_curve([1, 1, -1, -1], [0.9, 0.4, 0.5, 0.1])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    fps, tps, thr = _curve_counts(y_true, scores)
    if tps[-1] == 0 or fps[-1] == 0:
        raise ValueError("`y_true` must contain both classes for a ROC curve.")
    if fps.size > 2:  # keep corners only: drop points collinear with neighbours
        keep = np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True]
        fps, tps, thr = fps[keep], tps[keep], thr[keep]
    fps = np.r_[0.0, fps]
    tps = np.r_[0.0, tps]
    thr = np.r_[np.inf, thr]
    return fps / fps[-1], tps / tps[-1], thr


@x64
def pr_curve(y_true, scores):
    """Precision-recall curve at every distinct threshold.

    Ordered as scikit-learn's ``precision_recall_curve``: recall decreasing,
    ending with the point (recall 0, precision 1) that has no threshold.

    Parameters
    ----------
    y_true : array_like, shape (n_instances,)
        Labels in {-1, +1} or {0, 1}; at least one positive.
    scores : array_like, shape (n_instances,)
        Scores, larger meaning more positive.

    Returns
    -------
    precision, recall : numpy.ndarray, shape (n_thresholds + 1,)
    thresholds : numpy.ndarray, shape (n_thresholds,)
        Increasing.

    Examples
    --------
    >>> from jaxtests import measures
    >>> precision, recall, thresholds = measures.pr_curve([1, 1, -1, -1], [0.9, 0.4, 0.5, 0.1])
    >>> recall.tolist()
    [1.0, 1.0, 0.5, 0.5, 0.0]
    """
    fps, tps, thr = _curve_counts(y_true, scores)
    if tps[-1] == 0:
        raise ValueError("`y_true` must contain a positive instance for a PR curve.")
    prec = tps / (tps + fps)
    rec = tps / tps[-1]
    # Reversed so recall decreases (scikit-learn's order since 1.1: every threshold kept).
    return np.r_[prec[::-1], 1.0], np.r_[rec[::-1], 0.0], thr[::-1]


# ---------------------------------------------------------------------------
# Regression
# ---------------------------------------------------------------------------


def _regression_iv(a, b, name_a, name_b, *, min_n=1):
    a = as_float_array(a, name_a)
    b = as_float_array(b, name_b)
    check_same_shape(a, b, name_a, name_b)
    if a.ndim == 0 or a.shape[-1] < min_n:
        raise ValueError(
            f"`{name_a}` needs at least {min_n} instance(s) along the last axis, got shape "
            f"{tuple(a.shape)}."
        )
    return a, b


@x64
def rmse(y_true, y_pred):
    """Root mean squared error over the last axis ("Evaluation" lecture notes).

    Parameters
    ----------
    y_true, y_pred : array_like, shape (..., n_instances)
        Targets and predictions.

    Returns
    -------
    rmse : jax.Array, shape (...)

    Examples
    --------
    >>> from jaxtests import measures
    >>> round(float(measures.rmse([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])), 4)
    0.6455
    """
    return _rmse(*_regression_iv(y_true, y_pred, "y_true", "y_pred"))


@x64
def pearson(x, y):
    """Pearson correlation over the last axis ("Evaluation" lecture notes).

    Parameters
    ----------
    x, y : array_like, shape (..., n_instances)
        Paired observations, e.g. predictions and targets.

    Returns
    -------
    r : jax.Array, shape (...)
        NaN where either input is constant along the last axis.

    Examples
    --------
    >>> from jaxtests import measures
    >>> round(float(measures.pearson([1.0, 2.0, 3.0, 4.0], [1.1, 1.9, 3.2, 3.9])), 4)
    0.9934
    """
    return _pearson(*_regression_iv(x, y, "x", "y", min_n=2))
