"""Paired cross-validation: splitters, ``cross_validate`` and its result object.

Every model sees identical folds, so per-fold results are paired (seed 000,
Section 2). The result keeps the per-instance outputs (decision values of
classifiers, predictions of regressors) with their instance indices, so any
loss, confusion count or measure, and any test, is computed afterwards
without refitting.
"""

import dataclasses
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import models as _models
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests._validation import as_float_array, as_int_scalar, as_label_array, check_choice
from jaxtests.kernels import losses as _losses
from jaxtests.kernels import measures as _measures

__all__ = ["CVResult", "FiveByTwo", "KFold", "RandomSplits", "Splits", "cross_validate"]

_LOSSES = ("zero_one", "hinge", "square", "absolute", "epsilon_insensitive", "power")
_CLF_LOSSES = ("zero_one", "hinge")
_COUNT_MEASURES = ("tpr", "fpr", "precision", "specificity", "accuracy", "error", "f1")
_RANK_MEASURES = ("roc_auc", "average_precision")
_COUNTS = ("tp", "fn", "fp", "tn")


# ---------------------------------------------------------------- splitters


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


def _uniforms(key, r, n):
    return np.asarray(jax.random.uniform(jax.random.fold_in(key, r), (n,), dtype=jnp.float64))


@dataclasses.dataclass(frozen=True)
class KFold:
    """(Repeated, stratified) k-fold cross-validation.

    Each repetition shuffles the instances with a key derived from the run's
    key (``fold_in(key, repetition)``). Stratified: instances are ordered by
    class, randomly within class, and dealt to folds in turn, so fold sizes and
    per-fold class counts differ by at most one.
    """

    n_splits: int = 10
    repeats: int = 1
    stratified: bool = True

    def __post_init__(self):
        as_int_scalar(self.n_splits, "n_splits", minimum=2)
        as_int_scalar(self.repeats, "repeats", minimum=1)

    def split(self, y, key, classification):
        """Return :class:`Splits` for labels ``y`` (numpy) and a typed JAX key."""
        n = len(y)
        if self.n_splits > n:
            raise ValueError(f"`cv`: cannot make {self.n_splits} folds from {n} instances.")
        strat = self.stratified and classification
        if strat:
            n_min = int(min(np.sum(y > 0), np.sum(y <= 0)))
            if n_min < self.n_splits:
                raise ValueError(
                    f"`cv`: stratified {self.n_splits}-fold needs at least {self.n_splits} "
                    f"instances per class; the smaller class has {n_min}."
                )
        strata = (y > 0).astype(np.int64) if strat else np.zeros(n, np.int64)
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
    """
    return KFold(2, repeats=5, stratified=stratified)


@dataclasses.dataclass(frozen=True)
class RandomSplits:
    """Random train/test resampling: ``n_splits`` independent splits (Nadeau & Bengio).

    Each split holds out ``test_size`` of the instances (a fraction), per class
    when stratified; use with ``CVResult.ttest_corrected``.
    """

    n_splits: int = 15
    test_size: float = 0.1
    stratified: bool = True

    def __post_init__(self):
        as_int_scalar(self.n_splits, "n_splits", minimum=2)
        if not isinstance(self.test_size, numbers.Real) or not 0 < self.test_size < 1:
            raise ValueError(f"`test_size` must be a fraction in (0, 1), got {self.test_size!r}.")

    def split(self, y, key, classification):
        """Return :class:`Splits` with ``R = n_splits`` repetitions of one split each."""
        n = len(y)
        strata = (
            (y > 0).astype(np.int64)
            if (self.stratified and classification)
            else np.zeros(n, np.int64)
        )
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


def make_splits(cv, y, key, classification, *, repeats=1, stratified=True):
    """Resolve ``cv`` (int, splitter, or iterable of (train, test)) into :class:`Splits`."""
    if isinstance(cv, bool):
        raise TypeError("`cv` must be an int, a splitter or an iterable of (train, test) pairs.")
    if isinstance(cv, numbers.Integral):
        cv = KFold(as_int_scalar(cv, "cv", minimum=2), repeats=repeats, stratified=stratified)
    elif repeats != 1:
        raise ValueError("`repeats` applies only when `cv` is an int; set it on the splitter.")
    if hasattr(cv, "split") and isinstance(cv, KFold | RandomSplits):
        return cv.split(y, key, classification)
    if isinstance(cv, Splits):
        return cv
    if hasattr(cv, "split") and hasattr(cv, "get_n_splits"):
        raise TypeError("`cv`: pass a scikit-learn splitter as `list(cv.split(X, y))`.")
    return _explicit_splits(cv, len(y))


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


# ---------------------------------------------------------------- result


@result
class CVResult:
    """Per-instance outputs of several models on identical cross-validation folds.

    Attributes
    ----------
    outputs : (M, R, K, m) array
        Decision values (classifiers) or predictions (regressors) of model ``M``
        on the test instances of fold ``K`` of repetition ``R``; padded to ``m``.
    index : (R, K, m) int array
        Instance index (row of ``X``) of each output; padding entries are 0.
    valid : (R, K, m) bool array
        False on padding.
    y : (n,) array
        Targets (±1 for classification).
    n_train : (R, K) int array
        Training-set sizes.
    names, task, seed : the model names, ``"classification"``/``"regression"``, the seed.
    """

    outputs: jax.Array
    index: jax.Array
    valid: jax.Array
    y: jax.Array
    n_train: jax.Array
    names: tuple = static_field()
    task: str = static_field()
    seed: object = static_field(default=None)

    # ---- access
    def _m(self, name):
        if name not in self.names:
            raise ValueError(f"unknown model {name!r}; models are {list(self.names)}.")
        return self.names.index(name)

    def instance_outputs(self, name):
        """``(outputs, index, valid)`` for model ``name``, each ``(R, K, m)``."""
        return self.outputs[self._m(name)], self.index, self.valid

    def _targets(self):
        return self.y[self.index]

    @x64
    def instance_losses(self, name, loss="zero_one", **loss_kwargs):
        """Per-instance losses ``(R, K, m)`` (NaN on padding).

        ``loss`` is a name of ``jaxtests.losses`` (``"zero_one"``, ``"hinge"``,
        ``"square"``, ``"absolute"``, ``"epsilon_insensitive"`` with
        ``epsilon=``, ``"power"`` with ``p=``) or a callable ``loss(y, f)``.
        """
        f = self.outputs[self._m(name)]
        yt = self._targets()
        if callable(loss):
            val = loss(yt, f, **loss_kwargs)
        else:
            check_choice(loss, "loss", _LOSSES)
            if loss in _CLF_LOSSES and self.task != "classification":
                raise ValueError(f"`loss`={loss!r} needs ±1 labels; this is a regression result.")
            need = {"epsilon_insensitive": "epsilon", "power": "p"}.get(loss)
            if need is not None and need not in loss_kwargs:
                raise ValueError(f"`loss`={loss!r} needs the keyword `{need}`.")
            val = getattr(_losses, loss)(yt, f, **loss_kwargs)
        return jnp.where(self.valid, jnp.asarray(val, jnp.float64), jnp.nan)

    @x64
    def fold_losses(self, name, loss="zero_one", *, reduce="mean", **loss_kwargs):
        """Per-fold mean (or ``reduce="sum"``, seed 000's total) loss, ``(R, K)``."""
        check_choice(reduce, "reduce", ("mean", "sum"))
        li = jnp.where(self.valid, self.instance_losses(name, loss, **loss_kwargs), 0.0)
        tot = jnp.sum(li, axis=-1)
        return tot if reduce == "sum" else tot / jnp.sum(self.valid, axis=-1, dtype=jnp.float64)

    def _need_clf(self, what):
        if self.task != "classification":
            raise ValueError(f"{what} needs a classification result (±1 labels).")

    @x64
    def confusion(self, name):
        """Per-fold confusion counts ``(tp, fn, fp, tn)``, each ``(R, K)`` (sign of the output)."""
        self._need_clf("`confusion`")
        f = self.outputs[self._m(name)]
        yt = jnp.where(self.valid, self._targets(), 0.0)  # padding: neither class
        t = yt > 0
        p = f > 0
        v = self.valid
        return _measures.ConfusionCounts(
            jnp.sum(v & t & p, -1, dtype=jnp.float64),
            jnp.sum(v & t & ~p, -1, dtype=jnp.float64),
            jnp.sum(v & ~t & ~(yt == 0) & p, -1, dtype=jnp.float64),
            jnp.sum(v & ~t & ~(yt == 0) & ~p, -1, dtype=jnp.float64),
        )

    @x64
    def fold_scores(self, name, measure):
        """Per-fold value ``(R, K)`` of a measure or a mean loss.

        ``measure``: a loss name (mean loss), a confusion count (``"tp"``...),
        ``"tpr"``, ``"fpr"``, ``"precision"``, ``"specificity"``, ``"accuracy"``,
        ``"error"``, ``"f1"``, ``"roc_auc"`` or ``"average_precision"``.
        """
        if measure in _LOSSES:
            return self.fold_losses(name, measure)
        check_choice(measure, "measure", _LOSSES + _COUNTS + _COUNT_MEASURES + _RANK_MEASURES)
        self._need_clf(f"measure {measure!r}")
        if measure in _RANK_MEASURES:
            f = self.outputs[self._m(name)]
            # padding gets a negative label and the lowest score: it then never
            # changes the ranking of real instances but would add negatives, so
            # the per-fold computation below uses only the valid entries.
            out = np.empty(self.index.shape[:2])
            fn = getattr(_measures, measure)
            for r in range(out.shape[0]):
                for k in range(out.shape[1]):
                    v = np.asarray(self.valid[r, k])
                    out[r, k] = float(fn(self._targets()[r, k][v], f[r, k][v]))
            return jnp.asarray(out)
        c = self.confusion(name)
        if measure in _COUNTS:
            return getattr(c, measure)
        if measure == "f1":
            return _measures.f_beta(c, 1.0)
        return getattr(_measures, measure)(c)

    def _losses_pair(self, a, b, loss, loss_kwargs):
        kw = loss_kwargs or {}
        return self.fold_scores_any(a, loss, kw), self.fold_scores_any(b, loss, kw)

    def fold_scores_any(self, name, what, loss_kwargs=None):
        """``fold_losses`` for loss names/callables (with kwargs), else ``fold_scores``."""
        if callable(what) or (what in _LOSSES and loss_kwargs):
            return self.fold_losses(name, what, **(loss_kwargs or {}))
        return self.fold_scores(name, what)

    # ---- tests
    def ttest_paired(self, a, b, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """Paired t test on the per-fold losses of models ``a`` and ``b`` (seed 000, eq. 5).

        All ``R * K`` folds are pooled; with repetitions prefer ``ttest_corrected``.
        """
        from jaxtests._ttests import ttest_paired

        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return ttest_paired(la.ravel(), lb.ravel(), **kwargs)

    def _check_5x2(self):
        if tuple(self.index.shape[:2]) != (5, 2):
            raise ValueError(
                f"5x2 cv tests need 5 repetitions of 2 folds (cv=FiveByTwo()); got "
                f"{tuple(self.index.shape[:2])}."
            )

    def ttest_5x2cv(self, a, b, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """Dietterich's 5x2 cv t test on per-fold losses ``(5, 2)``."""
        from jaxtests._ttests import ttest_5x2cv

        self._check_5x2()
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return ttest_5x2cv(la, lb, **kwargs)

    def ftest_5x2cv(self, a, b, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """Alpaydın's combined 5x2 cv F test on per-fold losses ``(5, 2)``."""
        from jaxtests._ttests import ftest_5x2cv

        self._check_5x2()
        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return ftest_5x2cv(la, lb, **kwargs)

    def ttest_corrected(self, a, b, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """Nadeau–Bengio corrected resampled t test over all ``R * K`` splits."""
        from jaxtests._ttests import ttest_corrected

        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        n_train = int(np.asarray(self.n_train).ravel()[0])
        n_test = int(np.asarray(self.valid).sum(-1).ravel()[0])
        return ttest_corrected(la.ravel(), lb.ravel(), n_train=n_train, n_test=n_test, **kwargs)

    def _measure_matrix(self, name, measures):
        if isinstance(measures, str):
            raise TypeError("`measures` must be a sequence of measure names, e.g. ('tpr', 'fpr').")
        cols = [self.fold_scores(name, m).ravel() for m in measures]
        return jnp.stack(cols, axis=-1)  # (R*K, p)

    def hotelling_t2(self, a, b, *, measures=("tpr", "fpr"), **kwargs):
        """Paired Hotelling T² on per-fold measure vectors ``(R*K, p)`` (seed 004)."""
        from jaxtests._multivariate import hotelling_t2

        return hotelling_t2(
            self._measure_matrix(a, measures), self._measure_matrix(b, measures), **kwargs
        )

    def _names(self, models):
        return list(self.names) if models is None else list(models)

    def anova(self, models=None, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """One-way ANOVA on per-fold losses, ``x : (L, R*K)``."""
        from jaxtests._multivariate import anova

        x = jnp.stack(
            [self.fold_scores_any(m, loss, loss_kwargs).ravel() for m in self._names(models)]
        )
        return anova(x, **kwargs)

    def manova(self, models=None, *, measures=("tpr", "fpr"), **kwargs):
        """MANOVA on per-fold measure vectors, ``x : (L, R*K, p)`` (seed 004)."""
        from jaxtests._multivariate import manova

        x = jnp.stack([self._measure_matrix(m, measures) for m in self._names(models)])
        return manova(x, **kwargs)

    def posthoc(self, models=None, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """Pairwise post hoc tests on per-fold losses, ``x : (L, R*K)``."""
        from jaxtests._posthoc import posthoc

        x = jnp.stack(
            [self.fold_scores_any(m, loss, loss_kwargs).ravel() for m in self._names(models)]
        )
        return posthoc(x, **kwargs)

    def signflip_test(self, a, b, *, loss="zero_one", loss_kwargs=None, **kwargs):
        """Sign-flip permutation test on the per-fold loss differences ``(R*K,)``."""
        from jaxtests._permutation import signflip_test

        la, lb = self._losses_pair(a, b, loss, loss_kwargs)
        return signflip_test((la - lb).ravel(), **kwargs)


# ---------------------------------------------------------------- cross_validate


def _cross_validate_iv(models, X, y, cv, repeats, stratified, key):
    items = _normalise_models(models)
    tasks = {model_task(m, name) for name, m in items}
    if len(tasks) > 1:
        raise ValueError("`models` mixes classifiers and regressors; compare like with like.")
    task = tasks.pop()
    X = np.asarray(as_float_array(X, "X", ndim=2))
    if task == "classification":
        y = np.asarray(as_label_array(y, "y"))
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
    return items, task, X, y, splits, seed


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
        ±1 or {0, 1} labels for classifiers (1 is the positive class), real targets
        for regressors.
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
        Outputs ``(M, R, K, m)`` with instance indices; methods give losses,
        confusion counts, measures and the tests (``ttest_paired``,
        ``hotelling_t2``, ``manova``, ``posthoc``, ``signflip_test``,
        ``ttest_5x2cv``, ``ftest_5x2cv``, ``ttest_corrected``).

    Examples
    --------
    >>> from jaxtests import datasets, models
    >>> from jaxtests._cv import cross_validate
    >>> X, y = datasets.load_pima()
    >>> X = (X - X.mean(0)) / X.std(0)
    >>> res = cross_validate({"lda": models.lda(), "ridge": models.ridge_classifier()},
    ...                      X, y, cv=5, key=0)
    >>> res.fold_losses("lda", "zero_one").shape
    (1, 5)
    """
    items, task, X, y, splits, seed = _cross_validate_iv(models, X, y, cv, repeats, stratified, key)
    R, K = splits.shape
    index, valid = padded_test_index(splits.test)
    W = splits.train.reshape(R * K, -1).astype(np.float64)
    Xj, yj, Wj = jnp.asarray(X), jnp.asarray(y), jnp.asarray(W)
    outs = []
    for _, m in items:
        if is_builtin(m):
            full = _models.fold_decisions(m, Xj, yj[None, :], Wj)[0].reshape(R, K, -1)
            out = jnp.take_along_axis(full, jnp.asarray(index), axis=-1)
        else:
            out = np.zeros(index.shape)
            for r in range(R):
                for k in range(K):
                    v = valid[r, k]
                    out[r, k, v] = sklearn_outputs(m, X, y, splits.train[r, k], index[r, k, v])
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
    )
