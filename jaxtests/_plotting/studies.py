"""Figures of the studies: power curves, p-value QQ plots, agreement heatmaps."""

import numpy as np

from jaxtests._plotting._common import _axes, _legend_outside
from jaxtests._studies.agreement import AgreementResult
from jaxtests._studies.calibration import CalibrationResult
from jaxtests._studies.power import PowerResult


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
