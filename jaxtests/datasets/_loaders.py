"""Bundled datasets and the CSV loader: the implementation behind :mod:`jaxtests.datasets`."""

import os
from importlib import resources

import numpy as np

from jaxtests.datasets._text import _MISSING, _NONFINITE, _NUMBER, parse_number, read_csv_rows

__all__ = [
    "list_datasets",
    "load_breast_cancer",
    "load_csv",
    "load_diabetes",
    "load_pima",
    "load_wine",
]

_DATASETS = {
    "breast_cancer": ("breast_cancer.csv", "malignant", "classification", (569, 30)),
    "pima": ("pima.csv", "diabetes", "classification", (768, 8)),
    "diabetes": ("diabetes.csv", "progression", "regression", (442, 10)),
    "wine": ("wine.csv", "cultivar", "multiclass", (178, 13)),
}


def list_datasets():
    """Names of the bundled datasets with their task and ``X`` shape.

    Returns
    -------
    dict
        ``name -> {"task": ..., "shape": (n, d), "loader": "load_<name>"}``.

    Examples
    --------
    >>> from jaxtests import datasets
    >>> sorted(datasets.list_datasets())
    ['breast_cancer', 'diabetes', 'pima', 'wine']
    """
    return {
        name: {"task": task, "shape": shape, "loader": f"load_{name}"}
        for name, (_, _, task, shape) in _DATASETS.items()
    }


def _bundled(name):
    fname, label, task, _ = _DATASETS[name]
    path = resources.files("jaxtests.datasets").joinpath("data", fname)
    with resources.as_file(path) as p:
        X, y = load_csv(p, label=label)
    if task == "classification":
        y = 2.0 * y - 1.0  # 0/1 in the file -> -1/+1, positive class +1
    return X, y


def load_breast_cancer():
    """Wisconsin diagnostic breast cancer data (UCI; CC BY 4.0).

    Returns
    -------
    X : ndarray, shape (569, 30)
        Cell-nucleus features (mean, standard error and worst of ten measures).
    y : ndarray, shape (569,)
        +1 malignant (212 cases), -1 benign (357).

    Examples
    --------
    >>> from jaxtests import datasets
    >>> X, y = datasets.load_breast_cancer()
    >>> X.shape
    (569, 30)
    """
    return _bundled("breast_cancer")


def load_pima():
    """Pima Indians diabetes data (UCI, via R's mlbench ``PimaIndiansDiabetes``).

    Returns
    -------
    X : ndarray, shape (768, 8)
        pregnant, glucose, pressure, triceps, insulin, mass, pedigree, age. Zeros
        in glucose, pressure, triceps, insulin and mass code missing values in
        the original data and are kept.
    y : ndarray, shape (768,)
        +1 diabetic (268 cases), -1 not diabetic (500).

    Examples
    --------
    >>> from jaxtests import datasets
    >>> X, y = datasets.load_pima()
    >>> X.shape
    (768, 8)
    """
    return _bundled("pima")


def load_diabetes():
    """Diabetes progression regression data (Efron et al. 2004), unscaled.

    Returns
    -------
    X : ndarray, shape (442, 10)
        age, sex (1/2), bmi, bp, s1..s6 (blood serum measurements).
    y : ndarray, shape (442,)
        Quantitative disease progression one year after baseline (25 to 346).

    Examples
    --------
    >>> from jaxtests import datasets
    >>> X, y = datasets.load_diabetes()
    >>> X.shape
    (442, 10)
    """
    return _bundled("diabetes")


def load_wine():
    """Wine recognition data (UCI; CC BY 4.0): three cultivars, a multiclass set.

    Returns
    -------
    X : ndarray, shape (178, 13)
        Chemical analysis: alcohol, malic acid, ash, alcalinity of ash, magnesium,
        total phenols, flavanoids, nonflavanoid phenols, proanthocyanins, colour
        intensity, hue, OD280/OD315 of diluted wines, proline.
    y : ndarray, shape (178,)
        Cultivar 0, 1 or 2 (59, 71 and 48 wines).

    Examples
    --------
    >>> from jaxtests import datasets
    >>> X, y = datasets.load_wine()
    >>> X.shape, sorted(set(y.tolist()))
    ((178, 13), [0.0, 1.0, 2.0])
    """
    return _bundled("wine")


def load_csv(path, *, label, features=None, delimiter=","):
    """Read a numeric feature/label table from a CSV file with a header row.

    Parameters
    ----------
    path : str or path-like
        CSV file in UTF-8, with or without a byte-order mark (``.gz`` files are
        decompressed).
    label : str
        Name of the label (target) column.
    features : sequence of str, optional
        Feature columns in the order wanted; default all columns but ``label``.
    delimiter : str
        Field separator.

    Returns
    -------
    X : ndarray, shape (n_rows, n_features)
    y : ndarray, shape (n_rows,)
        The label column as read (no recoding; ±1 conversion of {0, 1} labels
        happens in the functions that need binary labels): float64 when every cell
        is a number, else the stripped strings (class names).

    Raises
    ------
    ValueError
        Missing or duplicate column, the label among the features, ragged row,
        blank line between rows, a file that is not UTF-8, non-numeric value
        (also "1_000"), or an empty/NaN/inf cell; the message names the file,
        the line number (1-based, header is line 1) and the column.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from jaxtests import datasets
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "data.csv"
    >>> _ = path.write_text("a,b,label\\n1,2,1\\n3,4,-1\\n5,6,1\\n")
    >>> X, y = datasets.load_csv(path, label="label")
    >>> X.shape, y.tolist()
    ((3, 2), [1.0, -1.0, 1.0])
    """
    path = os.fspath(path)
    if not isinstance(label, str):
        raise TypeError(f"`label` must be a column name (str), got {type(label).__name__}.")
    if features is not None:
        if isinstance(features, str):
            raise TypeError("`features` must be a sequence of column names, not a str.")
        features = list(features)
        if label in features:
            raise ValueError(
                f"`features` contains the label column {label!r}; a model would be given the "
                "answer. Leave it out of `features`."
            )
        dup = sorted({f for f in features if features.count(f) > 1})
        if dup:
            raise ValueError(f"`features` names column(s) {dup} more than once.")
    header, raw_rows = read_csv_rows(path, delimiter)
    if features is None:
        features = [h for h in header if h != label]
    wanted = [*features, label]
    missing = [c for c in wanted if c not in header]
    if missing:
        raise ValueError(
            f"{path}: column(s) {missing} not found in the header (line 1); columns are {header}."
        )
    cols = [header.index(c) for c in wanted]
    rows, labels = [], []
    for lineno, row in raw_rows:
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {lineno}: {len(row)} fields, the header has {len(header)}."
            )
        hint = "; remove or impute it first"
        rows.append([parse_number(path, lineno, header[j], row[j], hint=hint) for j in cols[:-1]])
        labels.append((lineno, row[cols[-1]]))
    if not rows:
        raise ValueError(f"{path}: no data rows after the header.")
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), -1), _labels(path, label, labels)


def _labels(path, label, cells):
    """The label column: numbers when every cell is one, else the stripped strings
    (class names such as "benign"/"malignant"); a missing or non-finite cell (empty,
    NA, NaN, inf) is an error either way."""
    for n, c in cells:
        if c.strip().lower() in _MISSING or c.strip().lower() in _NONFINITE:
            parse_number(path, n, label, c, hint="; remove or impute it first")  # raises
    if all(_NUMBER.fullmatch(c.strip()) for _, c in cells):
        return np.asarray([parse_number(path, n, label, c) for n, c in cells], dtype=np.float64)
    return np.asarray([c.strip() for _, c in cells])
