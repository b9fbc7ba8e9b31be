"""Test-statistic kernels shared by the parametric tests and the permutation engine.

The observed statistic and every resampled one come from these functions
(vmapped over resamples), so they accept leading batch dimensions. The
reference distributions of the parametric tests (t, F, chi-square, normal,
binomial tails) live here too, written with ``betainc``/``gammaincc`` so that
batched p-values stay on the device. Pure; no validation.

Zero sums of squares. Every sum of squares that a t, F or T² statistic divides by
(or whose vanishing makes the statistic 0) is compared with :func:`rounding_floor`:
at or below ``n (64 eps max|x|)^2`` it is what rounding alone leaves in the
deviations of data of that magnitude (the residues measured on XLA:CPU stay below
6 ulps of ``max|x|``), and it is set to exactly 0. Without this, identical
algorithms give F = (1e-32 / 1e-32), an arbitrary number. The rule for each
statistic is in its docstring; it matches scipy (t, one-way F) and statsmodels'
``AnovaRM`` (blocked F).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy import special

__all__ = [
    "ALTERNATIVES",
    "AnovaSums",
    "BlockedAnovaSums",
    "HotellingParts",
    "MardiaMoments",
    "PairedMoments",
    "anova_f",
    "anova_sums",
    "average_ranks",
    "betainc_stacked",
    "betainc_sym",
    "binom_cdf",
    "binom_pmf",
    "blocked_anova_f",
    "blocked_anova_sums",
    "chi2_sf",
    "corrected_t_statistic",
    "correlation_rcond",
    "count",
    "covariance",
    "f_sf",
    "f_sf_args",
    "ftest_5x2cv_statistic",
    "hotelling_lawley_trace",
    "hotelling_parts",
    "hotelling_parts_two_sample",
    "hotelling_t2",
    "hotelling_t2_two_sample",
    "manova_eigen",
    "manova_eigenvalues",
    "manova_he",
    "mardia_moments",
    "mcnemar_counts",
    "mean",
    "nonzero_variance",
    "norm_sf",
    "paired_moments",
    "pillai_trace",
    "pooled_t_statistic",
    "rounding_floor",
    "roy_root",
    "t_pvalue",
    "t_sf",
    "t_statistic",
    "t_two_sided_args",
    "ttest_5x2cv_statistic",
    "wilks_lambda",
    "within_replication_ss",
]

ALTERNATIVES = ("two-sided", "less", "greater")

# Deviations within this many ulps of the data's largest magnitude are rounding residue.
ROUNDING_ULPS = 64


def rounding_floor(scale, n_terms, xp=jnp):
    """Largest sum of ``n_terms`` squared deviations that rounding alone leaves in data
    whose largest magnitude is ``scale`` (``(...)``): ``n (64 eps scale)^2``, eps of the
    dtype. A sum of squares at or below it counts as exactly 0.

    ``xp``: the array namespace (``jax.numpy``, or ``numpy`` for concrete data on the
    host, which compiles nothing), here and in the kernels that pass it on."""
    eps = xp.finfo(scale.dtype).eps
    return n_terms * xp.square(ROUNDING_ULPS * eps * scale)


def _zero_below(ss, floor, xp=jnp):
    return xp.where(ss <= floor, xp.zeros_like(ss), ss)


def _kept(where):
    # numpy's reductions take ``where=True`` for "all", not None
    return {} if where is None else {"where": where}


def count(d, where=None, xp=jnp):
    """Entries over the last axis: ``n``, or ``sum(where)`` (``(...)``) for masked data."""
    if where is None:
        return d.shape[-1]
    return xp.sum(where, axis=-1).astype(d.dtype)


def nonzero_variance(d, ddof=1, where=None, xp=jnp):
    """``var(d, ddof)`` over the last axis, exactly 0 at or below the rounding floor.

    ``d : (..., n)`` -> ``(...)``. Above the floor the value is ``xp.var``'s, bit for bit.
    ``where`` (bool, broadcast to ``d``) keeps entries: a shape bucket's padding is
    masked out (padded entries must be finite; zeros).
    """
    n = count(d, where, xp)
    v = xp.var(d, axis=-1, ddof=ddof, **_kept(where))
    floor = rounding_floor(xp.max(xp.abs(d), axis=-1), n, xp) / (n - ddof)
    return _zero_below(v, floor, xp)


# ----------------------------------------------------------------------------------------
# Univariate location statistics
# ----------------------------------------------------------------------------------------


def average_ranks(x, where=None, xp=jnp):
    """Average ranks over the last axis of ``x : (..., n)``: ``(ranks, tie_term)``.

    Ranks run from 1 to ``n``; a group of ``t`` equal values shares the mean of
    its ranks (half-integers, exact in floating point). ``tie_term : (...)`` is
    ``sum_groups (t^3 - t)``, the tie correction of rank tests. No NaN.
    ``where : (n,)`` bool, optional, keeps entries (a shape bucket's padding is
    False): the kept entries, finite, are ranked among themselves; the others'
    ranks are meaningless. ``xp=numpy`` ranks on the host (one sort, nothing
    compiled); the ranks are the same exact half-integers either way.
    """
    if xp is not jnp:
        return _average_ranks_host(x, where)
    n = x.shape[-1]
    keep = jnp.broadcast_to(True if where is None else where, x.shape)
    if n <= 64:
        # Few values per row (Friedman's learners): pairwise comparisons beat a sort.
        kj = keep[..., None, :]
        less = jnp.sum((x[..., None, :] < x[..., :, None]) & kj, axis=-1).astype(x.dtype)
        equal = jnp.sum((x[..., None, :] == x[..., :, None]) & kj, axis=-1).astype(x.dtype)
        ties = jnp.where(keep, equal * equal - 1, 0)
        return less + (equal + 1) / 2, jnp.sum(ties, axis=-1)
    flat = jnp.where(keep, x, jnp.inf).reshape(-1, n)  # padding sorts last
    s = jnp.sort(flat, axis=-1)
    left = jax.vmap(lambda row, v: jnp.searchsorted(row, v, side="left"))(s, flat)
    right = jax.vmap(lambda row, v: jnp.searchsorted(row, v, side="right"))(s, flat)
    left = left.astype(x.dtype).reshape(x.shape)
    right = right.astype(x.dtype).reshape(x.shape)
    group = right - left
    # Each of a group's t members contributes t^2 - 1: t^3 - t per group.
    return (left + right + 1) / 2, jnp.sum(jnp.where(keep, group * group - 1, 0), axis=-1)


def _average_ranks_host(x, where):
    # In sorted order a tie group spans positions [lo, hi]: its members rank
    # (lo + hi) / 2 + 1 and add t^2 - 1 each.
    n = x.shape[-1]
    keep = np.broadcast_to(True if where is None else where, x.shape)
    flat = np.where(keep, x, np.inf).reshape(-1, n)  # padding sorts last
    order = np.argsort(flat, axis=-1)
    xs = np.take_along_axis(flat, order, axis=-1)
    i = np.broadcast_to(np.arange(n), xs.shape)
    step = xs[:, 1:] != xs[:, :-1]
    first = np.concatenate([np.ones((xs.shape[0], 1), bool), step], axis=-1)
    last = np.concatenate([step, np.ones((xs.shape[0], 1), bool)], axis=-1)
    lo = np.maximum.accumulate(np.where(first, i, 0), axis=-1)
    hi = np.minimum.accumulate(np.where(last, i, n)[:, ::-1], axis=-1)[:, ::-1]
    ranks = np.empty(flat.shape, x.dtype)
    np.put_along_axis(ranks, order, ((lo + hi) / 2 + 1).astype(x.dtype), axis=-1)
    group = np.empty(flat.shape, x.dtype)
    np.put_along_axis(group, order, (hi - lo + 1).astype(x.dtype), axis=-1)
    ties = np.where(keep, (group * group - 1).reshape(x.shape), 0)
    return ranks.reshape(x.shape), np.sum(ties, axis=-1).astype(x.dtype)


def mean(d, where=None):
    """Mean over the last axis; ``d : (..., n)`` -> ``(...)``; ``where`` masks padding."""
    return jnp.mean(d, axis=-1, where=where)


def t_statistic(d, where=None, xp=jnp):
    """One-sample (paired) t ``sqrt(n) mean / sd`` over the last axis ("Evaluation" lecture notes).

    ``d : (..., n)`` -> ``(...)``. Zero variance (at or below :func:`rounding_floor`)
    gives ±inf where the mean is nonzero and NaN where ``d`` is all 0, as
    ``scipy.stats.ttest_1samp``. ``where`` masks padding (:func:`nonzero_variance`).
    """
    n = count(d, where, xp)
    m = xp.mean(d, axis=-1, **_kept(where))
    s = xp.sqrt(nonzero_variance(d, where=where, xp=xp))
    return m * xp.sqrt(xp.asarray(n, d.dtype)) / s


class PairedMoments(NamedTuple):
    """Paired t statistic with the mean difference and its standard error, each ``(...)``."""

    statistic: jnp.ndarray
    mean: jnp.ndarray
    standard_error: jnp.ndarray


def paired_moments(d, where=None, xp=jnp):
    """t, mean and standard error ``sd / sqrt(n)`` of ``d : (..., n)`` ("Evaluation" lecture notes).

    Zero variance as :func:`t_statistic`: ``se = 0``, t = ±inf or NaN (``d`` all 0).
    ``where`` masks padding (:func:`nonzero_variance`); ``xp`` as :func:`rounding_floor`.
    """
    n = count(d, where, xp)
    m = xp.mean(d, axis=-1, **_kept(where))
    se = xp.sqrt(nonzero_variance(d, where=where, xp=xp)) / xp.sqrt(xp.asarray(n, d.dtype))
    return PairedMoments(m / se, m, se)


def pooled_t_statistic(a, b, where_a=None, where_b=None, xp=jnp):
    """Student's two-sample t with pooled variance; ``a : (..., n1)``, ``b : (..., n2)``.

    Each sample's variance is 0 at or below its rounding floor: both constant gives
    ±inf, or NaN when the means are equal, as ``scipy.stats.ttest_ind``. ``where_a``,
    ``where_b`` select each sample's entries (padding masked out).
    """
    n1, n2 = count(a, where_a, xp), count(b, where_b, xp)
    va = nonzero_variance(a, where=where_a, xp=xp)
    vb = nonzero_variance(b, where=where_b, xp=xp)
    sp2 = ((n1 - 1) * va + (n2 - 1) * vb) / (n1 + n2 - 2)
    diff = xp.mean(a, axis=-1, **_kept(where_a)) - xp.mean(b, axis=-1, **_kept(where_b))
    return diff / xp.sqrt(sp2 * (1 / n1 + 1 / n2))


def ttest_5x2cv_statistic(d, xp=jnp):
    """Dietterich's (1998) 5x2cv t: ``d[0, 0] / sqrt(mean_i s_i^2)``.

    ``d : (..., 5, 2)`` differences (replication x fold) -> ``(...)``, with
    ``s_i^2 = sum_j (d_ij - mean_j d_ij)^2``. When ``sum_i s_i^2`` is at or below
    :func:`rounding_floor` it is 0: t = ±inf, or NaN when ``d_11 = 0``.
    """
    return d[..., 0, 0] / xp.sqrt(within_replication_ss(d, xp) / 5)


def within_replication_ss(d, xp=jnp):
    """``sum_i s_i^2`` of 5x2cv differences ``d : (..., 5, 2)``, 0 at the rounding floor."""
    s2 = xp.sum((d - xp.mean(d, axis=-1, keepdims=True)) ** 2, axis=-1)
    scale = xp.max(xp.abs(d), axis=(-2, -1))
    n = d.shape[-2] * d.shape[-1]
    return _zero_below(xp.sum(s2, axis=-1), rounding_floor(scale, n, xp), xp)


def ftest_5x2cv_statistic(d, xp=jnp):
    """Alpaydin's (1999) combined 5x2cv F: ``sum d_ij^2 / (2 sum_i s_i^2)``; ``(..., 5, 2)``.

    Zero ``sum_i s_i^2`` (as in :func:`ttest_5x2cv_statistic`) gives inf, or NaN when
    ``d`` is all 0 (identical algorithms, as the paired t).
    """
    return xp.sum(d**2, axis=(-2, -1)) / (2 * within_replication_ss(d, xp))


def corrected_t_statistic(d, test_train_ratio, where=None, xp=jnp):
    """Nadeau & Bengio (2003) corrected resampled t; ``d : (..., J)`` -> ``PairedMoments``.

    The variance of the mean is ``(1/J + n_test/n_train) s^2`` instead of ``s^2/J``.
    Zero variance as :func:`t_statistic`; ``where`` masks padding; ``xp`` as
    :func:`rounding_floor`.
    """
    n = count(d, where, xp)
    m = xp.mean(d, axis=-1, **_kept(where))
    se = xp.sqrt((1 / n + test_train_ratio) * nonzero_variance(d, where=where, xp=xp))
    return PairedMoments(m / se, m, se)


# ----------------------------------------------------------------------------------------
# Multivariate location statistics
# ----------------------------------------------------------------------------------------


def covariance(x, where=None, xp=jnp):
    """Unbiased covariance of ``x : (..., n, p)`` -> ``(..., p, p)``.

    ``where : (n,)`` keeps rows (a shape bucket's padding masked out); ``xp`` as
    :func:`rounding_floor`.
    """
    if where is None:
        n = x.shape[-2]
        xc = x - xp.mean(x, axis=-2, keepdims=True)
    else:
        n = xp.sum(where).astype(x.dtype)
        xc = xp.where(where[:, None], x - _row_mean(x, where, xp)[..., None, :], 0.0)
    return xp.einsum("...ki,...kj->...ij", xc, xc) / (n - 1)


def _row_mean(x, where=None, xp=jnp):
    """Mean over rows (axis -2) of ``x : (..., n, p)``, rows selected by ``where : (n,)``."""
    if where is None:
        return xp.mean(x, axis=-2)
    return xp.mean(x, axis=-2, where=xp.broadcast_to(where[:, None], x.shape))


def correlation_rcond(s, scale, xp=jnp):
    """Reciprocal condition number of the correlation matrix of covariance ``s : (..., p, p)``.

    A measure whose standard deviation is at most ``1e-13 * scale`` (``scale : (..., p)``,
    e.g. the largest absolute value of that measure) counts as constant: result 0.
    """
    sd = xp.sqrt(xp.maximum(xp.diagonal(s, axis1=-2, axis2=-1), 0))
    ok = sd > 1e-13 * scale
    safe = xp.where(ok, sd, 1)
    r = s / (safe[..., :, None] * safe[..., None, :])
    ev = xp.linalg.eigvalsh(r)
    return xp.where(xp.all(ok, axis=-1), xp.maximum(ev[..., 0], 0) / ev[..., -1], 0)


def hotelling_t2(d):
    """Paired Hotelling ``T^2 = n dbar' S^-1 dbar`` (Yildiz & Alpaydin, eq. 1).

    ``d : (..., n, p)`` (instances or folds by measures) -> ``(...)``.
    """
    n = d.shape[-2]
    dbar = jnp.mean(d, axis=-2)
    dc = d - dbar[..., None, :]
    s = jnp.einsum("...ki,...kj->...ij", dc, dc) / (n - 1)
    w = jnp.linalg.solve(s, dbar[..., None])[..., 0]
    return n * jnp.sum(dbar * w, axis=-1)


class HotellingParts(NamedTuple):
    """T^2 with its pieces: mean difference ``(..., p)``, covariance ``(..., p, p)``,
    discriminant direction ``w = S^-1 dbar`` ``(..., p)``."""

    statistic: jnp.ndarray
    mean: jnp.ndarray
    covariance: jnp.ndarray
    direction: jnp.ndarray


def hotelling_parts(d, where=None, xp=jnp):
    """Paired T^2, dbar, S_d, Fisher's ``w = S_d^-1 dbar`` (Yildiz & Alpaydin, eqs. 1-2).

    ``where : (n,)`` keeps rows of ``d : (..., n, p)`` (padding masked out). With
    ``xp=numpy`` a singular ``S_d`` raises ``numpy.linalg.LinAlgError`` (jax.numpy
    gives inf/NaN).
    """
    n = d.shape[-2] if where is None else xp.sum(where).astype(d.dtype)
    dbar = _row_mean(d, where, xp)
    s = covariance(d, where, xp)
    w = xp.linalg.solve(s, dbar[..., None])[..., 0]
    return HotellingParts(n * xp.sum(dbar * w, axis=-1), dbar, s, w)


def hotelling_parts_two_sample(a, b, where_a=None, where_b=None, xp=jnp):
    """Two-sample T^2 ``n1 n2/(n1+n2) dbar' S_p^-1 dbar`` with pooled ``S_p`` (Rencher 5.4).

    ``a : (..., n1, p)``, ``b : (..., n2, p)``; ``where_a``, ``where_b`` keep rows.
    """
    n1 = a.shape[-2] if where_a is None else xp.sum(where_a).astype(a.dtype)
    n2 = b.shape[-2] if where_b is None else xp.sum(where_b).astype(b.dtype)
    dbar = _row_mean(a, where_a, xp) - _row_mean(b, where_b, xp)
    s = (n1 - 1) * covariance(a, where_a, xp) + (n2 - 1) * covariance(b, where_b, xp)
    s = s / (n1 + n2 - 2)
    w = xp.linalg.solve(s, dbar[..., None])[..., 0]
    t2 = (n1 * n2 / (n1 + n2)) * xp.sum(dbar * w, axis=-1)
    return HotellingParts(t2, dbar, s, w)


def hotelling_t2_two_sample(a, b):
    """Two-sample Hotelling T^2 with pooled covariance -> ``(...)``."""
    return hotelling_parts_two_sample(a, b).statistic


# ----------------------------------------------------------------------------------------
# ANOVA and MANOVA (Yildiz & Alpaydin, section 2.2)
# ----------------------------------------------------------------------------------------


class AnovaSums(NamedTuple):
    """One-way sums of squares, each ``(...)``."""

    between: jnp.ndarray
    within: jnp.ndarray


def anova_sums(x, where=None, xp=jnp):
    """Between and within sums of squares of ``x : (..., L groups, k)``.

    Each is exactly 0 at or below :func:`rounding_floor` of ``max|x|`` and ``L k`` terms.
    ``where : (k,)`` keeps observations (a shape bucket's padding masked out); ``xp`` as
    :func:`rounding_floor`.
    """
    gm = xp.mean(x, axis=-1, **_kept(where))
    grand = xp.mean(gm, axis=-1)
    k = count(x, where, xp)
    between = k * xp.sum((gm - grand[..., None]) ** 2, axis=-1)
    within = xp.sum((x - gm[..., None]) ** 2, axis=(-2, -1), **_kept(where))
    floor = rounding_floor(xp.max(xp.abs(x), axis=(-2, -1)), x.shape[-2] * k, xp)
    return AnovaSums(_zero_below(between, floor, xp), _zero_below(within, floor, xp))


def anova_f(x, where=None, xp=jnp):
    """One-way ANOVA F ``(SSB/(L-1)) / (SSW/(L(k-1)))`` of ``x : (..., L, k)``.

    With the zero sums of :func:`anova_sums`, as ``scipy.stats.f_oneway``: identical
    groups give F = 0 (p = 1), constant groups with different means F = inf, and
    constant data (both sums 0) NaN.
    """
    n_groups, k = x.shape[-2], count(x, where, xp)
    ss = anova_sums(x, where, xp)
    return (ss.between / (n_groups - 1)) / (ss.within / (n_groups * (k - 1)))


class BlockedAnovaSums(NamedTuple):
    """Randomized-block sums of squares (treatments, blocks, error), each ``(...)``."""

    treatment: jnp.ndarray
    block: jnp.ndarray
    error: jnp.ndarray


def blocked_anova_sums(x, where=None, xp=jnp):
    """Two-way additive decomposition of ``x : (..., L treatments, k blocks)``.

    Each sum is exactly 0 at or below :func:`rounding_floor` of ``max|x|``, ``L k`` terms.
    ``where : (k,)`` keeps blocks (a shape bucket's padding masked out).
    """
    n_groups, k = x.shape[-2], count(x, where, xp)
    rows = xp.mean(x, axis=-1, **_kept(where))
    cols = xp.mean(x, axis=-2)
    grand = xp.mean(rows, axis=-1)
    treatment = k * xp.sum((rows - grand[..., None]) ** 2, axis=-1)
    block = n_groups * xp.sum((cols - grand[..., None]) ** 2, axis=-1, **_kept(where))
    resid = x - rows[..., :, None] - cols[..., None, :] + grand[..., None, None]
    error = xp.sum(resid**2, axis=(-2, -1), **_kept(where))
    floor = rounding_floor(xp.max(xp.abs(x), axis=(-2, -1)), n_groups * k, xp)
    sums = (_zero_below(s, floor, xp) for s in (treatment, block, error))
    return BlockedAnovaSums(*sums)


def blocked_anova_f(x, where=None, xp=jnp):
    """Repeated-measures F ``(SS_t/(L-1)) / (SS_e/((L-1)(k-1)))`` of ``x : (..., L, k)``.

    With the zero sums of :func:`blocked_anova_sums`, as statsmodels' ``AnovaRM``: no
    treatment effect (identical algorithms, constant data) gives F = 0 (p = 1) even when
    ``SS_e`` is 0 too; an effect with ``SS_e = 0`` gives F = inf.
    """
    n_groups, k = x.shape[-2], count(x, where, xp)
    ss = blocked_anova_sums(x, where, xp)
    f = (ss.treatment / (n_groups - 1)) / (ss.error / ((n_groups - 1) * (k - 1)))
    return xp.where(ss.treatment == 0, xp.zeros_like(f), f)


def manova_he(x, xp=jnp):
    """Between (H) and within (E) scatter matrices of ``x : (..., L, k, p)`` (Yildiz & Alpaydin).

    Returns ``(H, E)``, each ``(..., p, p)``. ``H`` is exactly 0 when its trace (the
    between sum of squares over all measures) is at or below :func:`rounding_floor` of
    ``max|x|``: identical algorithms give Wilks' Lambda 1 and zero eigenvalues.
    """
    n_groups, k, p = x.shape[-3], x.shape[-2], x.shape[-1]
    gm = xp.mean(x, axis=-2)  # (..., L, p)
    grand = xp.mean(gm, axis=-2)  # (..., p)
    dc = gm - grand[..., None, :]
    h = k * xp.einsum("...li,...lj->...ij", dc, dc)
    floor = rounding_floor(xp.max(xp.abs(x), axis=(-3, -2, -1)), n_groups * k * p, xp)
    h_zero = xp.trace(h, axis1=-2, axis2=-1) <= floor
    h = xp.where(h_zero[..., None, None], xp.zeros_like(h), h)
    xc = x - gm[..., :, None, :]
    e = xp.einsum("...lki,...lkj->...ij", xc, xc)
    return h, e


def _whiten(h, e, xp=jnp):
    # E = C C'; C^-1 H C^-T is symmetric with the eigenvalues of E^-1 H, so eigh applies.
    c = xp.linalg.cholesky(e)
    if xp is jnp:
        a = lax.linalg.triangular_solve(c, h, left_side=True, lower=True)
        m = lax.linalg.triangular_solve(c, a, left_side=False, lower=True, transpose_a=True)
    else:  # numpy has no batched triangular solve: general ones, C^-1 (C^-1 H)' = C^-1 H C^-T
        m = np.swapaxes(np.linalg.solve(c, np.swapaxes(np.linalg.solve(c, h), -1, -2)), -1, -2)
    return c, 0.5 * (m + xp.swapaxes(m, -1, -2))


def manova_eigenvalues(h, e):
    """Eigenvalues of ``E^-1 H``, descending, ``(..., p)``; tiny negatives clipped to 0."""
    _, m = _whiten(h, e)
    lam = jnp.linalg.eigvalsh(m)[..., ::-1]
    return jnp.maximum(lam, 0)


def manova_eigen(h, e, xp=jnp):
    """Eigenvalues (descending) and unit eigenvectors of ``E^-1 H`` (Yildiz & Alpaydin §3.6).

    Each eigenvector is signed so that its largest-magnitude coefficient is positive.
    """
    c, m = _whiten(h, e, xp)
    lam, u = xp.linalg.eigh(m)
    lam, u = lam[..., ::-1], u[..., ::-1]
    # v = C^-T u solves E^-1 H v = lambda v.
    if xp is jnp:
        v = lax.linalg.triangular_solve(c, u, left_side=True, lower=True, transpose_a=True)
    else:
        v = np.linalg.solve(np.swapaxes(c, -1, -2), u)
    v = v / xp.linalg.norm(v, axis=-2, keepdims=True)
    idx = xp.argmax(xp.abs(v), axis=-2, keepdims=True)
    sign = xp.sign(xp.take_along_axis(v, idx, axis=-2))
    return xp.maximum(lam, 0), v * sign


def wilks_lambda(x):
    """Wilks' ``|E| / |E + H|`` of ``x : (..., L, k, p)`` (Yildiz & Alpaydin, eq. 3)."""
    h, e = manova_he(x)
    return jnp.exp(jnp.linalg.slogdet(e)[1] - jnp.linalg.slogdet(e + h)[1])


def pillai_trace(x):
    """Pillai's trace ``tr(H (H + E)^-1)`` of ``x : (..., L, k, p)``."""
    lam = manova_eigenvalues(*manova_he(x))
    return jnp.sum(lam / (1 + lam), axis=-1)


def hotelling_lawley_trace(x):
    """Hotelling-Lawley trace ``tr(E^-1 H)`` of ``x : (..., L, k, p)``."""
    return jnp.sum(manova_eigenvalues(*manova_he(x)), axis=-1)


def roy_root(x):
    """Roy's greatest root (largest eigenvalue of ``E^-1 H``) of ``x : (..., L, k, p)``."""
    return manova_eigenvalues(*manova_he(x))[..., 0]


class MardiaMoments(NamedTuple):
    """Mardia's (1970) multivariate skewness ``b1p`` and kurtosis ``b2p``, each ``(...)``."""

    skewness: jnp.ndarray
    kurtosis: jnp.ndarray


def mardia_moments(x):
    """``b1p = mean_ij g_ij^3`` and ``b2p = mean_i g_ii^2``, ``g = Xc S^-1 Xc'``, S with 1/n.

    ``x : (..., n, p)``.
    """
    n = x.shape[-2]
    xc = x - jnp.mean(x, axis=-2, keepdims=True)
    s = jnp.einsum("...ki,...kj->...ij", xc, xc) / n
    z = jnp.swapaxes(jnp.linalg.solve(s, jnp.swapaxes(xc, -1, -2)), -1, -2)
    g = jnp.einsum("...ip,...jp->...ij", xc, z)
    b1 = jnp.mean(g**3, axis=(-2, -1))
    b2 = jnp.mean(jnp.diagonal(g, axis1=-2, axis2=-1) ** 2, axis=-1)
    return MardiaMoments(b1, b2)


def mcnemar_counts(correct_a, correct_b, xp=jnp):
    """Discordant counts ``(n01, n10)`` over the last axis: a right & b wrong, a wrong & b right.

    ``correct_* : (..., n)`` booleans; counts are float64-able floats of shape ``(...)``;
    ``xp`` as :func:`rounding_floor`.
    """
    n01 = xp.sum(correct_a & ~correct_b, axis=-1)
    n10 = xp.sum(~correct_a & correct_b, axis=-1)
    return n01, n10


# ----------------------------------------------------------------------------------------
# Reference distributions (upper tails in the form that keeps far tails accurate)
# ----------------------------------------------------------------------------------------


def betainc_sym(a, b, x, xc):
    """``I_x(a, b)`` given ``x`` and ``xc = 1 - x`` computed without cancellation.

    Above the mean ``a / (a + b)`` it evaluates ``1 - I_xc(b, a)``: jax's ``betainc`` loses
    absolute accuracy near ``x = 1`` (p-values near 1 off by 1e-10), the mirrored form does
    not. One ``betainc`` call either way.
    """
    swap = x > a / (a + b)
    r = special.betainc(jnp.where(swap, b, a), jnp.where(swap, a, b), jnp.where(swap, xc, x))
    return jnp.where(swap, 1 - r, r)


def t_two_sided_args(t, df):
    """``(a, b, x, xc)`` with the two-sided t p-value ``== betainc_sym(a, b, x, xc)``."""
    df = jnp.broadcast_to(jnp.asarray(df, t.dtype), t.shape)
    t2 = t * t
    return df / 2, jnp.full_like(t, 0.5), df / (df + t2), t2 / (df + t2)


def f_sf_args(f, dfn, dfd):
    """``(a, b, x, xc)`` with ``f_sf(f, dfn, dfd) == betainc_sym(a, b, x, xc)``."""
    dfn = jnp.broadcast_to(jnp.asarray(dfn, f.dtype), f.shape)
    dfd = jnp.broadcast_to(jnp.asarray(dfd, f.dtype), f.shape)
    return dfd / 2, dfn / 2, dfd / (dfd + dfn * f), dfn * f / (dfd + dfn * f)


def t_sf(t, df):
    """Student t survival function ``P(T > t)``; half the two-sided tail ``I_x(df/2, 1/2)``."""
    tail = 0.5 * betainc_sym(*t_two_sided_args(t, df))
    return jnp.where(t > 0, tail, 1 - tail)


def t_pvalue(t, df, alternative):
    """p-value of a t statistic for a static ``alternative`` in :data:`ALTERNATIVES`."""
    if alternative == "greater":
        return t_sf(t, df)
    if alternative == "less":
        return t_sf(-t, df)
    # Two-sided p directly as I_x(df/2, 1/2): no 1 - (...) cancellation in the far tail.
    return betainc_sym(*t_two_sided_args(t, df))


def f_sf(f, dfn, dfd):
    """F survival function ``I_x(dfd/2, dfn/2)`` with ``x = dfd / (dfd + dfn f)``."""
    return betainc_sym(*f_sf_args(f, dfn, dfd))


def betainc_stacked(*args):
    """Evaluate several ``(a, b, x, xc)`` tuples, each ``(..., n_i)``, in one ``betainc``.

    One call instead of many keeps compile time down (``betainc`` is a large loop).
    Returns the results split back to the ``n_i``.
    """
    a, b, x, xc = (jnp.concatenate([t[i] for t in args], axis=-1) for i in range(4))
    out = betainc_sym(a, b, x, xc)
    sizes = [t[0].shape[-1] for t in args]
    cuts = [sum(sizes[: i + 1]) for i in range(len(sizes) - 1)]
    return jnp.split(out, cuts, axis=-1)


def chi2_sf(x, df):
    """Chi-square survival function ``Q(df/2, x/2)``."""
    return special.gammaincc(jnp.asarray(df, x.dtype) / 2, x / 2)


def norm_sf(z):
    """Standard normal survival function ``erfc(z / sqrt 2) / 2``."""
    return 0.5 * special.erfc(z / jnp.sqrt(jnp.asarray(2.0, z.dtype)))


def binom_cdf(k, n, p):
    """``P(X <= k)`` for ``X ~ Bin(n, p)`` as ``I_{1-p}(n - k, k + 1)``; 1 when ``k >= n``."""
    full = k >= n
    safe_a = jnp.where(full, 1, n - k)
    val = special.betainc(safe_a, k + 1, 1 - p)
    return jnp.where(k < 0, 0, jnp.where(full, 1, val))


def binom_pmf(k, n, p):
    """``P(X = k)`` for ``X ~ Bin(n, p)`` via log-gamma."""
    logc = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return jnp.exp(logc + special.xlogy(k, p) + special.xlog1py(n - k, -p))


def signrank_posterior(d, w, rope):
    """Posterior sample of the Bayesian signed-rank test for Dirichlet weights ``w``.

    ``d : (m,)`` differences, the prior's pseudo-observation among them (0 or ±inf);
    ``w : (..., m)`` weights; ``rope`` scalar. Returns ``(..., 3)``: the sums of
    ``w_i w_j`` over all pairs ``(i, j)``, ``i == j`` included, whose Walsh average
    ``(d_i + d_j) / 2`` lies below ``-rope``, within ``[-rope, rope]``, above ``rope``;
    a pair exactly on ``±rope`` counts half inside, half outside (baycomp's
    ``heaviside``). Sums run in a fixed order (``lax.scan`` over ``i``, then ``j``), so a
    sample's value does not depend on the batch it is computed in, and zero weights add
    exactly nothing. Time and memory ``O(m^2)`` (the ``(m, 3, m)`` pair indicators):
    :func:`signrank_posterior_sorted` serves large ``m``. Pure; no validation.
    """
    m = d.shape[-1]
    t = 2 * rope
    s = d[:, None] + d[None, :]
    half = jnp.asarray(0.5, w.dtype)
    # baycomp SignedRankTest: above = heaviside(s, 2 rope), below = heaviside(-s, 2 rope).
    above = (s > t).astype(w.dtype) + half * (s == t).astype(w.dtype)
    below = (-s > t).astype(w.dtype) + half * (-s == t).astype(w.dtype)
    inside = 1 - above - below  # 0, 1/2 or 1: exact, and 0 everywhere when rope == 0
    ind = jnp.stack([below, inside, above], axis=1)  # (m, 3, m)
    w_first = jnp.moveaxis(w, -1, 0)  # (m, ...)

    def add_row(v, xs):  # v_j += w_i ind_ij
        w_i, ind_i = xs
        return v + w_i[..., None, None] * ind_i.reshape((1,) * w_i.ndim + ind_i.shape), None

    v, _ = lax.scan(add_row, jnp.zeros((*w.shape[:-1], 3, m), w.dtype), (w_first, ind))

    # All products first, then a scan of plain additions: a multiply-add inside one loop
    # may be contracted to an FMA in vectorised lanes and not in the scalar tail, which
    # would make a sample's bits depend on its place in the batch.
    terms = w_first[..., None] * jnp.moveaxis(v, -1, 0)  # (m, ..., 3)
    out, _ = lax.scan(lambda acc, t_j: (acc + t_j, None), jnp.zeros_like(terms[0]), terms)
    return out


def _first_reaching(ds, c, strict, xp=jnp):
    """For each ``i``, the first ``j`` of the ascending ``ds : (m,)`` with ``ds_i + ds_j > c``
    (``strict``) or ``>= c``, else ``m``: a binary search on the rounded sums themselves,
    which rounding keeps nondecreasing in ``j``."""
    m = ds.shape[-1]
    lo = xp.zeros(m, xp.int32)
    hi = xp.full(m, m, xp.int32)
    for _ in range(m.bit_length()):
        mid = (lo + hi) // 2
        s = ds + ds[xp.minimum(mid, m - 1)]
        ok = (s > c) if strict else (s >= c)
        active = lo < hi
        hi = xp.where(active & ok, mid, hi)
        lo = xp.where(active & ~ok, mid + 1, lo)
    return lo


class SignRankPairs(NamedTuple):
    """The data's part of :func:`signrank_posterior_sorted`, from :func:`signrank_pairs`:
    for ``d`` (``above``) and ``-d`` (``below``) the stable ascending order and, per
    sorted ``i``, the first partner index above and at-or-above ``2 rope``."""

    order: tuple
    gt: tuple
    ge: tuple


def signrank_pairs(d, rope, xp=jnp):
    """Sort ``d : (m,)`` once for every sample of :func:`signrank_posterior_sorted`
    (``O(m log m)``): a :class:`SignRankPairs`. ``xp`` as :func:`rounding_floor`. Pure; no
    validation."""
    t = 2 * rope
    order, gt, ge = [], [], []
    for x in (d, -d):  # below(d) = above(-d): negation is exact
        o = xp.argsort(x, stable=True)
        xs = x[o]
        order.append(o)
        gt.append(_first_reaching(xs, t, True, xp))
        ge.append(_first_reaching(xs, t, False, xp))
    return SignRankPairs(tuple(order), tuple(gt), tuple(ge))


# numpy's sequential sums over the entries (axis 0 here): a loop over the rows (one vector add
# each) up to this many entries, else ``cumsum`` along the samples' rows; both add in the same
# order, so the choice (by size only) changes no bit.
_NUMPY_ROW_LOOP = 128


def _ordered_sum(x, xp=jnp):
    """Sum over axis 0 of ``x : (m, ...)``, first to last (``lax.scan``; numpy's row loop
    or ``cumsum``, sequential too): the same bits for any trailing (batch) shape."""
    if xp is jnp:
        out, _ = lax.scan(lambda acc, x_j: (acc + x_j, None), jnp.zeros_like(x[0]), x)
        return out
    if x.shape[0] > _NUMPY_ROW_LOOP:
        return xp.cumsum(xp.moveaxis(x, 0, -1), axis=-1)[..., -1]
    out = x[0].copy()
    for j in range(1, x.shape[0]):
        out += x[j]
    return out


def _suffix_sums(x, xp=jnp):
    """``S_j = x_j + ... + x_{m-1}``, summed last to first, and ``S_m = 0``, over axis 0 of
    ``x : (m, ...)``: ``(m + 1, ...)``."""
    if xp is jnp:

        def suffix(acc, x_j):
            acc = acc + x_j
            return acc, acc

        _, s = lax.scan(suffix, jnp.zeros_like(x[0]), x, reverse=True)
        return jnp.concatenate([s, jnp.zeros_like(x[:1])])
    if x.shape[0] > _NUMPY_ROW_LOOP:
        s = xp.moveaxis(xp.cumsum(xp.moveaxis(x, 0, -1)[..., ::-1], axis=-1)[..., ::-1], -1, 0)
        return xp.concatenate([s, xp.zeros_like(x[:1])])
    m = x.shape[0]
    s = xp.empty((m + 1, *x.shape[1:]), x.dtype)
    s[m] = 0
    s[m - 1] = x[m - 1]
    for j in range(m - 2, -1, -1):
        xp.add(s[j + 1], x[j], out=s[j])
    return s


def _pairs_above(w, order, gt, ge, xp=jnp):
    """``sum_ij w_i w_j ([d_i + d_j > t] + [d_i + d_j == t] / 2)`` for ``w : (m, ...)``
    (entries first): ``(...)``, from ``d``'s order and thresholds (:func:`signrank_pairs`).
    Suffix sums of the sorted weights, ``O(m)`` per sample; sums in a fixed order, as
    :func:`signrank_posterior`."""
    ws = w[order]  # sorted by d
    s = _suffix_sums(ws, xp)
    row = (s[gt] + s[ge]) * xp.asarray(0.5, w.dtype)  # row i: sum_j w_j heaviside(s_ij, t)
    terms = ws * row  # all products first, then plain additions (see signrank_posterior)
    return _ordered_sum(terms, xp)


def signrank_posterior_sorted(d, w, rope, pairs=None, xp=jnp):
    """:func:`signrank_posterior` in ``O(m log m)`` time and ``O(m)`` memory per sample.

    The same three sums over pairs, from the differences sorted once: for a fixed ``i``
    the rounded Walsh sums ``d_i + d_j`` are nondecreasing in the sorted ``d_j``, so the
    pairs above a threshold are a suffix found by binary search, and their weight is a
    suffix sum of the sorted weights. ``below(d) = above(-d)`` (negation is exact), so
    swapping the learners swaps the two outer sums bit for bit; the rope gets the rest,
    ``(sum w)^2 - (below + above)`` (symmetric too), and exactly 0 when ``rope == 0``.
    Agrees with :func:`signrank_posterior` up to rounding (the sums run in another
    order); zero weights still add nothing. ``pairs``: :func:`signrank_pairs` of ``d``
    and ``rope`` (computed here when None); ``xp`` as :func:`rounding_floor` (numpy: the
    same operations in the same order). Pure; no validation.
    """
    if pairs is None:
        pairs = signrank_pairs(d, rope, xp)
    w = xp.moveaxis(w, -1, 0)  # (m, ...)
    if xp is not jnp and w.shape[0] <= _NUMPY_ROW_LOOP:
        w = xp.ascontiguousarray(w)  # the row loops' vector adds run along contiguous rows
    above, below = (_pairs_above(w, pairs.order[k], pairs.gt[k], pairs.ge[k], xp) for k in (0, 1))
    total = _ordered_sum(w, xp)
    inside = xp.maximum(total * total - (below + above), 0)
    inside = xp.where(rope == 0, xp.zeros_like(inside), inside)
    return xp.stack([below, inside, above], axis=-1)
