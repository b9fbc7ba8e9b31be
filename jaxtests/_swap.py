"""The swap test: two models' outputs exchanged instance by instance (Hein, lecture 16)."""

import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _planner
from jaxtests import _validation as v
from jaxtests._engine import (
    swap_terms,
)
from jaxtests._precision import x64
from jaxtests._resampling import Requested, check_exact_cap, check_statistic, common_iv, wrap
from jaxtests.kernels import evaluators as kevaluators
from jaxtests.kernels import exceedance as kexceedance
from jaxtests.kernels import measures as kmeasures

__all__ = ["swap_test"]

# every measure of confusion counts (the table's rows), F-beta with its weight, and AUC
_COUNT_MEASURES = (*kmeasures.measure_names("counts", aliases=True), "f_beta")
_MEASURES = (*_COUNT_MEASURES, "auc", "roc_auc")


def _binary_coded(*labels):
    """Whether all label vectors together are coded -1/+1 or 0/1 (binary measures' coding)."""
    vals = np.unique(np.concatenate([np.unique(np.asarray(a)) for a in labels]))
    return bool(np.all(np.isin(vals, (-1, 1))) or np.all(np.isin(vals, (0, 1))))


def _as_class_labels(a, name, measure):
    arr = np.asarray(a)
    if arr.dtype.kind not in "biu" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    ):
        raise ValueError(f"`{name}` must hold integer class labels 0..C-1 for measure={measure!r}.")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"`{name}` must hold class labels 0..C-1; found {arr.min()}.")
    return arr


def _folds_iv(folds, y_true, measure, n):
    """Fold index ``(n,)`` int of each instance (None without folds), checked for "auc"."""
    if folds is None:
        return None
    if callable(measure) or measure != "auc":
        raise ValueError(
            f"`folds` applies to measure='auc' only (got measure={measure!r}): count measures "
            "pool predicted labels, which share one scale across fold models."
        )
    f = np.asarray(folds)
    if f.shape != (n,):
        raise ValueError(
            f"`folds` must hold one fold label per instance, shape ({n},); got {f.shape}."
        )
    if f.dtype.kind == "f":
        v.check_finite(f, "folds")
    try:
        labels, index = np.unique(f, return_inverse=True)
    except TypeError:
        raise TypeError(
            f"`folds` labels must be comparable (one type), got dtype {f.dtype}."
        ) from None
    pos = np.asarray(v.as_label_array(y_true, "y_true")) > 0
    for k, label in enumerate(labels):
        in_fold = index == k
        if pos[in_fold].all() or not pos[in_fold].any():
            missing = "negative" if pos[in_fold].all() else "positive"
            raise ValueError(
                f"`folds`: fold {label.item()!r} has no {missing} instance in `y_true`, so its "
                "AUC is undefined; merge it with another fold or leave `folds` out."
            )
    return index.reshape(n)


def _swap_test_iv(y_true, pred_a, pred_b, measure, beta, opts):
    """Validate :func:`swap_test`'s data and measure; returns the 1-d arrays."""
    if opts.method == "binomial":
        raise ValueError("`method`='binomial' applies to sign-flip tests only.")
    if not callable(measure):
        v.check_choice(measure, "measure", _MEASURES)
    if (
        isinstance(beta, bool | np.bool_)
        or not isinstance(beta, numbers.Real)
        or not (0 < beta < math.inf)
    ):
        raise ValueError(f"`beta` must be a positive number (finite), got {beta!r}.")
    if beta != 1 and (callable(measure) or measure != "f_beta"):
        raise ValueError(
            f"`beta`={beta!r} applies to measure='f_beta' only; got measure={measure!r}."
        )
    yt = v.as_float_array(y_true, "y_true", ndim=1)
    pa = v.as_float_array(pred_a, "pred_a", ndim=1)
    pb = v.as_float_array(pred_b, "pred_b", ndim=1)
    v.check_same_shape(yt, pa, "y_true", "pred_a")
    v.check_same_shape(yt, pb, "y_true", "pred_b")
    n = yt.shape[0]
    if n < 2:
        raise ValueError(f"`y_true` needs at least 2 instances, got {n}.")
    if callable(measure):
        check_statistic(measure, [(n,), (n,)], "measure", f"(y_true, pred) of shapes ({n},)")
    if opts.method == "exact":
        m_eff = int(np.sum(np.asarray(pa) != np.asarray(pb)))
        counts = measure in _COUNT_MEASURES  # at least one (dummy) column in the tables
        n_patterns = 2 ** (max(m_eff, 1) if counts else m_eff)
        check_exact_cap(n_patterns, opts.n_resamples, opts.explicit_n)
    return yt, pa, pb


@x64
def swap_test(
    y_true,
    pred_a,
    pred_b,
    *,
    measure="f1",
    beta=1.0,
    alternative="two-sided",
    n_resamples=None,
    method="auto",
    key=None,
    batch_size=None,
    sequential=None,
    return_null=False,
    progress=None,
    folds=None,
):
    """Paired randomization test for measures that are not sums over instances.

    Each draw swaps the outputs of models A and B on a random subset of
    instances (a fair coin per instance) and recomputes
    ``measure(A*) - measure(B*)``. Under H0 (the two models are exchangeable
    on every instance) all ``2^n`` swaps are equally likely. This is the
    "approximate randomization" test NLP and IR users run for F1.

    Parameters
    ----------
    y_true : array_like, (n,)
        Binary labels in {0, 1} or {-1, +1}; class indices 0..C-1 (with the
        predictions: any other coding) for the multiclass measures.
    pred_a, pred_b : array_like, (n,)
        Predicted labels of the two models (scores for "auc").
    measure : str or callable
        "f1" (default), "f_beta", "auc" (alias "roc_auc") or any measure of
        confusion counts in ``jaxtests.kernels.measures.MEASURES``: "precision",
        "recall", "tpr", "fpr", "specificity", "accuracy", "error", "mcc"
        (Matthews correlation), "balanced_accuracy", "precision_macro",
        "recall_macro", "f1_macro" (alias "macro_f1"). The multiclass ones
        ("accuracy", "error", "mcc", "balanced_accuracy" and the macro averages)
        take class indices 0..C-1; labels coded -1/+1 or 0/1 are the two classes.
        Count measures are recomputed from confusion counts, which are linear in
        the swap bits (fast table path); "auc" and callables
        ``fn(y_true, pred) -> scalar`` are recomputed from the swapped outputs.
        Undefined ratios (0/0) count as 0 (MCC: 0, as scikit-learn's
        ``matthews_corrcoef``). "macro_f1" is scikit-learn's
        ``f1_score(average="macro")`` with ``labels=None``: the unweighted mean
        of per-class F1 over the classes that occur in ``y_true`` or in the
        predictions scored (a class absent from both is left out, not scored
        0). Each rearrangement is scored the same way: ``A*`` and ``B*`` each
        over the classes of ``y_true`` and of their own swapped predictions, so
        every statistic of the null distribution is scikit-learn's difference
        on the swapped prediction vectors.
    beta : float
        F-beta weight for "f_beta" (a positive finite number); any other value
        than 1 with another measure is an error.
    alternative, n_resamples, method, key, batch_size, sequential, return_null, progress
        As in :func:`signflip_test` (also for infinite and NaN statistics);
        "binomial" applies to sign flips only.
        Exact enumeration runs over the instances where the two models' outputs
        differ (swapping equal outputs changes nothing).
    folds : array_like, (n,), optional
        "auc" only: the fold of each instance when the scores come from
        cross-validation (one model per fold and algorithm). The statistic is
        then the mean over folds of the per-fold AUC difference: scores of
        different fold models need not share a scale, so an AUC over scores
        pooled from several folds mixes them (and rejects too often under H0).
        Swaps stay per instance, so within its fold. Every fold needs both
        classes in ``y_true``.

    Returns
    -------
    PermutationTestResult
        ``statistic`` is ``measure(A) - measure(B)``.

    References
    ----------
    Hein, M. (2013). "Performance Measures and Statistical Tests II", lecture 16,
    Machine Learning, Saarland University.
    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero.
    Statistical Applications in Genetics and Molecular Biology 9(1), article 39.

    Examples
    --------
    >>> y = [1, 1, 0, 0, 1, 0]
    >>> r = swap_test(y, [1, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0])
    >>> float(r.pvalue)
    0.5
    """
    opts = common_iv(
        Requested(
            alternative=alternative,
            n_resamples=n_resamples,
            method=method,
            batch_size=batch_size,
            sequential=sequential,
            return_null=return_null,
            key=key,
            progress=progress,
        )
    )
    yt, pa, pb = _swap_test_iv(y_true, pred_a, pred_b, measure, beta, opts)
    measure = "auc" if isinstance(measure, str) and measure == "roc_auc" else measure
    fold_index = _folds_iv(folds, y_true, measure, yt.shape[0])
    if measure in _COUNT_MEASURES:
        return _counts(y_true, pred_a, pred_b, pa, pb, measure, beta, opts)
    return _materialised(y_true, yt, pa, pb, measure, opts, fold_index)


def _counts(y_true, pred_a, pred_b, pa, pb, measure, beta, opts):
    """Count measures: confusion counts change by fixed amounts on swapped instances."""
    n = pa.shape[0]
    diff = np.flatnonzero(np.asarray(pa) != np.asarray(pb))
    m_eff = int(diff.size)
    row = kmeasures.measure(measure)
    if row is not None and row.multiclass and not _binary_coded(y_true, pred_a, pred_b):
        yi = _as_class_labels(y_true, "y_true", measure)
        ai = _as_class_labels(pred_a, "pred_a", measure)
        bi = _as_class_labels(pred_b, "pred_b", measure)
        # At least two classes: the macro path (classes that never occur are left out).
        n_classes = max(2, int(max(yi.max(), ai.max(), bi.max())) + 1)
    else:
        yi = (np.asarray(v.as_label_array(y_true, "y_true")) > 0).astype(np.int64)
        ai = (np.asarray(v.as_label_array(pred_a, "pred_a")) > 0).astype(np.int64)
        bi = (np.asarray(v.as_label_array(pred_b, "pred_b")) > 0).astype(np.int64)
        n_classes = 1
    classes = range(n_classes) if n_classes > 1 else [1]
    rows_a, rows_b = [], []
    for c in classes:
        for pred, rows in ((ai, rows_a), (bi, rows_b)):
            t, p = yi == c, pred == c
            rows += [t & p, ~t & p, t & ~p]  # tp, fp, fn indicators
    ra = np.stack(rows_a).astype(np.float64)
    rb = np.stack(rows_b).astype(np.float64)
    delta = rb - ra  # counts of A change by delta on swapped instances
    m_eff = max(m_eff, 1)
    keep = diff if diff.size else np.array([0])
    dk = delta[:, keep]  # numpy: jnp.asarray without a dtype compiles per shape (jax 0.10)
    meas = "f_beta" if row is None else row.name
    beta_v = float(beta) if measure == "f_beta" else 1.0
    counts_a = ra.sum(axis=1)
    counts_b = rb.sum(axis=1)
    nn = np.float64(n)
    magnitude = 1.0 if row is None else row.magnitude
    obs, tol = _counts_observed(counts_a, counts_b, nn, meas, n_classes, beta_v, magnitude)
    exact, n_total = _planner.draws(opts, 2 ** dk.shape[1], lambda: f"2^{dk.shape[1]} swaps")
    stat = _planner.CountChanges(dk, counts_a, counts_b, nn, meas, n_classes, beta_v)
    res = _planner.Planner().run(stat, obs, tol, opts, exact=exact, n_total=n_total)
    return wrap(obs, (), res, opts.alternative, None)


@functools.partial(jax.jit, static_argnames=("measure", "n_classes", "beta", "magnitude"))
def _counts_observed(counts_a, counts_b, n, measure, n_classes, beta, magnitude):
    """Observed ``measure(A) - measure(B)`` from confusion counts, and its tie tolerance.

    ``magnitude``: the measure's largest absolute value (1 for ratios and MCC).
    """
    fa = kevaluators.count_measure(counts_a[:, None], n, measure, n_classes, beta)
    fb = kevaluators.count_measure(counts_b[:, None], n, measure, n_classes, beta)
    obs = jnp.reshape(fa - fb, (1,))
    return obs, kexceedance.tie_tol(obs, magnitude)


def _materialised(y_true, yt, pa, pb, measure, opts, fold_index=None):
    """AUC and callables: swapped outputs are materialised per block."""
    n = yt.shape[0]
    diff = np.flatnonzero(np.asarray(pa) != np.asarray(pb))
    m_eff = int(diff.size)
    if measure == "auc" and fold_index is not None:
        # Labels and fold membership travel as the columns of one array (the swap
        # evaluator hands the measure one `y`); a module-level measure compiles once.
        member = fold_index[:, None] == np.arange(fold_index.max() + 1)[None, :]
        labels = np.asarray(v.as_label_array(y_true, "y_true"))
        yl = np.column_stack([labels, member.astype(np.float64)])
        fn = _auc_by_fold
    elif measure == "auc":
        yl = v.as_label_array(y_true, "y_true")
        fn = _auc
    else:
        yl = yt
        fn = measure
    fa, fb = swap_terms(fn)(yl, pa, pb)
    observed = jnp.reshape(fa - fb, (1,))
    # AUC lies in [0, 1]; a callable's rounding scales with its two terms.
    magnitude = 1.0 if measure == "auc" else jnp.maximum(jnp.abs(fa), jnp.abs(fb))
    exact, n_total = _planner.draws(opts, 2**m_eff, lambda: f"2^{m_eff} swaps")
    # Only instances whose outputs differ are swapped; the rest stay in place.
    order = np.concatenate([diff, np.setdiff1d(np.arange(n), diff)])
    yo, ao, bo = yl[order], pa[order], pb[order]
    m_sw = max(m_eff, 1)
    tol = kexceedance.tie_tol(observed, magnitude)
    stat = _planner.Swapped(fn, yo, ao, bo, m_sw)
    res = _planner.Planner().run(stat, observed, tol, opts, exact=exact, n_total=n_total)
    return wrap(observed, (), res, opts.alternative, None)


def _auc(y, s):
    return kmeasures.roc_auc(y, s)


def _auc_by_fold(y, s):
    """Mean per-fold AUC; ``y : (n, 1 + K)``: labels, then fold membership (0/1)."""
    return jnp.mean(kmeasures.roc_auc_grouped(y[:, 0], s, y[:, 1:] > 0))
