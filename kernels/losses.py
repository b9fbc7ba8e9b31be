"""Per-instance loss kernels. Shapes: ``y, f : (..., n_instances)`` broadcastable.

Pure; no validation. Labels are ±1 for the classification losses. The
predicted class of a decision value ``f`` is +1 iff ``f > 0``: ``f = 0``
predicts -1, as scikit-learn's ``LinearClassifierMixin.predict`` (``scores >
0``) and every confusion count here (``jaxtests.kernels.measures``).
"""

import jax.numpy as jnp

__all__ = ["absolute", "epsilon_insensitive", "hinge", "power", "square", "zero_one"]


def zero_one(y, f):
    """0/1 loss of the prediction ``+1 if f > 0 else -1``: 1 where it differs from ``y``."""
    return jnp.where((f > 0) == (y > 0), 0, 1).astype(jnp.result_type(y, f))


def hinge(y, f):
    """Hinge loss ``max(0, 1 - y f)`` (Yildiz & Alpaydin, eq. 2)."""
    return jnp.maximum(0, 1 - y * f)


def square(y, f):
    """Square loss ``(y - f)^2`` (Yildiz & Alpaydin, eq. 3)."""
    return jnp.square(y - f)


def absolute(y, f):
    """Absolute loss ``|y - f|``."""
    return jnp.abs(y - f)


def epsilon_insensitive(y, f, epsilon):
    """Epsilon-insensitive loss ``max(0, |y - f| - epsilon)`` (Yildiz & Alpaydin, eq. 4)."""
    return jnp.maximum(0, jnp.abs(y - f) - epsilon)


def power(y, f, p):
    """DELVE loss ``|y - f|^p`` (MacKay, eq. 1); ``0^p = 0`` for ``p > 0``."""
    return jnp.abs(y - f) ** p
