"""Paired cross-validation: ``cross_validate`` and its result object.

Every model sees identical folds, so per-fold results are paired (Yildiz &
Alpaydin, "Statistical Tests using Hinge/epsilon-Sensitive Loss", Section 2).
The result keeps the per-instance outputs (decision values of binary
classifiers, predicted class indices of multiclass ones, predictions of
regressors) with their instance indices, so any loss, confusion count or
measure, and any test, is computed afterwards without refitting.

Multiclass labels (three or more distinct values) are encoded as scikit-learn's
``LabelEncoder`` does: the sorted distinct labels become ``0 .. C - 1`` and the
result records them as ``classes``. Two-class labels keep the ±1 convention.

The splitters live in ``_splitters``, the scikit-learn adapters in
``_estimators``; ``CVResult``'s tests in its two mixins, ``_cv_fold_tests``
(per-fold values) and ``_cv_instance_tests`` (per-instance outputs).
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _learners
from jaxtests._cv_docs import cv_doc
from jaxtests._cv_fold_tests import FoldTests
from jaxtests._cv_instance_tests import InstanceTests
from jaxtests._estimators import (
    _normalise_models,
    is_builtin,
    model_task,
    sklearn_outputs,
    sklearn_predictions,
)
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import _to_numpy, result, static_field
from jaxtests._splitters import make_splits, padded_test_index
from jaxtests._validation import (
    as_class_labels,
    as_float_array,
    as_int_scalar,
    as_label_array,
    binary_classes,
    check_choice,
    to_device,
)
from jaxtests.kernels import losses as klosses
from jaxtests.kernels import measures as kmeasures

__all__ = ["CVResult", "TestOutputs", "cross_validate"]

_LOSSES = ("zero_one", "hinge", "square", "absolute", "epsilon_insensitive", "power")
_CLF_LOSSES = ("zero_one", "hinge")
# every measure of the table (jaxtests.kernels.measures.MEASURES) by name or alias
_MEASURES = _LOSSES + kmeasures.measure_names(aliases=True)
# the losses and measures defined for multiclass results
_MULTICLASS_MEASURES = ("zero_one", *kmeasures.measure_names(multiclass=True))


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


class TestOutputs(NamedTuple):
    """One repetition's test outputs in instance order (:meth:`CVResult.test_outputs`)."""

    index: np.ndarray
    fold: np.ndarray
    y: np.ndarray
    output: np.ndarray


@result
class CVResult(FoldTests, InstanceTests):
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

    @cv_doc()
    def instance_outputs(self, name):
        """``(outputs, index, valid)`` for model ``name``, each ``(R, K, m)``: padded.

        Every fold's outputs sit in a row of ``m`` entries, ``m`` the largest test fold;
        a smaller fold is padded at its end with entries that are not instances (``valid``
        False, ``index`` 0, output 0). Select with ``outputs[valid]``, or use
        :meth:`test_outputs` for one repetition's outputs in instance order, unpadded.

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
        {data}
        {cv}
        >>> outputs, index, valid = cv.instance_outputs("lda")
        >>> outputs.shape
        (1, 5, 8)
        >>> outputs[valid].shape  # the 40 instances, fold by fold
        (40,)
        """
        return self.outputs[self._m(name)], self.index, self.valid

    def test_outputs(self, name, *, repetition=0):
        """One repetition's outputs of model ``name`` in instance order, without padding.

        As scikit-learn's ``cross_val_predict`` returns them: one entry per test
        instance, sorted by its row in ``X`` (an instance in several test sets of the
        repetition, as with overlapping explicit splits, once per test set). A held-out
        split (``cv=[(train, test)]``) gives the outputs on ``test``.

        Parameters
        ----------
        name : str
            Model name.
        repetition : int, default 0
            Which repetition (``0 .. R - 1``).

        Returns
        -------
        TestOutputs
            Named tuple of ``(n_tested,)`` numpy arrays: ``index`` (row of ``X``),
            ``fold`` (``0 .. K - 1``), ``y`` (targets as the result holds them: ±1,
            class indices or reals) and ``output`` (decision value, predicted class
            index or prediction).

        Examples
        --------
        A held-out split, one explicit fold (``cross_val_predict``'s order):

        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
        >>> train, test = np.arange(30), np.arange(30, 40)
        >>> cv = jaxtests.cross_validate({"lda": models.lda()}, X, y, cv=[(train, test)])
        >>> out = cv.test_outputs("lda")
        >>> out.index
        array([30, 31, 32, 33, 34, 35, 36, 37, 38, 39])
        >>> bool(np.all(out.y == y[test])), out.output.shape
        (True, (10,))
        """
        m = self._m(name)
        R = int(self.index.shape[0])
        repetition = as_int_scalar(repetition, "repetition", minimum=0)
        if repetition >= R:
            raise ValueError(
                f"`repetition` must be below the number of repetitions, {R}; got {repetition}."
            )
        valid = np.asarray(self.valid[repetition])
        index = np.asarray(self.index[repetition])[valid]
        fold = np.broadcast_to(np.arange(valid.shape[0])[:, None], valid.shape)[valid]
        output = np.asarray(self.outputs[m, repetition])[valid]
        order = np.argsort(index, kind="stable")
        index = index[order]
        return TestOutputs(index, fold[order], np.asarray(self.y)[index], output[order])

    def _targets(self):
        return self.y[self.index]

    def _default_loss(self, loss):
        """``None`` -> the task's default loss: 0/1 for classifiers, square for regressors."""
        if loss is None:
            return "zero_one" if self.task == "classification" else "square"
        return loss

    @cv_doc()
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
        {data}
        {cv}
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

    @cv_doc()
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
        {data}
        {cv}
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

    @cv_doc()
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
        {data}
        {cv}
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

    @cv_doc()
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
        {data}
        {cv}
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

    @cv_doc()
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
        {data}
        {cv}
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

    @cv_doc()
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
        {data}
        {cv}
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


# ---------------------------------------------------------------- cross_validate


def _cross_validate_iv(models, X, y, cv, repeats, stratified, key):
    items = _normalise_models(models)
    keys = [name for name, _ in items] if isinstance(models, dict) else range(len(items))
    tasks = {model_task(m, f"`models`[{k!r}]") for k, (_, m) in zip(keys, items, strict=True)}
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
        cv, y, typed_key, task == "classification", repeats=repeats, stratified=stratified, X=X
    )
    return items, task, X, y, classes, binary, splits, seed


def _builtin_outputs(model, X, y, W, Xj, y1, Wj, n_classes):
    """Outputs ``(F, n)`` of a built-in learner at every row, for training weights ``W``.

    Closed-form binary fits run in numpy on the host (nothing to compile); the
    others are jitted on the rows padded to their shape bucket (``Xj, y1, Wj``),
    but for the kernel machines.
    """
    if not n_classes:
        full = _learners.host_fold_decisions(model, X, y.astype(X.dtype), W)
        if full is not None:
            return full
    if model.kind in _learners.KERNEL_MACHINES:
        # SMO in host-level calls of bounded time (Ctrl-C between them); the same values.
        # Unpadded: padding changes an SVR's rounding, hence its working sets (to tol).
        y1 = to_device(y[None, :])
        full = _learners.kernel_outputs(model, to_device(X), y1, to_device(W), n_classes)
    elif n_classes:
        full = _learners.fold_predictions(model, Xj, y1, Wj, n_classes=n_classes)
    else:
        full = _learners.fold_decisions(model, Xj, y1, Wj)
    return np.asarray(full)[0, :, : X.shape[0]]  # on the host: indexing a jax.Array compiles


@x64
def cross_validate(models, X, y, *, cv=10, repeats=1, stratified=True, key=None):
    """Run several models on identical cross-validation folds and keep their outputs.

    Parameters
    ----------
    models : dict or list
        ``name -> model``; a model is a ``jaxtests.models`` spec (see Notes)
        or a scikit-learn estimator (cloned and fitted per
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
        ``FiveByTwo()``, ``RandomSplits(...)``, a scikit-learn splitter (an object
        with ``split(X, y)`` and ``get_n_splits``: ``StratifiedKFold``,
        ``ShuffleSplit``...; the folds of ``list(cv.split(X, y))``, a repeated one
        such as ``RepeatedStratifiedKFold`` as ``n_repeats`` repetitions), or
        explicit folds: ``[(train, test)]`` is a held-out split (one fold).
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

    The closed-form binary fits (``ridge``, ``ridge_classifier``, ``lda``,
    ``nearest_centroid``) run in numpy, fold by fold: nothing to compile. The other
    built-in models fit all folds at once (``vmap``), on the rows padded to a shape
    bucket (rows of weight 0), so a new number of rows in the bucket compiles
    nothing (the kernel machines compile per number of rows). Kernel machines (``svc``,
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

    A held-out split is one explicit fold; its outputs in instance order, unpadded:

    >>> held_out = cross_validate({"lda": models.lda(), "nc": models.nearest_centroid()},
    ...                           X, y, cv=[(np.arange(30), np.arange(30, 40))])
    >>> held_out.test_outputs("lda").index.shape
    (10,)
    >>> held_out.mcnemar("lda", "nc").pvalue <= 1
    np.True_

    A scikit-learn splitter gives the folds of ``list(cv.split(X, y))``:

    >>> from sklearn.model_selection import StratifiedKFold
    >>> skf = StratifiedKFold(5, shuffle=True, random_state=0)
    >>> cross_validate({"lda": models.lda()}, X, y, cv=skf).index.shape[:2]
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
    # the jitted fits see the rows padded to their shape bucket: a new n compiles nothing
    Xp, yp, Wp = _learners.pad_rows(X, y, W)
    Xj, Wj, y1 = to_device(Xp), to_device(Wp), to_device(yp[None, :])
    n_classes = 0 if classes is None else len(classes)
    for name, m in items:  # before any fit: all folds of a model are fitted at once
        if is_builtin(m):
            # the rows a fit holds: padded to the bucket but for the kernel machines
            rows = X.shape[0] if m.kind in _learners.KERNEL_MACHINES else Xp.shape[0]
            _learners.check_fit_memory(m, f"models[{name!r}]", rows, R * K, 1, n_classes)
    outs = []
    for _, m in items:
        if is_builtin(m):
            full = _builtin_outputs(m, X, y, W, Xj, y1, Wj, n_classes)
            out = np.take_along_axis(full.reshape(R, K, -1), index, axis=-1)
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
        # on the host: eager JAX gathers and stacks compile a program per shape
        outs.append(np.where(valid, out, 0.0))
    return CVResult(
        outputs=np.stack(outs),
        index=to_device(index),  # device_put: jnp.asarray compiles a program per shape
        valid=to_device(valid),
        y=to_device(y),
        n_train=to_device(splits.train.sum(-1)),
        names=tuple(n for n, _ in items),
        task=task,
        seed=seed,
        classes=classes,
        binary_classes=binary,
    )
