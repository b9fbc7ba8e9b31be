"""Confidence intervals of a t test: the mean difference's t interval and d_z's exact one."""

import math

import numpy as np

from jaxtests._results import ConfidenceInterval
from jaxtests._tails import special
from jaxtests._validation import check_probability

__all__ = ["ConfidenceInterval"]


def _t_interval(center, se, df, alternative, confidence_level):
    confidence_level = check_probability(confidence_level, "confidence_level")
    center = np.asarray(center, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    if alternative == "two-sided":
        q = special().stdtrit(df, 0.5 + confidence_level / 2)
        low, high = center - q * se, center + q * se
    else:
        q = special().stdtrit(df, confidence_level)
        inf = np.full_like(center, np.inf)
        if alternative == "less":
            low, high = -inf, center + q * se
        else:
            low, high = center - q * se, inf
    # numpy like the result fields (no float64 truncation warnings outside x64)
    return ConfidenceInterval(
        np.float64(low) if low.ndim == 0 else low, np.float64(high) if high.ndim == 0 else high
    )


# Above this |t| scipy's (Boost's) noncentral t CDF turns NaN or slow; _nct_cdf integrates.
_T_BOOST_MAX = 1e3
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(160)


def _nct_cdf(df, nc, t):
    """``P(T <= t)`` for the noncentral t with ``df`` and ``nc``, elementwise, ``t >= 0``."""
    big = t > _T_BOOST_MAX
    with np.errstate(all="ignore"):
        cdf = special().nctdtr(df, nc, np.where(big, 0.0, t))
        # Boost returns NaN deep in a tail: 1 where nc is below t, 0 above.
        cdf = np.where(np.isnan(cdf), np.where(nc < t, 1.0, 0.0), cdf)
        if big.any():
            cdf = np.where(big, _nct_cdf_large_t(df, nc, np.where(big, t, 1.0)), cdf)
    return cdf


def _nct_cdf_large_t(df, nc, t):
    # T = (Z + nc) / sqrt(V / df): P(T <= t) = P(Z <= -nc) + int_{-nc}^inf phi(z)
    # P(V >= df (nc + z)^2 / t^2) dz, on |z| <= 12 by Gauss-Legendre (the chi-square
    # factor varies slowly in z when t is large). Nodes in z, not nc + z: at nc ~ 1e10
    # the sum would round the nodes.
    nc, t = np.broadcast_arrays(np.asarray(nc, np.float64), np.asarray(t, np.float64))
    lo = np.clip(-nc, -12.0, 12.0)[..., None]
    z = lo + (12.0 - lo) * (_GL_NODES + 1) / 2
    phi = np.exp(-(z**2) / 2) / math.sqrt(2 * math.pi)
    tail = special().chdtrc(df, df * ((nc[..., None] + z) / t[..., None]) ** 2)
    integral = np.sum(_GL_WEIGHTS * phi * tail, axis=-1) * (12.0 - lo[..., 0]) / 2
    return special().ndtr(-nc) + integral


def _nct_noncentrality(t, df, prob):
    """The noncentrality ``nc`` with ``P(T <= t | df, nc) = prob``, elementwise for
    finite ``t >= 0`` (the CDF decreases in ``nc``): bisection to rounding on a bracket
    grown from scipy's approximate ``nctdtrinc`` (its own tolerance is about 1e-4), or
    for large ``t`` from ``nc ~ t sqrt(chi2_df^-1(1 - prob) / df)``."""
    t = np.asarray(t, dtype=np.float64)
    big = t > _T_BOOST_MAX
    with np.errstate(all="ignore"):
        guess = special().nctdtrinc(df, prob, np.where(big, 0.0, t))
        asymptotic = t * np.sqrt(special().chdtri(df, prob) / df)
    guess = np.where(big, asymptotic, guess)
    guess = np.where(np.isfinite(guess), guess, t)
    width = 1e-3 * (1 + np.abs(guess))
    lo, hi = guess - width, guess + width
    for _ in range(1100):  # doubling: enough to reach any double from the guess
        low_ok = _nct_cdf(df, lo, t) >= prob
        high_ok = _nct_cdf(df, hi, t) <= prob
        if low_ok.all() and high_ok.all():
            break
        width = np.where(low_ok & high_ok, width, 2 * width)
        lo = np.where(low_ok, lo, lo - width)
        hi = np.where(high_ok, hi, hi + width)
    for _ in range(100):
        mid = lo + (hi - lo) / 2
        if not np.any((mid > lo) & (mid < hi)):
            break
        below = _nct_cdf(df, mid, t) >= prob
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    # Beyond 1e12 the limit is exact to rounding (relative error O(1/nc)), and nc ± 12
    # in the integral would be lost to it.
    return np.where(t > 1e12, asymptotic, lo + (hi - lo) / 2)


def _effect_size_interval(statistic, df, scale, alternative, confidence_level):
    """Exact interval for ``delta = mean / sd`` from ``t ~ nct(df, delta / scale)``:
    the noncentralities whose ``t`` quantiles hold the observed one, times ``scale``."""
    confidence_level = check_probability(confidence_level, "confidence_level")
    t = np.asarray(statistic, dtype=np.float64)
    finite = np.isfinite(t)
    negative = t < 0
    # P(T <= t | nc) = 1 - P(T <= -t | -nc): solve at |t| and flip the sign back.
    s = np.where(finite, np.abs(t), 0.0)
    if alternative == "two-sided":
        probs = (0.5 + confidence_level / 2, 0.5 - confidence_level / 2)
    elif alternative == "greater":
        probs = (confidence_level, None)
    else:
        probs = (None, 1 - confidence_level)
    limits = []
    for prob in probs:
        if prob is None:
            limits.append(None)
            continue
        nc = _nct_noncentrality(s, df, np.where(negative, 1 - prob, prob))
        nc = np.where(negative, -nc, nc) * scale
        # zero variance: t = ±inf gives the point ±inf, t = NaN (d all 0) NaN
        limits.append(np.where(finite, nc, t))
    inf = np.full_like(t, np.inf)
    low = -inf if limits[0] is None else limits[0]
    high = inf if limits[1] is None else limits[1]
    return ConfidenceInterval(
        np.float64(low) if low.ndim == 0 else low, np.float64(high) if high.ndim == 0 else high
    )
