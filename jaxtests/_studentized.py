"""The studentized range with infinite degrees of freedom: the range of ``k`` standard normals.

Nemenyi's test needs its upper quantile and tail. ``scipy.stats.studentized_range`` has them
for any degrees of freedom, but importing ``scipy.stats`` costs 0.3-0.5 s, more than the
whole test; with infinite degrees of freedom the law is a one-dimensional integral, computed
here with ``scipy.special``'s normal tails on a fixed grid (``tests/test_friedman.py``
checks both against scipy's to 1e-10 relative).
"""

import functools

import numpy as np

from jaxtests._tails import special

__all__ = ["range_isf", "range_sf"]

# z from -12 to 12: beyond, phi(z) < 1e-31. Composite Simpson's rule on a fixed grid; the
# integrand is smooth, and the sums are normalised by the same rule's integral of the
# minimum's density (exactly 1), which cancels the rule's common error (measured: within
# 1e-13 of erfc(q / 2) for k = 2 at every q, against 1.5e-5 for scipy's far tail).
_Z = np.linspace(-12.0, 12.0, 4_801)
_W = np.full(_Z.size, 2.0)
_W[1::2], _W[0], _W[-1] = 4.0, 1.0, 1.0
_W *= (_Z[1] - _Z[0]) / 3
_PHI = np.exp(-0.5 * _Z * _Z) / np.sqrt(2 * np.pi)


def range_sf(q, k):
    """``P(R > q)`` for the range ``R`` of ``k`` iid standard normals; ``q`` array-like.

    With ``z`` the minimum, ``P(R > q) = k int phi(z) (a^(k-1) - (a - c)^(k-1)) dz``,
    ``a = P(Z > z)``, ``c = P(Z > z + q)``; the difference is taken as
    ``-a^(k-1) expm1((k-1) log1p(-c/a))``, so far tails keep their relative accuracy.
    """
    sp = special()
    q = np.asarray(q, np.float64)
    flat = q.reshape(-1, 1)
    a = sp.ndtr(-_Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        ak = np.where(a > 0, np.exp((k - 1) * np.log(a)), 0.0)  # a^(k-1)
        c = sp.ndtr(-(_Z[None, :] + np.maximum(flat, 0)))
        ratio = np.where(a > 0, c / a, 0.0)
        term = -ak * np.expm1((k - 1) * np.log1p(-ratio))
    dens = _PHI * _W
    out = (term @ dens) / (ak @ dens)  # the rule's integral of k phi a^(k-1), not 1
    out = np.where(flat[:, 0] <= 0, 1.0, np.clip(out, 0.0, 1.0))
    return np.where(np.isnan(flat[:, 0]), np.nan, out).reshape(q.shape)


@functools.lru_cache(maxsize=256)
def range_isf(p, k):
    """The ``q`` with ``P(R > q) = p`` (``0 < p < 1``), to the last bits of a float.

    Each step evaluates the tail at 16 points of the bracket and keeps the one cell where
    it crosses ``p``; fourteen steps shrink ``[0, 40]`` below a float's spacing.
    """
    lo, hi = 0.0, 40.0  # P(R > 40) is below 1e-300 for any k of practical size
    for _ in range(20):
        grid = np.linspace(lo, hi, 17)
        above = range_sf(grid, k) > p  # decreasing in q
        i = int(np.sum(above)) - 1  # the last point still above p
        lo, hi = grid[max(i, 0)], grid[min(i + 1, 16)]
        if hi - lo <= 4 * np.spacing(hi):
            break
    return 0.5 * (lo + hi)
