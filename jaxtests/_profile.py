"""The backend profile: how the engine schedules a call's work on the devices it will use.

Two evaluator families compute the same draws and the same counts
(:mod:`jaxtests.kernels.evaluators`): ``"words"`` loops over the live 32-bit
words of a draw with float32 sums and byte tables, shaped for XLA:CPU, where
it is several times faster than a dense kernel; ``"dense"`` generates a whole
block's words at once and sums ``where(bit, d, 0)`` in one fused float64
reduction, with no loop whose trip count grows with the data, shaped for GPUs
(a long sequence of small kernels there is what made the word loop slow).
Both are banded against the same ordered float64 sum, so a given key gives
bit-identical counts and p-values with either, on any device.

The family is chosen once per call from the platform of the devices
:func:`jaxtests._engine.drive` uses: "words" on the CPU, "dense" elsewhere.
``JAXTESTS_EVALUATORS=dense`` or ``=words`` overrides it (so both run, and are
tested, on any backend).
"""

import dataclasses
import os

import jax

from jaxtests._buckets import bucket, capacity_words
from jaxtests.kernels import evaluators as kevaluators

__all__ = ["FAMILIES", "Profile", "current"]

FAMILIES = ("words", "dense")
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
class Profile:
    """A backend's schedule of the Monte Carlo engine: evaluator family, padding, block sizes."""

    family: str
    platform: str

    @property
    def schedule(self):
        """The evaluators' ``schedule`` field."""
        return self.family

    def pad_words(self, n, n_h=1):
        """Words (of 32 instances) the data of ``n`` instances and ``n_h`` hypotheses is padded to.

        "words": a capacity (:func:`jaxtests._buckets.capacity_words`), since its
        loops stop at the live words and one program serves every size below it.
        "dense": a dense block's work grows with the padding, so the ladder
        bucket of the words (at most 1.5x; a new bucket compiles a new program).
        """
        if self.family == "words":
            return capacity_words(n, n_h)
        return bucket(-(-int(n) // 32))

    def fused_draws(self, n, n_h, n_total, sequential):
        """Draws per block of the fused sign-flip, two-sample and swap sums over ``n`` instances."""
        if self.family == "words":
            return kevaluators.block_draws_fused(-(-n // 32), n_h, n_total, sequential)
        one, several, lanes = _DENSE_BUDGET.get(self.platform, _DENSE_BUDGET_ACCELERATOR)
        budget = one if n_h == 1 else several
        return kevaluators.block_draws_dense(
            self.pad_words(n), n_h, n_total, sequential, budget=budget, lanes=lanes
        )

    def generic_draws(self, n_elements):
        """Draws per block of a statistic materialised per draw (callables, Hotelling, ANOVA).

        A GPU runs a block of a user's statistic (a sort, say) as a few kernels whatever its
        size, so larger blocks there (H200, 2026-11-26: a callable median at m = 10^4, 10^6
        draws, 3.26 s in 64-draw blocks, 1.80 s in 1024-draw ones); the CPU sizes are unchanged.
        """
        budget, lanes = _GENERIC_BUDGET.get(self.platform, _GENERIC_BUDGET_ACCELERATOR)
        return kevaluators.block_draws_generic(n_elements, budget, lanes)

    def correction_chunk(self, draws):
        """Lanes of a two-sample correction tier run in lockstep.

        On a CPU chunks of 4,096 keep the bucket bits in cache; an accelerator
        runs every lane of a block's tier at once (each trial is a kernel there,
        so fewer, wider steps).
        """
        return 4096 if self.family == "words" else max(4096, draws)

    @property
    def mitm_group(self):
        """Upper half sums matched per step of the exact meet-in-the-middle count.

        One (4,096 queries) keeps a CPU's binary searches in cache; an accelerator
        takes 64 at once (64 steps instead of 4,096 at m = 48).
        """
        return 1 if self.family == "words" else 64


def current():
    """The profile of a call starting now (``JAXTESTS_EVALUATORS`` read at each call)."""
    platform = jax.devices()[0].platform
    family = os.environ.get(ENV, "").strip().lower()
    if not family:
        family = "words" if platform == "cpu" else "dense"
    elif family not in FAMILIES:
        raise ValueError(
            f"the environment variable {ENV} must be 'dense', 'words' or unset, "
            f"got {os.environ[ENV]!r}."
        )
    return Profile(family, platform)
