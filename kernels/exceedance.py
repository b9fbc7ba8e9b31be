"""Counting resampled statistics at least as extreme as the observed one.

Ties: a resampled statistic within :func:`tie_tol` of the observed one counts
as equal (scipy's ``permutation_test`` uses ``100 eps |t|``). Max-T counts
(Westfall & Young) compare each draw's largest standardised statistic.
:func:`evaluate` recomputes in float64 the float32 draws that lie too close
to a threshold to be decided, so counts equal those of float64 arithmetic.

Pure jnp; no validation.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "EPS",
    "evaluate",
    "maxt_counts",
    "tail_counts",
    "tie_band",
    "tie_tol",
    "unsure_lanes",
]

EPS = float(np.finfo(np.float64).eps)
_SORTED_GROUPS = 2**13  # groups of a step up to which the rechecked ones are found by a sort


def tie_tol(observed, magnitude, xp=jnp):
    """Tie tolerance ``100 eps max(|t|, s)`` of an observed statistic ``t``; ``(H,)``.

    scipy's ``100 eps |t|`` is relative to ``t`` alone and vanishes at ``t = 0``,
    where a rearrangement that ties in exact arithmetic can come out as
    ``-4e-17`` (a difference of two AUCs near 0.6). Rounding scales with the
    terms of the statistic, so ``s`` is their size: the range of a bounded
    measure, or the statistic of a fixed rearrangement. A non-finite ``s`` is
    ignored. ``xp=numpy`` computes it on the host (the same operations, the same bits),
    for concrete scores outside any program.
    """
    s = xp.abs(magnitude)
    s = xp.where(xp.isfinite(s), s, 0.0)
    return 100 * EPS * xp.maximum(xp.abs(observed), s)


def tie_band(t_obs, tol, xp=jnp):
    """Thresholds ``(t_obs - tol, t_obs + tol)`` of "at least as extreme"; ``(H,)`` each.

    An infinite ``t_obs`` is its own threshold: ``inf - inf`` is NaN, which no
    draw reaches, so a resampled +inf would not tie an observed +inf. A NaN
    ``t_obs`` gives NaN thresholds: no draw counts (the p-value is set to NaN).
    ``xp`` as :func:`tie_tol`.
    """
    finite = xp.isfinite(t_obs)
    return xp.where(finite, t_obs - tol, t_obs), xp.where(finite, t_obs + tol, t_obs)


def tail_counts(t, t_obs, tol, valid):
    lo, hi = tie_band(t_obs, tol)
    ge = jnp.sum((t >= lo[:, None]) & valid[None, :], axis=1, dtype=jnp.int64)
    le = jnp.sum((t <= hi[:, None]) & valid[None, :], axis=1, dtype=jnp.int64)
    return ge, le


def maxt_counts(t, t_obs, tol, scale, valid, alternative):
    z = t / scale[:, None]
    zo = t_obs / scale
    zt = tol / scale
    # NaN draws are never extreme (scipy's comparisons), so they must not mask
    # the other hypotheses' maximum either: nanmax/nanmin.
    if alternative == "greater":
        big = jnp.nanmax(z, axis=0)
        hit = big[None, :] >= tie_band(zo, zt)[0][:, None]
    elif alternative == "less":
        small = jnp.nanmin(z, axis=0)
        hit = small[None, :] <= tie_band(zo, zt)[1][:, None]
    else:
        big = jnp.nanmax(jnp.abs(z), axis=0)
        hit = big[None, :] >= tie_band(jnp.abs(zo), zt)[0][:, None]
    return jnp.sum(hit & valid[None, :], axis=1, dtype=jnp.int64)


def unsure_lanes(t, err, t_obs, tol, scale, alternative, maxt):
    """Lanes ``(L,)`` whose counts could change if ``t`` moved by up to ``err``.

    Every decision is monotone in each ``t`` (the max-T ones through ``|z|``
    for two-sided tests), so a lane is settled when its decisions agree at
    ``t - err`` and ``t + err``. NaN thresholds decide nothing.
    """
    lo, hi = tie_band(t_obs, tol)
    e = err[:, None]
    ge = (t - e < lo[:, None]) & (lo[:, None] <= t + e)
    le = (t - e <= hi[:, None]) & (hi[:, None] < t + e)
    out = jnp.any(ge | le, axis=0)
    if maxt:
        z, ez = t / scale[:, None], e / scale[:, None]
        zo, zt = t_obs / scale, tol / scale
        if alternative == "less":
            thr = tie_band(zo, zt)[1][:, None]
            a, b = jnp.nanmin(z - ez, axis=0), jnp.nanmin(z + ez, axis=0)
            out = out | jnp.any((a[None, :] <= thr) != (b[None, :] <= thr), axis=0)
        else:
            if alternative == "two-sided":
                z, zo = jnp.abs(z), jnp.abs(zo)
            thr = tie_band(zo, zt)[0][:, None]
            a, b = jnp.nanmax(z - ez, axis=0), jnp.nanmax(z + ez, axis=0)
            out = out | jnp.any((a[None, :] >= thr) != (b[None, :] >= thr), axis=0)
    return out


def evaluate(evaluator, key, block_ids, data, t_obs, tol, scale, alternative, maxt):
    """Statistics of a step's draws; those too close to a decision are recomputed in float64.

    Float32 sums (``banded`` evaluators) are within ``data.err_bound`` of the
    float64 ones, so only lanes with a threshold inside ``t +- err`` can count
    differently: those lanes (usually a handful per block) get their float64
    value from :meth:`exact`, and counts equal those of float64 arithmetic.
    Whether a lane is recomputed depends on its own values only (batch sizes
    never change a draw), and its float64 sum adds in a fixed order. Lanes are
    gathered as the evaluator's family says (:meth:`Family.recheck_pass
    <jaxtests.kernels.families.Family.recheck_pass>`).
    """
    if not evaluator.banded:
        return evaluator(key, block_ids, data)
    t, lanes = evaluator.approx(key, block_ids, data)
    unsure = unsure_lanes(t, data.err_bound, t_obs, tol, scale, alternative, maxt)
    n_lanes = unsure.shape[0]
    group, per = evaluator.family.recheck_pass(data.terms.exact.shape[1])
    n_groups = n_lanes // group
    hit = jnp.any(unsure.reshape(n_groups, group), axis=1)
    per = min(per, n_groups)
    # idx: the hit groups in order, then anything; hit_at: whether position i holds a hit.
    pad_false = jnp.zeros((per,), bool)
    if n_groups <= _SORTED_GROUPS:
        # One int64 sort of (missed << 32 | group) puts the hits first, in order: one
        # compiled kernel where a cumulative sum and a scatter compiled seven (XLA:CPU).
        g = jnp.arange(n_groups, dtype=jnp.int64)
        packed = lax.sort(((~hit).astype(jnp.int64) << 32) | g, is_stable=False)
        idx = (packed & jnp.int64(0xFFFFFFFF)).astype(jnp.int32)
        hit_at = jnp.concatenate([(packed >> 32) == 0, pad_false])
    else:
        # Many groups (single lanes gathered from many blocks): a sort would cost more
        # than the sums; a cumulative sum places each hit.
        pos = jnp.cumsum(hit, dtype=jnp.int32) - 1
        idx = (
            jnp.zeros((n_groups,), jnp.int32)
            .at[jnp.where(hit, pos, n_groups)]
            .set(jnp.arange(n_groups, dtype=jnp.int32), mode="drop")
        )
        hit_at = jnp.concatenate([jnp.arange(n_groups, dtype=jnp.int32) <= pos[-1], pad_false])
    idx = jnp.concatenate([idx, jnp.zeros((per,), jnp.int32)])
    offsets = jnp.arange(group, dtype=jnp.int32)

    def body(state):
        start, t = state
        g = lax.dynamic_slice_in_dim(idx, start, per)
        ln = (g[:, None] * group + offsets[None, :]).reshape(-1)
        live = jnp.repeat(lax.dynamic_slice_in_dim(hit_at, start, per), group) & unsure[ln]
        t64 = evaluator.exact(data, jax.tree.map(lambda a: a[ln], lanes))
        return start + per, t.at[:, jnp.where(live, ln, n_lanes)].set(t64, mode="drop")

    # Passes of ``per`` groups while the next position holds a hit (hits come first).
    _, t = lax.while_loop(lambda s: hit_at[s[0]], body, (jnp.int32(0), t))
    return t
