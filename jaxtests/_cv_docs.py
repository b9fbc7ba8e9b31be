"""Docstring pieces of ``CVResult``'s methods, filled in by :func:`cv_doc` (as ``_measures``).

The example data and cross-validation most examples start from, and the
parameters the tests share, written once.
"""

__all__ = ["PIECES", "cv_doc"]

PIECES = {
    "data": """\
        >>> import numpy as np, jaxtests
        >>> from jaxtests import models
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 2))
        >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)""",
    "cv": """\
        >>> cv = jaxtests.cross_validate(
        ...     {"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)""",
    "a_b": """\
        a, b : str
            Model names, as given to :func:`jaxtests.cross_validate`.""",
    "loss": """\
        loss : str, callable or None, default None
            A loss name (``"zero_one"``, ``"hinge"``, ``"square"``...) or callable
            ``loss(y, f)``, or a measure name (``"error"``, ``"rmse"``...); ``None``
            is 0/1 for classifiers and square for regressors.
        loss_kwargs : dict, optional
            Keywords of the loss (``epsilon=``, ``p=``).""",
    "pool": """\
        pool_repetitions : bool, default False
            Pool the folds of several repetitions as if independent (their
            p-value is too small); refused otherwise.""",
}


def cv_doc(test=None):
    """Fill a method's docstring: each ``{piece}`` line, and ``{function}`` with ``test``."""

    def deco(fn):
        doc = fn.__doc__
        for key, text in PIECES.items():
            doc = doc.replace(" " * 8 + "{" + key + "}", text)
        if test is not None:
            doc = doc.replace("{function}", f":func:`jaxtests.{test}`")
        fn.__doc__ = doc
        return fn

    return deco
