"""Multiple-comparison p-value adjustment along the last axis.

``p : (..., m)`` -> adjusted ``(..., m)`` in the original order, as R's ``p.adjust``.
Pure; no validation.
"""

import jax.numpy as jnp
from jax import lax

__all__ = ["ADJUSTMENTS", "adjust"]

ADJUSTMENTS = ("bonferroni", "holm", "hochberg", "hommel", "bh", "by", "none")


def _sorted(p):
    order = jnp.argsort(p, axis=-1, stable=True)
    return order, jnp.take_along_axis(p, order, axis=-1)


def _unsort(q, order):
    inv = jnp.argsort(order, axis=-1, stable=True)
    return jnp.take_along_axis(q, inv, axis=-1)


def _reverse_cummin(x):
    return jnp.flip(lax.cummin(jnp.flip(x, axis=-1), axis=x.ndim - 1), axis=-1)


def _hommel(ps):
    # R's p.adjust(method = "hommel") on ascending ps, rewritten with masks so that the
    # loop over m = n-1, ..., 2 runs as one fori_loop for every batch element at once.
    n = ps.shape[-1]
    idx = jnp.broadcast_to(jnp.arange(n), ps.shape)
    rank = (idx + 1).astype(ps.dtype)
    init = jnp.min(n * ps / rank, axis=-1, keepdims=True)
    q0 = jnp.broadcast_to(init, ps.shape)

    def body(step, carry):
        q, pa = carry
        m = n - 1 - step  # n-1 down to 2
        cut = n - m + 1  # 0-based first index of R's i2 = (n-m+2):n
        m = m.astype(ps.dtype)
        in2 = idx >= cut
        denom = (idx - cut + 2).astype(ps.dtype)
        q1 = jnp.min(jnp.where(in2, m * ps / jnp.where(in2, denom, 1), jnp.inf), axis=-1)
        q_i1 = jnp.minimum(m * ps, q1[..., None])
        last = jnp.take(q_i1, cut - 1, axis=-1)  # q[n - m + 1] (1-based) after the update
        q = jnp.where(in2, last[..., None], q_i1)
        return q, jnp.maximum(pa, q)

    if n > 2:
        _, pa = lax.fori_loop(0, n - 2, body, (q0, q0))
    else:
        pa = q0
    return jnp.maximum(pa, ps)


def adjust(p, method):
    """Adjusted p-values for a static ``method`` in :data:`ADJUSTMENTS`; ``p : (..., m)``."""
    m = p.shape[-1]
    if method == "none":
        return p
    if method == "bonferroni":
        return jnp.minimum(m * p, 1)
    order, ps = _sorted(p)
    rank = jnp.broadcast_to(jnp.arange(1, m + 1, dtype=p.dtype), p.shape)
    if method == "holm":
        q = lax.cummax((m - rank + 1) * ps, axis=ps.ndim - 1)
    elif method == "hochberg":
        q = _reverse_cummin((m - rank + 1) * ps)
    elif method in ("bh", "by"):
        scale = m / rank
        if method == "by":
            scale = scale * jnp.sum(1 / rank, axis=-1, keepdims=True)
        q = _reverse_cummin(scale * ps)
    elif method == "hommel":
        q = _hommel(ps)
    else:
        raise ValueError(f"unknown adjustment {method!r}")
    return _unsort(jnp.minimum(q, 1), order)
