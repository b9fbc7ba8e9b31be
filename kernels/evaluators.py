"""Block evaluators: hashable descriptions of "statistics of draws in blocks".

Each evaluator maps ``(key, block_ids (k,), data)`` to ``(H, k R)`` statistics,
where draw ``r`` of block ``b`` is global draw ``b R + r``; the values of one
draw never depend on ``k`` (nor on batches or devices). Evaluators are frozen
dataclasses, so they are static arguments of the engine's compiled programs;
``data`` holds the arrays. Sources of rearrangements (:class:`Words`):
random words of :mod:`jaxtests.kernels.random`, enumeration of sign patterns,
or ranked combinations. "Banded" evaluators (:class:`FusedEval`,
:class:`SubsetEval`) take approximate sums from an evaluator family
(:mod:`jaxtests.kernels.families`) and recompute in float64 the draws whose
decision the rounding could change (:func:`jaxtests.kernels.exceedance.evaluate`).

Pure jnp; no validation.
"""

import dataclasses
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import families as kfamilies
from jaxtests.kernels import measures as kmeasures
from jaxtests.kernels import random as krandom
from jaxtests.kernels import resampling as kresampling

__all__ = [
    "EPS",
    "CountsEval",
    "FusedEval",
    "GenericEval",
    "LinearEval",
    "SelectedSums",
    "SubsetEval",
    "WithinBlockEval",
    "Words",
    "block_draws_dense",
    "block_draws_fused",
    "block_draws_generic",
    "block_draws_linear",
    "count_measure",
    "counts_statistic",
    "exact_terms",
    "subset_evaluator",
    "use_tables",
]

EPS = float(np.finfo(np.float64).eps)


def block_draws_linear(n_words):
    r = 8192
    while r > 64 and n_words * r > 2**21:
        r //= 2
    return r


def block_draws_fused(n_words, n_h, n_total, sequential=False):
    """Draws per block for :func:`bit_sums`: about 2^17 lanes (shared by the hypotheses).

    Large blocks amortise the per-word loop overhead; a block never exceeds
    the next power of two above ``n_total`` (small tests stay cheap) nor 4096
    draws under sequential stopping (stopping is checked between blocks), and
    ``n_words`` (the words summed) times the draws stays within 2^26, which
    bounds a block's time. The size depends only on the data and
    ``n_resamples``, never on ``batch_size`` or the device count.
    """
    r = 2**17
    cap = 4096 if sequential else 2**17
    while r > 64 and (r * n_h > 2**17 or r * n_words > 2**26 or r >= 2 * n_total or r > cap):
        r //= 2
    return r


def block_draws_dense(n_words, n_h, n_total, sequential=False, budget=2**22, lanes=2**17):
    """Draws per block for :func:`~kresampling.dense_sums` over ``n_words`` padded words.

    At most ``lanes`` (a power of two) draws; lanes times words times
    hypotheses stay within ``budget`` (the words of a block are held in
    memory: 4 bytes each); as for :func:`block_draws_fused` a block never
    exceeds twice ``n_total`` nor 4096 draws under sequential stopping. The
    size never changes a draw.
    """
    r = lanes
    cap = 4096 if sequential else lanes
    while r > 64 and (r * n_words * n_h > budget or r >= 2 * n_total or r > cap):
        r //= 2
    return r


def block_draws_generic(n_elements, budget=2**20, lanes=1024):
    """Draws per block of a materialised statistic: at most ``lanes``, ``draws x n_elements`` at
    most ``budget`` (at least 2). The size never changes a draw."""
    r = lanes
    while r > 2 and r * n_elements > budget:
        r //= 2
    return r


def use_tables(n_words):
    # Byte tables cost 256 x 8 bytes per 8 instances; beyond ~32 MB they fall
    # out of cache and plain bit planes are faster.
    return n_words * 4 * 256 * 8 <= 2**25


def exact_terms(d, n_words):
    """``(tables?, data)``: ``d : (H, m)`` padded to ``32 n_words``, as byte tables or planes."""
    dpad = jnp.pad(d, ((0, 0), (0, 32 * n_words - d.shape[1])))
    if use_tables(n_words):
        return True, {"tables": kresampling.byte_tables(dpad)}
    return False, {"d": dpad}


@dataclasses.dataclass(frozen=True)
class Words:
    """Where a block's words come from: "random", "enumerate" or "combinations"."""

    source: str
    n_words: int
    draws: int
    n: int = 0  # items (combinations / subset-size correction)
    n1: int = 0  # subset size for label permutations (0: plain fair bits)
    stride: int = 0  # counter stride of a draw's random words (0: n_words)

    def __call__(self, key, block_ids):
        r = self.draws
        if self.source == "enumerate":
            parts = [
                kresampling.enumeration_words(b.astype(jnp.int64) * r, r, self.n_words)
                for b in block_ids
            ]
        elif self.source == "combinations":
            parts = [
                kresampling.combination_words(
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
                keys, local = krandom.draw_keys(key, b.astype(jnp.int64) * r, r, 4)
                w = krandom.word_grid(
                    keys[:, 0], keys[:, 1], local, self.n_words, self.stride or None
                )
                if self.n1:
                    # Keyed by the draw's global index (its key block and its place in
                    # it), never by its place in this evaluation block: evaluation blocks
                    # that share a key block must not share correction streams.
                    w = kresampling.fix_subset_size(
                        w, self.n, self.n1, keys[:, 2], keys[:, 3], local
                    )
                parts.append(w)
        return jnp.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


@dataclasses.dataclass(frozen=True)
class SelectedSums:
    """Base of the evaluators linear in the words: sums of the instances a word selects.

    ``data["tables"]`` (byte tables) or ``data["d"]`` (bit planes), ``(H, 32 n_words)``;
    both sums are exact.
    """

    words: Words
    tables: bool

    def sums(self, key, block_ids, data):
        """``(H, k R)`` sums of the selected instances of every draw of the blocks."""
        w = self.words(key, block_ids)
        if self.tables:
            return kresampling.lut_sums(w, data["tables"])
        return kresampling.bitplane_sums(w, data["d"])


@dataclasses.dataclass(frozen=True)
class LinearEval(SelectedSums):
    """Affine statistics ``a P + c`` of selected-instance sums ``P`` from byte tables (exact)."""

    def __call__(self, key, block_ids, data):
        return data["a"][:, None] * self.sums(key, block_ids, data) + data["c"][:, None]


@dataclasses.dataclass(frozen=True)
class CountsEval(SelectedSums):
    """Swap test of confusion-count measures: counts are linear in the swap bits."""

    measure: str
    n_classes: int
    beta: float

    def __call__(self, key, block_ids, data):
        delta = self.sums(key, block_ids, data)
        return counts_statistic(delta, data, self.measure, self.n_classes, self.beta)


def counts_statistic(delta, data, measure, n_classes, beta):
    ca = data["counts_a"][:, None] + delta
    cb = data["counts_b"][:, None] - delta
    fa = count_measure(ca, data["n"], measure, n_classes, beta)
    fb = count_measure(cb, data["n"], measure, n_classes, beta)
    return (fa - fb)[None, :]


@dataclasses.dataclass(frozen=True)
class FusedEval:
    """Monte Carlo statistics of ``P = sum_i bit_i d_i``, bits generated and consumed in place.

    ``kind="affine"``: ``a P + c`` (sign-flip mean, its t). ``kind="counts"``:
    swap-test confusion counts ``counts_a + P`` (integers, exact in float32).
    ``family`` names the sums (:data:`jaxtests.kernels.families.FAMILIES`):
    "words" loops over the live words in float32 (fast on a CPU), "dense" sums
    every word of the padded data in one fused float64 reduction (accelerators),
    "dense32" the same from the float32 copy. Same draws, same counts.
    """

    draws: int
    kind: str = "affine"
    measure: str = "f1"
    n_classes: int = 1
    beta: float = 1.0
    stride: int = 0  # counter stride of a draw's words (0: the padded word count)
    family: str = "words"

    @property
    def banded(self):
        # Count changes are integers, exact in float32; affine sums are rounded.
        return self.kind == "affine"

    def __call__(self, key, block_ids, data):
        return self.approx(key, block_ids, data)[0]

    def approx(self, key, block_ids, data):
        """Statistics from the family's sums, and per lane what :meth:`exact` needs."""
        # Block ids of one step are consecutive: their draws are one contiguous range.
        first = block_ids[0].astype(jnp.int64) * self.draws
        keys, local = krandom.draw_keys(key, first, block_ids.shape[0] * self.draws)
        family = kfamilies.FAMILIES[self.family]
        p = family.sums(keys, local, data, self.stride or None, integers=self.kind == "counts")
        if self.kind == "affine":
            return data["a"][:, None] * p + data["c"][:, None], (keys, local)
        return counts_statistic(p, data, self.measure, self.n_classes, self.beta), None

    def exact(self, data, lanes):
        """Float64 statistics of the lanes ``(keys, local)`` (the same draws)."""
        keys, local = lanes
        p = kresampling.bit_sums_ordered(
            keys, None, local, data["d64"], data.get("nw"), self.stride or None
        )
        return data["a"][:, None] * p + data["c"][:, None]


@dataclasses.dataclass(frozen=True)
class SubsetEval:
    """Monte Carlo two-sample splits: group-1 sums ``S1`` of uniform ``n1``-subsets.

    ``mode="bernoulli"``: fair membership bits (fused sums ``P`` and counts
    ``K``), then ``|K - n1|`` members removed or added by
    :func:`jaxtests.kernels.resampling.subset_corrections`. ``"empty"`` /
    ``"full"``: start from no item / every item and add ``n1`` / remove ``n2``
    (cheaper when one group is small). Returns ``a S1 + c``.

    ``n`` is the static bound of the positions (``z`` is zero-padded to at
    least the live items) and ``n_words`` the counter stride of a draw's
    words (``n / 32``, a capacity); the live item count ``data["n_live"]`` and
    ``data["n1"]`` are traced, so every size up to ``n`` runs one program.
    """

    draws: int
    n: int
    n_words: int
    mode: str
    tiers: tuple
    family: str = "words"  # the fair-bit sums' family, as in FusedEval
    chunk: int = 4096  # lanes of a correction tier run in lockstep (never changes a split)

    @property
    def banded(self):
        # Only fair-bit starts sum in float32; the others add float64 values.
        return self.mode == "bernoulli"

    def __call__(self, key, block_ids, data):
        return self.approx(key, block_ids, data)[0]

    def exact(self, data, lanes):
        """Float64 statistics of the lanes ``(keys, local, correction)`` (the same splits)."""
        keys, local, delta = lanes
        p = kresampling.bit_sums_ordered(
            keys, None, local, data["d64"], data.get("nw"), self.n_words
        )
        return data["a"][:, None] * (p + delta.T) + data["c"][:, None]

    def approx(self, key, block_ids, data):
        """Statistics from the family's fair-bit sums, and per lane what :meth:`exact` needs."""
        first = block_ids[0].astype(jnp.int64) * self.draws
        n_lanes = block_ids.shape[0] * self.draws
        keys, local = krandom.draw_keys(key, first, n_lanes, 6)
        z = data["z"]
        if self.mode == "bernoulli":
            family = kfamilies.FAMILIES[self.family]
            p, k = family.sums(keys, local, data, self.n_words, data["mask"])
        elif self.mode == "empty":
            p, k = jnp.zeros((z.shape[0], n_lanes)), jnp.zeros((n_lanes,), jnp.int32)
        else:
            p = jnp.broadcast_to(jnp.sum(z, axis=1)[:, None], (z.shape[0], n_lanes))
            k = jnp.broadcast_to(data["n_live"].astype(jnp.int32), (n_lanes,))
        c = k - data["n1"].astype(jnp.int32)
        corr = kresampling.subset_corrections(
            keys,
            local,
            jnp.abs(c),
            c > 0,
            z,
            n=self.n,
            n_words=self.n_words,
            mode=self.mode,
            tiers=self.tiers,
            chunk=self.chunk,
            n_live=data["n_live"],
        )
        delta = jnp.where((c > 0)[None, :], -corr, corr)
        t = data["a"][:, None] * (p + delta) + data["c"][:, None]
        return t, (keys, local, delta.T)


def subset_evaluator(n, n1, n_words, draws, family="words", chunk=4096):
    """Pick the cheaper start (fair bits, or no/every item) and its correction tiers.

    ``n`` items of ``z``; ``n_words`` is the capacity (``32 n_words >= n``
    positions: the draws' layout, independent of how far ``z`` is padded).
    The evaluator depends on ``n`` and ``n1`` only through ``n_words``, the
    start mode and the bucketed expected need (tiers are a speed choice; any
    tiers give exact subsets), so a capacity compiles a handful of programs
    at most. ``family`` and ``chunk`` (lanes of a correction tier run
    together) are the backend's choices (:mod:`jaxtests._profile`). Returns the
    evaluator and its traced data (the live item count, ``n1``, the live words
    ``nw`` and their bit mask).
    """
    n2 = n - n1
    n_max = 32 * n_words
    live = -(-n // 32)
    spread = math.sqrt(n) / 2  # sd of K ~ Binomial(n, 1/2)
    need_bern = abs(n / 2 - n1) + 0.8 * spread
    # Costs in units of one trial (~20 ns on XLA:CPU): the fused pass costs about
    # n_words / 4 trials per draw (live words only), every needed position about 2.4.
    cost_bern = live / 4 + 2.4 * need_bern
    cost_direct = 2.4 * min(n1, n2) * n / max(n1, n2)
    if cost_direct < cost_bern:
        mode = "empty" if n1 <= n2 else "full"
        tiers = kresampling.correction_tiers(n_max, krandom.ladder(min(n1, n2)), 0)
    else:
        mode = "bernoulli"
        spread_max = math.sqrt(n_max) / 2
        tiers = kresampling.correction_tiers(
            n_max, krandom.ladder(math.ceil(abs(n / 2 - n1) + 0.8 * spread_max)), spread_max
        )
    bits = np.clip(n - 32 * np.arange(n_words), 0, 32).astype(np.uint64)
    mask = ((np.uint64(1) << bits) - np.uint64(1)).astype(np.uint32)
    extra = {
        "mask": mask,
        "n_live": np.uint32(n),
        "n1": np.int32(n1),
        "nw": np.int32(live),
    }
    return SubsetEval(draws, n_max, n_words, mode, tiers, family, chunk), extra


@dataclasses.dataclass(frozen=True)
class GenericEval:
    """Any statistic, evaluated on materialised rearrangements, one block at a time."""

    words: Words
    kind: str  # "signflip", "twosample", "swap"
    fn: Callable
    m: int

    def __call__(self, key, block_ids, data):
        w = self.words(key, block_ids)
        r = self.words.draws
        w = w.reshape(w.shape[0], block_ids.shape[0], r).transpose(1, 0, 2)
        return jnp.concatenate(list(lax.map(lambda wb: self._one(wb, data), w)), axis=1)

    def _one(self, w, data):
        bits = kresampling.words_to_bits(w, self.m)  # (R, m)
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
class WithinBlockEval:
    """Labels permuted independently within each block (fold) of ``x : (n_blocks, k, ...)``."""

    fn: Callable
    n_blocks: int
    k: int
    draws: int

    def __call__(self, key, block_ids, data):
        x = data["x"]
        n_u = self.n_blocks * (self.k - 1)  # uniforms per draw
        outs = []
        for b in block_ids:
            # One 64-bit value (53 bits used) per uniform, from the draw's own words:
            # every swap of every draw has its own randomness, keyed by the draw's index.
            keys, local = krandom.draw_keys(key, b.astype(jnp.int64) * self.draws, self.draws)
            k0, k1 = keys[:, :1], keys[:, 1:2]
            j = 2 * jnp.arange(n_u, dtype=jnp.uint32)
            c = local[:, None] * jnp.uint32(2 * n_u) + j[None, :]
            hi = krandom.keyed_words(k0, k1, c)  # (R, n_u): words 2i and 2i + 1 of the draw
            lo = krandom.keyed_words(k0, k1, c + 1)
            # (hi 2^32 + lo) >> 11, scaled by 2^-53: exact in float64.
            u = hi.astype(jnp.float64) * 2.0**-32 + (lo >> 11).astype(jnp.float64) * 2.0**-53
            # Stored once: XLA:CPU would recompute the hashes inside every consumer.
            u = kresampling.stored(u, b >= 0)
            u = u.reshape(self.draws, self.n_blocks, self.k - 1)
            perm = kresampling.uniform_permutations(u, self.k)  # (R, n_blocks, k)
            xp = jax.vmap(lambda p: jnp.take_along_axis(x, _expand(p, x.ndim), axis=1))(perm)
            outs.append(jax.vmap(self.fn)(xp)[None, :])
        return jnp.concatenate(outs, axis=1) if len(outs) > 1 else outs[0]


def _expand(p, ndim):
    return p.reshape(p.shape + (1,) * (ndim - 2))


def count_measure(c, n, measure, n_classes, beta):
    """Measure from stacked counts ``c : (3 C, R)`` rows (tp, fp, fn) per class, 0/0 scored 0.

    ``measure``: a row of :data:`jaxtests.kernels.measures.MEASURES`, or
    ``"f_beta"`` (weight ``beta``). ``n_classes == 1``: the rows are the positive
    class's (binary); ``n_classes > 1``: every class's, on axis 0 (a multiclass
    measure: macro averages over the classes that occur in each draw's counts,
    scikit-learn's ``labels=None``).
    """
    tp, fp, fn = c[0::3], c[1::3], c[2::3]
    cc = kmeasures.ConfusionCounts(tp, fn, fp, n - tp - fp - fn)
    if measure == "f_beta":  # the one measure with a parameter: binary, from its kernel
        return kmeasures.f_beta(cc, beta, 0.0)[0]
    row = kmeasures.MEASURES[measure]
    if n_classes > 1:
        return row.classes(cc, 0.0, 0)
    return row.of_binary(kmeasures.ConfusionCounts(*(x[0] for x in cc)), 0.0)
