"""Bootstrap resamples and their statistics, DeLong's placements, Cochran's Q.

Resample ``g`` of a sample of ``n`` observations picks indices ``i_0 .. i_{n-1}``
from the library's counter-based stream (:mod:`jaxtests.kernels.random`): draw
``g`` has its own key words ``bits(fold_in(key, g))`` and index ``j`` of sample
``s`` reads word ``offset_s + j`` (``offset_s`` the observations of the samples
before ``s``; a paired draw reads one set of indices for all samples), mapped to
``[0, n)`` by Lemire's multiply-shift ``(word n) >> 32``. Each index has
probability within a relative ``n / 2^32`` of ``1/n`` (``2.3e-6`` at
``n = 10^4``, far below the Monte Carlo error of any interval). A draw depends on
its index only, so any grouping of draws into blocks sees the same resamples.

The built-in statistics read a resample as the counts of its draws: per
confusion cell for the measures (:func:`slot_counts`), per observation for the
ROC area (:func:`auc_resamples`), gathered into each score's sorted layout, where
the Mann-Whitney count is one pass of vector adds (:func:`ordered_pairs`, O(n)
per resample, no sort and no scan over n). Counts are integers, so these statistics are
exact and do not depend on how draws are vectorised. Weighted versions
(:func:`slot_weights`, :func:`weighted_mean`) serve the observed statistic.
Pure; no validation.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jaxtests.kernels import random as krandom

__all__ = [
    "AUC_ROWS",
    "auc_finish",
    "auc_parts",
    "auc_resamples",
    "cochran_q",
    "column_pairs",
    "confusion_slots",
    "delong_placements",
    "draw_indices",
    "jackknife_indices",
    "ordered_pairs",
    "slot_counts",
    "slot_weights",
    "weighted_mean",
]


def draw_indices(key, first, n_draws, offset, n, n_live=None):
    """Resample indices ``(n_draws, n)`` uint32 of draws ``first ..``, sample words from ``offset``.

    ``first`` a traced int; ``n_draws``, ``n`` static; ``offset`` static or traced. Needs
    ``offset + n <= 2^32``. ``n_live`` (traced, default ``n``): indices drawn from
    ``[0, n_live)``; column ``j < n_live`` is then the same as with ``n = n_live`` (its
    word depends on ``offset + j`` only), the columns from ``n_live`` on are a shape
    bucket's padding, to be masked.
    """
    g = first + jnp.arange(n_draws, dtype=jnp.int64)
    keys = krandom.block_keys(key, g)  # (R, 2): one threefry key per draw
    j = jnp.asarray(offset).astype(jnp.uint32) + jnp.arange(n, dtype=jnp.uint32)
    words = krandom.keyed_words(keys[:, :1], keys[:, 1:2], j[None, :])
    mult = jnp.uint64(n) if n_live is None else jnp.asarray(n_live).astype(jnp.uint64)
    # Lemire's multiply-shift: floor(word n / 2^32), in [0, n)
    return ((words.astype(jnp.uint64) * mult) >> 32).astype(jnp.uint32)


def slot_counts(slots, n_slots):
    """Counts ``(R, n_slots)`` int32 of the slot numbers ``slots : (R, m)`` (one flat scatter)."""
    r = slots.shape[0]
    flat = slots.astype(jnp.int32) + jnp.int32(n_slots) * jnp.arange(r, dtype=jnp.int32)[:, None]
    out = jnp.zeros((r * n_slots,), jnp.int32).at[flat.reshape(-1)].add(1, mode="promise_in_bounds")
    return out.reshape(r, n_slots)


def slot_weights(c, slot, n_slots):
    """Weights ``c : (R, n)`` of observations summed into their slots: ``(R, n_slots)``."""
    r = c.shape[0]
    return jnp.zeros((r, n_slots), c.dtype).at[:, slot].add(c, mode="promise_in_bounds")


def jackknife_indices(first, n_rows, n):
    """Leave-one-out indices ``(n_rows, n - 1)``: all of ``0 .. n-1`` except ``first + r``."""
    i = first + jnp.arange(n_rows)
    j = jnp.arange(n - 1)
    return j[None, :] + (j[None, :] >= i[:, None]).astype(j.dtype)


def weighted_mean(c, x):
    """``sum c x / sum c`` per row of ``c : (R, n)``; ``x : (n,)``."""
    c = c.astype(x.dtype)
    return (c @ x) / jnp.sum(c, axis=-1)


AUC_ROWS = 64  # K: rows of the score layout (sorted position t K + k sits at row k, column t)


def auc_resamples(idx, n, layouts, dtype, n_live=None):
    """ROC areas ``(R,)`` per score layout of the resamples ``idx : (R, n)`` (ties 1/2).

    ``n_live`` (traced, default ``n``): the observations a resample draws when the data
    are padded to a shape bucket; the padding's draws are then index ``n + 1``, a slot no
    layout reads (slot ``n`` stays the always-empty one).

    One resample at a time (``lax.map``): its counts of the ``n`` observations (a scatter of
    its draws) stay in cache while each layout reads them (:func:`auc_parts`), and nothing
    of size ``n`` is written back. On XLA:CPU this is several times faster than one flat
    scatter of the block's draws followed by batched gathers, at every ``n`` measured
    (200 to 10^4).
    """

    def parts(i):
        c = jnp.zeros((n + 1 + (n_live is not None),), jnp.int32)
        c = c.at[i].add(1, mode="promise_in_bounds")
        return tuple(auc_parts(c, lay, dtype) for lay in layouts)

    return [auc_finish(*o, n if n_live is None else n_live, dtype) for o in lax.map(parts, idx)]


def auc_parts(c, layout, dtype):
    """One resample's Mann-Whitney parts from its counts ``c : (n + 1,)`` (slot ``n`` empty).

    ``layout = (src_p, src_q, tie_src, tie_pos, tie_group)`` (the caller's): ``src_p, src_q
    : (K, m)`` the observation at each slot of the score's sorted layout (sorted position
    ``t K + k`` at row ``k``, column ``t``), a positive in ``src_p`` and a negative in
    ``src_q`` (``n``, an empty slot, otherwise). In each tie group the negatives come
    first, so ``S = #{(i, j): i positive after j negative}`` counts a tied pair as won and
    ``2U = 2S - sum_g P_g N_g`` over the tie groups (``tie_src``, ``tie_pos``,
    ``tie_group``: the tied instances, 1 for a positive, their group ``0 .. T-1``).
    Returns ``(2 S_within - sum_g P_g N_g, p_col, q_col)``: the within-column part and the
    column totals of positives and negatives (:func:`auc_finish` adds the rest).
    """
    src_p, src_q, tie_src, tie_pos, tie_group = layout
    p = c.at[src_p].get(mode="promise_in_bounds")
    q = c.at[src_q].get(mode="promise_in_bounds")
    within, p_col, q_col = column_pairs(p, q, dtype)
    s2 = 2 * within
    t = tie_src.shape[0]
    if t:
        ct = c.at[tie_src].get(mode="promise_in_bounds").astype(dtype)
        pt = ct * tie_pos.astype(dtype)
        pg = jnp.zeros((t,), dtype).at[tie_group].add(pt, mode="promise_in_bounds")
        ng = jnp.zeros((t,), dtype).at[tie_group].add(ct - pt, mode="promise_in_bounds")
        s2 = s2 - jnp.sum(pg * ng, dtype=dtype)
    return s2, p_col, q_col


def auc_finish(s2_within, p_col, q_col, n, dtype):
    """``AUC = U / (P N)`` from :func:`auc_parts` of resamples of ``n`` draws; NaN when a class
    has no weight."""
    s2 = s2_within + 2 * _across(p_col, q_col, AUC_ROWS, dtype)
    n_pos = jnp.sum(p_col, axis=-1, dtype=dtype)
    den = (n_pos * (n - n_pos)).astype(jnp.float64)
    ok = den > 0
    return jnp.where(ok, s2.astype(jnp.float64) / 2 / jnp.where(ok, den, 1), jnp.nan)


def ordered_pairs(p, q, dtype):
    """``sum_{i > j} p_i q_j`` over the sorted positions ``t K + k`` of ``p, q : (..., K, m)``.

    Rows are added in order, so the count of ``q`` before each position of a column is one
    running vector (``K`` fused vector steps, no scan along the minor axis); the columns'
    totals are a shorter problem of the same kind, laid out again while they are longer
    than ``K``. Integer arithmetic: exact while the result fits ``dtype``.
    """
    within, p_col, q_col = column_pairs(p, q, dtype)
    return within + _across(p_col, q_col, p.shape[-2], dtype)


def column_pairs(p, q, dtype):
    """Within-column ``sum_{k > k'} p_k q_k'`` ``(...,)`` and the column totals ``(..., m)``.

    One unrolled chain of vector steps over the ``K`` rows (XLA fuses it into one loop over
    the columns: ``p`` and ``q`` are read once, nothing of their size is written).
    """
    k, m = p.shape[-2:]
    acc = acc_p = acc_q = jnp.zeros((*p.shape[:-2], m), dtype)
    for row in range(k):
        pr = p[..., row, :].astype(dtype)
        acc = acc + pr * acc_q
        acc_p = acc_p + pr
        acc_q = acc_q + q[..., row, :].astype(dtype)
    return jnp.sum(acc, axis=-1, dtype=dtype), acc_p, acc_q


def _across(p_col, q_col, k, dtype):
    """``sum_{t > t'} p_t q_t'`` of column totals ``(..., m)`` in sorted order."""
    m = p_col.shape[-1]
    if m <= k:
        before = jnp.cumsum(q_col, axis=-1, dtype=dtype) - q_col
        return jnp.sum(p_col * before, axis=-1, dtype=dtype)
    m2 = -(-m // k)
    lead = p_col.shape[:-1]
    pad = [(0, 0)] * len(lead) + [(0, m2 * k - m)]

    def lay(x):
        return jnp.swapaxes(jnp.pad(x, pad).reshape(*lead, m2, k), -1, -2)

    return ordered_pairs(lay(p_col), lay(q_col), dtype)


def confusion_slots(y, f):
    """Cell of each instance: 0 tp, 1 fn, 2 fp, 3 tn, for predictions ``f > 0`` of ±1 ``y``."""
    return 2 * (y <= 0).astype(jnp.int32) + (f <= 0).astype(jnp.int32)


def delong_placements(y, s, order=None, inverse=None):
    """DeLong's structural components (placements), one sort per score; ``y`` ±1, ``s : (K, n)``.

    ``order : (K, n)``, optional: an ascending order of each row of ``s``, and
    ``inverse`` its inverse permutation (a caller with concrete data may sort on the
    host: XLA:CPU's sort is several times slower than numpy's).

    Returns ``(auc (K,), v10 (K, n), v01 (K, n))``: ``v10_i`` (positives) is the
    fraction of negatives below ``s_i``, ties 1/2; ``v01_j`` (negatives) the fraction
    of positives above ``s_j``, ties 1/2; entries of the other class are 0. Entries with
    ``y = 0`` are padding (a shape bucket's): neither class, their scores NaN so that
    they sort last; their placements are meaningless and must be masked. Sun & Xu
    (2014) get them from midranks; here the counts come straight from one sort:
    in score order, a tie group ``[lo, hi]`` holds ``P(hi) - P(lo - 1)`` positives
    (``P`` the running count of positives) and has ``P(lo - 1)`` positives and
    ``lo - P(lo - 1)`` negatives below it. Pure; no validation.
    """
    pos = y > 0
    n = s.shape[-1]
    n_pos = jnp.sum(pos).astype(s.dtype)
    n_neg = jnp.sum(y < 0).astype(s.dtype)

    def one(x, order, inv):
        xs = x[order]
        ps = pos[order].astype(s.dtype)
        i = jnp.arange(n)
        new = jnp.concatenate([jnp.ones((1,), bool), xs[1:] != xs[:-1]])
        lo = lax.cummax(jnp.where(new, i, 0), axis=0)
        last = jnp.concatenate([xs[1:] != xs[:-1], jnp.ones((1,), bool)])
        hi = lax.cummin(jnp.where(last, i, n), axis=0, reverse=True)
        cum = jnp.cumsum(ps)
        below_pos = jnp.where(lo > 0, cum[lo - 1], 0)
        tied_pos = cum[hi] - below_pos
        below_neg = lo.astype(s.dtype) - below_pos
        tied_neg = (hi - lo + 1).astype(s.dtype) - tied_pos
        v10 = jnp.where(ps > 0, (below_neg + tied_neg / 2) / n_neg, 0)
        v01 = jnp.where(ps > 0, 0, (n_pos - below_pos - tied_pos / 2) / n_pos)
        return v10[inv], v01[inv]

    if order is None:
        order = jnp.argsort(s, axis=-1)
        inverse = None
    if inverse is None:
        rows = jnp.arange(s.shape[0])[:, None]
        inverse = (
            jnp.zeros(s.shape, order.dtype)
            .at[rows, order]
            .set(jnp.arange(n, dtype=order.dtype)[None, :])
        )
    v10, v01 = jax.vmap(one)(s, order, inverse)
    auc = jnp.sum(v10, axis=-1) / n_pos
    return auc, v10, v01


def cochran_q(x, xp=jnp):
    """Cochran's Q of binary ``x : (..., n, k)`` (instances x classifiers); 0 when undefined.

    ``Q = (k - 1) (k sum_j C_j^2 - N^2) / (k N - sum_i R_i^2)`` with column sums
    ``C_j``, row sums ``R_i`` and ``N = sum C_j``. ``xp``: the array namespace
    (``numpy`` for concrete data on the host, which compiles nothing).
    """
    k = x.shape[-1]
    col = xp.sum(x, axis=-2)
    row = xp.sum(x, axis=-1)
    total = xp.sum(col, axis=-1)
    num = (k - 1) * (k * xp.sum(col**2, axis=-1) - total**2)
    den = k * total - xp.sum(row**2, axis=-1)
    return xp.where(den > 0, num / xp.where(den > 0, den, 1), 0.0)
