"""Performance-measure kernels: confusion counts, ratios, ranking and regression measures.

Shapes: instance axis last, ``(..., n_instances)``; counts have the batch shape
``(...)`` (binary) or ``(..., n_classes)`` (one-vs-rest). Pure; no validation.
Binary labels are ±1 with +1 the positive class; a value is read as +1 iff it
is ``> 0``, so a decision value ``f = 0`` predicts -1 (scikit-learn's
``scores > 0``), the rule of the 0/1 loss too (``jaxtests.kernels.losses``).
Counts are floats of the input dtype so they feed the test statistics
directly.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

__all__ = [
    "ConfusionCounts",
    "accuracy",
    "average_precision",
    "balanced_accuracy",
    "binary_clf_curve",
    "class_counts",
    "confusion_counts",
    "confusion_matrix",
    "error",
    "f_beta",
    "fpr",
    "macro_f1",
    "macro_mean",
    "macro_precision",
    "macro_recall",
    "pearson",
    "precision",
    "ratio",
    "rmse",
    "roc_auc",
    "roc_auc_grouped",
    "specificity",
    "tpr",
]


class ConfusionCounts(NamedTuple):
    """Binary confusion counts, each of the batch shape (the "Evaluation" notes' layout)."""

    tp: jax.Array
    fn: jax.Array
    fp: jax.Array
    tn: jax.Array


def confusion_counts(y_true, y_pred):
    """(tp, fn, fp, tn) summed over the last axis; ``y_* : (..., n)``, positive iff ``> 0``."""
    dtype = jnp.result_type(y_true, y_pred)
    t = y_true > 0
    p = y_pred > 0
    tp = jnp.sum(t & p, axis=-1, dtype=dtype)
    fn = jnp.sum(t & ~p, axis=-1, dtype=dtype)
    fp = jnp.sum(~t & p, axis=-1, dtype=dtype)
    tn = jnp.sum(~t & ~p, axis=-1, dtype=dtype)
    return ConfusionCounts(tp, fn, fp, tn)


def confusion_matrix(y_true, y_pred, n_classes, dtype=jnp.float32):
    """``(..., n_classes, n_classes)`` counts, rows true class, columns predicted.

    Labels are integer class indices; those outside ``[0, n_classes)`` are
    not counted. A scatter-add of
    the ``n`` pairs: memory ``O(n + n_classes^2)`` per row (one-hot products
    would take ``O(n n_classes)``).
    """
    batch, n = y_true.shape[:-1], y_true.shape[-1]
    rows = 1
    for b in batch:
        rows *= b
    cell = (y_true * n_classes + y_pred).reshape(rows, n)
    cell = cell + (jnp.arange(rows, dtype=cell.dtype) * n_classes * n_classes)[:, None]
    # a label outside [0, n_classes) counts nowhere (as a zero one-hot row)
    inside = (y_true >= 0) & (y_true < n_classes) & (y_pred >= 0) & (y_pred < n_classes)
    counts = jax.ops.segment_sum(
        inside.reshape(-1).astype(dtype),
        cell.reshape(-1),
        num_segments=rows * n_classes * n_classes,
    )
    return counts.reshape(*batch, n_classes, n_classes)


def class_counts(cm):
    """One-vs-rest counts per class from ``cm : (..., C, C)``; each field ``(..., C)``."""
    tp = jnp.diagonal(cm, axis1=-2, axis2=-1)
    fn = jnp.sum(cm, axis=-1) - tp  # row sums: all instances of the class
    fp = jnp.sum(cm, axis=-2) - tp  # column sums: all predictions of the class
    total = jnp.sum(cm, axis=(-2, -1))[..., None]
    tn = total - tp - fn - fp
    return ConfusionCounts(tp, fn, fp, tn)


def ratio(num, den, zero_division):
    """``num / den`` with ``zero_division`` where ``den == 0`` (no NaN gradients)."""
    safe = jnp.where(den == 0, 1, den)
    return jnp.where(den == 0, zero_division, num / safe)


def tpr(c, zero_division=jnp.nan):
    """True positive rate (recall, sensitivity) ``tp / (tp + fn)``."""
    return ratio(c.tp, c.tp + c.fn, zero_division)


def fpr(c, zero_division=jnp.nan):
    """False positive rate ``fp / (fp + tn)``."""
    return ratio(c.fp, c.fp + c.tn, zero_division)


def precision(c, zero_division=jnp.nan):
    """Precision ``tp / (tp + fp)``."""
    return ratio(c.tp, c.tp + c.fp, zero_division)


def specificity(c, zero_division=jnp.nan):
    """Specificity ``tn / (tn + fp)``."""
    return ratio(c.tn, c.tn + c.fp, zero_division)


def accuracy(c, zero_division=jnp.nan):
    """Accuracy ``(tp + tn) / total``."""
    return ratio(c.tp + c.tn, c.tp + c.tn + c.fp + c.fn, zero_division)


def error(c, zero_division=jnp.nan):
    """Misclassification rate ``(fp + fn) / total``."""
    return ratio(c.fp + c.fn, c.tp + c.tn + c.fp + c.fn, zero_division)


def f_beta(c, beta=1.0, zero_division=jnp.nan):
    """F-beta ``(1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)`` ("Evaluation" lecture notes).

    Equal to ``(1 + b^2) P R / (b^2 P + R)`` wherever P and R are defined, and
    0 when ``tp = 0`` but some instance is positive or predicted positive.
    """
    b2 = beta * beta
    return ratio((1 + b2) * c.tp, (1 + b2) * c.tp + b2 * c.fn + c.fp, zero_division)


def balanced_accuracy(cm):
    """Mean recall over the classes present in the true labels; ``cm : (..., C, C)`` -> ``(...)``.

    scikit-learn's ``balanced_accuracy_score``: a class with no true instance
    (row of zeros) is left out of the mean.
    """
    tp = jnp.diagonal(cm, axis1=-2, axis2=-1)
    support = jnp.sum(cm, axis=-1)
    present = support > 0
    recall = ratio(tp, support, 0.0)
    n_present = jnp.sum(present, axis=-1, dtype=cm.dtype)
    return ratio(jnp.sum(jnp.where(present, recall, 0.0), axis=-1), n_present, jnp.nan)


def macro_mean(c, val, axis=-1):
    """Unweighted mean of per-class ``val`` over the classes that occur; ``(..., C)`` -> ``(...)``.

    ``c`` holds the one-vs-rest counts of the ``C`` classes (fields shaped like
    ``val``, classes on ``axis``). A class occurs when it is true or predicted
    somewhere (``tp + fn + fp > 0``): scikit-learn's ``average="macro"`` with
    ``labels=None``, whose classes are ``unique_labels(y_true, y_pred)``. NaN
    values (a ``zero_division`` of NaN) are left out, as scikit-learn's
    ``_nanaverage``; NaN when nothing is left.
    """
    keep = ((c.tp + c.fn + c.fp) > 0) & ~jnp.isnan(val)
    total = jnp.sum(jnp.where(keep, val, 0.0), axis=axis)
    return ratio(total, jnp.sum(keep, axis=axis, dtype=val.dtype), jnp.nan)


def _macro(cm, part):
    """:func:`macro_mean` of a per-class ratio of ``cm : (..., C, C)``, 0/0 scored 0.

    scikit-learn's default ``zero_division`` (``"warn"``, scored 0).
    """
    c = class_counts(cm)
    if part == "precision":
        val = precision(c, 0.0)
    elif part == "recall":
        val = tpr(c, 0.0)
    else:
        val = f_beta(c, 1.0, 0.0)
    return macro_mean(c, val)


def macro_precision(cm):
    """Macro-averaged precision from ``cm : (..., C, C)`` (scikit-learn's ``average="macro"``)."""
    return _macro(cm, "precision")


def macro_recall(cm):
    """Macro-averaged recall from ``cm : (..., C, C)`` (scikit-learn's ``average="macro"``)."""
    return _macro(cm, "recall")


def macro_f1(cm):
    """Macro-averaged F1 from ``cm : (..., C, C)`` (scikit-learn's ``average="macro"``)."""
    return _macro(cm, "f1")


def _auc_1d(y, s):
    n_pos = jnp.sum(y > 0).astype(s.dtype)
    n_neg = y.shape[0] - n_pos
    srt = jnp.sort(s)
    # Average ranks (1-based) with ties: the Mann-Whitney form of the ROC area.
    lo = jnp.searchsorted(srt, s, side="left")
    hi = jnp.searchsorted(srt, s, side="right")
    ranks = (lo + hi + 1).astype(s.dtype) / 2
    r_pos = jnp.sum(jnp.where(y > 0, ranks, 0))
    u = r_pos - n_pos * (n_pos + 1) / 2
    return ratio(u, n_pos * n_neg, jnp.nan)


def roc_auc(y, s):
    """Area under the ROC curve, ties counted 1/2; ``y, s : (..., n)`` -> ``(...)``."""
    return jnp.vectorize(_auc_1d, signature="(n),(n)->()")(y, s)


def roc_auc_grouped(y, s, member):
    """ROC area of each group of instances; ``y, s : (n,)``, ``member : (n, G)`` bool -> ``(G,)``.

    The Mann-Whitney form of :func:`roc_auc` with ranks taken among a group's
    instances only (NaN for a group without both classes). Pure; no validation.
    """
    n = s.shape[-1]
    # Scores as their global tie-sharing ranks: integers below n, so n marks "not in
    # the group" whatever the scores (no sentinel value can tie with a real one).
    g = jnp.searchsorted(jnp.sort(s), s, side="left")

    def one(m):
        ks = jnp.sort(jnp.where(m, g, n))
        lo = jnp.searchsorted(ks, g, side="left")
        hi = jnp.searchsorted(ks, g, side="right")
        ranks = (lo + hi + 1).astype(s.dtype) / 2
        pos, neg = m & (y > 0), m & ~(y > 0)
        n_pos = jnp.sum(pos).astype(s.dtype)
        n_neg = jnp.sum(neg).astype(s.dtype)
        u = jnp.sum(jnp.where(pos, ranks, 0)) - n_pos * (n_pos + 1) / 2
        return ratio(u, n_pos * n_neg, jnp.nan)

    return jax.vmap(one, in_axes=1)(member)


def _ap_1d(y, s):
    neg = -s
    srt = jnp.sort(neg)
    order = jnp.argsort(neg)
    tps = jnp.cumsum((y[order] > 0).astype(s.dtype))
    # Each positive counts the precision at the end of its tie group, so tied
    # scores form one threshold, as in scikit-learn's average_precision_score.
    end = jnp.searchsorted(srt, neg, side="right") - 1
    prec = tps[end] / (end + 1).astype(s.dtype)
    n_pos = jnp.sum(y > 0).astype(s.dtype)
    return ratio(jnp.sum(jnp.where(y > 0, prec, 0)), n_pos, jnp.nan)


def average_precision(y, s):
    """Average precision (area under the step PR curve); ``(..., n)`` -> ``(...)``."""
    return jnp.vectorize(_ap_1d, signature="(n),(n)->()")(y, s)


def binary_clf_curve(y, s):
    """Cumulative (fps, tps) at each score sorted descending, and the threshold mask.

    ``y, s : (n,)``. Returns ``(fps, tps, thresholds, last)`` where ``last`` marks
    the final position of each group of tied scores (the distinct thresholds).
    """
    order = jnp.argsort(-s, stable=True)
    ss = s[order]
    pos = (y[order] > 0).astype(s.dtype)
    tps = jnp.cumsum(pos)
    fps = jnp.cumsum(1 - pos)
    last = jnp.concatenate([ss[1:] != ss[:-1], jnp.ones((1,), bool)])
    return fps, tps, ss, last


def rmse(y, f):
    """Root mean squared error over the last axis ("Evaluation" lecture notes)."""
    return jnp.sqrt(jnp.mean(jnp.square(f - y), axis=-1))


def pearson(x, y):
    """Pearson correlation over the last axis; NaN when either input is constant."""
    xc = x - jnp.mean(x, axis=-1, keepdims=True)
    yc = y - jnp.mean(y, axis=-1, keepdims=True)
    num = jnp.sum(xc * yc, axis=-1)
    den = jnp.sqrt(jnp.sum(xc * xc, axis=-1) * jnp.sum(yc * yc, axis=-1))
    return ratio(num, den, jnp.nan)
