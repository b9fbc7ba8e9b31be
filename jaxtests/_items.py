"""Per-item means of repeated samples, and Miller's split of their variance."""

import numpy as np

from jaxtests._results import result, static_field

__all__ = ["ItemMeansResult", "item_means"]


@result
class ItemMeansResult:
    """Result of :func:`item_means`.

    Attributes
    ----------
    means : array, (..., n_items)
        Each item's mean over its ``K`` samples: the values the paired tests take.
    within_variance : array, (..., n_items)
        Each item's sample variance over its samples (``ddof=1``); NaN when ``K = 1``.
    mean : array
        The mean over items and samples.
    standard_error : array
        ``sqrt(var(means, ddof=1) / n)``: the standard error of ``mean`` with items
        independent (the tests of the per-item means use this variance).
    variance_between : array
        ``var(means, ddof=1) - variance_within / K``: the variance of the items' true
        means (Miller's ``Var(x)``); NaN when ``K = 1``.
    variance_within : array
        The mean of ``within_variance`` over items (Miller's ``E[sigma_i^2]``).
    within_share : array
        ``variance_within / K / var(means, ddof=1)``: the share of the variance of
        ``mean`` that the sampling of answers adds (more samples shrink it); an
        estimate, above 1 when ``variance_between`` comes out negative.
    n_items, n_samples : int
    """

    means: object
    within_variance: object
    mean: object
    standard_error: object
    variance_between: object
    variance_within: object
    within_share: object
    n_items: int = static_field(default=0)
    n_samples: int = static_field(default=0)

    def difference(self, i, j):
        """The split of the per-item differences of model ``i`` minus model ``j``
        (leading axis), as an :class:`ItemMeansResult`.

        The two models' samples are drawn independently, so the within-item
        variance of a difference of two means is the sum of the two
        ``within_variance / K``.
        """
        if np.ndim(self.means) != 2:
            raise ValueError(
                "`difference` compares two models of a result of shape (n_models, n_items)."
            )
        means = np.asarray(self.means)
        within = np.asarray(self.within_variance)
        return _split(means[i] - means[j], within[i] + within[j], self.n_samples, None)


def _item_means_iv(scores):
    try:
        x = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`scores` must be an array of numbers: {exc}") from None
    if x.ndim < 2:
        raise ValueError(
            f"`scores` must have shape (..., n_items, n_samples), got shape {x.shape}."
        )
    n, k = x.shape[-2:]
    if n < 2:
        raise ValueError(f"`scores` has {n} item(s); at least 2 are needed.")
    if k < 1:
        raise ValueError("`scores` has no samples (its last axis is empty).")
    if np.isnan(x).any():
        raise ValueError(
            "`scores` holds NaN: every item needs the same number of samples (pad no "
            "missing samples; drop or add samples so that each item has K)."
        )
    if not np.isfinite(x).all():
        raise ValueError("`scores` holds infinite values.")
    return x


def item_means(scores):
    """Per-item means of ``K`` sampled answers per item, with the variance split.

    Parameters
    ----------
    scores : array_like, (..., n_items, n_samples)
        ``scores[..., i, j]``: the score of sample ``j`` on item ``i`` (0/1 correct,
        or any per-answer score); leading axes are models. Every item has the same
        number ``K = n_samples`` of samples: unequal numbers are refused (pad with
        nothing; Miller's decomposition is for ``K`` per item).

    Returns
    -------
    ItemMeansResult
        ``means`` (the per-item means the paired tests take), ``within_variance``,
        ``mean``, ``standard_error``, ``variance_between``, ``variance_within``,
        ``within_share``.

    Notes
    -----
    With ``x_i`` an item's true mean and ``sigma_i^2`` the variance of its sampled
    scores, the mean of ``n`` item means of ``K`` samples has (Miller 2024, eq. 6)

    ``Var(mean) = Var(x) / n + E[sigma_i^2] / (n K)``.

    ``var(means, ddof=1)`` estimates ``Var(x) + E[sigma_i^2] / K`` and the average of
    the items' ``ddof=1`` variances estimates ``E[sigma_i^2]``, both unbiased; their
    difference estimates ``Var(x)`` (it can come out negative by chance).
    ``within_share`` is how much of ``Var(mean)`` resampling answers would remove:
    the variance a larger ``K`` buys down, not the items'.

    References
    ----------
    Miller, E. (2024). Adding error bars to evals: a statistical approach to language
    model evaluations. arXiv:2411.00640.

    Examples
    --------
    >>> import jaxtests
    >>> r = jaxtests.item_means([[1, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0, 0]])
    >>> r.means.round(3).tolist(), round(float(r.within_share), 3)
    ([0.667, 0.0, 1.0, 0.333], 0.3)
    """
    x = _item_means_iv(scores)
    k = x.shape[-1]
    # one sample per item: the two parts cannot be told apart
    within = x.var(axis=-1, ddof=1) if k > 1 else np.full(x.shape[:-1], np.nan)
    return _split(x.mean(axis=-1), within, k, x.mean(axis=(-2, -1)))


def _split(means, within, k, mean):
    """Miller's split from the item means and the items' within variances."""
    n = means.shape[-1]
    total = means.var(axis=-1, ddof=1)
    e_within = within.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = e_within / k / total  # NaN where every item mean is equal: 0/0
    return ItemMeansResult(
        means=means,
        within_variance=within,
        mean=means.mean(axis=-1) if mean is None else mean,
        standard_error=np.sqrt(total / n),
        variance_between=total - e_within / k,
        variance_within=e_within,
        within_share=share,
        n_items=n,
        n_samples=k,
    )
