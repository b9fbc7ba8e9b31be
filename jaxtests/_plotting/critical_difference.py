"""Demšar's critical-difference diagram of a Nemenyi test."""

import math

import numpy as np

from jaxtests._plotting._common import _axes


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
