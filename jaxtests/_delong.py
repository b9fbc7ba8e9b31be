"""DeLong's test of two correlated ROC AUCs and the DeLong interval of one AUC.

The fast algorithm of Sun & Xu (2014): the structural components (placements)
of every instance from three midrank computations per score, so the covariance
of the AUCs costs ``O(n log n)``. Tied scores count 1/2, as pROC's ``delong``
method (its placements are the Mann-Whitney kernel with ties 1/2).
"""

import jax
import numpy as np

from jaxtests._precision import x64
from jaxtests._results import ConfidenceInterval, result, static_field
from jaxtests._validation import (
    as_float_array,
    as_label_array,
    check_alternative,
    check_probability,
    check_same_shape,
)

__all__ = ["DeLongIntervalResult", "DeLongResult", "delong_interval", "delong_test"]


@result
class DeLongResult:
    """Result of :func:`delong_test`.

    Attributes
    ----------
    statistic : float
        ``z = (auc_a - auc_b) / standard_error``.
    pvalue : float
    auc_a, auc_b, difference : float
        The two AUCs and ``auc_a - auc_b``.
    standard_error : float
        DeLong's standard error of the difference.
    confidence_interval : ConfidenceInterval
        Normal interval of the difference (open on one side for a one-sided test).
    covariance : (2, 2) array
        DeLong's covariance of ``(auc_a, auc_b)``.
    alternative, confidence_level
    """

    statistic: jax.Array
    pvalue: jax.Array
    auc_a: jax.Array
    auc_b: jax.Array
    difference: jax.Array
    standard_error: jax.Array
    confidence_interval: ConfidenceInterval
    covariance: jax.Array
    alternative: str = static_field(default="two-sided")
    confidence_level: float = static_field(default=0.95)


@result
class DeLongIntervalResult:
    """Result of :func:`delong_interval`: ``auc`` with its DeLong ``low``/``high`` and
    ``standard_error`` (the bounds clipped to [0, 1], as pROC's ``ci.auc``).

    ``confidence_interval`` is ``(low, high)`` as a :class:`jaxtests.ConfidenceInterval`,
    the shape of every interval (``DeLongResult.confidence_interval``,
    ``BootstrapResult.confidence_interval``).
    """

    auc: jax.Array
    low: jax.Array
    high: jax.Array
    standard_error: jax.Array
    confidence_level: float = static_field(default=0.95)

    @property
    def confidence_interval(self):
        """``ConfidenceInterval(low, high)``."""
        return ConfidenceInterval(self.low, self.high)


def _delong(y, s):
    """AUCs ``(K,)`` and DeLong's covariance ``(K, K)`` of scores ``s : (K, n)``, labels
    ``y`` ±1, in numpy on the host (nothing compiled; the same placements as
    :func:`jaxtests.kernels.bootstrap.delong_placements`, which the bootstrap jits).

    A positive's placement is the fraction of negatives below its score, a negative's
    the fraction of positives above it, ties 1/2 (Sun & Xu 2014's midrank
    differences): two binary searches in each class's sorted scores.
    """
    pos, neg = s[:, y > 0], s[:, y < 0]

    def below(sorted_, x):
        # entries of ``sorted_`` below each of ``x``, ties counted 1/2
        lo = np.searchsorted(sorted_, x, side="left")
        hi = np.searchsorted(sorted_, x, side="right")
        return (lo + hi) / 2

    v10 = np.stack([below(np.sort(n_), p_) for p_, n_ in zip(pos, neg, strict=True)])
    v01 = np.stack([below(np.sort(p_), n_) for p_, n_ in zip(pos, neg, strict=True)])
    v10 = v10 / neg.shape[1]
    v01 = 1 - v01 / pos.shape[1]
    auc = v10.mean(axis=1)
    d10 = v10 - auc[:, None]
    d01 = v01 - auc[:, None]
    s10 = d10 @ d10.T / (pos.shape[1] - 1)
    s01 = d01 @ d01.T / (neg.shape[1] - 1)
    return auc, s10 / pos.shape[1] + s01 / neg.shape[1]


def _iv(y_true, scores):
    y = as_label_array(y_true, "y_true")
    if y.ndim != 1:
        raise ValueError(f"`y_true` must be 1-dimensional, got shape {tuple(y.shape)}.")
    out = []
    for name, s in scores:
        s = as_float_array(s, name, ndim=1)
        check_same_shape(y, s, "y_true", name)
        out.append(s)
    n_pos = int(np.sum(np.asarray(y) > 0))
    n_neg = y.shape[0] - n_pos
    if n_pos < 2 or n_neg < 2:
        raise ValueError(
            f"`y_true` needs at least 2 positives and 2 negatives for DeLong's variance, got "
            f"{n_pos} and {n_neg}."
        )
    # Stacked on the host (an eager jnp.stack compiles a program per shape).
    return np.asarray(y), np.stack([np.asarray(x) for x in out])


@x64
def delong_test(y_true, score_a, score_b, *, alternative="two-sided", confidence_level=0.95):
    """DeLong's test of two correlated ROC AUCs on the same instances (pROC's ``roc.test``).

    Parameters
    ----------
    y_true : array_like, (n,)
        Labels ±1 or 0/1 (+1 positive); at least 2 of each class.
    score_a, score_b : array_like, (n,)
        Scores of the two classifiers (higher means positive).
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: AUC of A larger.
    confidence_level : float, default 0.95
        Of the interval of the difference.

    Returns
    -------
    DeLongResult
        ``statistic`` (z), ``pvalue``, ``auc_a``, ``auc_b``, ``difference``,
        ``standard_error``, ``confidence_interval``, ``covariance``.

    Notes
    -----
    Placements (Sun & Xu 2014): with midranks ``T`` among all instances and
    ``T_pos``, ``T_neg`` within each class, ``V10_i = (T_i - T_pos,i) / n_neg``
    for a positive and ``V01_j = 1 - (T_j - T_neg,j) / n_pos`` for a negative;
    ``S = cov(V10) / n_pos + cov(V01) / n_neg`` (``ddof=1``);
    ``z = (A - B) / sqrt(S_aa + S_bb - 2 S_ab)``, normal p-value and interval
    ``A - B +- z_{1-alpha/2} se``. Identical scores give ``z = 0`` and ``p = 1``;
    a zero variance with a nonzero difference gives ``z = +-inf`` and ``p = 0``.

    References
    ----------
    DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988), Biometrics 44, 837-845.
    Sun, X. & Xu, W. (2014), Fast implementation of DeLong's algorithm, IEEE Signal
    Processing Letters 21(11), 1389-1393. Robin et al. (2011), pROC, BMC Bioinformatics 12:77.

    Examples
    --------
    >>> import jaxtests
    >>> y = [1, 1, 1, 1, -1, -1, -1, -1]
    >>> a = [.9, .8, .7, .3, .4, .2, .1, .05]
    >>> r = jaxtests.delong_test(y, a, [.9, .4, .6, .2, .5, .3, .1, .7])
    >>> round(float(r.auc_a), 4), round(float(r.auc_b), 4)
    (0.9375, 0.625)
    """
    check_alternative(alternative)
    level = check_probability(confidence_level, "confidence_level")
    y, s = _iv(y_true, [("score_a", score_a), ("score_b", score_b)])
    auc, cov = _delong(y, s)
    from scipy import special

    diff = auc[0] - auc[1]
    var = max(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1], 0.0)
    se = np.sqrt(var)
    if diff == 0:  # identical curves (or equal AUCs): no evidence either way
        z = 0.0
    elif se == 0:
        z = np.copysign(np.inf, diff)
    else:
        z = diff / se
    if alternative == "two-sided":
        p = 2 * special.ndtr(-abs(z))
        q = special.ndtri(1 - (1 - level) / 2)
        low, high = diff - q * se, diff + q * se
    else:
        q = special.ndtri(level)
        p = special.ndtr(-z) if alternative == "greater" else special.ndtr(z)
        low, high = (
            (diff - q * se, np.inf) if alternative == "greater" else (-np.inf, diff + q * se)
        )
    return DeLongResult(
        statistic=np.float64(z),
        pvalue=np.float64(min(p, 1.0)),
        auc_a=np.float64(auc[0]),
        auc_b=np.float64(auc[1]),
        difference=np.float64(diff),
        standard_error=np.float64(se),
        confidence_interval=ConfidenceInterval(np.float64(low), np.float64(high)),
        covariance=cov,
        alternative=alternative,
        confidence_level=level,
    )


@x64
def delong_interval(y_true, scores, *, confidence_level=0.95):
    """DeLong confidence interval of one ROC AUC (pROC's ``ci.auc(method="delong")``).

    Parameters
    ----------
    y_true : array_like, (n,)
        Labels ±1 or 0/1; at least 2 of each class.
    scores : array_like, (n,)
    confidence_level : float, default 0.95

    Returns
    -------
    DeLongIntervalResult
        ``auc``, ``low``, ``high``, ``standard_error``.

    Notes
    -----
    ``auc +- z_{1-alpha/2} se`` with ``se^2 = var(V10) / n_pos + var(V01) / n_neg``
    (placements as in :func:`delong_test`), the bounds clipped to [0, 1].

    References
    ----------
    DeLong et al. (1988); Sun & Xu (2014); pROC's ``ci.auc``.

    Examples
    --------
    >>> import jaxtests
    >>> r = jaxtests.delong_interval([1, 1, 1, -1, -1, -1], [.9, .8, .3, .4, .2, .1])
    >>> round(float(r.auc), 4)
    0.8889
    """
    level = check_probability(confidence_level, "confidence_level")
    y, s = _iv(y_true, [("scores", scores)])
    auc, cov = _delong(y, s)
    from scipy import special

    se = float(np.sqrt(max(cov[0, 0], 0.0)))
    q = special.ndtri(1 - (1 - level) / 2)
    return DeLongIntervalResult(
        auc=np.float64(auc[0]),
        low=np.float64(max(auc[0] - q * se, 0.0)),
        high=np.float64(min(auc[0] + q * se, 1.0)),
        standard_error=np.float64(se),
        confidence_level=level,
    )
