"""Exactly uniform permuted binary label vectors, drawn without sorting, packed 32 to a word.

The label-permutation test (``permutation_test_score``) draws its permuted ±1
label vectors here: :func:`draw_binary_labels` gives ``n_rows`` vectors with a
fixed number of positives (in all, or per fold) from iid bit-sliced keys and a
radix select (:func:`radix_select`), ties resolved by uniform draws without
replacement. Pure; no validation.

Keying convention of the exact samplers of ``jaxtests.kernels`` (this one,
``resampling.fix_subset_size`` and ``resampling.subset_corrections`` for subsets
of a fixed size): every random word is a counter-based
``random.keyed_words(k0, k1, counter)`` under the key words ``(k0, k1) =
bits(fold_in(key, block))`` of its block of draws, so a draw depends on the key,
its block and its position only, never on the batch size or the devices. The
engine's blocks are ``g // random.KEY_BLOCK`` of the global draw index ``g``
(``random.draw_keys``); here a block is one call, ``n_rows`` label vectors from
the key the caller folded its block index into, with two streams: the key planes
under ``fold_in(key, 0)``, the tie draws under ``fold_in(key, 1)``.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import random as krandom

__all__ = [
    "LabelShape",
    "draw_binary_labels",
    "draw_binary_labels_from_words",
    "label_key_bits",
    "label_key_words",
    "label_shape",
    "label_slots",
    "label_widths",
    "radix_select",
    "ranked_rows",
    "running_count",
    "slot_masks",
    "unpack_labels",
]

_U32 = jnp.uint32
# True float32 products wherever a bound or an integer count assumes them: recent GPUs compute
# float32 dots in TF32 (10-bit mantissas) unless told otherwise.
_F32 = lax.Precision.HIGHEST


def _popcount(x):
    # SWAR popcount: vectorises (x86 has no vector popcnt before AVX512-VPOPCNTDQ)
    x = x - ((x >> _U32(1)) & _U32(0x55555555))
    x = (x & _U32(0x33333333)) + ((x >> _U32(2)) & _U32(0x33333333))
    x = (x + (x >> _U32(4))) & _U32(0x0F0F0F0F)
    return (x * _U32(0x01010101)) >> _U32(24)


def _select_bit(e, rank):
    """Position of the ``rank``-th (0-based) set bit of each uint32 ``e``."""
    pos = jnp.zeros_like(e)
    for h in (16, 8, 4, 2, 1):
        c = _popcount((e >> pos) & _U32((1 << h) - 1))
        go = rank >= c
        rank = jnp.where(go, rank - c, rank)
        pos = jnp.where(go, pos + _U32(h), pos)
    return pos


def label_key_bits(n):
    """Bits per position key used by :func:`draw_binary_labels` for pools of ``n`` positions.

    ``2^b >= 64 n``: the key at a pool's cut is shared with another position
    with probability below ``n / 2^b <= 1/64``, so few rows need the tie loop
    (about 3% of the rows for five pools of 200, in simulation). Ties cost far
    more than a plane.
    """
    return int(n).bit_length() + 6


def radix_select(planes, valid, n_pos, b=None):
    """Split each segment's positions by bit-sliced keys at its ``n_pos``-th smallest key.

    ``planes : (b_max, S, w, R)`` uint32: ``S`` segments of ``w`` words; bit ``i`` of
    word ``v`` of segment ``s`` in plane ``j`` is bit ``b - 1 - j`` (most
    significant first) of the key of position ``32 v + i`` of that segment; only the
    first ``b`` planes are read (``b``: all of them by default, or a traced count);
    ``valid : (S, w)`` uint32 masks of the positions in use; ``n_pos : (S,)``.
    Returns ``(below, n_below, tie)``: the packed sets ``{key < v}`` ``(S, w,
    R)``, their sizes ``(S, R)`` and the tie groups ``{key = v}``, where ``v``
    is the key with ``n_below < n_pos <= n_below + |tie|``. One loop iteration
    per plane, most significant first, keeps XLA from re-deriving the chain of
    masks inside every reduction. Pure; no validation.
    """
    _, S, w, R = planes.shape
    n_pos = jnp.asarray(n_pos, _U32)[:, None]

    def level(j, st):
        below, n_below, tie = st
        zero = tie & ~lax.dynamic_index_in_dim(planes, j, keepdims=False)
        c0 = jnp.sum(_popcount(zero), axis=1, dtype=_U32)
        low = n_below + c0 >= n_pos
        below = jnp.where(low[:, None], below, below | zero)
        n_below = jnp.where(low, n_below, n_below + c0)
        tie = jnp.where(low[:, None], zero, tie & ~zero)
        return below, n_below, tie

    init = (
        jnp.zeros((S, w, R), _U32),
        jnp.zeros((S, R), _U32),
        jnp.broadcast_to(jnp.asarray(valid, _U32)[:, :, None], (S, w, R)),
    )
    return lax.fori_loop(0, planes.shape[0] if b is None else b, level, init)


def label_slots(sizes):
    """Slots per group in :func:`draw_binary_labels`: ``max(sizes)`` rounded up to 32."""
    return 32 * -(-max(sizes) // 32)


class LabelShape(NamedTuple):
    """What a draw's program depends on: ``groups`` of ``slots`` slots. The key and rank
    widths (:func:`label_widths`) are traced: other sizes of the shape compile nothing."""

    groups: int
    slots: int


def label_shape(sizes):
    """The :class:`LabelShape` of group sizes ``sizes``."""
    return LabelShape(len(sizes), label_slots(sizes))


def label_widths(sizes):
    """``(2,)`` int32: the bit lengths of the total and of the largest group size.

    A pool of ``n`` positions draws keys of ``bit_length(n) + 6`` bits
    (:func:`label_key_bits`) and tie ranks from ``bit_length(n)``-bit chunks.
    """
    return np.array([int(sum(sizes)).bit_length(), int(max(sizes)).bit_length()], np.int32)


def slot_masks(sizes):
    """``(K m / 32,)`` uint32 masks of the slots in use (group ``k``: its first ``sizes[k]``)."""
    K, m = len(sizes), label_slots(sizes)
    slots = np.zeros((K, m), bool)
    for k, size in enumerate(sizes):
        slots[k, :size] = True
    slots = slots.reshape(-1, 32)
    return (slots.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1).astype(np.uint32)


def draw_binary_labels(key, n_rows, n_pos, sizes, masks=None, widths=None):
    """Uniformly random label vectors with ``n_pos`` positives, without sorting.

    The ``n = sum(sizes)`` positions sit in ``K = len(sizes)`` groups (folds) of
    ``m = label_slots(sizes)`` slots (a multiple of 32); group ``k`` uses its
    first ``sizes[k]`` slots and the others stay 0, so the unpacked labels
    reshape to ``(K, m, n_rows)``. ``n_pos`` is an int (``n_pos`` positives
    anywhere among the ``n`` positions) or ``K`` counts (each group keeps its own
    number of positives: permutations within groups), concrete or traced. Returns
    packed bits ``(K m / 32, n_rows)`` uint32; bit ``i`` of word ``w`` of a
    column is slot ``32 w + i``.

    Each position gets an iid uniform key of ``b = label_key_bits(pool)`` bits,
    drawn as ``b`` bit planes (counter-based words ``keyed_words`` of
    ``jaxtests.kernels.resampling`` under the key words ``bits(fold_in(key,
    0))``: about 14 integer operations per word, against about 100 for
    threefry). A radix select (:func:`radix_select`), one pass per plane from the
    most significant, finds per pool the key ``v`` with ``#{key < v} < n_pos
    <= #{key <= v}``; the pool's positives are ``{key < v}`` and ``s = n_pos -
    #{key < v}`` members of the tie group ``{key = v}``, drawn one at a time
    uniformly without replacement (a uniform rank among the remaining
    members, by rejection from ``bit_length(n)``-bit chunks of the words
    ``keyed_words`` under ``bits(fold_in(key, 1))`` with counter ``(step S +
    pool) n_rows + row``; the ``g - s`` members left out are drawn instead
    when that is fewer).

    Exactness: iid keys, with ties broken in a uniformly random order, give a
    uniformly random order of a pool's positions (the law of the keys and the
    tie-breaks is invariant under any permutation of the positions, and the
    order is an equivariant function of them). The positives are the first
    ``n_pos`` positions of that order (the keys below ``v``, then the first
    ``s`` members of the tie group in its random order), so every
    ``n_pos``-subset of the pool has probability ``1 / C(size, n_pos)``: each
    row has the law of ``y[permutation]`` for a uniform permutation (within
    groups, for per-group counts) of a label vector with those counts. The
    rows with ties to break (a minority: keys take ``2^b >= 64 n`` values) are
    gathered a sixteenth of a block at a time; a row's rank draws depend only
    on its own index, so its result does not depend on the block's other
    rows. Pure; no
    validation; ``0 <= n_pos <= pool size``.

    ``sizes`` may be a :class:`LabelShape` with the :func:`slot_masks` as ``masks``
    and the :func:`label_widths` as ``widths`` (both traced): one program then
    serves every set of sizes of that shape, with the same draws.
    """
    return draw_binary_labels_from_words(label_key_words(key), n_rows, n_pos, sizes, masks, widths)


def label_key_words(key):
    """``(4,)`` uint32 key words of a draw: ``bits(fold_in(key, 0))``, ``bits(fold_in(key, 1))``.

    The key planes' words and the tie draws' words of :func:`draw_binary_labels`.
    Pure; no validation.
    """
    return jnp.concatenate(
        [jax.random.bits(jax.random.fold_in(key, j), (2,), _U32) for j in (0, 1)]
    )


def draw_binary_labels_from_words(words, n_rows, n_pos, sizes, masks=None, widths=None):
    """:func:`draw_binary_labels` under the key words ``words = label_key_words(key)``.

    For key words derived outside the program (on the host, say): the same
    draws, with no threefry in the program. Pure; no validation.
    """
    shape = sizes if isinstance(sizes, LabelShape) else label_shape(sizes)
    valid = slot_masks(sizes) if masks is None else masks
    n_bits, max_bits = label_widths(sizes) if widths is None else (widths[0], widths[1])
    K, m = shape.groups, shape.slots
    W = K * m // 32
    # an int (one pool), or one count per group; traced counts are fine (no program per count)
    pool = jnp.asarray(n_pos, _U32).reshape(-1)
    S = pool.shape[0]
    if S not in (1, K):
        raise ValueError(f"n_pos holds {S} counts for {K} groups")
    w = W // S
    # label_key_bits of the largest pool: the bit length of its size, plus 6
    b = (max_bits if S > 1 else n_bits) + 6
    k0, k1, t0, t1 = (words[j] for j in range(4))

    # the planes a pool of this shape can need, made at once (one kernel; made in the loop
    # they cost a fifth more): plane j's words are the counters j W n_rows + (s w + v) n_rows
    # + row, and the loop reads the first b
    b_max = int(m if S > 1 else K * m).bit_length() + 6
    planes = krandom.keyed_words(k0, k1, lax.iota(_U32, b_max * W * n_rows))
    planes = planes.reshape(b_max, S, w, n_rows)
    below, n_below, tie = radix_select(planes, valid.reshape(S, w), pool, b)

    counts = _popcount(tie)  # (S, w, R)
    # inclusive prefix counts over words by a triangular float32 product (exact:
    # counts <= 32 w < 2^24); a cumsum would be re-derived inside every consumer
    tri = jnp.asarray(np.tril(np.ones((w, w), np.float32)))
    cum = jnp.einsum(
        "vu,sur->svr", tri, counts.astype(jnp.int32).astype(jnp.float32), precision=_F32
    )
    cum = cum.astype(jnp.int32).astype(_U32)
    g = cum[:, -1]  # (S, R)
    s = pool[:, None] - n_below
    include = s <= g - s
    todo = jnp.where(include, s, g - s)
    L = jnp.maximum(1, jnp.asarray(n_bits, jnp.int32))  # L-bit rank draws cover [0, g): g <= n
    per = 32 // L
    pools = jnp.arange(S, dtype=_U32)[:, None]

    # Rows with picks to make are resolved a chunk of `chunk` rows at a time
    # (most rows have none); a row's rank draws are indexed by its row, so the
    # grouping does not change them.
    chunk = max(1, min(n_rows, -(-n_rows // 16)))
    busy = jnp.any(todo > 0, axis=0)
    order = running_count(busy) - 1
    n_busy = order[-1] + 1

    def pick(st, cols):
        tie, counts, cum, todo, t = st
        remaining = cum[:, -1]
        step = t.astype(_U32) * _U32(S) + pools
        word = krandom.keyed_words(t0, t1, step * _U32(n_rows) + cols.astype(_U32)[None, :])
        mask = jnp.maximum(remaining, _U32(1)) - _U32(1)
        for sh in (1, 2, 4, 8, 16):
            mask = mask | (mask >> _U32(sh))  # next power of two minus one

        def candidate(c, st):  # the word's c-th L-bit chunk, low bits first
            rank, ok = st
            cand = (word >> (L * c).astype(_U32)) & mask
            take = ~ok & (cand < remaining)  # rejection: exactly uniform on [0, remaining)
            return jnp.where(take, cand, rank), ok | take

        zeros = jnp.zeros(remaining.shape, _U32)
        rank, ok = lax.fori_loop(0, per, candidate, (zeros, zeros > 0))
        act = (todo > 0) & ok
        after = (cum > rank[:, None]) & act[:, None]  # words from the one holding the pick on
        sel = after & (cum - counts <= rank[:, None])
        e = jnp.sum(jnp.where(sel, tie, _U32(0)), axis=1, dtype=_U32)
        within = rank - jnp.sum(jnp.where(sel, cum - counts, _U32(0)), axis=1, dtype=_U32)
        bit = _U32(1) << _select_bit(e, within)
        tie = tie ^ jnp.where(sel, bit[:, None], _U32(0))
        counts = counts - sel.astype(_U32)
        return tie, counts, cum - after.astype(_U32), todo - act.astype(_U32), t + 1

    def more_chunks(st):
        return st[0] * chunk < n_busy

    def resolve(st):
        i, left = st
        idx = ranked_rows(busy, order, i * chunk, chunk)
        cols = jnp.minimum(idx, n_rows - 1)
        sub = (tie[:, :, cols], counts[:, :, cols], cum[:, :, cols])
        sub_todo = jnp.where(idx < n_rows, todo[:, cols], _U32(0))
        done, *_ = lax.while_loop(
            lambda s: jnp.any(s[3] > 0),
            lambda s: pick(s, cols),
            (*sub, sub_todo, jnp.zeros((), jnp.int32)),
        )
        return i + 1, left.at[:, :, idx].set(done, mode="drop")

    _, left = lax.while_loop(more_chunks, resolve, (jnp.zeros((), jnp.int32), tie))
    # include: the picked members (tie minus what is left); else the members left
    out = below | jnp.where(include[:, None], tie & ~left, left)
    return out.reshape(W, n_rows)


def running_count(flag):
    """``jnp.cumsum(flag, dtype=int32)`` of a bool vector ``(R,)``, by two triangular products.

    Exact (float32 sums of at most ``R < 2^24`` ones); a handful of kernels where
    XLA:CPU compiles a cumsum into about seven. Pure; no validation.
    """
    R = flag.shape[0]
    a = -(-R // 32)
    x = jnp.pad(flag.astype(jnp.float32), (0, 32 * a - R)).reshape(a, 32)
    upper = jnp.asarray(np.triu(np.ones((32, 32), np.float32)))
    within = jnp.matmul(x, upper, precision=_F32)  # running counts within rows of 32
    before = jnp.asarray(np.tril(np.ones((a, a), np.float32), -1))
    offset = jnp.matmul(before, within[:, -1], precision=_F32)  # counts in earlier rows
    return (within + offset[:, None]).astype(jnp.int32).reshape(-1)[:R]


def ranked_rows(flag, rank, first, size):
    """Rows ``(size,)`` whose ``rank`` is ``first, ..., first + size - 1`` among the flagged ones.

    ``flag : (R,)`` bool, ``rank : (R,)`` int32 the running count of flagged rows
    minus one (``cumsum(flag) - 1``); ``R`` where no row holds that rank. Equals
    ``jnp.nonzero(flag & (rank // size == first // size), size=size,
    fill_value=R)`` for ``first`` a multiple of ``size``, as one scatter (a
    nonzero compiles two cumsums besides). Pure; no validation.
    """
    R = flag.shape[0]
    # rows outside the range go to slot `size`, dropped (a negative slot would wrap around)
    slot = jnp.where(flag & (rank >= first), rank - first, size)
    rows = jnp.arange(R, dtype=jnp.int32)
    return jnp.full(size, R, jnp.int32).at[slot].set(rows, mode="drop")


def unpack_labels(words, dtype=jnp.float32, xp=jnp):
    """Packed bits ``(W, R)`` -> ``(32 W, R)`` 0/1 values, row ``i`` = slot ``i``.

    ``xp=numpy`` unpacks concrete words on the host (no program per shape).
    """
    W, R = words.shape
    shifts = xp.arange(32, dtype=xp.uint32)[None, :, None]
    # via int32: x86 converts signed (not unsigned) integers to floats in vector registers
    bits = ((words[:, None, :] >> shifts) & xp.uint32(1)).astype(xp.int32)
    return bits.astype(dtype).reshape(W * 32, R)
