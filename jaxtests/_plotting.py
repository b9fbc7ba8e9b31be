"""All of jaxtests' figures (matplotlib, imported when a figure is drawn).

The figures of the seeds (re-exported by :mod:`jaxtests.plot`) and those of the
studies (re-exported by :mod:`jaxtests.study`). Every function draws on ``ax`` when
given, else on a new figure, and returns the figure; nothing is shown or saved here.
"""

import math

import numpy as np

from jaxtests._direction import direction_words
from jaxtests._studies.agreement import AgreementResult
from jaxtests._studies.calibration import CalibrationResult
from jaxtests._studies.power import PowerResult

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


def _null_iv(null, observed, pvalue):
    """Arrays from a result object (``null_distribution`` or ``permutation_scores``)."""
    if hasattr(null, "null_distribution") or hasattr(null, "permutation_scores"):
        res = null
        if observed is not None:
            raise TypeError("`observed` comes from the result; pass the result alone.")
        null = getattr(res, "null_distribution", None)
        if null is None:
            null = getattr(res, "permutation_scores", None)
        if null is None:
            raise ValueError(
                "the result carries no null distribution: run the test with return_null=True."
            )
        observed = res.statistic
        pvalue = res.pvalue if pvalue is None else pvalue
    elif observed is None:
        raise TypeError("`observed` is required when `null` is an array.")
    null = np.asarray(null, dtype=float)
    observed = np.asarray(observed, dtype=float)
    if observed.size != 1 or (null.ndim > 1 and null.shape[1:] != (1,) * (null.ndim - 1)):
        raise ValueError(
            f"one hypothesis per plot: `null` has shape {null.shape}, `observed` {observed.shape}."
        )
    return null.ravel(), float(observed.ravel()[0]), pvalue


def null_distribution(
    null, observed=None, pvalue=None, *, ax=None, title=None, statistic="statistic"
):
    """Histogram of a permutation null distribution with the observed statistic marked.

    Parameters
    ----------
    null : array_like, shape (n_resamples,), or a result
        Resampled statistics, or a result that carries them: a permutation test run
        with ``return_null=True`` (``null_distribution``) or a label-permutation sanity
        check (``permutation_scores``); its statistic and p-value are used.
    observed : float, optional
        The observed statistic (required with an array).
    pvalue : float, optional
        Shown in the legend.
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    statistic : str
        Label of the x axis.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from jaxtests import plot
    >>> null = np.random.default_rng(0).normal(size=1000)
    >>> fig = plot.null_distribution(null, observed=2.1, pvalue=0.04)
    >>> print(fig.axes[0].get_legend().get_texts()[0].get_text())
    observed = 2.1
    p = 0.04
    >>> plt.close(fig)
    """
    null, observed, pvalue = _null_iv(null, observed, pvalue)
    if null.size == 0 or not np.isfinite(null).all():
        raise ValueError("`null` must be a non-empty array of finite values.")
    fig, ax = _axes(ax, figsize=(7.5, 3.8))
    ax.hist(null, bins=min(100, max(10, int(np.sqrt(null.size)))), color="0.6", density=True)
    label = f"observed = {observed:.4g}"
    if pvalue is not None:
        label += f"\np = {float(np.asarray(pvalue)):.3g}"
    ax.axvline(observed, color="C3", lw=2, label=label)
    ax.set_xlabel(statistic)
    ax.set_ylabel("density")
    ax.set_title(title or f"Permutation null distribution ({null.size} resamples)")
    _legend_outside(ax, fontsize="small")
    return fig


def _ordering_iv(means, groups, measure, higher_is_better):
    """``(means dict, groups as names, higher_is_better)`` from dicts or results.

    The direction: ``higher_is_better`` when given, else the ordering's own, else the
    measure's (``jaxtests._direction``; lower-is-better for a name it does not know).
    """
    from jaxtests._direction import higher_is_better as direction_of
    from jaxtests._posthoc import Ordering

    if higher_is_better is not None and not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be a bool or None, got {type(higher_is_better).__name__}."
        )

    if hasattr(means, "ordering") and hasattr(means, "cliques"):  # a PosthocResult
        if groups is not None:
            raise TypeError("`groups` comes from the post hoc result; pass the result alone.")
        if means.ordering is None:
            raise ValueError(
                "this post hoc result has no ordering (several measures): plot a "
                "univariate post hoc result, or pass means and groups."
            )
        means = means.ordering
    if isinstance(means, Ordering):
        if groups is not None:
            raise TypeError("`groups` comes from the ordering; pass the ordering alone.")
        labels = [str(s) for s in means.labels]
        # the cliques where one skips an algorithm (drawn split), else the same groups
        shown = means.cliques if means.split_cliques() else means.groups
        groups = [[labels[i] for i in g] for g in shown]
        if higher_is_better is None:
            higher_is_better = means.higher_is_better
        means = dict(zip(labels, (float(m) for m in means.means)))
    if higher_is_better is None:
        higher_is_better = direction_of(measure, False)
    if not isinstance(means, dict):
        raise TypeError(
            "`means` must be a dict of algorithm name -> mean, a PosthocResult or an Ordering."
        )
    means = {str(k): float(v) for k, v in means.items()}
    out = []
    for g in groups or ():
        g = [str(n) for n in g]
        unknown = [n for n in g if n not in means]
        if unknown:
            raise ValueError(f"`groups` names unknown algorithm(s) {unknown}.")
        out.append(g)
    return means, out, bool(higher_is_better)


def ordering(means, groups=None, *, measure="error", ax=None, title=None, higher_is_better=None):
    """Algorithms sorted by mean, with the groups no post hoc test separates.

    The underlined display of Yildiz & Alpaydin, "Multivariate Comparison of
    Classification Algorithms" ("rf lda qda knn c4.5" with underlines), turned on its
    side so that any number of names stays legible: one row per algorithm (best first),
    its mean on the x axis, and to the right one bar per group joining the algorithms
    that are not significantly different (a dot on each member). A group that skips an
    algorithm between its members is drawn split: solid over each run of members, dotted
    across the rows it skips.

    Parameters
    ----------
    means : dict of str -> float, PosthocResult or Ordering
        Mean of the measure per algorithm, or a post hoc result (its ordering and
        groups are used).
    groups : sequence of sequence of str, optional
        Sets of algorithms not significantly different (e.g. a post hoc result's
        cliques); singletons are not drawn.
    measure : str
        Name of the measure (axis label, title, and the direction when not given).
    ax : matplotlib.axes.Axes, optional
    title : str, optional
    higher_is_better : bool or None, default None
        Best first: the largest mean at the top when True (accuracy), the smallest when
        False (error). ``None``: the post hoc result's or ordering's direction, else the
        measure's (``"accuracy"``, ``"auc"``... higher; losses, ``"error"``... lower).
        The title says which.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import plot
    >>> fig = plot.ordering({"knn": 0.20, "rf": 0.12, "lda": 0.15}, [("rf", "lda")])
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['rf', 'lda', 'knn']
    >>> plt.close(fig)
    >>> fig = plot.ordering({"knn": 0.80, "rf": 0.88}, measure="accuracy")  # higher first
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['rf', 'knn']
    >>> plt.close(fig)
    """
    means, groups, higher = _ordering_iv(means, groups, measure, higher_is_better)
    names = sorted(means, key=(lambda n: -means[n]) if higher else means.get)
    row = {n: i for i, n in enumerate(names)}
    groups = [g for g in groups if len(g) >= 2]
    fig, ax = _axes(ax, figsize=(6.5, 1.4 + 0.32 * len(names)))
    xs = np.array([means[n] for n in names])
    ys = np.arange(len(names))
    ax.plot(xs, ys, "o", color="k", zorder=3)
    ax.set_yticks(ys, names)
    ax.set_ylim(len(names) - 0.5, -0.5)  # best at the top
    ax.grid(axis="y", color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    # Group bars to the right of the data, in axes coordinates (x) and rows (y).
    trans = ax.get_yaxis_transform()
    for k, g in enumerate(groups):
        x = 1.04 + 0.045 * k
        rows = sorted(row[n] for n in g)
        color = f"C{k % 10}"
        # A group that skips a row (not contiguous in the order) is split: a solid bar
        # over each run of member rows, a thin dotted line across the rows it skips.
        if rows[-1] - rows[0] + 1 != len(rows):
            ax.plot([x, x], [rows[0], rows[-1]], ":", lw=1, color=color, transform=trans,
                    clip_on=False)  # fmt: skip
        runs = np.split(np.asarray(rows), np.flatnonzero(np.diff(rows) > 1) + 1)
        for run in runs:
            ax.plot(
                [x, x],
                [run[0], run[-1]],
                "-",
                lw=3,
                color=color,
                transform=trans,
                clip_on=False,
                solid_capstyle="round",
                gid="group",
            )
        ax.plot([x] * len(rows), rows, "o", ms=4, color=color, transform=trans, clip_on=False)
    ax.set_xlabel(f"mean {measure} ({direction_words(higher)})")
    ax.set_title(
        title
        or f"Ordering by mean {measure}, best first ({direction_words(higher)})\n"
        "(bars: not significantly different)",
        fontsize="medium",
    )
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


# Figures of the studies


def plot_power(res, *, ax=None, title=None, confidence_level=0.95):
    """Power curves (rejection rate against effect) with Clopper-Pearson bars.

    Parameters
    ----------
    res : PowerResult
        From :func:`jaxtests.study.power`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    title : str, optional
    confidence_level : float
        Level of the intervals drawn as error bars.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import study
    >>> res = study.power(["t", "sign"], n_experiments=200, m=10, effect=[0.0, 0.5], key=0)
    >>> fig = study.plot_power(res)
    >>> fig.axes[0].get_title()
    'Power: normal(), m = 10'
    >>> plt.close(fig)
    """
    if not isinstance(res, PowerResult):
        raise TypeError(f"`res` must be a PowerResult, got {type(res).__name__}.")
    fig, ax = _axes(ax)
    lo, hi = (np.asarray(a) for a in res.confidence_interval(confidence_level))
    r = np.asarray(res.rejection_rate)
    x = np.asarray(res.effects)
    for i, t in enumerate(res.tests):
        ax.errorbar(x, r[i], yerr=[r[i] - lo[i], hi[i] - r[i]], marker="o", capsize=3, label=t)
    ax.axhline(res.alpha, color="grey", linestyle=":", label=f"alpha = {res.alpha:g}")
    ax.set_xlabel("effect")
    ax.set_ylabel("rejection rate")
    ax.set_ylim(0, 1.02)
    _legend_outside(ax, fontsize="small")
    ax.set_title(title or f"Power: {res.generator}, m = {res.m}")
    return fig


def plot_calibration(res, *, ax=None, title=None):
    """QQ plot of each test's null p-values against U(0, 1).

    Parameters
    ----------
    res : CalibrationResult
        From :func:`jaxtests.study.calibration`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import study
    >>> res = study.calibration(["t"], n_experiments=200, m=10, key=0)
    >>> fig = study.plot_calibration(res)
    >>> fig.axes[0].get_title()
    'p-value QQ plot under H0: normal(), m = 10'
    >>> plt.close(fig)
    """
    if not isinstance(res, CalibrationResult):
        raise TypeError(f"`res` must be a CalibrationResult, got {type(res).__name__}.")
    fig, ax = _axes(ax, figsize=(5.0, 5.0))
    for t in res.tests:
        u, p = res.qq(t)
        ax.plot(u, p, label=t, linewidth=1.2)
    ax.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=0.8, label="uniform")
    ax.axvline(res.alpha, color="grey", linestyle=":")
    ax.set_xlabel("uniform quantile")
    ax.set_ylabel("p-value quantile")
    _legend_outside(ax, fontsize="small")
    ax.set_title(title or f"p-value QQ plot under H0: {res.generator}, m = {res.m}")
    return fig


def plot_agreement(res, *, ax=None, title=None):
    """Heatmap of the 2x2 agreement table in percent.

    Parameters
    ----------
    res : AgreementResult
        From :func:`jaxtests.study.agreement`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import cross_validate, datasets, models, study
    >>> X, y = datasets.load_pima()
    >>> learners = {"lda": models.lda(), "centroid": models.nearest_centroid()}
    >>> cv = cross_validate(learners, X[:200], y[:200], cv=5, repeats=3, key=0)
    >>> fig = study.plot_agreement(study.agreement(cv, "error_hinge"))
    >>> fig.axes[0].get_title()
    'Agreement: zero_one vs hinge'
    >>> plt.close(fig)
    """
    if not isinstance(res, AgreementResult):
        raise TypeError(f"`res` must be an AgreementResult, got {type(res).__name__}.")
    fig, ax = _axes(ax, figsize=(4.5, 4.0))
    pc = np.asarray(res.percentages())
    im = ax.imshow(pc, cmap="Blues", vmin=0, vmax=100)
    for i in range(2):
        for j in range(2):
            ax.text(
                j,
                i,
                f"{pc[i, j]:.1f}%",
                ha="center",
                va="center",
                color="white" if pc[i, j] > 50 else "black",
            )
    ax.set_xticks([0, 1], ["accept", "reject"])
    ax.set_yticks([0, 1], ["accept", "reject"])
    ax.set_xlabel(f"test on {res.tests[1]}")
    ax.set_ylabel(f"test on {res.tests[0]}")
    fig.colorbar(im, ax=ax, label="percent of comparisons")
    ax.set_title(title or f"Agreement: {res.tests[0]} vs {res.tests[1]}")
    return fig


def critical_difference(result, *, ax=None, title=None):
    """Demšar's critical-difference diagram of a Nemenyi test.

    Demšar, "Statistical Comparisons of Classifiers over Multiple Data Sets" (JMLR 7,
    2006), Figs. 1 and 2: the average ranks on an axis at the top (rank 1, the best, on
    the left), a bar the length of the critical difference above it, each learner joined
    to its name (the better half on the left, the rest on the right, one row each) with
    its average rank, and thick bars below the axis joining the learners that are not
    significantly different (``result.groups``).

    Parameters
    ----------
    result : NemenyiResult
        From :func:`jaxtests.nemenyi`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (names are written outside its left and right edges).
    title : str, optional
        Default: the level and number of data sets.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import jaxtests
    >>> from jaxtests import plot
    >>> scores = [[0.81, 0.79, 0.70], [0.92, 0.90, 0.85], [0.66, 0.69, 0.60],
    ...           [0.75, 0.71, 0.72], [0.88, 0.84, 0.80]]
    >>> r = jaxtests.nemenyi(scores, names=["svm", "lda", "knn"])
    >>> fig = plot.critical_difference(r)
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    from jaxtests._friedman import NemenyiResult

    if not isinstance(result, NemenyiResult):
        raise TypeError(
            f"`result` must be a NemenyiResult (from jaxtests.nemenyi), got "
            f"{type(result).__name__}."
        )
    ranks = np.asarray(result.average_ranks, dtype=float)
    names = tuple(result.names)
    cd = float(result.critical_difference)
    k = len(names)
    order = np.argsort(ranks, kind="stable")
    n_left = math.ceil(k / 2)
    left = list(order[:n_left])  # best first: the top row ends nearest the axis
    right = list(order[n_left:][::-1])  # worst first, for the same reason
    groups = [g for g in result.groups if len(g) > 1]
    index = {n: i for i, n in enumerate(names)}

    # Vertical layout in "rows" (y grows downwards): axis at 0, CD bar above it, group
    # bars just below it, then one row per name on each side.
    y_cd = -1.4
    y_groups = [0.55 + 0.4 * i for i in range(len(groups))]
    y0 = (y_groups[-1] if groups else 0.0) + 1.3
    n_rows = max(len(left), len(right))
    y_bottom, y_top = y0 + (n_rows - 1) + 0.6, -2.2
    pad = 0.6  # rank units between the ends of the axis and the ends of the name lines
    x_left, x_right = 1.0 - pad, max(float(k), 1.0 + cd) + pad

    row_in = 0.28
    longest = max(len(s) for s in names)
    width = max(6.0, 0.6 * (x_right - x_left) + 2 * (0.085 * longest + 0.25) + 0.4)
    fig, ax = _axes(ax, figsize=(width, row_in * (y_bottom - y_top) + 0.5))
    ax.set_xlim(x_left, x_right)
    ax.set_ylim(y_bottom, y_top)

    # The rank axis: the top spine, moved to y = 0 and spanning ranks 1..k.
    for side in ("left", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.yaxis.set_visible(False)
    ax.spines["top"].set_position(("data", 0.0))
    ax.spines["top"].set_bounds(1, k)
    ax.xaxis.set_ticks_position("top")
    ax.set_xticks(np.arange(1, k + 1))
    ax.set_xticks(np.arange(1.5, k, 1.0), minor=True)
    ax.tick_params(axis="x", which="both", direction="out", top=True, bottom=False)

    # The critical difference, above the axis at the left.
    ax.plot([1.0, 1.0 + cd], [y_cd, y_cd], "-", color="k", lw=1.5, gid="cd")
    ax.plot([1.0, 1.0], [y_cd - 0.15, y_cd + 0.15], "-", color="k", lw=1.0)
    ax.plot([1.0 + cd, 1.0 + cd], [y_cd - 0.15, y_cd + 0.15], "-", color="k", lw=1.0)
    ax.annotate(
        f"CD = {cd:.2f}",
        (1.0 + cd / 2, y_cd),
        xytext=(0, 3),
        textcoords="offset points",
        ha="center",
        va="bottom",
    )

    # Each learner: a marker on the axis, a line down to its row and out to its name.
    for side, members in (("left", left), ("right", right)):
        for row, i in enumerate(members):
            r, y = ranks[i], y0 + row
            edge = x_left if side == "left" else x_right
            ax.plot([r, r, edge], [0.0, y, y], "-", color="0.25", lw=1.0)
            ax.plot([r], [0.0], "o", color="k", ms=4, zorder=3)
            out, inward = (-4, 3) if side == "left" else (4, -3)
            ha = "right" if side == "left" else "left"
            ax.annotate(
                names[i],
                (edge, y),
                xytext=(out, 0),
                textcoords="offset points",
                ha=ha,
                va="center",
                annotation_clip=False,
            )
            ax.annotate(
                f"{r:.3f}",
                (edge, y),
                xytext=(inward, 1),
                textcoords="offset points",
                ha="left" if side == "left" else "right",
                va="bottom",
                fontsize="x-small",
                color="0.3",
            )

    # Groups not significantly different: thick bars below the axis, one row each.
    for y, g in zip(y_groups, groups, strict=True):
        rs = [ranks[index[n]] for n in g]
        ax.plot(
            [min(rs) - 0.05, max(rs) + 0.05],
            [y, y],
            "-",
            color="k",
            lw=4,
            solid_capstyle="butt",
            gid="group",
        )

    if title is None:
        title = f"Nemenyi, alpha = {result.alpha:g}, {result.n_datasets} data sets"
    ax.set_title(title, fontsize="medium")
    return fig


# Posterior samples drawn by ``simplex`` (the first ones: the samples are independent).
_SIMPLEX_POINTS = 10_000


def simplex(result, *, ax=None, title=None, names=None):
    """Posterior samples of a Bayesian signed-rank test in the probability simplex.

    As baycomp's ``plot_simplex`` (Benavoli et al., JMLR 2017): each posterior
    sample ``(left, rope, right)`` is a point of the triangle whose corners are "a
    better" (bottom left: the difference ``a - b`` above ``rope``, for higher-is-better
    scores), "rope" (top) and "b better" (bottom right), each labelled with its
    probability ``p_left``, ``p_rope``, ``p_right``. Lines from the centre to the middles
    of the sides bound the regions in which each corner's probability is the largest:
    ``p_left`` is the fraction of samples in the bottom-left region, and so on. The
    first learner ``a`` is the left
    corner, as in baycomp; for a result with ``higher_is_better=False`` (errors) the
    left corner, ``a`` higher, is labelled "b better".

    Parameters
    ----------
    result : SignRankResult
        From :func:`jaxtests.bayesian.signrank` with ``return_samples=True``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    title : str, optional
        Default: the rope and number of data sets.
    names : (str, str), optional
        Names of the learners ``a`` and ``b`` (default ``("a", "b")``).

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    At most the first 10,000 samples are drawn (semi-transparent points; independent
    draws, so a random subsample); the probabilities in the labels use all of them.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from jaxtests import bayesian, plot
    >>> a = [0.91, 0.83, 0.75, 0.88, 0.69, 0.94, 0.80, 0.86, 0.77, 0.90]
    >>> b = [0.89, 0.80, 0.76, 0.84, 0.66, 0.93, 0.78, 0.83, 0.77, 0.86]
    >>> r = bayesian.signrank(a, b, rope=0.02, key=0, return_samples=True)
    >>> fig = plot.simplex(r, names=("svm", "knn"))
    >>> len(fig.axes[0].collections[0].get_offsets())
    10000
    >>> plt.close(fig)
    """
    from jaxtests import _validation as v
    from jaxtests._bayesian import SignRankResult

    if not isinstance(result, SignRankResult):
        raise TypeError(
            f"`result` must be a SignRankResult (from jaxtests.bayesian.signrank), got "
            f"{type(result).__name__}."
        )
    if result.samples is None:
        raise ValueError(
            "`result` has no posterior samples: call jaxtests.bayesian.signrank(..., "
            "return_samples=True) to plot them."
        )
    name_a, name_b = v.as_names(("a", "b") if names is None else names, 2)
    samples = np.asarray(result.samples, dtype=float)[:_SIMPLEX_POINTS]
    h = math.sqrt(3) / 2
    # Barycentric coordinates: left (0, 0), right (1, 0), rope (1/2, sqrt(3)/2).
    x = samples[:, 2] + 0.5 * samples[:, 1]
    y = h * samples[:, 1]

    fig, ax = _axes(ax, figsize=(5.0, 4.6))
    ax.scatter(x, y, s=4, color="C0", alpha=0.15, linewidths=0, gid="samples", zorder=4)
    ax.plot([0, 0.5, 1, 0], [0, h, 0, 0], "-", color="0.2", lw=1.2, zorder=3)
    cx, cy = 0.5, h / 3
    for mx, my in ((0.5, 0.0), (0.25, h / 2), (0.75, h / 2)):
        ax.plot([cx, mx], [cy, my], "-", color="tab:orange", lw=1.0, zorder=3)
    # baycomp's layout: left is the first learner (a) higher, right the second
    left, right = (name_a, name_b) if result.higher_is_better else (name_b, name_a)
    corners = (
        (0.0, -0.04, f"{left} better", result.p_left, "top"),
        (0.5, h + 0.04, "rope", result.p_rope, "bottom"),
        (1.0, -0.04, f"{right} better", result.p_right, "top"),
    )
    for cx_, cy_, label, p, va in corners:
        ax.text(cx_, cy_, f"{label}\np = {float(p):.3f}", ha="center", va=va, gid="corner")
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.2, h + 0.2)
    ax.set_aspect("equal")
    ax.axis("off")
    if title is None:
        title = f"Bayesian signed-rank test, rope = {result.rope:g}, {result.n_datasets} data sets"
    ax.set_title(title, fontsize="medium")
    return fig
