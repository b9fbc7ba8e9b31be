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


_MAX_BINS = 100


def _lattice_iv(lattice):
    if lattice is None:
        return None
    if isinstance(lattice, bool) or not isinstance(lattice, int | float | np.number):
        raise TypeError(f"`lattice` must be a positive number or None, got {lattice!r}.")
    if not (np.isfinite(lattice) and lattice > 0):
        raise ValueError(f"`lattice` must be a positive finite number, got {lattice!r}.")
    return float(lattice)


def _detect_lattice(null, max_points=200):
    """The spacing of the values when they lie on a lattice ``a + k step`` (an exact null of
    a few distinct values), else None."""
    u = np.unique(null)
    if u.size < 2 or u.size > max_points:
        return None
    gaps = np.diff(u)
    step = gaps.min()
    ratio = gaps / step
    if step > 0 and np.allclose(ratio, np.round(ratio), rtol=0, atol=1e-6):
        return float(step)
    return None


def _n_bins(n):
    return min(_MAX_BINS, max(10, int(np.sqrt(n))))


def _lattice_bins(null, step):
    """Bins of whole lattice steps, their edges halfway between the multiples ``k step``
    (one step wide, or a few merged when the range holds more possible values than
    :func:`_n_bins` bins), so every bin holds the same number of possible values: no comb
    of empty and full bins."""
    first = np.floor(null.min() / step + 0.5)
    last = np.floor(null.max() / step + 0.5)
    merge = max(1, int(np.ceil((last - first + 1) / _n_bins(null.size))))
    return (np.arange(first, last + merge + 1, merge) - 0.5) * step


def null_distribution(
    null,
    observed=None,
    pvalue=None,
    *,
    ax=None,
    title=None,
    statistic="statistic",
    lattice=None,
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
    lattice : float, optional
        The spacing of the statistic's possible values, e.g. ``1 / n`` for an accuracy
        on ``n`` test instances: bins one step wide centred on its multiples (a mean of
        fold accuracies lies within rounding of them), so that no bin straddles two
        possible values while its neighbour gets none. Default: detected when the null
        takes a few values on a lattice, else about ``sqrt(n_resamples)`` equal bins
        (with a lattice, whole steps are merged to about that many bins).

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
    step = _lattice_iv(lattice)
    step = _detect_lattice(null) if step is None else step
    if step is not None:
        bins = _lattice_bins(null, step)
    else:
        bins = _n_bins(null.size)
    fig, ax = _axes(ax, figsize=(7.5, 3.8))
    ax.hist(null, bins=bins, color="0.6", density=True)
    label = f"observed = {observed:.4g}"
    if pvalue is not None:
        label += f"\np = {float(np.asarray(pvalue)):.3g}"
    ax.axvline(observed, color="C3", lw=2, label=label)
    ax.set_xlabel(statistic)
    ax.set_ylabel("density")
    ax.set_title(title or f"Permutation null distribution ({null.size} resamples)")
    _legend_outside(ax, fontsize="small")
    return fig
