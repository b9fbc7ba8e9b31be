"""Resampling kernels: random bits, sign-flip and label-permutation draws, exact counting.

Conventions. Draw ``r`` of a block of ``R`` draws over ``m`` instances is
described by ``n_words = ceil(m / 32)`` uint32 words; bit ``k`` of word ``j``
belongs to instance ``32 j + k``. Bit 1 keeps an instance's sign (sign flips),
swaps the two models' outputs (swap test), or puts the instance in group 1
(label permutations). Linear statistics are evaluated from the words
directly, never from ±1 matrices: :func:`bit_sums` fuses the random words
into masked float32 adds (Monte Carlo), byte lookup tables serve exact
enumeration.

Random words come from :mod:`jaxtests.kernels.random` (the library's one
stream), so a draw's signs depend on its index only.

Pure; no validation. ``uint64`` arithmetic needs ``jax.enable_x64``.
"""

import enum
import functools

import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import random as krandom

__all__ = [
    "F32_SUM_GROUP",
    "SubsetStart",
    "bit_sums",
    "bit_sums_error_bound",
    "bit_sums_ordered",
    "bitplane_sums",
    "byte_tables",
    "byte_tables32",
    "combination_words",
    "correction_tiers",
    "dense_sums",
    "dense_sums32",
    "dense_sums32_error_bound",
    "dense_sums_error_bound",
    "enumeration_words",
    "fix_subset_size",
    "lut_sums",
    "mitm_signflip_counts",
    "stored",
    "subset_corrections",
    "subset_sums",
    "uniform_permutations",
    "words_to_bits",
]

_SHIFTS = (0, 8, 16, 24)


class SubsetStart(enum.Enum):
    """The set ``A`` a Monte Carlo split starts from, before :func:`subset_corrections`
    adds or removes members to make it an ``n1``-subset."""

    FAIR_BITS = "fair bits"  # each item a member with probability 1/2: the draw's words
    EMPTY = "empty"  # no item: n1 members added
    FULL = "full"  # every item: n2 members removed

    def members(self, k0, k1, r, n_words, u):
        """Whether positions ``u`` of draws ``r`` (key words ``k0, k1``) lie in ``A``."""
        if self is SubsetStart.FAIR_BITS:
            w = krandom.keyed_words(k0, k1, r * jnp.uint32(n_words) + (u >> 5))
            return ((w >> (u & 31)) & 1) == 1
        return jnp.full(u.shape, self is SubsetStart.FULL)


F32_SUM_GROUP = 16  # words summed in float32 before each float64 accumulation
_NEG_ZERO = -0.0  # additive identity of float32 (x + -0.0 == x for every x, also -0.0)


def _tree_sum(xs):
    while len(xs) > 1:
        xs = [xs[i] + xs[i + 1] if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
    return xs[0]


def _word_sum(w, dj):
    """``sum_k bit_k(w) dj[:, k]`` in float32: ``w : (L,)``, ``dj : (H, 32)`` -> ``(H, L)``.

    Four independent chains of eight masked adds (so the adds pipeline instead
    of waiting on one another), then a two-level tree. Each term passes
    through at most 9 roundings.
    """
    shape = (dj.shape[0], w.shape[0])
    bits, terms = _bits_and_terms(w, dj, shape)
    chains = []
    for c in range(4):
        acc = lax.select(bits[8 * c], terms[8 * c], lax.full(shape, _NEG_ZERO, dj.dtype))
        for k in range(8 * c + 1, 8 * c + 8):
            acc = lax.select(bits[k], lax.add(acc, terms[k]), acc)
        chains.append(acc)
    return _tree_sum(chains)


def _bits_and_terms(w, dj, shape):
    """Bit ``k`` of ``w : (L,)`` and column ``k`` of ``dj : (H, 32)``, each broadcast to ``shape``.

    lax on operands of one shape: the 32 masked adds of a word trace in about a
    third of the time of jnp's broadcasting ``where`` and indexing (the same
    operations, so the same sums).
    """
    one = np.uint32(1)
    bits = [
        lax.broadcast_in_dim(
            lax.eq(lax.bitwise_and(lax.shift_right_logical(w, np.uint32(k)), one), one), shape, (1,)
        )
        for k in range(32)
    ]
    terms = [
        lax.broadcast_in_dim(lax.index_in_dim(dj, k, axis=1, keepdims=False), shape, (0,))
        for k in range(32)
    ]
    return bits, terms


def bit_sums(k0, k1, local, d, count_mask=None, n_live=None, stride=None):
    """Sums ``P = sum_i bit_i d_i`` over random bits, fused with their generation.

    Lane ``l`` is a draw with key words ``k0[l], k1[l]`` and counter
    ``local[l]`` (all ``(L,)`` uint32, from :func:`draw_keys`); its word ``j``
    is ``krandom.keyed_words(k0, k1, local n_words + j)``. ``d : (H, n_words, 32)``
    float32 (zero-padded instances) -> ``P : (H, L)`` float64. With
    ``count_mask : (n_words,)`` uint32 also returns the number of set bits
    under the mask, ``(L,)`` int32.

    The words are generated inside the loop over words and consumed at once
    (never stored); each draw is a lane of 512-bit vectors of masked float32
    adds. Words are summed in float32 in groups of :data:`F32_SUM_GROUP`, the
    group sums in float64: the error is bounded by
    :func:`bit_sums_error_bound`, and a draw's value does not depend on the
    other lanes. ``n_live`` (a traced int32, default every word) is the number
    of leading words holding data: the loops stop there, so a capacity-padded
    ``d`` costs what its live words cost. ``stride`` (static, default
    ``n_words``, at least the live words) replaces ``n_words`` in the counters,
    so the draws need not depend on how far ``d`` is padded. Pure; no validation.
    """
    n_h, n_words, _ = d.shape
    n_lanes = local.shape[0]
    base = local * jnp.uint32(n_words if stride is None else stride)
    group = min(F32_SUM_GROUP, n_words)
    live = n_words if n_live is None else n_live
    n_groups = (live + group - 1) // group

    def inner(j, carry):
        s, cnt = carry
        w = krandom.keyed_words(k0, k1, base + j.astype(jnp.uint32))
        s = s + _word_sum(w, lax.dynamic_index_in_dim(d, j, axis=1, keepdims=False))
        if count_mask is not None:
            mask = lax.dynamic_index_in_dim(count_mask, j, keepdims=False)
            cnt = cnt + lax.population_count(w & mask).astype(jnp.int32)
        return s, cnt

    def outer(g, carry):
        acc, cnt = carry
        lo = g * group
        hi = jnp.minimum(lo + group, live)
        s, cnt = lax.fori_loop(lo, hi, inner, (jnp.zeros((n_h, n_lanes), d.dtype), cnt))
        return acc + s.astype(jnp.float64), cnt

    init = (jnp.zeros((n_h, n_lanes), jnp.float64), jnp.zeros((n_lanes,), jnp.int32))
    acc, cnt = lax.fori_loop(0, n_groups, outer, init)
    return acc if count_mask is None else (acc, cnt)


def dense_sums(k0, k1, local, d, stride, count_mask=None):
    """The sums of :func:`bit_sums` (same words) as one fused reduction, for accelerators.

    Every word of every lane (``local * stride + j`` for the ``W`` words of
    ``d : (H, W, 32)``) is generated at once, its bits unpacked with shifts and
    ``where(bit, d, 0)`` reduced over all ``32 W`` instances in an order XLA
    chooses: the shape of the hand-written dense kernel of issue 25 (one fused
    reduction per block on a GPU, whatever the number of instances). In ``d``'s
    dtype the value is within ``gamma_{32 W} sum |d|`` of the exact sum
    (Higham 2002, eq. 4.4, any order; no product is formed, so no multiply-add
    contraction can change it); sums of integers below 2^24 are exact in
    float32. Returns ``P : (H, L)`` float64 (and with ``count_mask : (W,)`` the
    set bits under the mask, ``(L,)`` int32). Pure; no validation.
    """
    w, bits = _dense_bits(k0, k1, local, d.shape[1], stride)
    zero = jnp.zeros((), d.dtype)
    p = jnp.sum(jnp.where(bits[None], d[:, None], zero), axis=(2, 3)).astype(jnp.float64)
    return p if count_mask is None else (p, _masked_ones(w, count_mask))


def _dense_words(k0, k1, local, n_words, stride):
    """A block's words ``(L, W)`` (:func:`bit_sums`' words), made once and kept."""
    j = jnp.arange(n_words, dtype=jnp.uint32)
    w = krandom.keyed_words(k0[:, None], k1[:, None], local[:, None] * jnp.uint32(stride) + j[None])
    # Kept: a fusion would otherwise recompute each word's hash per bit.
    return lax.optimization_barrier(w)


def _dense_bits(k0, k1, local, n_words, stride):
    """A block's words ``(L, W)`` (:func:`bit_sums`' words) and their bits ``(L, W, 32)``."""
    w = _dense_words(k0, k1, local, n_words, stride)
    bits = ((w[:, :, None] >> jnp.arange(32, dtype=jnp.uint32)[None, None]) & 1) != 0
    return w, bits


def _masked_ones(w, count_mask):
    ones = lax.population_count(w & count_mask[None, :]).astype(jnp.int32)
    return jnp.sum(ones, axis=1, dtype=jnp.int32)


def byte_tables32(d):
    """The byte tables that :func:`dense_sums32` reads: ``d : (H, W, 32)`` -> ``(H, W, 4, 256)``.

    Entry ``[h, j, b, v]`` is the sum of ``d[h, j, 8 b + k]`` over the set bits
    ``k`` of ``v``, added in bit order in float64 and rounded once to float32:
    the same bits on every device: :func:`byte_tables` (the words family's)
    sums by a product whose order and precision (TF32 on a GPU) are each
    backend's own. Pure; no validation.
    """
    n_h, n_words, _ = d.shape
    g = d.astype(jnp.float64).reshape(n_h, n_words, 4, 1, 8)
    v = jnp.arange(256, dtype=jnp.uint32).reshape(1, 1, 1, 256)
    table = jnp.zeros((n_h, n_words, 4, 256), jnp.float64)
    for k in range(8):
        table = table + jnp.where(((v >> k) & 1) != 0, g[..., k], 0.0)
    return table.astype(jnp.float32)


def dense_sums32(k0, k1, local, tables, stride, count_mask=None):
    """The sums of :func:`dense_sums` by table lookups: one per 8 instances, for accelerators.

    ``tables : (H, W, 4, 256)`` float32 from :func:`byte_tables32`. Each byte of
    a draw's word (:func:`bit_sums`' words, generated at once) selects its
    table entry, a gather; the ``4 W`` entries are added in float64 in any
    order, one fused reduction per block: a gather and an add per 8 instances
    where the dense sums take 8 selects and adds, with no loop over words (on
    this 2-core CPU a hand-written kernel of that shape ran 1.8x the flat
    float32 kernel, 3x the float64 one; on a GPU not yet measured). Within
    :func:`dense_sums32_error_bound` of the exact sum. Returns what
    :func:`dense_sums` returns. Pure; no validation.
    """
    n_h, n_words = tables.shape[:2]
    w = _dense_words(k0, k1, local, n_words, stride)
    shifts = (jnp.arange(4, dtype=jnp.uint32) * 8)[None, None]
    pieces = (w[:, :, None] >> shifts) & 255  # (L, W, 4)
    base = jnp.arange(n_words * 4, dtype=jnp.int32).reshape(1, n_words, 4) * 256
    idx = (pieces.astype(jnp.int32) + base).reshape(w.shape[0], -1)  # (L, 4 W)
    vals = jnp.take(tables.reshape(n_h, -1), idx, axis=1, mode="clip")  # (H, L, 4 W)
    p = jnp.sum(vals.astype(jnp.float64), axis=2)
    return p if count_mask is None else (p, _masked_ones(w, count_mask))


def dense_sums32_error_bound(abs_sum, n_words):
    """Bound on ``|P_computed - P|`` of :func:`dense_sums32` given ``abs_sum = sum_i |d_i|``.

    ``d_i`` rounded to float32 and each table entry rounded to float32 from
    its float64 sum (``u = 2^-24``): ``gamma_2``; the float64 sums, in bit
    order (8 terms) and of ``4 W`` entries in any order, ``gamma_{4 W + 8}``
    with ``u = 2^-53`` (Higham 2002, eq. 4.4). Flushed subnormals (XLA:CPU
    flushes them) cost at most ``2^-126`` per float32 value: ``64 W 2^-126``.
    """
    g32 = 2 * 2.0**-24 / (1 - 2 * 2.0**-24)
    k = 4 * n_words + 8
    g64 = k * 2.0**-53 / (1 - k * 2.0**-53)
    return (g32 + g64 * (1 + g32)) * abs_sum + 64 * n_words * 2.0**-126


def dense_sums_error_bound(abs_sum, n_words):
    """Bound on ``|P_computed - P|`` of :func:`dense_sums` in float64: ``gamma_{32 W} sum |d|``."""
    k = 32 * n_words
    return k * 2.0**-53 / (1 - k * 2.0**-53) * abs_sum


def bit_sums_ordered(k0, k1, local, d, n_live=None, stride=None):
    """The sums of :func:`bit_sums` (same words) in ``d``'s dtype, one instance at a time.

    ``d : (H, n_words, 32)`` -> ``(H, L)``; ``n_live`` and ``stride`` as in
    :func:`bit_sums`.
    Each lane adds its selected ``d_i`` in instance order whatever the other lanes are, so a float64
    value is reproducible to the bit and within ``(32 n_words) 2^-53 sum|d|``
    of the exact sum: the recheck of the few float32 sums too close to a
    decision to settle it. Pure; no validation.
    """
    n_h, n_words, _ = d.shape
    base = local * jnp.uint32(n_words if stride is None else stride)

    def body(j, acc):
        w = krandom.keyed_words(k0, k1, base + j.astype(jnp.uint32))
        dj = lax.dynamic_index_in_dim(d, j, axis=1, keepdims=False)
        bits, terms = _bits_and_terms(w, dj, acc.shape)
        zeros = lax.full(acc.shape, 0, d.dtype)
        for k in range(32):
            acc = lax.add(acc, lax.select(bits[k], terms[k], zeros))
        return acc

    live = n_words if n_live is None else n_live
    return lax.fori_loop(0, live, body, jnp.zeros((n_h, local.shape[0]), d.dtype))


def bit_sums_error_bound(abs_sum, n_words, n_live=None):
    """Bound on ``|P_computed - P|`` of :func:`bit_sums` given ``abs_sum = sum_i |d_i|``.

    Rounding ``d`` to float32 costs ``u |d_i|`` (``u = 2^-24``); inside a group
    each term meets at most ``9 + F32_SUM_GROUP`` float32 roundings
    (Higham 2002, eq. 3.4: ``gamma_k = k u / (1 - k u)``), and the float64 sum
    of ``n_groups`` group sums adds ``gamma_{n_groups}`` with ``u = 2^-53``.
    ``n_words`` is ``d``'s word count, ``n_live`` (traced or int) the words summed.
    """
    group = min(F32_SUM_GROUP, n_words)
    n_groups = ((n_words if n_live is None else n_live) + group - 1) // group
    if not isinstance(n_groups, int):  # traced: strict promotion wants a float count
        n_groups = n_groups.astype(jnp.result_type(abs_sum))
    k32 = group + 10
    g32 = k32 * 2.0**-24 / (1 - k32 * 2.0**-24)
    g64 = (n_groups + 2) * 2.0**-53
    return (g32 * (1 + g64) + g64) * abs_sum


def _trial_stream(lane_keys, r, *, n, n_words, start, rows, stream, n_live=None):
    """Trial ``t -> (u, bucket, Lemire-kept, membership bit)`` of each lane.

    ``t`` is a scalar (-> ``(q,)``) or a column ``(k, 1)`` of trials (-> ``(k, q)``).
    ``n`` (static) bounds the positions; ``n_live <= n`` (traced, default ``n``)
    is the number drawn from, so one program serves a shape bucket.
    """
    # rows and stream may be traced (one program for every tier of subset_corrections)
    direct = rows * 32 >= n if isinstance(rows, int) else jnp.asarray(rows) * 32 >= n

    def trial(t):
        # Key words sliced inside the trial, where they fuse into its hashes: sliced once
        # before the trial loop, each was a loop-carried copy and a kernel of its own.
        k0, k1, k2, k3, k4, k5 = (lane_keys[:, i] for i in range(6))
        hkey = k5 + r * jnp.uint32(0x9E3779B9)  # one random bucket function per draw
        k3 = k3 ^ (jnp.uint32(0x68E31DA4) * jnp.asarray(stream).astype(jnp.uint32))
        tu = t.astype(jnp.uint32)
        lift = (lambda v: v[None, :]) if tu.ndim == 2 else (lambda v: v)
        # Trial t of draw r (r < 4096): counter (r, t mod 2^20), key word changed every 2^20.
        k2t = lift(k2) ^ ((tu >> 20) * jnp.uint32(0x85EBCA6B))
        word = krandom.keyed_words(k2t, lift(k3), (lift(r) << 20) | (tu & jnp.uint32(0xFFFFF)))
        n_draw = jnp.asarray(n if n_live is None else n_live).astype(jnp.uint32)
        u, ok = krandom.uniform_below(word, n_draw)  # exactly uniform on [0, n_draw)
        member = start.members(lift(k0), lift(k1), lift(r), n_words, u)
        if isinstance(direct, bool) and direct:  # static exact buckets: no hash to compute
            bucket = u
        else:
            mask = (jnp.asarray(rows) * 32 - 1).astype(jnp.uint32)
            bucket = jnp.where(direct, u, krandom.keyed_words(lift(k4), lift(hkey), u) & mask)
        return u, bucket, ok, member, lift

    return trial


def stored(x, always):
    """``x``, materialised: ``always`` is a traced predicate that is always true.

    XLA:CPU fuses a cheap producer into every consumer and recomputes it there
    (and drops ``optimization_barrier``); a conditional's result is computed once.
    """
    return lax.cond(always, lambda v: v, jnp.zeros_like, x)


def _packed_trials(lane_keys, r, want, **kw):
    """Trials ``t`` (any shape ``(..., 1)``) packed as ``u | bucket << 32 | eligible << 63``."""
    parts = _trial_stream(lane_keys, r, **kw)

    def trial(t):
        u, bucket, ok, member, lift = parts(t)
        elig = ok & (member == lift(want))
        return (
            u.astype(jnp.uint64)
            | (bucket.astype(jnp.uint64) << 32)
            | (elig.astype(jnp.uint64) << 63)
        )

    return trial


def _correction_chunk(
    lane_keys,
    r,
    need,
    want,
    z,
    *,
    n,
    n_words,
    start,
    rows,
    stream,
    t_cap,
    n_live=None,
    size=None,
):
    """Sums of ``need`` distinct uniform members (``want``) or non-members, one lane per draw.

    Trial ``t`` of a lane draws a position ``u`` uniformly (``krandom.uniform_below``, Lemire) and
    accepts it if its membership bit equals ``want`` and its bucket is still
    free; a bucket is ``u`` itself (``rows * 32 >= n``, an exact record of the
    accepted positions) or a per-draw random hash of ``u``. Returns the sums
    of ``z`` over the accepted positions and the counts still missing after
    ``t_cap`` trials (0 when done). ``stream`` (0 or 1) selects an independent
    trial stream (restarts use 1). ``rows``, ``stream`` and ``t_cap`` may be traced,
    with ``size`` (static, default ``rows q``) the bucket words kept in memory:
    lane ``l`` owns words ``[l rows, (l + 1) rows)``, so only lanes that fit
    may have a positive ``need``.

    The trial of step ``t + 1`` (three hashes) is computed at the end of step
    ``t`` and carried, packed in one uint64, so XLA keeps it in memory instead
    of recomputing it inside each consumer; the bucket bits live in a flat
    ``(size,)`` array updated by a scatter.
    """
    q = r.shape[0]
    trial = _packed_trials(
        lane_keys,
        r,
        want,
        n=n,
        n_words=n_words,
        start=start,
        rows=rows,
        stream=stream,
        n_live=n_live,
    )
    lane = jnp.arange(q, dtype=jnp.int64)
    n_bits = rows * q if size is None else size

    def cond(state):
        t, rem, _, _, _ = state
        return jnp.any(rem > 0) & (t < t_cap)

    def body(state):
        t, rem, total, bits, packed = state
        u = (packed & jnp.uint64(0xFFFFFFFF)).astype(jnp.int64)
        bucket = ((packed >> 32) & jnp.uint64(0x7FFFFFFF)).astype(jnp.int64)
        elig = (packed >> 63) == 1
        flat = lane * jnp.asarray(rows).astype(jnp.int64) + (bucket >> 5)
        bit = jnp.uint32(1) << (bucket & 31).astype(jnp.uint32)
        # Lanes with nothing left to take may lie past the bits (a restart's unused
        # lanes): they read a clipped word and write nothing.
        seen = bits.at[flat].get(mode="clip")
        take = (rem > 0) & elig & ((seen & bit) == 0)
        bits = bits.at[jnp.where(rem > 0, flat, n_bits)].set(
            seen | jnp.where(take, bit, jnp.uint32(0)),
            mode="drop",
            unique_indices=True,
        )
        zu = z.at[:, u].get(mode="promise_in_bounds")  # (H, q)
        total = total + jnp.where(take[None, :], zu, jnp.zeros((), z.dtype))
        return t + 1, rem - take.astype(jnp.int32), total, bits, trial(t + 1)

    init = (
        jnp.int32(0),
        need,
        jnp.zeros((z.shape[0], q), z.dtype),
        jnp.zeros((n_bits,), jnp.uint32),
        trial(jnp.int32(0)),
    )
    _, rem, total, _, _ = lax.while_loop(cond, body, init)
    return total, rem


def _order_by(level):
    """Lanes sorted by ``level : (L,)`` (non-negative, < 2^31): the permutation.

    One int64 sort of ``level << 32 | lane`` (ties broken by lane), several
    times faster on XLA:CPU than a key-value sort.
    """
    lane = jnp.arange(level.shape[0], dtype=jnp.int64)
    packed = lax.sort((level.astype(jnp.int64) << 32) | lane, is_stable=False)
    return (packed & jnp.int64(0xFFFFFFFF)).astype(jnp.int32)


def correction_tiers(n, expected_need, spread, max_tiers=6):
    """Static ``((max_need, bucket_rows), ...)`` for :func:`subset_corrections`.

    Bucket bits are kept at about three per needed position (so occupied
    buckets reject at most a third of the trials); tiers grow 4x from two
    words until they cover ``expected_need + 6 spread`` (one tier when
    ``spread == 0``) or until the buckets are the positions themselves
    (``32 rows >= n``, exact). Needs beyond the last tier restart with exact
    buckets. Few tiers: each is compiled (finer tiers ran ~0.1 s faster at
    10^6 two-sample draws but compiled ~1.4 s longer).
    """
    tiers = []
    rows = 2
    hi = expected_need + 6 * spread
    while len(tiers) < max_tiers:
        if 32 * rows >= n:
            tiers.append((n, -(-n // 32)))
            break
        cap = 32 * rows // 3
        if spread > 0 or cap >= hi:
            tiers.append((cap, rows))
        if cap >= hi:
            break
        rows *= 4
    return tuple(tiers)


def subset_corrections(
    lane_keys, r, need, want, z, *, n, n_words, start, tiers, chunk=4096, n_live=None
):
    """Exact corrections that turn fair membership bits into uniform ``n1``-subsets.

    Lane ``l`` is a draw with key words ``lane_keys[l] : (6,)`` uint32 and
    counter ``r[l]`` (:func:`draw_keys`); its initial set ``A`` is ``start``
    (:class:`SubsetStart`): given by the words ``krandom.keyed_words(k0, k1, r n_words +
    j)`` (``FAIR_BITS``), or empty / everything (``EMPTY`` / ``FULL``). It needs
    ``need[l] >= 0`` distinct positions, chosen uniformly among the members (``want[l]``) or the
    non-members of ``A``; returns ``sum_u z[:, u]`` over them, ``(H, L)`` for
    ``z : (H, n)``.

    Algorithm (per draw): trial ``t`` draws a position ``u_t`` uniformly on
    ``[0, n)`` (Lemire's rejection: exact) and accepts it when its bit in
    ``A`` equals ``want`` and its bucket ``h(u_t)`` is free; accepting marks
    the bucket. ``h`` is a random function drawn per draw (a keyed hash into
    ``32 rows`` buckets) or, when ``32 rows >= n``, the identity. A repeated
    position finds its own bucket marked, so accepted positions are distinct.

    Exactness (ideal random bits). (1) Given ``A``, the accepted set ``C`` is
    a uniform ``c``-subset of the eligible positions: for a permutation
    ``pi`` with ``pi(A) = A``, the relabelled randomness ``(pi(u_t), h o
    pi^-1)`` has the same law as ``(u_t, h)`` and makes the procedure accept
    exactly ``pi(C)`` (with identity buckets, occupancy just means "accepted
    before", which relabels with the positions); so the law of ``C`` is
    invariant under the permutations
    that fix ``A``, which act transitively on the ``c``-subsets of ``A`` (or of
    its complement). (2) The law of ``A`` (fair bits, or a fixed empty/full
    set) depends only on ``|A|``, so ``F = A - C`` (or ``A + C``), which
    always has ``n1`` members, has ``P(F = f) = sum_A P(A) P(C = A - f | A)``
    depending on ``f`` only through ``|f| = n1``: ``F`` is uniform over all
    ``C(n, n1)`` subsets, as in a permutation test. (3) A lane that exceeds
    its tier's trial cap, or needs more than the last tier, restarts from
    scratch with fresh trials and exact buckets; those events are invariant
    under the relabelling of (1), so conditioning on them keeps ``C``
    uniform.

    Reproducibility: a lane's tier (bucket function and trial cap) is the
    smallest that holds its own need, so its result depends on its own key,
    counter and need only. Lanes are sorted by need and run in lockstep
    chunks of ``chunk`` lanes of one tier; which lanes run together (and so
    the batch size or the number of devices) never changes a lane's value.

    ``tiers``: static ``((max_need, bucket_rows), ...)`` in increasing order
    (:func:`correction_tiers`), their bucket bits in memory. ``n_live``
    (traced, default ``n``): positions are drawn from ``[0, n_live)`` of
    ``z``'s columns, so a capacity runs one program; ``n`` stays the static
    bound of every decision. Pure; no validation.
    """
    n_lanes = r.shape[0]
    chunk = min(chunk, n_lanes)
    rows_exact = -(-n // 32)
    top = tiers[-1][0]
    # Sorted by need: each tier's lanes are one contiguous range, and chunks
    # hold lanes of similar need, so lockstep wastes little.
    order = _order_by(jnp.minimum(need, top + 1))
    pad = jnp.concatenate([order, jnp.zeros((chunk,), order.dtype)])
    need_pad = jnp.concatenate([need[order], jnp.zeros((chunk,), need.dtype)])
    total = jnp.zeros((z.shape[0], n_lanes), z.dtype)
    rem_all = jnp.zeros((n_lanes,), jnp.int32)
    lo = jnp.sum((need == 0).astype(jnp.int32), dtype=jnp.int32)
    exact_last = 32 * tiers[-1][1] >= n
    # One compiled chunk loop serves every tier (its bucket rows, trial cap and need bound
    # are traced, its bucket bits sized for the largest tier): a loop per tier compiled
    # the same code once per tier (four at a 16,384 capacity, ~0.45 s of the two-sample
    # program's 1.9 s). Trial caps lie far above the ~2.4 trials per needed position
    # (acceptance ~1/2); exact buckets never fail, so an exact last tier has no cap.
    caps = [16 * hi + 256 for hi, _ in tiers]
    if exact_last:
        caps[-1] = 2**31 - 1
    tier_hi = jnp.asarray([hi for hi, _ in tiers], jnp.int32)
    # Restarts with exact buckets (lanes beyond the last tier or out of trials: hashed
    # buckets can all be taken when few positions are eligible) are one more stage of
    # the same loop: a loop of their own compiled the trial code again (the two-sample
    # program, 200 + 200: 156 -> 129 kernels, compile ~2.0 -> ~1.5 s on a 2-core VM at
    # load 1.6). Exact buckets for every need: none can fail.
    restarts = not (top >= n and all(32 * rows >= n for _, rows in tiers))
    n_tiers = len(tiers)
    # Bucket bits in memory for every tier: a register-carried variant for small
    # tiers (unrolled batches of trials) compiled ~1 s longer and ran slower at the
    # capacity sizes (2-core VM, 2026-11-24: 47 vs 62-70 ms at 50 + 950 items).
    size = max(max(rows for _, rows in tiers) * chunk, rows_exact)
    # A restart's exact buckets take more words per lane, so fewer lanes run per chunk
    # (restarts are rare: the lockstep of unused lanes costs little).
    stage_rows = jnp.asarray([*(rows for _, rows in tiers), rows_exact], jnp.int32)
    stage_cap = jnp.asarray([*caps, 2**31 - 1], jnp.int32)
    stage_step = jnp.asarray([chunk] * n_tiers + [min(chunk, size // rows_exact)], jnp.int32)
    run = functools.partial(
        _correction_chunk, n=n, n_words=n_words, start=start, n_live=n_live, size=size
    )
    tail = jnp.zeros((chunk,), order.dtype)

    def tier_lanes(i, lo, rem_all):
        hi_end = jnp.sum(
            (need <= tier_hi[jnp.minimum(i, n_tiers - 1)]).astype(jnp.int32), dtype=jnp.int32
        )
        return pad, need_pad, lo, hi_end

    def restart_lanes(i, lo, rem_all):
        redo = (need > top) | (rem_all > 0)
        # A sort rather than a cumsum and a scatter: it compiles to one kernel.
        idx = _order_by(jnp.where(redo, 0, 1))
        n_redo = jnp.sum(redo.astype(jnp.int32), dtype=jnp.int32)
        return (
            jnp.concatenate([idx, tail]),
            jnp.concatenate([need[idx], tail.astype(need.dtype)]),
            jnp.int32(0),
            n_redo,
        )

    def stage(i, state):
        lo, total, rem_all = state
        if restarts:
            lanes, needs, start, end = lax.cond(
                i == n_tiers, restart_lanes, tier_lanes, i, lo, rem_all
            )
        else:
            lanes, needs, start, end = tier_lanes(i, lo, rem_all)
        step = stage_step[i]

        def chunk_body(st):
            start, total, rem_all = st
            ln = lax.dynamic_slice_in_dim(lanes, start, chunk)
            k = jnp.arange(chunk, dtype=jnp.int32)
            live = (k < step) & (start + k < end)
            nd = jnp.where(live, lax.dynamic_slice_in_dim(needs, start, chunk), 0)
            tot, rem = run(
                lane_keys[ln],
                r[ln],
                nd,
                want[ln],
                z,
                rows=stage_rows[i],
                stream=(i == n_tiers).astype(jnp.int32),
                t_cap=stage_cap[i],
            )
            dest = jnp.where(live, ln, n_lanes)
            total = total.at[:, dest].set(tot, mode="drop")
            rem_all = rem_all.at[dest].set(rem, mode="drop")
            return start + step, total, rem_all

        _, total, rem_all = lax.while_loop(
            lambda st: st[0] < end, chunk_body, (start, total, rem_all)
        )
        return end, total, rem_all

    _, total, _ = lax.fori_loop(0, n_tiers + restarts, stage, (lo, total, rem_all))
    return total


def byte_tables(d):
    """Partial sums of every byte pattern: ``d : (H, 32 n_words)`` -> ``(H, 4 n_words, 256)``.

    ``out[h, g, v] = sum_k bit_k(v) d[h, 8 g + k]``. Pure; no validation.
    """
    h, m = d.shape
    pat = ((jnp.arange(256)[:, None] >> jnp.arange(8)[None, :]) & 1).astype(d.dtype)
    return jnp.einsum("vk,hgk->hgv", pat, d.reshape(h, m // 8, 8))


def lut_sums(words, tables, unroll=4):
    """Sums of the selected entries, ``sum_i bit_i d_i``, from byte lookup tables.

    ``words : (n_words, R)``, ``tables : (H, 4 n_words, 256)`` -> ``(H, R)``.
    Each draw's sum is accumulated in the same order (word by word, byte by
    byte) whatever ``R`` is, so values do not depend on the batch size.
    """
    n_words, n_draws = words.shape
    n_h = tables.shape[0]

    def body(j, acc):
        w = words[j]
        for q, s in enumerate(_SHIFTS):
            idx = ((w >> s) & 255).astype(jnp.int32)
            tab = lax.dynamic_index_in_dim(tables, 4 * j + q, axis=1, keepdims=False)
            acc = acc + jnp.take(tab, idx, axis=1, mode="clip")
        return acc

    init = jnp.zeros((n_h, n_draws), tables.dtype)
    return lax.fori_loop(0, n_words, body, init, unroll=min(unroll, max(n_words, 1)))


def bitplane_sums(words, d):
    """``sum_i bit_i d_i`` bit by bit, without tables (for very large ``m``).

    ``words : (n_words, R)``, ``d : (H, 32 n_words)`` -> ``(H, R)``. Same
    accumulation order for every ``R``.
    """
    n_words, n_draws = words.shape
    n_h = d.shape[0]
    d3 = d.reshape(n_h, n_words, 32)

    def body(j, acc):
        w = words[j]
        dj = lax.dynamic_index_in_dim(d3, j, axis=1, keepdims=False)
        for k in range(32):
            bit = ((w >> k) & 1) == 1
            acc = acc + jnp.where(bit[None, :], dj[:, k : k + 1], jnp.zeros((), d.dtype))
        return acc

    return lax.fori_loop(0, n_words, body, jnp.zeros((n_h, n_draws), d.dtype))


def words_to_bits(words, m):
    """``(n_words, R)`` words -> ``(R, m)`` booleans (bit ``i`` of the draw)."""
    n_words, n_draws = words.shape
    bits = (words.T[:, :, None] >> jnp.arange(32, dtype=jnp.uint32)[None, None, :]) & 1
    return bits.reshape(n_draws, 32 * n_words)[:, :m] == 1


def enumeration_words(start, n_draws, n_words):
    """Words of sign patterns ``start, ..., start + n_draws - 1`` (pattern index = bits).

    ``start`` is an int64 scalar; patterns of up to 64 instances.
    """
    idx = start + jnp.arange(n_draws, dtype=jnp.int64)
    idx = lax.bitcast_convert_type(idx, jnp.uint64)
    lo = (idx & jnp.uint64(0xFFFFFFFF)).astype(jnp.uint32)
    hi = (idx >> 32).astype(jnp.uint32)
    both = jnp.stack([lo, hi], axis=0)
    if n_words <= 2:
        return both[:n_words]
    pad = jnp.zeros((n_words - 2, n_draws), jnp.uint32)
    return jnp.concatenate([both, pad], axis=0)


def fix_subset_size(words, n, n1, k0, k1, counter):
    """Turn Bernoulli(1/2) membership bits into a uniform random ``n1``-subset of ``n``.

    ``words : (n_words, R)`` hold i.i.d. fair bits for ``n`` items (padding
    bits are ignored); ``k0, k1 : (R,)`` uint32 key words of each draw and
    ``counter : (R,)`` uint32 its index below :data:`krandom.KEY_BLOCK` among the
    draws sharing those key words: trial ``t`` of a draw reads the word
    ``keyed_words(k0, k1 + (t >> 20) phi, (t << 12) | counter)`` of
    :mod:`jaxtests.kernels.random`, so draws that share key words never share
    a correction stream. Returns corrected words whose set bits are exactly
    ``n1`` of the ``n`` items.

    Exactness. Let ``K`` be the number of set bits. While ``K > n1``, draw an
    index uniformly on ``[0, n)`` (Lemire rejection, exact) and clear it if it is
    set, else draw again; while ``K < n1``, likewise set a uniformly drawn clear
    bit. Each accepted step removes (adds) a uniformly chosen member
    (non-member) of the current set. The law of the initial set depends only on
    its size, so it is invariant under permutations of the items; every
    correction step is permutation-equivariant, so the final law is
    permutation-invariant too. It is supported on sets of size ``n1``, on which
    the permutation group acts transitively: the final set is uniform over all
    ``C(n, n1)`` subsets. No sorting is needed; the expected number of trials
    is about ``2 |K - n1| ~ sqrt(n)``.
    """
    n_words, n_draws = words.shape
    pad_mask = _pad_mask(n, n_words)
    words = words & pad_mask[:, None]
    k = jnp.sum(lax.population_count(words).astype(jnp.int32), axis=0, dtype=jnp.int32)
    nn = jnp.uint32(n)
    shift = int(np.log2(krandom.KEY_BLOCK))

    def cond(state):
        _, k, _ = state
        return jnp.any(k != n1)

    def body(state):
        words, k, t = state
        hi = (t >> (32 - shift)) * jnp.uint32(0x9E3779B9)  # a new stream every 2^20 trials
        r = krandom.keyed_words(k0, k1 + hi, (t << shift) | counter)
        idx, ok = krandom.uniform_below(r, nn)
        j = (idx >> 5).astype(jnp.int32)
        bit = jnp.uint32(1) << (idx & 31)
        w = words[j, jnp.arange(n_draws)]
        is_set = (w & bit) != 0
        remove = (k > n1) & is_set & ok
        add = (k < n1) & ~is_set & ok
        new_w = jnp.where(remove, w & ~bit, jnp.where(add, w | bit, w))
        words = words.at[j, jnp.arange(n_draws)].set(new_w)
        k = k - remove.astype(jnp.int32) + add.astype(jnp.int32)
        return words, k, t + jnp.uint32(1)

    words, _, _ = lax.while_loop(cond, body, (words, k, jnp.uint32(0)))
    return words


def _pad_mask(n, n_words):
    full = n // 32
    rem = n % 32
    mask = np.zeros(n_words, np.uint32)
    mask[:full] = 0xFFFFFFFF
    if rem:
        mask[full] = (1 << rem) - 1
    return jnp.asarray(mask)


def combination_words(ranks, n, k, n_words):
    """Words of the ``k``-subsets of ``n`` items with the given colex ranks.

    ``ranks : (R,)`` int64 in ``[0, C(n, k))`` -> ``(n_words, R)``. Unranking
    in the combinatorial number system: item ``i`` (from ``n - 1`` down) is in
    the subset when ``C(i, kk) <= r``. Ranks past the end give arbitrary sets.
    """
    binom = np.zeros((n + 1, k + 1), np.int64)
    for i in range(n + 1):
        for j in range(min(i, k) + 1):
            binom[i, j] = 1 if j in (0, i) else binom[i - 1, j - 1] + binom[i - 1, j]
    binom = jnp.asarray(binom)
    n_draws = ranks.shape[0]

    def body(step, state):
        words, r, kk = state
        i = n - 1 - step
        c = binom[i, jnp.maximum(kk, 0)]
        take = (kk > 0) & (c <= r)
        r = jnp.where(take, r - c, r)
        kk = kk - take.astype(jnp.int32)
        bit = jnp.where(take, jnp.uint32(1) << jnp.uint32(i % 32), jnp.uint32(0))
        words = words.at[i // 32].set(words[i // 32] | bit)
        return words, r, kk

    init = (
        jnp.zeros((n_words, n_draws), jnp.uint32),
        ranks,
        jnp.full((n_draws,), k, jnp.int32),
    )
    words, _, _ = lax.fori_loop(0, n, body, init)
    return words


def subset_sums(d):
    """All ``2^a`` subset sums of ``d : (H, a)`` -> ``(H, 2^a)``; index bits = membership."""
    s = jnp.zeros((*d.shape[:-1], 1), d.dtype)
    for i in range(d.shape[-1]):
        s = jnp.concatenate([s, s + d[..., i : i + 1]], axis=-1)
    return s


def _order_keys(x):
    """``int64`` keys with the order of the float64 values ``x`` (no NaN; -0.0 == +0.0).

    XLA:CPU sorts and compares int64 several times faster than float64.
    """
    b = lax.bitcast_convert_type(x + jnp.zeros((), x.dtype), jnp.int64)  # -0.0 -> +0.0
    return b ^ ((b >> 63) & jnp.int64(0x7FFFFFFFFFFFFFFF))


def mitm_signflip_counts(d, lo, hi, n_lo=12, shard=0, n_shards=1, group=1):
    """Exact counts of sign patterns by meeting in the middle.

    With ``P = sum_{i: bit_i = 1} d_i`` over all ``2^m`` patterns, return
    ``(#{P >= hi}, #{P <= lo})`` as int64. ``d : (m,)``. The subset sums of
    the first half are enumerated and sorted (as int64 order keys); those of
    the second half are formed in chunks ``s_hi[i] + s_lo`` (``s_lo`` sorted,
    so each chunk's queries are sorted and the binary searches stay in
    cache) and never stored whole. ``O(2^(m/2) m)`` work instead of ``2^m``;
    memory ``O(2^(m/2))``. With ``n_shards > 1`` only the chunks of part
    ``shard`` (may be traced) of ``n_shards`` equal parts are counted: the
    parts' counts add up to the whole. ``group`` half sums of the upper part
    are matched per step (``group * 2^n_lo`` queries at once: few, wide steps
    suit an accelerator); every pair ``s_hi + s_lo`` is formed by the same
    addition whatever the grouping, so counts never depend on it.
    """
    m = d.shape[-1]
    a = m // 2
    keys_a = jnp.sort(_order_keys(subset_sums(d[None, :a])[0]))
    n_a = keys_a.shape[0]
    b = m - a
    n_lo = min(n_lo, b)
    s_hi = subset_sums(d[None, a : m - n_lo])[0]
    s_lo = jnp.sort(subset_sums(d[None, m - n_lo :])[0])

    live = jnp.ones(s_hi.shape, jnp.int64)
    if n_shards > 1:
        per = -(-s_hi.shape[0] // n_shards)
        pad = per * n_shards - s_hi.shape[0]
        s_hi = lax.dynamic_slice_in_dim(jnp.pad(s_hi, (0, pad)), shard * per, per)
        live = lax.dynamic_slice_in_dim(jnp.pad(live, (0, pad)), shard * per, per)
    group = min(group, s_hi.shape[0])
    pad = -s_hi.shape[0] % group  # padded half sums carry weight 0
    s_hi = jnp.pad(s_hi, (0, pad)).reshape(-1, group)
    live = jnp.pad(live, (0, pad)).reshape(-1, group)

    def chunk(carry, x):
        sh, w = x
        sb = sh[:, None] + s_lo[None, :]  # (group, 2^n_lo)
        ge = n_a - jnp.searchsorted(keys_a, _order_keys(hi - sb), side="left")
        le = jnp.searchsorted(keys_a, _order_keys(lo - sb), side="right")
        return (
            carry[0] + jnp.sum(w * jnp.sum(ge.astype(jnp.int64), axis=1)),
            carry[1] + jnp.sum(w * jnp.sum(le.astype(jnp.int64), axis=1)),
        ), None

    (ge, le), _ = lax.scan(chunk, (jnp.int64(0), jnp.int64(0)), (s_hi, live))
    return ge, le


def uniform_permutations(u, k):
    """Fisher-Yates permutations of ``k`` items from uniforms ``u : (..., k - 1)`` in [0, 1).

    Returns ``(..., k)`` int32 permutations. With 53-bit uniforms the bias of
    ``floor(u (i + 1))`` is at most ``k 2^-53`` per step.
    """
    batch = u.shape[:-1]
    perm = jnp.broadcast_to(jnp.arange(k, dtype=jnp.int32), (*batch, k))
    for i in range(k - 1, 0, -1):
        j = jnp.minimum(jnp.floor(u[..., k - 1 - i] * (i + 1)).astype(jnp.int32), i)
        pi = perm[..., i]
        pj = jnp.take_along_axis(perm, j[..., None], axis=-1)[..., 0]
        # Swap positions i and j (when j == i, pj == pi and nothing moves).
        pos = jnp.arange(k, dtype=jnp.int32)[(None,) * j.ndim]  # explicit rank: no promotion
        perm = jnp.where(pos == j[..., None], pi[..., None], perm)
        perm = perm.at[..., i].set(pj)
    return perm
