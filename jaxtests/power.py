"""Planning a comparison: how many items a paired comparison needs, and what difference
a benchmark of a given size can detect.

``ttest_paired_power``: the paired t test on per-item differences, also on clustered
items (design effect, cluster-level degrees of freedom). ``mcnemar_power``: McNemar's
test on paired 0/1 correctness (exact power by enumeration, or Connor's formula).
``simulated_power``: the sign-flip and bootstrap tests, by simulation on the engine.
Each solves for whichever of the number of items, the effect and the power is None.
"""

from jaxtests._power import McNemarPowerResult as McNemarPowerResult
from jaxtests._power import TtestPowerResult as TtestPowerResult
from jaxtests._power import mcnemar_power as mcnemar_power
from jaxtests._power import ttest_paired_power as ttest_paired_power
from jaxtests._power_simulated import SimulatedPowerResult as SimulatedPowerResult
from jaxtests._power_simulated import simulated_power as simulated_power

__all__ = [
    "McNemarPowerResult",
    "SimulatedPowerResult",
    "TtestPowerResult",
    "mcnemar_power",
    "simulated_power",
    "ttest_paired_power",
]
