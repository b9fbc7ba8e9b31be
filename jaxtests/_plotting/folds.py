"""Per-fold histograms of a measure, of two algorithms' paired differences, and of a
projection on a learned measure."""

import math

import numpy as np

from jaxtests._plotting._common import (
    _MAX_OVERLAY,
    _as_dict,
    _axes,
    _bins,
    _integer_counts,
    _legend_outside,
    _panels,
)


def fold_histograms(values, *, measure="error", bins=None, ax=None, title=None):
    """Per-fold histograms of one measure for two or more algorithms.

    Yildiz & Alpaydin, "Statistical Tests using Hinge/epsilon-Sensitive Loss", Figs. 4
    and 5, and "Multivariate Comparison of Classification Algorithms", Fig. 1a: histograms
    that overlap explain why a test does not reject. Up to three algorithms share one
    axes (bars side by side in each bin); more get one panel each, stacked on a shared
    x axis with the mean marked, so no algorithm hides another.

    Parameters
    ----------
    values : dict of str -> array_like, shape (n_folds,)
        Per-fold values of the measure for each algorithm.
    measure : str
        Label of the x axis.
    bins : int or sequence, optional
        Histogram bins shared by all algorithms (default: 10 over the pooled range).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; with more than three algorithms its place in the grid holds the
        panels.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import plot
    >>> fig = plot.fold_histograms(
    ...     {"lda": [0.21, 0.25, 0.23, 0.22, 0.26], "knn": [0.27, 0.30, 0.26, 0.29, 0.31]}
    ... )
    >>> fig.axes[0].get_ylabel()
    'folds'
    >>> plt.close(fig)
    """
    values = _as_dict(values, "values")
    pooled = np.concatenate([v.ravel() for v in values.values()])
    if bins is None:
        bins = _bins(pooled)
    elif np.ndim(bins) == 0:
        bins = _bins(pooled, int(bins))
    bins = np.asarray(bins, dtype=float)
    title = title or f"Per-fold {measure}"
    if len(values) <= _MAX_OVERLAY:
        fig, ax = _axes(ax, figsize=(7.0, 3.8))
        width = np.diff(bins)
        k = len(values)
        for i, (name, v) in enumerate(values.items()):
            counts, _ = np.histogram(v.ravel(), bins=bins)
            ax.bar(
                bins[:-1] + width * i / k,
                counts,
                width=width / k,
                align="edge",
                color=f"C{i}",
                edgecolor="white",
                linewidth=0.5,
                label=f"{name} (mean {v.mean():.4g})",
            )
        ax.set_xlim(bins[0], bins[-1])
        ax.set_xlabel(measure)
        ax.set_ylabel("folds")
        _integer_counts(ax.yaxis)
        ax.set_title(title)
        _legend_outside(ax, fontsize="small")
        return fig
    fig, container, axes = _panels(
        ax, len(values), 1, (5.5, 0.62), sharex=True, sharey=True, gridspec_kw={"hspace": 0}
    )
    top = 1
    for i, (name, v) in enumerate(values.items()):
        a = axes[i]
        counts, _, _ = a.hist(
            v.ravel(), bins=bins, color=f"C{i % 10}", edgecolor="white", linewidth=0.5
        )
        top = max(top, int(counts.max()))
        a.axvline(v.mean(), color="k", lw=1.2)
        a.set_ylabel(
            f"{name}\nmean {v.mean():.4g}", rotation=0, ha="right", va="center", fontsize="small"
        )
        a.tick_params(axis="y", labelsize="x-small")
    # Short panels: two integer ticks, 0 and the largest count, keep the labels apart.
    for a in axes:
        a.set_yticks([0, top])
        a.set_ylim(0, 1.3 * top)
    axes[-1].set_xlabel(measure)
    container.suptitle(f"{title}\n(folds per bin; black line: mean)", fontsize="medium")
    return fig


def _centred_bins(d, n_bins):
    """About ``n_bins`` equal bins over the differences and 0, one of them centred on 0 (a
    fold with no difference sits on the zero line, not beside it)."""
    lo, hi = min(float(d.min()), 0.0), max(float(d.max()), 0.0)
    width = (hi - lo) / n_bins if hi > lo else 1e-3
    first, last = math.floor(lo / width + 0.5), math.floor(hi / width + 0.5)
    return (np.arange(first, last + 2) - 0.5) * width


def fold_differences(
    values, *, measure="error", bins=None, ax=None, title=None, confidence_level=0.95
):
    """Histogram of the per-fold differences ``a - b`` of two algorithms: what a paired
    test tests.

    The paired t test (and the sign-flip test on folds) sees only the differences on each
    fold: two histograms of the algorithms' values that overlap can still differ on every
    fold (Yildiz & Alpaydin, hinge loss, Figs. 4 and 5, drawn paired). Marks 0 (no
    difference) and the mean difference with its t interval, the interval of
    :meth:`TtestResult.confidence_interval` (scipy's ``ttest_rel``).

    Parameters
    ----------
    values : dict of str -> array_like, shape (n_folds,)
        The two algorithms' per-fold values, ``{a: ..., b: ...}``, on the same folds.
    measure : str
        Name of the measure (the x axis reads ``measure: a - b``).
    bins : int or sequence, optional
        Histogram bins (default: about 10 over the range of the differences and 0, one
        centred on 0).
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    confidence_level : float
        Of the mean difference's t interval.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import plot
    >>> fig = plot.fold_differences(
    ...     {"lda": [0.21, 0.25, 0.23, 0.22, 0.26], "knn": [0.27, 0.30, 0.26, 0.29, 0.31]}
    ... )
    >>> fig.axes[0].get_xlabel()
    'error: lda - knn (per fold)'
    >>> plt.close(fig)
    """
    from jaxtests._t_intervals import _t_interval
    from jaxtests._validation import check_probability

    values = _as_dict(values, "values")
    if len(values) != 2:
        raise ValueError(f"`values` must hold two algorithms, got {len(values)}.")
    (a, xa), (b, xb) = values.items()
    if xa.ndim != 1 or xa.shape != xb.shape or xa.size < 2:
        raise ValueError(
            f"`values` must hold two 1-d arrays of the same folds (at least 2), got shapes "
            f"{xa.shape} and {xb.shape}."
        )
    level = check_probability(confidence_level, "confidence_level")
    d = xa - xb
    k = d.size
    mean = float(d.mean())
    se = float(d.std(ddof=1)) / np.sqrt(k)
    low, high = (float(v) for v in _t_interval(mean, se, k - 1, "two-sided", level))
    if bins is None or np.ndim(bins) == 0:
        bins = _centred_bins(d, 10 if bins is None else int(bins))
    bins = np.asarray(bins, dtype=float)
    from matplotlib.ticker import MaxNLocator

    fig, ax = _axes(ax, figsize=(7.0, 3.8))
    ax.hist(d, bins=bins, color="C0", edgecolor="white", linewidth=0.5, zorder=2)
    # the mean and its bounds to the interval's precision: 3 digits of its half-width
    half = (high - low) / 2
    dec = max(0, 2 - math.floor(math.log10(half))) if np.isfinite(half) and half > 0 else 4
    shown = round(mean, dec) + 0.0  # a mean that rounds to 0 prints 0, not -0
    if np.isfinite(low) and np.isfinite(high):
        ax.axvspan(low, high, color="C3", alpha=0.15, lw=0, zorder=0, gid="interval",
                   label=f"{level:.0%} t interval [{low:.{dec}f}, {high:.{dec}f}]")  # fmt: skip
    ax.axvline(mean, color="C3", lw=2, zorder=3, gid="mean",
               label=f"mean difference {shown:.{dec}f}")  # fmt: skip
    ax.axvline(0.0, color="k", lw=1, ls="--", zorder=3, gid="zero", label="0: no difference")
    lo = min(bins[0], low) if np.isfinite(low) else bins[0]
    hi = max(bins[-1], high) if np.isfinite(high) else bins[-1]
    pad = 0.03 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
    ax.set_xlabel(f"{measure}: {a} - {b} (per fold)")
    ax.set_ylabel("folds")
    _integer_counts(ax.yaxis)
    ax.set_title(title or f"Per-fold differences of {measure} ({k} folds)")
    _legend_outside(ax, fontsize="small")
    return fig


def projection(x, direction, names, *, measure_names=None, ax=None, title=None, label="M1"):
    """Histograms of per-fold results projected on a learned measure.

    Yildiz & Alpaydin, "Multivariate Comparison of Classification Algorithms", Fig. 5c:
    the MANOVA's first eigenvector of ``E^-1 H`` as a new performance measure.

    Parameters
    ----------
    x : array_like, shape (n_algorithms, n_folds, p)
        Per-fold measure vectors of each algorithm.
    direction : array_like, shape (p,), or ManovaResult
        An eigenvector of ``E^-1 H``, or a MANOVA result (its eigenvector number
        ``label``'s digits, ``M1`` the first, and its measure names are used).
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

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from jaxtests import plot
    >>> x = np.random.default_rng(0).uniform(size=(2, 10, 2))  # 2 algorithms, 10 folds
    >>> fig = plot.projection(x, [0.6, 0.8], ["lda", "knn"], measure_names=["tpr", "fpr"])
    >>> fig.axes[0].get_xlabel()
    'M1 = +0.600·tpr +0.800·fpr'
    >>> plt.close(fig)
    """
    if hasattr(direction, "eigenvectors"):  # a ManovaResult
        k = int("".join(c for c in label if c.isdigit()) or 1) - 1
        if measure_names is None and getattr(direction, "names", None) is not None:
            measure_names = direction.names
        direction = np.asarray(direction.eigenvectors)[:, k]  # columns are eigenvectors
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
    return fold_histograms(
        dict(zip(names, proj)),
        measure=formula,
        ax=ax,
        title=title or f"Projection on the learned measure {label}",
    )
