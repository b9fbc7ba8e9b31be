"""Posterior samples of a Bayesian signed-rank test in the probability simplex."""

import math

import numpy as np

from jaxtests._plotting._common import _axes

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
