"""Which way is better for a loss or measure: the one table every ordering reads.

Losses and error rates are lower-is-better; accuracies, rates of correct decisions,
areas under curves and r² are higher-is-better (scikit-learn's ``greater_is_better`` of
the same scorers). Orderings, post hoc text, plots, rank tests and the command line take
their direction from here unless told otherwise (issue 28.2).
"""

from jaxtests.kernels import measures as kmeasures

__all__ = ["HIGHER_IS_BETTER", "LOWER_IS_BETTER", "direction_words", "higher_is_better"]

# the measure table's rows and aliases (jaxtests.kernels.measures.MEASURES), and other
# spellings of measures that score files use
_TABLE = {n: m.higher_is_better for m in kmeasures.MEASURES.values() for n in (m.name, *m.aliases)}
HIGHER_IS_BETTER = frozenset({n for n, h in _TABLE.items() if h} | {"acc", "f1_score", "r2"})
# ... and the losses (jaxtests.losses) with other spellings of error rates and losses
LOWER_IS_BETTER = frozenset(
    {n for n, h in _TABLE.items() if not h}
    | {"absolute", "epsilon_insensitive", "hinge", "power", "square", "zero_one"}
    | {"err", "error_rate", "fnr", "log_loss", "loss", "mae", "mse"}
)


def higher_is_better(measure, default=None):
    """True or False for a loss or measure name the table knows (case-insensitive), else
    ``default``; a callable is a loss (False)."""
    if callable(measure):
        return False
    if not isinstance(measure, str):
        return default
    name = measure.strip().lower()
    if name in HIGHER_IS_BETTER:
        return True
    if name in LOWER_IS_BETTER:
        return False
    return default


def direction_words(higher):
    """``"higher is better"`` or ``"lower is better"``."""
    return "higher is better" if higher else "lower is better"
