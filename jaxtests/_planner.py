"""One planner: a test's statistic, described by type, becomes the engine's :class:`Plan`.

A test module says *what* is resampled, with one of the descriptions below,
and the planner chooses *how* for the backend profile of the call
(:mod:`jaxtests._profile`, read once per call): the evaluator and its family,
padding, block sizes and the random words' layout. Planned statistics:

- :class:`SignSums`, :class:`SplitSums`, :class:`CountChanges`: statistics
  linear in the draw's bits (sign-flip mean and t, two-sample mean
  difference and t, swap-test confusion counts), summed by an evaluator
  family (:mod:`jaxtests.kernels.families`) or enumerated exactly;
- :class:`SignFlipped`, :class:`Split`, :class:`Swapped`, :class:`WithinBlock`:
  any statistic, evaluated on rearrangements materialised per block.

The random words of a draw depend on its index and on the data's size only
(:func:`jaxtests.kernels.random.stride_words`), never on the family, the
padding or the block size, so every plan of a statistic gives the same counts
for a given key.
"""

import dataclasses
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from jaxtests import _profile, _pvalues
from jaxtests._buckets import bucket, pad_axis
from jaxtests._engine import (
    MAX_MITM,
    Plan,
    blocks_for,
    check_enumerable,
    choose_method,
    drive,
    mitm_counts,
)
from jaxtests.kernels import evaluators as kevaluators
from jaxtests.kernels import families as kfamilies
from jaxtests.kernels import random as krandom

__all__ = [
    "CountChanges",
    "Planner",
    "SignFlipped",
    "SignSums",
    "Split",
    "SplitSums",
    "Swapped",
    "WithinBlock",
    "draws",
]


@dataclasses.dataclass(frozen=True, eq=False)
class SignSums:
    """Sign flips of ``T = slope P + offset``, ``P`` the sum of the kept-sign ``d_i``.

    Monte Carlo: ``sums`` from :func:`jaxtests.kernels.families.layout` over
    ``m`` instances (padded as :meth:`Planner.pad` pads). Exact (every sign
    pattern): ``d : (H, m)`` and ``sums.slope``, ``sums.offset``.
    """

    sums: kfamilies.Sums
    m: int
    d: object = None

    def elements(self):
        """Instances times hypotheses: what a draw sums (whatever the padding)."""
        return self.m * self.sums.slope.shape[0]


@dataclasses.dataclass(frozen=True, eq=False)
class SplitSums:
    """Splits of ``n`` items into ``n1`` and ``n - n1``: ``T = slope S1 + offset``, ``S1`` the
    group-1 sum.

    ``z : (H, >= n)`` the items, zero-padded as :meth:`Planner.pad` pads;
    ``sums`` their layout (:func:`jaxtests.kernels.families.layout`).
    """

    sums: kfamilies.Sums
    z: object
    n: int
    n1: int

    def elements(self):
        return self.n * self.sums.slope.shape[0]


@dataclasses.dataclass(frozen=True, eq=False)
class CountChanges:
    """Swaps of two models' outputs: confusion counts ``counts_a + P`` against ``counts_b - P``.

    ``delta : (3 C, m)`` the count changes (tp, fp, fn rows per class) of the
    ``m`` swappable instances (integers); ``measure`` a row of
    :data:`jaxtests.kernels.measures.MEASURES` or ``"f_beta"``.
    """

    delta: np.ndarray
    counts_a: np.ndarray
    counts_b: np.ndarray
    n: float
    measure: str
    n_classes: int
    beta: float

    def elements(self):
        return int(np.size(self.delta))


@dataclasses.dataclass(frozen=True, eq=False)
class SignFlipped:
    """Any statistic ``fn`` of sign-flipped instances ``d : (H, m, ...)`` (instances on axis 1)."""

    fn: Callable
    d: object

    def elements(self):
        return int(np.size(self.d))


@dataclasses.dataclass(frozen=True, eq=False)
class Split:
    """Any statistic ``fn(x, y)`` of splits of ``z : (H, n, ...)`` into ``n1`` and the rest."""

    fn: Callable
    z: object
    n1: int

    def elements(self):
        return int(np.size(self.z))


@dataclasses.dataclass(frozen=True, eq=False)
class Swapped:
    """Any ``fn(y, pred_a) - fn(y, pred_b)``, the outputs of the first ``m`` instances swapped."""

    fn: Callable
    y: object
    pred_a: object
    pred_b: object
    m: int

    def elements(self):
        return int(np.size(self.y))


@dataclasses.dataclass(frozen=True, eq=False)
class WithinBlock:
    """Any statistic ``fn(x)`` of ``x : (n_blocks, k, ...)`` permuted within each block."""

    fn: Callable
    x: object

    def elements(self):
        return int(np.size(self.x))


def draws(opts, n_patterns, what):
    """``(exact, n_total)`` of a call: every rearrangement or ``opts.n_resamples`` draws.

    ``method="auto"`` enumerates when the ``n_patterns`` rearrangements (None:
    too many to count) fit in ``n_resamples``; an exact run beyond
    :data:`~jaxtests._engine.MAX_ENUMERATION` is refused, naming ``what()`` (a
    callable, so that the message is only built when needed).
    """
    exact = choose_method(opts.method, n_patterns, opts.n_resamples) == "exact"
    if exact:
        check_enumerable(n_patterns, what())
    return exact, n_patterns if exact else opts.n_resamples


class Planner:
    """Plans of one call, for the backend profile read when the call starts."""

    def __init__(self, profile=None):
        self.profile = _profile.current() if profile is None else profile
        self.schedule = self.profile.schedule

    @property
    def family(self):
        """The call's :class:`jaxtests.kernels.families.Family`: the fused sums' (a static
        argument of their layout and of the evaluators that read it)."""
        return self.profile.family

    @property
    def mitm_group(self):
        """Upper half sums matched per step of the exact meet-in-the-middle count."""
        return self.schedule.mitm_group

    def pad(self, d2):
        """``d2 : (H, n)`` zero-padded to the words of the family's program for ``n``."""
        n_h, n = d2.shape
        return pad_axis(d2, 32 * self.schedule.pad_words(n, n_h))

    def count_signs(self, d, le_at, ge_at, what):
        """Exact counts of the ``2^m`` sign patterns of ``d : (H, m)`` without drawing them.

        ``(ge, le)``: the patterns whose sum ``P`` of the kept-sign ``d`` is at
        least ``ge_at`` and at most ``le_at``. Differences on the half-integer
        lattice (signed ranks, integer counts) are counted by subset sums on the
        host, exact far beyond meeting in the middle and with nothing to compile;
        any others up to :data:`~jaxtests._engine.MAX_MITM` by meeting in the middle.
        Beyond both, refused naming ``what`` (the statistic).
        """
        if _pvalues.lattice_feasible(d):
            return _pvalues.lattice_counts(d, le_at, ge_at)
        if d.shape[1] > MAX_MITM:
            raise ValueError(
                f"`method`='exact' supports at most {MAX_MITM} nonzero instances "
                f"for statistic {what!r}; got {d.shape[1]}. Use 'monte-carlo'."
            )
        return mitm_counts(d, le_at, ge_at, group=self.mitm_group)

    def run(self, stat, observed, tol, opts, *, exact=False, n_total=None, scale=None, tail=None):
        """:func:`jaxtests._engine.drive` of the plan of ``stat`` (:meth:`plan`)."""
        n_total = opts.n_resamples if n_total is None else n_total
        sequential = opts.sequential is not None
        plan = self.plan(stat, observed, tol, n_total, exact, sequential, scale, tail)
        return drive(plan, opts)

    def plan(self, stat, observed, tol, n_total, exact, sequential=False, scale=None, tail=None):
        """The :class:`jaxtests._engine.Plan` of ``n_total`` draws of ``stat``.

        ``observed, tol : (H,)`` on the evaluator's scale; ``scale`` the null
        standard deviations max-T uses (ones by default); ``exact``: every
        rearrangement, enumerated; ``sequential``: blocks small enough to stop
        between; ``tail`` overrides the counted tail.
        """
        evaluator, data, draws = _PLANS[type(stat)](self, stat, n_total, exact, sequential)
        observed = np.asarray(observed)  # numpy: an eager jnp operation compiles per shape
        scale = np.ones_like(observed) if scale is None else scale
        work = n_total * stat.elements()
        return Plan(evaluator, data, observed, tol, scale, n_total, draws, exact, tail, work)

    # -- linear statistics

    def _fused_draws(self, n, n_h, n_total, sequential):
        # Block size from the live words (a block's time is bounded; the size takes a few
        # values, so a program per size class at most).
        platform = self.profile.platform
        return self.schedule.fused_draws(n, n_h, blocks_for(n_total), sequential, platform)

    def _sign_sums(self, stat, n_total, exact, sequential):
        if exact:
            return _enumerated(stat.d, stat.sums.slope, stat.sums.offset, n_total)
        n_h = stat.sums.slope.shape[0]
        draws = self._fused_draws(stat.m, n_h, n_total, sequential)
        # Counter stride frozen per m: a batch of hypotheses (however padded) sees the sign
        # patterns each of them would see alone, on every backend.
        evaluator = kevaluators.FusedEval(
            draws, stride=krandom.stride_words(stat.m), family=self.family
        )
        return evaluator, stat.sums, draws

    def _split_sums(self, stat, n_total, exact, sequential):
        s, n, n1 = stat.sums, stat.n, stat.n1
        if exact:
            return _enumerated(np.asarray(stat.z)[:, :n], s.slope, s.offset, n_total, n1)
        n_words = krandom.stride_words(n)  # the draws' layout, however far z is padded
        draws = self._fused_draws(n, s.slope.shape[0], n_total, sequential)
        chunk = self.schedule.chunk(draws)
        evaluator, sizes = kevaluators.subset_evaluator(n, n1, n_words, draws, self.family, chunk)
        data = kevaluators.SplitData(stat.z, s.slope, s.offset, sizes)
        if evaluator.banded:  # only fair-bit starts use the family's sums
            data = data._replace(terms=s.terms, err_bound=s.err_bound)
        return evaluator, data, draws

    def _count_changes(self, stat, n_total, exact, sequential):
        dk = stat.delta
        n_words = -(-dk.shape[1] // 32)
        counts = kevaluators.Counts(stat.counts_a, stat.counts_b, stat.n)
        if exact:
            draws = min(kevaluators.block_draws_linear(n_words), n_total)
            tables, selected = kevaluators.exact_terms(dk, n_words)
            words = kevaluators.EnumeratedWords(n_words, draws)
            evaluator = kevaluators.CountsEval(
                words, tables, stat.measure, stat.n_classes, stat.beta
            )
            return evaluator, kevaluators.CountsData(selected, counts), draws
        # A shape bucket of words (the number of swappable instances is data-dependent; zero
        # count changes add nothing), also the draws' counter stride for every family.
        n_words = bucket(n_words)
        draws = self._fused_draws(32 * n_words, dk.shape[0], n_total, sequential)
        # Count changes are integers: their float32 sums are exact (|sum| <= m < 2^24) in any
        # order, so every family's sums are the counts themselves (no band, no recheck).
        padded = pad_axis(dk, 32 * n_words).reshape(-1, n_words, 32)
        changes = jnp.asarray(padded.astype(np.float32), dtype=jnp.float32)
        terms = kfamilies.Terms(exact=changes, f32=changes)
        evaluator = kevaluators.FusedCountsEval(
            draws, stat.measure, stat.n_classes, stat.beta, n_words, self.family
        )
        return evaluator, kevaluators.FusedCountsData(terms, counts), draws

    # -- materialised statistics

    def _words(self, m, n_elements, n_total, exact, n1=0, stride=0):
        """Words of ``m`` instances (``n1``: subsets of that size), and draws per block."""
        n_words = -(-m // 32)
        draws = self.profile.generic_draws(n_elements)
        if not exact:
            n = m if n1 else 0
            return kevaluators.RandomWords(n_words, draws, n, n1, stride), draws
        draws = min(draws, n_total)
        if n1:
            return kevaluators.CombinationWords(n_words, draws, m, n1), draws
        return kevaluators.EnumeratedWords(n_words, draws), draws

    def _sign_flipped(self, stat, n_total, exact, sequential):
        d = stat.d
        m = d.shape[1]
        # The fused sums' counter stride: a user's mean sees the sign patterns of the
        # built-in one (instances with several entries keep the plain layout).
        stride = krandom.stride_words(m) if d.ndim == 2 else 0
        words, draws = self._words(m, int(np.prod(d.shape[1:])), n_total, exact, stride=stride)
        evaluator = kevaluators.SignFlippedEval(words, stat.fn, m)
        return evaluator, kevaluators.FlipData(d), draws

    def _split(self, stat, n_total, exact, sequential):
        n = stat.z.shape[1]
        words, draws = self._words(n, n, n_total, exact, n1=stat.n1)
        # ``fn`` is a static argument of the compiled engine (hashed by identity): a
        # function made anew per call, such as a closure over the data, compiles anew.
        evaluator = kevaluators.SplitEval(words, stat.fn, n, stat.n1)
        return evaluator, kevaluators.SplitItems(stat.z), draws

    def _swapped(self, stat, n_total, exact, sequential):
        words, draws = self._words(stat.m, stat.y.shape[0], n_total, exact)
        evaluator = kevaluators.SwappedEval(words, stat.fn, stat.m)
        return evaluator, kevaluators.SwapData(stat.y, stat.pred_a, stat.pred_b), draws

    def _within_block(self, stat, n_total, exact, sequential):
        x = stat.x
        draws = self.profile.generic_draws(int(np.prod(x.shape)))
        evaluator = kevaluators.WithinBlockEval(stat.fn, x.shape[0], x.shape[1], draws)
        return evaluator, kevaluators.BlockData(x), draws


def _enumerated(d, slope, offset, n_total, n1=None):
    """Every sign pattern (``n1`` None) or ``n1``-subset of ``d``'s columns, from byte tables."""
    n = d.shape[1]
    n_words = -(-n // 32)
    draws = min(kevaluators.block_draws_linear(n_words), n_total)
    if n1 is None:
        words = kevaluators.EnumeratedWords(n_words, draws)
    else:
        words = kevaluators.CombinationWords(n_words, draws, n, n1)
    tables, selected = kevaluators.exact_terms(d, n_words)
    data = kevaluators.LinearData(selected, slope, offset)
    return kevaluators.LinearEval(words, tables), data, draws


_PLANS = {
    SignSums: Planner._sign_sums,
    SplitSums: Planner._split_sums,
    CountChanges: Planner._count_changes,
    SignFlipped: Planner._sign_flipped,
    Split: Planner._split,
    Swapped: Planner._swapped,
    WithinBlock: Planner._within_block,
}
