"""Label-permutation sanity check: Ojala & Garriga (2010) test 1 (Hein).

Cross-validate the model on the data, then on ``n_permutations`` copies of the
data with permuted labels; the p-value is the fraction of permuted runs that
score at least as well. Built-in learners train all permuted label vectors at
once; scikit-learn estimators fall back to joblib.

Binary labels permuted over all instances (the common case) are drawn sort-free
and exactly uniformly in fixed blocks of :func:`block_rows` permutations
(``jaxtests.kernels.labels.draw_binary_labels``), block ``j`` from the key
``fold_in(key, j)``, so the permutations do not depend on ``batch_size``; with
folds stratified on the labels each fold keeps its number of positives. For the
ridge classifier on k-fold splits a block's scores come from per-fold confusion
counts (``ridge_partition_counts``: products in the cheap order, float32 with a
proven error bound and a float64 recomputation of any label vector whose
decisions the bound cannot settle) inside a ``lax.fori_loop`` over blocks:
memory does not grow with the number of permutations.

Multiclass labels (three or more classes, encoded as the indices of the sorted
classes as in ``cross_validate``) take the sort-based path: one permutation of
the class vector per key ``fold_in(key, b)`` (within each fold of a stratified
split, so every fold keeps its class counts), fitted in vmapped chunks by the
learners' multiclass fits, scored from per-fold confusion matrices.
"""

import dataclasses
import functools
import numbers
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtests import _distributed, _learners
from jaxtests._estimators import (
    _normalise_models,
    is_builtin,
    model_task,
    sklearn_outputs,
    sklearn_predictions,
)
from jaxtests._precision import x64
from jaxtests._progress import as_progress
from jaxtests._pvalues import CI_LEVEL, clopper_pearson, tie_tol
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests._splitters import KFold, RandomSplits, make_splits, padded_test_index
from jaxtests._validation import (
    as_class_labels,
    as_float_array,
    as_int_scalar,
    as_label_array,
    check_choice,
)
from jaxtests.kernels import labels as klabels
from jaxtests.kernels import learners as klearners
from jaxtests.kernels import measures as kmeasures
from jaxtests.kernels import ridge_partition as kridge_partition

__all__ = ["PermutationTestScoreResult", "permutation_test_score"]

# every measure of confusion counts in the table (jaxtests.kernels.measures.MEASURES), and
# the ROC area, which fold_scores computes from the decision values
_CLF_SCORES = (*kmeasures.measure_names("counts", aliases=True), "roc_auc", "auc")
_MULTICLASS_SCORES = kmeasures.measure_names("counts", multiclass=True, aliases=True)
_REG_SCORES = ("r2", "neg_mean_squared_error", "neg_mean_absolute_error")
_BLOCK_BYTES = 2**23  # a block of permuted labels: about 8 MB as float64
_CALL_BLOCKS = 16  # label blocks per call of the compiled ridge stream
_SORTED_CHUNK = 16  # fits per chunk on the sort-based paths (groups, permute="train", regression)


def block_rows(n):
    """Permutations per label block for ``n`` instances (a power of two in [32, 1024])."""
    rows = 2 ** int(np.floor(np.log2(max(1, _BLOCK_BYTES // (8 * n)))))
    return int(min(1024, max(32, rows)))


# ---------------------------------------------------------------- scoring kernels


def count_scores(tp, fn, fp, tn, scoring):
    """Mean over folds of count-based scores; counts ``(B, K)`` float -> ``(B, S)``.

    Pure; the observed score and every permuted score are computed by this
    function, from confusion counts (the rows of
    :data:`jaxtests.kernels.measures.MEASURES`, a ratio's 0/0 scored 0), so
    equal counts give equal scores.
    """
    c = kmeasures.ConfusionCounts(tp, fn, fp, tn)
    out = [jnp.mean(kmeasures.measure(s).of_binary(c, 0.0), axis=-1) for s in scoring]
    return jnp.stack(out, axis=-1)


def matrix_scores(cm, scoring):
    """Mean over folds of confusion-matrix scores; ``cm : (B, K, C, C)`` -> ``(B, S)``.

    Pure; rows are the true class; the multiclass rows of
    :data:`jaxtests.kernels.measures.MEASURES` (scikit-learn's definitions).
    """
    c = kmeasures.class_counts(cm)
    out = [jnp.mean(kmeasures.measure(s).classes(c, 0.0, -1), axis=-1) for s in scoring]
    return jnp.stack(out, axis=-1)


def fold_scores(f, yt, valid, scoring, classification, n_classes=0):
    """Mean over folds of each score; ``f, yt : (B, K, m)``, ``valid : (K, m)`` -> ``(B, S)``.

    Pure; binary classification scores other than ``roc_auc`` go through
    :func:`count_scores`. ``n_classes > 0``: ``f`` and ``yt`` are class indices
    and the scores come from per-fold ``C x C`` confusion matrices
    (:func:`matrix_scores`).
    """
    v = valid[None]
    cnt = jnp.sum(valid, axis=-1).astype(f.dtype)[None]
    out = []
    if n_classes:
        cls = jnp.arange(n_classes, dtype=f.dtype).reshape(1, 1, 1, n_classes)
        T = ((yt[..., None] == cls) & v[..., None]).astype(f.dtype)
        P = (f[..., None] == cls).astype(f.dtype)
        return matrix_scores(jnp.einsum("bkmi,bkmj->bkij", T, P), scoring)
    if classification:
        t, p = yt > 0, f > 0
        tp = jnp.sum(v & t & p, -1, dtype=f.dtype)
        fn = jnp.sum(v & t & ~p, -1, dtype=f.dtype)
        fp = jnp.sum(v & ~t & p, -1, dtype=f.dtype)
        tn = jnp.sum(v & ~t & ~p, -1, dtype=f.dtype)
        for s in scoring:
            if kmeasures.measure(s).source == "counts":
                out.append(count_scores(tp, fn, fp, tn, (s,))[..., 0])
                continue
            # Mann-Whitney with ties 1/2, masked pairwise
            pos = v & t
            neg = v & ~t
            gt = (f[..., :, None] > f[..., None, :]).astype(f.dtype)
            eq = (f[..., :, None] == f[..., None, :]).astype(f.dtype)
            pair = (pos[..., :, None] & neg[..., None, :]).astype(f.dtype)
            val = jnp.sum(pair * (gt + 0.5 * eq), axis=(-2, -1)) / jnp.sum(pair, (-2, -1))
            out.append(jnp.mean(val, axis=-1))
    else:
        r = jnp.where(v, yt - f, 0.0)
        for s in scoring:
            if s == "neg_mean_squared_error":
                val = -jnp.sum(r * r, -1) / cnt
            elif s == "neg_mean_absolute_error":
                val = -jnp.sum(jnp.abs(r), -1) / cnt
            else:  # r2 on the test fold, as sklearn's r2_score
                ybar = jnp.sum(jnp.where(v, yt, 0.0), -1, keepdims=True) / cnt[..., None]
                sst = jnp.sum(jnp.where(v, (yt - ybar) ** 2, 0.0), -1)
                val = 1 - jnp.sum(r * r, -1) / sst
            out.append(jnp.mean(val, axis=-1))
    return jnp.stack(out, axis=-1)


# ---------------------------------------------------------------- batched fits


def _decisions(model, X, Y, train, test_index, per_fold, n_classes=0):
    """``(B, K, m)`` test-set decisions for label vectors ``Y`` (``(B, n)`` or ``(B, K, n)``).

    ``n_classes > 0``: predicted class indices of the multiclass fits.
    """
    if n_classes:
        if per_fold:
            full = _learners.fold_predictions_per_fold_labels(model, X, Y, train, n_classes)
        else:
            full = _learners.fold_predictions(model, X, Y, train, n_classes)
    elif model.kind in ("ridge", "ridge_classifier"):
        h = model.hyper
        return klearners.ridge_fold_decisions(X, Y, train, test_index, h["alpha"], h["standardize"])
    elif per_fold:
        full = _learners.fold_decisions_per_fold_labels(model, X, Y, train)
    else:
        full = _learners.fold_decisions(model, X, Y, train)
    return jnp.take_along_axis(
        full, jnp.broadcast_to(test_index, full.shape[:2] + test_index.shape[-1:]), axis=-1
    )


def _score_labels(
    model, X, Y, y, train, test_index, valid, *, scoring, classification, n_classes=0
):
    per_fold = Y.ndim == 3
    f = _decisions(model, X, Y, train, test_index, per_fold, n_classes)
    return _test_scores(f, Y, y, test_index, valid, scoring, classification, n_classes)


def _test_scores(f, Y, y, test_index, valid, scoring, classification, n_classes):
    """Scores ``(B, S)`` of test-set outputs ``f : (B, K, m)`` of label vectors ``Y``."""
    if Y.ndim == 3:  # permute="train": test labels are the original ones
        yt = jnp.broadcast_to(y[test_index], f.shape)
    else:
        yt = Y[:, test_index]
    return fold_scores(f, yt, valid, scoring, classification, n_classes)


@functools.partial(jax.jit, static_argnames=("scoring", "classification", "n_classes"))
def _kernel_test_scores(full, Y, y, test_index, valid, *, scoring, classification, n_classes):
    """:func:`_test_scores` of a kernel machine's outputs at all rows ``full : (B, K, n)``."""
    f = jnp.take_along_axis(
        full, jnp.broadcast_to(test_index, full.shape[:2] + test_index.shape[-1:]), axis=-1
    )
    return _test_scores(f, Y, y, test_index, valid, scoring, classification, n_classes)


_score_labels_jit = jax.jit(
    _score_labels, static_argnames=("model", "scoring", "classification", "n_classes")
)


@dataclasses.dataclass(frozen=True)
class _Fit:
    """Static part of the compiled fits: hashable and compared by value (a jit static)."""

    model: object  # a jaxtests.models.Model
    scoring: tuple
    classification: bool
    n_classes: int = 0  # multiclass: the number of classes; 0 otherwise

    @property
    def chunk(self):
        """Label vectors per vmapped fit (the learner table's ``fit_chunk``)."""
        return _learners.learner(self.model.kind).fit_chunk


class _Data(NamedTuple):
    """Device arrays of a run, passed to the compiled fits as one pytree.

    ``X (n, d)``, ``y (n,)``, training weights ``train (F, n)``, padded test
    indices ``index, valid (F, m)``, permutation ``strata (n,)``.
    """

    X: jax.Array
    y: jax.Array
    train: jax.Array
    index: jax.Array
    valid: jax.Array
    strata: jax.Array


def _data_scores(fit, data, Y):
    """Scores ``(B, S)`` of label vectors ``Y`` (``(B, n)``, or ``(B, F, n)`` per fold)."""
    if fit.model.kind in _learners.KERNEL_MACHINES:
        # SMO solves in host-level calls of bounded time: Ctrl-C stops within a second or so.
        full = _learners.kernel_outputs(fit.model, data.X, Y, data.train, fit.n_classes)
        return _kernel_test_scores(
            full,
            Y,
            data.y,
            data.index,
            data.valid,
            scoring=fit.scoring,
            classification=fit.classification,
            n_classes=fit.n_classes,
        )
    return _score_labels_jit(
        fit.model,
        data.X,
        Y,
        data.y,
        data.train,
        data.index,
        data.valid,
        scoring=fit.scoring,
        classification=fit.classification,
        n_classes=fit.n_classes,
    )


def _permute_within_strata(keys, y, train, strata, mode):
    """Sort-based permutations (``permute="train"``, groups, real targets); one key each."""
    n = y.shape[0]

    def one(k):
        if mode == "train":
            K = train.shape[0]
            u = jax.random.uniform(k, (K, n), dtype=y.dtype)
            # test instances are their own singleton strata: they never move
            s = jnp.where(train > 0, strata[None, :], strata.max() + 1 + jnp.arange(n)[None, :])
            order = jnp.argsort(s.astype(y.dtype) * 2 + u, axis=-1)
            # stable inverse: the element at sorted position i of stratum goes to the
            # i-th slot of that stratum (slots listed in index order)
            slots = jnp.argsort(s, axis=-1, stable=True)
            perm = jnp.zeros((K, n), order.dtype).at[jnp.arange(K)[:, None], slots].set(order)
            return y[perm]
        u = jax.random.uniform(k, (n,), dtype=y.dtype)
        order = jnp.argsort(strata.astype(y.dtype) * 2 + u)
        slots = jnp.argsort(strata, stable=True)
        perm = jnp.zeros(n, order.dtype).at[slots].set(order)
        return y[perm]

    return jax.vmap(one)(keys)


def _sorted_scores(data, key, start, *, fit, mode, size):
    """:func:`_sorted_block`; kernel machines fit its chunks in host-level calls."""
    if fit.model.kind not in _learners.KERNEL_MACHINES:
        return _sorted_block(data, key, start, fit=fit, mode=mode, size=size)
    chunk = min(fit.chunk, _SORTED_CHUNK)
    Y = _sorted_labels(data, key, start, fit=fit, mode=mode, size=size)
    out = [_data_scores(fit, data, Y[c : c + chunk]) for c in range(0, Y.shape[0], chunk)]
    return jnp.concatenate(out)[:size]


@functools.partial(jax.jit, static_argnames=("fit", "mode", "size"))
def _sorted_labels(data, key, start, *, fit, mode, size):
    """The label vectors of :func:`_sorted_block`, its chunks concatenated (the last padded)."""
    chunk = min(fit.chunk, _SORTED_CHUNK)
    n_chunks = -(-size // chunk)
    keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(
        start + jnp.arange(n_chunks * chunk, dtype=start.dtype)
    )
    return _permute_within_strata(keys, data.y, data.train, data.strata, mode)


@functools.partial(jax.jit, static_argnames=("fit", "mode", "size"))
def _sorted_block(data, key, start, *, fit, mode, size):
    """Scores ``(size, S)`` of sort-based permutations ``start .. start + size - 1``."""
    # one key per permutation index: draws do not depend on the block size
    chunk = min(fit.chunk, _SORTED_CHUNK)
    n_chunks = -(-size // chunk)
    keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(
        start + jnp.arange(n_chunks * chunk, dtype=start.dtype)
    )

    def scores(ks):
        Y = _permute_within_strata(ks, data.y, data.train, data.strata, mode)
        return _data_scores(fit, data, Y)

    # fits in fixed-size chunks (the last padded): batched products round
    # differently for different batch shapes, and a permutation's score must
    # not depend on `batch_size` or on the number of permutations
    out = lax.map(scores, keys.reshape(n_chunks, chunk))
    return out.reshape(n_chunks * chunk, -1)[:size]


_ridge_partition = jax.jit(
    kridge_partition.ridge_partition, static_argnames=("sizes", "alpha", "standardize")
)


@functools.partial(jax.jit, static_argnames=("rows", "n_pos", "sizes"))
def _binary_labels(key, block, inverse, *, rows, n_pos, sizes):
    """``(rows, n)`` ±1 label vectors of block ``block`` in instance order."""
    words = klabels.draw_binary_labels(jax.random.fold_in(key, block), rows, n_pos, sizes)
    pos = klabels.unpack_labels(words, jnp.float64)[inverse]  # slot order -> instance order
    return (2 * pos - 1).T


@dataclasses.dataclass(frozen=True)
class _RidgeStream:
    """Static layout of the ridge label stream (a jit static: hashable, compared by value).

    ``sizes``: fold sizes; ``rows``: label vectors per block; ``n_pos``: positives
    (an int, or one per fold when the folds keep theirs); ``max_blocks``: blocks
    per compiled call.
    """

    sizes: tuple
    rows: int
    n_pos: object
    scoring: tuple
    max_blocks: int = _CALL_BLOCKS


@functools.partial(jax.jit, static_argnames="stream")
def _ridge_binary_stream(part, key, start, n_blocks, *, stream):
    """Scores ``(max_blocks * rows, S)`` of label blocks ``start .. start + n_blocks - 1``.

    Rows past ``n_blocks * rows`` are left zero. The block count is traced, so
    the loop body is the same code for any number of blocks.
    """
    sizes, rows, n_pos = stream.sizes, stream.rows, stream.n_pos
    K, m = len(sizes), klabels.label_slots(sizes)
    used = min(m, 8 * -(-max(sizes) // 8))  # slots past every fold's size are padding
    size = jnp.asarray(sizes, jnp.float64)[:, None]

    def body(i, out):
        words = klabels.draw_binary_labels(jax.random.fold_in(key, start + i), rows, n_pos, sizes)
        # a conditional on a traced (always true) predicate stores the labels
        # once: XLA would otherwise re-derive them inside each consumer
        labels = lax.cond(
            i >= 0,
            lambda w: klabels.unpack_labels(w).reshape(K, m, rows)[:, :used],
            lambda w: jnp.zeros((K, used, rows), jnp.float32),
            words,
        )
        tp, pp, p = kridge_partition.ridge_partition_counts(part, labels)
        tp, pp, p = (c.astype(jnp.float64) for c in (tp, pp, p))
        fn, fp = p - tp, pp - tp
        s = count_scores(tp.T, fn.T, fp.T, (size - p - fp).T, stream.scoring)
        return lax.dynamic_update_slice_in_dim(out, s, i * rows, axis=0)

    out = jnp.zeros((stream.max_blocks * rows, len(stream.scoring)), jnp.float64)
    return lax.fori_loop(0, n_blocks, body, out)


# ---------------------------------------------------------------- result


@result
class PermutationTestScoreResult:
    """Result of :func:`permutation_test_score`.

    Attributes
    ----------
    statistic : float or (S,) array
        Cross-validated score on the original labels (mean over folds).
    pvalue : float or (S,) array
        ``(C + 1) / (n_permutations + 1)``, ``C`` = permuted scores ``>=`` the
        observed one (Ojala & Garriga 2010, eq. 1; Phipson & Smyth: never 0).
    permutation_scores : (n_permutations,) or (n_permutations, S) array
    pvalue_interval : (2,) or (S, 2) array
        99% Clopper–Pearson interval for the exact permutation p-value, given
        the Monte Carlo count.
    classes : tuple or None
        Multiclass: the sorted distinct labels (class ``i`` is ``classes[i]``).
    """

    statistic: jax.Array
    pvalue: jax.Array
    permutation_scores: jax.Array
    pvalue_interval: jax.Array
    scoring: object = static_field(default="accuracy")
    n_permutations: int = static_field(default=0)
    permute: str = static_field(default="all")
    seed: object = static_field(default=None)
    classes: tuple | None = static_field(default=None)

    @property
    def score(self):
        """Alias of ``statistic`` (scikit-learn's name)."""
        return self.statistic


def _pvalues(obs, perm):
    """p-values ``(C + 1) / (B + 1)`` ``(S,)`` and intervals ``(S, 2)`` of scores ``(S,), (B, S)``.

    ``C`` counts the permuted scores at least the observed one, ties within
    ``tie_tol(observed, 1)`` included: the scores are O(1) (accuracies, AUCs,
    r2), so round-off is relative to ``max(|score|, 1)``.
    """
    obs = np.asarray(obs, np.float64)
    perm = np.asarray(perm, np.float64)
    tol = np.asarray(tie_tol(obs, 1.0))
    C = np.sum(perm >= obs[None] - tol[None], axis=0)
    B = perm.shape[0]
    lo, hi = clopper_pearson(C, B, CI_LEVEL)
    return (C + 1) / (B + 1), np.stack([lo, hi], axis=-1)


@dataclasses.dataclass(frozen=True, eq=False)
class _Plan:
    """A validated run of :func:`permutation_test_score` (``_permutation_test_score_iv``).

    Arrays are numpy. ``train, test : (F, n)`` are the folds of all repetitions
    (``F = R K``), ``index, valid : (F, m)`` their padded test indices;
    ``strata : (n,)`` the cells that permutations keep (groups, and folds when
    ``by_fold``); ``perms`` the explicit ``(B, n)`` permutations or None;
    ``key`` the permutation key.
    """

    model: object
    classification: bool
    classes: object  # multiclass: tuple of the sorted labels; None otherwise
    X: np.ndarray
    y: np.ndarray
    train: np.ndarray
    test: np.ndarray
    index: np.ndarray
    valid: np.ndarray
    scoring: tuple
    single: bool
    permute: str
    grouped: bool
    by_fold: bool
    strata: np.ndarray
    perms: object
    n_permutations: int
    batch_size: object
    key: jax.Array
    seed: object


def _permutation_test_score_iv(
    model, X, y, cv, n_permutations, scoring, key, permute, groups, permutations, batch_size
):
    """Validate the arguments of :func:`permutation_test_score`; return the :class:`_Plan`."""
    [(_, model)] = _normalise_models({"model": model})
    task = model_task(model, "model")
    classification = task == "classification"
    X = np.asarray(as_float_array(X, "X", ndim=2))
    classes = None
    if classification:
        y_in = y if isinstance(y, jax.Array | np.ndarray) else np.asarray(y)
        if y_in.ndim == 1:  # two classes: ±1 as before; three or more: indices 0..C-1
            y, classes = as_class_labels(y_in, "y")
        else:
            y = as_label_array(y, "y")
        y = np.asarray(y)
    else:
        y = np.asarray(as_float_array(y, "y", ndim=1))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"`y` must be 1-d with one entry per row of `X` ({X.shape[0]}), got shape {y.shape}."
        )
    single = isinstance(scoring, str)
    scoring = (scoring,) if single else tuple(scoring)
    if not scoring:
        raise ValueError("`scoring` is empty.")
    for s in scoring:
        if classes is not None and s in _CLF_SCORES and s not in _MULTICLASS_SCORES:
            raise ValueError(
                f"`scoring`={s!r} is binary only; `y` has {len(classes)} classes: use one of "
                f"{list(_MULTICLASS_SCORES)}."
            )
        check_choice(s, "scoring", _CLF_SCORES if classification else _REG_SCORES)
    check_choice(permute, "permute", ("all", "train"))
    n = y.shape[0]
    if groups is not None:
        g = np.asarray(groups)
        if g.shape != (n,):
            raise ValueError(f"`groups` must have shape ({n},), got {g.shape}.")
        if g.dtype.kind in "fc" and np.any(np.isnan(g)):
            raise ValueError(f"`groups` holds NaN at index {int(np.flatnonzero(np.isnan(g))[0])}.")
        strata = np.unique(g, return_inverse=True)[1].astype(np.int64)
    else:
        strata = np.zeros(n, np.int64)
    if permutations is not None:
        perms = np.asarray(permutations)
        if perms.ndim != 2 or perms.shape[1] != n or perms.dtype.kind not in "iu":
            raise ValueError(f"`permutations` must be an integer array of shape (B, {n}).")
        if not np.all(np.sort(perms, axis=1) == np.arange(n)):
            bad = int(np.flatnonzero(np.any(np.sort(perms, axis=1) != np.arange(n), axis=1))[0])
            raise ValueError(f"`permutations` row {bad} is not a permutation of 0..{n - 1}.")
        if permute != "all":
            raise ValueError("explicit `permutations` apply to all labels (`permute='all'`).")
        # with `groups` the null permutes within groups only (scikit-learn's
        # _shuffle): a row that moves a label across groups is another test
        moved = strata[perms] != strata[None, :]
        if np.any(moved):
            b, i = (int(v) for v in np.argwhere(moved)[0])
            raise ValueError(
                f"`permutations` row {b} moves instance {perms[b, i]} to {i}, across `groups`."
            )
        B = perms.shape[0]
    else:
        perms = None
        B = as_int_scalar(
            1000 if n_permutations is None else n_permutations, "n_permutations", minimum=1
        )
    if batch_size is not None:
        batch_size = as_int_scalar(batch_size, "batch_size", minimum=1)
    typed_key, seed = resolve_key(key)
    split_key, perm_key = jax.random.split(typed_key)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        cv = KFold(as_int_scalar(cv, "cv", minimum=2), stratified=classification)
    splits = make_splits(cv, y, split_key, classification)
    if classification and np.all(y == y[0]):
        raise ValueError("`y` holds a single class; permutation gives nothing to test.")
    if permute == "train" and splits.shape[0] * splits.shape[1] > 1:
        warnings.warn(
            "permute='train' with several folds is anti-conservative (each fold is "
            "permuted on its own); use permute='all' for cross-validated scores.",
            RuntimeWarning,
            stacklevel=4,  # the caller of permutation_test_score (past the x64 wrapper)
        )
    # A split stratified on the labels makes the observed labels special (every
    # fold has the class ratio); the exact null keeps each fold's number of
    # positives. Several stratified repetitions have no such simple null.
    by_fold = False
    if (
        classification
        and permute == "all"
        and perms is None
        and isinstance(cv, KFold | RandomSplits)
        and cv.stratified
    ):
        if isinstance(cv, RandomSplits) or splits.shape[0] > 1:
            raise ValueError(
                "`cv`: label permutations cannot keep the stratification of several "
                "stratified repetitions or random splits; use one stratified k-fold, "
                "`stratified=False`, or explicit folds."
            )
        by_fold = True
        K = splits.shape[1]
        fold = np.argmax(splits.test[0], axis=0)
        strata = np.unique(strata * K + fold, return_inverse=True)[1].astype(np.int64)
    R, K = splits.shape
    train = splits.train.reshape(R * K, -1)
    test = splits.test.reshape(R * K, -1)
    index, valid = padded_test_index(test[None])
    return _Plan(
        model=model,
        classification=classification,
        classes=classes,
        X=X,
        y=y,
        train=train,
        test=test,
        index=index[0],
        valid=valid[0],
        scoring=scoring,
        single=single,
        permute=permute,
        grouped=groups is not None,
        by_fold=by_fold,
        strata=strata,
        perms=perms,
        n_permutations=B,
        batch_size=batch_size,
        key=perm_key,
        seed=seed,
    )


def _partition(train, test):
    """Fold order and sizes when the test sets partition the instances, else None."""
    if train.shape[0] < 2 or not np.array_equal(train, ~test):
        return None
    if not np.all(test.sum(0) == 1):
        return None
    order = np.concatenate([np.flatnonzero(t) for t in test])
    return order, tuple(int(v) for v in test.sum(1))


@x64
def permutation_test_score(
    model,
    X,
    y,
    *,
    cv=5,
    n_permutations=None,
    scoring="accuracy",
    key=None,
    permute="all",
    groups=None,
    permutations=None,
    batch_size=None,
    n_jobs=None,
    progress=None,
):
    """Permutation test of a cross-validated score (Ojala & Garriga 2010, test 1; Hein).

    Parameters
    ----------
    model : jaxtests.models spec or scikit-learn estimator
    X : (n, d) array
    y : (n,) array
        ±1 or {0, 1} labels (binary classifiers), or any other two values (strings,
        {1, 2}: the later of the two sorted values is the positive class +1, as
        scikit-learn's ``LabelBinarizer``); three or more distinct labels
        (integers or strings) for multiclass, encoded as the indices of the
        sorted classes (the result's ``classes``); real targets (regressors).
    cv : int, splitter or iterable of (train, test) index arrays
        An int is a stratified (classifiers) k-fold shuffled with ``key``.
    n_permutations : int, optional
        Number of random permutations (default 1000); with ``permutations``,
        leave it out or give the number of rows.
    scoring : str or sequence of str
        Classifiers: ``accuracy``, ``balanced_accuracy``, ``error``,
        ``recall``/``tpr``, ``fpr``, ``specificity``, ``precision``, ``f1``,
        ``mcc`` (Matthews correlation, scikit-learn's ``matthews_corrcoef``),
        ``roc_auc``, ``precision_macro``, ``recall_macro``, ``f1_macro``
        (multiclass: ``accuracy``, ``error``, ``balanced_accuracy``, ``mcc`` and
        the three macro averages, scikit-learn's ``average="macro"`` with
        ``labels=None``: the mean over the classes true or predicted in the
        fold, 0 for a zero division; the binary ones are refused); regressors:
        ``r2``, ``neg_mean_squared_error``, ``neg_mean_absolute_error``.
        Several are computed in one pass. Each score is the mean over folds
        (as scikit-learn's).
    key : int, JAX key or None
        Seed of the folds and the permutations; recorded as ``seed``.
    permute : {"all", "train"}
        ``"all"`` permutes every label (scikit-learn's behaviour); ``"train"``
        permutes each fold's training labels only, test labels stay. ``"train"``
        is exact for one train/test split only: with several folds each fold
        gets its own permutation, which loses the coupling of the observed
        folds (a fold's training labels are the other folds' test labels), and
        the test is anti-conservative under the null (about 8% of p-values
        below 0.05 in 5-fold simulations; ``tests/test_sanity_calibration.py``).
        No single permutation keeps every fold's test labels, so use ``"all"``
        to test k-fold scores. When the
        folds are stratified on the labels (an int ``cv`` for a classifier, or
        ``KFold(stratified=True)``), ``"all"`` keeps each fold's number of
        positives: the split depends on the labels, and only permutations that
        keep it stratified give an exact null (with unrestricted permutations
        the observed labels, the only ones stratified, are favoured).
        Stratified splits with several repetitions are refused.
    groups : (n,) array, optional
        Permute only within groups (scikit-learn's ``groups``); with folds
        stratified on the labels and ``"all"``, within group x fold cells.
        Explicit ``permutations`` must keep every instance in its group.
    permutations : (B, n) int array, optional
        Explicit permutations (``y[permutations[b]]`` is the b-th label vector),
        e.g. to reproduce scikit-learn's draws.
    batch_size : int, optional
        Permutations per compiled call, built-in models only (memory and progress
        granularity only): the permutations and the scores do not depend on it.
    n_jobs : int, optional
        joblib workers for scikit-learn estimators (refused for built-in models).
    progress : bool, tqdm bar, callable or None
        None (the default) shows a bar once the call has run 3 s, in an interactive
        session only (stderr a terminal; never under pytest); False none; True shows a
        :mod:`tqdm.auto` bar; a tqdm bar is advanced by the
        permutations done; a callable is called as ``progress(done, total)``
        after each compiled call / permutation.

    Returns
    -------
    PermutationTestScoreResult
        ``statistic`` (alias ``score``), ``pvalue``, ``permutation_scores``,
        ``pvalue_interval``, ``seed``.

    Notes
    -----
    With binary labels permuted over all instances (``permute="all"``, no
    ``groups``, no explicit ``permutations``) the permuted label vectors are
    drawn sort-free and exactly uniformly (see
    ``jaxtests.kernels.labels.draw_binary_labels``) in blocks of
    :func:`block_rows` permutations, block ``j`` from ``fold_in(key, j)``.
    Other modes, and multiclass labels, draw one sort-based permutation per
    key ``fold_in(key, b)``: a permutation keeps the class counts (per fold
    with stratified folds). Multiclass fits are those of ``cross_validate``
    (native, multinomial logistic, one-vs-rest ridge, one-vs-one SVC).
    Every fit and score is in float64. A built-in model fits a chunk of label
    vectors on every fold at once; when a kernel machine's (or kNN's) ``n x n``
    matrices would need more than half of this machine's memory, a
    ``ValueError`` naming the model and the size is raised before any fit.
    Kernel machines (``svc``, ``svr``) run their SMO solves in host-level calls
    of about half a second (the same values as one call), so Ctrl-C stops a
    run within a second or so once its programs are compiled.

    References
    ----------
    Ojala, M. & Garriga, G. C. (2010). Permutation tests for studying classifier
    performance. JMLR 11, 1833–1863.

    Examples
    --------
    >>> from jaxtests import datasets, models
    >>> from jaxtests import permutation_test_score
    >>> X, y = datasets.load_breast_cancer()
    >>> res = permutation_test_score(models.ridge_classifier(), X, y, n_permutations=99, key=0)
    >>> float(res.pvalue)
    0.01
    """
    plan = _permutation_test_score_iv(
        model, X, y, cv, n_permutations, scoring, key, permute, groups, permutations, batch_size
    )
    # None, True (a tqdm.auto bar), a tqdm bar or progress(done, total); else TypeError
    progress = as_progress(progress, desc="label permutations", unit="perm")
    # options that the chosen path would not use are refused, not ignored
    if is_builtin(plan.model) and n_jobs is not None:
        raise ValueError(
            "`n_jobs` applies to scikit-learn estimators (joblib workers); built-in "
            "models run as compiled JAX programs: leave `n_jobs` as None."
        )
    if not is_builtin(plan.model) and batch_size is not None:
        raise ValueError(
            "`batch_size` applies to built-in models; scikit-learn estimators are "
            "refitted one permutation at a time (use `n_jobs`)."
        )
    B = plan.n_permutations
    if permutations is not None and n_permutations is not None and n_permutations != B:
        raise ValueError(
            f"`n_permutations` ({n_permutations}) disagrees with the {B} rows of "
            "`permutations`; give one of them."
        )
    if is_builtin(plan.model):
        # Before any fit: a chunk of label vectors is fitted on every fold at once.
        chunk = _learners.learner(plan.model.kind).fit_chunk
        n_classes = 0 if plan.classes is None else len(plan.classes)
        n, n_folds = plan.X.shape[0], plan.train.shape[0]
        _learners.check_fit_memory(plan.model, "model", n, n_folds, chunk, n_classes)
        obs, null = _builtin_scores(plan, progress)
    else:
        obs, null = _sklearn_permutation_scores(plan, n_jobs, progress)
    pval, interval = _pvalues(obs, null)
    obs = jnp.asarray(obs, jnp.float64)
    null = jnp.asarray(null, jnp.float64)
    pval = jnp.asarray(pval)
    interval = jnp.asarray(interval)
    if plan.single:
        obs, pval, null, interval = obs[0], pval[0], null[:, 0], interval[0]
    return PermutationTestScoreResult(
        statistic=obs,
        pvalue=pval,
        permutation_scores=null,
        pvalue_interval=interval,
        scoring=plan.scoring[0] if plan.single else plan.scoring,
        n_permutations=plan.n_permutations,
        permute=plan.permute,
        seed=plan.seed,
        classes=plan.classes,
    )


def _builtin_scores(plan, progress):
    """Observed and permuted scores of a built-in learner (``(S,)`` and ``(B, S)``)."""
    y, B, key = plan.y, plan.n_permutations, plan.key
    n = y.shape[0]
    n_classes = 0 if plan.classes is None else len(plan.classes)
    fit = _Fit(plan.model, plan.scoring, plan.classification, n_classes)
    data = _Data(
        X=jnp.asarray(plan.X),
        y=jnp.asarray(y),
        train=jnp.asarray(plan.train, jnp.float64),
        index=jnp.asarray(plan.index),
        valid=jnp.asarray(plan.valid),
        strata=jnp.asarray(plan.strata),
    )
    obs = _data_scores(fit, data, data.y[None])[0]
    chunk = fit.chunk
    done = 0

    def report(k):
        nonlocal done
        done += k
        if progress is not None:
            progress(done, B)

    def fit_chunks(Y):
        # fixed-size chunks (last one padded): a permutation's fit never depends on B
        out = []
        for s in range(0, Y.shape[0], chunk):
            part = Y[s : s + chunk]
            m = part.shape[0]
            if m < chunk and Y.shape[0] > chunk:
                part = jnp.concatenate([part, jnp.broadcast_to(part[-1:], (chunk - m, n))])
            out.append(_data_scores(fit, data, part)[:m])
        return jnp.concatenate(out)

    if plan.perms is not None:
        chunks = []
        step = plan.batch_size or chunk
        for s in _mine(range(0, B, step)):
            chunks.append(fit_chunks(data.y[jnp.asarray(plan.perms[s : s + step])]))
            report(min(step, B - s))
        return obs, _joined(chunks, obs)

    # the sort-based path: regression, groups, permute="train" and multiclass labels
    if not (
        plan.classification and plan.permute == "all" and not plan.grouped and plan.classes is None
    ):
        mode = plan.permute if plan.permute == "train" else "all"
        step = plan.batch_size or chunk
        chunks = []
        for s in _mine(range(0, B, step)):
            start, size = jnp.asarray(s, jnp.int32), min(step, B - s)
            chunks.append(_sorted_scores(data, key, start, fit=fit, mode=mode, size=size))
            report(chunks[-1].shape[0])
        return obs, _joined(chunks, obs)

    # binary labels, permuted over all instances: sort-free blocks
    rows = block_rows(n)
    n_blocks = -(-B // rows)
    split = _partition(plan.train, plan.test)  # always a partition when by_fold
    order = split[0] if split is not None else np.arange(n)
    if plan.by_fold:  # each fold keeps its number of positives
        n_pos = tuple(int(np.sum(y[t] > 0)) for t in plan.test)
    else:
        n_pos = int(np.sum(y > 0))
    # blocks per call: the compiled stream always holds _CALL_BLOCKS blocks and
    # runs a traced number of them, so no batch size triggers a compilation
    per_call = min(_CALL_BLOCKS, -(-(plan.batch_size or _CALL_BLOCKS * rows) // rows))
    model = plan.model
    by_counts = all(kmeasures.measure(s).source == "counts" for s in fit.scoring)
    if split is not None and model.kind == "ridge_classifier" and by_counts:
        sizes = split[1]
        h = model.hyper
        part = _ridge_partition(
            data.X[jnp.asarray(order)], sizes, h["alpha"], standardize=h["standardize"]
        )
        layout = _RidgeStream(sizes=sizes, rows=rows, n_pos=n_pos, scoring=fit.scoring)

        def stream(b0):
            nb = min(per_call, n_blocks - b0)
            b0_, nb_ = jnp.asarray(b0, jnp.int32), jnp.asarray(nb, jnp.int32)
            out = _ridge_binary_stream(part, key, b0_, nb_, stream=layout)
            return out[: min(nb * rows, B - b0 * rows)]

        chunks = []
        for b0 in _mine(range(0, n_blocks, per_call)):
            chunks.append(stream(b0))
            report(chunks[-1].shape[0])
        return obs, _joined(chunks, obs)

    # instance order[offs[k] + j] sits in slot k m + j of the label draws
    sizes = split[1] if split is not None else (n,)
    m = klabels.label_slots(sizes)
    slot = np.concatenate([k * m + np.arange(s) for k, s in enumerate(sizes)])
    inverse = jnp.asarray(slot[np.argsort(order)])

    def fit_block(blk):
        Y = _binary_labels(
            key, jnp.asarray(blk, jnp.int32), inverse, rows=rows, n_pos=n_pos, sizes=sizes
        )
        return fit_chunks(Y[: min(rows, B - blk * rows)])

    chunks = []
    for blk in _mine(range(n_blocks)):
        chunks.append(fit_block(blk))
        report(chunks[-1].shape[0])
    return obs, _joined(chunks, obs)


def _mine(items):
    """This process's contiguous share of a label stream's chunks (all of them with one)."""
    lo, hi = _distributed.share(len(items))
    return items[lo:hi]


def _joined(chunks, obs):
    """The scores of every process's chunks, in permutation order."""
    local = jnp.concatenate(chunks) if chunks else jnp.zeros((0, obs.shape[-1]), obs.dtype)
    _distributed.WORK["labels"] += local.shape[0]
    return _distributed.gather_rows(local)


def _sklearn_permutation_scores(plan, n_jobs, progress):
    """joblib fallback: refit a clone of the estimator per fold for each permuted label vector."""
    from joblib import Parallel, delayed

    y, train, index, valid, B = plan.y, plan.train, plan.index, plan.valid, plan.n_permutations
    K = train.shape[0]
    n_classes = 0 if plan.classes is None else len(plan.classes)

    def run(yy):
        # yy: (n,) for permute="all", (K, n) for "train"; joblib may call this in
        # another thread, where the caller's scoped x64 flag does not apply
        with jax.enable_x64(True):
            return _run(yy)

    def _run(yy):
        f = np.zeros(index.shape)
        for k in range(K):
            yk = yy if yy.ndim == 1 else yy[k]
            v = valid[k]
            if n_classes:
                f[k, v] = sklearn_predictions(
                    plan.model, plan.X, yk, train[k], index[k, v], n_classes
                )
            else:
                f[k, v] = sklearn_outputs(plan.model, plan.X, yk, train[k], index[k, v])
        yt = (yy[index] if yy.ndim == 1 else y[index])[None]
        return np.asarray(
            fold_scores(
                jnp.asarray(f[None]),
                jnp.asarray(yt),
                jnp.asarray(valid),
                plan.scoring,
                plan.classification,
                n_classes,
            )
        )[0]

    def labels(b):
        if plan.perms is not None:
            return y[plan.perms[b]]
        k = jax.random.fold_in(plan.key, b)
        if plan.permute == "train":
            out = np.empty((K, y.shape[0]))
            for j in range(K):
                out[j] = _permute_within(
                    jax.random.fold_in(k, j),
                    y,
                    np.where(train[j], plan.strata, -1 - np.arange(y.shape[0])),
                )
            return out
        return _permute_within(k, y, plan.strata)

    obs = run(y)
    results = []
    mine = _mine(range(B))
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(run)(labels(b)) for b in mine)
    for i, r in enumerate(gen, start=1):
        results.append(r)
        if progress is not None:
            progress(i, len(mine))
    _distributed.WORK["labels"] += len(results)
    return obs, _distributed.gather_rows(np.stack(results) if results else np.zeros((0, len(obs))))


def _permute_within(key, y, strata):
    """``y`` permuted uniformly within each stratum (numpy; fallback path)."""
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())
    out = y.copy()
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        out[idx] = y[rng.permutation(idx)]
    return out
