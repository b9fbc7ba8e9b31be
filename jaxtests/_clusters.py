"""Cluster labels of instances, and what the clustered tests compute from them.

Instances that share a cluster (several questions about one passage, several
snippets of one repository) are not independent: the clustered tests treat a
cluster as the unit that is resampled or flipped, and their standard errors
come from the clusters' sums (Liang & Zeger 1986; Cameron & Miller 2015).
Everything here runs in numpy on the host: a cluster's sums are one
``np.add.reduceat`` and compile nothing.
"""

import dataclasses
import functools

import numpy as np

__all__ = ["Clusters", "cluster_iv", "robust_se"]

CLUSTER_SE = ("CR1", "CR2")


@dataclasses.dataclass(frozen=True)
class Clusters:
    """Instances grouped by cluster: ``codes`` numbers each instance's cluster
    ``0 .. G - 1`` in the labels' sorted order, ``sizes`` counts each cluster."""

    codes: np.ndarray
    sizes: np.ndarray

    @property
    def n_clusters(self):
        return len(self.sizes)

    @functools.cached_property
    def _order(self):
        # the instances sorted by cluster, and where each cluster starts (batched sums)
        order = np.argsort(self.codes, kind="stable")
        return order, np.concatenate([[0], np.cumsum(self.sizes)[:-1]])

    def sums(self, x):
        """Each cluster's sum of ``x : (..., m)`` over its instances, ``(..., G)``."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            return np.bincount(self.codes, weights=x, minlength=self.n_clusters)
        order, starts = self._order
        return np.add.reduceat(x[..., order], starts, axis=-1)


def _codes(labels):
    """Cluster numbers in the labels' sorted order: a count for small non-negative
    integers (linear time: 10^6 labels in milliseconds), ``np.unique`` otherwise."""
    if labels.dtype.kind in "iub" and labels.size:
        low, high = labels.min(), labels.max()
        if low >= 0 and high <= 4 * labels.size + 1024:
            present = np.bincount(labels.astype(np.intp)) > 0
            rank = np.cumsum(present) - 1
            return rank[labels.astype(np.intp)]
    return np.unique(labels, return_inverse=True)[1].reshape(-1)


def cluster_iv(cluster, m, name="cluster"):
    """Validate one cluster label per instance; returns :class:`Clusters`.

    Labels may be integers, strings or bools (any values numpy can sort); a
    float label must be a whole number, and NaN is refused (its cluster would
    be ambiguous). At least two clusters are needed.
    """
    try:
        labels = np.asarray(cluster)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` must be a 1-d array of labels: {exc}") from None
    if labels.ndim != 1:
        raise ValueError(
            f"`{name}` must be 1-dimensional (one label per instance), got shape {labels.shape}."
        )
    if len(labels) != m:
        raise ValueError(f"`{name}` has {len(labels)} labels for {m} instances.")
    kind = labels.dtype.kind
    if kind == "c" or kind == "V":
        raise TypeError(f"`{name}` labels must be integers or strings, got dtype {labels.dtype}.")
    if kind == "f":
        if not np.isfinite(labels).all():
            raise ValueError(f"`{name}` holds NaN or infinite labels.")
        if (labels != np.round(labels)).any():
            raise ValueError(
                f"`{name}` holds non-integer float labels (cluster ids are whole numbers or "
                "strings): did you pass scores instead of labels?"
            )
    if kind == "O":
        if any(x is None or (isinstance(x, float) and x != x) for x in labels):
            raise ValueError(f"`{name}` holds missing labels (None or NaN).")
        try:
            labels = labels.astype(str)
        except Exception as exc:
            raise TypeError(f"`{name}` labels cannot be compared: {exc}") from None
    codes = _codes(labels)
    sizes = np.bincount(codes)
    if len(sizes) < 2:
        raise ValueError(f"`{name}` puts every instance in one cluster: at least 2 are needed.")
    return Clusters(codes=codes, sizes=sizes)


def robust_se(d, clusters, kind):
    """Cluster-robust standard error of ``mean(d)`` over ``d : (..., m)``, and its df.

    ``"CR1"``: ``V = G / (G - 1) sum_g E_g^2 / m^2`` with ``E_g`` the cluster's
    sum of residuals ``d_i - mean(d)``; statsmodels' ``cov_type="cluster"`` of
    an intercept-only OLS (its factor ``(m - 1) / (m - k)`` is 1 for ``k = 1``),
    with ``G - 1`` degrees of freedom. ``"CR2"``: the bias-reduced linearization
    of Bell & McCaffrey (2002), ``V = sum_g E_g^2 / (1 - n_g / m) / m^2`` (the
    adjustment ``(I - H_gg)^(-1/2)`` acts on ``1_g`` as ``(1 - n_g/m)^(-1/2)``
    because ``H = 11' / m``), with their Satterthwaite degrees of freedom
    under the working model of independent equal variances (clubSandwich's
    ``coef_test(..., vcov="CR2", test="Satterthwaite")`` for ``lm``):
    ``df = tr(Q)^2 / ||Q||_F^2`` with ``Q = C (diag(n) - n n' / m) C``,
    ``C = diag(1 / (m sqrt(1 - n_g / m)))``; ``G - 1`` when the sizes are equal.

    Returns ``(mean, se, df)``; ``mean`` and ``se`` have the batch shape.
    """
    d = np.asarray(d, dtype=np.float64)
    m = d.shape[-1]
    g = clusters.n_clusters
    mean = d.mean(axis=-1)
    resid = clusters.sums(d - mean[..., None])
    n = clusters.sizes.astype(np.float64)
    if kind == "CR1":
        var = g / (g - 1) * (resid**2).sum(axis=-1) / m**2
        return mean, np.sqrt(var), g - 1
    leverage = 1 - n / m  # 1 - h_gg, positive: there are at least two clusters
    var = (resid**2 / leverage).sum(axis=-1) / m**2
    # tr(Q) and ||Q||_F^2 in closed form: Q itself is G x G (10^4 clusters: 800 MB).
    c2 = 1 / (m**2 * leverage)
    trace = (c2 * n * leverage).sum()
    frob = (c2**2 * n**2).sum() - 2 * (c2**2 * n**3).sum() / m + (c2 * n**2).sum() ** 2 / m**2
    return mean, np.sqrt(var), float(trace**2 / frob)
