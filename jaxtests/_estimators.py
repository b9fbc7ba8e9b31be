"""Models of ``cross_validate``: built-in learners and scikit-learn estimators side by side.

The task of a model, and a scikit-learn estimator's outputs on one split
(decision values of binary classifiers, predicted class indices of multiclass
ones, predictions of regressors), as the built-in learners give them; names for
a list of models.
"""

import numpy as np

from jaxtests import _models

__all__ = ["is_builtin", "model_task", "sklearn_outputs", "sklearn_predictions"]


def is_builtin(model):
    return isinstance(model, _models.Model)


def model_task(model, where):
    """``"classification"`` or ``"regression"`` for a built-in or scikit-learn model.

    ``where``: the argument as an error message names it (``"`model`"``,
    ``"`models`['rbf']"``).
    """
    if is_builtin(model):
        return model.task
    if isinstance(model, type):  # the class's fit/predict are there, unbound
        raise TypeError(
            f"{where} is the class {model.__name__}, not an estimator: pass an instance, "
            f"{model.__name__}()."
        )
    if callable(model) and getattr(model, "__module__", None) == _models.__name__:
        raise TypeError(
            f"{where} is the function jaxtests.models.{model.__name__}; call it: "
            f"models.{model.__name__}()."
        )
    if not (
        hasattr(model, "fit") and (hasattr(model, "predict") or hasattr(model, "decision_function"))
    ):
        hint = (
            f" {model!r} names no model: build one with jaxtests.models (e.g. "
            "jaxtests.models.ridge_classifier()) or pass a scikit-learn estimator."
            if isinstance(model, str)
            else ""
        )
        raise TypeError(
            f"{where} is neither a jaxtests.models spec nor an estimator with "
            f"fit/predict (got {type(model).__name__}).{hint}"
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
