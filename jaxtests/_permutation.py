"""Permutation tests: sign flips, two-sample label permutations, swap tests.

One engine serves every test: a statistic kernel gives the observed value, and
the same kernel (or an exactly equivalent linear form) is evaluated over
blocks of rearrangements that are enumerated (``method="exact"``), drawn at
random (``"monte-carlo"``) or summed in closed form (``"binomial"``). Only
exceedance counts are kept unless ``return_null=True``.

Reproducibility: the random bits of draw ``g`` are counter-based words keyed
by ``fold_in(key, g // 4096)`` (see :mod:`jaxtests.kernels.resampling`), so
they depend on the draw's index only; blocks of draws have a size fixed by
the data's shape, the statistic and ``n_resamples``, and counts are integers,
so the same key gives bit-identical counts and p-values for any
``batch_size``, any ``progress`` chunking and any number of local devices
(blocks are sharded over all local devices with :func:`jax.shard_map`). For
several hosts, start each with :func:`jax.distributed.initialize` and run the
same call: the engine uses the local devices of each process; splitting
``n_resamples`` across hosts by block range and adding the counts gives the
same result.
"""

import dataclasses
import functools
import math
import numbers
import os
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec

from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._progress import as_progress, warn_long_run
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests.kernels import measures as km
from jaxtests.kernels import resampling as kr
from jaxtests.kernels import statistics as ks

__all__ = [
    "PermutationTestResult",
    "permutation_test",
    "signflip_test",
    "swap_test",
]

_METHODS = ("auto", "exact", "monte-carlo", "binomial")
_MAX_ENUMERATION = 2**30  # patterns enumerated one by one
_MAX_MITM = 48  # sign flips counted by meeting in the middle (2 x 2^24 half sums)
_EPS = float(np.finfo(np.float64).eps)
_CI_LEVEL = 0.99


@result
class PermutationTestResult:
    """Result of a permutation test.

    Attributes
    ----------
    statistic : array
        Observed statistic, one per hypothesis (the input's batch shape).
    pvalue : array
        p-value (scipy's conventions, see :func:`signflip_test`); NaN where a
        user statistic (or Hotelling's T²) is NaN.
    pvalue_interval : array, (..., 2)
        Low and high ends of a 99% Clopper-Pearson interval for the p-value that
        infinitely many draws would give (Monte Carlo); ``(pvalue, pvalue)`` for
        exact and binomial results.
    n_extreme : array
        Number of rearrangements at least as extreme as the observed one (the
        smaller tail for two-sided tests); 0 where ``pvalue`` is NaN.
    pvalue_adjusted : array or None
        Westfall-Young single-step max-T adjusted p-values (``correction="maxT"``);
        the name matches :func:`jaxtests.posthoc`'s results.
    n_draws : array or None
        Draws used per hypothesis when ``sequential`` stopping is on.
    null_distribution : array or None
        Statistic of every rearrangement, ``(..., n_resamples)``, when asked.
    method : str
        "exact", "monte-carlo", "binomial" or "sequential".
    alternative : str
    n_resamples : int
        Rearrangements evaluated (all of them for "exact"; 0 for "binomial").
    correction : str or None
    seed : int, tuple or None
        Seed that repeats the draws (None when no randomness was used).
    """

    statistic: jax.Array
    pvalue: jax.Array
    pvalue_interval: jax.Array
    n_extreme: jax.Array
    pvalue_adjusted: jax.Array | None = None
    n_draws: jax.Array | None = None
    null_distribution: jax.Array | None = None
    method: str = static_field(default="monte-carlo")
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=0)
    correction: str | None = static_field(default=None)
    seed: object = static_field(default=None)


# --------------------------------------------------------------------------
# Block evaluators: hashable descriptions of "statistics of draws in blocks".
# Each maps (key, block_ids (k,), data) -> (H, k R) statistics, where draw r
# of block b is global draw b R + r. Values of one draw never depend on k.
# --------------------------------------------------------------------------


def _block_draws_linear(n_words):
    r = 8192
    while r > 64 and n_words * r > 2**21:
        r //= 2
    return r


def _block_draws_fused(n_words, n_h, n_total, sequential=False):
    """Draws per block for :func:`bit_sums`: about 2^17 lanes (shared by the hypotheses).

    Large blocks amortise the per-word loop overhead; a block never exceeds
    the next power of two above ``n_total`` (small tests stay cheap) nor 4096
    draws under sequential stopping (stopping is checked between blocks).
    The size depends only on the data's shape and ``n_resamples``, never on
    ``batch_size`` or the device count.
    """
    r = 2**17
    cap = 4096 if sequential else 2**17
    while r > 64 and (r * n_h > 2**17 or r * n_words > 2**26 or r >= 2 * n_total or r > cap):
        r //= 2
    return r


def _block_draws_generic(n_elements):
    r = 1024
    while r > 2 and r * n_elements > 2**20:
        r //= 2
    return r


def _use_tables(n_words):
    # Byte tables cost 256 x 8 bytes per 8 instances; beyond ~32 MB they fall
    # out of cache and plain bit planes are faster.
    return n_words * 4 * 256 * 8 <= 2**25


def _exact_terms(d, n_words):
    """``(tables?, data)``: ``d : (H, m)`` padded to ``32 n_words``, as byte tables or planes."""
    dpad = jnp.pad(d, ((0, 0), (0, 32 * n_words - d.shape[1])))
    if _use_tables(n_words):
        return True, {"tables": kr.byte_tables(dpad)}
    return False, {"d": dpad}


def _float32_err(d, n_words, a, c):
    """Bound on ``|t32 - t64|`` for ``t = a P + c`` of :func:`bit_sums` vs :func:`bit_sums_ordered`.

    Both sums are within their rounding bounds of the exact ``P`` (the float32
    one, Higham's, of :func:`jaxtests.kernels.resampling.bit_sums_error_bound`;
    the float64 one ``gamma_{32 n_words}``), plus a float64 correction and the
    affine map. ``d : (H, m)``, ``a, c : (H,)``.
    """
    abs_sum = jnp.sum(jnp.abs(d), axis=-1)
    bound = kr.bit_sums_error_bound(abs_sum, n_words) + (32 * n_words + 8) * _EPS * abs_sum
    return (a * bound + 8 * _EPS * jnp.abs(c)) * (1 + 2.0**-20)


def _pad_words(d, n_words, dtype=jnp.float32):
    """``(H, m)`` -> ``(H, n_words, 32)`` zero-padded, for :func:`bit_sums`."""
    m = d.shape[-1]
    return jnp.pad(d, ((0, 0), (0, 32 * n_words - m))).reshape(-1, n_words, 32).astype(dtype)


@dataclasses.dataclass(frozen=True)
class _Words:
    """Where a block's words come from: "random", "enumerate" or "combinations"."""

    source: str
    n_words: int
    draws: int
    n: int = 0  # items (combinations / subset-size correction)
    n1: int = 0  # subset size for label permutations (0: plain fair bits)

    def __call__(self, key, block_ids):
        r = self.draws
        if self.source == "enumerate":
            parts = [
                kr.enumeration_words(b.astype(jnp.int64) * r, r, self.n_words) for b in block_ids
            ]
        elif self.source == "combinations":
            parts = [
                kr.combination_words(
                    b.astype(jnp.int64) * r + jnp.arange(r, dtype=jnp.int64),
                    self.n,
                    self.n1,
                    self.n_words,
                )
                for b in block_ids
            ]
        else:
            # The same words as the fused sums (``bit_sums``) of these draws.
            parts = []
            for b in block_ids:
                keys, local = kr.draw_keys(key, b.astype(jnp.int64) * r, r, 4)
                w = kr.word_grid(keys[:, 0], keys[:, 1], local, self.n_words)
                if self.n1:
                    # Keyed by the draw's global index (its key block and its place in
                    # it), never by its place in this evaluation block: evaluation blocks
                    # that share a key block must not share correction streams.
                    seed = (keys[:, 2].astype(jnp.uint64) << 32) | keys[:, 3].astype(jnp.uint64)
                    w = kr.fix_subset_size(w, self.n, self.n1, seed, local)
                parts.append(w)
        return jnp.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


@dataclasses.dataclass(frozen=True)
class _LinearEval:
    """Affine statistics ``a P + c`` of selected-instance sums ``P`` from byte tables (exact)."""

    words: _Words
    tables: bool

    def __call__(self, key, block_ids, data):
        w = self.words(key, block_ids)
        if self.tables:
            p = kr.lut_sums(w, data["tables"])
        else:
            p = kr.bitplane_sums(w, data["d"])
        return data["a"][:, None] * p + data["c"][:, None]


@dataclasses.dataclass(frozen=True)
class _CountsEval:
    """Swap test of confusion-count measures: counts are linear in the swap bits."""

    words: _Words
    tables: bool
    measure: str
    n_classes: int
    beta: float

    def __call__(self, key, block_ids, data):
        w = self.words(key, block_ids)
        if self.tables:
            delta = kr.lut_sums(w, data["tables"])
        else:
            delta = kr.bitplane_sums(w, data["d"])
        return _counts_statistic(delta, data, self.measure, self.n_classes, self.beta)


def _counts_statistic(delta, data, measure, n_classes, beta):
    ca = data["counts_a"][:, None] + delta
    cb = data["counts_b"][:, None] - delta
    fa = _count_measure(ca, data["n"], measure, n_classes, beta)
    fb = _count_measure(cb, data["n"], measure, n_classes, beta)
    return (fa - fb)[None, :]


@dataclasses.dataclass(frozen=True)
class _FusedEval:
    """Monte Carlo statistics of ``P = sum_i bit_i d_i``, bits generated and consumed in place.

    ``kind="affine"``: ``a P + c`` (sign-flip mean, its t). ``kind="counts"``:
    swap-test confusion counts ``counts_a + P`` (integers, exact in float32).
    """

    draws: int
    kind: str = "affine"
    measure: str = "f1"
    n_classes: int = 1
    beta: float = 1.0

    @property
    def banded(self):
        # Count changes are integers, exact in float32; affine sums are rounded.
        return self.kind == "affine"

    def __call__(self, key, block_ids, data):
        return self.approx(key, block_ids, data)[0]

    def approx(self, key, block_ids, data):
        """Statistics from float32 sums, and per lane what :meth:`exact` needs."""
        # Block ids of one step are consecutive: their draws are one contiguous range.
        first = block_ids[0].astype(jnp.int64) * self.draws
        keys, local = kr.draw_keys(key, first, block_ids.shape[0] * self.draws)
        p = kr.bit_sums(keys[:, 0], keys[:, 1], local, data["d32"])
        if self.kind == "affine":
            return data["a"][:, None] * p + data["c"][:, None], (keys, local)
        return _counts_statistic(p, data, self.measure, self.n_classes, self.beta), None

    def exact(self, data, lanes):
        """Float64 statistics of the lanes ``(keys, local)`` (the same draws)."""
        keys, local = lanes
        p = kr.bit_sums_ordered(keys[:, 0], keys[:, 1], local, data["d64"])
        return data["a"][:, None] * p + data["c"][:, None]


@dataclasses.dataclass(frozen=True)
class _SubsetEval:
    """Monte Carlo two-sample splits: group-1 sums ``S1`` of uniform ``n1``-subsets.

    ``mode="bernoulli"``: fair membership bits (fused sums ``P`` and counts
    ``K``), then ``|K - n1|`` members removed or added by
    :func:`jaxtests.kernels.resampling.subset_corrections`. ``"empty"`` /
    ``"full"``: start from no item / every item and add ``n1`` / remove ``n2``
    (cheaper when one group is small). Returns ``a S1 + c``.
    """

    draws: int
    n: int
    n1: int
    n_words: int
    mode: str
    tiers: tuple

    @property
    def banded(self):
        # Only fair-bit starts sum in float32; the others add float64 values.
        return self.mode == "bernoulli"

    def __call__(self, key, block_ids, data):
        return self.approx(key, block_ids, data)[0]

    def exact(self, data, lanes):
        """Float64 statistics of the lanes ``(keys, local, correction)`` (the same splits)."""
        keys, local, delta = lanes
        p = kr.bit_sums_ordered(keys[:, 0], keys[:, 1], local, data["d64"])
        return data["a"][:, None] * (p + delta.T) + data["c"][:, None]

    def approx(self, key, block_ids, data):
        """Statistics from float32 fair-bit sums, and per lane what :meth:`exact` needs."""
        first = block_ids[0].astype(jnp.int64) * self.draws
        n_lanes = block_ids.shape[0] * self.draws
        keys, local = kr.draw_keys(key, first, n_lanes, 6)
        z = data["z"]
        if self.mode == "bernoulli":
            p, k = kr.bit_sums(keys[:, 0], keys[:, 1], local, data["z32"], data["mask"])
        elif self.mode == "empty":
            p, k = jnp.zeros((z.shape[0], n_lanes)), jnp.zeros((n_lanes,), jnp.int32)
        else:
            p = jnp.broadcast_to(jnp.sum(z, axis=1)[:, None], (z.shape[0], n_lanes))
            k = jnp.full((n_lanes,), self.n, jnp.int32)
        c = k - self.n1
        corr = kr.subset_corrections(
            keys,
            local,
            jnp.abs(c),
            c > 0,
            z,
            n=self.n,
            n_words=self.n_words,
            mode=self.mode,
            tiers=self.tiers,
        )
        delta = jnp.where((c > 0)[None, :], -corr, corr)
        t = data["a"][:, None] * (p + delta) + data["c"][:, None]
        return t, (keys, local, delta.T)


def _subset_evaluator(n, n1, n_words, draws):
    """Pick the cheaper start (fair bits, or no/every item) and its correction tiers."""
    n2 = n - n1
    spread = math.sqrt(n) / 2  # sd of K ~ Binomial(n, 1/2)
    need_bern = abs(n / 2 - n1) + 0.8 * spread
    # Costs in units of one trial (~20 ns on XLA:CPU): the fused pass costs about
    # n_words / 4 trials per draw, every needed position about 2.4 trials.
    cost_bern = n_words / 4 + 2.4 * need_bern
    cost_direct = 2.4 * min(n1, n2) * n / max(n1, n2)
    if cost_direct < cost_bern:
        mode = "empty" if n1 <= n2 else "full"
        tiers = kr.correction_tiers(n, min(n1, n2), 0)
        extra = {}
    else:
        mode = "bernoulli"
        tiers = kr.correction_tiers(n, abs(n / 2 - n1) + 0.8 * spread, spread)
        mask = np.zeros(n_words, np.uint64)
        for w in range(n_words):
            bits = min(32, n - 32 * w)
            mask[w] = (1 << bits) - 1
        extra = {"mask": jnp.asarray(mask.astype(np.uint32))}
    return _SubsetEval(draws, n, n1, n_words, mode, tiers), extra


@dataclasses.dataclass(frozen=True)
class _GenericEval:
    """Any statistic, evaluated on materialised rearrangements, one block at a time."""

    words: _Words
    kind: str  # "signflip", "twosample", "swap"
    fn: Callable
    m: int

    def __call__(self, key, block_ids, data):
        w = self.words(key, block_ids)
        r = self.words.draws
        w = w.reshape(w.shape[0], block_ids.shape[0], r).transpose(1, 0, 2)
        return jnp.concatenate(list(lax.map(lambda wb: self._one(wb, data), w)), axis=1)

    def _one(self, w, data):
        bits = kr.words_to_bits(w, self.m)  # (R, m)
        if self.kind == "swap":
            n = data["y"].shape[0]
            bits = jnp.pad(bits, ((0, 0), (0, n - self.m)))
        if self.kind == "signflip":
            d = data["d"]  # (H, m, ...) with instances on axis 1
            extra = d.ndim - 2
            s = jnp.where(bits, 1.0, -1.0).astype(d.dtype)
            s = s.reshape(s.shape + (1,) * extra)
            return jax.vmap(lambda dh: jax.vmap(self.fn)(dh[None] * s))(d)
        if self.kind == "twosample":
            z = data["z"]  # (H, n)
            n1 = data["n1"].shape[0]
            order = jnp.argsort(~bits, axis=-1, stable=True)  # members first, in order
            zp = jnp.take(z, order, axis=1)  # (H, R, n)
            return jax.vmap(jax.vmap(lambda q: self.fn(q[:n1], q[n1:])))(zp)
        y, a, b = data["y"], data["a"], data["b"]
        pa = jnp.where(bits, b[None, :], a[None, :])
        pb = jnp.where(bits, a[None, :], b[None, :])
        out = jax.vmap(lambda u, t: self.fn(y, u) - self.fn(y, t))(pa, pb)
        return out[None, :]


@dataclasses.dataclass(frozen=True)
class _WithinBlockEval:
    """Labels permuted independently within each block (fold) of ``x : (n_blocks, k, ...)``."""

    fn: Callable
    n_blocks: int
    k: int
    draws: int

    def __call__(self, key, block_ids, data):
        x = data["x"]
        seeds = kr.block_seeds(key, block_ids)
        outs = []
        n_u = self.draws * self.n_blocks * (self.k - 1)
        for i in range(block_ids.shape[0]):
            # One 64-bit value (53 bits used) per uniform: every swap of every draw
            # has its own randomness.
            words = kr.random_words(seeds[i], 2, n_u)
            u64 = lax.bitcast_convert_type(words.T, jnp.uint64)
            u = (u64 >> 11).astype(jnp.float64) * (2.0**-53)
            u = u.reshape(self.draws, self.n_blocks, self.k - 1)
            perm = kr.uniform_permutations(u, self.k)  # (R, n_blocks, k)
            xp = jax.vmap(lambda p: jnp.take_along_axis(x, _expand(p, x.ndim), axis=1))(perm)
            outs.append(jax.vmap(self.fn)(xp)[None, :])
        return jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]


def _expand(p, ndim):
    return p.reshape(p.shape + (1,) * (ndim - 2))


def _count_measure(c, n, measure, n_classes, beta):
    """Measure from stacked counts ``c : (3 C, R)`` rows (tp, fp, fn) per class."""
    tp, fp, fn = c[0::3], c[1::3], c[2::3]
    tn = n - tp - fp - fn
    cc = km.ConfusionCounts(tp, fn, fp, tn)
    if measure == "precision":
        val = km.precision(cc, 0.0)
    elif measure == "recall":
        val = km.tpr(cc, 0.0)
    elif measure == "accuracy":
        val = km.accuracy(cc, 0.0)
    else:
        val = km.f_beta(cc, beta, 0.0)
    return jnp.mean(val, axis=0) if n_classes > 1 else val[0]


# --------------------------------------------------------------------------
# The engine: counts over blocks, sharded over local devices.
# --------------------------------------------------------------------------


# Compiled once per statistic: repeated calls (many keys, many tests) reuse them.
@functools.lru_cache(maxsize=64)
def _jitted(fn):
    return jax.jit(fn)


@functools.lru_cache(maxsize=64)
def _vmapped(fn):
    return jax.jit(jax.vmap(fn))


@functools.lru_cache(maxsize=64)
def _swap_terms(fn):
    return jax.jit(lambda y, a, b: (fn(y, a), fn(y, b)))


def _tie_tol(observed, magnitude):
    """Tie tolerance ``100 eps max(|t|, s)`` of an observed statistic ``t``; ``(H,)``.

    scipy's ``100 eps |t|`` is relative to ``t`` alone and vanishes at ``t = 0``,
    where a rearrangement that ties in exact arithmetic can come out as
    ``-4e-17`` (a difference of two AUCs near 0.6). Rounding scales with the
    terms of the statistic, so ``s`` is their size: the range of a bounded
    measure, or the statistic of a fixed rearrangement. A non-finite ``s`` is
    ignored.
    """
    s = jnp.abs(magnitude)
    s = jnp.where(jnp.isfinite(s), s, 0.0)
    return 100 * _EPS * jnp.maximum(jnp.abs(observed), s)


def _tie_band(t_obs, tol):
    """Thresholds ``(t_obs - tol, t_obs + tol)`` of "at least as extreme"; ``(H,)`` each.

    An infinite ``t_obs`` is its own threshold: ``inf - inf`` is NaN, which no
    draw reaches, so a resampled +inf would not tie an observed +inf. A NaN
    ``t_obs`` gives NaN thresholds: no draw counts (the p-value is set to NaN).
    """
    finite = jnp.isfinite(t_obs)
    return jnp.where(finite, t_obs - tol, t_obs), jnp.where(finite, t_obs + tol, t_obs)


def _tail_counts(t, t_obs, tol, valid):
    lo, hi = _tie_band(t_obs, tol)
    ge = jnp.sum((t >= lo[:, None]) & valid[None, :], axis=1, dtype=jnp.int64)
    le = jnp.sum((t <= hi[:, None]) & valid[None, :], axis=1, dtype=jnp.int64)
    return ge, le


def _maxt_counts(t, t_obs, tol, scale, valid, alternative):
    z = t / scale[:, None]
    zo = t_obs / scale
    zt = tol / scale
    # NaN draws are never extreme (scipy's comparisons), so they must not mask
    # the other hypotheses' maximum either: nanmax/nanmin.
    if alternative == "greater":
        big = jnp.nanmax(z, axis=0)
        hit = big[None, :] >= _tie_band(zo, zt)[0][:, None]
    elif alternative == "less":
        small = jnp.nanmin(z, axis=0)
        hit = small[None, :] <= _tie_band(zo, zt)[1][:, None]
    else:
        big = jnp.nanmax(jnp.abs(z), axis=0)
        hit = big[None, :] >= _tie_band(jnp.abs(zo), zt)[0][:, None]
    return jnp.sum(hit & valid[None, :], axis=1, dtype=jnp.int64)


def _unsure(t, err, t_obs, tol, scale, alternative, maxt):
    """Lanes ``(L,)`` whose counts could change if ``t`` moved by up to ``err``.

    Every decision is monotone in each ``t`` (the max-T ones through ``|z|``
    for two-sided tests), so a lane is settled when its decisions agree at
    ``t - err`` and ``t + err``. NaN thresholds decide nothing.
    """
    lo, hi = _tie_band(t_obs, tol)
    e = err[:, None]
    ge = (t - e < lo[:, None]) & (lo[:, None] <= t + e)
    le = (t - e <= hi[:, None]) & (hi[:, None] < t + e)
    out = jnp.any(ge | le, axis=0)
    if maxt:
        z, ez = t / scale[:, None], e / scale[:, None]
        zo, zt = t_obs / scale, tol / scale
        if alternative == "less":
            thr = _tie_band(zo, zt)[1][:, None]
            a, b = jnp.nanmin(z - ez, axis=0), jnp.nanmin(z + ez, axis=0)
            out = out | jnp.any((a[None, :] <= thr) != (b[None, :] <= thr), axis=0)
        else:
            if alternative == "two-sided":
                z, zo = jnp.abs(z), jnp.abs(zo)
            thr = _tie_band(zo, zt)[0][:, None]
            a, b = jnp.nanmax(z - ez, axis=0), jnp.nanmax(z + ez, axis=0)
            out = out | jnp.any((a[None, :] >= thr) != (b[None, :] >= thr), axis=0)
    return out


def _evaluate(evaluator, key, block_ids, data, t_obs, tol, scale, alternative, maxt):
    """Statistics of a step's draws; those too close to a decision are recomputed in float64.

    Float32 sums (``banded`` evaluators) are within ``data["err"]`` of the
    float64 ones, so only lanes with a threshold inside ``t +- err`` can count
    differently: those lanes (usually a handful per block) get their float64
    value from :meth:`exact`, and counts equal those of float64 arithmetic.
    Whether a lane is recomputed depends on its own values only (batch sizes
    never change a draw), and its float64 sum adds in a fixed order.
    """
    if not getattr(evaluator, "banded", False):
        return evaluator(key, block_ids, data)
    t, lanes = evaluator.approx(key, block_ids, data)
    unsure = _unsure(t, data["err"], t_obs, tol, scale, alternative, maxt)
    n_lanes = unsure.shape[0]
    # Lanes are found by groups of 16 consecutive draws: a cumulative sum over
    # 2^17 lanes costs about 1 ms on XLA:CPU, as much as the sums of m = 100.
    group = 16
    n_groups = n_lanes // group
    hit = jnp.any(unsure.reshape(n_groups, group), axis=1)
    # Groups per recheck pass: about 2^16 float64 adds, at most 1024 lanes.
    per = 1024 // group
    while per > 1 and per * group * data["d64"].shape[1] * 32 > 2**16:
        per //= 2
    per = min(per, n_groups)
    pos = jnp.cumsum(hit, dtype=jnp.int32) - 1
    n_hit = pos[-1] + 1
    idx = (
        jnp.zeros((n_groups + per,), jnp.int32)
        .at[jnp.where(hit, pos, n_groups + per)]
        .set(jnp.arange(n_groups, dtype=jnp.int32), mode="drop")
    )
    offsets = jnp.arange(group, dtype=jnp.int32)

    def body(state):
        start, t = state
        g = lax.dynamic_slice_in_dim(idx, start, per)
        ln = (g[:, None] * group + offsets[None, :]).reshape(-1)
        live = jnp.repeat(start + jnp.arange(per, dtype=jnp.int32) < n_hit, group) & unsure[ln]
        t64 = evaluator.exact(data, jax.tree.map(lambda a: a[ln], lanes))
        return start + per, t.at[:, jnp.where(live, ln, n_lanes)].set(t64, mode="drop")

    _, t = lax.while_loop(lambda s: s[0] < n_hit, body, (jnp.int32(0), t))
    return t


# 512-bit vectors for the masked float32 adds of ``bit_sums`` (XLA:CPU defaults to
# 256-bit ones; measured 1.6-2x faster on AVX-512 machines; other backends ignore it).
_COMPILER_OPTIONS = {"xla_cpu_prefer_vector_width": 512}


@functools.partial(
    jax.jit,
    compiler_options=_COMPILER_OPTIONS,
    static_argnames=(
        "evaluator",
        "n_total",
        "draws",
        "per_step",
        "null_steps",
        "n_dev",
        "alternative",
        "maxt",
    ),
)
def _run_counts(
    key,
    data,
    t_obs,
    tol,
    scale,
    first_step,
    n_run,
    *,
    evaluator,
    n_total,
    draws,
    per_step,
    null_steps,
    n_dev,
    alternative,
    maxt,
):
    """Exceedance counts (and optionally the null) of ``n_run`` steps per device.

    Device ``i`` runs steps ``first_step + i n_run + j`` for ``j < n_run``;
    step ``s`` evaluates blocks ``s per_step, ..., (s + 1) per_step - 1``, and
    draws past ``n_total`` are masked, so calls over consecutive step ranges
    add up to the counts of one call over all of them. ``first_step`` and
    ``n_run`` are traced: one compilation serves every chunk size. With
    ``null_steps > 0`` (a static capacity, ``n_run <= null_steps``) each
    device also fills the first ``n_run`` steps of its part of the null,
    ``(H, n_dev null_steps per_step draws)``; otherwise the null is None.
    """
    lanes = per_step * draws

    def local(key, data, t_obs, tol, scale, first_step, n_run):
        base = first_step + (lax.axis_index("d") * n_run if n_dev > 1 else 0)
        h = t_obs.shape[0]

        def step(j, carry):
            counts, null = carry
            bid = (base + j) * per_step + jnp.arange(per_step, dtype=jnp.int32)
            t = _evaluate(evaluator, key, bid, data, t_obs, tol, scale, alternative, maxt)
            gidx = (bid.astype(jnp.int64)[:, None] * draws + jnp.arange(draws)[None, :]).reshape(-1)
            valid = gidx < n_total
            ge, le = _tail_counts(t, t_obs, tol, valid)
            mx = _maxt_counts(t, t_obs, tol, scale, valid, alternative) if maxt else ge
            if null_steps:
                null = lax.dynamic_update_slice(null, t.astype(null.dtype), (j * 0, j * lanes))
            return (counts[0] + ge, counts[1] + le, counts[2] + mx), null

        zero = jnp.zeros((h,), jnp.int64)
        null = jnp.zeros((h, null_steps * lanes), t_obs.dtype) if null_steps else None
        counts, null = lax.fori_loop(0, n_run, step, ((zero, zero, zero), null))
        if n_dev > 1:
            counts = lax.psum(counts, "d")
        return counts, null

    if n_dev == 1:
        return local(key, data, t_obs, tol, scale, first_step, n_run)
    mesh = Mesh(np.array(jax.local_devices()[:n_dev]), ("d",))
    rep = PartitionSpec()
    f = jax.shard_map(
        local,
        mesh=mesh,
        in_specs=(rep,) * 7,
        out_specs=(rep, PartitionSpec(None, "d")),
        check_vma=False,
    )
    return f(key, data, t_obs, tol, scale, first_step, n_run)


@functools.partial(
    jax.jit,
    compiler_options=_COMPILER_OPTIONS,
    static_argnames=("evaluator", "n_total", "draws", "per_step", "alternative", "h"),
)
def _run_sequential(
    key, data, t_obs, tol, state, n_steps, *, evaluator, n_total, draws, per_step, alternative, h
):
    """Besag-Clifford: per hypothesis, the draw at which ``h`` extreme values were seen.

    ``state = (first_step, ge, le, stop)`` (``stop`` 0 while running); runs
    steps ``first_step, ...`` until ``first_step + n_steps`` (traced: one
    compilation serves every chunk size) or until every hypothesis stopped,
    and returns the new state, so host-level chunks of steps continue one
    another exactly.
    """
    end = state[0] + n_steps

    lo, hi = _tie_band(t_obs, tol)

    def tail(t):
        return t >= lo[:, None], t <= hi[:, None]

    def cond(state):
        step, _, _, stop = state
        started = step.astype(jnp.int64) * (per_step * draws)
        return (step < end) & (started < n_total) & jnp.any(stop == 0)

    def body(state):
        step, ge_c, le_c, stop = state
        bid = step * per_step + jnp.arange(per_step, dtype=jnp.int32)
        t = _evaluate(evaluator, key, bid, data, t_obs, tol, None, alternative, False)
        gidx = (bid.astype(jnp.int64)[:, None] * draws + jnp.arange(draws)[None, :]).reshape(-1)
        valid = (gidx < n_total)[None, :]
        ge, le = tail(t)
        cge = ge_c[:, None] + jnp.cumsum(ge & valid, axis=1, dtype=jnp.int64)
        cle = le_c[:, None] + jnp.cumsum(le & valid, axis=1, dtype=jnp.int64)
        if alternative == "greater":
            c = cge
        elif alternative == "less":
            c = cle
        else:
            c = jnp.minimum(cge, cle)
        reached = (c >= h) & valid
        first = jnp.argmax(reached, axis=1)
        hit = jnp.any(reached, axis=1)
        new_stop = jnp.where((stop == 0) & hit, gidx[first] + 1, stop)
        # Counts stop growing once a hypothesis has stopped.
        keep = stop == 0
        ge_c = jnp.where(keep, cge[:, -1], ge_c)
        le_c = jnp.where(keep, cle[:, -1], le_c)
        return step + 1, ge_c, le_c, new_stop

    return lax.while_loop(cond, body, state)


@functools.partial(jax.jit, static_argnames=())
def _mitm_counts(d, lo, hi):
    """Exact sign-flip counts ``#{P >= hi}``, ``#{P <= lo}`` per hypothesis (meet in the middle)."""
    return jax.vmap(kr.mitm_signflip_counts)(d, lo, hi)


# --------------------------------------------------------------------------
# p-values and intervals
# --------------------------------------------------------------------------


def _clopper_pearson(k, n, level=_CI_LEVEL):
    from scipy import stats

    k = np.asarray(k, float)
    n = np.asarray(n, float)
    a = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lo, hi


def _finish(ge, le, n, alternative, exact):
    """p-values (scipy's conventions), tail counts and Clopper-Pearson intervals."""
    ge = np.asarray(ge)
    le = np.asarray(le)
    adj = 0 if exact else 1  # Phipson & Smyth (2010): a Monte Carlo p is never 0
    p_ge = (ge + adj) / (n + adj)
    p_le = (le + adj) / (n + adj)
    if alternative == "greater":
        p, cnt, factor = p_ge, ge, 1.0
    elif alternative == "less":
        p, cnt, factor = p_le, le, 1.0
    else:
        p = np.minimum(1.0, 2.0 * np.minimum(p_ge, p_le))
        cnt, factor = np.minimum(ge, le), 2.0
    if exact:
        lo, hi = p, p
    else:
        lo, hi = _clopper_pearson(cnt, n)
        lo, hi = np.minimum(1.0, factor * lo), np.minimum(1.0, factor * hi)
    return p, cnt, (lo, hi)


# --------------------------------------------------------------------------
# Validation shared by the three tests
# --------------------------------------------------------------------------


_N_RESAMPLES = 100_000  # default n_resamples (None in the public signatures)


def _common_iv(
    alternative,
    n_resamples,
    method,
    batch_size,
    correction,
    sequential,
    return_null,
    *,
    key=None,
):
    """Options shared by the three tests, checked before any method is chosen.

    ``n_resamples=None`` is the default (100,000). ``key`` is checked here so
    that a bad key fails on every path, also where no randomness is used.
    """
    v.check_alternative(alternative)
    if n_resamples is None:
        n_resamples = _N_RESAMPLES
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    v.check_choice(method, "method", _METHODS)
    if batch_size is not None:
        batch_size = v.as_int_scalar(batch_size, "batch_size", minimum=1)
    v.check_choice(correction, "correction", (None, "maxT"))
    if not isinstance(return_null, bool | np.bool_):
        raise TypeError(f"`return_null` must be a bool, got {type(return_null).__name__}.")
    return_null = bool(return_null)
    if sequential is not None:
        sequential = v.as_int_scalar(sequential, "sequential", minimum=1)
        if method not in ("auto", "monte-carlo"):
            raise ValueError(f"`sequential` needs method='monte-carlo', got method={method!r}.")
        if correction is not None or return_null:
            raise ValueError("`sequential` cannot be combined with `correction` or `return_null`.")
    if key is not None:
        resolve_key(key)  # raises on a bad key; the draw itself happens in _drive
    return n_resamples, batch_size, sequential


def _check_exact_cap(n_patterns, n_resamples, explicit_n):
    """An explicit ``n_resamples`` with method="exact" is the most rearrangements evaluated.

    ``n_patterns`` None stands for "more than ``n_resamples``".
    """
    if explicit_n and (n_patterns is None or n_patterns > n_resamples):
        count = "" if n_patterns is None else f"{n_patterns} rearrangements, "
        raise ValueError(
            f"method='exact' enumerates {count}more than `n_resamples`={n_resamples}: "
            "leave `n_resamples` out with 'exact' (or give at least that many), or use "
            "method='monte-carlo'."
        )


def _check_statistic(fn, shapes, name, called_on):
    """A callable statistic must return one real scalar per hypothesis (checked on shapes only)."""
    args = [jax.ShapeDtypeStruct(s, jnp.float64) for s in shapes]
    out = jax.eval_shape(fn, *args)
    if not isinstance(out, jax.ShapeDtypeStruct) or out.shape != ():
        got = out.shape if isinstance(out, jax.ShapeDtypeStruct) else type(out).__name__
        raise ValueError(
            f"`{name}` must return a scalar: it is called on {called_on} and vmapped "
            f"over hypotheses and rearrangements; it returned {got}."
        )
    if np.dtype(out.dtype).kind not in "biuf":
        raise ValueError(f"`{name}` must return a real number, got dtype {out.dtype}.")


def _check_progress(progress):
    """``progress`` as a :class:`jaxtests._progress.Reporter` (or None); TypeError otherwise."""
    return as_progress(progress)


_STEP_BYTES = 2**28  # intermediates of one step (a batch of blocks), about 256 MB
_NULL_BYTES = 2**26  # device buffer of one chunk's null statistics (return_null)


def _draw_bytes(evaluator, data, n_h):
    """Rough bytes of intermediates per draw, for the ``batch_size`` cap.

    Evaluators on materialised rearrangements hold a rearranged copy of the
    data per draw (signs or indices, the copy, products); the fused and table
    sums a few values per hypothesis.
    """
    if isinstance(evaluator, _GenericEval | _WithinBlockEval):
        sizes = [int(np.prod(np.shape(a))) for a in jax.tree_util.tree_leaves(data)]
        return 32 * max(sizes, default=1)
    return 32 * n_h + 64


def _per_step(batch_size, draws, n_blocks=None, block_bytes=0):
    """Blocks per step: ``batch_size`` in whole blocks, capped at the work and at memory.

    The cap never changes a result (blocks are fixed, counts integers); it
    keeps ``batch_size=10**12`` from asking XLA for terabytes.
    """
    if batch_size is None:
        return 1
    per = max(1, -(-batch_size // draws))
    if n_blocks is not None:
        per = min(per, max(1, n_blocks))
    if block_bytes > 0:
        per = min(per, max(1, _STEP_BYTES // block_bytes))
    return per


def _n_devices(n_blocks, per_step):
    n = jax.local_device_count()
    return max(1, min(n, -(-n_blocks // per_step)))


def _check_size(n_total, n_blocks, per_step, draws, n_h, return_null):
    """Refuse runs the engine cannot index or hold, naming the argument."""
    # Block ids are int32 (and so part of every draw's key): the last step may
    # run past n_blocks by a step per device.
    if n_blocks + (jax.local_device_count() + 1) * per_step >= 2**31:
        limit = (2**31 - (jax.local_device_count() + 1) * per_step) * draws
        raise ValueError(
            f"`n_resamples`={n_total} is more than the engine indexes ({draws} draws per "
            f"block, under 2^31 blocks: at most about {limit:.3g}); use fewer resamples "
            "or `sequential` stopping."
        )
    if return_null:
        need = 8 * n_total * n_h
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
            memory = 2**34
        if need > memory // 2:
            raise ValueError(
                f"`return_null`=True with `n_resamples`={n_total} keeps {n_total} x {n_h} "
                f"statistics ({need / 2**30:.3g} GiB), more than half of this machine's "
                f"memory ({memory / 2**30:.3g} GiB); lower `n_resamples` or leave "
                "`return_null` off."
            )


# --------------------------------------------------------------------------
# Shared driver
# --------------------------------------------------------------------------


_CHUNK_SECONDS = 0.5  # aim of one host-level call: Ctrl-C and progress act between calls
_LONG_RUN_SECONDS = 180.0  # runs estimated beyond this get a LongRunWarning
_ESTIMATE_FROM_SECONDS = 0.1  # shortest chunk whose time is trusted for that estimate


def _step_chunks(n_steps, n_dev, cap=None, what="This permutation test"):
    """Host-level chunks ``(first_step, steps_per_device)`` of ``n_steps`` steps, sized by time.

    The first chunk is one step per device (its time includes compilation),
    so the first progress report comes early; later ones aim at
    ``_CHUNK_SECONDS`` of work, growing at most 16x per chunk, so Ctrl-C
    (seen by Python between chunks) stops a run within about a second. The
    caller finishes a chunk's computation before asking for the next one:
    the time between yields is the chunk's. Once a chunk of at least 0.1 s
    (not the first, which may include compilation) predicts more than ``_LONG_RUN_SECONDS`` to go, a
    :class:`jaxtests._progress.LongRunWarning` gives the estimate. Chunking
    never changes a result: blocks stay whole and counts are integers.
    """
    first, n_run, calls, warned = 0, 1, 0, False
    while first < n_steps:
        n_run = min(n_run, -(-(n_steps - first) // n_dev))
        if cap:
            n_run = min(n_run, cap)
        t0 = time.perf_counter()
        yield first, n_run
        dt = time.perf_counter() - t0
        first += n_run * n_dev
        calls += 1
        per = max(dt / n_run, 1e-7)  # seconds per step on each device
        if calls > 1 and not warned and dt >= _ESTIMATE_FROM_SECONDS and first < n_steps:
            left = per * -(-(n_steps - first) // n_dev)
            if left > _LONG_RUN_SECONDS:
                warn_long_run(left, what)
                warned = True
        n_run = max(1, min(int(_CHUNK_SECONDS / per), 16 * n_run))


def _drive(
    *,
    evaluator,
    data,
    t_cmp,
    tol,
    scale,
    n_total,
    draws,
    exact,
    alternative,
    correction,
    sequential,
    return_null,
    batch_size,
    key,
    progress=None,
):
    """Run the engine on canonical inputs; returns a dict of numpy fields.

    The blocks run in host-level chunks sized by time (:func:`_step_chunks`):
    ``progress(done, n_total)`` is called at the start and after each chunk,
    and Ctrl-C raises ``KeyboardInterrupt`` between chunks (nothing is kept).
    Counts are integers summed over chunks, so the result is bit-identical to
    one call, whatever the chunking, ``batch_size`` or device count.
    """
    progress = _check_progress(progress)
    typed_key, seed = (None, None) if exact else resolve_key(key)
    if typed_key is None:
        typed_key = jax.random.key(0)
    n_h = t_cmp.shape[0]
    n_blocks = -(-n_total // draws)
    per_step = _per_step(batch_size, draws, n_blocks, draws * _draw_bytes(evaluator, data, n_h))
    _check_size(n_total, n_blocks, per_step, draws, n_h, return_null)
    n_steps = -(-n_blocks // per_step)
    lanes = per_step * draws
    what = f"This permutation test ({n_total:,} rearrangements)"
    # No draw reaches a NaN observed statistic's thresholds; _wrap reports p = NaN.
    out = {"seed": seed, "n_resamples": n_total, "undefined": np.isnan(np.asarray(t_cmp))}
    try:
        if progress is not None:
            progress(0, n_total)
        if sequential is not None:
            return _drive_sequential(
                out,
                evaluator,
                data,
                t_cmp,
                tol,
                typed_key,
                n_total,
                draws,
                per_step,
                n_steps,
                alternative,
                sequential,
                progress,
                what,
            )
        n_dev = _n_devices(n_blocks, per_step)
        null_steps = 0
        if return_null:
            null_steps = max(1, min(-(-n_steps // n_dev), _NULL_BYTES // (8 * n_h * lanes)))
        counts = np.zeros((3, n_h), np.int64)
        nulls = []
        # One call at a time: two computations in flight at once can hang XLA:CPU (README).
        for first, n_run in _step_chunks(n_steps, n_dev, null_steps, what):
            c, null = _run_counts(
                typed_key,
                data,
                t_cmp,
                tol,
                scale,
                jnp.int32(first),
                jnp.int32(n_run),
                evaluator=evaluator,
                n_total=n_total,
                draws=draws,
                per_step=per_step,
                null_steps=null_steps,
                n_dev=n_dev,
                alternative=alternative,
                maxt=correction == "maxT",
            )
            counts += np.asarray(c)  # integer counts: chunking never changes a sum
            if return_null:
                null = np.asarray(null)
                part = null_steps * lanes  # each device's part of the buffer
                nulls += [null[:, i * part : i * part + n_run * lanes] for i in range(n_dev)]
            if progress is not None:
                progress(min(n_total, (first + n_run * n_dev) * lanes), n_total)
    finally:
        if progress is not None:
            progress.close()
    ge, le, mx = counts
    p, cnt, interval = _finish(ge, le, n_total, alternative, exact)
    out.update(
        pvalue=p, n_extreme=cnt, interval=interval, method="exact" if exact else "monte-carlo"
    )
    if correction == "maxT":
        adj = 0 if exact else 1
        # Westfall & Young (1993) single-step max-T; never below the raw p-value.
        out["adjusted"] = np.maximum(p, (mx + adj) / (n_total + adj))
    if return_null:
        out["null"] = np.concatenate(nulls, axis=1)[:, :n_total]
    return out


def _drive_sequential(
    out,
    evaluator,
    data,
    t_cmp,
    tol,
    key,
    n_total,
    draws,
    per_step,
    n_steps,
    alternative,
    h,
    progress,
    what,
):
    """Besag-Clifford stopping, in time-sized chunks of steps on one device."""
    zero = jnp.zeros((t_cmp.shape[0],), jnp.int64)
    state = (jnp.int32(0), zero, zero, zero)
    what = what.replace("(", "(up to ", 1)
    for first, n_run in _step_chunks(n_steps, 1, None, what):
        state = _run_sequential(
            key,
            data,
            t_cmp,
            tol,
            state,
            jnp.int32(n_run),
            evaluator=evaluator,
            n_total=n_total,
            draws=draws,
            per_step=per_step,
            alternative=alternative,
            h=h,
        )
        stopped = bool(np.all(np.asarray(state[3]) > 0))  # waits for the chunk
        if progress is not None:
            done = n_total if stopped else min(n_total, (first + n_run) * per_step * draws)
            progress(done, n_total)
        if stopped:
            break
    ge, le, stop = (np.asarray(a) for a in state[1:])
    p, cnt, (lo, hi) = _finish(ge, le, n_total, alternative, exact=False)
    factor = 1.0 if alternative != "two-sided" else 2.0
    used = np.where(stop > 0, stop, n_total)
    # Besag & Clifford (1991): stopped at the h-th extreme value, p = h / L.
    p_seq = np.minimum(1.0, factor * h / np.maximum(used, 1))
    p = np.where(stop > 0, p_seq, p)
    cnt = np.where(stop > 0, h, cnt)
    slo, shi = _clopper_pearson(np.full(used.shape, h), used)
    lo = np.where(stop > 0, np.minimum(1.0, factor * slo), lo)
    hi = np.where(stop > 0, np.minimum(1.0, factor * shi), hi)
    out.update(
        pvalue=p,
        n_extreme=cnt,
        interval=(lo, hi),
        n_draws=used,
        method="monte-carlo",
        n_resamples=int(used.max()),
    )
    return out


def _wrap(statistic, batch_shape, out, alternative, correction, null_map=None):
    # An undefined compared statistic has an undefined p-value (scipy's
    # permutation_test would report its smallest p: NaN compares False).
    undefined = out.get("undefined", np.zeros(np.size(out["pvalue"]), bool)).reshape(-1)

    def shape(a):
        a = np.where(undefined, np.nan, np.asarray(a, dtype=np.float64).reshape(-1))
        return jnp.asarray(a.reshape(batch_shape))

    null = out.get("null")
    if null is not None:
        if null_map is not None:
            null = null_map(null)
        null = jnp.asarray(np.asarray(null).reshape((*batch_shape, null.shape[-1])))
    lo, hi = out["interval"]
    n_extreme = np.where(undefined, 0, np.asarray(out["n_extreme"], np.int64).reshape(-1))
    return PermutationTestResult(
        statistic=jnp.asarray(np.asarray(statistic, dtype=np.float64).reshape(batch_shape)),
        pvalue=shape(out["pvalue"]),
        pvalue_interval=jnp.stack([shape(lo), shape(hi)], axis=-1),
        n_extreme=jnp.asarray(n_extreme.reshape(batch_shape)),
        pvalue_adjusted=shape(out["adjusted"]) if "adjusted" in out else None,
        n_draws=(
            jnp.asarray(np.asarray(out["n_draws"], np.int64).reshape(batch_shape))
            if "n_draws" in out
            else None
        ),
        null_distribution=null,
        method=out["method"],
        alternative=alternative,
        n_resamples=int(out["n_resamples"]),
        correction=correction,
        seed=out["seed"],
    )


# --------------------------------------------------------------------------
# Sign flips
# --------------------------------------------------------------------------

_SIGNFLIP_STATS = ("mean", "t", "hotelling")


def _signflip_iv(
    d,
    statistic,
    axis,
    alternative,
    n_resamples,
    method,
    batch_size,
    correction,
    sequential,
    return_null,
    *,
    key=None,
):
    explicit_n = n_resamples is not None
    n_resamples, batch_size, sequential = _common_iv(
        alternative, n_resamples, method, batch_size, correction, sequential, return_null, key=key
    )
    if not callable(statistic):
        v.check_choice(statistic, "statistic", _SIGNFLIP_STATS)
    d = v.as_float_array(d, "d", min_ndim=2 if statistic == "hotelling" else 1)
    if statistic == "hotelling":
        if axis != -1:
            raise ValueError(
                "`axis` must be left at -1 for statistic='hotelling': `d` is "
                "(..., m, p) with instances on axis -2 and measures last."
            )
        v.check_covariance(d, "d")  # as hotelling_t2: no T² of a singular covariance
        d = jnp.moveaxis(d, -2, -1)  # instances last for the shared reshaping below
    else:
        axis = v.normalize_axis(axis, d.ndim)
        d = jnp.moveaxis(d, axis, -1)
    m = d.shape[-1]
    if m < 2:
        raise ValueError(f"`d` needs at least 2 instances along the instance axis, got {m}.")
    if sequential is not None and method == "auto":
        method = "monte-carlo"
    if method == "binomial" and statistic not in ("mean", "t"):
        raise ValueError("`method`='binomial' applies to statistic 'mean' or 't' only.")
    _signflip_options_iv(
        d, statistic, method, n_resamples, explicit_n, batch_size, correction, return_null
    )
    return d, n_resamples, method, batch_size, sequential


def _signflip_options_iv(
    d, statistic, method, n_resamples, explicit_n, batch_size, correction, return_null
):
    """Refuse options the chosen method would not use; check a callable's output shape.

    ``d`` is canonical (instances last). A given ``n_resamples`` with "exact"
    is the most patterns enumerated; "binomial" has no rearrangements at all.
    """
    m = d.shape[-1]
    if callable(statistic):
        _check_statistic(statistic, [(m,)], "statistic", f"one hypothesis' ({m},) differences")
    if method == "binomial":
        given = [
            f"`{name}`"
            for name, on in (
                ("n_resamples", explicit_n),
                ("batch_size", batch_size is not None),
                ("correction", correction is not None),
                ("return_null", return_null),
            )
            if on
        ]
        if given:
            raise ValueError(
                f"`method`='binomial' is a closed form without rearrangements: "
                f"{', '.join(given)} would be ignored. Leave it out, or use method='exact' "
                "or 'monte-carlo'."
            )
    if method == "exact":
        if statistic in ("mean", "t"):  # zero differences are left out of the enumeration
            nz = int(np.sum(np.any(np.asarray(d).reshape(-1, m) != 0, axis=0)))
            _check_exact_cap(2 ** max(nz, 1), n_resamples, explicit_n)
        else:
            _check_exact_cap(2**m, n_resamples, explicit_n)


def _ternary(d2):
    """(is {-c, 0, +c} for every hypothesis, n_pos, n_nonzero) from ``d2 : (H, m)``."""
    a = np.abs(np.asarray(d2))
    c = a.max(axis=1, keepdims=True)
    ok = bool(np.all((a == 0) | (a == c)))
    pos = np.sum(np.asarray(d2) > 0, axis=1)
    nz = np.sum(a > 0, axis=1)
    return ok, pos, nz


def _binomial_pvalue(pos, nz, alternative):
    from scipy import stats

    # Under sign flips the number of positive nonzero differences is Binomial(nz, 1/2).
    p_ge = np.where(nz > 0, stats.binom.sf(pos - 1, nz, 0.5), 1.0)
    p_le = np.where(nz > 0, stats.binom.cdf(pos, nz, 0.5), 1.0)
    if alternative == "greater":
        return p_ge, pos
    if alternative == "less":
        return p_le, pos
    return np.minimum(1.0, 2 * np.minimum(p_ge, p_le)), pos


@jax.jit
def _signflip_linear_prep(d2):
    m = d2.shape[-1]
    total = jnp.sum(d2, axis=-1)
    mean_obs = total / m
    abs_sum = jnp.sum(jnp.abs(d2), axis=-1)
    # scipy's relative tie tolerance, plus a bound on the rounding of the
    # table sums (Wilkinson: gamma_n sum |d|), so ties are never missed.
    tol = _tie_tol(mean_obs, abs_sum / m) + 4 * (m + 32) * _EPS * abs_sum / m
    sd = jnp.sqrt(jnp.sum(d2 * d2, axis=-1)) / m  # exact null sd of the mean
    return mean_obs, tol, sd


def _t_from_mean(mean, m, q):
    """t statistic of sign-flipped data from its mean (sum of squares ``q`` is invariant)."""
    var = (q[..., None] - m * mean * mean) / (m - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean * np.sqrt(m) / np.sqrt(var)


def _signflip(
    d,
    statistic,
    alternative,
    n_resamples,
    method,
    key,
    batch_size,
    correction,
    sequential,
    return_null,
    progress=None,
):
    """Engine entry on canonical ``d`` (instances last; hotelling: ``(..., p, m)``)."""
    linear = statistic in ("mean", "t")
    if statistic == "hotelling":
        batch_shape = d.shape[:-2]
        d2 = jnp.moveaxis(d, -1, -2).reshape((-1, *d.shape[-1:], *d.shape[-2:-1]))  # (H, m, p)
        m = d2.shape[1]
        stat_fn = ks.hotelling_t2
    else:
        batch_shape = d.shape[:-1]
        d2 = d.reshape(-1, d.shape[-1])
        m = d2.shape[1]
        stat_fn = {"mean": ks.mean, "t": ks.t_statistic}.get(statistic, statistic)
    observed = _vmapped(stat_fn)(d2) if statistic not in _SIGNFLIP_STATS else (stat_fn(d2))
    n_h = d2.shape[0]

    if linear:
        nz_cols = np.flatnonzero(np.any(np.asarray(d2) != 0, axis=0))
        m_eff = int(nz_cols.size)
    else:
        m_eff = m
    n_patterns = 2**m_eff

    if method == "auto":
        ternary = linear and correction is None and not return_null and _ternary(d2)[0]
        if ternary:
            method = "binomial"
        elif n_patterns <= n_resamples:
            method = "exact"
        else:
            method = "monte-carlo"
    if method == "binomial":
        ok, pos, nz = _ternary(d2)
        if not ok:
            raise ValueError(
                "`method`='binomial' needs differences taking only the values "
                "{-c, 0, +c} in each hypothesis (e.g. 0/1-loss differences)."
            )
        p, cnt = _binomial_pvalue(pos, nz, alternative)
        out = {
            "pvalue": p,
            "n_extreme": cnt,
            "interval": (p, p),
            "method": "binomial",
            "n_resamples": 0,
            "seed": None,
        }
        return _wrap(observed, batch_shape, out, alternative, None)

    exact = method == "exact"
    if linear:
        keep = nz_cols if m_eff > 0 else np.array([0])
        dk = d2[:, keep]
        mean_obs, tol, sd = _signflip_linear_prep(d2)
        q = np.asarray(jnp.sum(d2 * d2, axis=-1))
        total = jnp.sum(d2, axis=-1)
        if exact and m_eff > _MAX_MITM:
            raise ValueError(
                f"`method`='exact' supports at most {_MAX_MITM} nonzero instances "
                f"for statistic {statistic!r}; got {m_eff}. Use 'monte-carlo'."
            )
        if exact and correction is None and not return_null:
            # Meet in the middle on P = sum of kept-sign d: T = (2 P - D) / m.
            t_lo, t_hi = _tie_band(mean_obs, tol)
            hi = (m * t_lo + total) / 2
            lo = (m * t_hi + total) / 2
            ge, le = _mitm_counts(dk, lo, hi)
            p, cnt, interval = _finish(ge, le, 2 ** dk.shape[1], alternative, exact=True)
            if progress is not None:
                progress(2 ** dk.shape[1], 2 ** dk.shape[1])
            out = {
                "pvalue": p,
                "n_extreme": cnt,
                "interval": interval,
                "method": "exact",
                "n_resamples": 2 ** dk.shape[1],
                "seed": None,
            }
            return _wrap(observed, batch_shape, out, alternative, None)
        if exact and 2 ** dk.shape[1] > _MAX_ENUMERATION:
            raise ValueError(
                f"`method`='exact' with `correction` or `return_null` enumerates "
                f"2^{dk.shape[1]} patterns (limit 2^30). Use 'monte-carlo'."
            )
        mk = dk.shape[1]
        n_words = -(-mk // 32)
        data = {"a": jnp.full((n_h,), 2.0 / m), "c": -total / m}
        if exact:
            n_total = 2**mk
            draws = min(_block_draws_linear(n_words), n_total)
            tables, terms = _exact_terms(dk, n_words)
            data.update(terms)
            evaluator = _LinearEval(_Words("enumerate", n_words, draws), tables)
        else:
            n_total = n_resamples
            draws = _block_draws_fused(n_words, n_h, n_total, sequential is not None)
            data["d32"] = _pad_words(dk, n_words)
            data["d64"] = _pad_words(dk, n_words, jnp.float64)
            data["err"] = _float32_err(dk, n_words, data["a"], data["c"])
            evaluator = _FusedEval(draws)
        out = _drive(
            evaluator=evaluator,
            data=data,
            t_cmp=mean_obs,
            tol=tol,
            scale=sd,
            n_total=n_total,
            draws=draws,
            exact=exact,
            alternative=alternative,
            correction=correction,
            sequential=sequential,
            return_null=return_null,
            batch_size=batch_size,
            key=key,
            progress=progress,
        )
        null_map = (lambda t: _t_from_mean(t, m, q)) if statistic == "t" else None
        return _wrap(observed, batch_shape, out, alternative, correction, null_map)

    # Generic statistics (hotelling, user callables): materialised signs per block.
    if statistic == "hotelling" and alternative == "less":
        raise ValueError(
            "`alternative`='less' is meaningless for Hotelling's T² (large values "
            "are evidence in every direction); use 'two-sided' or 'greater'."
        )
    alt = "greater" if statistic == "hotelling" else alternative
    if exact and n_patterns > _MAX_ENUMERATION:
        raise ValueError(
            f"`method`='exact' enumerates 2^{m} sign patterns (limit 2^30) for this "
            "statistic. Use 'monte-carlo'."
        )
    n_words = -(-m // 32)
    per_draw = int(np.prod(d2.shape[1:]))
    draws = _block_draws_generic(per_draw)
    if exact:
        n_total = n_patterns
        draws = min(draws, n_total)
        words = _Words("enumerate", n_words, draws)
    else:
        n_total = n_resamples
        words = _Words("random", n_words, draws)
    obs = jnp.asarray(observed)
    fn = stat_fn if statistic == "hotelling" else statistic
    # Size of the statistic's values: its value on the rearrangement that makes
    # each instance's first entry non-negative (|d| for 1-d instances).
    first = d2.reshape((*d2.shape[:2], -1))[:, :, 0]
    flip = jnp.where(first < 0, -1.0, 1.0).reshape(first.shape + (1,) * (d2.ndim - 2))
    tol = _tie_tol(obs, _vmapped(fn)(d2 * flip))
    out = _drive(
        evaluator=_GenericEval(words, "signflip", fn, m),
        data={"d": d2},
        t_cmp=obs,
        tol=tol,
        scale=jnp.ones_like(obs),
        n_total=n_total,
        draws=draws,
        exact=exact,
        alternative=alt,
        correction=correction,
        sequential=sequential,
        return_null=return_null,
        batch_size=batch_size,
        key=key,
        progress=progress,
    )
    return _wrap(observed, batch_shape, out, alternative, correction)


@x64
def signflip_test(
    d,
    *,
    statistic="mean",
    alternative="two-sided",
    n_resamples=None,
    method="auto",
    key=None,
    axis=-1,
    batch_size=None,
    correction=None,
    sequential=None,
    return_null=False,
    progress=None,
):
    """Paired randomization (sign-flip) test of zero-centred differences.

    Under H0 each difference ``d_i`` (per-instance loss difference of two
    models, or per-fold difference) is symmetric about 0, so its sign is a
    fair coin (Hein: ``T(pi) = sum_i pi_i W_i``, ``pi in {-1, 1}^m``).

    Parameters
    ----------
    d : array_like, (..., m) or (..., m, p) for ``statistic="hotelling"``
        Differences; instances along ``axis``. Every other axis is a separate
        hypothesis; all hypotheses share the same sign patterns.
    statistic : {"mean", "t", "hotelling"} or callable
        "t" is the one-sample t; under sign flips it is increasing in the mean
        (the sum of squares is invariant), so it gives the mean's p-value.
        "hotelling" flips whole rows of ``(m, p)`` differences. A callable maps
        one hypothesis' ``(m,)`` (or ``(m, p)``) array to a scalar and is vmapped.
    alternative : {"two-sided", "less", "greater"}
        scipy's conventions: "greater" is ``P(T >= t)``, "less" ``P(T <= t)``,
        "two-sided" ``min(1, 2 min(P(T >= t), P(T <= t)))``. Hotelling's T² is
        direction-free: "two-sided" and "greater" both give ``P(T² >= t²)``.
    n_resamples : int, optional
        The most rearrangements evaluated (default 100,000): the Monte Carlo
        draws, and the largest number of patterns "auto" enumerates. With
        "exact", a given ``n_resamples`` below the number of patterns is an
        error (leave it out to enumerate them all); "binomial" refuses it.
    method : {"auto", "exact", "monte-carlo", "binomial"}
        "auto" picks "binomial" when every hypothesis' differences take only
        the values {-c, 0, +c} (closed form, equals ``scipy.stats.binomtest``),
        "exact" when ``2^m <= n_resamples`` (``m`` counts nonzero differences),
        else "monte-carlo". Exact "mean"/"t" count by meeting in the middle
        (``m <= 48``); other statistics enumerate (``2^m <= 2^30``).
    key : int, JAX key or None
        Randomness; the seed is recorded in the result. Checked on every path;
        exact and binomial results use none (``seed`` None).
    axis : int
        Instance axis (leave at -1 for "hotelling").
    batch_size : int or None
        Draws evaluated per step; changes speed and memory, never the result.
        Capped at the work (``n_resamples`` in whole blocks) and at about
        256 MB of intermediates per step. The meet-in-the-middle count of exact
        "mean"/"t" has no steps; "binomial" refuses it.
    correction : {None, "maxT"}
        Westfall-Young single-step max-T adjusted p-values across hypotheses,
        for "mean" on the scale of each hypothesis' null standard deviation.
    sequential : int or None
        Besag-Clifford stopping after ``sequential`` extreme values.
    return_null : bool
        Keep the statistic of every rearrangement.
    progress : bool, tqdm bar, callable or None
        True shows a :mod:`tqdm.auto` bar; a tqdm bar is advanced by the draws
        done; a callable is called as ``progress(done, total)`` from the host,
        at the start and after each chunk of draws (the first within a few
        seconds, then about every 0.5 s); the result does not depend on it.
        The binomial closed form makes no report.

    Returns
    -------
    PermutationTestResult

    Notes
    -----
    Exact p-values are ``b / N`` over all ``N = 2^m`` patterns; Monte Carlo
    ones are ``(b + 1) / (B + 1)`` (never 0). A statistic counts as at least as
    extreme when it is within ``100 eps max(|t|, s)`` of the observed ``t``
    (scipy's tolerance, with ``s`` the size of the statistic's values so that
    ties at ``t = 0`` are kept: ``mean|d|`` for "mean", the statistic of a
    fixed rearrangement for callables) plus a bound on the float64 rounding of
    the resampled sums. The seed's slide counts ``T > t``; here ``T >= t``
    (scipy's).

    Non-finite statistics (e.g. a callable dividing by a spread that is 0 for
    some patterns): an infinite observed ``t`` is tied exactly, so a
    rearrangement giving ``+inf`` counts as at least as extreme as an observed
    ``+inf`` (likewise ``-inf``). scipy 1.17's ``permutation_test`` compares
    with ``t - 100 eps |t|``, which is NaN there, and misses these ties. A
    rearrangement whose statistic is NaN counts in ``N`` (or ``B``) but is
    never at least as extreme, in either tail, as in
    ``scipy.stats.permutation_test``; ``correction="maxT"`` leaves it out of
    the maximum over hypotheses. A NaN observed statistic gives NaN
    ``pvalue``, ``pvalue_interval`` and ``pvalue_adjusted`` (and
    ``n_extreme = 0``), as scipy's parametric tests do; scipy's
    ``permutation_test`` instead reports its smallest p-value there (0 exact,
    ``1 / (B + 1)`` Monte Carlo) because NaN compares False. The built-in "t"
    is compared through the mean, so all-zero differences (t = 0/0 for every
    pattern, all of which give the same data) get the mean's p = 1, as
    :func:`jaxtests.anova` does for F = 0/0.

    Monte Carlo sign patterns are counter-based random words (two keyed rounds
    of an integer hash, keyed per block of draws by ``fold_in(key, block)``,
    see :mod:`jaxtests.kernels.resampling`), generated inside the loop that
    consumes them: for "mean"/"t" each draw's ``P = sum_{s_i = +1} d_i`` is
    accumulated by masked float32 adds (words of 32 instances summed in
    float32 in groups of 16, group sums in float64), and ``T = (2 P - D) / m``.
    The absolute error of ``P`` is at most ``(26 u + (m / 512 + 2) 2^-53)
    sum|d|`` with ``u = 2^-24`` (Higham 2002, eq. 3.4), about ``1.6e-6 sum|d|``.
    A draw whose ``T`` is within that bound of a threshold is recomputed in
    float64 (one instance at a time), so the counts are those of float64
    sums; with ordinary data that is a few draws per 2^17 (for m = 10^4 normal
    data the band is about 5e-4 null standard deviations wide), with one
    dominant ``|d_i|`` it can be most of them. Exact enumeration uses float64
    byte tables and meeting in the middle.

    Long runs: draws run in host-level chunks of about 0.5 s, so Ctrl-C
    (``KeyboardInterrupt``) stops a run within about a second and progress is
    reported throughout; a run estimated beyond a few minutes emits a
    :class:`jaxtests._progress.LongRunWarning` with the estimate. Chunks are
    whole blocks of draws, so the result never depends on them.

    References
    ----------
    Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
    University, 2013.
    Besag & Clifford (1991), Biometrika 78.
    Westfall & Young (1993). Phipson & Smyth (2010), SAGMB 9.

    Examples
    --------
    >>> r = signflip_test([0.5, 1.2, 0.3, 0.9, -0.1, 0.7], method="exact")
    >>> float(r.pvalue)
    0.0625
    """
    progress = _check_progress(progress)
    d, n_resamples, method, batch_size, sequential = _signflip_iv(
        d,
        statistic,
        axis,
        alternative,
        n_resamples,
        method,
        batch_size,
        correction,
        sequential,
        return_null,
        key=key,
    )
    # Exact power-of-two rescale of tiny/huge d (XLA:CPU flushes subnormals, float32
    # sums overflow); p is invariant, the mean is scaled back. Callables: unknown scaling.
    factor, d = v.rescale_pow2(d, dtype=np.float32) if statistic in _SIGNFLIP_STATS else (1, d)
    res = _signflip(
        d,
        statistic,
        alternative,
        n_resamples,
        method,
        key,
        batch_size,
        correction,
        sequential,
        return_null,
        progress,
    )
    if factor != 1 and statistic == "mean":
        res = dataclasses.replace(
            res,
            statistic=v.scale_back(res.statistic, factor),
            null_distribution=v.scale_back(res.null_distribution, factor),
        )
    return res


def _signflip_pvalue(
    statistic_fn,
    d,
    *,
    alternative="two-sided",
    n_resamples=100_000,
    method="auto",
    key=None,
    batch_size=None,
    correction=None,
    sequential=None,
    return_null=False,
):
    """Sign-flip p-value for the parametric tests (``method="permutation"``).

    ``d : (..., m)`` canonical float64 differences with instances last, or
    ``(..., m, p)`` for ``statistic_fn="hotelling"``; ``statistic_fn`` is
    "mean", "t", "hotelling" or a callable as in :func:`signflip_test`.
    Returns a :class:`PermutationTestResult`. Call under ``jaxtests._precision.x64``.
    """
    d, n_resamples, method, batch_size, sequential = _signflip_iv(
        d,
        statistic_fn,
        -1,
        alternative,
        n_resamples,
        method,
        batch_size,
        correction,
        sequential,
        return_null,
    )
    return _signflip(
        d,
        statistic_fn,
        alternative,
        n_resamples,
        method,
        key,
        batch_size,
        correction,
        sequential,
        return_null,
    )


# --------------------------------------------------------------------------
# Two-sample label permutations
# --------------------------------------------------------------------------

_TWOSAMPLE_STATS = ("mean_difference", "t")


def _comb_at_most(n, k, cap):
    """``C(n, k)`` if it is at most ``cap``, else None, without forming huge values.

    The partial products ``C(n - k + i, i)`` increase with ``i``, so the first
    one above ``cap`` settles it.
    """
    k = min(k, n - k)
    c = 1
    for i in range(1, k + 1):
        c = c * (n - k + i) // i
        if c > cap:
            return None
    return c


@jax.jit
def _twosample_prep(x, y):
    n1, n2 = x.shape[-1], y.shape[-1]
    z = jnp.concatenate([x, y], axis=-1)
    total = jnp.sum(z, axis=-1)
    obs = ks.mean(x) - ks.mean(y)  # the shared kernel's mean, as the parametric tests
    abs_sum = jnp.sum(jnp.abs(z), axis=-1)
    scale = 1.0 / n1 + 1.0 / n2
    tol = _tie_tol(obs, abs_sum * scale) + 4 * (n1 + n2 + 32) * _EPS * abs_sum * scale
    zc = z - (total / (n1 + n2))[:, None]
    sd = jnp.sqrt(jnp.sum(zc * zc, axis=-1) / (n1 + n2 - 1) * scale)  # exact null sd
    return z, total, obs, tol, sd


def _permutation_test_iv(
    x,
    y,
    statistic,
    alternative,
    n_resamples,
    method,
    key,
    axis,
    batch_size,
    correction,
    sequential,
    return_null,
):
    """Validate :func:`permutation_test`'s arguments (scipy's ``_permutation_test_iv``).

    Returns ``x, y`` with samples last, and the canonical options.
    """
    explicit_n = n_resamples is not None
    n_resamples, batch_size, sequential = _common_iv(
        alternative, n_resamples, method, batch_size, correction, sequential, return_null, key=key
    )
    if method == "binomial":
        raise ValueError("`method`='binomial' applies to sign-flip tests only.")
    if not callable(statistic):
        v.check_choice(statistic, "statistic", _TWOSAMPLE_STATS)
    x = v.as_float_array(x, "x")
    y = v.as_float_array(y, "y")
    if x.ndim != y.ndim:
        raise ValueError(
            f"`x` and `y` must have the same number of dimensions, got shapes "
            f"{tuple(x.shape)} and {tuple(y.shape)}."
        )
    ax = v.normalize_axis(axis, x.ndim)
    x = jnp.moveaxis(x, ax, -1)
    y = jnp.moveaxis(y, ax, -1)
    if x.shape[:-1] != y.shape[:-1]:
        raise ValueError(
            f"`x` and `y` must agree on every axis but `axis`, got shapes "
            f"{tuple(x.shape)} and {tuple(y.shape)}."
        )
    n1, n2 = x.shape[-1], y.shape[-1]
    if n1 < 1 or n2 < 1 or n1 + n2 < 3:
        raise ValueError(
            f"`x` and `y` need at least 1 observation each and 3 in all, got {n1} and {n2}."
        )
    if callable(statistic):
        _check_statistic(
            statistic, [(n1,), (n2,)], "statistic", f"one hypothesis' samples ({n1},), ({n2},)"
        )
    if method == "exact":
        n_splits = _comb_at_most(n1 + n2, n1, max(n_resamples, _MAX_ENUMERATION))
        _check_exact_cap(n_splits, n_resamples, explicit_n)
    if sequential is not None and method == "auto":
        method = "monte-carlo"
    return x, y, n_resamples, method, batch_size, sequential


@x64
def permutation_test(
    x,
    y,
    *,
    statistic="mean_difference",
    alternative="two-sided",
    n_resamples=None,
    method="auto",
    key=None,
    axis=-1,
    batch_size=None,
    correction=None,
    sequential=None,
    return_null=False,
    progress=None,
):
    """Two-sample label permutation test (unpaired, "independent" in scipy's terms).

    Parameters
    ----------
    x, y : array_like, (..., n1) and (..., n2)
        Samples along ``axis``; the other axes (equal in ``x`` and ``y``) are
        separate hypotheses sharing the same permutations.
    statistic : {"mean_difference", "t"} or callable
        ``mean(x) - mean(y)``; "t" is the pooled-variance t, increasing in the
        mean difference over permutations (same p-value). A callable
        ``fn(x, y) -> scalar`` on 1-d samples is vmapped.
    alternative, n_resamples, method, key, batch_size, correction, sequential, return_null, progress
        As in :func:`signflip_test`; "exact" enumerates all ``C(n1 + n2, n1)``
        splits ("auto" does when that is at most ``n_resamples``; a given
        ``n_resamples`` below that number is an error with "exact").
        "binomial" applies to sign flips only.

    Returns
    -------
    PermutationTestResult

    Notes
    -----
    p-values follow ``scipy.stats.permutation_test(..., permutation_type=
    "independent")``: exact ``b / N``, Monte Carlo ``(b + 1) / (B + 1)``,
    two-sided ``2 min(p_less, p_greater)`` capped at 1; ties within scipy's
    relative tolerance (plus a float64 rounding bound) count as extreme.
    Infinite and NaN statistics are treated as in :func:`signflip_test`; "t"
    is compared through the mean difference (constant data: p = 1).

    Random splits are drawn without sorting: fair membership bits (their
    group-1 sum ``S1`` comes from the same fused float32 sums as
    :func:`signflip_test`, rechecked in float64 where its rounding bound
    reaches a threshold),
    then the ``|K - n1|`` surplus or missing members are removed or added by
    distinct uniform draws of positions (rejection on the membership bit);
    ``S1`` is corrected by their values in float64. When one group is small
    the split starts from no (or every) item instead. The proof that every
    split is exactly equally likely is in
    :func:`jaxtests.kernels.resampling.subset_corrections`; a test compares
    the splits with all ``C(13, 4)`` subsets by chi-square. User statistics
    (callables) use explicit membership bits corrected by
    :func:`jaxtests.kernels.resampling.fix_subset_size`. Hein's worked
    example (X = (2, 5), Y = (6)) gives 2/3 with ``T >= t``; the slide counts
    ``T > t`` for 1/3.

    References
    ----------
    Hein, M. (2013). "Performance Measures and Statistical Tests II", lecture 16,
    Machine Learning, Saarland University.
    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero.
    Statistical Applications in Genetics and Molecular Biology 9(1), article 39.

    Examples
    --------
    Hein's worked example: the three splits of (2, 5 | 6) give mean
    differences -2.5 (observed), -1 and 3.5. Counting ``T >= t`` (scipy's
    convention; the slide counts ``T > t`` and reports 1/3), the two-sided
    p-value is ``P(|T| >= 2.5) = 2 P(T <= -2.5) = 2/3``:

    >>> r = permutation_test([2.0, 5.0], [6.0])
    >>> r.method, float(r.pvalue)
    ('exact', 0.6666666666666666)
    >>> float(permutation_test([2.0, 5.0], [6.0], alternative="less").pvalue)
    0.3333333333333333
    """
    progress = _check_progress(progress)
    x, y, n_resamples, method, batch_size, sequential = _permutation_test_iv(
        x,
        y,
        statistic,
        alternative,
        n_resamples,
        method,
        key,
        axis,
        batch_size,
        correction,
        sequential,
        return_null,
    )
    # Tiny/huge data: exact power-of-two rescale, as signflip_test (mean scaled back).
    rescale = statistic in _TWOSAMPLE_STATS
    factor, x, y = v.rescale_pow2(x, y, dtype=np.float32) if rescale else (1, x, y)
    res = _twosample(
        x,
        y,
        statistic,
        alternative,
        n_resamples,
        method,
        key,
        batch_size,
        correction,
        sequential,
        return_null,
        progress,
    )
    if factor != 1 and statistic == "mean_difference":
        res = dataclasses.replace(
            res,
            statistic=v.scale_back(res.statistic, factor),
            null_distribution=v.scale_back(res.null_distribution, factor),
        )
    return res


def _twosample(
    x,
    y,
    statistic,
    alternative,
    n_resamples,
    method,
    key,
    batch_size,
    correction,
    sequential,
    return_null,
    progress=None,
):
    batch_shape = x.shape[:-1]
    n1, n2 = x.shape[-1], y.shape[-1]
    n = n1 + n2
    x2 = x.reshape(-1, n1)
    y2 = y.reshape(-1, n2)
    n_h = x2.shape[0]
    # None: more splits than either limit (C(10^6, 5 10^5) alone takes seconds to compute)
    n_splits = _comb_at_most(n, n1, max(n_resamples, _MAX_ENUMERATION))
    if method == "auto":
        method = "exact" if n_splits is not None and n_splits <= n_resamples else "monte-carlo"
    exact = method == "exact"
    if exact and (n_splits is None or n_splits > _MAX_ENUMERATION):
        count = f"= {n_splits}" if n_splits is not None else "> 2^30"
        raise ValueError(
            f"`method`='exact' would enumerate C({n}, {n1}) {count} splits "
            "(limit 2^30). Use 'monte-carlo'."
        )
    n_words = -(-n // 32)
    linear = statistic in _TWOSAMPLE_STATS
    z, total, obs_md, tol, sd = _twosample_prep(x2, y2)
    if linear:
        draws = _block_draws_linear(n_words)
    else:
        draws = _block_draws_generic(n)
    if exact:
        n_total = n_splits
        draws = min(draws, n_total)
        words = _Words("combinations", n_words, draws, n, n1)
    else:
        n_total = n_resamples
        words = _Words("random", n_words, draws, n, n1)
    if linear:
        # mean(x*) - mean(y*) = P (1/n1 + 1/n2) - Z / n2 with P the group-1 sum.
        data = {"a": jnp.full((n_h,), 1.0 / n1 + 1.0 / n2), "c": -total / n2}
        if exact:
            tables, terms = _exact_terms(z, n_words)
            data.update(terms)
            evaluator = _LinearEval(words, tables)
        else:
            draws = _block_draws_fused(n_words, n_h, n_total, sequential is not None)
            evaluator, extra = _subset_evaluator(n, n1, n_words, draws)
            data.update(z=z, **extra)
            if evaluator.mode == "bernoulli":
                data["z32"] = _pad_words(z, n_words)
                data["d64"] = _pad_words(z, n_words, jnp.float64)
                data["err"] = _float32_err(z, n_words, data["a"], data["c"])
        observed = obs_md if statistic == "mean_difference" else ks.pooled_t_statistic(x2, y2)
        out = _drive(
            evaluator=evaluator,
            data=data,
            t_cmp=obs_md,
            tol=tol,
            scale=sd,
            n_total=n_total,
            draws=draws,
            exact=exact,
            alternative=alternative,
            correction=correction,
            sequential=sequential,
            return_null=return_null,
            batch_size=batch_size,
            key=key,
            progress=progress,
        )
        null_map = None
        if statistic == "t":
            zz = np.asarray(z)
            q = np.sum((zz - zz.mean(axis=1, keepdims=True)) ** 2, axis=1)
            tt = np.asarray(total)

            def null_map(md):
                # Group sums from the mean difference, then pooled t.
                p1 = (md + tt[:, None] / n2) / (1.0 / n1 + 1.0 / n2)
                mx, my = p1 / n1, (tt[:, None] - p1) / n2
                zbar = tt[:, None] / n
                ss = q[:, None] - n1 * (mx - zbar) ** 2 - n2 * (my - zbar) ** 2
                with np.errstate(divide="ignore", invalid="ignore"):
                    return md / np.sqrt(ss / (n - 2) * (1.0 / n1 + 1.0 / n2))

        return _wrap(observed, batch_shape, out, alternative, correction, null_map)
    observed = _vmapped(statistic)(x2, y2)
    # Size of the statistic's values: its value on the splits that put the n1
    # largest (or smallest) values in group 1.
    zs = jnp.sort(z, axis=-1)
    lo_hi = _vmapped(statistic)(zs[:, n - n1 :], zs[:, : n - n1])
    hi_lo = _vmapped(statistic)(zs[:, :n1], zs[:, n1:])
    tol_g = _tie_tol(observed, jnp.maximum(jnp.abs(lo_hi), jnp.abs(hi_lo)))
    out = _drive(
        evaluator=_GenericEval(words, "twosample", statistic, n),
        data={"z": z, "n1": jnp.zeros((n1,))},
        t_cmp=observed,
        tol=tol_g,
        scale=jnp.ones_like(observed),
        n_total=n_total,
        draws=draws,
        exact=exact,
        alternative=alternative,
        correction=correction,
        sequential=sequential,
        return_null=return_null,
        batch_size=batch_size,
        key=key,
        progress=progress,
    )
    return _wrap(observed, batch_shape, out, alternative, correction)


# --------------------------------------------------------------------------
# Swap test
# --------------------------------------------------------------------------

_COUNT_MEASURES = ("f1", "f_beta", "precision", "recall", "accuracy", "macro_f1")
_MEASURES = (*_COUNT_MEASURES, "auc")


def _as_class_labels(a, name):
    arr = np.asarray(a)
    if arr.dtype.kind not in "biu" and not (
        arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    ):
        raise ValueError(f"`{name}` must hold integer class labels 0..C-1 for measure='macro_f1'.")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"`{name}` must hold class labels 0..C-1; found {arr.min()}.")
    return arr


def _swap_test_iv(
    y_true,
    pred_a,
    pred_b,
    measure,
    beta,
    alternative,
    n_resamples,
    method,
    key,
    batch_size,
    sequential,
    return_null,
):
    """Validate :func:`swap_test`'s arguments; returns the 1-d arrays and canonical options."""
    explicit_n = n_resamples is not None
    n_resamples, batch_size, sequential = _common_iv(
        alternative, n_resamples, method, batch_size, None, sequential, return_null, key=key
    )
    if method == "binomial":
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
    if sequential is not None and method == "auto":
        method = "monte-carlo"
    yt = v.as_float_array(y_true, "y_true", ndim=1)
    pa = v.as_float_array(pred_a, "pred_a", ndim=1)
    pb = v.as_float_array(pred_b, "pred_b", ndim=1)
    v.check_same_shape(yt, pa, "y_true", "pred_a")
    v.check_same_shape(yt, pb, "y_true", "pred_b")
    n = yt.shape[0]
    if n < 2:
        raise ValueError(f"`y_true` needs at least 2 instances, got {n}.")
    if callable(measure):
        _check_statistic(measure, [(n,), (n,)], "measure", f"(y_true, pred) of shapes ({n},)")
    if method == "exact":
        m_eff = int(np.sum(np.asarray(pa) != np.asarray(pb)))
        counts = measure in _COUNT_MEASURES  # at least one (dummy) column in the tables
        _check_exact_cap(2 ** (max(m_eff, 1) if counts else m_eff), n_resamples, explicit_n)
    return yt, pa, pb, n_resamples, method, batch_size, sequential


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
        Binary labels in {0, 1} or {-1, +1}; class indices 0..C-1 for "macro_f1".
    pred_a, pred_b : array_like, (n,)
        Predicted labels of the two models (scores for "auc").
    measure : {"f1", "f_beta", "precision", "recall", "accuracy", "macro_f1", "auc"} or callable
        Count measures are recomputed from confusion counts, which are linear in
        the swap bits (fast table path); "auc" and callables
        ``fn(y_true, pred) -> scalar`` are recomputed from the swapped outputs.
        Undefined ratios (0/0) count as 0.
    beta : float
        F-beta weight for "f_beta" (a positive finite number); any other value
        than 1 with another measure is an error.
    alternative, n_resamples, method, key, batch_size, sequential, return_null, progress
        As in :func:`signflip_test` (also for infinite and NaN statistics);
        "binomial" applies to sign flips only.
        Exact enumeration runs over the instances where the two models' outputs
        differ (swapping equal outputs changes nothing).

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
    progress = _check_progress(progress)
    yt, pa, pb, n_resamples, method, batch_size, sequential = _swap_test_iv(
        y_true,
        pred_a,
        pred_b,
        measure,
        beta,
        alternative,
        n_resamples,
        method,
        key,
        batch_size,
        sequential,
        return_null,
    )
    n = yt.shape[0]
    diff = np.flatnonzero(np.asarray(pa) != np.asarray(pb))
    m_eff = int(diff.size)

    if measure in _COUNT_MEASURES:
        if measure == "macro_f1":
            yi = _as_class_labels(y_true, "y_true")
            ai = _as_class_labels(pred_a, "pred_a")
            bi = _as_class_labels(pred_b, "pred_b")
            n_classes = int(max(yi.max(), ai.max(), bi.max())) + 1
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
        dk = jnp.asarray(delta[:, keep])
        meas = "f1" if measure in ("f1", "macro_f1") else measure
        beta_v = float(beta) if measure == "f_beta" else 1.0
        counts_a = jnp.asarray(ra.sum(axis=1))
        counts_b = jnp.asarray(rb.sum(axis=1))
        nn = jnp.float64(n)
        observed = _count_measure(counts_a[:, None], nn, meas, n_classes, beta_v) - _count_measure(
            counts_b[:, None], nn, meas, n_classes, beta_v
        )
        n_patterns = 2 ** dk.shape[1]
        if method == "auto":
            method = "exact" if n_patterns <= n_resamples else "monte-carlo"
        exact = method == "exact"
        if exact and n_patterns > _MAX_ENUMERATION:
            raise ValueError(
                f"`method`='exact' would enumerate 2^{dk.shape[1]} swaps "
                "(limit 2^30). Use 'monte-carlo'."
            )
        mk = dk.shape[1]
        n_words = -(-mk // 32)
        data = {"counts_a": counts_a, "counts_b": counts_b, "n": nn}
        if exact:
            n_total = n_patterns
            draws = min(_block_draws_linear(n_words), n_total)
            tables, terms = _exact_terms(dk, n_words)
            data.update(terms)
            evaluator = _CountsEval(
                _Words("enumerate", n_words, draws), tables, meas, n_classes, beta_v
            )
        else:
            n_total = n_resamples
            draws = _block_draws_fused(n_words, dk.shape[0], n_total, sequential is not None)
            # Count changes are integers: their float32 sums are exact (|sum| <= m < 2^24).
            data["d32"] = _pad_words(dk, n_words)
            evaluator = _FusedEval(draws, "counts", meas, n_classes, beta_v)
        obs = jnp.reshape(observed, (1,))
        out = _drive(
            evaluator=evaluator,
            data=data,
            t_cmp=obs,
            tol=_tie_tol(obs, 1.0),  # every count measure lies in [0, 1]
            scale=jnp.ones((1,)),
            n_total=n_total,
            draws=draws,
            exact=exact,
            alternative=alternative,
            correction=None,
            sequential=sequential,
            return_null=return_null,
            batch_size=batch_size,
            key=key,
            progress=progress,
        )
        return _wrap(obs, (), out, alternative, None)

    # AUC and callables: swapped outputs are materialised per block.
    if measure == "auc":
        yl = v.as_label_array(y_true, "y_true")
        fn = _auc
    else:
        yl = yt
        fn = measure
    fa, fb = _swap_terms(fn)(yl, pa, pb)
    observed = jnp.reshape(fa - fb, (1,))
    # AUC lies in [0, 1]; a callable's rounding scales with its two terms.
    magnitude = 1.0 if measure == "auc" else jnp.maximum(jnp.abs(fa), jnp.abs(fb))
    n_patterns = 2**m_eff
    if method == "auto":
        method = "exact" if n_patterns <= n_resamples else "monte-carlo"
    exact = method == "exact"
    if exact and n_patterns > _MAX_ENUMERATION:
        raise ValueError(
            f"`method`='exact' would enumerate 2^{m_eff} swaps (limit 2^30). Use 'monte-carlo'."
        )
    # Only instances whose outputs differ are swapped; the rest stay in place.
    order = np.concatenate([diff, np.setdiff1d(np.arange(n), diff)])
    yo, ao, bo = yl[order], pa[order], pb[order]
    m_sw = max(m_eff, 1)
    n_words = -(-m_sw // 32)
    draws = _block_draws_generic(n)
    if exact:
        n_total = n_patterns
        draws = min(draws, n_total)
        words = _Words("enumerate", n_words, draws)
    else:
        n_total = n_resamples
        words = _Words("random", n_words, draws)
    out = _drive(
        evaluator=_GenericEval(words, "swap", fn, m_sw),
        data={"y": yo, "a": ao, "b": bo, "m": jnp.zeros((m_sw,))},
        t_cmp=observed,
        tol=_tie_tol(observed, magnitude),
        scale=jnp.ones((1,)),
        n_total=n_total,
        draws=draws,
        exact=exact,
        alternative=alternative,
        correction=None,
        sequential=sequential,
        return_null=return_null,
        batch_size=batch_size,
        key=key,
        progress=progress,
    )
    return _wrap(observed, (), out, alternative, None)


def _auc(y, s):
    return km.roc_auc(y, s)


# --------------------------------------------------------------------------
# Within-block permutations (anova / manova with folds as blocks)
# --------------------------------------------------------------------------


def _within_block_permutation_pvalue(
    statistic_fn,
    x,
    *,
    alternative="greater",
    n_resamples=100_000,
    key=None,
    batch_size=None,
    return_null=False,
):
    """Monte Carlo p-value with labels permuted independently within each block.

    ``x : (n_blocks, k, ...)``: block (fold) ``i`` holds the ``k`` algorithms'
    results; each draw permutes axis 1 of every block independently (Fisher-
    Yates from 53-bit uniforms), as in a randomized complete block design.
    ``statistic_fn(x) -> scalar`` (e.g. the repeated-measures F or a MANOVA
    statistic) gives the observed value and is vmapped over draws; infinite and
    NaN values are treated as in :func:`signflip_test`. Returns a
    :class:`PermutationTestResult`; call under ``jaxtests._precision.x64``.
    """
    n_resamples, batch_size, _ = _common_iv(
        alternative, n_resamples, "monte-carlo", batch_size, None, None, return_null
    )
    x = v.as_float_array(x, "x", min_ndim=2)
    n_blocks, k = x.shape[0], x.shape[1]
    if n_blocks < 2 or k < 2:
        raise ValueError(f"`x` needs at least 2 blocks and 2 groups, got shape {tuple(x.shape)}.")
    observed = jnp.reshape(_jitted(statistic_fn)(x), (1,))
    # Size of the statistic's values: its value when block i is rotated by i.
    rotated = jnp.stack([jnp.roll(x[i], i, axis=0) for i in range(n_blocks)])
    magnitude = _jitted(statistic_fn)(rotated)
    draws = _block_draws_generic(int(np.prod(x.shape)))
    ev = _WithinBlockEval(statistic_fn, n_blocks, k, draws)
    out = _drive(
        evaluator=ev,
        data={"x": x},
        t_cmp=observed,
        tol=_tie_tol(observed, magnitude),
        scale=jnp.ones((1,)),
        n_total=n_resamples,
        draws=draws,
        exact=False,
        alternative=alternative,
        correction=None,
        sequential=None,
        return_null=return_null,
        batch_size=batch_size,
        key=key,
    )
    return _wrap(observed, (), out, alternative, None)
