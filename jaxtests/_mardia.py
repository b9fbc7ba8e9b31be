"""Mardia's tests of multivariate normality, the assumption of Hotelling's T² and MANOVA."""

import math

import jax
import jax.numpy as jnp

from jaxtests import _tails
from jaxtests._precision import x64
from jaxtests._results import result, static_field
from jaxtests._validation import as_float_array, rescale_pow2
from jaxtests._validation import check_rcond as _check_rcond
from jaxtests.kernels import statistics as kstatistics

__all__ = ["MardiaResult", "mardia"]


@result
class MardiaResult:
    """Result of :func:`mardia`.

    ``skewness`` (b1p) and ``kurtosis`` (b2p) are Mardia's sample measures;
    ``skewness_statistic = n b1p / 6 ~ chi²(skewness_df)``,
    ``kurtosis_statistic = (b2p - p (p + 2)) / sqrt(8 p (p + 2) / n) ~ N(0, 1)``
    (two-sided p-value).
    """

    skewness_statistic: jax.Array
    skewness_pvalue: jax.Array
    kurtosis_statistic: jax.Array
    kurtosis_pvalue: jax.Array
    skewness: jax.Array
    kurtosis: jax.Array
    skewness_df: int = static_field()


@jax.jit
def _mardia(x):
    n, p = x.shape[-2], x.shape[-1]
    mom = kstatistics.mardia_moments(x)
    skew = n * mom.skewness / 6
    z = (mom.kurtosis - p * (p + 2)) / math.sqrt(8 * p * (p + 2) / n)
    xc = x - jnp.mean(x, axis=-2, keepdims=True)
    rcond = kstatistics.correlation_rcond(kstatistics.covariance(x), jnp.max(jnp.abs(xc), axis=-2))
    return skew, z, mom, rcond


@x64
def mardia(x):
    """Mardia's tests of multivariate normality (skewness and kurtosis).

    Parameters
    ----------
    x : array_like, shape ``(..., n, p)``
        ``n`` observations (e.g. folds) of ``p`` measures; leading axes are batch axes.

    Returns
    -------
    MardiaResult

    Notes
    -----
    With ``g_ij = (x_i - xbar)' S^-1 (x_j - xbar)`` and ``S`` the covariance with
    divisor ``n``: ``b1p = sum_ij g_ij³ / n²``, ``b2p = sum_i g_ii² / n``. The large-sample
    reference distributions are used (no small-sample correction). Yildiz & Alpaydin use this test
    to check the normality assumption of the multivariate tests.

    References
    ----------
    Mardia, K. V. (1970). Measures of multivariate skewness and kurtosis with
    applications. Biometrika 57, 519-530.

    Examples
    --------
    >>> import numpy as np, jaxtests
    >>> x = np.random.default_rng(0).normal(size=(20, 2))  # 20 folds, 2 measures
    >>> r = jaxtests.mardia(x)
    >>> round(float(r.skewness_pvalue), 4), round(float(r.kurtosis_pvalue), 4)
    (0.9404, 0.8874)
    """
    x = as_float_array(x, "x", min_ndim=2)
    n, p = x.shape[-2], x.shape[-1]
    if n <= p:
        raise ValueError(
            f"`x` has n={n} observations for p={p} measures: Mardia's tests need n > p "
            "(a nonsingular covariance)."
        )
    _, x = rescale_pow2(x)  # exact; Mardia's moments are scale-invariant
    skew, z, mom, rcond = _mardia(x)
    df = p * (p + 1) * (p + 2) // 6
    sp, kp = _tails.chi2_sf(skew, df), 2 * _tails.norm_sf(abs(_tails.host(z)))
    _check_rcond(rcond, "The covariance of `x`", None, "Drop a redundant measure.")
    return MardiaResult(
        skewness_statistic=skew,
        skewness_pvalue=sp,
        kurtosis_statistic=z,
        kurtosis_pvalue=kp,
        skewness=mom.skewness,
        kurtosis=mom.kurtosis,
        skewness_df=df,
    )
