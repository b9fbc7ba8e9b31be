"""Tails of the reference distributions: on the host for concrete statistics, traced under jit.

A parametric test's statistic comes from a jitted kernel (batched over leading axes); its
p-value is a tail of a known distribution. Compiling that tail (``betainc`` and
``gammaincc`` are loops of a continued fraction) costs more than the statistic's program
itself: a first call of :func:`jaxtests.ttest_paired` compiled 0.22 s, of which ``betainc``
0.09 s; Hotelling's T² 0.46 s, of which the tails and the Holm adjustment 0.25 s (2-core
machine, quiet). So for concrete statistics, what every eager call has, the tails here are
``scipy.special``'s, on the host's numpy arrays, in the same mirrored forms;
under the caller's ``jax.jit``/``jax.vmap`` the statistics are tracers and the traced forms
of :mod:`jaxtests.kernels.statistics` run. The two agree to about 1e-13 relative
(``tests/test_tails.py`` checks 1e-12 on every public function that has both paths).

Every function takes arrays (or scalars) that broadcast, returns float64 numpy arrays for
concrete input and JAX arrays for traced input.
"""

import functools

import numpy as np

from jaxtests._validation import is_concrete
from jaxtests.kernels import multitest as kmultitest
from jaxtests.kernels import statistics as kstatistics

__all__ = [
    "adjust",
    "binom_cdf",
    "binom_pmf",
    "chi2_sf",
    "f_sf",
    "host",
    "norm_sf",
    "special",
    "t_pvalue",
    "traced",
]


def traced(*xs):
    """Whether any of ``xs`` is a tracer (a call under the caller's ``jit`` or ``vmap``)."""
    return not all(is_concrete(x) for x in xs)


def host(x):
    """``x`` as numpy when concrete (arithmetic on a concrete JAX array compiles a program
    per operation and shape: 20 ms each), a tracer as it is."""
    return x if traced(x) else np.asarray(x)


@functools.cache
def special():
    """``scipy.special``, imported at first use (0.14 s; ``import jaxtests`` loads no scipy,
    and nothing here needs ``scipy.stats``, 0.5-4 s)."""
    import scipy.special

    return scipy.special


def _f64(x):
    return np.asarray(x, np.float64)


def _betainc_sym(a, b, x, xc):
    """``I_x(a, b)`` from ``x`` and ``xc = 1 - x``, mirrored above the mean (the traced form).

    ``1 - I_xc(b, a)`` above ``a / (a + b)`` keeps p-values near 1 exact: ``stdtr`` and
    ``fdtrc`` lose absolute accuracy there (``scipy.special.stdtr(1, -1e-8)`` is off by
    1.6e-9).
    """
    swap = x > a / (a + b)
    r = special().betainc(np.where(swap, b, a), np.where(swap, a, b), np.where(swap, xc, x))
    return np.where(swap, 1 - r, r)


def _t_two_sided(t, df):
    t, df = np.broadcast_arrays(_f64(t), _f64(df))
    t2 = t * t
    with np.errstate(invalid="ignore"):  # t = inf: x = 0 and xc = nan -> p = 0, as traced
        return _betainc_sym(df / 2, np.full_like(t, 0.5), df / (df + t2), t2 / (df + t2))


def t_pvalue(t, df, alternative):
    """p-value of a t statistic with ``df`` degrees of freedom for ``alternative``.

    Two-sided ``P(|T| > |t|) = I_x(df / 2, 1 / 2)`` with ``x = df / (df + t^2)``, one-sided
    half of it (or one minus that half), as the traced form: no ``1 - (...)`` cancellation
    in either tail.
    """
    if traced(t, df):
        return kstatistics.t_pvalue(t, df, alternative)
    t = _f64(t)
    two = _t_two_sided(t, df)
    if alternative == "two-sided":
        return two
    side = t if alternative == "greater" else -t
    return np.where(side > 0, 0.5 * two, 1 - 0.5 * two)


def f_sf(f, dfn, dfd):
    """``P(F > f)`` for ``F ~ F(dfn, dfd)``: ``I_x(dfd/2, dfn/2)``, ``x = dfd / (dfd + dfn f)``."""
    if traced(f, dfn, dfd):
        return kstatistics.f_sf(f, dfn, dfd)
    f, dfn, dfd = np.broadcast_arrays(_f64(f), _f64(dfn), _f64(dfd))
    with np.errstate(invalid="ignore"):
        return _betainc_sym(dfd / 2, dfn / 2, dfd / (dfd + dfn * f), dfn * f / (dfd + dfn * f))


def chi2_sf(x, df):
    """``P(X > x)`` for ``X ~ chi-square(df)``."""
    if traced(x, df):
        return kstatistics.chi2_sf(x, df)
    return special().chdtrc(_f64(df), _f64(x))


def norm_sf(z):
    """Standard normal ``P(Z > z)``."""
    if traced(z):
        return kstatistics.norm_sf(z)
    return special().ndtr(-_f64(z))


def binom_cdf(k, n, p):
    """``P(X <= k)`` for ``X ~ Bin(n, p)``: 0 below 0, 1 from ``n`` on (as the traced form)."""
    if traced(k, n, p):
        return kstatistics.binom_cdf(k, n, p)
    k, n, p = np.broadcast_arrays(_f64(k), _f64(n), _f64(p))
    inside = (k >= 0) & (k < n)
    # counts: integer-valued (scipy takes integer k and n)
    val = special().bdtr(
        np.where(inside, k, 0).astype(np.int64), np.where(inside, n, 1).astype(np.int64), p
    )
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, val))


def binom_pmf(k, n, p):
    """``P(X = k)`` for ``X ~ Bin(n, p)`` via log-gamma (the traced form's formula)."""
    if traced(k, n, p):
        return kstatistics.binom_pmf(k, n, p)
    sp = special()
    k, n, p = _f64(k), _f64(n), _f64(p)
    logc = sp.gammaln(n + 1) - sp.gammaln(k + 1) - sp.gammaln(n - k + 1)
    return np.exp(logc + sp.xlogy(k, p) + sp.xlog1py(n - k, -p))


def adjust(p, method):
    """p-values ``(..., m)`` adjusted along the last axis (:func:`kernels.multitest.adjust`).

    Not a tail, but the step after one: concrete p-values are adjusted in numpy on the
    host (nothing compiled); traced p-values in the caller's program.
    """
    if traced(p):
        return kmultitest.adjust(p, method)
    return kmultitest.adjust(np.asarray(p, np.float64), method, xp=np)
