"""Performance measures from confusion counts, scores and regression outputs.

Binary labels are {-1, +1} or {0, 1}; the positive class is +1 (or 1).
Predictions from decision values ``f`` are +1 iff ``f > 0``: ``f = 0``
predicts -1, as scikit-learn's ``decision_function``-based ``predict``; the
0/1 loss (:func:`jaxtests.losses.zero_one`) and ``CVResult``'s confusion
counts follow the same rule, so the mean 0/1 loss equals :func:`error`. All
functions keep leading batch dimensions, so per-fold or per-algorithm
measures come out of one call: ``confusion_counts(y, pred)`` with arrays of
shape ``(folds, algorithms, n)`` gives counts of shape ``(folds, algorithms)``.

Undefined ratios
----------------
A ratio whose denominator is zero (precision with no positive prediction,
recall with no positive instance, ...) is ``zero_division``, NaN by default.
NaN is never silently turned into a number: pass ``zero_division=0.0`` to
get scikit-learn's default value. Macro and weighted averages skip NaN
classes, as scikit-learn does with ``zero_division=np.nan``. The Matthews
correlation (:func:`mcc`) is 0 where the true or predicted labels are all one
class, as scikit-learn's ``matthews_corrcoef`` (no correlation, not an
undefined ratio); ``zero_division=np.nan`` marks those instead.

References
----------
Lecture notes, "Evaluation": confusion matrix, accuracy, precision, recall, F-beta,
PR curve and its area, multiclass measures, RMSE, Pearson.
Matthews, B. W. (1975), and Gorodkin, J. (2004): the (multiclass) correlation coefficient.
"""

from jaxtests._measures import ConfusionCounts as ConfusionCounts
from jaxtests._measures import accuracy as accuracy
from jaxtests._measures import class_counts as class_counts
from jaxtests._measures import confusion_counts as confusion_counts
from jaxtests._measures import confusion_matrix as confusion_matrix
from jaxtests._measures import error as error
from jaxtests._measures import f1 as f1
from jaxtests._measures import f_beta as f_beta
from jaxtests._measures import fpr as fpr
from jaxtests._measures import mcc as mcc
from jaxtests._measures import pearson as pearson
from jaxtests._measures import pr_auc as pr_auc
from jaxtests._measures import pr_curve as pr_curve
from jaxtests._measures import precision as precision
from jaxtests._measures import recall as recall
from jaxtests._measures import rmse as rmse
from jaxtests._measures import roc_auc as roc_auc
from jaxtests._measures import roc_curve as roc_curve
from jaxtests._measures import specificity as specificity
from jaxtests._measures import tpr as tpr

__all__ = [
    "ConfusionCounts",
    "accuracy",
    "class_counts",
    "confusion_counts",
    "confusion_matrix",
    "error",
    "f1",
    "f_beta",
    "fpr",
    "mcc",
    "pearson",
    "pr_auc",
    "pr_curve",
    "precision",
    "recall",
    "rmse",
    "roc_auc",
    "roc_curve",
    "specificity",
    "tpr",
]
