"""Confidence intervals for a test error and the test-set size they need (Hein)."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _pvalues
from jaxtests._precision import x64
from jaxtests._results import ConfidenceInterval, result, static_field
from jaxtests._validation import as_float_array, check_probability

__all__ = [
    "IntervalResult",
    "clopper_pearson",
    "hoeffding_interval",
    "hoeffding_sample_size",
]


@result
class IntervalResult:
    """A confidence interval for an error rate (or any binomial proportion).

    Attributes
    ----------
    low, high : arrays
        The bounds, within [0, 1].
    estimate : array
        The observed proportion ``k / n`` (or the given test error).
    epsilon : array or None
        Half-width of the Hoeffding interval before clipping to [0, 1].
    confidence_level : float
    method : str
        ``"clopper-pearson"`` or ``"hoeffding"``.
    confidence_interval : ConfidenceInterval
        ``(low, high)``, the shape of every interval of jaxtests.
    """

    low: jax.Array
    high: jax.Array
    estimate: jax.Array
    epsilon: jax.Array | None
    confidence_level: float = static_field()
    method: str = static_field()

    @property
    def confidence_interval(self):
        """``ConfidenceInterval(low, high)``."""
        return ConfidenceInterval(self.low, self.high)


def _counts_iv(k, n):
    k = np.asarray(k)
    n = np.asarray(n)
    for v, name in ((k, "k"), (n, "n")):
        if v.dtype.kind not in "iu" and not (
            v.dtype.kind == "f" and np.all(np.isfinite(v)) and np.all(v == np.round(v))
        ):
            raise TypeError(f"`{name}` must hold whole numbers (counts), got {v!r}.")
    if np.any(n < 1):
        raise ValueError(f"`n` must be at least 1, got {n.min()}.")
    if np.any(k < 0):
        raise ValueError(f"`k` must be non-negative, got {k.min()}.")
    try:
        k, n = np.broadcast_arrays(k, n)
    except ValueError:
        raise ValueError(
            f"`k` and `n` must broadcast, got shapes {k.shape} and {n.shape}."
        ) from None
    if np.any(k > n):
        raise ValueError("`k` must not exceed `n` (k successes out of n trials).")
    return k.astype(np.float64), n.astype(np.float64)


@x64
def clopper_pearson(k, n, *, confidence_level=0.95):
    """Clopper-Pearson ("exact") confidence interval for a binomial proportion.

    Parameters
    ----------
    k : array_like of int
        Number of errors (successes) observed, ``0 <= k <= n``; batch axes allowed.
    n : array_like of int
        Number of test instances (trials), broadcastable with ``k``.
    confidence_level : float
        ``1 - delta``.

    Returns
    -------
    IntervalResult
        ``low``, ``high`` and ``estimate = k / n``.

    Notes
    -----
    With ``F(k, n, p) = P(X <= k)``, ``X ~ Bin(n, p)``: ``low`` solves
    ``1 - F(k - 1, n, low) = delta/2`` (0 if ``k = 0``) and ``high`` solves
    ``F(k, n, high) = delta/2`` (1 if ``k = n``), i.e. beta quantiles (Hein), the
    same as R's ``binom.test`` and scipy's ``binomtest(k, n).proportion_ci("exact")``.

    References
    ----------
    Clopper, C. J., & Pearson, E. S. (1934). Biometrika 26, 404-413.
    Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
    University, 2013.

    Examples
    --------
    >>> ci = clopper_pearson(12, 100)
    >>> round(float(ci.low), 4), round(float(ci.high), 4)
    (0.0636, 0.2002)
    """
    level = check_probability(confidence_level, "confidence_level")
    k, n = _counts_iv(k, n)
    kj, nj = jnp.asarray(k), jnp.asarray(n)
    low, high = _pvalues.clopper_pearson(k, n, level)  # scipy's beta quantiles
    return IntervalResult(
        low=jnp.asarray(low),
        high=jnp.asarray(high),
        estimate=kj / nj,
        epsilon=None,
        confidence_level=level,
        method="clopper-pearson",
    )


@x64
def hoeffding_interval(error, m, *, confidence_level=0.95):
    """Hoeffding confidence interval ``error ± sqrt(log(2/delta) / (2 m))``.

    Parameters
    ----------
    error : array_like
        Test error(s) in [0, 1] measured on ``m`` i.i.d. instances.
    m : array_like of int
        Test-set size(s), broadcastable with ``error``.
    confidence_level : float
        ``1 - delta``.

    Returns
    -------
    IntervalResult
        ``epsilon`` is the half-width; ``low``/``high`` are clipped to [0, 1].

    Notes
    -----
    Hoeffding's inequality for variables in [0, 1] gives
    ``P(|R - R_m| > eps) <= 2 exp(-2 m eps^2) = delta`` (Hein). It is distribution
    free and wider than Clopper-Pearson, especially for errors near 0 or 1.

    References
    ----------
    Hoeffding, W. (1963). JASA 58, 13-30.
    Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
    University, 2013. Its example: m = 1000, delta = 0.05
    gives 0.0429.

    Examples
    --------
    >>> round(float(hoeffding_interval(0.1, 1000).epsilon), 4)
    0.0429
    """
    level = check_probability(confidence_level, "confidence_level")
    err = as_float_array(error, "error", allow_empty=False)
    e = np.asarray(err)
    if np.any((e < 0) | (e > 1)):
        raise ValueError("`error` must lie in [0, 1].")
    m_arr = np.asarray(m)
    if m_arr.dtype.kind not in "iu":
        raise TypeError(f"`m` must hold integers (test-set sizes), got dtype {m_arr.dtype}.")
    if np.any(m_arr < 1):
        raise ValueError(f"`m` must be at least 1, got {m_arr.min()}.")
    try:
        shape = np.broadcast_shapes(e.shape, m_arr.shape)
    except ValueError:
        raise ValueError(
            f"`error` and `m` must broadcast, got shapes {e.shape} and {m_arr.shape}."
        ) from None
    err = jnp.broadcast_to(err, shape)
    eps = _hoeffding_eps(
        jnp.broadcast_to(jnp.asarray(m_arr, dtype=jnp.float64), shape), jnp.asarray(1 - level)
    )
    return IntervalResult(
        low=jnp.maximum(err - eps, 0.0),
        high=jnp.minimum(err + eps, 1.0),
        estimate=err,
        epsilon=eps,
        confidence_level=level,
        method="hoeffding",
    )


@functools.partial(jax.jit)
def _hoeffding_eps(m, delta):
    return jnp.sqrt(jnp.log(2 / delta) / (2 * m))


def hoeffding_sample_size(epsilon, *, confidence_level=0.95):
    """Smallest test-set size with ``|R - R_m| <= epsilon`` at probability ``1 - delta``.

    Parameters
    ----------
    epsilon : float or array_like
        Wanted half-width, in (0, 1].
    confidence_level : float
        ``1 - delta``.

    Returns
    -------
    int or numpy.ndarray of int
        ``ceil(log(2/delta) / (2 epsilon^2))``: a Python int for a scalar ``epsilon``
        (exact however large), an int64 array otherwise (``ValueError`` beyond its range).

    Notes
    -----
    Inverts Hoeffding's bound ``2 exp(-2 m eps^2) <= delta`` (Hein: for
    ``delta = 0.05`` and ``epsilon = 0.01``, ``m > 18444``, i.e. 18445).

    References
    ----------
    Hoeffding, W. (1963). Probability inequalities for sums of bounded random
    variables. Journal of the American Statistical Association 58(301), 13-30.
    Hein, M. (2013). "Performance Measures and Statistical Tests II", lecture 16,
    Machine Learning, Saarland University.

    Examples
    --------
    >>> hoeffding_sample_size(0.01)
    18445
    """
    level = check_probability(confidence_level, "confidence_level")
    eps = np.asarray(epsilon)
    if eps.dtype.kind not in "iuf":
        raise TypeError(f"`epsilon` must be a real number, got dtype {eps.dtype}.")
    if not np.all(np.isfinite(eps)) or np.any((eps <= 0) | (eps > 1)):
        raise ValueError(f"`epsilon` must lie in (0, 1], got {epsilon!r}.")
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        m = np.ceil(math.log(2 / (1 - level)) / (2 * eps.astype(np.float64) ** 2))
    if not np.all(np.isfinite(m)):
        raise ValueError(
            f"`epsilon` is too small: the sample size for `epsilon`={epsilon!r} exceeds the "
            "largest float."
        )
    if m.ndim == 0:
        return math.ceil(float(m))  # a Python int: exact at any size
    if np.any(m > np.iinfo(np.int64).max):
        raise ValueError(
            f"`epsilon` is too small: a sample size exceeds the int64 range of the returned "
            f"array (largest {float(m.max()):.4g}); pass each `epsilon` as a scalar for an "
            "exact Python int."
        )
    return m.astype(np.int64)
