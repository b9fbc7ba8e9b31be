"""Algorithms sorted by mean, with the groups that no post hoc test separates."""

import numpy as np

from jaxtests._direction import direction_words
from jaxtests._plotting._common import _axes


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
