"""Reading the user's own results in tidy form (CSV or JSON) for ``jaxtests compare``.

Two layouts are recognised from the columns:

- per-fold: ``algorithm, fold`` and one numeric column per measure;
- per-instance: ``algorithm, fold, instance, y_true, score`` and no other column.

Either may add a ``repetition`` column for repeated cross-validation (fold ``f`` of
repetition ``r`` is its own fold, ``"r/f"``; 5x2cv tests need 5 repetitions of 2 folds).
A third, per-item layout holds scored answers of models on benchmark items:
``model, item, score`` (``algorithm`` or ``learner`` for ``model``), optionally a
``sample`` column, with one row per sampled answer (several rows per model and item:
:func:`jaxtests.item_means` averages them). The per-instance and per-item layouts
take a column of cluster labels, named by ``cluster=`` (``--cluster``).
CSV files are UTF-8 (a BOM is fine) and may be gzipped (``.csv.gz``).

A file with a ``dataset`` column is the many-data-set layout of
:func:`jaxtests.read_scores` (``has_dataset_column`` tells ``compare`` which reader to use).

Errors name the file, the line (1-based; the CSV header is line 1, a JSON
record's line is its index + 1) and the column, and are ``ValueError``.
"""

import dataclasses
import json
import os

import numpy as np

from jaxtests.datasets._text import (
    TooLarge,
    decode_error,
    open_text,
    parse_number,
    read_csv_rows,
)

__all__ = ["ItemTable", "PerFold", "PerInstance", "has_dataset_column", "read_items", "read_tidy"]

INSTANCE_COLUMNS = ("algorithm", "fold", "instance", "y_true", "score")
KEY_COLUMNS = ("algorithm", "repetition", "fold")


@dataclasses.dataclass(frozen=True)
class PerFold:
    """Per-fold results: ``values[i, j, m]`` for algorithm i, fold j, measure m."""

    algorithms: tuple
    folds: tuple
    measures: tuple
    values: np.ndarray
    repetitions: tuple | None = None  # repetition label of each fold, if the file has them

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
    repetitions: tuple | None = None  # repetition label of each fold, if the file has them
    instances: tuple = ()  # instance id of each row (the same instance in every repetition)
    clusters: tuple | None = None  # cluster label of each row (``cluster=``), if named
    cluster_column: str | None = None


@dataclasses.dataclass(frozen=True)
class ItemTable:
    """Scored answers of models on items: ``samples[i, j, k]`` is sample ``k`` of model
    ``i`` on item ``j``, ``K`` samples of every item by every model.

    Attributes
    ----------
    models : tuple of str
    items : tuple of str
    samples : numpy.ndarray, (n_models, n_items, K)
    clusters : tuple of str or None
        Each item's cluster label, when the file names a cluster column.
    cluster_column : str or None
    """

    models: tuple
    items: tuple
    samples: np.ndarray
    clusters: tuple | None = None
    cluster_column: str | None = None

    @property
    def algorithms(self):
        return self.models

    def item_means(self):
        """:func:`jaxtests.item_means` of every model's samples."""
        from jaxtests._items import item_means

        return item_means(self.samples)


class _DuplicateKey(ValueError):
    pass


def _json_object(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise _DuplicateKey(f"duplicate key(s) {dup} in one record")
    return dict(pairs)


def _records(path):
    """Header and ``[(line, row-dict of raw strings/values)]`` of a CSV or JSON file."""
    path = os.fspath(path)
    if path.lower().endswith((".json", ".json.gz")):
        try:
            with open_text(path) as fh:
                data = json.load(fh, object_pairs_hook=_json_object)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {exc.lineno}: invalid JSON ({exc.msg}).") from None
        except UnicodeDecodeError as exc:
            raise decode_error(path, exc) from None
        except _DuplicateKey as exc:
            raise ValueError(f"{path}: {exc}; each key once per record.") from None
        except TooLarge:
            raise
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise ValueError(f"{path}: invalid JSON ({exc}).") from None
        except RecursionError:  # json recurses once per level of nesting
            raise ValueError(
                f"{path}: JSON nested too deeply to read; the file must be a list of flat "
                "records (objects of column: value)."
            ) from None
        if isinstance(data, dict) and "records" in data:
            extra = sorted(set(data) - {"records"})
            if extra:
                raise ValueError(f"{path}: unknown top-level key(s) {extra} beside 'records'.")
            data = data["records"]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError(f"{path}: JSON must be a list of records (objects), one per row.")
        header = list(data[0]) if data else []
        for i, r in enumerate(data):
            if list(r) != header and set(r) != set(header):
                extra = sorted(set(r) - set(header))
                missing = sorted(set(header) - set(r))
                raise ValueError(
                    f"{path}, record {i + 1}: keys differ from the first record's "
                    f"(extra {extra}, missing {missing}); every record needs the same keys."
                )
        return header, [(i + 1, r) for i, r in enumerate(data)]
    header, raw = read_csv_rows(path, delimiter=None)  # comma, tab or semicolon
    rows = []
    for lineno, row in raw:
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {lineno}: {len(row)} fields, the header has {len(header)}."
            )
        rows.append((lineno, dict(zip(header, (c.strip() for c in row), strict=True))))
    return header, rows


def _number(path, line, col, raw):
    return parse_number(path, line, col, raw)


def _missing(raw):
    """None, NaN, and pandas' NA and NaT: values not equal to themselves, or that cannot say."""
    if raw is None:
        return True
    try:
        return not bool(raw == raw)
    except (TypeError, ValueError):
        return True


def _key(path, line, col, raw):
    if _missing(raw):  # a DataFrame's empty cell: NaN would become a name 'nan'
        raise ValueError(f"{path}, line {line}, column {col!r}: missing value {raw!r}.")
    if isinstance(raw, bool | dict | list) or str(raw).strip() == "":
        raise ValueError(f"{path}, line {line}, column {col!r}: empty or invalid value {raw!r}.")
    return str(raw).strip()


def _learner_as_algorithm(path, header, rows):
    """A ``learner`` column is the ``algorithm`` column (as in the many-data-set layout)."""
    if "learner" not in header:
        return header, rows
    if "algorithm" in header:
        raise ValueError(
            f"{path}, line 1: both 'algorithm' and 'learner' columns; keep one (they name the "
            "same thing)."
        )
    header = ["algorithm" if h == "learner" else h for h in header]
    rows = [(line, {("algorithm" if k == "learner" else k): v for k, v in r.items()})
            for line, r in rows]  # fmt: skip
    return header, rows


def has_dataset_column(path):
    """Whether the file has a ``dataset`` column (the many-data-set layout)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file.")
    return "dataset" in _records(path)[0]


def read_tidy(path, *, measures=None, cluster=None):
    """Read a tidy results file.

    Parameters
    ----------
    path : str or path-like
        ``.csv``, ``.csv.gz`` or ``.json`` (a list of records).
    measures : sequence of str, optional
        Per-fold layout only: the measure columns to keep (default all but
        ``algorithm``, ``repetition`` and ``fold``).
    cluster : str, optional
        The column of cluster labels of a per-instance or per-item file (one label
        per instance or item, the same in each of its rows).

    Returns
    -------
    PerFold, PerInstance or ItemTable
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file.")
    header, rows = _records(path)
    header, rows = _learner_as_algorithm(path, header, rows)
    keys = (*INSTANCE_COLUMNS, "model", "item", "sample", "repetition", "dataset")
    if cluster in keys:
        raise ValueError(
            f"{path}: the cluster column cannot be {cluster!r}, a column of the layout; name "
            "the column of cluster labels (e.g. passage)."
        )
    if cluster is not None and cluster not in header:
        raise ValueError(
            f"{path}, line 1: cluster column {cluster!r} not found; columns are {header}."
        )
    if "item" in header:
        return _per_item(path, header, rows, cluster)
    for col in ("algorithm", "fold"):
        if col not in header:
            named = "'algorithm' (or 'learner')" if col == "algorithm" else repr(col)
            raise ValueError(f"{path}, line 1: column {named} not found; columns are {header}.")
    if not rows:
        raise ValueError(f"{path}: no data rows.")
    if all(c in header for c in INSTANCE_COLUMNS):
        extra = [h for h in header if h not in (*INSTANCE_COLUMNS, "repetition", cluster)]
        if extra:
            raise ValueError(
                f"{path}, line 1: unknown column(s) {extra} in a per-instance file (columns "
                f"{list(INSTANCE_COLUMNS)}, optionally 'repetition' and a cluster column "
                "named by --cluster); remove them, or name the cluster column."
            )
        return _per_instance(path, rows, "repetition" in header, cluster)
    if cluster is not None:
        raise ValueError(
            f"{path}: cluster column {cluster!r} given, but this is a per-fold file; clusters "
            "group the instances of a per-instance file (algorithm, fold, instance, y_true, "
            "score) or the items of a per-item file (model, item, score)."
        )
    if "instance" in header or "y_true" in header or "score" in header:
        missing = [c for c in INSTANCE_COLUMNS if c not in header]
        raise ValueError(f"{path}, line 1: per-instance layout needs column(s) {missing}.")
    return _per_fold(path, header, rows, measures)


def _check_algorithms(path, algs):
    if len(algs) < 2:
        raise ValueError(
            f"{path}: only one algorithm ({algs[0]!r}); a comparison needs at least two."
        )


def _fold_key(path, line, r, repeated):
    f = _key(path, line, "fold", r.get("fold"))
    if not repeated:
        return f
    return f"{_key(path, line, 'repetition', r.get('repetition'))}/{f}"


def _repetitions(folds, repeated):
    return tuple(f.split("/", 1)[0] for f in folds) if repeated else None


def _per_fold(path, header, rows, measures):
    repeated = "repetition" in header
    cols = [h for h in header if h not in KEY_COLUMNS]
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
        f = _fold_key(path, line, r, repeated)
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
    return PerFold(algs, folds, tuple(cols), values, _repetitions(folds, repeated))


def _same_cluster(path, line, r, cluster, seen, unit, u):
    """The row's cluster label, checked against the label of ``unit`` ``u`` seen before."""
    if cluster is None:
        return None
    label = _key(path, line, cluster, r.get(cluster))
    first = seen.setdefault(u, (label, line))
    if first[0] != label:
        raise ValueError(
            f"{path}, line {line}, column {cluster!r}: {label!r} differs from {first[0]!r} on "
            f"line {first[1]} for {unit} {u!r}; each {unit} belongs to one cluster, the same "
            "in each of its rows."
        )
    return label


def _per_instance(path, rows, repeated, cluster=None):
    table = {}
    truth = {}
    labels = {}  # instance -> (cluster label, first line)
    for line, r in rows:
        a = _key(path, line, "algorithm", r.get("algorithm"))
        f = _fold_key(path, line, r, repeated)
        i = _key(path, line, "instance", r.get("instance"))
        _same_cluster(path, line, r, cluster, labels, "instance", i)
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
    instances = tuple(i for _, i in keys)
    clusters = None if cluster is None else tuple(labels[i][0] for i in instances)
    return PerInstance(
        algs,
        folds,
        y_true,
        scores,
        fold_of,
        _repetitions(folds, repeated),
        instances,
        clusters,
        cluster,
    )


def _per_item(path, header, rows, cluster):
    """``model, item, [sample], score`` rows, and a cluster column if named."""
    names = [c for c in ("model", "algorithm") if c in header]
    if len(names) != 1 or "score" not in header:
        have = "both 'model' and 'algorithm'" if len(names) > 1 else "no 'model' column"
        if "score" not in header:
            have = "no 'score' column"
        raise ValueError(
            f"{path}, line 1: a per-item file (it has an 'item' column) needs columns "
            f"model, item, score (optionally sample and a cluster column); it has {have}."
        )
    name = names[0]
    extra = [h for h in header if h not in (name, "item", "sample", "score", cluster)]
    if extra:
        raise ValueError(
            f"{path}, line 1: unknown column(s) {extra} in a per-item file (columns model, "
            "item, score, optionally sample and a cluster column named by --cluster); remove "
            "them, or name the cluster column."
        )
    if not rows:
        raise ValueError(f"{path}: no data rows.")
    sampled = "sample" in header
    scores = {}  # (model, item) -> [score, ...]
    seen = {}  # (model, item, sample) -> line
    labels = {}  # item -> (cluster label, first line)
    for line, r in rows:
        m = _key(path, line, name, r.get(name))
        i = _key(path, line, "item", r.get("item"))
        if sampled:
            k = _key(path, line, "sample", r.get("sample"))
            if (m, i, k) in seen:
                raise ValueError(
                    f"{path}, line {line}: duplicate row for model {m!r}, item {i!r}, sample "
                    f"{k!r} (first on line {seen[(m, i, k)]})."
                )
            seen[(m, i, k)] = line
        _same_cluster(path, line, r, cluster, labels, "item", i)
        scores.setdefault((m, i), []).append(_number(path, line, "score", r.get("score")))
    models = tuple(dict.fromkeys(m for m, _ in scores))
    _check_algorithms(path, models)
    items = tuple(dict.fromkeys(i for _, i in scores))
    for m in models:
        missing = [i for i in items if (m, i) not in scores]
        if missing:
            raise ValueError(
                f"{path}: model {m!r} has no score for item(s) {missing[:3]}; paired tests "
                "need every model on the same items."
            )
    counts = {key: len(v) for key, v in scores.items()}
    k = counts[(models[0], items[0])]
    for key, c in counts.items():
        if c != k:
            raise ValueError(
                f"{path}: model {key[0]!r} has {c} sample(s) of item {key[1]!r}, model "
                f"{models[0]!r} {k} of item {items[0]!r}; unequal numbers of samples per item "
                "are refused (the per-item means would weigh items unequally): keep K samples "
                "of every item for every model."
            )
    samples = np.array([[scores[(m, i)] for i in items] for m in models], dtype=np.float64)
    clusters = None if cluster is None else tuple(labels[i][0] for i in items)
    return ItemTable(models, items, samples, clusters, cluster)


def read_items(path, *, cluster=None):
    r"""Read a per-item file of scored answers: ``model, item, [sample], score``.

    Several rows of one model and item are its sampled answers (``K`` of each item by
    each model; unequal numbers are refused); :meth:`ItemTable.item_means` averages
    them and splits their variance (:func:`jaxtests.item_means`).

    Parameters
    ----------
    path : str or path-like
        ``.csv``, ``.csv.gz`` or ``.json`` (a list of records). ``algorithm`` or
        ``learner`` may name the model column.
    cluster : str, optional
        The column of the items' cluster labels (the same label in each row of an item).

    Returns
    -------
    ItemTable

    Examples
    --------
    >>> import os, tempfile, jaxtests
    >>> path = os.path.join(tempfile.mkdtemp(), "items.csv")
    >>> with open(path, "w") as fh:  # two samples of each item by each model
    ...     _ = fh.write("model,item,score\na,q1,1\na,q1,0\na,q2,1\na,q2,1\n"
    ...                  "b,q1,0\nb,q1,0\nb,q2,1\nb,q2,0\n")
    >>> t = jaxtests.read_items(path)
    >>> t.samples.shape, t.item_means().means.tolist()
    ((2, 2, 2), [[0.5, 1.0], [0.0, 0.5]])
    """
    table = read_tidy(path, cluster=cluster)
    if not isinstance(table, ItemTable):
        raise ValueError(f"{os.fspath(path)}: not a per-item file (it has no 'item' column).")
    return table
