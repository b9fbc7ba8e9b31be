"""Per-instance losses: the implementation behind :mod:`jaxtests.losses`."""

import functools
import numbers

import jax
import numpy as np

from jaxtests._precision import x64
from jaxtests._validation import as_float_array, as_label_array
from jaxtests.kernels import losses as klosses

__all__ = ["absolute", "epsilon_insensitive", "hinge", "power", "square", "zero_one"]


def _pair_iv(y, f, *, classification):
    y = as_label_array(y, "y") if classification else as_float_array(y, "y")
    f = as_float_array(f, "f")
    try:
        np.broadcast_shapes(y.shape, f.shape)
    except ValueError:
        raise ValueError(
            f"`y` and `f` must have broadcast-compatible shapes, got {tuple(y.shape)} and "
            f"{tuple(f.shape)}."
        ) from None
    if y.ndim == 0 or f.ndim == 0 or y.shape[-1] != f.shape[-1]:
        # a (n, 1) label column against (n,) decisions would broadcast to n x n
        raise ValueError(
            f"`y` and `f` must have the same number of instances along the last axis, got "
            f"shapes {tuple(y.shape)} and {tuple(f.shape)} (pass 1-d label vectors, not "
            "columns)."
        )
    return y, f


def _scalar_iv(value, name, *, positive):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not np.isfinite(value) or value < 0 or (positive and value == 0):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"`{name}` must be finite and {need}, got {value}.")
    return value


@functools.partial(jax.jit, static_argnames=("name",))
def _apply(y, f, param=None, *, name):
    y, f = jax.numpy.broadcast_arrays(y, f)
    fn = getattr(klosses, name)
    return fn(y, f) if param is None else fn(y, f, param.astype(f.dtype))


@x64
def zero_one(y, f):
    """0/1 loss on the sign of ``f``.

    Parameters
    ----------
    y : array_like, shape (..., n_instances)
        Labels in {-1, +1} or {0, 1}.
    f : array_like, shape (..., n_instances)
        Decision values; the predicted class is +1 where ``f > 0`` and -1
        elsewhere (``f = 0`` included).

    Returns
    -------
    loss : jax.Array
        1.0 where the predicted class differs from ``y``, else 0.0.

    Notes
    -----
    Yildiz & Alpaydin write the 0/1 loss on the margin (``f y >= 1``); we follow the
    usual misclassification loss on the predicted class, so that
    ``mean(zero_one)`` is the error rate and equals ``measures.error`` of the
    confusion counts of the same predictions. A decision value of exactly 0
    predicts -1, as scikit-learn's linear classifiers do (``scores > 0``): it
    is an error for a positive instance and correct for a negative one.

    References
    ----------
    Yildiz, O. T. & Alpaydin, E. "Statistical Tests using Hinge/epsilon-Sensitive Loss".

    Examples
    --------
    >>> import jaxtests
    >>> jaxtests.losses.zero_one([1, -1, 1], [0.3, 0.2, -2.0]).tolist()
    [0.0, 1.0, 1.0]
    >>> jaxtests.losses.zero_one([1, -1], [0.0, 0.0]).tolist()  # f = 0 predicts -1
    [1.0, 0.0]
    """
    y, f = _pair_iv(y, f, classification=True)
    return _apply(y, f, name="zero_one")


@x64
def hinge(y, f):
    """Hinge loss ``max(0, 1 - y f)`` (Yildiz & Alpaydin, eq. 2).

    Parameters
    ----------
    y : array_like, shape (..., n_instances)
        Labels in {-1, +1} or {0, 1}.
    f : array_like, shape (..., n_instances)
        Decision values.

    Returns
    -------
    loss : jax.Array
        Per-instance hinge loss.

    References
    ----------
    Yildiz, O. T. & Alpaydin, E. "Statistical Tests using Hinge/epsilon-Sensitive Loss".

    Examples
    --------
    >>> import jaxtests
    >>> jaxtests.losses.hinge([1, -1, 1], [0.3, 0.2, -2.0]).tolist()
    [0.7, 1.2, 3.0]
    """
    y, f = _pair_iv(y, f, classification=True)
    return _apply(y, f, name="hinge")


@x64
def square(y, f):
    """Square loss ``(y - f)^2`` (Yildiz & Alpaydin, eq. 3).

    Parameters
    ----------
    y, f : array_like, shape (..., n_instances)
        Targets and predictions.

    Returns
    -------
    loss : jax.Array
        Per-instance squared error.

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive Loss".

    Examples
    --------
    >>> import numpy as np
    >>> from jaxtests import losses
    >>> np.asarray(losses.square([1.0, 2.0], [1.5, 0.0])).tolist()
    [0.25, 4.0]
    """
    y, f = _pair_iv(y, f, classification=False)
    return _apply(y, f, name="square")


@x64
def absolute(y, f):
    """Absolute loss ``|y - f|``.

    Parameters
    ----------
    y, f : array_like, shape (..., n_instances)
        Targets and predictions.

    Returns
    -------
    loss : jax.Array
        Per-instance absolute error.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxtests import losses
    >>> np.asarray(losses.absolute([1.0, 2.0], [1.5, 0.0])).tolist()
    [0.5, 2.0]
    """
    y, f = _pair_iv(y, f, classification=False)
    return _apply(y, f, name="absolute")


@x64
def epsilon_insensitive(y, f, epsilon):
    """Epsilon-insensitive loss ``max(0, |y - f| - epsilon)`` (Yildiz & Alpaydin, eq. 4).

    Parameters
    ----------
    y, f : array_like, shape (..., n_instances)
        Targets and predictions.
    epsilon : float
        Half-width of the tube inside which errors cost nothing; ``>= 0``.

    Returns
    -------
    loss : jax.Array
        Per-instance epsilon-insensitive loss.

    References
    ----------
    Yildiz, O. T. & Alpaydin, E. "Statistical Tests using Hinge/epsilon-Sensitive Loss".

    Examples
    --------
    >>> import jaxtests
    >>> jaxtests.losses.epsilon_insensitive([1.0, 2.0], [1.05, 3.0], 0.1).tolist()
    [0.0, 0.9]
    """
    y, f = _pair_iv(y, f, classification=False)
    epsilon = _scalar_iv(epsilon, "epsilon", positive=False)
    return _apply(y, f, np.float64(epsilon), name="epsilon_insensitive")


@x64
def power(y, f, p):
    """DELVE loss ``|y - f|^p`` (MacKay, eq. 1).

    With ``p < 2`` (MacKay suggests 0.5 or 0.1) heavy-tailed errors give
    bell-shaped losses and more sensitive paired tests.

    Parameters
    ----------
    y, f : array_like, shape (..., n_instances)
        Targets and predictions.
    p : float
        Exponent, ``> 0``.

    Returns
    -------
    loss : jax.Array
        Per-instance ``|error|^p``.

    References
    ----------
    MacKay, D. J. C., "More sensitive tests in DELVE".

    Examples
    --------
    >>> import numpy as np
    >>> from jaxtests import losses
    >>> np.asarray(losses.power([1.0, 5.0], [2.0, 1.0], 0.5)).tolist()
    [1.0, 2.0]
    """
    y, f = _pair_iv(y, f, classification=False)
    p = _scalar_iv(p, "p", positive=True)
    return _apply(y, f, np.float64(p), name="power")
