"""The permuted label streams of built-in learners: batched fits, sort-based and sort-free draws.

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
learners' multiclass fits, scored from per-fold confusion matrices. So do real
targets, groups and ``permute="train"``; those permutations are drawn on the host
(JAX's uniforms, numpy's stable sorts).

Every label vector is whole before its fit, and the fits (all but the kernel
machines') see the rows padded to a fine ladder of sizes (at most 1/8 more) with weight
0, so a new row count in a bucket compiles nothing. The sort-free draws and the ridge
stream take the fold sizes traced (their slot masks and key and rank widths): their
programs depend on the folds' number and slots (32 a step) only.
"""

import dataclasses
import functools
import os
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtests import _aot, _distributed, _learners, _random
from jaxtests._buckets import bucket, fine_bucket, pad_axis
from jaxtests._models import Model
from jaxtests._sanity_scores import count_scores, fold_scores
from jaxtests._validation import to_device
from jaxtests.kernels import labels as klabels
from jaxtests.kernels import learners as klearners
from jaxtests.kernels import measures as kmeasures
from jaxtests.kernels import ridge_partition as kridge_partition

_BLOCK_BYTES = 2**23  # a block of permuted labels: about 8 MB as float64
_CALL_BLOCKS = 16  # label blocks per call of the compiled ridge stream
_TF32_ENV = "JAXTESTS_RIDGE_TF32"  # override of _tf32_decisions: "1" or "0"
# Label vectors per fit where they come from the host (explicit permutations, and the
# sort-based paths: groups, permute="train", regression, multiclass), at most the learner's
# chunk: fewer cost more calls (~0.1-0.4 ms each), more cost more padding in a run's last fit.
_HOST_CHUNK = 64


def block_rows(n):
    """Permutations per label block for ``n`` instances (a power of two in [32, 1024])."""
    rows = 2 ** int(np.floor(np.log2(max(1, _BLOCK_BYTES // (8 * n)))))
    return int(min(1024, max(32, rows)))


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


def _fit_scores(X, Y, y, train, test_index, valid, *, kind, task, params, **options):
    """:func:`_score_labels` of the model ``Model(kind, task, params)``: static arguments
    with a stable ``repr`` (a program kept on disk: :func:`jaxtests._aot.call`)."""
    return _score_labels(Model(kind, task, params), X, Y, y, train, test_index, valid, **options)


_FIT_SCORES = jax.jit(
    _fit_scores,
    static_argnames=("kind", "task", "params", "scoring", "classification", "n_classes"),
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
    model = fit.model
    static = dict(
        kind=model.kind,
        task=model.task,
        params=model.params,
        scoring=fit.scoring,
        classification=fit.classification,
        n_classes=fit.n_classes,
    )
    args = (data.X, Y, data.y, data.train, data.index, data.valid)
    work = int(np.size(Y)) * int(data.X.shape[-1])  # fits times the features
    return _aot.call(_FIT_SCORES, "sanity_streams._fit_scores", args, static, work=work)


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


def _sorted_labels(key, y, train, strata, *, mode, start, count):
    """Label vectors ``(count, n)`` (``(count, K, n)`` for ``mode="train"``) of the sort-based
    permutations ``start .. start + count - 1`` (:func:`_permute_within_strata`, one key
    ``fold_in(key, i)`` each), numpy.

    Drawn on the host for JAX's default threefry keys and float64 labels: the same
    uniforms and stable sorts, so the same permutations, and no program for any row
    count; otherwise by :func:`_permute_labels`.
    """
    words = _random.host_words(key)
    y = np.asarray(y)
    if words is None or y.dtype != np.float64:
        index = np.asarray(start, np.int32) + np.arange(count, dtype=np.int32)
        return np.asarray(_permute_labels(key, index, y, train, strata, mode=mode))
    index = np.arange(start, start + count, dtype=np.int64).astype(np.uint32)
    k0, k1 = _random.fold_in_pair(words[0], words[1], index)
    n, strata = y.shape[0], np.asarray(strata)
    if mode == "train":
        K = train.shape[0]
        u = _random.uniform64_pairs(k0, k1, K * n).reshape(count, K, n)
        # test instances are their own singleton strata: they never move
        s = np.where(np.asarray(train) > 0, strata[None, :], strata.max() + 1 + np.arange(n))
        order = _stable_order(s.astype(y.dtype) * 2 + u)
        slots = np.broadcast_to(np.argsort(s, axis=-1, kind="stable"), order.shape)
        perm = np.empty_like(order)
        np.put_along_axis(perm, slots, order, axis=-1)
        return y[perm]
    u = _random.uniform64_pairs(k0, k1, n)
    order = _stable_order(strata.astype(y.dtype) * 2 + u)
    perm = np.empty_like(order)
    perm[:, np.argsort(strata, kind="stable")] = order
    return y[perm]


def _stable_order(keys):
    """``np.argsort(keys, axis=-1, kind="stable")`` (``jnp.argsort``'s order): a quicksort,
    4x faster, and a stable sort of the rows where two keys are equal (about 1e-11 a row)."""
    order = np.argsort(keys, axis=-1)
    ordered = np.take_along_axis(keys, order, axis=-1)
    tied = np.any(ordered[..., 1:] == ordered[..., :-1], axis=-1)
    if np.any(tied):
        order[tied] = np.argsort(keys[tied], axis=-1, kind="stable")
    return order


@functools.partial(jax.jit, static_argnames="mode")
def _permute_labels(key, index, y, train, strata, *, mode):
    """:func:`_permute_within_strata` of the keys ``fold_in(key, i)`` of ``index``."""
    keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(index)
    return _permute_within_strata(keys, y, train, strata, mode)


_ridge_partition = jax.jit(
    kridge_partition.ridge_partition, static_argnames=("sizes", "alpha", "standardize")
)


@functools.partial(jax.jit, static_argnames=("rows", "shape"))
def _label_words(words, n_pos, masks, widths, *, rows, shape):
    """Packed bits ``(W, rows)`` of a label block under its key words (:func:`_block_words`).

    The fold sizes are traced (``masks`` and ``widths``, their
    :func:`~jaxtests.kernels.labels.slot_masks` and
    :func:`~jaxtests.kernels.labels.label_widths`) and ``shape`` is their
    :class:`~jaxtests.kernels.labels.LabelShape`: a new row count of the same shape
    compiles nothing, with the same draws.
    """
    return klabels.draw_binary_labels_from_words(words, rows, n_pos, shape, masks, widths)


def _block_labels(words, n_pos, masks, widths, inverse, *, rows, shape):
    """``(rows, n)`` ±1 label vectors (float64, numpy) of the block of key words ``words``.

    ``inverse[i]`` is instance ``i``'s slot: the bits are unpacked and put in instance
    order on the host, so no program depends on the row count.
    """
    packed = _aot.call(
        _label_words,
        "sanity_streams._label_words",
        (words, n_pos, masks, widths),
        {"rows": rows, "shape": shape},
        work=rows * len(inverse),
    )
    pos = klabels.unpack_labels(np.asarray(packed), np.float64, xp=np)[inverse]  # instance order
    return (2.0 * pos - 1.0).T


@dataclasses.dataclass(frozen=True)
class _RidgeStream:
    """Static layout of the ridge label stream (a jit static: hashable, compared by value).

    ``shape``: the draws' :class:`~jaxtests.kernels.labels.LabelShape` (every slot is
    read: a count of the slots in use would compile per fold size); ``rows``: label
    vectors per block; ``max_blocks``: blocks per compiled call; ``tf32``: the decisions
    in TF32 with a recheck (:func:`_tf32_decisions`). The fold sizes, their slot masks
    and key widths and the positives' counts are traced: other sizes of the same shape,
    and other labels, reuse the program, with the same draws.
    """

    shape: klabels.LabelShape
    rows: int
    scoring: tuple
    max_blocks: int = _CALL_BLOCKS
    tf32: bool = False

    @classmethod
    def of(cls, sizes, rows, scoring, platform="cpu"):
        shape = klabels.label_shape(sizes)
        return cls(shape, rows, scoring, tf32=_tf32_decisions(platform))


def _tf32_decisions(platform):
    """Whether the ridge stream's decision dot takes TF32 on ``platform`` (issue 41).

    The one place the precision is chosen. On NVIDIA (and AMD) GPUs a float32 dot
    of ``Precision.DEFAULT`` runs with 10-bit mantissas, 6x faster than a true
    float32 one on an H200; its error bound is handled by the recheck of
    ``ridge_partition_counts(decision_fn=...)``. Elsewhere (the CPU: DEFAULT is
    float32 there anyway; TPUs: DEFAULT is bfloat16, outside the bound) the
    decisions stay ``Precision.HIGHEST``, the program unchanged. Every other dot
    of the stream stays HIGHEST: see the note in ``kernels/ridge_partition.py``.
    ``JAXTESTS_RIDGE_TF32=1`` (``=0``) forces the TF32 program (the HIGHEST one)
    on any platform, read at each call: the recheck runs on a CPU too (where
    DEFAULT is true float32), and a GPU can time both.
    """
    forced = os.environ.get(_TF32_ENV, "")
    if forced in ("0", "1"):
        return forced == "1"
    return platform in ("cuda", "rocm")


@jax.jit
def _label_block_words(key, blocks):
    """``(len(blocks), 4)`` key words ``label_key_words(fold_in(key, block))`` of label blocks."""
    return jax.vmap(lambda b: klabels.label_key_words(jax.random.fold_in(key, b)))(blocks)


def _block_words(key, start, n_blocks, max_blocks):
    """:func:`_label_block_words` of blocks ``start ..``: ``(max_blocks, 4)``, zero past the last.

    On the host for JAX's default threefry keys: the same words, no program to compile.
    """
    out = np.zeros((max_blocks, 4), np.uint32)
    words = _random.host_words(key)
    if words is not None:  # all blocks at once: fold_in, fold_in, bits
        blocks = np.arange(start, start + n_blocks, dtype=np.int64).astype(np.uint32)
        b0, b1 = _random.fold_in_pair(words[0], words[1], blocks)
        for j in (0, 1):
            out[:n_blocks, 2 * j : 2 * j + 2] = _random.bits_pair(
                *_random.fold_in_pair(b0, b1, j), 2
            )
        return out
    blocks = np.arange(start, start + n_blocks, dtype=np.int32)
    out[:n_blocks] = np.asarray(_label_block_words(key, blocks))
    return out


def _ridge_binary_stream(
    part, key, start, n_blocks, n_pos, sizes, masks, widths, *, stream, observed=None, work=None
):
    """Scores ``(max_blocks * rows, S)`` of label blocks ``start .. start + n_blocks - 1``.

    ``sizes : (K,)`` the fold sizes (float64), ``masks`` and ``widths`` their
    :func:`~jaxtests.kernels.labels.slot_masks` and
    :func:`~jaxtests.kernels.labels.label_widths`. Rows past ``n_blocks * rows`` are
    left zero. The blocks' key words are derived first (:func:`_block_words`), so
    the compiled stream (:func:`_ridge_stream`) holds no threefry. ``observed``:
    the observed labels' confusion counts ``(4, K)`` (tp, fn, fp, tn per fold);
    given, their scores ``(S,)`` are returned too, by the same program. ``work``: the
    call's labels times the partition's size (its program's compile tier,
    :mod:`jaxtests._aot`); None: this call's blocks.
    """
    start, n_blocks = int(start), int(n_blocks)
    words = _block_words(key, start, n_blocks, stream.max_blocks)
    K = stream.shape.groups
    counts = np.zeros((4, K)) if observed is None else np.asarray(observed, np.float64)
    # through the programs kept on disk: a later process neither traces nor lowers it
    out, obs = _aot.call(
        _ridge_stream,
        "sanity_streams._ridge_stream",
        (part, words, np.int32(n_blocks), n_pos, sizes, masks, widths, counts),
        {"stream": stream},
        work=work or n_blocks * stream.rows * max(np.size(a) for a in jax.tree.leaves(part)),
    )
    return out if observed is None else (out, np.asarray(obs)[0])


@functools.partial(jax.jit, static_argnames="stream")
def _ridge_stream(part, words, n_blocks, n_pos, sizes, masks, widths, observed, *, stream):
    """:func:`_ridge_binary_stream` of the blocks of key words ``words : (max_blocks, 4)``.

    Also the scores ``(1, S)`` of confusion counts ``observed : (4, K)``, by the
    function of every permuted score: in this program, the observed labels'
    scores need none of their own. The block count is traced, so the loop body is
    the same code for any number of blocks.
    """
    rows = stream.rows
    K, m = stream.shape.groups, stream.shape.slots
    size = sizes[:, None]

    def body(i, out):
        words_i = lax.dynamic_index_in_dim(words, i, keepdims=False)
        packed = klabels.draw_binary_labels_from_words(
            words_i, rows, n_pos, stream.shape, masks, widths
        )
        # a conditional on a traced (always true) predicate stores the labels
        # once: XLA would otherwise re-derive them inside each consumer
        labels = lax.cond(
            i >= 0,
            lambda w: klabels.unpack_labels(w).reshape(K, m, rows),
            lambda w: jnp.zeros((K, m, rows), jnp.float32),
            packed,
        )
        decision_fn = kridge_partition.tf32_decisions if stream.tf32 else None
        tp, pp, p = kridge_partition.ridge_partition_counts(part, labels, decision_fn=decision_fn)
        tp, pp, p = (c.astype(jnp.float64) for c in (tp, pp, p))
        fn, fp = p - tp, pp - tp
        s = count_scores(tp.T, fn.T, fp.T, (size - p - fp).T, stream.scoring)
        return lax.dynamic_update_slice_in_dim(out, s, i * rows, axis=0)

    out = jnp.zeros((stream.max_blocks * rows, len(stream.scoring)), jnp.float64)
    obs = count_scores(*(observed[j][None] for j in range(4)), stream.scoring)
    return lax.fori_loop(0, n_blocks, body, out), obs


def _host_ridge_counts(plan):
    """Observed confusion counts ``(4, K)`` (tp, fn, fp, tn per fold) of the ridge classifier.

    Its decisions in numpy on the host; the scores come from the ridge stream's
    program (:func:`count_scores`, the function of every permuted score: equal
    counts, equal scores), so neither a fit nor a scoring program is compiled.
    None where numpy refuses a singular system (the jitted fit then scores it).
    """
    h = plan.model.hyper
    y = np.asarray(plan.y, np.float64)
    index = np.asarray(plan.index)
    try:
        with np.errstate(all="ignore"):  # as JAX: a one-class fold gives inf/NaN
            f = klearners.ridge_fold_decisions(
                np.asarray(plan.X, np.float64),
                y[None],
                np.asarray(plan.train, np.float64),
                index,
                h["alpha"],
                h["standardize"],
                xp=np,
            )
    except np.linalg.LinAlgError:
        return None
    v, t, p = np.asarray(plan.valid), y[index] > 0, f[0] > 0
    return np.stack([np.sum(v & a & b, -1) for a, b in ((t, p), (t, ~p), (~t, p), (~t, ~p))])


def _partition(train, test):
    """Fold order and sizes when the test sets partition the instances, else None."""
    if train.shape[0] < 2 or not np.array_equal(train, ~test):
        return None
    if not np.all(test.sum(0) == 1):
        return None
    order = np.concatenate([np.flatnonzero(t) for t in test])
    return order, tuple(int(v) for v in test.sum(1))


def _builtin_scores(plan, progress):
    """Observed and permuted scores of a built-in learner (``(S,)`` and ``(B, S)``)."""
    with _aot.one_call():  # every program's tier is chosen once for the call, counted once
        return _scores(plan, progress)


def _scores(plan, progress):
    """:func:`_builtin_scores`."""
    y, B, key = plan.y, plan.n_permutations, plan.key
    n = y.shape[0]
    n_classes = 0 if plan.classes is None else len(plan.classes)
    fit = _Fit(plan.model, plan.scoring, plan.classification, n_classes)
    sort_free = (
        plan.perms is None
        and plan.classification
        and plan.permute == "all"
        and not plan.grouped
        and plan.classes is None
    )
    split = _partition(plan.train, plan.test) if sort_free else None
    ridge_stream = (
        split is not None
        and plan.model.kind == "ridge_classifier"
        and all(kmeasures.measure(s).source == "counts" for s in fit.scoring)
    )
    counts = _host_ridge_counts(plan) if ridge_stream else None
    kernel = fit.model.kind in _learners.KERNEL_MACHINES
    # Every label vector is made whole before its fit (on the host, or by a program of its
    # own), so the fits see the rows padded to their fine bucket (weight 0) and the test
    # indices padded to theirs, as in cross_validate: a new row count compiles no fit. Not
    # a kernel machine: its working sets follow the rounding.
    data = _device_data(plan, pad=not kernel)
    n_fit = data.X.shape[0]  # the rows a fit holds
    chunk = fit.chunk
    # Label vectors per fit, fixed for the run: every fit takes `width` of them (the last
    # call's padded), so a permutation's score depends on neither B nor batch_size (batched
    # products round by their shape), and the observed labels, scored in that shape, share
    # the program (each row's fit is its own: the same bits).
    width = min(chunk, block_rows(n))  # powers of two: the sort-free blocks hold whole fits
    if not sort_free:  # label vectors from the host
        width = min(width, _HOST_CHUNK)
    # explicit and sort-based permutations: calls of whole fits
    step = width * -(-(plan.batch_size or chunk) // width)
    obs = None  # the ridge stream scores the observed counts
    if counts is None:
        # permute="train" fits labels per fold (the observed ones in every fold)
        shape = (width, plan.train.shape[0], n) if plan.permute == "train" else (width, n)
        Y0 = pad_axis(np.broadcast_to(np.asarray(y), shape), n_fit)
        obs = np.asarray(_data_scores(fit, data, Y0))[0]
    done = 0

    def report(k):
        nonlocal done
        done += k
        if progress is not None:
            progress(done, B)

    def start_chunks(Y, on=data):
        """The fits of label vectors ``Y`` started on ``on``'s device: ``[(scores, m)]``."""
        # fits of `width` label vectors, the last padded with copies of its last one. Cut
        # and padded in numpy: an eager jnp operation compiles a program per shape.
        Y = pad_axis(Y, n_fit)
        out = []
        for s in range(0, Y.shape[0], width):
            part = Y[s : s + width]
            m = part.shape[0]
            if m < width:
                part = np.concatenate([part, np.broadcast_to(part[-1:], (width - m, *Y.shape[1:]))])
            out.append((_data_scores(fit, on, part), m))
        return out

    def scores_of(started):
        return np.concatenate([np.asarray(s)[:m] for s, m in started])

    def land(out):
        chunks.append(np.asarray(out))
        report(chunks[-1].shape[0])

    # Each loop deals its calls out over every local device of the data's backend (the data
    # copied once to each; _distributed.dealt), read back in order: each call's scores
    # depend on its own labels only, so the devices change no bit. A kernel machine's
    # solver loops on the host: one device.
    devices = _distributed.local_devices(data.X)[: 1 if kernel else None]

    def copies_for(items, *arrays):
        """``arrays`` on each device that ``items`` will use (one an item at most)."""
        return _distributed.replicas(arrays, devices[: max(1, len(items))])

    def dealt(items, copies, start, land):
        _distributed.dealt(enumerate(items), len(copies), lambda item: start(*item), land)

    chunks = []
    if plan.perms is not None:
        starts = _mine(range(0, B, step))
        copies = copies_for(starts, data)
        yh = np.asarray(y)  # the labels permuted on the host: no program per shape

        def start_perms(i, s):
            return start_chunks(
                yh[np.asarray(plan.perms[s : s + step])], copies[i % len(copies)][0]
            )

        dealt(starts, copies, start_perms, lambda started: land(scores_of(started)))
        return obs, _joined(chunks, obs)

    # the sort-based path: regression, groups, permute="train" and multiclass labels
    if not sort_free:
        mode = plan.permute if plan.permute == "train" else "all"
        starts = _mine(range(0, B, step))
        copies = copies_for(starts, data)
        yh, train, strata = np.asarray(y), np.asarray(plan.train), np.asarray(plan.strata)

        def start_sorted(i, s):
            count = min(step, B - s)
            Y = _sorted_labels(key, yh, train, strata, mode=mode, start=s, count=count)
            return start_chunks(Y, copies[i % len(copies)][0])

        dealt(starts, copies, start_sorted, lambda started: land(scores_of(started)))
        return obs, _joined(chunks, obs)

    # binary labels, permuted over all instances: sort-free blocks
    rows = block_rows(n)
    n_blocks = -(-B // rows)
    order = split[0] if split is not None else np.arange(n)
    if plan.by_fold:  # each fold keeps its number of positives
        n_pos = [int(np.sum(y[t] > 0)) for t in plan.test]
    else:
        n_pos = [int(np.sum(y > 0))]
    n_pos = np.asarray(n_pos, np.uint32)  # traced: other labels, same program
    # blocks per call: the compiled stream always holds _CALL_BLOCKS blocks and
    # runs a traced number of them, so no batch size triggers a compilation
    per_call = min(_CALL_BLOCKS, -(-(plan.batch_size or _CALL_BLOCKS * rows) // rows))
    if ridge_stream:
        sizes = split[1]
        h = plan.model.hyper
        # on the host: the per-fold systems in numpy (a program per row count otherwise)
        with np.errstate(all="ignore"):  # as JAX: a singular system gives inf/NaN
            part = kridge_partition.ridge_partition(
                np.asarray(plan.X, np.float64)[order],
                sizes,
                h["alpha"],
                standardize=h["standardize"],
                xp=np,
            )
        part = jax.tree.map(to_device, part)
        # the platform the stream runs on: where its data lives
        platform = next(iter(part.XT.devices())).platform
        layout = _RidgeStream.of(sizes, rows, fit.scoring, platform)
        fold_sizes = to_device(np.asarray(sizes, np.float64))
        masks = to_device(klabels.slot_masks(sizes))
        widths = to_device(klabels.label_widths(sizes))

        # labels scored times the partition's size: the stream's compile tier (jaxtests._aot)
        work = B * max(np.size(a) for a in jax.tree.leaves(part))

        starts = _mine(range(0, n_blocks, per_call))
        streams = copies_for(starts, part, fold_sizes, masks, widths)

        def start_stream(i, b0, nb=None):
            nonlocal obs
            p, s, m, wd = streams[i % len(streams)]
            nb = min(per_call, n_blocks - b0) if nb is None else nb
            first = counts is not None and obs is None  # the observed scores, once
            out = _ridge_binary_stream(
                p,
                key,
                b0,
                nb,
                n_pos,
                s,
                m,
                wd,
                stream=layout,
                observed=counts if first else None,
                work=work,
            )
            if first:
                out, obs = out
                obs = np.asarray(obs)
            return out, nb, b0

        def land_stream(started):
            out, nb, b0 = started
            land(np.asarray(out)[: min(nb * rows, B - b0 * rows)])

        dealt(starts, streams, start_stream, land_stream)
        if obs is None:  # this process drew no blocks: the observed scores alone
            start_stream(0, 0, 0)
        return obs, _joined(chunks, obs)

    # instance order[offs[k] + j] sits in slot k m + j of the label draws
    sizes = split[1] if split is not None else (n,)
    m = klabels.label_slots(sizes)
    slot = np.concatenate([k * m + np.arange(s) for k, s in enumerate(sizes)])
    inverse = slot[np.argsort(order)]
    blocks = _mine(range(n_blocks))
    # the blocks' key words on the host, all at once; the labels' program sees the fold sizes
    # traced (one program per label shape) and they are put in instance order on the host
    words = _block_words(key, blocks[0], len(blocks), len(blocks)) if blocks else None
    shape = klabels.label_shape(sizes)
    copies = copies_for(
        blocks,
        data,
        to_device(klabels.slot_masks(sizes)),
        to_device(klabels.label_widths(sizes)),
        to_device(n_pos),
    )

    def start_block(i, blk):
        on, masks, widths, pos = copies[i % len(copies)]
        Y = _block_labels(
            words[blk - blocks[0]], pos, masks, widths, inverse, rows=rows, shape=shape
        )
        return start_chunks(Y[: min(rows, B - blk * rows)], on)

    dealt(blocks, copies, start_block, lambda started: land(scores_of(started)))
    return obs, _joined(chunks, obs)


def _device_data(plan, pad):
    """The run's :class:`_Data` on the device; ``pad``: the rows padded to the fine bucket of
    ``n`` (:func:`~jaxtests._buckets.fine_bucket`: zeros of weight 0 in every fold, never
    tested) and the test indices to the shape bucket of the largest fold (entries not
    valid)."""
    arrays = [
        np.asarray(plan.X),
        np.asarray(plan.y),
        np.asarray(plan.train, np.float64),
        np.asarray(plan.index),
        np.asarray(plan.valid),
        np.asarray(plan.strata),
    ]
    if pad:  # the fits' time follows the rows: a fine ladder (the test indices only score)
        n, m = fine_bucket(arrays[1].shape[0]), bucket(arrays[3].shape[-1])
        arrays = [
            pad_axis(arrays[0], n, axis=0),
            pad_axis(arrays[1], n),
            pad_axis(arrays[2], n),
            pad_axis(arrays[3], m),
            pad_axis(arrays[4], m),
            pad_axis(arrays[5], n),
        ]
    # numpy put on the device: jnp.asarray compiles a program per shape
    return _Data(*(to_device(a) for a in arrays))


def _mine(items):
    """This process's contiguous share of a label stream's chunks (all of them with one)."""
    lo, hi = _distributed.share(len(items))
    return items[lo:hi]


def _joined(chunks, obs):
    """The scores of every process's chunks, in permutation order."""
    # on the host: an eager concatenate compiles a program per shape
    chunks = [np.asarray(c) for c in chunks]
    local = np.concatenate(chunks) if chunks else np.zeros((0, obs.shape[-1]), obs.dtype)
    _distributed.WORK["labels"] += local.shape[0]
    return _distributed.gather_rows(local)
