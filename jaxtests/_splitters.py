"""Cross-validation splitters: k-fold, 5x2 cv, random splits and explicit ones.

A splitter gives boolean ``train``/``test`` masks of shape ``(R, K, n)``
(:class:`Splits`); :func:`make_splits` turns ``cross_validate``'s ``cv``
argument (an int, a splitter or explicit index pairs) into them, stratified on
the class labels of classifiers. Every model of ``cross_validate`` sees the same
splits, so its per-fold results are paired.
"""

import dataclasses
import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _random
from jaxtests._buckets import bucket
from jaxtests._validation import (
    as_int_scalar,
)

__all__ = ["FiveByTwo", "KFold", "RandomSplits", "Splits", "make_splits", "padded_test_index"]


def _check_bool(value, name):
    # a string such as "no" is truthy: refuse rather than read it as True
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"`{name}` must be a bool, got {type(value).__name__} {value!r}.")


@dataclasses.dataclass(frozen=True)
class Splits:
    """Fold assignment: boolean ``train`` and ``test`` masks of shape ``(R, K, n)``.

    ``R`` repetitions of ``K`` (train, test) splits of ``n`` instances.
    """

    train: np.ndarray
    test: np.ndarray

    @property
    def shape(self):
        """``(R, K)``."""
        return self.train.shape[:2]


def _ranks_within(strata, u):
    """Rank of each instance's ``u`` within its stratum, and the stratum order."""
    order = np.lexsort((u, strata))
    rank = np.empty(len(u), np.int64)
    s_sorted = strata[order]
    starts = np.r_[0, np.flatnonzero(np.diff(s_sorted)) + 1]
    sizes = np.diff(np.r_[starts, len(u)])
    rank[order] = np.arange(len(u)) - np.repeat(starts, sizes)
    return order, rank


def _class_strata(y):
    """Class index of each instance (``y > 0`` for ±1 labels, the index itself for 0..C-1)."""
    return np.unique(y, return_inverse=True)[1].astype(np.int64).reshape(-1)


@functools.partial(jax.jit, static_argnames="size")
def _uniform_draw(key, r, size):
    return jax.random.uniform(jax.random.fold_in(key, r), (size,), dtype=jnp.float64)


def _uniforms(key, r, n):
    """``n`` uniforms of repetition ``r``: one program per shape bucket of ``n``.

    With JAX's partitionable threefry (its default) the first ``n`` of ``size >= n``
    draws are the ``n`` draws themselves, so a bucket's program gives the same folds;
    otherwise the exact size is drawn. With JAX's default (partitionable threefry)
    keys they are drawn on the host, the same words and no program.
    """
    words = _random.host_words(key)
    if words is not None:
        # the same words on the host (tests/test_random_host.py): no program to compile
        return _random.uniform64_words(_random.fold_in_words(words, r), n)
    size = bucket(n) if jax.config.jax_threefry_partitionable else n
    return np.asarray(_uniform_draw(key, np.int32(r), size))[:n]


@dataclasses.dataclass(frozen=True)
class KFold:
    """(Repeated, stratified) k-fold cross-validation.

    Each repetition shuffles the instances with a key derived from the run's
    key (``fold_in(key, repetition)``). Stratified: instances are ordered by
    class, randomly within class, and dealt to folds in turn, so fold sizes and
    per-fold class counts differ by at most one, for any number of classes
    (the allocation of scikit-learn's ``StratifiedKFold``).

    Parameters
    ----------
    n_splits : int, default 10
        Number of folds ``K``.
    repeats : int, default 1
        Number of repetitions ``R``, each reshuffled.
    stratified : bool, default True
        Keep the class proportions in every fold (classification only).

    Examples
    --------
    >>> import jaxtests
    >>> jaxtests.KFold(5, repeats=2)
    KFold(n_splits=5, repeats=2, stratified=True)
    """

    n_splits: int = 10
    repeats: int = 1
    stratified: bool = True

    def __post_init__(self):
        as_int_scalar(self.n_splits, "n_splits", minimum=2)
        as_int_scalar(self.repeats, "repeats", minimum=1)
        _check_bool(self.stratified, "stratified")

    def split(self, y, key, classification):
        """Return :class:`Splits` for labels ``y`` (numpy) and a typed JAX key."""
        n = len(y)
        if self.n_splits > n:
            raise ValueError(f"`cv`: cannot make {self.n_splits} folds from {n} instances.")
        strat = self.stratified and classification
        if strat:
            _check_two_classes(y)
            counts = np.unique(y, return_counts=True)[1]
            n_min = int(counts.min())
            if n_min < self.n_splits:
                which = "smaller" if counts.size == 2 else "smallest"
                raise ValueError(
                    f"`cv`: stratified {self.n_splits}-fold needs at least {self.n_splits} "
                    f"instances per class; the {which} class has {n_min}."
                )
        strata = _class_strata(y) if strat else np.zeros(n, np.int64)
        test = np.zeros((self.repeats, self.n_splits, n), bool)
        for r in range(self.repeats):
            order, _ = _ranks_within(strata, _uniforms(key, r, n))
            fold = np.empty(n, np.int64)
            fold[order] = np.arange(n) % self.n_splits
            test[r, fold, np.arange(n)] = True
        return Splits(~test, test)


def FiveByTwo(stratified=True):
    """Dietterich's 5x2 cv: five repetitions of 2-fold (for ``ttest_5x2cv``/``ftest_5x2cv``).

    Parameters
    ----------
    stratified : bool, default True
        Keep the class proportions in both halves of each repetition.

    Returns
    -------
    KFold
        ``KFold(2, repeats=5, stratified=stratified)``.

    References
    ----------
    Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
    classification learning algorithms. Neural Computation 10, 1895-1923.

    Examples
    --------
    >>> import jaxtests
    >>> jaxtests.FiveByTwo()
    KFold(n_splits=2, repeats=5, stratified=True)
    """
    return KFold(2, repeats=5, stratified=stratified)


@dataclasses.dataclass(frozen=True)
class RandomSplits:
    """Random train/test resampling: ``n_splits`` independent splits (Nadeau & Bengio).

    Each split holds out ``test_size`` of the instances (a fraction), per class
    when stratified; use with ``CVResult.ttest_corrected``.

    Parameters
    ----------
    n_splits : int, default 15
        Number of independent train/test splits.
    test_size : float, default 0.1
        Fraction of the instances held out in each split.
    stratified : bool, default True
        Hold out ``test_size`` of each class (classification only).

    References
    ----------
    Nadeau, C., & Bengio, Y. (2003). Inference for the generalization error. Machine
    Learning 52, 239-281.

    Examples
    --------
    >>> import jaxtests
    >>> jaxtests.RandomSplits(5, test_size=0.2)
    RandomSplits(n_splits=5, test_size=0.2, stratified=True)
    """

    n_splits: int = 15
    test_size: float = 0.1
    stratified: bool = True

    def __post_init__(self):
        as_int_scalar(self.n_splits, "n_splits", minimum=2)
        _check_bool(self.stratified, "stratified")
        if not isinstance(self.test_size, numbers.Real) or not 0 < self.test_size < 1:
            raise ValueError(f"`test_size` must be a fraction in (0, 1), got {self.test_size!r}.")

    def split(self, y, key, classification):
        """Return :class:`Splits` with ``R = n_splits`` repetitions of one split each."""
        n = len(y)
        strata = _class_strata(y) if (self.stratified and classification) else np.zeros(n, np.int64)
        sizes = np.bincount(strata)
        n_test = np.maximum(1, np.round(sizes * self.test_size).astype(np.int64))
        if np.any(n_test >= sizes):
            raise ValueError("`cv`: `test_size` leaves no training instance in some class.")
        test = np.zeros((self.n_splits, 1, n), bool)
        for r in range(self.n_splits):
            _, rank = _ranks_within(strata, _uniforms(key, r, n))
            test[r, 0] = rank < n_test[strata]
        return Splits(~test, test)


def _explicit_splits(cv, n):
    folds = list(cv)
    if not folds:
        raise ValueError("`cv` is an empty iterable of (train, test) index pairs.")
    train = np.zeros((1, len(folds), n), bool)
    test = np.zeros((1, len(folds), n), bool)
    for k, pair in enumerate(folds):
        try:
            tr, te = pair
            tr, te = np.asarray(tr), np.asarray(te)
        except (TypeError, ValueError):
            raise ValueError(
                f"`cv`: item {k} is not a (train, test) pair of index arrays."
            ) from None
        for name, idx in (("train", tr), ("test", te)):
            if idx.dtype.kind not in "iu" or idx.ndim != 1 or idx.size == 0:
                raise ValueError(
                    f"`cv`: {name} indices of split {k} must be a non-empty 1-d integer array."
                )
            if idx.min() < 0 or idx.max() >= n:
                raise ValueError(f"`cv`: {name} indices of split {k} out of range [0, {n}).")
        train[0, k, tr] = True
        test[0, k, te] = True
        if np.any(train[0, k] & test[0, k]):
            raise ValueError(f"`cv`: split {k} has instances in both train and test.")
    return Splits(train, test)


def _check_two_classes(y):
    pos = np.asarray(y) > 0
    if pos.all() or not pos.any():
        label = "+1" if pos.all() else "-1"
        raise ValueError(
            f"`y` holds a single class (every label is {label}); classification needs both "
            "±1 labels."
        )


def _check_training_classes(y, splits):
    """Every class in every training set (one class: NaN or infinite decisions)."""
    classes = np.unique(y)
    if classes.size > 2:  # class indices 0 .. C - 1
        counts = np.stack([(splits.train & (np.asarray(y) == c)).sum(-1) for c in classes], -1)
        bad = np.argwhere(counts == 0)
        if bad.size:
            r, k, c = (int(v) for v in bad[0])
            where = f"split {k}" if splits.shape[0] == 1 else f"repetition {r}, split {k}"
            raise ValueError(
                f"`cv`: the training set of {where} has no instance of class index {c}; a "
                "multiclass learner needs every class in every training set (use stratified "
                "or larger folds)."
            )
        return
    pos = np.asarray(y) > 0
    n_pos = (splits.train & pos).sum(-1)
    n_neg = (splits.train & ~pos).sum(-1)
    bad = np.argwhere((n_pos == 0) | (n_neg == 0))
    if bad.size:
        r, k = (int(v) for v in bad[0])
        where = f"split {k}" if splits.shape[0] == 1 else f"repetition {r}, split {k}"
        only = "+1" if n_neg[r, k] == 0 else "-1"
        raise ValueError(
            f"`cv`: the training set of {where} holds only class {only}; a classifier "
            "cannot be fitted without both classes (use stratified or larger folds)."
        )


def _sklearn_splits(cv, X, y):
    """The folds of a scikit-learn splitter (``split(X, y)`` and ``get_n_splits``), as
    :class:`Splits`: ``cv.split(X, y)`` fold by fold, as ``list(cv.split(X, y))`` gives them.

    A repeated splitter (``n_repeats``, as ``RepeatedKFold``) whose folds form ``n_repeats``
    partitions of equal size gives that many repetitions of its ``n_splits`` folds (so the
    tests that pool folds see the repetitions); any other gives one repetition of all its
    folds.
    """
    if X is None:
        raise TypeError("`cv`: pass a scikit-learn splitter as `list(cv.split(X, y))`.")
    try:
        folds = list(cv.split(X, y))
    except (TypeError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        raise ValueError(
            f"`cv`: {type(cv).__name__}.split(X, y) failed ({msg}); a splitter that needs "
            "more (groups=...) is passed as `list(cv.split(X, y, groups))`."
        ) from None
    splits = _explicit_splits(folds, len(y))
    R = getattr(cv, "n_repeats", None)
    if isinstance(R, numbers.Integral) and R > 1 and len(folds) % R == 0:
        K = len(folds) // R
        train = splits.train.reshape(R, K, -1)
        test = splits.test.reshape(R, K, -1)
        if np.all(test.sum(axis=1) == 1):  # each repetition a partition of the instances
            return Splits(train, test)
    return splits


def make_splits(cv, y, key, classification, *, repeats=1, stratified=True, X=None):
    """Resolve ``cv`` (int, splitter, or iterable of (train, test)) into :class:`Splits`.

    A scikit-learn splitter (an object with ``split(X, y)`` and ``get_n_splits``) is
    split on ``X`` and ``y``. For classification, ``y`` and every training set must hold
    every class (``y``: ±1 labels, or class indices ``0 .. C - 1`` with ``C >= 3``).
    """
    if isinstance(cv, bool | str | bytes) or (
        isinstance(cv, numbers.Number) and not isinstance(cv, numbers.Integral)
    ):
        raise TypeError(
            "`cv` must be an int (number of folds), a splitter (KFold, FiveByTwo(), "
            f"RandomSplits) or an iterable of (train, test) index pairs; got "
            f"{type(cv).__name__} {cv!r}."
        )
    if classification:
        _check_two_classes(y)
    if isinstance(cv, numbers.Integral):
        cv = KFold(as_int_scalar(cv, "cv", minimum=2), repeats=repeats, stratified=stratified)
    elif repeats != 1:
        raise ValueError("`repeats` applies only when `cv` is an int; set it on the splitter.")
    if hasattr(cv, "split") and isinstance(cv, KFold | RandomSplits):
        splits = cv.split(y, key, classification)
    elif isinstance(cv, Splits):
        splits = cv
    elif hasattr(cv, "split") and hasattr(cv, "get_n_splits"):
        splits = _sklearn_splits(cv, X, y)
    else:
        try:
            iter(cv)
        except TypeError:
            raise TypeError(
                "`cv` must be an int, a splitter or an iterable of (train, test) index "
                f"pairs; got {type(cv).__name__}."
            ) from None
        splits = _explicit_splits(cv, len(y))
    if classification:
        _check_training_classes(y, splits)
    return splits


def padded_test_index(test):
    """``(R, K, m)`` test indices (padded with 0) and validity mask from masks ``(R, K, n)``."""
    R, K, _n = test.shape
    m = int(test.sum(-1).max())
    index = np.zeros((R, K, m), np.int64)
    valid = np.zeros((R, K, m), bool)
    for r in range(R):
        for k in range(K):
            idx = np.flatnonzero(test[r, k])
            index[r, k, : idx.size] = idx
            valid[r, k, : idx.size] = True
    return index, valid
