"""Model specifications for the built-in JAX learners.

A model is a small frozen spec (learner name, task, hyper-parameters); the
fitting code is in ``jaxtests.kernels.learners``. ``cross_validate`` and
``permutation_test_score`` fit all folds (and all permuted label vectors) of a
spec with one ``vmap``. Any scikit-learn estimator can be used in their place.
"""

from jaxtests._models import Model as Model
from jaxtests._models import knn as knn
from jaxtests._models import lda as lda
from jaxtests._models import logistic as logistic
from jaxtests._models import nearest_centroid as nearest_centroid
from jaxtests._models import qda as qda
from jaxtests._models import ridge as ridge
from jaxtests._models import ridge_classifier as ridge_classifier
from jaxtests._models import svc as svc
from jaxtests._models import svr as svr

__all__ = [
    "Model",
    "knn",
    "lda",
    "logistic",
    "nearest_centroid",
    "qda",
    "ridge",
    "ridge_classifier",
    "svc",
    "svr",
]
