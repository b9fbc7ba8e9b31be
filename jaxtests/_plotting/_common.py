"""Axes, small-multiple panels, legends and input checks shared by the figures."""

import math

import numpy as np

# Overlays stay readable up to this many algorithms; more get one panel each.
_MAX_OVERLAY = 3


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("jaxtests.plot needs matplotlib: pip install matplotlib") from None
    return plt


def _axes(ax, figsize=(6.0, 4.0)):
    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax


def _panels(ax, n, ncols, panel_size, **subplots_kw):
    """A grid of ``n`` panels: a new figure, or a subfigure in place of ``ax``.

    Returns ``(figure, container, axes)``; ``container`` (figure or subfigure) takes
    the suptitle and shared axis labels, ``axes`` is a flat list of ``n`` axes.
    """
    plt = _plt()
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    if ax is None:
        w, h = panel_size
        fig = plt.figure(figsize=(1.2 + w * ncols, 1.0 + h * nrows), layout="constrained")
        container = fig
    else:
        fig = ax.figure
        spec = ax.get_subplotspec()
        if spec is None:
            raise ValueError("`ax` must be a subplot (from plt.subplots) to hold small multiples.")
        ax.remove()
        container = fig.add_subfigure(spec)
    grid = container.subplots(nrows, ncols, squeeze=False, **subplots_kw)
    axes = list(grid.ravel())
    for extra in axes[n:]:  # unused cells: keep the x tick labels of the panel above
        extra.set_visible(False)
        above = grid.ravel()[axes.index(extra) - ncols]
        above.xaxis.set_tick_params(labelbottom=True)
    return fig, container, axes[:n]


def _integer_counts(axis):
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=2, nbins="auto"))


def _legend_outside(ax, **kw):
    """Legend to the right of the axes, never over the data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kw)


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


def _bins(pooled, n_bins=10):
    lo, hi = pooled.min(), pooled.max()
    pad = 0.05 * (hi - lo) if hi > lo else 0.5 * max(abs(lo), 1e-3)
    return np.linspace(lo - pad, hi + pad, n_bins + 1)
