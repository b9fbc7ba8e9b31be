"""Small real datasets shipped with jaxtests, and a CSV loader for your own data.

Every loader returns ``(X, y)`` as float64 numpy arrays. Binary
classification labels are ±1 with the positive class documented per loader;
multiclass labels (wine) are 0, 1, 2.
Provenance and licences: ``jaxtests/datasets/data/README.md``.
"""

from jaxtests.datasets._loaders import list_datasets as list_datasets
from jaxtests.datasets._loaders import load_breast_cancer as load_breast_cancer
from jaxtests.datasets._loaders import load_csv as load_csv
from jaxtests.datasets._loaders import load_diabetes as load_diabetes
from jaxtests.datasets._loaders import load_pima as load_pima
from jaxtests.datasets._loaders import load_wine as load_wine

__all__ = [
    "list_datasets",
    "load_breast_cancer",
    "load_csv",
    "load_diabetes",
    "load_pima",
    "load_wine",
]
