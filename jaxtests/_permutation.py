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
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec

from jaxtests import _validation as v
from jaxtests._precision import x64
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
    while r > 64 and (r * n_h > 2**17 or r * n_words > 2**32 or r >= 2 * n_total or r > cap):
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
                    seed = (keys[0, 2].astype(jnp.uint64) << 32) | keys[0, 3].astype(jnp.uint64)
                    w = kr.fix_subset_size(w, self.n, self.n1, seed)
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

    def __call__(self, key, block_ids, data):
        # Block ids of one step are consecutive: their draws are one contiguous range.
        first = block_ids[0].astype(jnp.int64) * self.draws
        keys, local = kr.draw_keys(key, first, block_ids.shape[0] * self.draws)
        p = kr.bit_sums(keys[:, 0], keys[:, 1], local, data["d32"])
        if self.kind == "affine":
            return data["a"][:, None] * p + data["c"][:, None]
        return _counts_statistic(p, data, self.measure, self.n_classes, self.beta)


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

    def __call__(self, key, block_ids, data):
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
        s1 = jnp.where((c > 0)[None, :], p - corr, p + corr)
        return data["a"][:, None] * s1 + data["c"][:, None]


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
        n_u += n_u % 2
        for i in range(block_ids.shape[0]):
            words = kr.random_words(seeds[i], 2, n_u // 2)  # 64-bit values, 53 bits used
            u64 = lax.bitcast_convert_type(words.T, jnp.uint64).reshape(-1)[: n_u // 2]
            u = (u64 >> 11).astype(jnp.float64) * (2.0**-53)
            u = jnp.concatenate([u, u])[: self.draws * self.n_blocks * (self.k - 1)]
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
        "n_steps",
        "n_dev",
        "alternative",
        "maxt",
        "keep_null",
    ),
)
def _run_counts(
    key,
    data,
    t_obs,
    tol,
    scale,
    first_step,
    *,
    evaluator,
    n_total,
    draws,
    per_step,
    n_steps,
    n_dev,
    alternative,
    maxt,
    keep_null,
):
    """Exceedance counts (and optionally the null) of steps ``first_step ...`` of ``n_steps``.

    Step ``s`` evaluates blocks ``s per_step, ..., (s + 1) per_step - 1``;
    draws past ``n_total`` are masked, so runs over consecutive step ranges
    add up to the counts of one run over all of them. ``n_steps`` is a
    multiple of ``n_dev``. The null is returned unsliced, ``(H, n_steps per_step draws)``.
    """
    ids = first_step * per_step + jnp.arange(n_steps * per_step, dtype=jnp.int32)
    ids = ids.reshape(n_steps, per_step)

    def local(ids_local, key, data, t_obs, tol, scale):
        def step(carry, bid):
            t = evaluator(key, bid, data)
            gidx = (bid.astype(jnp.int64)[:, None] * draws + jnp.arange(draws)[None, :]).reshape(-1)
            valid = gidx < n_total
            ge, le = _tail_counts(t, t_obs, tol, valid)
            mx = _maxt_counts(t, t_obs, tol, scale, valid, alternative) if maxt else ge
            carry = (carry[0] + ge, carry[1] + le, carry[2] + mx)
            return carry, (t if keep_null else None)

        h = t_obs.shape[0]
        zero = jnp.zeros((h,), jnp.int64)
        counts, nulls = lax.scan(step, (zero, zero, zero), ids_local)
        if n_dev > 1:
            counts = lax.psum(counts, "d")
        if keep_null:
            nulls = jnp.moveaxis(nulls, 1, 0).reshape(h, -1)
        return counts, nulls

    if n_dev == 1:
        counts, nulls = local(ids, key, data, t_obs, tol, scale)
    else:
        mesh = Mesh(np.array(jax.local_devices()[:n_dev]), ("d",))
        rep = PartitionSpec()
        f = jax.shard_map(
            local,
            mesh=mesh,
            in_specs=(PartitionSpec("d"), rep, rep, rep, rep, rep),
            out_specs=(rep, PartitionSpec(None, "d")),
            check_vma=False,
        )
        counts, nulls = f(ids, key, data, t_obs, tol, scale)
    return counts, nulls


@functools.partial(
    jax.jit,
    compiler_options=_COMPILER_OPTIONS,
    static_argnames=("evaluator", "n_total", "draws", "per_step", "n_steps", "alternative", "h"),
)
def _run_sequential(
    key, data, t_obs, tol, state, *, evaluator, n_total, draws, per_step, n_steps, alternative, h
):
    """Besag-Clifford: per hypothesis, the draw at which ``h`` extreme values were seen.

    ``state = (first_step, ge, le, stop)`` (``stop`` 0 while running); runs
    steps ``first_step, ...`` until ``first_step + n_steps`` or until every
    hypothesis stopped, and returns the new state, so host-level chunks of
    steps continue one another exactly.
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
        t = evaluator(key, bid, data)
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


def _common_iv(alternative, n_resamples, method, batch_size, correction, sequential, return_null):
    v.check_alternative(alternative)
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    v.check_choice(method, "method", _METHODS)
    if batch_size is not None:
        batch_size = v.as_int_scalar(batch_size, "batch_size", minimum=1)
    v.check_choice(correction, "correction", (None, "maxT"))
    if sequential is not None:
        sequential = v.as_int_scalar(sequential, "sequential", minimum=1)
        if method not in ("auto", "monte-carlo"):
            raise ValueError(f"`sequential` needs method='monte-carlo', got method={method!r}.")
        if correction is not None or return_null:
            raise ValueError("`sequential` cannot be combined with `correction` or `return_null`.")
    if not isinstance(return_null, bool):
        raise TypeError(f"`return_null` must be a bool, got {type(return_null).__name__}.")
    return n_resamples, batch_size, sequential


def _check_progress(progress):
    if progress is not None and not callable(progress):
        raise TypeError(
            f"`progress` must be a callable progress(done, total) or None, "
            f"got {type(progress).__name__}."
        )


def _per_step(batch_size, draws):
    if batch_size is None:
        return 1
    return max(1, -(-batch_size // draws))


def _n_devices(n_blocks, per_step):
    n = jax.local_device_count()
    return max(1, min(n, -(-n_blocks // per_step)))


# --------------------------------------------------------------------------
# Shared driver
# --------------------------------------------------------------------------


_PROGRESS_CHUNKS = 16  # host-level chunks of blocks when a progress callback is given


def _step_chunks(n_steps, n_dev, progress):
    """Steps per host-level call: all of them, or about 1/16 (a multiple of ``n_dev``)."""
    if progress is None:
        return n_steps
    per = -(-n_steps // _PROGRESS_CHUNKS)
    return -(-per // n_dev) * n_dev


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

    The blocks run in one host-level call, or in about 16 with
    ``progress``, which is called as each finishes (``progress(done,
    n_total)``); counts are integers summed over chunks, so the result is
    bit-identical to one call.
    """
    typed_key, seed = (None, None) if exact else resolve_key(key)
    if typed_key is None:
        typed_key = jax.random.key(0)
    per_step = _per_step(batch_size, draws)
    n_blocks = -(-n_total // draws)
    # No draw reaches a NaN observed statistic's thresholds; _wrap reports p = NaN.
    out = {"seed": seed, "n_resamples": n_total, "undefined": np.isnan(np.asarray(t_cmp))}
    if sequential is not None:
        n_steps = -(-n_blocks // per_step)
        chunk = n_steps if progress is None else _step_chunks(n_steps, 1, progress)
        zero = jnp.zeros((t_cmp.shape[0],), jnp.int64)
        state = (jnp.int32(0), zero, zero, zero)
        for first in range(0, n_steps, chunk):
            state = _run_sequential(
                typed_key,
                data,
                t_cmp,
                tol,
                state,
                evaluator=evaluator,
                n_total=n_total,
                draws=draws,
                per_step=per_step,
                n_steps=chunk,
                alternative=alternative,
                h=sequential,
            )
            if progress is not None:
                stopped = bool(np.all(np.asarray(state[3]) > 0))
                done = n_total if stopped else min(n_total, (first + chunk) * per_step * draws)
                progress(done, n_total)
                if stopped:
                    break
        ge, le, stop = (np.asarray(a) for a in state[1:])
        p, cnt, (lo, hi) = _finish(ge, le, n_total, alternative, exact=False)
        factor = 1.0 if alternative != "two-sided" else 2.0
        used = np.where(stop > 0, stop, n_total)
        # Besag & Clifford (1991): stopped at the h-th extreme value, p = h / L.
        p_seq = np.minimum(1.0, factor * sequential / np.maximum(used, 1))
        p = np.where(stop > 0, p_seq, p)
        cnt = np.where(stop > 0, sequential, cnt)
        slo, shi = _clopper_pearson(np.full(used.shape, sequential), used)
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
    n_dev = _n_devices(n_blocks, per_step)
    n_steps = -(-n_blocks // per_step)
    n_steps = -(-n_steps // n_dev) * n_dev
    chunk = _step_chunks(n_steps, n_dev, progress)

    def run(first):
        return _run_counts(
            typed_key,
            data,
            t_cmp,
            tol,
            scale,
            jnp.int32(first),
            evaluator=evaluator,
            n_total=n_total,
            draws=draws,
            per_step=per_step,
            n_steps=chunk,
            n_dev=n_dev,
            alternative=alternative,
            maxt=correction == "maxT",
            keep_null=return_null,
        )

    # Integer counts summed over calls: bit-identical to one call. One call at a
    # time: two computations in flight at once can hang XLA:CPU (README).
    counts, nulls = None, []
    for first in range(0, n_steps, chunk):
        c, nl = run(first)
        counts = c if counts is None else tuple(a + b for a, b in zip(counts, c, strict=True))
        nulls.append(nl)
        if progress is not None:
            jax.block_until_ready(counts)
            progress(min(n_total, (first + chunk) * per_step * draws), n_total)
    ge, le, mx = counts
    p, cnt, interval = _finish(ge, le, n_total, alternative, exact)
    out.update(
        pvalue=p, n_extreme=cnt, interval=interval, method="exact" if exact else "monte-carlo"
    )
    if correction == "maxT":
        adj = 0 if exact else 1
        # Westfall & Young (1993) single-step max-T; never below the raw p-value.
        out["adjusted"] = np.maximum(p, (np.asarray(mx) + adj) / (n_total + adj))
    if return_null:
        out["null"] = np.concatenate([np.asarray(a) for a in nulls], axis=1)[:, :n_total]
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
):
    n_resamples, batch_size, sequential = _common_iv(
        alternative, n_resamples, method, batch_size, correction, sequential, return_null
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
    return d, n_resamples, method, batch_size, sequential


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
    tol = 100 * _EPS * jnp.abs(mean_obs) + 4 * (m + 32) * _EPS * abs_sum / m
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
    observed = jax.jit(jax.vmap(stat_fn))(d2) if statistic not in _SIGNFLIP_STATS else (stat_fn(d2))
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
            evaluator = _FusedEval(draws)
            # float32 sums: widen the tie band by their rounding bound (T = (2P - D) / m).
            tol = tol + (2.0 / m) * kr.bit_sums_error_bound(jnp.sum(jnp.abs(dk), axis=-1), n_words)
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
    tol = 100 * _EPS * jnp.abs(obs)
    fn = stat_fn if statistic == "hotelling" else statistic
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
    n_resamples=100_000,
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
    fair coin (seed 003: ``T(pi) = sum_i pi_i W_i``, ``pi in {-1, 1}^m``).

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
    n_resamples : int
        Monte Carlo draws, and the largest number of patterns enumerated by "auto".
    method : {"auto", "exact", "monte-carlo", "binomial"}
        "auto" picks "binomial" when every hypothesis' differences take only
        the values {-c, 0, +c} (closed form, equals ``scipy.stats.binomtest``),
        "exact" when ``2^m <= n_resamples`` (``m`` counts nonzero differences),
        else "monte-carlo". Exact "mean"/"t" count by meeting in the middle
        (``m <= 48``); other statistics enumerate (``2^m <= 2^30``).
    key : int, JAX key or None
        Randomness; the seed is recorded in the result.
    axis : int
        Instance axis (leave at -1 for "hotelling").
    batch_size : int or None
        Draws evaluated per step; changes speed and memory, never the result.
    correction : {None, "maxT"}
        Westfall-Young single-step max-T adjusted p-values across hypotheses,
        for "mean" on the scale of each hypothesis' null standard deviation.
    sequential : int or None
        Besag-Clifford stopping after ``sequential`` extreme values.
    return_null : bool
        Keep the statistic of every rearrangement.
    progress : callable or None
        ``progress(done, total)``, called from the host after each of about 16
        chunks of draws (e.g. a tqdm bar); the result does not depend on it.

    Returns
    -------
    PermutationTestResult

    Notes
    -----
    Exact p-values are ``b / N`` over all ``N = 2^m`` patterns; Monte Carlo
    ones are ``(b + 1) / (B + 1)`` (never 0). A statistic counts as at least as
    extreme when it is within ``100 eps |t|`` of the observed ``t`` (scipy's
    tolerance) plus a bound on the rounding of the resampled sums: ties are
    never missed, so p can only err upwards. The seed's slide counts ``T > t``;
    here ``T >= t`` (scipy's).

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
    sum|d|`` with ``u = 2^-24`` (Higham 2002, eq. 3.4), about ``1.6e-6 sum|d|``;
    the tie band is widened by it. So the Monte Carlo p-value is never below
    the one exact sums would give and exceeds it only by the null probability
    of that band (for m = 10^4 normal data about 5e-4 null standard deviations
    wide). Exact enumeration uses float64 byte tables and meeting in the middle.

    References
    ----------
    Seed 003 (Hein, lecture 16). Besag & Clifford (1991), Biometrika 78.
    Westfall & Young (1993). Phipson & Smyth (2010), SAGMB 9.

    Examples
    --------
    >>> r = signflip_test([0.5, 1.2, 0.3, 0.9, -0.1, 0.7], method="exact")
    >>> float(r.pvalue)
    0.0625
    """
    _check_progress(progress)
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
    )
    return _signflip(
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
    tol = 100 * _EPS * jnp.abs(obs) + 4 * (n1 + n2 + 32) * _EPS * abs_sum * scale
    zc = z - (total / (n1 + n2))[:, None]
    sd = jnp.sqrt(jnp.sum(zc * zc, axis=-1) / (n1 + n2 - 1) * scale)  # exact null sd
    return z, total, obs, tol, sd


@x64
def permutation_test(
    x,
    y,
    *,
    statistic="mean_difference",
    alternative="two-sided",
    n_resamples=100_000,
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
        splits ("auto" does when that is at most ``n_resamples``).

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
    :func:`signflip_test`, with its rounding bound added to the tie band),
    then the ``|K - n1|`` surplus or missing members are removed or added by
    distinct uniform draws of positions (rejection on the membership bit);
    ``S1`` is corrected by their values in float64. When one group is small
    the split starts from no (or every) item instead. The proof that every
    split is exactly equally likely is in
    :func:`jaxtests.kernels.resampling.subset_corrections`; a test compares
    the splits with all ``C(13, 4)`` subsets by chi-square. User statistics
    (callables) use explicit membership bits corrected by
    :func:`jaxtests.kernels.resampling.fix_subset_size`. Seed 003's worked
    example (X = (2, 5), Y = (6)) gives 2/3 with ``T >= t``; the slide counts
    ``T > t`` for 1/3.

    Examples
    --------
    Seed 003's worked example: the three splits of (2, 5 | 6) give mean
    differences -2.5 (observed), -1 and 3.5. Counting ``T >= t`` (scipy's
    convention; the slide counts ``T > t`` and reports 1/3), the two-sided
    p-value is ``P(|T| >= 2.5) = 2 P(T <= -2.5) = 2/3``:

    >>> r = permutation_test([2.0, 5.0], [6.0])
    >>> r.method, float(r.pvalue)
    ('exact', 0.6666666666666666)
    >>> float(permutation_test([2.0, 5.0], [6.0], alternative="less").pvalue)
    0.3333333333333333
    """
    _check_progress(progress)
    n_resamples, batch_size, sequential = _common_iv(
        alternative, n_resamples, method, batch_size, correction, sequential, return_null
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
    if sequential is not None and method == "auto":
        method = "monte-carlo"
    return _twosample(
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
                # float32 group sums: widen the tie band by their rounding bound.
                bound = kr.bit_sums_error_bound(jnp.sum(jnp.abs(z), axis=-1), n_words)
                tol = tol + (1.0 / n1 + 1.0 / n2) * bound
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
    observed = jax.jit(jax.vmap(statistic))(x2, y2)
    tol_g = 100 * _EPS * jnp.abs(observed)
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


@x64
def swap_test(
    y_true,
    pred_a,
    pred_b,
    *,
    measure="f1",
    beta=1.0,
    alternative="two-sided",
    n_resamples=100_000,
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
        F-beta weight for "f_beta".
    alternative, n_resamples, method, key, batch_size, sequential, return_null, progress
        As in :func:`signflip_test` (also for infinite and NaN statistics).
        Exact enumeration runs over the instances where the two models' outputs
        differ (swapping equal outputs changes nothing).

    Returns
    -------
    PermutationTestResult
        ``statistic`` is ``measure(A) - measure(B)``.

    Examples
    --------
    >>> y = [1, 1, 0, 0, 1, 0]
    >>> r = swap_test(y, [1, 1, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0])
    >>> float(r.pvalue)
    0.5
    """
    _check_progress(progress)
    n_resamples, batch_size, sequential = _common_iv(
        alternative, n_resamples, method, batch_size, None, sequential, return_null
    )
    if method == "binomial":
        raise ValueError("`method`='binomial' applies to sign-flip tests only.")
    if not callable(measure):
        v.check_choice(measure, "measure", _MEASURES)
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not beta > 0:
        raise ValueError(f"`beta` must be a positive number, got {beta!r}.")
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
            tol=100 * _EPS * jnp.abs(obs),
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
    observed = jnp.reshape(jax.jit(lambda y, a, b: fn(y, a) - fn(y, b))(yl, pa, pb), (1,))
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
        tol=100 * _EPS * jnp.abs(observed),
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
    observed = jnp.reshape(jax.jit(statistic_fn)(x), (1,))
    draws = _block_draws_generic(int(np.prod(x.shape)))
    ev = _WithinBlockEval(statistic_fn, n_blocks, k, draws)
    out = _drive(
        evaluator=ev,
        data={"x": x},
        t_cmp=observed,
        tol=100 * _EPS * jnp.abs(observed),
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
