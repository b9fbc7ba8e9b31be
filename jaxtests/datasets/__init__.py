"""Small real datasets shipped with jaxtests, a CSV loader for your own data, and a
generator of clustered benchmark results (:func:`make_benchmark`).

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
from jaxtests.datasets._synthetic import Benchmark as Benchmark
from jaxtests.datasets._synthetic import make_benchmark as make_benchmark

__all__ = [
    "Benchmark",
    "list_datasets",
    "load_breast_cancer",
    "load_csv",
    "load_diabetes",
    "load_pima",
    "load_wine",
    "make_benchmark",
]
