"""Hotelling's T²: two algorithms compared on several performance measures at once.

Statistic kernels come from :mod:`jaxtests.kernels.statistics`; every input may carry
leading batch dimensions. Singular covariance matrices are detected on the host after
the jitted call and reported as a ``ValueError`` (never a silent pseudo-inverse).
"""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _permutation_methods as PM
from jaxtests import _tails
from jaxtests._precision import x64
from jaxtests._results import PermutationFields, result, static_field
from jaxtests._validation import (
    as_float_array,
    as_names,
    check_choice,
    is_concrete,
    rescale_pow2,
    scale_back,
)
from jaxtests._validation import check_rcond as _check_rcond
from jaxtests.kernels import multitest as kmultitest
from jaxtests.kernels import statistics as kstatistics

__all__ = ["HotellingResult", "hotelling_t2"]


@result
class HotellingResult(PermutationFields):
    """Result of :func:`hotelling_t2`.

    Attributes
    ----------
    statistic : array
        Hotelling's T².
    pvalue : array
        From the F conversion ``(m - p + 1)/(m p) T² ~ F(p, m - p + 1)``.
    f_statistic : array
    df : tuple of int
        ``(p, m - p + 1)``, with ``m = k - 1`` (paired) or ``n1 + n2 - 2``.
    mean_difference : array ``(..., p)``
    covariance : array ``(..., p, p)``
        ``S_d`` (paired) or the pooled covariance.
    direction : array ``(..., p)``
        Fisher's discriminant direction ``w = S^-1 dbar`` (Yildiz & Alpaydin, eq. 2).
    univariate_statistic, univariate_pvalue : arrays ``(..., p)``
        Post hoc t test per measure and its raw two-sided p-value.
    univariate_pvalue_adjusted : array ``(..., p)``
        The same p-values adjusted over the ``p`` measures by ``correction``.
    method : str
        "parametric" (``pvalue`` from the F conversion) or "permutation" (``pvalue``
        from the permutation distribution of T²; ``f_statistic``, ``df`` and the
        univariate post hoc tests stay parametric).
    pvalue_interval, n_resamples, seed, permutation_method
        ``method="permutation"`` only (:class:`~jaxtests._results.PermutationFields`).
    """

    statistic: jax.Array
    pvalue: jax.Array
    f_statistic: jax.Array
    df: tuple = static_field()
    mean_difference: jax.Array
    covariance: jax.Array
    direction: jax.Array
    univariate_statistic: jax.Array
    univariate_pvalue: jax.Array
    univariate_pvalue_adjusted: jax.Array
    paired: bool = static_field()
    correction: str = static_field()
    names: tuple | None = static_field()
    method: str = static_field()


def _scale(x, axis, xp=jnp):
    return xp.max(xp.abs(x), axis=axis)


def _rows(x, where, xp=jnp):
    """``(k,)`` count of kept rows of ``x : (..., k, p)`` (static, or traced with a mask)."""
    return x.shape[-2] if where is None else xp.sum(where).astype(x.dtype)


# The programs give the statistics; their tails and the adjustment are jaxtests._tails'
# (on the host for concrete statistics: betainc and the sort compile no more).
def _paired_statistics(a, b, where, xp=jnp):
    # ``where`` keeps rows (folds) of a shape bucket; None under the caller's jit and on
    # the host (xp=numpy, concrete data: nothing compiled).
    d = a - b
    k, p = _rows(d, where, xp), d.shape[-1]
    parts = kstatistics.hotelling_parts(d, where, xp)
    f = parts.statistic * (k - p) / (p * (k - 1))
    ut = kstatistics.t_statistic(xp.swapaxes(d, -1, -2), where, xp)
    rcond = kstatistics.correlation_rcond(parts.covariance, _scale(d, -2, xp), xp)
    return parts, f, ut, rcond


def _unpaired_statistics(a, b, where_a, where_b, xp=jnp):
    n1, n2, p = _rows(a, where_a, xp), _rows(b, where_b, xp), a.shape[-1]
    parts = kstatistics.hotelling_parts_two_sample(a, b, where_a, where_b, xp)
    m = n1 + n2 - 2
    f = parts.statistic * (m - p + 1) / (p * m)
    ut = kstatistics.pooled_t_statistic(
        xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), where_a, where_b, xp
    )
    scale = xp.maximum(_scale(a, -2, xp), _scale(b, -2, xp))
    rcond = kstatistics.correlation_rcond(parts.covariance, scale, xp)
    return parts, f, ut, rcond


_hotelling_paired = jax.jit(_paired_statistics)
_hotelling_unpaired = jax.jit(_unpaired_statistics)


def _on_host(statistics, traced, *arrays):
    """``statistics(*arrays, xp=numpy)`` for concrete data (nothing compiled), else (or
    where numpy refuses a singular covariance, which the jitted program reports as
    inf/NaN for the condition check) the jitted ``traced``."""
    if all(is_concrete(x) for x in arrays if x is not None):
        host = [None if x is None else np.asarray(x) for x in arrays]
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                return statistics(*host, xp=np)
        except np.linalg.LinAlgError:
            pass
    return traced(*arrays)


@x64
def hotelling_t2(
    a,
    b,
    *,
    paired=True,
    correction="holm",
    names=None,
    method="parametric",
    n_resamples=PM.N_RESAMPLES,
    key=None,
):
    """Hotelling's T² test comparing two algorithms on ``p`` performance measures at once.

    Parameters
    ----------
    a, b : array_like, shape ``(..., k, p)``
        Performance vectors of algorithms A and B: ``k`` folds by ``p`` measures, e.g.
        (tpr, fpr) or (precision, recall). Leading axes are batch axes. With
        ``paired=False`` the fold counts may differ (``n1``, ``n2``).
    paired : bool
        Paired test on ``d = a - b`` (same folds for both algorithms, Yildiz & Alpaydin) or the
        two-sample test with pooled covariance.
    correction : {"holm", "bonferroni", "hochberg", "hommel", "bh", "by", "none"}
        Adjustment of the ``p`` post hoc univariate t tests.
    names : sequence of str, optional
        Names of the ``p`` measures (kept in the result for reports).
    method : {"parametric", "permutation"}
        Reference distribution of T²: the F conversion, or its permutation
        distribution. Paired: sign flips of whole rows of ``d = a - b`` (each fold's
        difference vector is symmetric about 0 under H0), exact when
        ``2^k <= n_resamples``. Unpaired: the ``n1 + n2`` rows are split between the two
        samples at random (exact when ``C(n1 + n2, n1) <= n_resamples``). The tests of a
        batch share their draws; concrete arrays only (no ``jit``).
    n_resamples : int
        Permutation only: Monte Carlo draws, and the most rearrangements enumerated.
    key : int, JAX key or None
        Permutation only: randomness of the draws, recorded as ``seed``.

    Returns
    -------
    HotellingResult

    Raises
    ------
    ValueError
        If the covariance is singular: too few folds (``k <= p``), a constant measure,
        or collinear measures. The check runs on concrete inputs only.

    Notes
    -----
    Paired: ``T² = k dbar' S_d^-1 dbar`` and ``(k - p)/(p (k - 1)) T² ~ F(p, k - p)``
    (Yildiz & Alpaydin, eq. 1 and footnote 2). Two-sample: ``T² = n1 n2 / (n1 + n2)
    dbar' S_p^-1 dbar`` with ``m = n1 + n2 - 2``. The direction ``w = S^-1 dbar`` is the
    linear combination of the measures that separates the algorithms most (eq. 2).

    The permutation p-value is ``P(T²* >= T²)`` over the rearrangements, computed with
    the same T² kernel (no normality assumption). Flipping every row leaves T²
    unchanged, so an exact paired p-value is at least ``2 / 2^k``. The post hoc
    univariate tests stay parametric.

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification Algorithms".
    Rencher, A. C. (1995). Methods of Multivariate Analysis. Wiley.
    Good, P. (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, ch. 9.

    Examples
    --------
    >>> a = [[0.90, 0.10], [0.85, 0.12], [0.88, 0.08], [0.91, 0.11], [0.87, 0.09]]
    >>> b = [[0.80, 0.05], [0.82, 0.06], [0.79, 0.04], [0.84, 0.07], [0.78, 0.05]]
    >>> res = hotelling_t2(a, b, names=["tpr", "fpr"])
    >>> res.df
    (2, 3)
    >>> perm = hotelling_t2(a, b, method="permutation")  # all 2^5 row flips
    >>> perm.permutation_method, float(perm.pvalue)  # only +d and -d reach T²
    ('exact', 0.0625)
    """
    check_choice(correction, "correction", kmultitest.ADJUSTMENTS)
    if not isinstance(paired, bool | np.bool_):
        raise TypeError(f"`paired` must be a bool, got {type(paired).__name__}.")
    a = as_float_array(a, "a", min_ndim=2)
    b = as_float_array(b, "b", min_ndim=2)
    n_resamples, typed_key, seed = PM.permutation_iv(method, n_resamples, key, (a, "a"), (b, "b"))
    p = a.shape[-1]
    names = as_names(names, p, "names")
    # Tiny or huge data: an exact power-of-two rescale (T², F, t and p are invariant).
    factor, a, b = rescale_pow2(a, b)
    if paired:
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(
                f"`a` and `b` must have the same shape for a paired test, got "
                f"{tuple(a.shape)} and {tuple(b.shape)}."
            )
        k = a.shape[-2]
        if k <= p:
            raise ValueError(
                f"`a` and `b` have k={k} folds for p={p} measures: the paired T² needs more "
                f"folds than measures (k > p), else the covariance of `a - b` is singular. "
                "Use more folds or fewer measures."
            )
        parts, f, ut, rcond = _on_host(_paired_statistics, _hotelling_paired, a, b, None)
        df, t_df = (p, k - p), k - 1
        what = "The covariance of `a - b`"
    else:
        if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-1]:
            raise ValueError(
                "`a` and `b` must share batch shape and number of measures, got "
                f"{tuple(a.shape)} and {tuple(b.shape)}."
            )
        n1, n2 = a.shape[-2], b.shape[-2]
        if n1 < 2 or n2 < 2 or n1 + n2 - 2 < p + 1:
            raise ValueError(
                f"`a` and `b` have n1={n1} and n2={n2} folds for p={p} measures: the "
                "two-sample T² needs n1, n2 >= 2 and n1 + n2 - 2 > p. Use more folds or "
                "fewer measures."
            )
        parts, f, ut, rcond = _on_host(_unpaired_statistics, _hotelling_unpaired, a, b, None, None)
        df, t_df = (p, n1 + n2 - 1 - p), n1 + n2 - 2
        what = "The pooled covariance of `a` and `b`"
    _check_rcond(rcond, what, names, "Drop a redundant measure or use more folds.")
    pval = _tails.f_sf(f, *df)
    up = _tails.t_pvalue(ut, t_df, "two-sided")
    upa = _tails.adjust(up, correction)
    fields = {}
    if method == "permutation":
        draws = dict(n_resamples=n_resamples, key=typed_key, seed=seed)
        if paired:
            perm = PM.signflip("hotelling", a - b, alternative="greater", **draws)
        else:
            perm = PM.hotelling_two_sample(a, b, **draws)
        pval = perm.pvalue
        fields = PM.result_fields(perm)
    return HotellingResult(
        statistic=parts.statistic,
        pvalue=pval,
        f_statistic=f,
        df=df,
        mean_difference=scale_back(parts.mean, factor),
        covariance=scale_back(parts.covariance, factor, 2),
        direction=scale_back(parts.direction, factor, -1),
        univariate_statistic=ut,
        univariate_pvalue=up,
        univariate_pvalue_adjusted=upa,
        paired=bool(paired),
        correction=correction,
        names=names,
        method=method,
        **fields,
    )
