"""Figures from the seeds: fold histograms, (tpr, fpr) scatter with Gaussian contours,
permutation null distributions, algorithm orderings, projections on learned measures.

Needs matplotlib (``pip install jaxtests[plot]``). Every function draws on ``ax``
when given, else on a new figure, and returns the figure; nothing is shown or
saved here (the CLI saves PNGs).
"""

import numpy as np

__all__ = [
    "fold_histograms",
    "null_distribution",
    "ordering",
    "projection",
    "scatter_gaussian",
]


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("jaxtests.plot needs matplotlib: pip install 'jaxtests[plot]'") from None
    return plt


def _axes(ax, figsize=(6.0, 4.0)):
    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax


def _as_dict(values, name):
    if not isinstance(values, dict) or len(values) < 1:
        raise TypeError(f"`{name}` must be a non-empty dict of algorithm name -> values.")
    out = {}
    for k, v in values.items():
        a = np.asarray(v, dtype=float)
        if not np.isfinite(a).all():
            raise ValueError(f"`{name}[{k!r}]` contains NaN or inf.")
        out[str(k)] = a
    return out


def fold_histograms(values, *, measure="error", bins=None, ax=None, title=None):
    """Per-fold histograms of one measure for two or more algorithms.

    Seed 000 Figs. 4 and 5, seed 004 Fig. 1a: overlapping histograms explain
    why a test does not reject.

    Parameters
    ----------
    values : dict of str -> array_like, shape (n_folds,)
        Per-fold values of the measure for each algorithm.
    measure : str
        Label of the x axis.
    bins : int or sequence, optional
        Histogram bins shared by all algorithms (default: 10 over the pooled range).
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    values = _as_dict(values, "values")
    fig, ax = _axes(ax)
    pooled = np.concatenate([v.ravel() for v in values.values()])
    if bins is None:
        lo, hi = pooled.min(), pooled.max()
        pad = 0.05 * (hi - lo) if hi > lo else 0.5 * max(abs(lo), 1e-3)
        bins = np.linspace(lo - pad, hi + pad, 11)
    # Filled bars stay readable for two algorithms; more need outlines.
    style = {"alpha": 0.5} if len(values) <= 2 else {"histtype": "step", "linewidth": 1.8}
    for name, v in values.items():
        ax.hist(v.ravel(), bins=bins, label=f"{name} (mean {v.mean():.4g})", **style)
    ax.set_xlabel(measure)
    ax.set_ylabel("folds")
    ax.set_title(title or f"Per-fold {measure}")
    ax.legend(fontsize="small")
    return fig


def _ellipse(mean, cov, level):
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0, None)
    t = np.linspace(0, 2 * np.pi, 120)
    circle = np.stack([np.cos(t), np.sin(t)])
    r = np.sqrt(level)  # Mahalanobis radius
    pts = vecs @ (np.sqrt(vals)[:, None] * circle) * r
    return mean[:, None] + pts


def scatter_gaussian(points, *, labels=("fpr", "tpr"), ax=None, title=None, levels=(1.0, 4.0)):
    """Scatter of two measures per fold with fitted bivariate Gaussian contours.

    Seed 004 Figs. 1b-4b: per-fold (tpr, fpr) or (precision, recall) points of
    each algorithm and the ellipses of constant Mahalanobis distance of the
    Gaussian fitted to them (radius 1 and 2 by default).

    Parameters
    ----------
    points : dict of str -> array_like, shape (n_folds, 2)
    labels : (str, str)
        Names of the two columns (x, y).
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    levels : sequence of float
        Squared Mahalanobis radii of the contours.

    Returns
    -------
    matplotlib.figure.Figure
    """
    points = _as_dict(points, "points")
    fig, ax = _axes(ax, figsize=(5.5, 5.0))
    for name, p in points.items():
        if p.ndim != 2 or p.shape[1] != 2:
            raise ValueError(f"`points[{name!r}]` must have shape (n_folds, 2), got {p.shape}.")
        (line,) = ax.plot(p[:, 0], p[:, 1], "o", ms=4, label=name)
        if len(p) > 2:
            mean, cov = p.mean(0), np.cov(p, rowvar=False)
            for lev in levels:
                e = _ellipse(mean, cov, lev)
                ax.plot(e[0], e[1], "-", color=line.get_color(), lw=1, alpha=0.7)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(title or f"({labels[0]}, {labels[1]}) per fold with Gaussian contours")
    ax.legend(fontsize="small")
    return fig


def null_distribution(null, observed, pvalue=None, *, ax=None, title=None, statistic="statistic"):
    """Histogram of a permutation null distribution with the observed statistic marked.

    Parameters
    ----------
    null : array_like, shape (n_resamples,)
        Resampled statistics (``return_null=True`` results carry them).
    observed : float
        The observed statistic.
    pvalue : float, optional
        Shown in the legend.
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    statistic : str
        Label of the x axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    null = np.asarray(null, dtype=float).ravel()
    if null.size == 0 or not np.isfinite(null).all():
        raise ValueError("`null` must be a non-empty array of finite values.")
    fig, ax = _axes(ax)
    ax.hist(null, bins=min(100, max(10, int(np.sqrt(null.size)))), color="0.6", density=True)
    label = f"observed = {float(observed):.4g}"
    if pvalue is not None:
        label += f", p = {float(pvalue):.3g}"
    ax.axvline(float(observed), color="C3", lw=2, label=label)
    ax.set_xlabel(statistic)
    ax.set_ylabel("density")
    ax.set_title(title or f"Permutation null distribution ({null.size} resamples)")
    ax.legend(fontsize="small")
    return fig


def ordering(means, groups, *, measure="error", ax=None, title=None):
    """Algorithms on a line by mean, non-significantly different groups joined.

    The critical-difference style display of seed 004 ("rf lda qda knn c4.5"
    with underlines): each bar joins algorithms that no post hoc test separates.

    Parameters
    ----------
    means : dict of str -> float
        Mean of the measure per algorithm.
    groups : sequence of sequence of str
        Sets of algorithms not significantly different (e.g. a post hoc
        result's cliques); singletons are not drawn.
    measure : str
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    means = {str(k): float(v) for k, v in means.items()}
    names = sorted(means, key=means.get)
    fig, ax = _axes(ax, figsize=(7.0, 2.0 + 0.3 * len(groups)))
    xs = np.array([means[n] for n in names])
    ax.plot(xs, np.zeros_like(xs), "o", color="k")
    for i, n in enumerate(names):
        ax.annotate(
            n,
            (xs[i], 0),
            textcoords="offset points",
            xytext=(0, 8 + 10 * (i % 2)),
            ha="center",
            fontsize="small",
        )
    level = 0
    for g in groups:
        g = [str(n) for n in g]
        unknown = [n for n in g if n not in means]
        if unknown:
            raise ValueError(f"`groups` names unknown algorithm(s) {unknown}.")
        if len(g) < 2:
            continue
        level += 1
        vals = [means[n] for n in g]
        ax.plot([min(vals), max(vals)], [-0.15 * level] * 2, "-", lw=3, color="C0")
    ax.set_ylim(-0.15 * (level + 1), 0.6)
    ax.set_yticks([])
    ax.set_xlabel(f"mean {measure}")
    ax.set_title(title or f"Ordering by mean {measure} (bars: not significantly different)")
    return fig


def projection(x, direction, names, *, measure_names=None, ax=None, title=None, label="M1"):
    """Histogram of per-fold results projected on a learned measure (seed 004 Fig. 5c).

    Parameters
    ----------
    x : array_like, shape (n_algorithms, n_folds, p)
        Per-fold measure vectors of each algorithm.
    direction : array_like, shape (p,)
        An eigenvector of ``E^-1 H`` (a MANOVA result's learned measure).
    names : sequence of str
        Algorithm names.
    measure_names : sequence of str, optional
        Names of the p input measures, shown as the formula of the projection.
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    label : str
        Name of the learned measure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    x = np.asarray(x, dtype=float)
    w = np.asarray(direction, dtype=float).ravel()
    if x.ndim != 3 or x.shape[-1] != w.size:
        raise ValueError(f"`x` must have shape (n_algorithms, n_folds, {w.size}), got {x.shape}.")
    if len(names) != x.shape[0]:
        raise ValueError(f"`names` has {len(names)} entries for {x.shape[0]} algorithms.")
    proj = x @ w
    formula = label
    if measure_names is not None:
        formula += " = " + " ".join(f"{c:+.3f}·{m}" for c, m in zip(w, measure_names))
    fig = fold_histograms(
        dict(zip(names, proj)),
        measure=formula,
        ax=ax,
        title=title or f"Projection on the learned measure {label}",
    )
    return fig
