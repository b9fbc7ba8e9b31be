"""Per-instance losses, the first stage of the array pipeline.

Each function returns the loss of every instance (not a mean), keeps any
leading batch shape (e.g. folds x algorithms x instances) and works under
``jit`` and ``vmap``. Classification losses take labels in {-1, +1} or
{0, 1} (0 is read as -1) and real-valued decision values ``f``; the
predicted class is +1 iff ``f > 0``, so ``f = 0`` predicts -1 (scikit-learn's
rule for ``decision_function``, and the rule of every confusion count and
measure in :mod:`jaxtests.measures` and ``CVResult``).

``y`` and ``f`` share the instance axis (the last): ``y`` may lack leading
batch axes (one label vector for several algorithms or folds), but the
instance axes must have equal lengths, never broadcast against each other.

References
----------
Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive Loss":
0/1, hinge, square and epsilon-sensitive losses.
MacKay, D. J. C., "More sensitive tests in DELVE": the ``|error|^p`` loss.
"""

from jaxtests._losses import absolute as absolute
from jaxtests._losses import epsilon_insensitive as epsilon_insensitive
from jaxtests._losses import hinge as hinge
from jaxtests._losses import power as power
from jaxtests._losses import square as square
from jaxtests._losses import zero_one as zero_one

__all__ = [
    "absolute",
    "epsilon_insensitive",
    "hinge",
    "power",
    "square",
    "zero_one",
]
