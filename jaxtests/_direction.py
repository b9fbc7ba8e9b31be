"""Which way is better for a loss or measure: the one table every ordering reads.

Losses and error rates are lower-is-better; accuracies, rates of correct decisions,
areas under curves and r² are higher-is-better (scikit-learn's ``greater_is_better`` of
the same scorers). Orderings, post hoc text, plots, rank tests and the command line take
their direction from here unless told otherwise (issue 28.2).
"""

__all__ = ["HIGHER_IS_BETTER", "LOWER_IS_BETTER", "direction_words", "higher_is_better"]

HIGHER_IS_BETTER = frozenset(
    {
        "accuracy",
        "acc",
        "auc",
        "average_precision",
        "balanced_accuracy",
        "f1",
        "f1_macro",
        "f1_score",
        "pr_auc",
        "precision",
        "precision_macro",
        "r2",
        "recall",
        "recall_macro",
        "roc_auc",
        "sensitivity",
        "specificity",
        "tn",
        "tnr",
        "tp",
        "tpr",
    }
)
LOWER_IS_BETTER = frozenset(
    {
        "absolute",
        "epsilon_insensitive",
        "err",
        "error",
        "error_rate",
        "fn",
        "fnr",
        "fp",
        "fpr",
        "hinge",
        "log_loss",
        "loss",
        "mae",
        "mse",
        "power",
        "rmse",
        "square",
        "zero_one",
    }
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
