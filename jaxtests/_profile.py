"""The backend profile: how the engine schedules a call's work on the devices it will use.

Three evaluator families compute the same draws and the same counts
(:mod:`jaxtests.kernels.evaluators`): ``"words"`` loops over the live 32-bit
words of a draw with float32 sums and byte tables, shaped for XLA:CPU, where
it is several times faster than a dense kernel; ``"dense"`` generates a whole
block's words at once and sums ``where(bit, d, 0)`` in one fused float64
reduction, with no loop whose trip count grows with the data, shaped for GPUs
(a long sequence of small kernels there is what made the word loop slow);
``"dense32"`` is the dense shape reading float32 byte tables of the data (one
lookup per 8 instances, the entries added in float64). All are banded against
the same ordered float64 sum, so a given key gives bit-identical counts and
p-values with any of them, on any device.

The family is chosen once per call from the platform of the devices
:func:`jaxtests._engine.drive` uses (the registry of
:mod:`jaxtests.kernels.families`: "words" on the CPU, "dense" elsewhere;
"dense32" no platform's until a GPU measures its byte tables faster than "dense"),
and travels down as an object, a static argument of the programs.
``JAXTESTS_EVALUATORS=dense``, ``=dense32`` or ``=words`` overrides it (so every
family runs, and is tested, on any backend). A family's host-side choices are its entry in
:data:`SCHEDULES`; its traced sums are in :mod:`jaxtests.kernels.families`;
:mod:`jaxtests._planner` reads both.
"""

import dataclasses
import os

import jax

from jaxtests._buckets import bucket, capacity_words
from jaxtests.kernels import evaluators as kevaluators
from jaxtests.kernels import families as kfamilies

__all__ = ["FAMILIES", "SCHEDULES", "Profile", "Schedule", "current"]

ENV = "JAXTESTS_EVALUATORS"

# Lanes x padded words x hypotheses of one dense block (its words take 4 bytes each) and its
# most lanes. Measured on an H200 (2026-11-26, bench/RESULTS.md): with 2^27 instead of 2^25
# (4x the lanes), the two-sample corrections' trial loops, whose steps cost about the same for
# any number of lanes there, ran 2.4x faster (10^6 draws of 5,000 + 5,000: 0.33 -> 0.14 s), a
# swap AUC 1.4x; sign-flip sums did not change; with 1000 hypotheses the first call compiled
# in 30 s instead of 10 s, so several hypotheses keep 2^25. On a CPU, where the dense family
# runs only when asked for (tests), small blocks keep memory low.
_DENSE_BUDGET = {"cpu": (2**22, 2**22, 2**17)}
_DENSE_BUDGET_ACCELERATOR = (2**27, 2**25, 2**19)  # one hypothesis, several, most lanes
# Elements (draws x the statistic's input) and most draws of a materialised block.
_GENERIC_BUDGET = {"cpu": (2**20, 1024)}
_GENERIC_BUDGET_ACCELERATOR = (2**24, 8192)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A family's host-side choices: what the planner needs beside its traced sums.

    ``pad_words(n, n_h)``: words (of 32 instances) the data of ``n`` instances
    and ``n_h`` hypotheses is padded to; ``fused_draws(n, n_h, n_total,
    sequential, platform)``: draws per block of the fused sums; ``chunk``: lanes
    of a two-sample correction tier run in lockstep, given the block's draws;
    ``mitm_group``: upper half sums matched per step of the exact count.
    """

    pad_words: object
    fused_draws: object
    chunk: object
    mitm_group: int


def _dense_words(n, n_h=1):
    return bucket(-(-int(n) // 32))


def _dense_draws(n, n_h, n_total, sequential, platform, chunks=1):
    one, several, lanes = _DENSE_BUDGET.get(platform, _DENSE_BUDGET_ACCELERATOR)
    budget = one if n_h == 1 else several
    w = _dense_words(n)
    return kevaluators.block_draws_dense(
        w, n_h, n_total, sequential, chunks * budget, chunks * lanes
    )


def _dense32_draws(n, n_h, n_total, sequential, platform):
    # A block of ``chunks`` dense blocks (summed one chunk at a time, so memory is a dense
    # block's): one recheck pass serves them all.
    chunks = kfamilies.DENSE32.chunks
    return _dense_draws(n, n_h, n_total, sequential, platform, chunks)


# One entry per evaluator family of :data:`jaxtests.kernels.families.FAMILIES`.
SCHEDULES = {
    # A capacity: the word loops stop at the live words, so one program serves every size
    # below it; blocks of about 2^17 lanes amortise the loop; chunks of 4,096 lanes keep the
    # correction's bucket bits in a CPU's cache, one query per exact step its binary searches.
    "words": Schedule(
        pad_words=capacity_words,
        fused_draws=lambda n, n_h, n_total, seq, platform: kevaluators.block_draws_fused(
            -(-n // 32), n_h, n_total, seq
        ),
        chunk=lambda draws: 4096,
        mitm_group=1,
    ),
    # A dense block's work grows with the padding: the ladder bucket of the words (at most
    # 1.5x; a new bucket compiles a new program). An accelerator runs every lane of a block's
    # correction tier at once (each trial is a kernel there: fewer, wider steps) and matches
    # 64 half sums per exact step (64 steps instead of 4,096 at m = 48).
    "dense": Schedule(
        pad_words=_dense_words,
        fused_draws=_dense_draws,
        chunk=lambda draws: max(4096, draws),
        mitm_group=64,
    ),
}
# The float32 dense sums read the same words; a block is several dense blocks (its chunks),
# whose two-sample corrections run a dense block's lanes at a time.
SCHEDULES["dense32"] = dataclasses.replace(
    SCHEDULES["dense"],
    fused_draws=_dense32_draws,
    chunk=lambda draws: max(4096, draws // kfamilies.DENSE32.chunks),
)
FAMILIES = tuple(sorted(SCHEDULES))


@dataclasses.dataclass(frozen=True)
class Profile:
    """A call's backend: its evaluator family (a :class:`jaxtests.kernels.families.Family`,
    whose :attr:`schedule` sizes the fused sums) and the platform of its devices."""

    family: kfamilies.Family
    platform: str

    @property
    def schedule(self):
        """The family's host-side choices (:class:`Schedule`), which the planner reads."""
        return SCHEDULES[self.family.name]

    def generic_draws(self, n_elements):
        """Draws per block of a statistic materialised per draw (callables, Hotelling, ANOVA).

        A GPU runs a block of a user's statistic (a sort, say) as a few kernels whatever its
        size, so larger blocks there (H200, 2026-11-26: a callable median at m = 10^4, 10^6
        draws, 3.26 s in 64-draw blocks, 1.80 s in 1024-draw ones); the CPU sizes are unchanged.
        """
        budget, lanes = _GENERIC_BUDGET.get(self.platform, _GENERIC_BUDGET_ACCELERATOR)
        return kevaluators.block_draws_generic(n_elements, budget, lanes)


def current():
    """The profile of a call starting now (``JAXTESTS_EVALUATORS`` read at each call)."""
    platform = jax.devices()[0].platform
    name = os.environ.get(ENV, "").strip().lower()
    if not name:
        return Profile(kfamilies.for_platform(platform), platform)
    if name not in kfamilies.FAMILIES:
        names = ", ".join(repr(f) for f in sorted(kfamilies.FAMILIES))
        raise ValueError(
            f"the environment variable {ENV} must be {names} or unset, got {os.environ[ENV]!r}."
        )
    return Profile(kfamilies.FAMILIES[name], platform)
