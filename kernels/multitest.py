"""Multiple-comparison p-value adjustment along the last axis.

``p : (..., m)`` -> adjusted ``(..., m)`` in the original order, as R's ``p.adjust``.
Pure; no validation.
"""

import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["ADJUSTMENTS", "adjust"]

ADJUSTMENTS = ("bonferroni", "holm", "hochberg", "hommel", "bh", "by", "none")


def _sorted(p, xp=jnp):
    order = xp.argsort(p, axis=-1, stable=True)
    return order, xp.take_along_axis(p, order, axis=-1)


def _unsort(q, order, xp=jnp):
    inv = xp.argsort(order, axis=-1, stable=True)
    return xp.take_along_axis(q, inv, axis=-1)


def _cummax(x, xp=jnp):
    if xp is jnp:
        return lax.cummax(x, axis=x.ndim - 1)
    return np.maximum.accumulate(x, axis=-1)


def _reverse_cummin(x, xp=jnp):
    if xp is jnp:
        return jnp.flip(lax.cummin(jnp.flip(x, axis=-1), axis=x.ndim - 1), axis=-1)
    return np.minimum.accumulate(x[..., ::-1], axis=-1)[..., ::-1]


def _hommel(ps, xp=jnp):
    # R's p.adjust(method = "hommel") on ascending ps, rewritten with masks so that the
    # loop over m = n-1, ..., 2 runs as one fori_loop for every batch element at once
    # (a Python loop of the same body in numpy).
    n = ps.shape[-1]
    idx = xp.broadcast_to(xp.arange(n), ps.shape)
    rank = (idx + 1).astype(ps.dtype)
    init = xp.min(n * ps / rank, axis=-1, keepdims=True)
    q0 = xp.broadcast_to(init, ps.shape)

    def body(step, carry):
        q, pa = carry
        m = n - 1 - step  # n-1 down to 2
        cut = n - m + 1  # 0-based first index of R's i2 = (n-m+2):n
        m = xp.asarray(m).astype(ps.dtype)
        in2 = idx >= cut
        denom = (idx - cut + 2).astype(ps.dtype)
        q1 = xp.min(xp.where(in2, m * ps / xp.where(in2, denom, 1), xp.inf), axis=-1)
        q_i1 = xp.minimum(m * ps, q1[..., None])
        last = xp.take(q_i1, cut - 1, axis=-1)  # q[n - m + 1] (1-based) after the update
        q = xp.where(in2, last[..., None], q_i1)
        return q, xp.maximum(pa, q)

    carry = (q0, q0)
    if n > 2 and xp is jnp:
        carry = lax.fori_loop(0, n - 2, body, carry)
    elif n > 2:
        for step in range(n - 2):
            carry = body(step, carry)
    return xp.maximum(carry[1], ps)


def adjust(p, method, xp=jnp):
    """Adjusted p-values for a static ``method`` in :data:`ADJUSTMENTS`; ``p : (..., m)``.

    ``xp=numpy`` adjusts on the host (nothing compiled), with the same arithmetic.
    """
    m = p.shape[-1]
    if method == "none":
        return p
    if method == "bonferroni":
        return xp.minimum(m * p, 1)
    order, ps = _sorted(p, xp)
    rank = xp.broadcast_to(xp.arange(1, m + 1, dtype=p.dtype), p.shape)
    if method == "holm":
        q = _cummax((m - rank + 1) * ps, xp)
    elif method == "hochberg":
        q = _reverse_cummin((m - rank + 1) * ps, xp)
    elif method in ("bh", "by"):
        scale = m / rank
        if method == "by":
            scale = scale * xp.sum(1 / rank, axis=-1, keepdims=True)
        q = _reverse_cummin(scale * ps, xp)
    elif method == "hommel":
        q = _hommel(ps, xp)
    else:
        raise ValueError(f"unknown adjustment {method!r}")
    return _unsort(xp.minimum(q, 1), order, xp)
