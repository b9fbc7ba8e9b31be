"""Histogram of a permutation null distribution with the observed statistic marked."""

import numpy as np

from jaxtests._plotting._common import _axes, _legend_outside


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
