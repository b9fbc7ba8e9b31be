"""Scores of several learners over many data sets, from a tidy table (Demšar 2006).

``read_scores`` turns a long table with one row per (data set, learner) into the
``(n_datasets, n_learners)`` matrix that :func:`jaxtests.friedman`, :func:`jaxtests.nemenyi`,
:func:`jaxtests.friedman_posthoc`, :func:`jaxtests.wilcoxon` and
:func:`jaxtests.bayesian.signrank` take, and ``ScoreTable`` runs them by learner name.
"""

import dataclasses
import os

import numpy as np

from jaxtests import _direction
from jaxtests._tidy import _key, _number, _records

__all__ = ["ScoreTable", "read_scores"]

FOLD_COLUMNS = ("repetition", "fold")


@dataclasses.dataclass(frozen=True)
class ScoreTable:
    """One score per data set and learner.

    Attributes
    ----------
    scores : ndarray ``(n_datasets, n_learners)``
        ``scores[i, j]``: learner ``j`` on data set ``i`` (the mean over its folds when
        the table had a ``fold`` column).
    datasets, learners : tuple of str
        In order of first appearance in the table.
    measure : str
        The score column.
    higher_is_better : bool
        Rank 1 goes to the highest score (False for errors and losses).
    n_folds : tuple of int or None
        Rows averaged into each data set's scores, when the table had a ``fold`` column.
    """

    scores: np.ndarray
    datasets: tuple
    learners: tuple
    measure: str
    higher_is_better: bool = True
    n_folds: tuple | None = None

    def column(self, learner):
        """``(n_datasets,)`` scores of one learner."""
        if learner not in self.learners:
            raise ValueError(f"unknown learner {learner!r}; learners are {list(self.learners)}.")
        return self.scores[:, self.learners.index(learner)]

    def friedman(self, *, method="chi2", n_resamples=None, key=None, progress=None):
        """:func:`jaxtests.friedman` of the table."""
        from jaxtests._friedman import friedman

        return friedman(
            self.scores,
            higher_is_better=self.higher_is_better,
            method=method,
            n_resamples=n_resamples,
            key=key,
            progress=progress,
        )

    def nemenyi(self, *, alpha=0.05):
        """:func:`jaxtests.nemenyi` of the table, with the learners' names."""
        from jaxtests._friedman import nemenyi

        return nemenyi(
            self.scores, alpha=alpha, higher_is_better=self.higher_is_better, names=self.learners
        )

    def friedman_posthoc(self, *, control=None, method="holm", alpha=0.05):
        """:func:`jaxtests.friedman_posthoc` of the table, with the learners' names."""
        from jaxtests._rank_posthoc import friedman_posthoc

        return friedman_posthoc(
            self.scores,
            control=control,
            method=method,
            alpha=alpha,
            higher_is_better=self.higher_is_better,
            names=self.learners,
        )

    def report(self, *, alpha=0.05):
        """An automatic analysis of the table, as autorank makes one (Herbold 2020).

        Parameters
        ----------
        alpha : float
            Family-wise level of the tests.

        Returns
        -------
        ScoreReport
            The decisions and numbers (best learner first), with ``text()`` (prose),
            ``markdown()`` and ``latex()`` (tables of mean rank, center, spread and
            effect size against the best learner, with its magnitude).

        Notes
        -----
        The decision rules are autorank's (``autorank.autorank``, frequentist approach):

        1. Normality: Shapiro-Wilk on each learner's scores at ``alpha / k``
           (Bonferroni); all normal when no p-value is below it.
        2. Homoscedasticity: Bartlett's test when all are normal, else Levene's
           (scipy's median-centred); equal variances when its p-value is at least
           ``alpha``.
        3. Two learners: the paired t test when both are normal, else the Wilcoxon
           signed-rank test, one-sided, the learner with the better median against the
           other. More: when all are normal and homoscedastic, the repeated-measures
           ANOVA (:func:`jaxtests.anova` with data sets as blocks), then Tukey's HSD;
           otherwise Friedman's chi-square test, then Nemenyi's (:meth:`friedman`,
           :meth:`nemenyi`). One departure: autorank's Tukey HSD (statsmodels'
           ``tukeyhsd``) takes the one-way error mean square, which keeps the data sets'
           variation, so it can find no pair where the ANOVA rejects; here it takes the
           ANOVA's residual mean square on ``(k - 1)(N - 1)`` degrees of freedom (the
           randomized block design, Montgomery 2009, §4.1).
        4. Reported: mean and standard deviation with Cohen's d (pooled SD) when all are
           normal, else median and median absolute deviation with Akinshin's gamma (the
           pooled MAD scaled by 1.4826); magnitudes negligible / small / medium / large
           below 0.2 / 0.5 / 0.8 / above. Learners are ordered by mean rank (rank 1 = the
           best score on a data set, ties averaged); ``higher_is_better`` sets the
           direction of the ranks, of the effect sizes and of the one-sided test.

        At least 5 data sets (autorank's minimum) and at most 100 learners (4,950
        pairs, each Tukey p-value a numerical integral: about a minute; more are
        refused at once with a ``ValueError``).

        References
        ----------
        Herbold, S. (2020). Autorank: A Python package for automated ranking of
        classifiers. JOSS 5(48), 2173. Demšar, J. (2006). JMLR 7, 1-30.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> rng = np.random.default_rng(0)
        >>> table = jaxtests.read_scores({
        ...     "dataset": np.repeat(np.arange(12), 3).astype(str),
        ...     "learner": ["svm", "knn", "lda"] * 12,
        ...     "accuracy": (rng.uniform(0.6, 0.9, (12, 1)) + [0.05, 0.0, 0.01]
        ...                  + 0.02 * rng.standard_normal((12, 3))).ravel(),
        ... })
        >>> r = table.report()
        >>> r.omnibus, r.posthoc, r.learners
        ('anova', 'tukeyhsd', ('svm', 'lda', 'knn'))
        """
        from jaxtests._score_report import report

        return report(self, alpha=alpha)

    def wilcoxon(self, a, b, **kwargs):
        """:func:`jaxtests.wilcoxon` of learner ``a``'s scores against ``b``'s (``a - b``)."""
        from jaxtests._wilcoxon import wilcoxon

        return wilcoxon(self.column(a), self.column(b), **kwargs)

    def signrank(self, a, b, *, rope, **kwargs):
        """:func:`jaxtests.bayesian.signrank` of learner ``a`` against ``b`` (``a - b``).

        ``p_left`` is "``a`` better" (baycomp's orientation), ``p_right`` "``b`` better"
        (also ``p_a_better`` and ``p_b_better``); with ``higher_is_better=False`` the
        scores are negated first, so they keep that meaning.
        """
        from jaxtests._bayesian import signrank

        sign = 1.0 if self.higher_is_better else -1.0
        return signrank(sign * self.column(a), sign * self.column(b), rope=rope, **kwargs)


def _is_frame(source):
    return hasattr(source, "columns") and hasattr(source, "__getitem__")


def _columns(source):
    """Column names and row records ``[(where, {column: value})]`` of a frame or mapping."""
    if _is_frame(source):
        header = [str(c) for c in source.columns]
        if len(set(header)) != len(header):
            raise ValueError("`source`: duplicate column names.")
        cols = {str(c): np.asarray(source[c], dtype=object).tolist() for c in source.columns}
    elif isinstance(source, dict):
        header = [str(c) for c in source]
        # dtype=object: a mixed column keeps its None and NaN (numpy would make them strings)
        cols = {str(c): np.asarray(v, dtype=object).tolist() for c, v in source.items()}
        sizes = {c: len(v) if isinstance(v, list) else -1 for c, v in cols.items()}
        if len(set(sizes.values())) > 1 or -1 in sizes.values():
            raise ValueError(f"`source`: columns must be 1-d and of equal length, got {sizes}.")
    else:
        raise TypeError(
            "`source` must be a path to a CSV/JSON file, a DataFrame or a dict of columns, "
            f"got {type(source).__name__}."
        )
    n = len(cols[header[0]]) if header else 0
    rows = [(i + 1, {c: cols[c][i] for c in header}) for i in range(n)]
    return header, rows


def read_scores(source, *, score=None, dataset="dataset", learner=None, higher_is_better=None):
    """Read scores of learners over many data sets from a tidy or a wide table.

    Parameters
    ----------
    source : str, path-like, DataFrame or dict
        A ``.csv``, ``.csv.gz`` or ``.json`` file (a list of records), a DataFrame
        (pandas, polars: anything with ``columns`` and column indexing) or a dict of
        equal-length columns. Tidy (long): one row per data set and learner, or per data
        set, learner and fold when there is a ``fold`` column (and ``repetition``, for
        repeated cross-validation). Wide, as autorank and baycomp take it: one column per
        learner and one row per data set (see Notes).
    score : str, optional
        The score column; default the only column besides ``dataset``, ``learner``,
        ``fold`` and ``repetition``. In a wide table, the name of the measure (default
        ``"score"``).
    dataset : str
        The data-set column (optional in a wide table).
    learner : str, optional
        The learner column: ``"learner"``, or ``"algorithm"`` when the table has no
        ``learner`` column; a table with neither (and no ``learner=``) is wide.
    higher_is_better : bool or None, default None
        Whether a higher score is better (accuracy, AUC); False for errors and losses.
        Sets the ranks of the table's Friedman, Nemenyi and post hoc tests. ``None``
        takes it from the score column's name: ``error``, ``loss``, ``rmse``, ``fpr``
        and the losses are lower-is-better, any other name (``accuracy``, ``auc``...)
        higher-is-better (``jaxtests._direction``).

    Returns
    -------
    ScoreTable

    Notes
    -----
    A table with neither a ``learner`` nor an ``algorithm`` column (and no ``learner=``)
    is wide: autorank's ``autorank(data)`` layout, every column a learner and every row a
    data set, named by the ``dataset`` column when there is one, else by the DataFrame's
    index (pandas) or the row's position (0, 1, ...); ``fold`` and ``repetition`` columns
    mark per-fold rows as in the tidy layout. ``higher_is_better=None`` is then
    higher-is-better unless ``score=`` names an error or a loss, as autorank's default
    ``order="descending"``.

    With a ``fold`` column, each data set's score of a learner is the mean over its
    folds (Demšar's recipe: one cross-validated score per data set, computed without
    overflow even for scores near the float64 limit); every learner needs the same
    folds of a data set. Every learner needs a score on every data set (Friedman's test
    ranks complete blocks): a missing one is an error naming it, as are a repeated row,
    a missing or non-finite score, a missing name (None, NaN, pandas' NA: the row and
    column are named) and fewer than two learners.

    Examples
    --------
    >>> import jaxtests
    >>> table = jaxtests.read_scores({
    ...     "dataset": ["iris", "iris", "wine", "wine", "glass", "glass"],
    ...     "learner": ["svm", "knn"] * 3,
    ...     "accuracy": [0.96, 0.95, 0.98, 0.96, 0.70, 0.66],
    ... })
    >>> table.learners, table.scores.shape
    (('svm', 'knn'), (3, 2))
    >>> float(table.wilcoxon("svm", "knn").pvalue)
    0.25

    Wide, learners as columns (autorank's DataFrame):

    >>> wide = jaxtests.read_scores(
    ...     {"svm": [0.96, 0.98, 0.70], "knn": [0.95, 0.96, 0.66]}, score="accuracy")
    >>> wide.learners, wide.datasets, wide.scores.shape
    (('svm', 'knn'), ('0', '1', '2'), (3, 2))
    """
    if higher_is_better is not None and not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be True, False or None, got {higher_is_better!r}."
        )
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ValueError(f"{path}: no such file.")
        header, rows = _records(path)
    else:
        path = "`source`"
        header, rows = _columns(source)
    if learner is None and "learner" not in header and "algorithm" not in header:
        header, rows, score = _long_from_wide(path, source, header, rows, dataset, score)
        learner = "learner"
    elif learner is None:
        learner = "learner" if "learner" in header else "algorithm"
    for col, what in ((dataset, "dataset"), (learner, "learner")):
        if col not in header:
            raise ValueError(
                f"{path}: {what} column {col!r} not found; columns are {header} (a wide "
                "table, one column per learner and one row per data set as autorank takes, "
                "has no 'learner' or 'algorithm' column)."
            )
    folds = [c for c in FOLD_COLUMNS if c in header]
    if "repetition" in folds and "fold" not in folds:
        raise ValueError(f"{path}: a 'repetition' column needs a 'fold' column beside it.")
    keys = (dataset, learner, *folds)
    if score is None:
        rest = [h for h in header if h not in keys]
        if len(rest) != 1:
            raise ValueError(
                f"{path}: choose the score column with `score=`: the columns besides "
                f"{list(keys)} are {rest}."
            )
        score = rest[0]
    elif score not in header or score in keys:
        raise ValueError(f"{path}: score column {score!r} not found among {header}.")
    if not rows:
        raise ValueError(f"{path}: no data rows.")
    if higher_is_better is None:  # from the column's name; unknown names: higher
        higher_is_better = _direction.higher_is_better(score, True)
    return _table(path, rows, keys, score, higher_is_better)


def _long_from_wide(path, source, header, rows, dataset, score):
    """The tidy header and rows of a wide table (learners as columns, data sets as rows)."""
    score = "score" if score is None else score
    if not isinstance(score, str):
        raise TypeError(f"`score` must be a str (the measure's name), got {type(score).__name__}.")
    keys = [c for c in (dataset, *FOLD_COLUMNS) if c in header]
    learners = [c for c in header if c not in keys]
    if len(learners) < 2:
        raise ValueError(
            f"{path}: a wide table (no 'learner' or 'algorithm' column) needs one column per "
            f"learner, at least two; columns are {header}."
        )
    if dataset in header:
        names = None
    else:
        index = getattr(source, "index", None) if _is_frame(source) else None
        names = [str(i) for i in index] if index is not None else None
        names = names or [str(i) for i in range(len(rows))]
    long = []
    for i, (line, r) in enumerate(rows):
        ids = {c: r[c] for c in keys}
        if names is not None:
            ids[dataset] = names[i]
        long += [(line, {**ids, "learner": a, score: r[a]}) for a in learners]
    return [dataset, "learner", *[c for c in FOLD_COLUMNS if c in keys], score], long, score


def _mean(values):
    """The mean of finite ``values`` without overflow: numpy's, or where its sum overflows
    (two folds of 1e308), the mean of the values over their largest magnitude, times it."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        m = np.mean(values)
    if np.isfinite(m):
        return m
    scale = np.max(np.abs(values))
    return scale * np.mean(values / scale)


def _table(path, rows, keys, score, higher_is_better):
    folds = keys[2:]
    cells = {}
    for line, r in rows:
        k = tuple(_key(path, line, c, r.get(c)) for c in keys)
        if k in cells:
            what = ", ".join(f"{c} {v!r}" for c, v in zip(keys, k, strict=True))
            raise ValueError(
                f"{path}, line {line}: a second row for {what} (first on line {cells[k][0]})"
                + ("; add a 'fold' column for per-fold rows." if not folds else ".")
            )
        cells[k] = (line, _number(path, line, score, r.get(score)))
    datasets = tuple(dict.fromkeys(k[0] for k in cells))
    learners = tuple(dict.fromkeys(k[1] for k in cells))
    if len(learners) < 2:
        raise ValueError(f"{path}: only one learner ({learners[0]!r}); a comparison needs two.")
    fold_sets = {}
    for k in cells:
        fold_sets.setdefault(k[:2], set()).add(k[2:])
    scores = np.empty((len(datasets), len(learners)))
    n_folds = []
    for i, d in enumerate(datasets):
        ref = fold_sets.get((d, learners[0]))
        for j, a in enumerate(learners):
            have = fold_sets.get((d, a))
            if have is None:
                raise ValueError(
                    f"{path}: learner {a!r} has no score on data set {d!r}; every learner needs "
                    "a score on every data set (drop the data set or the learner)."
                )
            if have != ref:
                raise ValueError(
                    f"{path}: learners {learners[0]!r} and {a!r} have different folds on data set "
                    f"{d!r}; a data set's score is the mean over the same folds for every learner."
                )
            scores[i, j] = _mean([cells[(d, a, *f)][1] for f in sorted(have)])
        n_folds.append(len(ref))
    return ScoreTable(
        scores=scores,
        datasets=datasets,
        learners=learners,
        measure=score,
        higher_is_better=bool(higher_is_better),
        n_folds=tuple(n_folds) if folds else None,
    )
