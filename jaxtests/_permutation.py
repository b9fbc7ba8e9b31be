"""Permutation tests: sign flips, two-sample label permutations, swap tests.

One engine (:mod:`jaxtests._engine`) serves every test: a statistic kernel
gives the observed value, and the same kernel (or an exactly equivalent linear
form) is evaluated over blocks of rearrangements that are enumerated
(``method="exact"``), drawn at random (``"monte-carlo"``) or summed in closed
form (``"binomial"``). Each test lives in its own module (:mod:`._signflip`,
:mod:`._twosample`, :mod:`._swap`, :mod:`._within_block`); what they share is
in :mod:`._resampling` (result, options, wrapping) and :mod:`._pvalues`
(ties, tails, Monte Carlo p-values and their intervals).
"""

from jaxtests._resampling import PermutationTestResult as PermutationTestResult
from jaxtests._signflip import signflip_test as signflip_test
from jaxtests._swap import swap_test as swap_test
from jaxtests._twosample import permutation_test as permutation_test

__all__ = [
    "PermutationTestResult",
    "permutation_test",
    "signflip_test",
    "swap_test",
]
