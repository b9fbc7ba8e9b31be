"""McNemar's test of equal error rates of two classifiers on one test set, and its label checks."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _clusters, _tails
from jaxtests._precision import x64
from jaxtests._results import result, static_field
from jaxtests._validation import (
    as_label_array,
    check_choice,
    check_finite,
    check_same_shape,
    is_concrete,
)
from jaxtests.kernels import statistics as kstatistics

__all__ = ["McNemarResult", "mcnemar"]


@result
class McNemarResult:
    """Result of :func:`mcnemar`.

    ``n01`` counts instances that ``pred_a`` gets right and ``pred_b`` wrong, ``n10`` the
    reverse; only these discordant pairs carry information.
    """

    statistic: jax.Array
    pvalue: jax.Array
    n01: jax.Array
    n10: jax.Array
    method: str = static_field()
    correction: bool = static_field()
    n_clusters: int | None = static_field(default=None)


MCNEMAR_METHODS = ("exact", "midp", "chi2")


@jax.jit
def _counts(y_true, pred_a, pred_b):
    n01, n10 = kstatistics.mcnemar_counts(pred_a == y_true, pred_b == y_true)
    return n01.astype(jnp.float64), n10.astype(jnp.float64)


def _mcnemar(n01, n10, method, correction):
    """Statistic and p-value from the discordant counts: numpy on the host for concrete
    counts (one compiled program, the counts', serves every method), traced under jit."""
    xp = jnp if _tails.traced(n01, n10) else np
    n01, n10 = xp.asarray(n01), xp.asarray(n10)  # numpy: no eager JAX op (each compiles)
    n = n01 + n10
    if method == "chi2":
        diff = xp.abs(n01 - n10)
        if correction:
            # Yates' correction, skipped when n01 == n10 (as R's mcnemar.test) so that
            # a tie gives statistic 0 rather than 1/n.
            diff = xp.where(diff >= 1, diff - 1, diff)
        stat = xp.where(n > 0, diff**2 / xp.where(n > 0, n, 1), 0.0)
        return stat, _tails.chi2_sf(stat, 1)
    stat = xp.minimum(n01, n10)
    cdf = _tails.binom_cdf(stat, n, 0.5)
    if method == "exact":
        # Bin(n, 1/2) puts at least half its mass at or below k >= (n - 1) / 2: p is 1
        # exactly there (2 cdf would give 0.9999999999999998 from rounding; issue 39.7)
        p = xp.where(2 * stat + 1 >= n, 1.0, 2 * cdf)
    else:
        # Mid-p: half the probability of the observed count (Fagerland et al. 2013).
        p = 2 * cdf - _tails.binom_pmf(stat, n, 0.5)
    return stat, xp.where(n > 0, xp.minimum(p, 1.0), 1.0)


def _labels_iv(x, name):
    arr = x if isinstance(x, jax.Array) else np.asarray(x)
    if np.dtype(arr.dtype).kind not in "biuf":
        raise TypeError(f"`{name}` must hold numeric or boolean labels, got dtype {arr.dtype}.")
    if arr.ndim < 1:
        raise ValueError(f"`{name}` must have at least 1 dimension, got a scalar.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty (shape {tuple(arr.shape)}).")
    check_finite(arr, name)
    if is_concrete(arr) and np.dtype(arr.dtype).kind == "f":
        a = np.asarray(arr)
        frac = a != np.round(a)
        if frac.any():
            idx = tuple(int(i) for i in np.argwhere(frac)[0])
            raise ValueError(
                f"`{name}` must hold class labels (integers or bools); found {a[idx].item()!r} at "
                f"index {idx[0] if len(idx) == 1 else idx}. Decision scores are not labels: "
                "threshold them first, e.g. `np.where(f > 0, 1, -1)`."
            )
    return arr


_LABEL_NAMES = ("y_true", "pred_a", "pred_b")


def _is_binary(arr):
    vals = np.unique(np.asarray(arr))
    return bool(np.all(np.isin(vals, (-1, 1))) or np.all(np.isin(vals, (0, 1))))


def _mcnemar_labels_iv(y_true, pred_a, pred_b):
    arrays = [_labels_iv(x, name) for x, name in zip((y_true, pred_a, pred_b), _LABEL_NAMES)]
    check_same_shape(arrays[0], arrays[1], "y_true", "pred_a")
    check_same_shape(arrays[0], arrays[2], "y_true", "pred_b")
    if all(is_concrete(x) for x in arrays) and all(_is_binary(x) for x in arrays):
        # Binary labels, each in {-1, +1} or {0, 1} (bools too): read 0 as -1, as every
        # classifier input (README), so y = ±1 with predictions in {0, 1} is consistent.
        return [as_label_array(x, name) for x, name in zip(arrays, _LABEL_NAMES)]
    dtype = np.result_type(*(x.dtype for x in arrays))
    return [jnp.asarray(x, dtype=dtype) for x in arrays]


@x64
def mcnemar(y_true, pred_a, pred_b, *, method=None, correction=None, cluster=None):
    """McNemar's test of equal error rates of two classifiers on one test set.

    Parameters
    ----------
    y_true, pred_a, pred_b : array_like, same shape ``(..., n)``
        True labels and the predicted labels of classifiers A and B; leading axes are
        batch axes. Binary labels may use {-1, +1}, {0, 1} or bools, each array its
        own: when all three are binary, 0 (False) is read as -1, as for every
        classifier input. Other integer class labels (multiclass) are compared as
        given. Non-integer values (decision scores) are refused; under ``jit`` the
        values cannot be inspected and the arrays are compared as given.
    method : {"exact", "midp", "chi2"} or None
        ``"exact"`` (None's choice without ``cluster``): two-sided binomial test of
        ``n01`` vs ``n10`` (statsmodels' ``mcnemar(exact=True)``); ``"midp"``: its
        mid-p version; ``"chi2"`` (the only one with ``cluster``): the chi-square
        approximation with 1 df.
    correction : bool or None
        Continuity correction for ``"chi2"`` (None: True, statsmodels' default, and
        False with ``cluster``, whose statistic has none).
    cluster : array_like, (n,), optional
        One cluster label per instance (integers or strings), shared by the batch:
        the clustered McNemar test of Durkalski et al. (2003) for instances that
        are dependent within a cluster (questions about one passage).

    Returns
    -------
    McNemarResult
        ``statistic`` (``min(n01, n10)`` for exact/midp as statsmodels, the chi-square
        statistic otherwise), ``pvalue``, ``n01``, ``n10``.

    Notes
    -----
    ``chi2 = (|n01 - n10| - 1)^2 / (n01 + n10)``; when ``n01 == n10`` the correction is
    not applied (statistic 0, as R's ``mcnemar.test``; statsmodels would report
    ``1/n``). With no discordant pairs every method gives statistic 0 and p = 1.

    Clustered: ``chi2 = (sum_g (b_g - c_g))^2 / sum_g (b_g - c_g)^2`` with ``b_g``
    and ``c_g`` the cluster's counts of ``n01`` and ``n10`` pairs, referred to
    chi-square with 1 df (Durkalski et al. 2003): the denominator estimates the
    variance of ``n01 - n10`` from the clusters, so within-cluster correlation
    widens it. With one instance per cluster it is the uncorrected ``chi2``
    above. ``n01`` and ``n10`` stay the totals.

    References
    ----------
    McNemar, Q. (1947). Psychometrika 12, 153-157. Dietterich (1998).
    Fagerland, Lydersen & Laake (2013), BMC Med. Res. Methodol. 13:91 (mid-p).
    Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R., & Rust, P. F. (2003). Analysis of
    clustered matched-pair data. Statistics in Medicine 22, 2417-2428.

    Examples
    --------
    >>> import jaxtests
    >>> y = [1, 1, 1, 1, -1, -1, -1, -1, 1, -1]
    >>> pred_a = [1, 1, 1, 1, -1, -1, -1, -1, 1, 1]
    >>> pred_b = [1, -1, -1, 1, -1, 1, -1, -1, -1, 1]
    >>> r = jaxtests.mcnemar(y, pred_a, pred_b)  # A alone right 4 times, B alone 0 times
    >>> int(r.n01), int(r.n10), round(float(r.pvalue), 4)
    (4, 0, 0.125)
    >>> passage = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    >>> rc = jaxtests.mcnemar(y, pred_a, pred_b, cluster=passage)  # b_g - c_g: 1, 1, 1, 0, 1
    >>> rc.method, float(rc.statistic), round(float(rc.pvalue), 4), rc.n_clusters
    ('chi2', 4.0, 0.0455, 5)
    """
    if method is None:
        method = "exact" if cluster is None else "chi2"
    check_choice(method, "method", MCNEMAR_METHODS)
    if correction is None:
        correction = cluster is None
    if not isinstance(correction, bool | np.bool_):
        raise TypeError(f"`correction` must be a bool, got {type(correction).__name__}.")
    y, pa, pb = _mcnemar_labels_iv(y_true, pred_a, pred_b)
    if cluster is not None:
        return _clustered(y, pa, pb, cluster, method, bool(correction))
    if all(is_concrete(x) for x in (y, pa, pb)):  # numpy on the host: nothing compiled
        y, pa, pb = (np.asarray(x) for x in (y, pa, pb))
        n01, n10 = (c.astype(np.float64) for c in kstatistics.mcnemar_counts(pa == y, pb == y, np))
    else:
        n01, n10 = _counts(y, pa, pb)
    stat, p = _mcnemar(n01, n10, method, bool(correction))
    return McNemarResult(
        statistic=stat, pvalue=p, n01=n01, n10=n10, method=method, correction=bool(correction)
    )


def _clustered(y, pa, pb, cluster, method, correction):
    """Durkalski et al.'s clustered McNemar on the host (numpy)."""
    if method != "chi2" or correction:
        raise ValueError(
            "with `cluster`, mcnemar is Durkalski et al.'s clustered chi-square: leave "
            "`method` and `correction` out (or pass method='chi2', correction=False); an "
            "exact clustered test is signflip_test(right_a - right_b, cluster=...)."
        )
    for arr, name in zip((y, pa, pb), _LABEL_NAMES):
        if not is_concrete(arr):
            raise TypeError(f"`{name}` is traced: `cluster` needs concrete arrays (no jit).")
    y, pa, pb = (np.asarray(x) for x in (y, pa, pb))
    right_a, right_b = pa == y, pb == y
    groups = _clusters.cluster_iv(cluster, y.shape[-1])
    # b_g - c_g: the cluster's pairs A alone got right minus those B alone got right
    s = groups.sums(right_a.astype(np.float64) - right_b.astype(np.float64))
    num, den = s.sum(axis=-1) ** 2, (s**2).sum(axis=-1)
    stat = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
    return McNemarResult(
        statistic=stat,
        pvalue=_tails.chi2_sf(stat, 1),
        n01=(right_a & ~right_b).sum(axis=-1).astype(np.float64),
        n10=(~right_a & right_b).sum(axis=-1).astype(np.float64),
        method=method,
        correction=False,
        n_clusters=groups.n_clusters,
    )
