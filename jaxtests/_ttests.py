"""Univariate parametric tests for two learning algorithms: paired t, 5x2cv t and F, and
the corrected resampled t.

Each test is a statistic kernel from :mod:`jaxtests.kernels.statistics` followed by a
reference distribution; every input may carry leading batch dimensions, so one jitted
call runs thousands of independent tests. The intervals of a :class:`TtestResult` are in
:mod:`jaxtests._t_intervals`.
"""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _clusters, _tails
from jaxtests import _permutation_methods as PM
from jaxtests._precision import x64
from jaxtests._results import PermutationFields, result, static_field
from jaxtests._t_intervals import _effect_size_interval, _t_interval
from jaxtests._validation import (
    as_float_array,
    as_int_scalar,
    check_alternative,
    check_choice,
    check_same_shape,
    is_concrete,
    normalize_axis,
    rescale_pow2,
    scale_back,
)
from jaxtests.kernels import statistics as kstatistics

__all__ = [
    "Ttest5x2cvResult",
    "TtestResult",
    "ftest_5x2cv",
    "ttest_5x2cv",
    "ttest_corrected",
    "ttest_paired",
]

METHODS = ("parametric",)
PAIRED_METHODS = PM.METHODS


@result
class TtestResult(PermutationFields):
    """Result of :func:`ttest_paired` and :func:`ttest_corrected`.

    Attributes
    ----------
    statistic, pvalue : arrays of the batch shape
    df : int
        Degrees of freedom of the reference t distribution.
    mean_difference : array
        Mean of ``a - b``.
    standard_error : array
        Standard error of the mean difference used in the denominator of ``statistic``.
    effect_size : array
        Cohen's ``d_z = mean(d) / sd(d)`` of the differences ``d = a - b`` (``sd`` with
        ``ddof=1``); its interval is :meth:`effect_size_interval`.
    alternative, method : str
        ``method`` is "parametric" or "permutation".
    pvalue_interval, n_resamples, seed, permutation_method
        ``method="permutation"`` only (:class:`~jaxtests._results.PermutationFields`);
        ``n_resamples`` counts sign patterns, all ``2^n`` when exact.
    test_train_ratio : float or None
        :func:`ttest_corrected` only: ``n_test / n_train`` of its variance correction.
    n_clusters : int or None
        :func:`ttest_paired` with ``cluster``: the number of clusters ``G``.
    cluster_se : str or None
        :func:`ttest_paired` with ``cluster``: "CR1" or "CR2", the standard error's kind.
    """

    statistic: jax.Array
    pvalue: jax.Array
    df: int = static_field()
    mean_difference: jax.Array
    standard_error: jax.Array
    effect_size: jax.Array
    alternative: str = static_field()
    method: str = static_field()
    test_train_ratio: float | None = static_field(default=None)
    n_clusters: int | None = static_field(default=None)
    cluster_se: str | None = static_field(default=None)

    def confidence_interval(self, confidence_level=0.95):
        """Confidence interval for the mean difference, ``mean ± t_q · standard_error``.

        One-sided alternatives give the matching half-infinite interval, as scipy. It is
        the t interval for either ``method``.
        """
        return _t_interval(
            self.mean_difference, self.standard_error, self.df, self.alternative, confidence_level
        )

    def effect_size_interval(self, confidence_level=0.95):
        """Exact confidence interval for the population ``d_z = mu_d / sigma_d``.

        The noncentral t interval of Steiger & Fouladi (1997), the method of MBESS's ``ci.sm``:
        ``t`` follows the noncentral t with ``df`` degrees of freedom and noncentrality
        ``d_z sqrt(n)``, and the limits are the noncentralities that put the observed
        ``t`` at the ``(1 ± confidence_level) / 2`` quantiles, divided by ``sqrt(n)``.
        One-sided alternatives give the half-infinite interval, as
        :meth:`confidence_interval`; the interval is the same for either ``method``.
        :func:`ttest_corrected` inverts its corrected ``t`` instead (see its Notes).
        Zero variance gives the point ``(±inf, ±inf)`` where ``t = ±inf``, and NaN
        where ``t`` is NaN (``a == b``). Computed on the host (scipy), about 0.2 ms per
        test: concrete results only. Not available for clustered results (``t`` has a
        cluster-robust denominator, not a noncentral t law).
        """
        if self.n_clusters is not None:
            raise ValueError(
                "effect_size_interval assumes independent differences; this test was "
                "clustered (use confidence_interval for the mean difference)."
            )
        if self.test_train_ratio is None:
            scale = 1 / math.sqrt(self.df + 1)
        else:
            scale = math.sqrt(1 / (self.df + 1) + self.test_train_ratio)
        return _effect_size_interval(
            self.statistic, self.df, scale, self.alternative, confidence_level
        )


@result
class Ttest5x2cvResult:
    """Result of :func:`ttest_5x2cv` (``df`` = 5) and :func:`ftest_5x2cv` (``df`` = (10, 5))."""

    statistic: jax.Array
    pvalue: jax.Array
    df: object = static_field()
    alternative: str = static_field()
    method: str = static_field()


# ----------------------------------------------------------------------------------------
# Validation shared by the paired tests
# ----------------------------------------------------------------------------------------


def _pair_iv(a, b, axis, min_n, method, methods=METHODS):
    check_choice(method, "method", methods)
    a = as_float_array(a, "a", min_ndim=1)
    b = as_float_array(b, "b", min_ndim=1)
    check_same_shape(a, b, "a", "b")
    axis = normalize_axis(axis, a.ndim)
    # numpy on concrete data: an eager jnp.moveaxis compiles a program per shape.
    move = jnp.moveaxis if not (is_concrete(a) and is_concrete(b)) else np.moveaxis
    a = move(a, axis, -1)
    b = move(b, axis, -1)
    n = a.shape[-1]
    if n < min_n:
        raise ValueError(
            f"`a` and `b` need at least {min_n} paired observations along `axis`, got {n}."
        )
    return a, b


def _warn_zero_variance(se, what):
    if not is_concrete(se):
        return
    bad = np.asarray(se) == 0
    if bad.any():
        warnings.warn(
            f"{what} has zero variance in {int(bad.sum())} of {bad.size} test(s): the statistic "
            "is ±inf where the mean difference is nonzero (p = 0) and NaN where it is zero "
            "(p = NaN), as scipy.stats.ttest_rel.",
            RuntimeWarning,
            stacklevel=3,
        )


# ----------------------------------------------------------------------------------------
# Paired t test
# ----------------------------------------------------------------------------------------


@jax.jit
def _paired_moments(a, b, where):
    # Traced data (the caller's jit): ``where`` masks nothing there (None). Concrete data
    # run the same kernel in numpy on the host (_host_moments): no compile at all.
    mom = kstatistics.paired_moments(a - b, where)
    return mom, _dz(mom.statistic, kstatistics.count(a, where))


def _dz(t, n, xp=jnp):
    # d_z = mean / sd = t / sqrt(n): from t, so zero variance gives t's ±inf and NaN.
    return t / xp.sqrt(xp.asarray(n, t.dtype))


def _host(*arrays):
    """Whether the statistics run on the host in numpy: concrete data (scipy's way; the
    kernels take ``xp=np``, so a first call compiles nothing)."""
    return all(is_concrete(x) for x in arrays)


@x64
def ttest_paired(
    a,
    b,
    *,
    alternative="two-sided",
    axis=-1,
    method="parametric",
    n_resamples=PM.N_RESAMPLES,
    key=None,
    cluster=None,
    cluster_se="CR1",
):
    """Paired t test on per-fold scores or per-instance losses of two algorithms.

    Parameters
    ----------
    a, b : array_like, same shape ``(..., n, ...)``
        Scores (or losses) of algorithms A and B, paired along ``axis``: ``n`` folds
        of a cross-validation, or ``n`` instances of one test set (Hein's ``W_i``).
        Other axes are batch axes: a ``(10000, 10)`` array gives 10,000 tests.
    alternative : {"two-sided", "less", "greater"}
        Alternative about the mean of ``a - b``.
    axis : int
        Axis holding the paired observations.
    method : {"parametric", "permutation"}
        Reference distribution of ``t``: Student's t with ``n - 1`` degrees of freedom,
        or the sign-flip distribution of the same statistic (each ``d_i = a_i - b_i``
        symmetric about 0 under H0, Hein). Permutation p-values are exact when
        ``2^n <= n_resamples`` (all sign patterns), Monte Carlo otherwise; the tests of a
        batch share their draws. It needs concrete arrays (no ``jit``).
    n_resamples : int
        Permutation only: Monte Carlo draws, and the most patterns enumerated exactly.
    key : int, JAX key or None
        Permutation only: randomness of the draws; the seed is recorded in the result.
    cluster : array_like, (n,), optional
        One cluster label per paired observation (integers or strings), shared by
        every test of a batch: observations of one cluster (questions about one
        passage) are dependent, clusters independent. The standard error is then
        cluster-robust (``cluster_se``) and the permutation p-value flips each
        cluster's differences together (:func:`signflip_test` with ``cluster``).
        Needs concrete arrays.
    cluster_se : {"CR1", "CR2"}
        With ``cluster``: "CR1", statsmodels' ``cov_type="cluster"`` on an
        intercept-only OLS, with ``G - 1`` degrees of freedom; "CR2", the
        bias-reduced linearization of Bell & McCaffrey (2002) with their
        Satterthwaite degrees of freedom (R clubSandwich's
        ``coef_test(vcov="CR2")``), better for few or unequal clusters.

    Returns
    -------
    TtestResult
        ``statistic``, ``pvalue``, ``df``, ``mean_difference``, ``standard_error``,
        ``effect_size`` (Cohen's ``d_z``), ``confidence_interval(confidence_level=0.95)``
        of the mean difference and ``effect_size_interval(confidence_level=0.95)`` of
        ``d_z``; with ``method="permutation"`` also ``pvalue_interval``,
        ``n_resamples``, ``seed`` and ``permutation_method``; with ``cluster`` also
        ``n_clusters`` and ``cluster_se``.

    Notes
    -----
    ``t = mean(d) / sqrt(sum (d_i - mean d)^2 / (n (n - 1)))`` with ``d = a - b``
    ("Evaluation" lecture notes). Zero variance gives ``±inf`` (p = 0) for a constant
    nonzero difference and NaN for identical ``a`` and ``b`` (``d`` all 0), with a
    ``RuntimeWarning``, as :func:`scipy.stats.ttest_rel`. "Zero" is
    ``sum (d_i - mean d)^2 <= n (64 eps max|d|)^2``: what rounding alone leaves of a
    constant ``d`` (scipy reports such a residue as ``t ~ 1e16``). Data of tiny or huge
    magnitude (``1e-160``, subnormals) are rescaled by a power of two first, exactly, so
    they give scipy's answer too.

    The permutation p-value is that of ``signflip_test(a - b, statistic="t")`` with the
    same ``key``: under sign flips ``sum d_i^2`` is invariant, so ``t`` is increasing in
    the mean and the engine counts it exactly from the mean's linear form (the
    closed-form binomial null when ``d`` takes only the values ``{-c, 0, c}``). Zero
    variance needs no warning there: equal nonzero differences give the smallest p,
    all-zero ones p = 1. Exact
    p-values are ``b / 2^n``, Monte Carlo ones ``(b + 1) / (B + 1)``; two-sided is
    ``min(1, 2 min(P(T >= t), P(T <= t)))``, as scipy's ``permutation_test``.

    The effect size is Cohen's ``d_z = mean(d) / sd(d) = t / sqrt(n)`` (Lakens 2013;
    pingouin's ``eftype="cohen_dz"``): the mean difference in units of the spread of
    the paired differences, the standardizer of the test itself. It is not pingouin's
    paired ``"cohen"`` (``d_av``, the mean over the average SD of ``a`` and ``b``),
    which ignores the pairing. Zero variance gives ``t``'s ``±inf`` or NaN.
    :meth:`TtestResult.effect_size_interval` inverts the noncentral t CDF exactly
    (Steiger & Fouladi 1997, MBESS's ``ci.sm``), not the normal approximation
    ``d ± t_q sqrt(1/n + d^2/(2n))`` of pingouin's ``compute_esci``, which is too
    wide for small ``n`` and large ``d``.

    Clustered: ``t = mean(d) / se`` with ``se`` from the clusters' sums of residuals
    (see ``cluster_se``; :func:`jaxtests._clusters.robust_se` has the formulas);
    ``df`` is ``G - 1`` (CR1) or the Satterthwaite value (CR2, a float; ``G - 1``
    for equal cluster sizes). ``confidence_interval`` uses that ``se`` and ``df``.
    ``effect_size`` stays the observations' ``mean / sd``, a description; it has
    no interval. With one observation per cluster, CR1 is the paired t itself
    (``se = sd / sqrt(n)``, ``df = n - 1``). The permutation p-value is that of the mean under
    flips of whole clusters: exact for the null that each cluster's summed
    difference is symmetric about 0 (with equal sizes it is also the robust
    ``t``'s, which is increasing in ``|mean|`` under those flips).

    References
    ----------
    Lecture notes, "Evaluation": the t test on 10-fold CV.
    Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
    University, 2013. Paired t and the sign-flip permutation test on a single
    test set.
    Lakens, D. (2013). Calculating and reporting effect sizes to facilitate cumulative
    science. Frontiers in Psychology 4, 863.
    Steiger, J. H., & Fouladi, R. T. (1997). Noncentrality interval estimation and the
    evaluation of statistical models. In *What if there were no significance tests?*
    Bell, R. M., & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear
    regression with multi-stage samples. Survey Methodology 28, 169-181.
    Cameron, A. C., & Miller, D. L. (2015). A practitioner's guide to cluster-robust
    inference. Journal of Human Resources 50, 317-372.
    Pustejovsky, J. E., & Tipton, E. (2018). Small-sample methods for cluster-robust
    variance estimation and hypothesis testing in fixed effects models. JBES 36, 672-683.

    Examples
    --------
    >>> a = [0.81, 0.82, 0.84, 0.78, 0.85, 0.86, 0.82, 0.83, 0.82, 0.81]
    >>> b = [0.80, 0.77, 0.70, 0.83, 0.80, 0.78, 0.75, 0.80, 0.78, 0.77]
    >>> res = ttest_paired(a, b)
    >>> round(float(res.statistic), 2), res.df
    (2.98, 9)
    >>> ci = res.effect_size_interval()  # Cohen's d_z, exact 95% interval
    >>> round(float(res.effect_size), 4), round(float(ci.low), 4), round(float(ci.high), 4)
    (0.9425, 0.1715, 1.6789)
    >>> perm = ttest_paired(a, b, method="permutation")  # 2^10 patterns: exact
    >>> perm.permutation_method, perm.n_resamples, round(float(perm.pvalue), 4)
    ('exact', 1024, 0.0215)
    >>> passage = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]  # two questions about each passage
    >>> cr = ttest_paired(a, b, cluster=passage)
    >>> round(float(cr.statistic), 2), cr.df, cr.n_clusters
    (7.95, 4, 5)
    """
    check_alternative(alternative)
    a, b = _pair_iv(a, b, axis, 2, method, PAIRED_METHODS)
    n_resamples, typed_key, seed = PM.permutation_iv(method, n_resamples, key, (a, "a"), (b, "b"))
    if cluster is not None:
        return _ttest_clustered(
            a, b, cluster, cluster_se, alternative, method, n_resamples, typed_key, seed
        )
    check_choice(cluster_se, "cluster_se", _clusters.CLUSTER_SE)
    # Tiny or huge data: an exact power-of-two rescale (t and p are invariant).
    factor, a, b = rescale_pow2(a, b)
    fields = {}
    if _host(a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            mom = kstatistics.paired_moments(np.asarray(a) - np.asarray(b), xp=np)
            dz = _dz(mom.statistic, a.shape[-1], np)
    else:
        mom, dz = _paired_moments(a, b, None)
    if method == "parametric":
        p = _tails.t_pvalue(mom.statistic, a.shape[-1] - 1, alternative)
        _warn_zero_variance(mom.standard_error, "`a - b`")
    else:
        perm = PM.signflip(
            "t", a - b, alternative=alternative, n_resamples=n_resamples, key=typed_key, seed=seed
        )
        p = perm.pvalue
        fields = PM.result_fields(perm)
    return _ttest_result(mom, p, dz, a.shape[-1], factor, alternative, method, **fields)


def _ttest_clustered(a, b, cluster, cluster_se, alternative, method, n_resamples, key, seed):
    """:func:`ttest_paired` with ``cluster``: cluster-robust t on the host (numpy)."""
    check_choice(cluster_se, "cluster_se", _clusters.CLUSTER_SE)
    for arr, name in ((a, "a"), (b, "b")):
        if not is_concrete(arr):
            raise TypeError(f"`{name}` is traced: `cluster` needs concrete arrays (no jit).")
    factor, a, b = rescale_pow2(a, b)
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.shape[-1]
    groups = _clusters.cluster_iv(cluster, n)
    mean, se, df = _clusters.robust_se(d, groups, cluster_se)
    resid = d - mean[..., None]
    # Zero spread by the unclustered test's rule (what rounding leaves of a constant d):
    # every cluster's residual sum is then rounding too, and se is exactly 0.
    zero = (resid**2).sum(axis=-1) <= n * (64 * np.finfo(np.float64).eps * np.abs(d).max(-1)) ** 2
    se = np.where(zero, 0.0, se)
    sd = np.where(zero, 0.0, np.sqrt((resid**2).sum(axis=-1) / (n - 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
        dz = mean / sd
    fields = {"n_clusters": groups.n_clusters, "cluster_se": cluster_se}
    if method == "parametric":
        p = _tails.t_pvalue(t, df, alternative)
        _warn_zero_variance(se, "`a - b`")
    else:
        perm = PM.signflip(
            "mean",
            groups.sums(d),
            alternative=alternative,
            n_resamples=n_resamples,
            key=key,
            seed=seed,
        )
        p = perm.pvalue
        fields |= PM.result_fields(perm)
    return TtestResult(
        statistic=t,
        pvalue=p,
        df=df,
        mean_difference=scale_back(mean, factor),
        standard_error=scale_back(se, factor),
        effect_size=dz,
        alternative=alternative,
        method=method,
        **fields,
    )


def _ttest_result(mom, p, dz, k, factor, alternative, method, **fields):
    """A paired (or corrected) t test's result from its moments over ``k`` folds."""
    return TtestResult(
        statistic=mom.statistic,
        pvalue=p,
        df=k - 1,
        mean_difference=scale_back(mom.mean, factor),
        standard_error=scale_back(mom.standard_error, factor),
        effect_size=dz,
        alternative=alternative,
        method=method,
        **fields,
    )


# ----------------------------------------------------------------------------------------
# 5x2cv t and F
# ----------------------------------------------------------------------------------------


def _5x2_iv(a, b, method):
    check_choice(method, "method", METHODS)
    a = as_float_array(a, "a", min_ndim=2)
    b = as_float_array(b, "b", min_ndim=2)
    check_same_shape(a, b, "a", "b")
    if tuple(a.shape[-2:]) != (5, 2):
        raise ValueError(
            "`a` and `b` must end in shape (5, 2) (5 replications x 2 folds), got "
            f"{tuple(a.shape)}."
        )
    return a, b


@jax.jit
def _ttest_5x2cv(a, b):
    d = a - b
    return kstatistics.ttest_5x2cv_statistic(d), kstatistics.within_replication_ss(d)


@jax.jit
def _ftest_5x2cv(a, b):
    d = a - b
    return kstatistics.ftest_5x2cv_statistic(d), kstatistics.within_replication_ss(d)


def _five_by_two(a, b, statistic, jitted):
    """``(statistic, sum_i s_i^2)`` of 5x2cv scores: the kernel in numpy on the host for
    concrete data (nothing compiled), the jitted program ``jitted`` for traced data."""
    if not _host(a, b):
        return jitted(a, b)
    d = np.asarray(a) - np.asarray(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return statistic(d, np), kstatistics.within_replication_ss(d, np)


@x64
def ttest_5x2cv(a, b, *, alternative="two-sided", method="parametric"):
    """Dietterich's 5x2cv paired t test on precomputed scores.

    Parameters
    ----------
    a, b : array_like, shape ``(..., 5, 2)``
        Scores of algorithms A and B for 5 replications of 2-fold cross-validation
        (replication x fold), optionally with leading batch axes.
    alternative : {"two-sided", "less", "greater"}
    method : {"parametric"}

    Returns
    -------
    Ttest5x2cvResult
        ``statistic``, ``pvalue``, ``df`` (= 5).

    Notes
    -----
    With ``d_ij = a_ij - b_ij`` and ``s_i^2 = sum_j (d_ij - dbar_i)^2``,
    ``t = d_11 / sqrt(sum_i s_i^2 / 5)``, referred to t with 5 degrees of freedom
    (the same formula as ``mlxtend.evaluate.paired_ttest_5x2cv``). Zero variance
    (``sum_i s_i^2 <= 10 (64 eps max|d|)^2``, rounding residue) gives ``±inf``, or NaN
    when ``d_11 = 0``, with a ``RuntimeWarning``.

    References
    ----------
    Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
    classification learning algorithms. Neural Computation 10, 1895-1923.

    Examples
    --------
    >>> import jaxtests
    >>> a = [[0.81, 0.84], [0.79, 0.83], [0.80, 0.85], [0.82, 0.80], [0.78, 0.84]]
    >>> b = [[0.77, 0.80], [0.78, 0.79], [0.76, 0.82], [0.80, 0.78], [0.75, 0.80]]
    >>> r = jaxtests.ttest_5x2cv(a, b)
    >>> round(float(r.statistic), 4), round(float(r.pvalue), 4), r.df
    (3.8139, 0.0125, 5)
    """
    check_alternative(alternative)
    a, b = _5x2_iv(a, b, method)
    _, a, b = rescale_pow2(a, b)  # t is scale-invariant
    t, s2 = _five_by_two(a, b, kstatistics.ttest_5x2cv_statistic, _ttest_5x2cv)
    p = _tails.t_pvalue(t, 5, alternative)
    _warn_zero_variance(s2, "`a - b` within replications")
    return Ttest5x2cvResult(statistic=t, pvalue=p, df=5, alternative=alternative, method=method)


@x64
def ftest_5x2cv(a, b, *, method="parametric"):
    """Alpaydin's combined 5x2cv F test on precomputed scores.

    Parameters
    ----------
    a, b : array_like, shape ``(..., 5, 2)``
        Scores of algorithms A and B (replication x fold).
    method : {"parametric"}

    Returns
    -------
    Ttest5x2cvResult
        ``statistic``, ``pvalue``, ``df`` (= (10, 5)); the test is two-sided by nature.

    Notes
    -----
    ``F = sum_ij d_ij^2 / (2 sum_i s_i^2) ~ F(10, 5)`` under the null (the formula of
    ``mlxtend.evaluate.combined_ftest_5x2cv``). Zero ``sum_i s_i^2`` (as in
    :func:`ttest_5x2cv`) gives F = inf (p = 0), or NaN for identical ``a`` and ``b``,
    with a ``RuntimeWarning``.

    References
    ----------
    Alpaydin, E. (1999). Combined 5x2 cv F test for comparing supervised classification
    learning algorithms. Neural Computation 11, 1885-1892. Used by Yildiz, O. T., &
    Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive Loss" and
    "Multivariate Comparison of Classification Algorithms".

    Examples
    --------
    >>> import jaxtests
    >>> a = [[0.81, 0.84], [0.79, 0.83], [0.80, 0.85], [0.82, 0.80], [0.78, 0.84]]
    >>> b = [[0.77, 0.80], [0.78, 0.79], [0.76, 0.82], [0.80, 0.78], [0.75, 0.80]]
    >>> r = jaxtests.ftest_5x2cv(a, b)
    >>> round(float(r.statistic), 4), round(float(r.pvalue), 4), r.df
    (9.7273, 0.0108, (10, 5))
    """
    a, b = _5x2_iv(a, b, method)
    _, a, b = rescale_pow2(a, b)  # F is scale-invariant
    f, s2 = _five_by_two(a, b, kstatistics.ftest_5x2cv_statistic, _ftest_5x2cv)
    p = _tails.f_sf(f, 10, 5)
    _warn_zero_variance(s2, "`a - b` within replications")
    return Ttest5x2cvResult(
        statistic=f, pvalue=p, df=(10, 5), alternative="two-sided", method=method
    )


# ----------------------------------------------------------------------------------------
# Corrected resampled t
# ----------------------------------------------------------------------------------------


@jax.jit
def _ttest_corrected(a, b, where, ratio):
    mom = kstatistics.corrected_t_statistic(a - b, ratio, where)
    n = kstatistics.count(a, where)
    # d_z undoes the correction: t_c sqrt(1/J + ratio) = mean / sd
    dz = mom.statistic * jnp.sqrt(1 / jnp.asarray(n, mom.statistic.dtype) + ratio)
    return mom, dz


@x64
def ttest_corrected(
    a, b, *, n_train, n_test, alternative="two-sided", axis=-1, method="parametric"
):
    """Nadeau & Bengio's corrected resampled t test.

    Parameters
    ----------
    a, b : array_like, same shape ``(..., J, ...)``
        Scores of algorithms A and B on ``J`` random train/test splits (or
        repeated cross-validation folds), paired along ``axis``.
    n_train, n_test : int
        Training and test set sizes of each split.
    alternative : {"two-sided", "less", "greater"}
    axis : int
    method : {"parametric"}

    Returns
    -------
    TtestResult
        ``standard_error`` is the corrected ``sqrt((1/J + n_test/n_train) s^2)``;
        ``test_train_ratio`` is ``n_test / n_train``.

    Notes
    -----
    The overlap of training sets makes the ``J`` differences correlated, so the naive
    variance ``s^2 / J`` is too small; Nadeau & Bengio replace it by
    ``(1/J + n_test/n_train) s^2`` and refer ``t`` to Student's t with ``J - 1`` df.
    Zero variance as in :func:`ttest_paired` (±inf, or NaN when ``a == b``).

    ``effect_size`` is the uncorrected ``d_z = mean(d) / s`` of the ``J`` split
    differences, the same number :func:`ttest_paired` gives on these data: the
    correction is about the variance of the mean, not the spread of the differences,
    so the point estimate needs none (it is ``t sqrt(1/J + n_test/n_train)``). Its
    interval is not: :meth:`TtestResult.effect_size_interval` inverts the corrected
    ``t`` as noncentral t with noncentrality ``d_z / sqrt(1/J + n_test/n_train)``, the
    test's own approximation, and is wider than the paired interval, which would take
    the correlated splits as independent. ``d_z`` describes split-to-split variation
    of one resampling design: compare it across studies only with the same design.

    References
    ----------
    Nadeau, C., & Bengio, Y. (2003). Inference for the generalization error.
    Machine Learning 52, 239-281.

    Examples
    --------
    >>> import jaxtests
    >>> a = [0.81, 0.84, 0.79, 0.83, 0.80, 0.85, 0.82, 0.80, 0.78, 0.84]
    >>> b = [0.77, 0.80, 0.78, 0.79, 0.76, 0.82, 0.80, 0.78, 0.75, 0.80]
    >>> r = jaxtests.ttest_corrected(a, b, n_train=90, n_test=10)  # 10 random 90/10 splits
    >>> round(float(r.statistic), 4), round(float(r.pvalue), 4), r.df
    (6.1308, 0.0002, 9)
    >>> ci = r.effect_size_interval()
    >>> round(float(r.effect_size), 4), round(float(ci.low), 4), round(float(ci.high), 4)
    (2.8169, 1.228, 4.3574)
    """
    check_alternative(alternative)
    n_train = as_int_scalar(n_train, "n_train", minimum=1)
    n_test = as_int_scalar(n_test, "n_test", minimum=1)
    a, b = _pair_iv(a, b, axis, 2, method)
    factor, a, b = rescale_pow2(a, b)
    ratio = n_test / n_train
    if _host(a, b):
        d = np.asarray(a) - np.asarray(b)
        with np.errstate(divide="ignore", invalid="ignore"):
            mom = kstatistics.corrected_t_statistic(d, ratio, xp=np)
            dz = mom.statistic * np.sqrt(1 / d.shape[-1] + ratio)
    else:
        mom, dz = _ttest_corrected(a, b, None, np.float64(ratio))
    p = _tails.t_pvalue(mom.statistic, a.shape[-1] - 1, alternative)
    _warn_zero_variance(mom.standard_error, "`a - b`")
    return _ttest_result(
        mom, p, dz, a.shape[-1], factor, alternative, method, test_train_ratio=n_test / n_train
    )
