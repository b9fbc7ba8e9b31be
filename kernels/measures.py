"""Performance-measure kernels: confusion counts, ratios, ranking and regression measures.

Shapes: instance axis last, ``(..., n_instances)``; counts have the batch shape
``(...)`` (binary) or ``(..., n_classes)`` (one-vs-rest). Pure; no validation.
Binary labels are ±1 with +1 the positive class; a value is read as +1 iff it
is ``> 0``, so a decision value ``f = 0`` predicts -1 (scikit-learn's
``scores > 0``), the rule of the 0/1 loss too (``jaxtests.kernels.losses``).
Counts are floats of the input dtype so they feed the test statistics
directly.
"""

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp

__all__ = [
    "MEASURES",
    "ConfusionCounts",
    "Measure",
    "accuracy",
    "average_precision",
    "balanced_accuracy",
    "binary_clf_curve",
    "class_counts",
    "class_sum",
    "confusion_counts",
    "confusion_matrix",
    "error",
    "f_beta",
    "fpr",
    "macro_mean",
    "mcc",
    "measure",
    "measure_names",
    "overall_accuracy",
    "overall_error",
    "pearson",
    "precision",
    "ratio",
    "rmse",
    "roc_auc",
    "roc_auc_grouped",
    "specificity",
    "tpr",
    "two_classes",
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


def two_classes(c):
    """One-vs-rest counts of the classes (-1, +1) from binary counts; fields ``(..., 2)``.

    Class 0 (-1) has ``(tp, fn, fp, tn) = (tn, fp, fn, tp)`` of the positive class:
    the counts of the 2 x 2 confusion matrix that :func:`class_counts` reads.
    """
    return ConfusionCounts(
        jnp.stack([c.tn, c.tp], -1),
        jnp.stack([c.fp, c.fn], -1),
        jnp.stack([c.fn, c.fp], -1),
        jnp.stack([c.tp, c.tn], -1),
    )


def overall_accuracy(c, zero_division=jnp.nan, axis=-1):
    """Accuracy from the one-vs-rest counts of all classes (on ``axis``): trace over total."""
    return ratio(jnp.sum(c.tp, axis=axis), jnp.sum(c.tp + c.fn, axis=axis), zero_division)


def overall_error(c, zero_division=jnp.nan, axis=-1):
    """Error from the one-vs-rest counts of all classes (on ``axis``): ``1 - trace / total``."""
    total = jnp.sum(c.tp + c.fn, axis=axis)
    return ratio(total - jnp.sum(c.tp, axis=axis), total, zero_division)


def balanced_accuracy(c, zero_division=jnp.nan, axis=-1):
    """Mean recall over the classes present in the true labels (one-vs-rest counts on ``axis``).

    scikit-learn's ``balanced_accuracy_score``: a class with no true instance
    is left out of the mean; ``zero_division`` when no class is present.
    """
    support = c.tp + c.fn
    present = support > 0
    recall = ratio(c.tp, support, 0.0)
    n_present = jnp.sum(present, axis=axis, dtype=c.tp.dtype)
    total = class_sum(jnp.where(present, recall, 0.0), axis=axis)
    return ratio(total, n_present, zero_division)


def mcc(c, zero_division=0.0, axis=-1):
    """Matthews correlation coefficient from the one-vs-rest counts of all classes (on ``axis``).

    Gorodkin's (2004) multiclass form, scikit-learn's ``matthews_corrcoef``:
    ``(s c - sum_k t_k p_k) / sqrt((s^2 - sum_k p_k^2) (s^2 - sum_k t_k^2))`` with
    ``c`` correct, ``s`` instances, ``t_k`` true and ``p_k`` predicted instances of
    class ``k``; for two classes ``(tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn))``.
    ``zero_division`` where a marginal is constant (scikit-learn: 0, no correlation).
    """
    t = c.tp + c.fn
    p = c.tp + c.fp
    s = jnp.sum(t, axis=axis)
    cov_tp = jnp.sum(c.tp, axis=axis) * s - jnp.sum(t * p, axis=axis)
    cov_pp = s * s - jnp.sum(p * p, axis=axis)
    cov_tt = s * s - jnp.sum(t * t, axis=axis)
    return ratio(cov_tp, jnp.sqrt(cov_tt * cov_pp), zero_division)


def class_sum(x, axis=-1):
    """Sum over the classes on ``axis`` in their order, by explicit adds.

    A reduce's order is each backend's own (an H200 summed a macro F1's three classes
    otherwise than XLA:CPU: a null distribution 2 ulp apart); XLA keeps the order of
    elementwise adds, so the same draws give the same bits on every device.
    """
    x = jnp.moveaxis(x, axis, -1)
    total = x[..., 0]
    for k in range(1, x.shape[-1]):
        total = total + x[..., k]
    return total


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
    total = class_sum(jnp.where(keep, val, 0.0), axis=axis)
    return ratio(total, jnp.sum(keep, axis=axis, dtype=val.dtype), jnp.nan)


# ---------------------------------------------------------------- the measure table


@dataclasses.dataclass(frozen=True)
class Measure:
    """One performance measure by name: the one row every consumer reads.

    ``binary(c, zero_division)``: the value from the positive class's counts
    ``c`` (fields ``(...)``); None: ``classes`` of :func:`two_classes`.
    ``classes(c, zero_division, axis)``: from the one-vs-rest counts of all
    classes (class axis ``axis``); None: binary only. ``zero_division`` is the
    value of a ratio with a zero denominator where the measure's definition
    leaves it open (a positive-class ratio, accuracy); macro averages score a
    class's 0/0 as 0 (scikit-learn's default) and MCC its own (0, scikit-learn).
    ``source``: "counts" (confusion counts), "count" (one of them), "scores"
    (ranking measures of decision values) or "targets" (regression).
    ``low, high``: the range, whose magnitude scales the tie tolerance of
    differences. ``aliases``: other names that mean this row.
    """

    name: str
    higher_is_better: bool
    binary: Callable | None = None
    classes: Callable | None = None
    source: str = "counts"
    low: float = 0.0
    high: float = 1.0
    aliases: tuple = ()

    @property
    def multiclass(self):
        """Whether multiclass results take this measure."""
        return self.classes is not None

    @property
    def magnitude(self):
        """Largest absolute value: the scale of a difference's rounding (tie tolerance)."""
        return max(abs(self.low), abs(self.high))

    def of_binary(self, c, zero_division):
        """The value from binary counts ``c`` (fields ``(...)``)."""
        if self.binary is not None:
            return self.binary(c, zero_division)
        return self.classes(two_classes(c), zero_division, -1)


def _count(field):
    return lambda c, zero_division: getattr(c, field)


def _macro(per_class):
    """scikit-learn's ``average="macro"`` of a per-class ratio, a class's 0/0 scored 0."""
    return lambda c, zero_division, axis=-1: macro_mean(c, per_class(c, 0.0), axis)


def _f1(c, zero_division=jnp.nan):
    return f_beta(c, 1.0, zero_division)


def _mcc(c, zero_division, axis=-1):
    return mcc(c, 0.0, axis)  # scikit-learn's value of 0/0, whatever the consumer's


_INF = float("inf")

MEASURES = {
    m.name: m
    for m in (
        Measure("tp", True, _count("tp"), source="count", high=_INF),
        Measure("fn", False, _count("fn"), source="count", high=_INF),
        Measure("fp", False, _count("fp"), source="count", high=_INF),
        Measure("tn", True, _count("tn"), source="count", high=_INF),
        Measure("tpr", True, tpr, aliases=("sensitivity",)),
        Measure("recall", True, tpr),
        Measure("fpr", False, fpr),
        Measure("precision", True, precision),
        Measure("specificity", True, specificity, aliases=("tnr",)),
        Measure("f1", True, _f1),
        Measure("accuracy", True, accuracy, overall_accuracy),
        Measure("error", False, error, overall_error),
        Measure("balanced_accuracy", True, None, balanced_accuracy),
        Measure("precision_macro", True, None, _macro(precision)),
        Measure("recall_macro", True, None, _macro(tpr)),
        Measure("f1_macro", True, None, _macro(_f1), aliases=("macro_f1",)),
        Measure("mcc", True, None, _mcc, low=-1.0),
        Measure("roc_auc", True, source="scores", aliases=("auc",)),
        Measure("average_precision", True, source="scores", aliases=("pr_auc",)),
        Measure("rmse", False, source="targets", high=_INF),
    )
}
_BY_ALIAS = {a: m for m in MEASURES.values() for a in (m.name, *m.aliases)}


def measure(name):
    """The row of a measure name or alias; None for a name the table does not hold."""
    return _BY_ALIAS.get(name) if isinstance(name, str) else None


def measure_names(*sources, multiclass=False, aliases=False):
    """Names of the rows from ``sources`` (all when none), in table order.

    ``multiclass``: only those multiclass results take; ``aliases``: each row's
    aliases after its name.
    """
    out = []
    for m in MEASURES.values():
        if (not sources or m.source in sources) and (m.multiclass or not multiclass):
            out += [m.name, *m.aliases] if aliases else [m.name]
    return tuple(out)


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
