"""Scatter of two measures per fold with fitted bivariate Gaussian contours."""

import math

import numpy as np

from jaxtests._plotting._common import _MAX_OVERLAY, _as_dict, _axes, _legend_outside, _panels


def _ellipse(mean, cov, level):
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0, None)
    t = np.linspace(0, 2 * np.pi, 120)
    circle = np.stack([np.cos(t), np.sin(t)])
    r = np.sqrt(level)  # Mahalanobis radius
    pts = vecs @ (np.sqrt(vals)[:, None] * circle) * r
    return mean[:, None] + pts


# Measures that are rates, in [0, 1]: contours are clipped to that range (issue 28.3).
_RATES = frozenset(
    {"tpr", "fpr", "tnr", "fnr", "precision", "recall", "specificity", "sensitivity",
     "accuracy", "error", "f1", "balanced_accuracy", "auc", "roc_auc"}
)  # fmt: skip
_LEVEL_STYLES = ("-", "--", ":", "-.")


def _level_label(lev):
    return f"Mahalanobis radius {math.sqrt(lev):.3g}"


def _scatter_one(ax, p, color, levels, label=None, limits=None):
    from matplotlib.patches import Rectangle

    ax.plot(p[:, 0], p[:, 1], "o", ms=4, color=color, label=label, zorder=3)
    if len(p) > 2:
        mean, cov = p.mean(0), np.cov(p, rowvar=False)
        for i, lev in enumerate(levels):
            e = _ellipse(mean, cov, lev)
            style = _LEVEL_STYLES[i % len(_LEVEL_STYLES)]
            (line,) = ax.plot(e[0], e[1], style, color=color, lw=1, alpha=0.8, gid="contour")
            if limits is not None:  # a rate's contour stops at 0 and 1
                (x0, x1), (y0, y1) = limits
                box = Rectangle((x0, y0), x1 - x0, y1 - y0, transform=ax.transData)
                line.set_clip_path(box)
        ax.plot(*mean, "+", color=color, ms=8, mew=1.5, zorder=3)


def _limits(labels, limits):
    """``((x0, x1), (y0, y1))`` or None: given, or [0, 1] on each axis whose measure is a
    rate (infinite otherwise)."""
    if limits is False:
        return None
    if limits is not None:
        arr = np.asarray(limits, dtype=float)
        if arr.shape != (2, 2) or not np.all(arr[:, 0] < arr[:, 1]):
            raise ValueError(
                f"`limits` must be ((x_min, x_max), (y_min, y_max)) with min < max, got {limits!r}."
            )
        return tuple(map(tuple, arr))
    rate = [str(lab).lower() in _RATES for lab in labels]
    if not any(rate):
        return None
    return tuple((0.0, 1.0) if r else (-np.inf, np.inf) for r in rate)


def _clamp_view(ax, limits):
    """Keep the view within ``limits`` (plus a small margin): a rate's axis ends near 0
    and 1, not where an unclipped ellipse would."""
    if limits is None:
        return
    for (lo, hi), get, set_ in ((limits[0], ax.get_xlim, ax.set_xlim),
                                (limits[1], ax.get_ylim, ax.set_ylim)):  # fmt: skip
        if not (np.isfinite(lo) and np.isfinite(hi)):
            continue
        a, b = get()
        pad = 0.02 * (hi - lo)
        set_(max(a, lo - pad), min(b, hi + pad))


def _level_handles(levels):
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], ls=_LEVEL_STYLES[i % len(_LEVEL_STYLES)], color="0.3", lw=1,
               label=_level_label(lev))
        for i, lev in enumerate(levels)
    ]  # fmt: skip


def scatter_gaussian(
    points, *, labels=("fpr", "tpr"), ax=None, title=None, levels=(1.0, 4.0), limits=None
):
    """Scatter of two measures per fold with fitted bivariate Gaussian contours.

    Yildiz & Alpaydin, "Multivariate Comparison of Classification Algorithms", Figs.
    1b-4b: per-fold (tpr, fpr) or (precision, recall) points of each algorithm and the
    ellipses of constant Mahalanobis distance of the Gaussian fitted to them (radius 1
    and 2 by default; + marks the mean). Up to three algorithms share one axes; more
    get one panel each (shared axes, the other algorithms' points in grey behind).

    Parameters
    ----------
    points : dict of str -> array_like, shape (n_folds, 2)
    labels : (str, str)
        Names of the two columns (x, y).
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    levels : sequence of float
        Squared Mahalanobis radii of the contours, one line style each, named in the
        legend ("Mahalanobis radius 1", "... 2").
    limits : ((x_min, x_max), (y_min, y_max)), False or None
        Where the contours stop; ``None``: [0, 1] for a measure that is a rate (tpr,
        fpr, precision, recall, accuracy, error...) when every point lies in it,
        unbounded otherwise; ``False``: no clipping.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from jaxtests import plot
    >>> rng = np.random.default_rng(0)
    >>> points = {
    ...     "lda": rng.normal([0.2, 0.8], 0.03, size=(10, 2)),
    ...     "knn": rng.normal([0.3, 0.7], 0.03, size=(10, 2)),
    ... }
    >>> fig = plot.scatter_gaussian(points)
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()
    ('fpr', 'tpr')
    >>> plt.close(fig)
    """
    points = _as_dict(points, "points")
    for name, p in points.items():
        if p.ndim != 2 or p.shape[1] != 2:
            raise ValueError(f"`points[{name!r}]` must have shape (n_folds, 2), got {p.shape}.")
    title = title or f"({labels[0]}, {labels[1]}) per fold with Gaussian contours"
    auto = limits is None
    limits = _limits(labels, limits)
    if auto and limits is not None:  # rates by name, but not by value: no clipping
        everything = np.concatenate(list(points.values()))
        (x0, x1), (y0, y1) = limits
        inside = (everything[:, 0] >= x0) & (everything[:, 0] <= x1)
        inside &= (everything[:, 1] >= y0) & (everything[:, 1] <= y1)
        if not inside.all():
            limits = None
    if len(points) <= _MAX_OVERLAY:
        fig, ax = _axes(ax, figsize=(6.5, 4.5))
        for i, (name, p) in enumerate(points.items()):
            _scatter_one(ax, p, f"C{i}", levels, label=name, limits=limits)
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        ax.set_title(title)
        _clamp_view(ax, limits)
        handles, _ = ax.get_legend_handles_labels()
        _legend_outside(ax, handles=handles + _level_handles(levels), fontsize="small")
        return fig
    fig, container, axes = _panels(ax, len(points), 3, (2.6, 2.3), sharex=True, sharey=True)
    everything = np.concatenate(list(points.values()))
    for i, (name, p) in enumerate(points.items()):
        a = axes[i]
        a.plot(everything[:, 0], everything[:, 1], "o", ms=3, color="0.85", zorder=1)
        _scatter_one(a, p, f"C{i % 10}", levels, limits=limits)
        _clamp_view(a, limits)
        a.set_title(name, fontsize="small")
        a.tick_params(labelsize="x-small")
    container.supxlabel(labels[0])
    container.supylabel(labels[1])
    radii = ", ".join(
        f"{_LEVEL_STYLES[i % len(_LEVEL_STYLES)]} {math.sqrt(lev):.3g}"
        for i, lev in enumerate(levels)
    )
    container.suptitle(
        f"{title}\n(grey: the other algorithms' folds; contours: Mahalanobis radius {radii})",
        fontsize="medium",
    )
    return fig
