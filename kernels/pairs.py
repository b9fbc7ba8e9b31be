"""Many models on the same items: every pair's sign-flipped mean from one product per block.

Under one sign pattern ``s`` the flipped sum of pair ``(a, b)``'s differences
is ``sum_i s_i (y_ai - y_bi) = T_a(s) - T_b(s)`` with ``T_a(s) = sum_i s_i y_ai``:
one ``(draws, n) @ (n, k)`` product gives all ``k`` flipped sums, and the
``k (k - 1) / 2`` pairs are their differences (the pair differences are never
materialised). ``T_a`` alone is not a null statistic; only differences are used.
Rows ``y`` may be shifted by any common per-item vector (the pairs do not see it).

Pure; no validation.
"""

import jax.numpy as jnp

__all__ = ["flipped_pair_means", "rank_histogram", "ranks"]


def flipped_pair_means(bits, y, ia, ib, m):
    """Means of pair ``(ia[p], ib[p])``'s flipped differences: ``bits : (L, n)`` bool
    (True keeps an item's sign), ``y : (k, n)`` -> ``(P, L)``, divided by ``m``."""
    s = jnp.where(bits, 1.0, -1.0).astype(y.dtype)
    t = s @ y.T  # (L, k): each model's flipped sum
    return (t[:, ia] - t[:, ib]).T / m


def ranks(means, higher_is_better):
    """Competition ranks ``1 + #(strictly better models)``: ``(L, k)`` means -> int32 ranks."""
    if higher_is_better:
        better = means[:, None, :] > means[:, :, None]
    else:
        better = means[:, None, :] < means[:, :, None]
    return 1 + jnp.sum(better, axis=2, dtype=jnp.int32)


def rank_histogram(means, valid, higher_is_better):
    """``hist[a, r]``: valid draws of ``means : (L, k)`` that rank model ``a`` at ``r + 1``."""
    k = means.shape[1]
    r = ranks(means, higher_is_better) - 1
    hit = (r[:, :, None] == jnp.arange(k, dtype=r.dtype)[None, None, :]) & valid[:, None, None]
    return jnp.sum(hit, axis=0, dtype=jnp.int64)
