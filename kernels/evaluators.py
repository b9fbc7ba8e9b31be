"""Block evaluators: hashable descriptions of "statistics of draws in blocks".

Each evaluator maps ``(key, block_ids (k,), data)`` to ``(H, k R)`` statistics,
where draw ``r`` of block ``b`` is global draw ``b R + r``; the values of one
draw never depend on ``k`` (nor on batches or devices). Evaluators are frozen
dataclasses, so they are static arguments of the engine's compiled programs,
and declare what the engine asks of them (:class:`Evaluator`); ``data`` holds
the arrays, a NamedTuple per evaluator. Sources of rearrangements
(:class:`Words`): random words of :mod:`jaxtests.kernels.random`
(:class:`RandomWords`), enumeration of sign patterns (:class:`EnumeratedWords`),
or ranked combinations (:class:`CombinationWords`). "Banded" evaluators
(:class:`FusedEval`, :class:`SubsetEval`) take approximate sums from an evaluator family
(:mod:`jaxtests.kernels.families`) and recompute in float64 the draws whose
decision the rounding could change (:func:`jaxtests.kernels.exceedance.evaluate`).

Pure jnp; no validation.
"""

import abc
import dataclasses
import math
from collections.abc import Callable
from typing import ClassVar, NamedTuple

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
    "BlockData",
    "CombinationWords",
    "Counts",
    "CountsData",
    "CountsEval",
    "EnumeratedWords",
    "Evaluator",
    "FlipData",
    "FusedCountsData",
    "FusedCountsEval",
    "FusedEval",
    "GenericEval",
    "LinearData",
    "LinearEval",
    "RandomWords",
    "Selected",
    "SelectedSums",
    "SignFlippedEval",
    "SplitData",
    "SplitEval",
    "SplitItems",
    "SplitSizes",
    "SubsetEval",
    "SwapData",
    "SwappedEval",
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


# -- the arrays of each evaluator (its ``data``): pytrees of named fields, as optax's states


class Selected(NamedTuple):
    """Terms of exact selected-instance sums: byte tables ``(H, 4 W, 256)`` of the padded data
    (:func:`~kresampling.byte_tables`) or, beyond their memory budget, the padded data itself,
    ``planes : (H, 32 W)``; the other field None (:func:`exact_terms`)."""

    tables: jax.Array | None
    planes: jax.Array | None


class LinearData(NamedTuple):
    """:class:`LinearEval`'s arrays: ``T = slope P + offset``, ``slope, offset : (H,)``."""

    selected: Selected
    slope: jax.Array
    offset: jax.Array


class Counts(NamedTuple):
    """Two models' confusion counts ``(3 C,)``: rows (tp, fp, fn) per class, ``n`` instances."""

    counts_a: jax.Array
    counts_b: jax.Array
    n: jax.Array


class CountsData(NamedTuple):
    """:class:`CountsEval`'s arrays: the count changes' tables and the unswapped counts."""

    selected: Selected
    counts: Counts


class FusedCountsData(NamedTuple):
    """Fused swap counts' arrays: the count changes ``(3 C, W, 32)`` (integers, exact in
    float32: both fields of ``terms`` hold them) and the unswapped counts."""

    terms: kfamilies.Terms
    counts: Counts


class SplitSizes(NamedTuple):
    """Traced sizes of a two-sample split: ``word_mask : (W,)`` uint32 the live bits of each
    word, ``n_live`` (uint32) the live items, ``n1`` (int32) the group-1 size."""

    word_mask: np.ndarray
    n_live: np.ndarray
    n1: np.ndarray


class SplitData(NamedTuple):
    """:class:`SubsetEval`'s arrays: ``T = slope S1 + offset`` of the items ``z : (H, >= n)``.

    ``terms`` and ``err_bound`` (:class:`jaxtests.kernels.families.Sums`'
    fields) only for fair-bit starts, the family's sums; None otherwise.
    """

    z: jax.Array
    slope: jax.Array
    offset: jax.Array
    sizes: SplitSizes
    terms: kfamilies.Terms | None = None
    err_bound: jax.Array | None = None


class FlipData(NamedTuple):
    """Sign-flipped instances ``d : (H, m, ...)``, instances on axis 1."""

    d: jax.Array


class SplitItems(NamedTuple):
    """Items ``z : (H, n, ...)`` split into the first ``n1`` and the rest."""

    z: jax.Array


class SwapData(NamedTuple):
    """Labels ``y`` and two models' outputs ``pred_a``, ``pred_b`` (instances first)."""

    y: jax.Array
    pred_a: jax.Array
    pred_b: jax.Array


class BlockData(NamedTuple):
    """``x : (n_blocks, k, ...)``, permuted within each block."""

    x: jax.Array


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
    """``(tables?, Selected)``: ``d : (H, m)`` padded to ``32 n_words``, as tables or planes."""
    dpad = jnp.pad(d, ((0, 0), (0, 32 * n_words - d.shape[1])))
    if use_tables(n_words):
        return True, Selected(kresampling.byte_tables(dpad), None)
    return False, Selected(None, dpad)


class Evaluator(abc.ABC):
    """What the engine asks of a block evaluator (every evaluator here is one).

    ``__call__(key, block_ids, data)``: the ``(H, k R)`` statistics of the
    blocks' draws, ``data`` the evaluator's own NamedTuple of arrays.
    ``banded``: the statistics come from ``approx(key, block_ids, data) ->
    (t, lanes)``, fast sums of the evaluator's ``family``
    (:class:`jaxtests.kernels.families.Family`) within ``data.err_bound`` of
    the float64 ones of ``exact(data, lanes)``, and ``data.terms`` are the
    terms summed (:func:`jaxtests.kernels.exceedance.evaluate` rechecks the
    unsure lanes). ``materialised``: a draw holds a rearranged copy of the data
    (the engine bounds a step's memory by it).
    """

    banded: ClassVar[bool] = False
    materialised: ClassVar[bool] = False

    @abc.abstractmethod
    def __call__(self, key, block_ids, data):
        """Statistics ``(H, L)`` of the lanes of blocks ``block_ids`` under ``key``."""


@dataclasses.dataclass(frozen=True)
class Words(abc.ABC):
    """Where a block's words come from: ``(n_words, k R)`` uint32 for ``draws`` (R) a block."""

    n_words: int
    draws: int

    def __call__(self, key, block_ids):
        parts = [self.block(key, b.astype(jnp.int64) * self.draws) for b in block_ids]
        return jnp.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]

    @abc.abstractmethod
    def block(self, key, first):
        """The words of draws ``first, ..., first + draws - 1``."""


@dataclasses.dataclass(frozen=True)
class EnumeratedWords(Words):
    """Every sign pattern: draw ``g`` is pattern ``g`` (its bits the pattern's)."""

    def block(self, key, first):
        return kresampling.enumeration_words(first, self.draws, self.n_words)


@dataclasses.dataclass(frozen=True)
class CombinationWords(Words):
    """Every ``n1``-subset of ``n`` items: draw ``g`` is the subset of colex rank ``g``."""

    n: int
    n1: int

    def block(self, key, first):
        ranks = first + jnp.arange(self.draws, dtype=jnp.int64)
        return kresampling.combination_words(ranks, self.n, self.n1, self.n_words)


@dataclasses.dataclass(frozen=True)
class RandomWords(Words):
    """Random words of :mod:`jaxtests.kernels.random`: the fused sums' (``bit_sums``) words.

    With ``n1``, uniform ``n1``-subsets of ``n`` items (fair bits corrected,
    :func:`~kresampling.fix_subset_size`); ``stride`` the counter stride of a
    draw's words (0: ``n_words``).
    """

    n: int = 0
    n1: int = 0
    stride: int = 0

    def block(self, key, first):
        keys, local = krandom.draw_keys(key, first, self.draws, 4)
        w = krandom.word_grid(keys[:, 0], keys[:, 1], local, self.n_words, self.stride or None)
        if self.n1:
            # Keyed by the draw's global index (its key block and its place in it), never
            # by its place in this evaluation block: evaluation blocks that share a key
            # block must not share correction streams.
            w = kresampling.fix_subset_size(w, self.n, self.n1, keys[:, 2], keys[:, 3], local)
        return w


@dataclasses.dataclass(frozen=True)
class SelectedSums(Evaluator):
    """Base of the evaluators linear in the words: sums of the instances a word selects.

    ``data.selected`` (:class:`Selected`) holds byte tables (``tables``) or
    bit planes; both sums are exact.
    """

    words: Words
    tables: bool

    def sums(self, key, block_ids, data):
        """``(H, k R)`` sums of the selected instances of every draw of the blocks."""
        w = self.words(key, block_ids)
        if self.tables:
            return kresampling.lut_sums(w, data.selected.tables)
        return kresampling.bitplane_sums(w, data.selected.planes)


@dataclasses.dataclass(frozen=True)
class LinearEval(SelectedSums):
    """Affine statistics ``slope P + offset`` of selected-instance sums ``P`` (exact);
    :class:`LinearData`."""

    def __call__(self, key, block_ids, data):
        return data.slope[:, None] * self.sums(key, block_ids, data) + data.offset[:, None]


@dataclasses.dataclass(frozen=True)
class CountsEval(SelectedSums):
    """Swap test of confusion-count measures: counts are linear in the swap bits;
    :class:`CountsData`."""

    measure: str
    n_classes: int
    beta: float

    def __call__(self, key, block_ids, data):
        delta = self.sums(key, block_ids, data)
        return counts_statistic(delta, data.counts, self.measure, self.n_classes, self.beta)


def counts_statistic(delta, counts, measure, n_classes, beta):
    """``(1, L)`` measure differences of :class:`Counts` with count changes ``delta : (3 C, L)``
    moved from model B to model A."""
    ca = counts.counts_a[:, None] + delta
    cb = counts.counts_b[:, None] - delta
    fa = count_measure(ca, counts.n, measure, n_classes, beta)
    fb = count_measure(cb, counts.n, measure, n_classes, beta)
    return (fa - fb)[None, :]


def _lanes(key, block_ids, draws, n_keys=2):
    """Keys and counters ``(L, n_keys), (L,)`` of the lanes of consecutive blocks."""
    # Block ids of one step are consecutive: their draws are one contiguous range.
    first = block_ids[0].astype(jnp.int64) * draws
    return krandom.draw_keys(key, first, block_ids.shape[0] * draws, n_keys)


@dataclasses.dataclass(frozen=True)
class FusedEval(Evaluator):
    """Monte Carlo ``slope P + offset``, ``P = sum_i bit_i d_i``, bits generated and consumed
    in place (sign-flip mean, its t); data :class:`jaxtests.kernels.families.Sums`.

    ``family`` (:class:`jaxtests.kernels.families.Family`) computes the sums:
    "words" loops over the live words in float32 (fast on a CPU), "dense" sums
    every word of the padded data in one fused float64 reduction (accelerators),
    "dense32" the same from the float32 copy. Same draws, same counts.
    """

    banded: ClassVar[bool] = True  # the family's sums are rounded

    draws: int
    stride: int = 0  # counter stride of a draw's words (0: the padded word count)
    family: kfamilies.Family = kfamilies.WORDS

    def __call__(self, key, block_ids, data):
        return self.approx(key, block_ids, data)[0]

    def approx(self, key, block_ids, data):
        """Statistics from the family's sums, and per lane what :meth:`exact` needs."""
        keys, local = _lanes(key, block_ids, self.draws)
        p = self.family.sums(keys, local, data.terms, self.stride or None)
        return data.slope[:, None] * p + data.offset[:, None], (keys, local)

    def exact(self, data, lanes):
        """Float64 statistics of the lanes ``(keys, local)`` (the same draws)."""
        keys, local = lanes
        terms = data.terms
        p = kresampling.bit_sums_ordered(
            keys[:, 0], keys[:, 1], local, terms.exact, terms.live_words, self.stride or None
        )
        return data.slope[:, None] * p + data.offset[:, None]


@dataclasses.dataclass(frozen=True)
class FusedCountsEval(Evaluator):
    """Monte Carlo swap test of confusion-count measures, counts ``counts_a + P`` summed by
    ``family`` as :class:`FusedEval`'s; data :class:`FusedCountsData`.

    Count changes are integers, exact in float32 in any order: every family's
    sums are the counts themselves (not banded).
    """

    draws: int
    measure: str
    n_classes: int
    beta: float
    stride: int  # counter stride of a draw's words: the padded word count
    family: kfamilies.Family = kfamilies.WORDS

    def __call__(self, key, block_ids, data):
        keys, local = _lanes(key, block_ids, self.draws)
        p = self.family.sums(keys, local, data.terms, self.stride)
        return counts_statistic(p, data.counts, self.measure, self.n_classes, self.beta)


@dataclasses.dataclass(frozen=True)
class SubsetEval(Evaluator):
    """Monte Carlo two-sample splits: group-1 sums ``S1`` of uniform ``n1``-subsets.

    ``start`` (:class:`jaxtests.kernels.resampling.SubsetStart`) ``FAIR_BITS``:
    fair membership bits (fused sums ``P`` and counts ``K``), then ``|K - n1|``
    members removed or added by
    :func:`jaxtests.kernels.resampling.subset_corrections`. ``EMPTY`` /
    ``FULL``: start from no item / every item and add ``n1`` / remove ``n2``
    (cheaper when one group is small). Returns ``slope S1 + offset``
    (:class:`SplitData`).

    ``n`` is the static bound of the positions (``z`` is zero-padded to at
    least the live items) and ``n_words`` the counter stride of a draw's
    words (``n / 32``, a capacity); the live item count and ``n1``
    (:class:`SplitSizes`) are traced, so every size up to ``n`` runs one program.
    """

    draws: int
    n: int
    n_words: int
    start: kresampling.SubsetStart
    tiers: tuple
    family: kfamilies.Family = kfamilies.WORDS  # the fair-bit sums' family, as in FusedEval
    chunk: int = 4096  # lanes of a correction tier run in lockstep (never changes a split)

    @property
    def banded(self):
        # Only fair-bit starts sum in float32; the others add float64 values.
        return self.start is kresampling.SubsetStart.FAIR_BITS

    def __call__(self, key, block_ids, data):
        return self.approx(key, block_ids, data)[0]

    def exact(self, data, lanes):
        """Float64 statistics of the lanes ``(keys, local, correction)`` (the same splits)."""
        keys, local, delta = lanes
        terms = data.terms
        p = kresampling.bit_sums_ordered(
            keys[:, 0], keys[:, 1], local, terms.exact, terms.live_words, self.n_words
        )
        return data.slope[:, None] * (p + delta.T) + data.offset[:, None]

    def approx(self, key, block_ids, data):
        """Statistics from the family's fair-bit sums, and per lane what :meth:`exact` needs."""
        first = block_ids[0].astype(jnp.int64) * self.draws
        n_lanes = block_ids.shape[0] * self.draws
        keys, local = krandom.draw_keys(key, first, n_lanes, 6)
        z, sizes = data.z, data.sizes
        if self.start is kresampling.SubsetStart.FAIR_BITS:
            p, k = self.family.sums(keys, local, data.terms, self.n_words, sizes.word_mask)
        elif self.start is kresampling.SubsetStart.EMPTY:
            p, k = jnp.zeros((z.shape[0], n_lanes)), jnp.zeros((n_lanes,), jnp.int32)
        else:
            p = jnp.broadcast_to(jnp.sum(z, axis=1)[:, None], (z.shape[0], n_lanes))
            k = jnp.broadcast_to(sizes.n_live.astype(jnp.int32), (n_lanes,))
        c = k - sizes.n1.astype(jnp.int32)
        corr = kresampling.subset_corrections(
            keys,
            local,
            jnp.abs(c),
            c > 0,
            z,
            n=self.n,
            n_words=self.n_words,
            start=self.start,
            tiers=self.tiers,
            chunk=self.chunk,
            n_live=sizes.n_live,
        )
        delta = jnp.where((c > 0)[None, :], -corr, corr)
        t = data.slope[:, None] * (p + delta) + data.offset[:, None]
        return t, (keys, local, delta.T)


def subset_evaluator(n, n1, n_words, draws, family=kfamilies.WORDS, chunk=4096):
    """Pick the cheaper start (fair bits, or no/every item) and its correction tiers.

    ``n`` items of ``z``; ``n_words`` is the capacity (``32 n_words >= n``
    positions: the draws' layout, independent of how far ``z`` is padded).
    The evaluator depends on ``n`` and ``n1`` only through ``n_words``, the
    start and the bucketed expected need (tiers are a speed choice; any
    tiers give exact subsets), so a capacity compiles a handful of programs
    at most. ``family`` and ``chunk`` (lanes of a correction tier run
    together) are the backend's choices (:mod:`jaxtests._profile`). Returns the
    evaluator and its traced sizes (:class:`SplitSizes`).
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
        start = kresampling.SubsetStart.EMPTY if n1 <= n2 else kresampling.SubsetStart.FULL
        tiers = kresampling.correction_tiers(n_max, krandom.ladder(min(n1, n2)), 0)
    else:
        start = kresampling.SubsetStart.FAIR_BITS
        spread_max = math.sqrt(n_max) / 2
        tiers = kresampling.correction_tiers(
            n_max, krandom.ladder(math.ceil(abs(n / 2 - n1) + 0.8 * spread_max)), spread_max
        )
    bits = np.clip(n - 32 * np.arange(n_words), 0, 32).astype(np.uint64)
    mask = ((np.uint64(1) << bits) - np.uint64(1)).astype(np.uint32)
    sizes = SplitSizes(mask, np.uint32(n), np.int32(n1))
    return SubsetEval(draws, n_max, n_words, start, tiers, family, chunk), sizes


@dataclasses.dataclass(frozen=True)
class GenericEval(Evaluator):
    """Base of the statistics evaluated on materialised rearrangements, one block at a time.

    ``fn`` the statistic, ``m`` the instances a draw's ``words`` rearrange;
    a subclass's ``_one(bits (R, m), data)`` gives one block's ``(H, R)`` values.
    """

    materialised: ClassVar[bool] = True

    words: Words
    fn: Callable
    m: int

    def __call__(self, key, block_ids, data):
        w = self.words(key, block_ids)
        r = self.words.draws
        w = w.reshape(w.shape[0], block_ids.shape[0], r).transpose(1, 0, 2)
        one = lambda wb: self._one(kresampling.words_to_bits(wb, self.m), data)  # noqa: E731
        return jnp.concatenate(list(lax.map(one, w)), axis=1)

    @abc.abstractmethod
    def _one(self, bits, data):
        """Statistics of one block's rearrangements ``bits`` (each subclass's own)."""


@dataclasses.dataclass(frozen=True)
class SignFlippedEval(GenericEval):
    """``fn`` of sign-flipped instances (a set bit keeps the sign); :class:`FlipData`."""

    def _one(self, bits, data):
        d = data.d  # (H, m, ...) with instances on axis 1
        s = jnp.where(bits, 1.0, -1.0).astype(d.dtype)
        s = s.reshape(s.shape + (1,) * (d.ndim - 2))
        return jax.vmap(lambda dh: jax.vmap(self.fn)(dh[None] * s))(d)


@dataclasses.dataclass(frozen=True)
class SplitEval(GenericEval):
    """``fn(x, y)`` of splits: the ``n1`` items a draw selects, in order, and the rest;
    :class:`SplitItems`."""

    n1: int

    def _one(self, bits, data):
        order = jnp.argsort(~bits, axis=-1, stable=True)  # members first, in order
        zp = jnp.take(data.z, order, axis=1)  # (H, R, n)
        n1 = self.n1
        return jax.vmap(jax.vmap(lambda q: self.fn(q[:n1], q[n1:])))(zp)


@dataclasses.dataclass(frozen=True)
class SwappedEval(GenericEval):
    """``fn(y, a) - fn(y, b)`` with the two models' outputs of the first ``m`` instances
    swapped where a bit is set; :class:`SwapData`."""

    def _one(self, bits, data):
        y, a, b = data.y, data.pred_a, data.pred_b
        bits = jnp.pad(bits, ((0, 0), (0, y.shape[0] - self.m)))
        pa = jnp.where(bits, b[None, :], a[None, :])
        pb = jnp.where(bits, a[None, :], b[None, :])
        out = jax.vmap(lambda u, t: self.fn(y, u) - self.fn(y, t))(pa, pb)
        return out[None, :]


@dataclasses.dataclass(frozen=True)
class WithinBlockEval(Evaluator):
    """Labels permuted independently within each block (fold) of ``x : (n_blocks, k, ...)``
    (:class:`BlockData`)."""

    materialised: ClassVar[bool] = True

    fn: Callable
    n_blocks: int
    k: int
    draws: int

    def __call__(self, key, block_ids, data):
        x = data.x
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
