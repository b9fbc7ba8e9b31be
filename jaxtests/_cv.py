"""Paired cross-validation: splitters, ``cross_validate`` and its result object.

Every model sees identical folds, so per-fold results are paired (Yildiz &
Alpaydin, "Statistical Tests using Hinge/epsilon-Sensitive Loss", Section 2).
The result keeps the per-instance outputs (decision values of binary
classifiers, predicted class indices of multiclass ones, predictions of
regressors) with their instance indices, so any loss, confusion count or
measure, and any test, is computed afterwards without refitting.

Multiclass labels (three or more distinct values) are encoded as scikit-learn's
``LabelEncoder`` does: the sorted distinct labels become ``0 .. C - 1`` and the
result records them as ``classes``. Two-class labels keep the ±1 convention.
"""

import dataclasses
import functools
import numbers
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _direction, _learners, _models
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import _to_numpy, result, static_field
from jaxtests._validation import (
    as_class_labels,
    as_float_array,
    as_int_scalar,
    as_label_array,
    binary_classes,
    check_choice,
)
from jaxtests.kernels import losses as klosses
from jaxtests.kernels import measures as kmeasures

__all__ = ["CVResult", "FiveByTwo", "KFold", "RandomSplits", "Splits", "cross_validate"]

_LOSSES = ("zero_one", "hinge", "square", "absolute", "epsilon_insensitive", "power")
_CLF_LOSSES = ("zero_one", "hinge")
# every measure of the table (jaxtests.kernels.measures.MEASURES) by name or alias
_MEASURES = _LOSSES + kmeasures.measure_names(aliases=True)
# the losses and measures defined for multiclass results
_MULTICLASS_MEASURES = ("zero_one", *kmeasures.measure_names(multiclass=True))


# ---------------------------------------------------------------- splitters


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


def _uniforms(key, r, n):
    return np.asarray(jax.random.uniform(jax.random.fold_in(key, r), (n,), dtype=jnp.float64))


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


def make_splits(cv, y, key, classification, *, repeats=1, stratified=True):
    """Resolve ``cv`` (int, splitter, or iterable of (train, test)) into :class:`Splits`.

    For classification, ``y`` and every training set must hold every class
    (``y``: ±1 labels, or class indices ``0 .. C - 1`` with ``C >= 3``).
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
        raise TypeError("`cv`: pass a scikit-learn splitter as `list(cv.split(X, y))`.")
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


# ---------------------------------------------------------------- models


def is_builtin(model):
    return isinstance(model, _models.Model)


def model_task(model, name):
    """``"classification"`` or ``"regression"`` for a built-in or scikit-learn model."""
    if is_builtin(model):
        return model.task
    if not (
        hasattr(model, "fit") and (hasattr(model, "predict") or hasattr(model, "decision_function"))
    ):
        raise TypeError(
            f"`models`: {name!r} is neither a jaxtests.models spec nor an estimator with "
            f"fit/predict (got {type(model).__name__})."
        )
    est_type = getattr(model, "_estimator_type", None)
    if est_type is None:
        try:
            est_type = model.__sklearn_tags__().estimator_type
        except AttributeError:
            est_type = None
    return "classification" if est_type == "classifier" else "regression"


def sklearn_outputs(est, X, y, train, test):
    """Fit a clone of ``est`` on ``train`` and return its outputs at ``test``.

    Classifiers: ``decision_function`` if available, else ``2 p - 1`` from
    ``predict_proba`` (same sign as the 0.5 threshold), else the ±1 ``predict``.
    Regressors: ``predict``.
    """
    from sklearn.base import clone

    m = clone(est).fit(X[train], y[train])
    Z = X[test]
    if hasattr(m, "decision_function"):
        f = np.asarray(m.decision_function(Z), np.float64)
    elif hasattr(m, "predict_proba") and hasattr(m, "classes_"):
        pos = int(np.flatnonzero(np.asarray(m.classes_) == 1)[0])
        f = 2 * np.asarray(m.predict_proba(Z), np.float64)[:, pos] - 1
    else:
        f = np.asarray(m.predict(Z), np.float64)
    if f.ndim != 1:
        raise ValueError(
            f"`models`: {type(est).__name__} returned outputs of shape {f.shape}; "
            "only binary classifiers and single-output regressors are supported."
        )
    return f


def sklearn_predictions(est, X, y, train, test, n_classes):
    """Fit a clone of ``est`` on class indices ``y`` at ``train``; predicted indices at ``test``.

    Multiclass: the estimator is fitted on the integer indices ``0 .. C - 1``
    (the sorted classes, so its ``classes_`` are in the same order) and its
    ``predict`` gives the labels.
    """
    from sklearn.base import clone

    codes = np.asarray(y).astype(np.int64)
    m = clone(est).fit(X[train], codes[train])
    p = np.asarray(m.predict(X[test]))
    if p.shape != (len(test),) or not np.all(np.isin(p, np.arange(n_classes))):
        raise ValueError(
            f"`models`: {type(est).__name__}.predict did not return one of the {n_classes} "
            "class indices it was fitted on per instance."
        )
    return p.astype(np.float64)


def _normalise_models(models):
    if isinstance(models, dict):
        items = list(models.items())
    elif isinstance(models, list | tuple):
        items = []
        for m in models:
            base = m.kind if is_builtin(m) else type(m).__name__
            name, i = base, 2
            while name in dict(items):
                name, i = f"{base}_{i}", i + 1
            items.append((name, m))
    else:
        raise TypeError("`models` must be a dict name -> model or a list of models.")
    if not items:
        raise ValueError("`models` is empty.")
    for name, _ in items:
        if not isinstance(name, str):
            raise TypeError(f"`models`: names must be str, got {name!r}.")
    return items


# ---------------------------------------------------------------- test table


class _CVTest(NamedTuple):
    """How a ``CVResult`` test method reaches its test: see ``CVResult._test``."""

    function: str  # the public ``jaxtests`` function called
    design: str = "any"  # "independent": refuse pooled repetitions; "5x2": FiveByTwo() only
    alternative: str | None = None  # what the pooling refusal suggests instead
    names_from: str | None = None  # the result's ``names`` come from here, not from kwargs
    measures: bool = False  # takes a sequence of measure names


_PER_REPETITION = "one test per repetition"

_CV_TESTS = {
    "ttest_paired": _CVTest("ttest_paired", "independent"),
    "ttest_5x2cv": _CVTest("ttest_5x2cv", "5x2"),
    "ftest_5x2cv": _CVTest("ftest_5x2cv", "5x2"),
    "ttest_corrected": _CVTest("ttest_corrected"),
    "hotelling_t2": _CVTest("hotelling_t2", "independent", _PER_REPETITION, "`measures`", True),
    "anova": _CVTest("anova", "independent", _PER_REPETITION),
    "manova": _CVTest("manova", "independent", _PER_REPETITION, "`measures`", True),
    "posthoc": _CVTest("posthoc", "independent", _PER_REPETITION, "the model names"),
    "signflip_test": _CVTest("signflip_test"),
    "signflip_test_folds": _CVTest(
        "signflip_test",
        "independent",
        "`signflip_test` (per-instance differences, averaged over repetitions)",
    ),
}


# ---------------------------------------------------------------- confusion matrices


@functools.partial(jax.jit, static_argnames=("n_classes", "binary"))
def _fold_confusion(yt, f, valid, n_classes, binary):
    """Per-fold confusion matrices ``(R, K, C, C)`` (rows true class) from ``(R, K, m)``.

    Binary: ±1 labels and decision values, class 0 is -1 and a value is +1 iff
    ``> 0``; multiclass: class indices. Padding counts nowhere.
    """
    if binary:
        t, p = (yt > 0).astype(f.dtype), (f > 0).astype(f.dtype)
    else:
        t, p = yt, f
    cls = jnp.arange(n_classes, dtype=f.dtype).reshape((1,) * t.ndim + (n_classes,))
    T = ((t[..., None] == cls) & valid[..., None]).astype(jnp.float64)
    P = (p[..., None] == cls).astype(jnp.float64)
    return jnp.einsum("rkmi,rkmj->rkij", T, P)


@functools.partial(jax.jit, static_argnames="measure")
def _classes_measure(cm, measure):
    """A multiclass measure of confusion matrices ``(..., C, C)`` (rows true class)."""
    return kmeasures.MEASURES[measure].classes(kmeasures.class_counts(cm), jnp.nan, -1)


@functools.partial(jax.jit, static_argnames="measure")
def _binary_measure(c, measure):
    """A measure of binary confusion counts (fields ``(...)``), 0/0 of a ratio NaN."""
    return kmeasures.MEASURES[measure].of_binary(c, jnp.nan)


# ---------------------------------------------------------------- result


def _numpy_out(method):
    """Return ``method``'s arrays as numpy (named tuples keep their type), as scipy does.

    A float64 ``jax.Array`` outside x64 warns in ``np.mean`` and truncates; numpy
    arrays do neither (issue 28.4). Tracers pass through unchanged.
    """

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        return jax.tree_util.tree_map(_to_numpy, method(*args, **kwargs))

    return wrapper


@result
class CVResult:
    """Per-instance outputs of several models on identical cross-validation folds.

    Attributes
    ----------
    outputs : (M, R, K, m) array
        Decision values (binary classifiers), predicted class indices
        (multiclass) or predictions (regressors) of model ``M`` on the test
        instances of fold ``K`` of repetition ``R``; padded to ``m``.
    index : (R, K, m) int array
        Instance index (row of ``X``) of each output; padding entries are 0.
    valid : (R, K, m) bool array
        False on padding.
    y : (n,) array
        Targets: ±1 (binary), class indices ``0 .. C - 1`` (multiclass) or reals.
    n_train : (R, K) int array
        Training-set sizes.
    names, task, seed : the model names, ``"classification"``/``"regression"``, the seed.
    classes : tuple or None
        Multiclass: the sorted distinct labels, ``classes[i]`` encoded as ``i``;
        None for binary (±1) and regression results.
    binary_classes : tuple or None
        Binary: the two labels as given, ``(negative, positive)`` (encoded -1 and +1;
        the later of the sorted values is positive, as scikit-learn's), e.g.
        ``("benign", "malignant")`` or ``(-1, 1)``; None otherwise.
    """

    outputs: jax.Array
    index: jax.Array
    valid: jax.Array
    y: jax.Array
    n_train: jax.Array
    names: tuple = static_field()
    task: str = static_field()
    seed: object = static_field(default=None)
    classes: tuple | None = static_field(default=None)
    binary_classes: tuple | None = static_field(default=None)

    @property
    def n_classes(self):
        """Number of classes: 2 for binary, ``len(classes)`` for multiclass, None for regression."""
        if self.task != "classification":
            return None
        return 2 if self.classes is None else len(self.classes)

    def _refuse_multiclass(self, what, instead):
        if self.classes is not None:
            raise ValueError(
                f"{what} is binary only; this is a multiclass result ({len(self.classes)} "
                f"classes): {instead}"
            )

    # ---- access
    def _m(self, name):
        if name not in self.names:
            raise ValueError(f"unknown model {name!r}; models are {list(self.names)}.")
        return self.names.index(name)

    def instance_outputs(self, name):
        """``(outputs, index, valid)`` for model ``name``, each ``(R, K, m)``.

        Parameters
        ----------
        name : str
            Model name.

        Returns
        -------
        outputs, index, valid : (R, K, m) arrays
            Decision values (classifiers) or predictions (regressors), the
            instance index of each entry, and whether it is a real entry (folds
            of unequal size are padded).

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> outputs, index, valid = cv.instance_outputs("lda")
        >>> outputs.shape
        (1, 5, 8)
        """
        return self.outputs[self._m(name)], self.index, self.valid

    def _targets(self):
        return self.y[self.index]

    def _default_loss(self, loss):
        """``None`` -> the task's default loss: 0/1 for classifiers, square for regressors."""
        if loss is None:
            return "zero_one" if self.task == "classification" else "square"
        return loss

    @_numpy_out
    @x64
    def instance_losses(self, name, loss=None, **loss_kwargs):
        """Per-instance losses ``(R, K, m)`` (NaN on padding).

        ``loss`` is a name of ``jaxtests.losses`` (``"zero_one"``, ``"hinge"``,
        ``"square"``, ``"absolute"``, ``"epsilon_insensitive"`` with
        ``epsilon=``, ``"power"`` with ``p=``) or a callable ``loss(y, f)``;
        ``None`` is ``"zero_one"`` for classifiers and ``"square"`` for
        regressors. A decision value ``f = 0`` predicts -1 (scikit-learn's
        rule), in the 0/1 loss as in :meth:`confusion`. Multiclass results
        hold predicted classes, not margins: only ``"zero_one"`` (prediction
        ``!=`` label) is defined, the other losses are refused; a callable gets
        the class indices ``(y, prediction)``.

        Parameters
        ----------
        name : str
            Model name.
        loss : str, callable or None, default None
            The loss (see above).
        **loss_kwargs
            Keywords of the loss (``epsilon=``, ``p=``).

        Returns
        -------
        (R, K, m) numpy.ndarray
            Losses (float64), NaN on padding entries.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> cv.instance_losses("lda", "hinge").shape
        (1, 5, 8)
        """
        loss = self._default_loss(loss)
        f = self.outputs[self._m(name)]
        yt = self._targets()
        if callable(loss):
            val = loss(yt, f, **loss_kwargs)
        else:
            check_choice(loss, "loss", _LOSSES)
            if loss in _CLF_LOSSES and self.task != "classification":
                raise ValueError(
                    f"`loss`={loss!r} needs ±1 labels; this is a regression result (use "
                    "'square', 'absolute', 'epsilon_insensitive' or 'power')."
                )
            if loss != "zero_one":
                self._refuse_multiclass(
                    f"`loss`={loss!r}",
                    "its outputs are predicted classes, not decision values; use 'zero_one' "
                    "(or a callable loss of the class indices).",
                )
            need = {"epsilon_insensitive": "epsilon", "power": "p"}.get(loss)
            if need is not None and need not in loss_kwargs:
                raise ValueError(f"`loss`={loss!r} needs the keyword `{need}`.")
            if self.classes is not None:  # multiclass 0/1 loss: prediction != label
                val = jnp.where(f == yt, 0.0, 1.0)
            else:
                val = getattr(klosses, loss)(yt, f, **loss_kwargs)
        return jnp.where(self.valid, jnp.asarray(val, jnp.float64), jnp.nan)

    @_numpy_out
    @x64
    def fold_losses(self, name, loss=None, *, reduce="mean", **loss_kwargs):
        """Per-fold mean (or ``reduce="sum"``, total) loss, ``(R, K)``.

        Parameters
        ----------
        name : str
            Model name.
        loss : str, callable or None, default None
            As in :meth:`instance_losses` (default: 0/1 for classifiers, square
            for regressors).
        reduce : {"mean", "sum"}, default "mean"
            Mean loss per fold, or the total (as Yildiz & Alpaydin).
        **loss_kwargs
            Keywords of the loss.

        Returns
        -------
        (R, K) numpy.ndarray
            float64.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive
        Loss".

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> cv.fold_losses("lda", "zero_one")
        array([[0.375, 0.375, 0.5  , 0.25 , 0.375]])
        """
        check_choice(reduce, "reduce", ("mean", "sum"))
        li = jnp.where(self.valid, self.instance_losses(name, loss, **loss_kwargs), 0.0)
        tot = jnp.sum(li, axis=-1)
        return tot if reduce == "sum" else tot / jnp.sum(self.valid, axis=-1, dtype=jnp.float64)

    def _need_clf(self, what):
        if self.task != "classification":
            raise ValueError(f"{what} needs a classification result (±1 labels).")

    @_numpy_out
    @x64
    def confusion(self, name):
        """Per-fold confusion counts ``(tp, fn, fp, tn)``, each ``(R, K)``.

        An instance is predicted +1 iff its decision value is ``> 0``; ``f = 0``
        predicts -1, as scikit-learn's ``predict`` from ``decision_function``
        and as the 0/1 loss, so ``fold_scores(name, "error")`` equals
        ``fold_losses(name, "zero_one")``.

        Parameters
        ----------
        name : str
            Model name (of a classification result).

        Returns
        -------
        ConfusionCounts
            Named tuple ``(tp, fn, fp, tn)`` of float64 ``(R, K)`` numpy arrays.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> c = cv.confusion("lda")
        >>> c.tp + c.fn + c.fp + c.tn
        array([[8., 8., 8., 8., 8.]])
        """
        self._need_clf("`confusion`")
        self._refuse_multiclass("`confusion`", "use `confusion_matrix`.")
        f = self.outputs[self._m(name)]
        yt = jnp.where(self.valid, self._targets(), 0.0)  # padding: neither class
        t = yt > 0
        p = f > 0
        v = self.valid
        return kmeasures.ConfusionCounts(
            jnp.sum(v & t & p, -1, dtype=jnp.float64),
            jnp.sum(v & t & ~p, -1, dtype=jnp.float64),
            jnp.sum(v & ~t & ~(yt == 0) & p, -1, dtype=jnp.float64),
            jnp.sum(v & ~t & ~(yt == 0) & ~p, -1, dtype=jnp.float64),
        )

    @_numpy_out
    @x64
    def confusion_matrix(self, name):
        """Per-fold confusion matrices ``(R, K, C, C)``, rows true class, columns predicted.

        Multiclass: class ``i`` is ``classes[i]``. Binary: class 0 is -1 and
        class 1 is +1 (predicted iff the decision value is ``> 0``), so
        ``cm[..., 1, 1]`` is ``tp`` of :meth:`confusion`.

        Parameters
        ----------
        name : str
            Model name (of a classification result).

        Returns
        -------
        (R, K, C, C) numpy.ndarray

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(60, 2))
        >>> y = np.digitize(X[:, 0] + rng.normal(size=60), [-0.5, 0.5])  # classes 0, 1, 2
        >>> cv = jaxtests.cross_validate({"lda": models.lda()}, X, y, cv=5, key=0)
        >>> cv.classes, cv.confusion_matrix("lda").shape
        ((0, 1, 2), (1, 5, 3, 3))
        """
        self._need_clf("`confusion_matrix`")
        f = self.outputs[self._m(name)]
        return _fold_confusion(self._targets(), f, self.valid, self.n_classes, self.classes is None)

    @_numpy_out
    @x64
    def fold_scores(self, name, measure):
        """Per-fold value ``(R, K)`` of a measure or a mean loss.

        ``measure``: a loss name (mean loss) or a measure of the table
        ``jaxtests.kernels.measures.MEASURES`` (by name or alias): a confusion
        count (``"tp"``...), ``"tpr"``/``"recall"``, ``"fpr"``, ``"precision"``,
        ``"specificity"``, ``"accuracy"``, ``"error"``, ``"f1"``, ``"roc_auc"``
        or ``"average_precision"`` (classification), or ``"rmse"``
        (regression); from the confusion matrix, ``"balanced_accuracy"`` (mean
        recall over the classes present in the fold), ``"precision_macro"``,
        ``"recall_macro"`` and ``"f1_macro"`` (scikit-learn's
        ``average="macro"``: unweighted mean over the classes true or predicted
        in the fold, 0 for a zero division) and ``"mcc"`` (Matthews correlation,
        scikit-learn's ``matthews_corrcoef``: 0 where the fold's true or
        predicted labels are all one class). Multiclass results take
        ``"zero_one"``, ``"accuracy"``, ``"error"`` and the five matrix
        measures; the binary ones are refused.

        Parameters
        ----------
        name : str
            Model name.
        measure : str
            The measure or loss name (see above).

        Returns
        -------
        (R, K) numpy.ndarray
            float64.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> cv.fold_scores("lda", "tpr")
        array([[0.5 , 0.75, 0.5 , 0.8 , 0.8 ]])
        """
        return self._fold_scores(name, measure, "measure")

    @x64
    def _fold_scores(self, name, measure, arg):
        """:meth:`fold_scores` with errors naming the caller's argument ``arg``."""
        if isinstance(measure, str) and measure in _LOSSES:
            return self.fold_losses(name, measure)
        if not isinstance(measure, str):
            raise TypeError(
                f"`{arg}` must be a loss or measure name (or a callable loss), got "
                f"{type(measure).__name__}."
            )
        check_choice(measure, arg, _MEASURES)
        row = kmeasures.measure(measure)
        if row.source == "targets":
            if self.task != "regression":
                raise ValueError(f"`{arg}`={measure!r} needs a regression result.")
            return jnp.sqrt(self.fold_losses(name, "square"))
        self._need_clf(f"`{arg}`={measure!r}")
        if not row.multiclass:
            self._refuse_multiclass(
                f"`{arg}`={measure!r}",
                f"use one of {list(_MULTICLASS_MEASURES)} (e.g. measures=('recall_macro', "
                "'precision_macro') for the multivariate tests).",
            )
        if self.classes is not None:
            return _classes_measure(self.confusion_matrix(name), row.name)
        if row.source == "scores":
            f = self.outputs[self._m(name)]
            # the per-fold computation uses only the valid entries (padding
            # would add negatives)
            out = np.empty(self.index.shape[:2])
            fn = getattr(kmeasures, row.name)
            for r in range(out.shape[0]):
                for k in range(out.shape[1]):
                    v = np.asarray(self.valid[r, k])
                    out[r, k] = float(fn(self._targets()[r, k][v], f[r, k][v]))
            return jnp.asarray(out)
        # binary ratios of undefined 0/0 are NaN (jaxtests.measures' default)
        return _binary_measure(self.confusion(name), row.name)

    def _losses_pair(self, a, b, loss, loss_kwargs):
        kw = loss_kwargs or {}
        return self.fold_scores_any(a, loss, kw), self.fold_scores_any(b, loss, kw)

    @_numpy_out
    @x64
    def fold_scores_any(self, name, what, loss_kwargs=None):
        """Per-fold ``(R, K)`` value of a loss (name or callable, with kwargs) or a measure.

        ``what=None`` is the task's default loss (0/1 or square); errors name
        the argument ``loss``.

        Parameters
        ----------
        name : str
            Model name.
        what : str, callable or None
            A loss (name or callable) or a measure name.
        loss_kwargs : dict, optional
            Keywords of the loss.

        Returns
        -------
        (R, K) numpy.ndarray
            float64.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> cv.fold_scores_any("lda", "power", {"p": 0.5}).shape
        (1, 5)
        """
        what = self._default_loss(what)
        if loss_kwargs is not None and not isinstance(loss_kwargs, dict):
            raise TypeError(f"`loss_kwargs` must be a dict, got {type(loss_kwargs).__name__}.")
        if callable(what) or (what in _LOSSES and loss_kwargs):
            return self.fold_losses(name, what, **(loss_kwargs or {}))
        if loss_kwargs:
            raise ValueError(f"`loss_kwargs` apply to a loss; `loss`={what!r} takes none.")
        return self._fold_scores(name, what, "loss")

    # ---- tests
    def _test(self, method, kwargs, pool_repetitions=False, measures=None):
        """Shared plumbing of the test methods, from their row of ``_CV_TESTS``.

        Checks, in this order: a ``names`` keyword the result sets itself,
        ``measures``, the design (pooled repetitions, 5x2 cv). Returns the
        public test function and the validated ``measures`` tuple.
        """
        import jaxtests

        row = _CV_TESTS[method]
        if row.names_from is not None:
            self._no_names(kwargs, row.names_from)
        if row.measures:
            measures = self._measures_iv(measures)
        if row.design == "independent":
            self._check_pooling(method, pool_repetitions, alternative=row.alternative)
        elif row.design == "5x2":
            self._check_5x2()
        return getattr(jaxtests, row.function), measures

    def _check_pooling(self, test, pool_repetitions, *, alternative=None):
        """Refuse to pool the folds of several repetitions unless asked explicitly."""
        if not isinstance(pool_repetitions, bool):
            raise TypeError(
                f"`pool_repetitions` must be a bool, got {type(pool_repetitions).__name__}."
            )
        R, K = (int(v) for v in self.index.shape[:2])
        if R == 1 or pool_repetitions:
            return
        design = "5x2 cv" if (R, K) == (5, 2) else f"{R} repetitions x {K} folds"
        use = alternative or "`ttest_corrected` for a pair of models"
        if (R, K) == (5, 2) and alternative is None:
            use = "`ttest_5x2cv` / `ftest_5x2cv` (this is 5x2 cv) or `ttest_corrected`"
        raise ValueError(
            f"`{test}` would pool the {R * K} folds of a {design} design as if they were "
            "independent, but the repetitions reuse the same instances for training and "
            f"testing, so its p-value is far too small. Use {use}; or pass "
            "pool_repetitions=True to pool anyway."
        )

    @x64
    def ttest_paired(self, a, b, *, loss=None, loss_kwargs=None, pool_repetitions=False, **kwargs):
        """Paired t test on the per-fold losses of models ``a`` and ``b``.

        Yildiz & Alpaydin's eq. 5. With more than one repetition (``repeats >
        1``, ``FiveByTwo()``, ``RandomSplits``) the folds overlap and are not
        independent: this refuses unless ``pool_repetitions=True``; use
        ``ttest_corrected`` (Nadeau & Bengio) or the 5x2 cv tests.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.
        **kwargs
            Passed to :func:`jaxtests.ttest_paired` (``alternative``...).

        Returns
        -------
        TtestResult
            As :func:`jaxtests.ttest_paired`.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive
        Loss".

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.ttest_paired("lda", "nc", loss="hinge")
        >>> round(float(r.pvalue), 4)
        0.4827
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ttest_paired", kwargs, pool_repetitions)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return test(la.ravel(), lb.ravel(), **kwargs)

    def _check_5x2(self):
        if tuple(self.index.shape[:2]) != (5, 2):
            raise ValueError(
                f"5x2 cv tests need 5 repetitions of 2 folds (cv=FiveByTwo()); got "
                f"{tuple(self.index.shape[:2])}."
            )

    @x64
    def ttest_5x2cv(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Dietterich's 5x2 cv t test on per-fold losses ``(5, 2)``.

        Needs ``cv=FiveByTwo()``.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        **kwargs
            Passed to :func:`jaxtests.ttest_5x2cv`.

        Returns
        -------
        Ttest5x2cvResult
            As :func:`jaxtests.ttest_5x2cv`.

        References
        ----------
        Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
        classification learning algorithms. Neural Computation 10, 1895-1923.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y,
        ...     cv=jaxtests.FiveByTwo(), key=0)
        >>> round(float(cv.ttest_5x2cv("lda", "nc").pvalue), 4)
        1.0
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ttest_5x2cv", kwargs)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return test(la, lb, **kwargs)

    @x64
    def ftest_5x2cv(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Alpaydın's combined 5x2 cv F test on per-fold losses ``(5, 2)``.

        Needs ``cv=FiveByTwo()``.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        **kwargs
            Passed to :func:`jaxtests.ftest_5x2cv`.

        Returns
        -------
        Ttest5x2cvResult
            As :func:`jaxtests.ftest_5x2cv`.

        References
        ----------
        Alpaydin, E. (1999). Combined 5x2 cv F test for comparing supervised
        classification learning algorithms. Neural Computation 11, 1885-1892.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y,
        ...     cv=jaxtests.FiveByTwo(), key=0)
        >>> round(float(cv.ftest_5x2cv("lda", "nc").pvalue), 4)
        0.215
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ftest_5x2cv", kwargs)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return test(la, lb, **kwargs)

    @x64
    def ttest_corrected(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Nadeau–Bengio corrected resampled t test over all ``R * K`` splits.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        **kwargs
            Passed to :func:`jaxtests.ttest_corrected` (``n_train``/``n_test``
            are taken from the splits).

        Returns
        -------
        TtestResult
            As :func:`jaxtests.ttest_corrected`.

        References
        ----------
        Nadeau, C., & Bengio, Y. (2003). Inference for the generalization error. Machine
        Learning 52, 239-281.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y,
        ...     cv=jaxtests.RandomSplits(5, 0.2), key=0)
        >>> round(float(cv.ttest_corrected("lda", "nc").pvalue), 4)
        0.2272
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("ttest_corrected", kwargs)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        n_train = int(np.asarray(self.n_train).ravel()[0])
        n_test = int(np.asarray(self.valid).sum(-1).ravel()[0])
        return test(la.ravel(), lb.ravel(), n_train=n_train, n_test=n_test, **kwargs)

    @staticmethod
    def _measures_iv(measures):
        if isinstance(measures, str) or not hasattr(measures, "__iter__"):
            raise TypeError("`measures` must be a sequence of measure names, e.g. ('tpr', 'fpr').")
        return tuple(measures)

    @x64
    def _measure_matrix(self, name, measures):
        measures = self._measures_iv(measures)
        cols = [self._fold_scores(name, m, "measures").ravel() for m in measures]
        return jnp.stack(cols, axis=-1)  # (R*K, p)

    @staticmethod
    def _no_names(kwargs, source):
        if "names" in kwargs:
            raise TypeError(f"`names` is set from {source}; do not pass it.")

    @x64
    def hotelling_t2(self, a, b, *, measures=("tpr", "fpr"), pool_repetitions=False, **kwargs):
        """Paired Hotelling T² on per-fold measure vectors ``(R*K, p)``.

        As Yildiz & Alpaydin ("Multivariate Comparison of Classification
        Algorithms"). The result's ``names`` are the measures.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        measures : sequence of str, default ("tpr", "fpr")
            Measure names, one column each (see :meth:`fold_scores`).
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.
        **kwargs
            Passed to :func:`jaxtests.hotelling_t2`.

        Returns
        -------
        HotellingResult
            As :func:`jaxtests.hotelling_t2`.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification
        Algorithms".

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.hotelling_t2("lda", "nc", measures=("tpr", "fpr"))
        >>> r.names, round(float(r.pvalue), 4)
        (('tpr', 'fpr'), 0.4648)
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, measures = self._test("hotelling_t2", kwargs, pool_repetitions, measures)
        return test(
            self._measure_matrix(a, measures),
            self._measure_matrix(b, measures),
            names=measures,
            **kwargs,
        )

    def _names(self, models):
        if models is None:
            return list(self.names)
        if isinstance(models, str) or not hasattr(models, "__iter__"):
            raise TypeError("`models` must be a sequence of model names (or None for all).")
        for m in models:
            self._m(m)
        return list(models)

    @x64
    def anova(self, models=None, *, loss=None, loss_kwargs=None, pool_repetitions=False, **kwargs):
        """One-way ANOVA on per-fold losses, ``x : (L, R*K)``.

        Parameters
        ----------
        models : sequence of str or None, default None
            Model names (``None``: all).
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.
        **kwargs
            Passed to :func:`jaxtests.anova`.

        Returns
        -------
        AnovaResult
            As :func:`jaxtests.anova`.

        References
        ----------
        Montgomery, D. C. (2009). Design and Analysis of Experiments, ch. 3.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> round(float(cv.anova(loss="hinge").pvalue), 4)
        0.7668
        """
        self._names(models)  # an unknown name first, then the design
        test, _ = self._test("anova", kwargs, pool_repetitions)
        x = jnp.stack(
            [self.fold_scores_any(m, loss, loss_kwargs).ravel() for m in self._names(models)]
        )
        return test(x, **kwargs)

    @x64
    def manova(self, models=None, *, measures=("tpr", "fpr"), pool_repetitions=False, **kwargs):
        """MANOVA on per-fold measure vectors, ``x : (L, R*K, p)``.

        As Yildiz & Alpaydin ("Multivariate Comparison of Classification
        Algorithms"). The result's ``names`` are the measures.

        Parameters
        ----------
        models : sequence of str or None, default None
            Model names (``None``: all).
        measures : sequence of str, default ("tpr", "fpr")
            Measure names, one column each.
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.
        **kwargs
            Passed to :func:`jaxtests.manova`.

        Returns
        -------
        ManovaResult
            As :func:`jaxtests.manova`.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification
        Algorithms".

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> round(float(cv.manova().pvalue), 4)
        0.8524
        """
        self._names(models)  # an unknown name first, then the design
        test, measures = self._test("manova", kwargs, pool_repetitions, measures)
        x = jnp.stack([self._measure_matrix(m, measures) for m in self._names(models)])
        return test(x, names=measures, **kwargs)

    @x64
    def posthoc(
        self,
        models=None,
        *,
        test="t",
        loss=None,
        loss_kwargs=None,
        measures=None,
        pool_repetitions=False,
        higher_is_better=None,
        **kwargs,
    ):
        """Pairwise post hoc tests among models, named by the model names.

        ``test="t"`` or ``"permutation"``: per-fold losses ``x : (L, R*K)`` of
        ``loss`` (default 0/1 for classifiers, square for regressors).
        ``test="hotelling"``: per-fold measure vectors ``x : (L, R*K, p)`` of
        ``measures`` (default ``("tpr", "fpr")``).

        Parameters
        ----------
        models : sequence of str or None, default None
            Model names (``None``: all).
        test : {"t", "permutation", "hotelling"}, default "t"
            The pairwise test.
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        measures : sequence of str, optional
            Measures of ``test="hotelling"`` (default ``("tpr", "fpr")``).
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.
        higher_is_better : bool or None, default None
            Direction of the ordering (best first); ``None`` takes it from ``loss``:
            losses, ``error``, ``fpr`` and ``rmse`` are lower-is-better, ``accuracy``,
            ``tpr``, ``f1``, ``roc_auc`` and the other rates higher-is-better
            (``jaxtests._direction``).
        **kwargs
            Passed to :func:`jaxtests.posthoc` (``correction``, ``alpha``...).

        Returns
        -------
        PosthocResult
            As :func:`jaxtests.posthoc`; its ``text()`` says which way is better.

        References
        ----------
        Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification
        Algorithms" (§2.2, §3.5).

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> print(cv.posthoc(loss="hinge").text())  # doctest: +ELLIPSIS
        Pairwise t tests, holm correction, alpha = 0.05
        ...
        """
        self._names(models)  # an unknown name first, then the design
        run, _ = self._test("posthoc", kwargs, pool_repetitions)
        names = self._names(models)
        if test == "hotelling":
            if loss is not None or loss_kwargs is not None:
                raise ValueError(
                    "`loss` applies to test='t' or 'permutation'; test='hotelling' compares "
                    "the `measures` vectors."
                )
            measures = ("tpr", "fpr") if measures is None else self._measures_iv(measures)
            x = jnp.stack([self._measure_matrix(m, measures) for m in names])
        else:
            if measures is not None:
                raise ValueError(
                    f"`measures` applies to test='hotelling'; test={test!r} compares one "
                    "`loss` (or measure) per fold."
                )
            x = jnp.stack([self.fold_scores_any(m, loss, loss_kwargs).ravel() for m in names])
        if higher_is_better is None:  # from the measure; hotelling has no ordering
            higher_is_better = bool(_direction.higher_is_better(self._default_loss(loss), False))
        return run(x, test=test, names=tuple(names), higher_is_better=higher_is_better, **kwargs)

    @staticmethod
    def _check_resamples_used(res, kwargs, what):
        """A given ``n_resamples`` must be honoured: refuse an exact or closed-form result."""
        if "n_resamples" in kwargs and res.method != "monte-carlo":
            raise ValueError(
                f"`n_resamples`={kwargs['n_resamples']!r} is not used: the {what} "
                f"gave the {res.method!r} p-value (no random draws). Drop `n_resamples`, or "
                "pass method='monte-carlo' to draw them."
            )

    @x64
    def instance_differences(self, a, b, loss=None, **loss_kwargs):
        """Per-instance loss differences ``loss_a - loss_b``, ``(n_tested,)``, by instance index.

        Both models are scored on the identical test instances. An instance
        tested in several repetitions gets the mean of its differences (the
        repetitions are not independent draws); instances never tested are
        left out.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            A per-instance loss name or callable (default: 0/1 for classifiers,
            square for regressors).
        **loss_kwargs
            Keywords of the loss.

        Returns
        -------
        (n_tested,) numpy.ndarray
            Differences, ordered by instance index.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> cv.instance_differences("lda", "nc", "hinge").shape
        (40,)
        """
        loss = self._default_loss(loss)
        if not (callable(loss) or (isinstance(loss, str) and loss in _LOSSES)):
            raise ValueError(
                f"`loss`={loss!r} is not a per-instance loss: use one of {list(_LOSSES)} or a "
                "callable loss(y, f); per-fold measures go to `signflip_test_folds`."
            )
        d = np.asarray(
            self.instance_losses(a, loss, **loss_kwargs)
            - self.instance_losses(b, loss, **loss_kwargs)
        )
        valid = np.asarray(self.valid)
        index = np.asarray(self.index)[valid]
        n = int(self.y.shape[0])
        count = np.bincount(index, minlength=n)
        total = np.bincount(index, weights=d[valid], minlength=n)
        tested = count > 0
        return total[tested] / count[tested]

    @x64
    def mcnemar(self, a, b, *, repetition=None, **kwargs):
        """McNemar's test of equal error rates of models ``a`` and ``b`` on the same instances.

        The predictions of the two classifiers on every test instance of one
        cross-validation run (each instance tested once, by the model of its fold) are
        compared with the true labels: ``n01`` instances only ``a`` gets right, ``n10``
        only ``b`` (Dietterich 1998 on one test set; here the test folds together).
        Binary: a decision value ``> 0`` predicts the positive class; multiclass: the
        predicted classes.

        Parameters
        ----------
        a, b : str
            Model names.
        repetition : int or None, default None
            Which repetition of a repeated cross-validation to test (its instances are
            tested once each); ``None`` for a single run, refused over several.
        **kwargs
            Passed to :func:`jaxtests.mcnemar` (``method``, ``correction``).

        Returns
        -------
        McNemarResult
            As :func:`jaxtests.mcnemar`.

        References
        ----------
        McNemar, Q. (1947). Psychometrika 12, 153-157. Dietterich, T. G. (1998).
        Approximate statistical tests for comparing supervised classification learning
        algorithms. Neural Computation 10.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.mcnemar("lda", "nc")  # each right once where the other is wrong
        >>> int(r.n01), int(r.n10), float(r.pvalue)
        (1, 1, 1.0)
        """
        import jaxtests

        self._need_clf("`mcnemar`")
        ia, ib = self._m(a), self._m(b)
        R = int(self.index.shape[0])
        if repetition is None:
            if R > 1:
                raise ValueError(
                    f"`mcnemar` compares the predictions of one cross-validation run; this "
                    f"result has {R} repetitions (or random splits) whose test sets reuse the "
                    f"same instances. Pick one with `repetition=` (0 to {R - 1})."
                )
            r = 0
        else:
            r = as_int_scalar(repetition, "repetition", minimum=0)
            if r >= R:
                raise ValueError(f"`repetition` must be below {R}, got {r}.")
        valid = np.asarray(self.valid[r])
        idx = np.asarray(self.index[r])[valid]
        if np.unique(idx).size != idx.size:
            raise ValueError(
                "`mcnemar` needs each instance tested once; the test sets of these folds "
                "overlap. Use k-fold cross-validation, or per-instance losses with "
                "`signflip_test`."
            )
        y = np.asarray(self.y)[idx]
        fa = np.asarray(self.outputs[ia, r])[valid]
        fb = np.asarray(self.outputs[ib, r])[valid]
        if self.classes is None:  # binary: +1 iff the decision value is > 0
            y, pa, pb = (np.where(v > 0, 1, -1) for v in (y, fa, fb))
        else:
            y, pa, pb = (v.astype(np.int64) for v in (y, fa, fb))
        return jaxtests.mcnemar(y, pa, pb, **kwargs)

    @x64
    def signflip_test(self, a, b, *, loss=None, loss_kwargs=None, **kwargs):
        """Sign-flip permutation test on the paired per-instance loss differences.

        ``d_i = loss_a(i) - loss_b(i)`` on every tested instance ``i`` (Hein),
        from :meth:`instance_differences`: ``n`` differences for k-fold
        cv, each instance's mean over the repetitions when ``repeats > 1``.
        ``loss`` is a loss name or callable (default 0/1 for classifiers, square
        for regressors); ``kwargs`` go to :func:`jaxtests.signflip_test`. A
        given ``n_resamples`` must be used: if the p-value comes out exact or
        binomial (0/1 loss differences take only -1, 0, +1), this raises; drop
        ``n_resamples`` or pass ``method="monte-carlo"``. For the per-fold
        differences use :meth:`signflip_test_folds`.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            Per-instance loss (see above).
        loss_kwargs : dict, optional
            Keywords of the loss.
        **kwargs
            Passed to :func:`jaxtests.signflip_test` (``n_resamples``, ``key``...).

        Returns
        -------
        PermutationTestResult
            As :func:`jaxtests.signflip_test`.

        References
        ----------
        Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
        University, 2013.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.signflip_test("lda", "nc")  # 0/1 differences: a binomial p-value
        >>> r.method, round(float(r.pvalue), 4)
        ('binomial', 1.0)
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("signflip_test", kwargs)
        d = self.instance_differences(a, b, loss, **(loss_kwargs or {}))
        res = test(d, **kwargs)
        self._check_resamples_used(res, kwargs, f"test of the {d.size} per-instance differences")
        return res

    @x64
    def signflip_test_folds(
        self, a, b, *, loss=None, loss_kwargs=None, pool_repetitions=False, **kwargs
    ):
        """Sign-flip permutation test on the per-fold loss (or measure) differences ``(R*K,)``.

        With few folds "auto" enumerates all ``2^(R K)`` patterns exactly; a
        given ``n_resamples`` must then be dropped (or ``method="monte-carlo"``
        passed), as in :meth:`signflip_test`.

        Parameters
        ----------
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.
        **kwargs
            Passed to :func:`jaxtests.signflip_test`.

        Returns
        -------
        PermutationTestResult
            As :func:`jaxtests.signflip_test`.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.signflip_test_folds("lda", "nc", loss="hinge")
        >>> r.method, round(float(r.pvalue), 4)
        ('exact', 0.6875)
        """
        self._m(a), self._m(b)  # an unknown name first, then the design
        test, _ = self._test("signflip_test_folds", kwargs, pool_repetitions)
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        res = test((la - lb).ravel(), **kwargs)
        self._check_resamples_used(res, kwargs, f"test of the {la.size} per-fold differences")
        return res

    # ---- one test set: per-instance bootstrap, DeLong, Cochran's Q

    def _pooled(self, names, what, *, pool_folds=True):
        """Targets and outputs ``(n_tested,)`` by instance index, each instance tested once."""
        R, K = (int(v) for v in self.index.shape[:2])
        if R > 1:
            raise ValueError(
                f"{what} reads each instance's one output, but this result has {R} repetitions "
                "(each instance is tested in each): use a result of one repetition."
            )
        if not pool_folds and K > 1:
            raise ValueError(
                f"{what} would pool the scores of {K} folds, each from its own model, into one "
                "ranking (scores of different models need not be comparable); pass "
                "pool_folds=True to pool them anyway."
            )
        if not isinstance(pool_folds, bool):
            raise TypeError(f"`pool_folds` must be a bool, got {type(pool_folds).__name__}.")
        valid = np.asarray(self.valid).reshape(-1)
        index = np.asarray(self.index).reshape(-1)[valid]
        order = np.argsort(index, kind="stable")
        y = np.asarray(self.y)[index[order]]
        outs = [np.asarray(self.outputs[self._m(n)]).reshape(-1)[valid][order] for n in names]
        return y, outs

    _BOOTSTRAP_MEASURES = (
        "roc_auc",
        "accuracy",
        "error",
        "tpr",
        "recall",
        "fpr",
        "precision",
        "f1",
    )

    def _bootstrap_data(self, a, b, measure, loss, loss_kwargs, pool_folds):
        if measure is None:
            d = self.instance_differences(a, b, loss, **(loss_kwargs or {}))
            return (d, np.zeros_like(d)), "mean_difference"
        if loss is not None or loss_kwargs:
            raise ValueError("pass either `measure` or `loss` (and `loss_kwargs`), not both.")
        if measure not in self._BOOTSTRAP_MEASURES:
            raise ValueError(
                f"`measure` must be one of {list(self._BOOTSTRAP_MEASURES)} or None (per-instance "
                f"losses); got {measure!r}."
            )
        self._need_clf(f"`measure`={measure!r}")
        self._refuse_multiclass(f"`measure`={measure!r}", "use a per-instance loss.")
        pool = pool_folds or measure != "roc_auc"  # counts pool across folds; rankings do not
        y, (fa, fb) = self._pooled((a, b), f"the bootstrap of {measure!r}", pool_folds=pool)
        return (y, fa, fb), f"{measure}_difference"

    @x64
    def bootstrap(
        self, a, b, *, measure=None, loss=None, loss_kwargs=None, pool_folds=False, **kwargs
    ):
        """Bootstrap interval of the difference A - B on the test instances.

        ``measure=None``: the mean per-instance loss difference (``loss``, default 0/1
        for classifiers and square for regressors; :meth:`instance_differences`, averaged
        over repetitions). ``measure="roc_auc"``, ``"accuracy"``, ``"f1"``...: the
        difference of the measure over the pooled test instances (one repetition; the
        AUC pools the rankings of several folds' models only with ``pool_folds=True``).

        Parameters
        ----------
        a, b : str
            Model names.
        measure : str or None
        loss, loss_kwargs
            The per-instance loss when ``measure`` is None.
        pool_folds : bool, default False
            Allow one AUC over the scores of several folds' models.
        **kwargs
            Passed to :func:`jaxtests.bootstrap` (``n_resamples``, ``method``, ``key``...).

        Returns
        -------
        BootstrapResult

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.bootstrap("lda", "nc", loss="hinge", n_resamples=999, key=0)
        >>> r.confidence_interval.low < r.confidence_interval.high
        np.True_
        """
        import jaxtests

        data, stat = self._bootstrap_data(a, b, measure, loss, loss_kwargs, pool_folds)
        return jaxtests.bootstrap(data, stat, **kwargs)

    @x64
    def bootstrap_test(
        self, a, b, *, measure=None, loss=None, loss_kwargs=None, pool_folds=False, **kwargs
    ):
        """Paired bootstrap test of no difference between A and B (see :meth:`bootstrap`).

        Parameters
        ----------
        a, b : str
            Model names.
        measure, loss, loss_kwargs, pool_folds
            As :meth:`bootstrap`.
        **kwargs
            Passed to :func:`jaxtests.bootstrap_test`.

        Returns
        -------
        BootstrapTestResult

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.bootstrap_test("lda", "nc", measure="accuracy", n_resamples=999, key=0)
        >>> 0 < r.pvalue <= 1
        np.True_
        """
        import jaxtests

        data, stat = self._bootstrap_data(a, b, measure, loss, loss_kwargs, pool_folds)
        return jaxtests.bootstrap_test(data, stat, **kwargs)

    @x64
    def delong_test(self, a, b, *, pool_folds=False, **kwargs):
        """DeLong's test of the ROC AUCs of A and B on the pooled test instances.

        One repetition; with several folds each fold's scores come from its own model,
        so their pooled ranking is used only with ``pool_folds=True``.

        Parameters
        ----------
        a, b : str
            Model names (binary classifiers).
        pool_folds : bool, default False
        **kwargs
            Passed to :func:`jaxtests.delong_test`.

        Returns
        -------
        DeLongResult

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)
        >>> r = cv.delong_test("lda", "nc", pool_folds=True)
        >>> 0 <= r.pvalue <= 1
        np.True_
        """
        import jaxtests

        self._need_clf("`delong_test`")
        self._refuse_multiclass("`delong_test`", "compare accuracies with `cochran_q`.")
        y, (fa, fb) = self._pooled((a, b), "`delong_test`", pool_folds=pool_folds)
        return jaxtests.delong_test(y, fa, fb, **kwargs)

    @x64
    def cochran_q(self, models=None, **kwargs):
        """Cochran's Q of the models' predictions on the test instances (one repetition).

        Binary classifiers predict +1 iff their decision value is ``> 0``;
        multiclass ones their class.

        Parameters
        ----------
        models : sequence of str, optional
            Model names (default: all, at least 2).
        **kwargs
            Passed to :func:`jaxtests.cochran_q` (``method``, ``correction``...).

        Returns
        -------
        CochranQResult
            With ``names`` the model names.

        Examples
        --------
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid(), "qda": models.qda()},
        ...     X, y, cv=5, key=0)
        >>> cv.cochran_q().names
        ('lda', 'nc', 'qda')
        """
        import jaxtests

        self._need_clf("`cochran_q`")
        self._no_names(kwargs, "the model names")
        names = self._names(models)
        y, outs = self._pooled(names, "`cochran_q`")
        if self.classes is None:
            outs = [np.where(f > 0, 1, -1) for f in outs]
            y = np.where(y > 0, 1, -1)
        else:
            outs = [f.astype(np.int64) for f in outs]
            y = y.astype(np.int64)
        return jaxtests.cochran_q(y, *outs, names=names, **kwargs)


# ---------------------------------------------------------------- cross_validate


def _cross_validate_iv(models, X, y, cv, repeats, stratified, key):
    items = _normalise_models(models)
    tasks = {model_task(m, name) for name, m in items}
    if len(tasks) > 1:
        raise ValueError("`models` mixes classifiers and regressors; compare like with like.")
    task = tasks.pop()
    X = np.asarray(as_float_array(X, "X", ndim=2))
    classes = binary = None
    if task == "classification":
        y_in = y if isinstance(y, jax.Array | np.ndarray) else np.asarray(y)
        if y_in.ndim == 1:  # two classes: ±1 as before; three or more: indices 0..C-1
            y, classes = as_class_labels(y_in, "y")
            binary = binary_classes(y_in) if classes is None else None
        else:
            y = as_label_array(y, "y")
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"`y` must be 1-dimensional, got shape {y.shape}.")
        if np.all(y == y[0]):
            raise ValueError("`y` holds a single class; classification needs both ±1 labels.")
    else:
        y = np.asarray(as_float_array(y, "y", ndim=1))
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"`X` has {X.shape[0]} rows but `y` has {y.shape[0]} entries.")
    if not isinstance(stratified, bool):
        raise TypeError("`stratified` must be a bool.")
    repeats = as_int_scalar(repeats, "repeats", minimum=1)
    typed_key, seed = resolve_key(key)
    splits = make_splits(
        cv, y, typed_key, task == "classification", repeats=repeats, stratified=stratified
    )
    return items, task, X, y, classes, binary, splits, seed


@x64
def cross_validate(models, X, y, *, cv=10, repeats=1, stratified=True, key=None):
    """Run several models on identical cross-validation folds and keep their outputs.

    Parameters
    ----------
    models : dict or list
        ``name -> model``; a model is a ``jaxtests.models`` spec (all folds fitted
        at once with ``vmap``) or a scikit-learn estimator (cloned and fitted per
        fold; outputs from ``decision_function``, ``predict_proba`` (as
        ``2 p - 1``) or ``predict``). All classifiers or all regressors.
    X : (n, d) array
    y : (n,) array
        Binary classifiers: ±1 or {0, 1} labels (1 is the positive class), or any
        other two values (strings such as "benign"/"malignant", {1, 2}): the later of
        the two sorted values is the positive class +1, as scikit-learn's
        ``LabelBinarizer`` (``CVResult.binary_classes`` records ``(negative,
        positive)``); three or more distinct labels (integers or strings) for multiclass,
        encoded as the indices of the sorted classes (``CVResult.classes``);
        real targets for regressors.
    cv : int, splitter or iterable of (train, test) index arrays
        An int is ``KFold(cv, repeats=repeats, stratified=stratified)``; also
        ``FiveByTwo()``, ``RandomSplits(...)``, or explicit folds.
    repeats : int
        Repetitions of an int ``cv`` (each reshuffled).
    stratified : bool
        Keep class proportions in every fold (classification only).
    key : int, JAX key or None
        Seed of the fold assignment; recorded in the result.

    Returns
    -------
    CVResult
        Outputs ``(M, R, K, m)`` (decision values; predicted class indices
        for multiclass) with instance indices; methods give losses
        (default: 0/1 for classifiers, square for regressors), confusion
        counts, measures and the tests on per-fold values (``ttest_paired``,
        ``hotelling_t2``, ``anova``, ``manova``, ``posthoc``,
        ``signflip_test_folds``, ``ttest_5x2cv``, ``ftest_5x2cv``,
        ``ttest_corrected``), per-instance differences (``signflip_test``) or
        predictions (``mcnemar``).
        Tests that assume independent folds refuse the folds of several
        repetitions unless ``pool_repetitions=True``; results carry the model
        (``posthoc``) or measure (``hotelling_t2``, ``manova``) names.

    Notes
    -----
    Multiclass (``C >= 3`` classes): built-in learners fit all classes at once
    and predict the class of largest score: ``lda``, ``qda``,
    ``nearest_centroid`` and ``knn`` (majority vote) natively, ``logistic``
    multinomial (softmax), ``ridge_classifier`` one-vs-rest on ±1 targets
    (``RidgeClassifier``), ``svc`` one-vs-one with votes (LIBSVM, as
    scikit-learn's ``SVC``); scikit-learn estimators are fitted on the class
    indices and their ``predict`` is kept. Only the 0/1 loss and the measures
    ``accuracy``, ``error``, ``balanced_accuracy``, ``precision_macro``,
    ``recall_macro``, ``f1_macro`` apply; margin losses (hinge...) and binary
    measures (tpr, roc_auc...) raise.

    A built-in model fits all folds at once (``vmap``); kernel machines (``svc``,
    ``svr``) and ``knn`` hold ``n x n`` matrices per fit, and the one-vs-one ``svc``
    one set per class pair. When they would need more than half of this
    machine's memory, a ``ValueError`` naming the model and the size is raised
    before anything is fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxtests import cross_validate, models
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
    >>> res = cross_validate({"lda": models.lda(), "nc": models.nearest_centroid()},
    ...                      X, y, cv=5, key=0)
    >>> res.fold_losses("lda", "zero_one").shape
    (1, 5)

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive
    Loss" (paired folds, Section 2).
    """
    items, task, X, y, classes, binary, splits, seed = _cross_validate_iv(
        models, X, y, cv, repeats, stratified, key
    )
    R, K = splits.shape
    index, valid = padded_test_index(splits.test)
    W = splits.train.reshape(R * K, -1).astype(np.float64)
    Xj, yj, Wj = jnp.asarray(X), jnp.asarray(y), jnp.asarray(W)
    n_classes = 0 if classes is None else len(classes)
    for name, m in items:  # before any fit: all folds of a model are fitted at once
        if is_builtin(m):
            _learners.check_fit_memory(m, f"models[{name!r}]", X.shape[0], R * K, 1, n_classes)
    outs = []
    for _, m in items:
        if is_builtin(m) and m.kind in _learners.KERNEL_MACHINES:
            # SMO in host-level calls of bounded time (Ctrl-C between them); the same values.
            full = _learners.kernel_outputs(m, Xj, yj[None, :], Wj, n_classes)
            out = jnp.take_along_axis(full[0].reshape(R, K, -1), jnp.asarray(index), axis=-1)
        elif is_builtin(m):
            if classes is None:
                full = _learners.fold_decisions(m, Xj, yj[None, :], Wj)
            else:
                full = _learners.fold_predictions(m, Xj, yj[None, :], Wj, n_classes=len(classes))
            out = jnp.take_along_axis(full[0].reshape(R, K, -1), jnp.asarray(index), axis=-1)
        else:
            out = np.zeros(index.shape)
            for r in range(R):
                for k in range(K):
                    v = valid[r, k]
                    tr, te = splits.train[r, k], index[r, k, v]
                    if classes is None:
                        out[r, k, v] = sklearn_outputs(m, X, y, tr, te)
                    else:
                        out[r, k, v] = sklearn_predictions(m, X, y, tr, te, len(classes))
            out = jnp.asarray(out)
        outs.append(jnp.where(jnp.asarray(valid), out, 0.0))
    return CVResult(
        outputs=jnp.stack(outs),
        index=jnp.asarray(index),
        valid=jnp.asarray(valid),
        y=yj,
        n_train=jnp.asarray(splits.train.sum(-1)),
        names=tuple(n for n, _ in items),
        task=task,
        seed=seed,
        classes=classes,
        binary_classes=binary,
    )
