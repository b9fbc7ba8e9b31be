"""Kernels of the power and calibration studies: difference generators and batched tests.

Generators draw ``(n, m)`` (or ``(n, m, p)``) arrays of paired differences,
one row per simulated experiment. The tests map ``d : (..., m)`` to p-values
``(...)`` with every leading axis a separate experiment, so one call runs
thousands of experiments. Pure; no validation.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jaxtests.kernels import statistics as kstatistics

__all__ = [
    "NOISE_KINDS",
    "bootstrap_differences",
    "hotelling_pvalue",
    "mvnormal_differences",
    "noise",
    "sign_pvalue",
    "signed_rank_table",
    "signed_ranks",
    "ternary_differences",
    "ttest_pvalue",
    "two_sided_or_tail",
    "wilcoxon_pvalue",
]

NOISE_KINDS = ("normal", "t", "cauchy", "lognormal")


# ----------------------------------------------------------------------------------------
# Generators
# ----------------------------------------------------------------------------------------


def noise(key, shape, kind, param, dtype):
    """Zero-centred noise of a static ``kind`` in :data:`NOISE_KINDS`, unit variance when finite.

    ``"normal"``: N(0, 1). ``"t"``: Student t with ``param`` degrees of freedom,
    scaled by ``sqrt((df - 2) / df)`` when ``df > 2``. ``"cauchy"``: standard
    Cauchy (no mean; symmetric about 0). ``"lognormal"``: ``exp(sigma Z)``
    (``sigma = param``) minus its mean ``exp(sigma^2 / 2)``, divided by its sd:
    mean 0 but skewed, so a mean-zero null holds while symmetry does not.
    """
    if kind == "normal":
        return jax.random.normal(key, shape, dtype)
    if kind == "t":
        z = jax.random.t(key, param, shape, dtype)
        return z * math.sqrt((param - 2) / param) if param > 2 else z
    if kind == "cauchy":
        return jax.random.cauchy(key, shape, dtype)
    s2 = param * param
    z = jnp.exp(param * jax.random.normal(key, shape, dtype))
    return (z - math.exp(s2 / 2)) / math.sqrt(math.expm1(s2) * math.exp(s2))


def ternary_differences(key, shape, disagreement, effect, dtype):
    """0/1-loss differences in {-1, 0, +1}: ``P(+1) = (q + e)/2``, ``P(-1) = (q - e)/2``.

    ``q = disagreement`` is the rate at which the two classifiers disagree on an
    instance and ``e = effect`` (a scalar) the difference of their error rates
    (the mean of ``d``).
    """
    u = jax.random.uniform(key, shape, dtype)
    e = jnp.asarray(effect, dtype)
    p_plus = (disagreement + e) / 2
    p_minus = (disagreement - e) / 2
    plus = (u < p_plus).astype(dtype)
    minus = ((u >= p_plus) & (u < p_plus + p_minus)).astype(dtype)
    return plus - minus


def mvnormal_differences(key, shape, mean, chol):
    """Multivariate normal rows: ``mean + L z``; ``shape = (..., m)``, ``mean : (p,)``,
    ``chol : (p, p)`` lower Cholesky factor -> ``(..., m, p)``."""
    z = jax.random.normal(key, (*tuple(shape), chol.shape[0]), chol.dtype)
    return mean.reshape((1,) * len(shape) + mean.shape) + jnp.einsum("ij,...j->...i", chol, z)


def bootstrap_differences(key, pool, shape):
    """Rows resampled with replacement from ``pool : (N,)`` -> ``shape``."""
    idx = jax.random.randint(key, shape, 0, pool.shape[0])
    return pool[idx]


# ----------------------------------------------------------------------------------------
# Tests: d : (..., m) -> p-values (...)
# ----------------------------------------------------------------------------------------


def two_sided_or_tail(p_greater, p_less, alternative):
    """scipy's rule: one tail, or ``min(1, 2 min(tails))`` for "two-sided"."""
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    return jnp.minimum(1, 2 * jnp.minimum(p_greater, p_less))


def ttest_pvalue(d, alternative):
    """Paired (one-sample) t test p-value of ``d : (..., m)``; NaN when ``sd = 0 = mean``."""
    return kstatistics.t_pvalue(kstatistics.t_statistic(d), d.shape[-1] - 1, alternative)


def sign_pvalue(d, alternative):
    """Sign test: positives among nonzero ``d`` are Binomial(n_nonzero, 1/2) under H0.

    Equals ``scipy.stats.binomtest(n_pos, n_nonzero).pvalue`` (the two-sided
    p of a symmetric binomial is twice the smaller tail); 1 when all ``d`` are 0.
    """
    pos = jnp.sum(d > 0, axis=-1).astype(d.dtype)
    nz = jnp.sum(d != 0, axis=-1).astype(d.dtype)
    half = jnp.asarray(0.5, d.dtype)
    p_less = kstatistics.binom_cdf(pos, nz, half)
    p_greater = 1 - kstatistics.binom_cdf(pos - 1, nz, half)
    p = two_sided_or_tail(p_greater, p_less, alternative)
    return jnp.where(nz > 0, p, jnp.ones_like(p))


def signed_ranks(d):
    """Wilcoxon pieces of ``d : (..., m)``, zeros dropped (scipy's ``zero_method="wilcox"``).

    Returns ``(r_plus, n, tie_term, exact_ok)``: the sum of the average ranks of
    ``|d|`` over positive ``d`` (ranks among the nonzero values), the number of
    nonzero values, ``sum_groups (t^3 - t)`` over tied nonzero groups, and
    whether the row has neither zeros nor ties.
    """
    rank, tie_all = kstatistics.average_ranks(jnp.abs(d))
    nonzero = d != 0
    n_zero = jnp.sum(~nonzero, axis=-1).astype(d.dtype)
    # Zeros have the smallest |d|: ranks among the nonzero values are ranks among all
    # values minus the number of zeros, and the zeros' own group is not a tie.
    rank = rank - n_zero[..., None]
    r_plus = jnp.sum(jnp.where(d > 0, rank, jnp.zeros_like(rank)), axis=-1)
    tie_term = tie_all - (n_zero**3 - n_zero)
    n = d.shape[-1] - n_zero
    exact_ok = (n_zero == 0) & (tie_term == 0)
    return r_plus, n, tie_term, exact_ok


@functools.lru_cache(maxsize=64)
def signed_rank_table(m):
    """``(P(W+ <= k), P(W+ >= k))`` for ``k = 0..m(m+1)/2`` without ties (numpy, float64).

    Counts of subsets of ``{1..m}`` with each sum, by the usual recursion; they
    stay below 2^53 for ``m <= 50``, so the tables are exact to rounding.
    """
    top = m * (m + 1) // 2
    c = np.zeros(top + 1, np.float64)
    c[0] = 1.0
    for i in range(1, m + 1):
        c[i:] = c[i:] + c[:-i].copy()
    pmf = c / 2.0**m
    cdf = np.cumsum(pmf)
    sf = np.cumsum(pmf[::-1])[::-1]
    return np.minimum(cdf, 1.0), np.minimum(sf, 1.0)


def wilcoxon_pvalue(d, alternative, exact_max=50):
    """Wilcoxon signed-rank p-value of ``d : (..., m)`` (scipy's conventions).

    Rows with neither zeros nor ties use the exact null distribution when
    ``m <= exact_max`` (scipy's ``method="auto"``); other rows the normal
    approximation with zeros dropped, tie correction and no continuity
    correction (scipy's ``method="asymptotic"``). NaN when every ``d`` is 0.
    """
    m = d.shape[-1]
    r_plus, n, tie_term, exact_ok = signed_ranks(d)
    mean = n * (n + 1) / 4
    se = jnp.sqrt((n * (n + 1) * (2 * n + 1) - tie_term / 2) / 24)
    z = (r_plus - mean) / se
    p_asym = two_sided_or_tail(kstatistics.norm_sf(z), kstatistics.norm_sf(-z), alternative)
    if m > exact_max:
        return p_asym
    cdf, sf = signed_rank_table(m)
    top = m * (m + 1) // 2
    lo = jnp.clip(jnp.ceil(r_plus), 0, top).astype(jnp.int32)
    hi = jnp.clip(jnp.floor(r_plus), 0, top).astype(jnp.int32)
    p_less = jnp.asarray(cdf, d.dtype)[lo]
    p_greater = jnp.asarray(sf, d.dtype)[hi]
    p_exact = two_sided_or_tail(p_greater, p_less, alternative)
    return jnp.where(exact_ok, p_exact, p_asym)


def hotelling_pvalue(d):
    """Paired Hotelling T^2 p-value of ``d : (..., m, p)``, ``F(p, m - p)`` (Yildiz & Alpaydin)."""
    m, p = d.shape[-2], d.shape[-1]
    t2 = kstatistics.hotelling_t2(d)
    return kstatistics.f_sf(t2 * (m - p) / (p * (m - 1)), p, m - p)
