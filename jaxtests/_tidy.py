"""Reading the user's own results in tidy form (CSV or JSON) for ``jaxtests compare``.

Two layouts are recognised from the columns:

- per-fold: ``algorithm, fold`` and one numeric column per measure;
- per-instance: ``algorithm, fold, instance, y_true, score``.

Errors name the file, the line (1-based; the CSV header is line 1, a JSON
record's line is its index + 1) and the column, and are ``ValueError``.
"""

import csv
import dataclasses
import json
import math
import os

import numpy as np

__all__ = ["PerFold", "PerInstance", "read_tidy"]

INSTANCE_COLUMNS = ("algorithm", "fold", "instance", "y_true", "score")


@dataclasses.dataclass(frozen=True)
class PerFold:
    """Per-fold results: ``values[i, j, m]`` for algorithm i, fold j, measure m."""

    algorithms: tuple
    folds: tuple
    measures: tuple
    values: np.ndarray

    def measure(self, name):
        """``(n_algorithms, n_folds)`` values of one measure."""
        if name not in self.measures:
            raise ValueError(f"measure {name!r} is not in the file; it has {list(self.measures)}.")
        return self.values[:, :, self.measures.index(name)]


@dataclasses.dataclass(frozen=True)
class PerInstance:
    """Per-instance outputs, aligned over algorithms by (fold, instance).

    ``y_true : (n,)``, ``scores : (n_algorithms, n)``, ``fold_of : (n,)`` fold index.
    """

    algorithms: tuple
    folds: tuple
    y_true: np.ndarray
    scores: np.ndarray
    fold_of: np.ndarray


def _records(path):
    """Yield (line, header, row-dict of raw strings/values)."""
    path = os.fspath(path)
    if path.lower().endswith(".json"):
        with open(path) as fh:
            try:
                data = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}, line {exc.lineno}: invalid JSON ({exc.msg}).") from None
        if isinstance(data, dict) and "records" in data:
            data = data["records"]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError(f"{path}: JSON must be a list of records (objects), one per row.")
        header = list(data[0]) if data else []
        return header, [(i + 1, r) for i, r in enumerate(data)]
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: the file is empty (no header line).") from None
        rows = []
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{path}, line {lineno}: {len(row)} fields, the header has {len(header)}."
                )
            rows.append((lineno, dict(zip(header, (c.strip() for c in row)))))
    return header, rows


def _number(path, line, col, raw):
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in ("", "na", "nan", "null")):
        raise ValueError(f"{path}, line {line}, column {col!r}: empty or missing value {raw!r}.")
    if isinstance(raw, bool):
        raise ValueError(f"{path}, line {line}, column {col!r}: non-numeric value {raw!r}.")
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise ValueError(
            f"{path}, line {line}, column {col!r}: non-numeric value {raw!r}."
        ) from None
    if not math.isfinite(v):
        raise ValueError(f"{path}, line {line}, column {col!r}: non-finite value {raw!r}.")
    return v


def _key(path, line, col, raw):
    if raw is None or str(raw).strip() == "":
        raise ValueError(f"{path}, line {line}, column {col!r}: empty value.")
    return str(raw).strip()


def read_tidy(path, *, measures=None):
    """Read a tidy results file.

    Parameters
    ----------
    path : str or path-like
        ``.csv`` or ``.json`` (a list of records).
    measures : sequence of str, optional
        Per-fold layout only: the measure columns to keep (default all but
        ``algorithm`` and ``fold``).

    Returns
    -------
    PerFold or PerInstance
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file.")
    header, rows = _records(path)
    for col in ("algorithm", "fold"):
        if col not in header:
            raise ValueError(f"{path}, line 1: column {col!r} not found; columns are {header}.")
    if not rows:
        raise ValueError(f"{path}: no data rows.")
    if all(c in header for c in INSTANCE_COLUMNS):
        return _per_instance(path, rows)
    if "instance" in header or "y_true" in header or "score" in header:
        missing = [c for c in INSTANCE_COLUMNS if c not in header]
        raise ValueError(f"{path}, line 1: per-instance layout needs column(s) {missing}.")
    return _per_fold(path, header, rows, measures)


def _check_algorithms(path, algs):
    if len(algs) < 2:
        raise ValueError(
            f"{path}: only one algorithm ({algs[0]!r}); a comparison needs at least two."
        )


def _per_fold(path, header, rows, measures):
    cols = [h for h in header if h not in ("algorithm", "fold")]
    if measures is not None:
        missing = [m for m in measures if m not in header]
        if missing:
            raise ValueError(f"{path}, line 1: measure column(s) {missing} not found.")
        cols = list(measures)
    if not cols:
        raise ValueError(f"{path}, line 1: no measure column besides 'algorithm' and 'fold'.")
    table = {}
    for line, r in rows:
        a = _key(path, line, "algorithm", r.get("algorithm"))
        f = _key(path, line, "fold", r.get("fold"))
        if (a, f) in table:
            raise ValueError(f"{path}, line {line}: duplicate row for algorithm {a!r}, fold {f!r}.")
        table[(a, f)] = [_number(path, line, c, r.get(c)) for c in cols]
    algs = tuple(dict.fromkeys(a for a, _ in table))
    _check_algorithms(path, algs)
    folds_of = {a: [f for b, f in table if b == a] for a in algs}
    ref = folds_of[algs[0]]
    for a in algs[1:]:
        if set(folds_of[a]) != set(ref):
            extra = sorted(set(folds_of[a]) ^ set(ref))
            raise ValueError(
                f"{path}: algorithms {algs[0]!r} and {a!r} have unequal folds (differing: "
                f"{extra[:5]}); paired tests need the same folds for every algorithm."
            )
    folds = tuple(ref)
    values = np.array([[table[(a, f)] for f in folds] for a in algs], dtype=np.float64)
    return PerFold(algs, folds, tuple(cols), values)


def _per_instance(path, rows):
    table = {}
    truth = {}
    for line, r in rows:
        a = _key(path, line, "algorithm", r.get("algorithm"))
        f = _key(path, line, "fold", r.get("fold"))
        i = _key(path, line, "instance", r.get("instance"))
        y = _number(path, line, "y_true", r.get("y_true"))
        s = _number(path, line, "score", r.get("score"))
        if (a, f, i) in table:
            raise ValueError(
                f"{path}, line {line}: duplicate row for algorithm {a!r}, fold {f!r}, "
                f"instance {i!r}."
            )
        if (f, i) in truth and truth[(f, i)][0] != y:
            raise ValueError(
                f"{path}, line {line}, column 'y_true': {y!r} differs from {truth[(f, i)][0]!r} "
                f"on line {truth[(f, i)][1]} for the same fold and instance."
            )
        truth.setdefault((f, i), (y, line))
        table[(a, f, i)] = s
    algs = tuple(dict.fromkeys(a for a, _, _ in table))
    _check_algorithms(path, algs)
    keys = list(truth)
    for a in algs:
        have = {(f, i) for b, f, i in table if b == a}
        if have != set(keys):
            missing = sorted(set(keys) - have)[:3]
            raise ValueError(
                f"{path}: algorithm {a!r} lacks outputs for (fold, instance) {missing}; "
                "paired tests need every algorithm on the same instances."
            )
    folds = tuple(dict.fromkeys(f for f, _ in keys))
    y_true = np.array([truth[k][0] for k in keys])
    scores = np.array([[table[(a, *k)] for k in keys] for a in algs])
    fold_of = np.array([folds.index(f) for f, _ in keys])
    return PerInstance(algs, folds, y_true, scores, fold_of)
