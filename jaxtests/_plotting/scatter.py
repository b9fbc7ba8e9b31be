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


# Measures that are rates, in [0, 1]: the region outside is shaded, and a contour that runs
# past it is drawn whole, the view widened to show it (issue 39.7; it was clipped at the
# bound, issue 28.3, which hid where the fitted Gaussian puts its mass).
_RATES = frozenset(
    {"tpr", "fpr", "tnr", "fnr", "precision", "recall", "specificity", "sensitivity",
     "accuracy", "error", "f1", "balanced_accuracy", "auc", "roc_auc"}
)  # fmt: skip
_LEVEL_STYLES = ("-", "--", ":", "-.")


def _level_label(lev):
    return f"Mahalanobis radius {math.sqrt(lev):.3g}"


def _scatter_one(ax, p, color, levels, label=None):
    ax.plot(p[:, 0], p[:, 1], "o", ms=4, color=color, label=label, zorder=3)
    if len(p) > 2:
        mean, cov = p.mean(0), np.cov(p, rowvar=False)
        for i, lev in enumerate(levels):
            e = _ellipse(mean, cov, lev)
            style = _LEVEL_STYLES[i % len(_LEVEL_STYLES)]
            ax.plot(e[0], e[1], style, color=color, lw=1, alpha=0.8, gid="contour")
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


_OUTSIDE = {"color": "0.88", "zorder": 0, "lw": 0, "gid": "outside"}


def _shade_outside(ax, limits):
    """Shade what lies outside ``limits`` in the view (a rate below 0 or above 1), with a
    thin line at each bound: the contours are drawn whole, so a reader sees how much of
    the fitted Gaussian falls where no rate can be. Returns whether anything was shaded."""
    if limits is None:
        return False
    ax.autoscale_view()
    views = (ax.get_xlim(), ax.get_ylim())
    shaded = False
    for axis, ((lo, hi), (v0, v1)) in enumerate(zip(limits, views)):
        span, line = (ax.axvspan, ax.axvline) if axis == 0 else (ax.axhspan, ax.axhline)
        for bound, inside in ((lo, v0 < lo), (hi, v1 > hi)):
            if not (np.isfinite(bound) and inside):
                continue
            span(*((v0, bound) if bound == lo else (bound, v1)), **_OUTSIDE)
            line(bound, color="0.5", lw=0.6, zorder=1)
            shaded = True
    ax.set_xlim(views[0])
    ax.set_ylim(views[1])
    return shaded


def _outside_handle(limits):
    from matplotlib.patches import Patch

    bounds = " or ".join(
        dict.fromkeys(f"[{lo:g}, {hi:g}]" for lo, hi in limits if np.isfinite(lo + hi))
    )
    return Patch(facecolor=_OUTSIDE["color"], label=f"outside {bounds}: impossible")


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
        The possible values: what lies outside them in the view is shaded grey (the
        contours are drawn whole, the view widened to hold them, so the part of the
        fitted Gaussian beyond a bound shows). ``None``: [0, 1] for a measure that is a
        rate (tpr, fpr, precision, recall, accuracy, error...) when every point lies in
        it, unbounded otherwise; ``False``: no shading.

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
            _scatter_one(ax, p, f"C{i}", levels, label=name)
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        ax.set_title(title)
        handles, _ = ax.get_legend_handles_labels()
        handles += _level_handles(levels)
        if _shade_outside(ax, limits):
            handles.append(_outside_handle(limits))
        _legend_outside(ax, handles=handles, fontsize="small")
        return fig
    fig, container, axes = _panels(ax, len(points), 3, (2.6, 2.3), sharex=True, sharey=True)
    everything = np.concatenate(list(points.values()))
    for i, (name, p) in enumerate(points.items()):
        a = axes[i]
        a.plot(everything[:, 0], everything[:, 1], "o", ms=3, color="0.85", zorder=1)
        _scatter_one(a, p, f"C{i % 10}", levels)
        a.set_title(name, fontsize="small")
        a.tick_params(labelsize="x-small")
    # shared axes: the view holds every panel's contours once all are drawn
    shaded = [_shade_outside(a, limits) for a in axes]
    container.supxlabel(labels[0])
    container.supylabel(labels[1])
    radii = ", ".join(
        f"{_LEVEL_STYLES[i % len(_LEVEL_STYLES)]} {math.sqrt(lev):.3g}"
        for i, lev in enumerate(levels)
    )
    outside = f"; shaded: {_outside_handle(limits).get_label()}" if any(shaded) else ""
    container.suptitle(
        f"{title}\n(grey points: the other algorithms' folds; contours: Mahalanobis radius "
        f"{radii}{outside})",
        fontsize="medium",
    )
    return fig
