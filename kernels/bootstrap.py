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

The built-in AUC and confusion statistics read a resample as the counts of its
draws (:func:`slot_counts`): per observation for the ROC area, whose Mann-Whitney
form is then one running sum over the presorted scores (O(n) per resample, no
sort), per confusion cell for the measures. Counts are integers, so these
statistics are exact and do not depend on how draws are vectorised. Weighted
versions (:func:`slot_weights`, :func:`weighted_mean`) serve the observed statistic.
Pure; no validation.
"""

import jax
import jax.numpy as jnp
from jax import lax
from jaxtests.kernels import random as krandom

__all__ = [
    "auc_prep",
    "cochran_q",
    "confusion_slots",
    "counts_auc",
    "delong_placements",
    "draw_indices",
    "jackknife_indices",
    "running_counts",
    "slot_counts",
    "slot_weights",
    "weighted_mean",
]


def draw_indices(key, first, n_draws, offset, n):
    """Resample indices ``(n_draws, n)`` uint32 of draws ``first ..``, sample words from ``offset``.

    ``first`` a traced int; ``n_draws``, ``offset``, ``n`` static. Needs
    ``offset + n <= 2^32``.
    """
    g = first + jnp.arange(n_draws, dtype=jnp.int64)
    keys = krandom.block_keys(key, g)  # (R, 2): one threefry key per draw
    j = jnp.uint32(offset) + jnp.arange(n, dtype=jnp.uint32)
    words = krandom.keyed_words(keys[:, :1], keys[:, 1:2], j[None, :])
    # Lemire's multiply-shift: floor(word n / 2^32), in [0, n)
    return ((words.astype(jnp.uint64) * jnp.uint64(n)) >> 32).astype(jnp.uint32)


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


_BLOCK = 16  # elements per block of the blocked running sum


def running_counts(q):
    """Inclusive running sums of integer counts ``q : (R, n)`` along the last axis, int32.

    XLA:CPU lowers a cumulative sum as an associative scan (~5 ns an element); here the
    sum within each block of 16 is one small matmul with a triangular matrix (float32,
    exact below 2^24, at ``Precision.HIGHEST`` so no accelerator rounds it to TF32) and
    only the 16x shorter block totals are scanned. Needs ``sum q < 2^24`` per row.
    """
    r, n = q.shape
    nb = -(-n // _BLOCK)
    qb = jnp.pad(q, ((0, 0), (0, nb * _BLOCK - n))).reshape(r, nb, _BLOCK)
    tri = jnp.tril(jnp.ones((_BLOCK, _BLOCK), jnp.float32))  # tri[g, h] = [h <= g]
    inner = jnp.einsum(
        "rbh,gh->rbg", qb.astype(jnp.float32), tri, precision=lax.Precision.HIGHEST
    ).astype(jnp.int32)
    totals = jnp.sum(qb, axis=-1, dtype=jnp.int32)
    before = jnp.cumsum(totals, axis=-1) - totals  # counts in the earlier blocks
    return (inner + before[..., None]).reshape(r, nb * _BLOCK)[:, :n]


def auc_prep(y, s):
    """Score order and tie groups for :func:`counts_auc`; ``y`` ±1, ``s : (n,)``.

    Returns ``(order, pos, below, last)``: the ascending order of ``s``, whether
    each sorted instance is positive, and for each its tie group's position before
    its first (-1 for none) and its last position, in sorted order.
    """
    order = jnp.argsort(s)
    ss = s[order]
    first = jnp.searchsorted(ss, ss, side="left").astype(jnp.int32)
    last = (jnp.searchsorted(ss, ss, side="right") - 1).astype(jnp.int32)
    return order.astype(jnp.int32), y[order] > 0, first - 1, last


def counts_auc(c, prep, dtype):
    """Mann-Whitney ROC area of integer counts ``c : (R, n)`` of each instance, ties 1/2.

    In score order, with ``Q`` the running count of negatives, a positive of tie
    group ``[lo, hi]`` wins ``Q(lo - 1) + (Q(hi) - Q(lo - 1)) / 2`` pairs:
    ``2U = sum_pos c (Q(lo - 1) + Q(hi))``, ``AUC = U / (P N)``; NaN when a class
    has no weight. One gather, one running sum and two gathers of ``Q`` per score;
    every sum is an exact integer.
    """
    order, pos, below, last = prep
    cs = c[:, order]
    p = jnp.where(pos, cs, 0)
    q = cs - p
    run = running_counts(q)
    under = jnp.where(below >= 0, run[:, jnp.maximum(below, 0)], 0)
    wins = (under + run[:, last]).astype(jnp.int64)
    u2 = jnp.sum(p.astype(jnp.int64) * wins, axis=-1).astype(dtype)
    den = jnp.sum(p, axis=-1).astype(dtype) * run[:, -1].astype(dtype)
    return jnp.where(den > 0, u2 / 2 / jnp.where(den > 0, den, 1), jnp.nan)


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
    of positives above ``s_j``, ties 1/2; entries of the other class are 0. Sun & Xu
    (2014) get them from midranks; here the counts come straight from one sort:
    in score order, a tie group ``[lo, hi]`` holds ``P(hi) - P(lo - 1)`` positives
    (``P`` the running count of positives) and has ``P(lo - 1)`` positives and
    ``lo - P(lo - 1)`` negatives below it. Pure; no validation.
    """
    pos = y > 0
    n = s.shape[-1]
    n_pos = jnp.sum(pos).astype(s.dtype)
    n_neg = n - n_pos

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


def cochran_q(x):
    """Cochran's Q of binary ``x : (..., n, k)`` (instances x classifiers); 0 when undefined.

    ``Q = (k - 1) (k sum_j C_j^2 - N^2) / (k N - sum_i R_i^2)`` with column sums
    ``C_j``, row sums ``R_i`` and ``N = sum C_j``.
    """
    k = x.shape[-1]
    col = jnp.sum(x, axis=-2)
    row = jnp.sum(x, axis=-1)
    total = jnp.sum(col, axis=-1)
    num = (k - 1) * (k * jnp.sum(col**2, axis=-1) - total**2)
    den = k * total - jnp.sum(row**2, axis=-1)
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1), 0.0)
