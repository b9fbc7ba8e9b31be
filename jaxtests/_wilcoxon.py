"""Wilcoxon signed-rank test: scipy's conventions, the exact null from the sign-flip engine."""

import jax
import numpy as np

from jaxtests import _pvalues
from jaxtests import _validation as v
from jaxtests._engine import MAX_MITM
from jaxtests._precision import x64
from jaxtests._results import PermutationFields, result, static_field
from jaxtests._signflip import signflip_pvalue
from jaxtests.kernels import statistics as kstatistics

__all__ = ["WilcoxonResult", "wilcoxon"]

ZERO_METHODS = ("wilcox", "pratt", "zsplit")
METHODS = ("auto", "exact", "approx", "asymptotic", "permutation")


@result
class WilcoxonResult(PermutationFields):
    """Result of :func:`wilcoxon`.

    Attributes
    ----------
    statistic, pvalue : arrays of the batch shape
        ``statistic`` is scipy's: ``min(r_plus, r_minus)`` two-sided, ``r_plus`` one-sided.
    r_plus, r_minus : arrays
        Sums of the ranks of the positive and of the negative differences (with
        ``zero_method="zsplit"``, half the zeros' ranks each).
    zstatistic : array or None
        The normal approximation's z (method "approx"), as scipy's ``zstatistic``.
    rank_biserial : array
        Matched-pairs rank-biserial correlation ``(r_plus - r_minus) / (r_plus + r_minus)``
        (Kerby 2014), in [-1, 1]; NaN when every difference is zero.
    n : array
        Differences ranked (zeros excluded with "wilcox").
    alternative, method, zero_method : str
        ``method`` as resolved: "exact", "approx" or "permutation".
    correction : bool
    pvalue_interval, n_resamples, seed, permutation_method
        Methods "exact" and "permutation" (:class:`~jaxtests._results.PermutationFields`);
        ``n_resamples`` counts sign patterns, ``2^n`` when exact.
    """

    statistic: jax.Array
    pvalue: jax.Array
    r_plus: jax.Array
    r_minus: jax.Array
    zstatistic: jax.Array | None
    rank_biserial: jax.Array
    n: jax.Array
    alternative: str = static_field()
    method: str = static_field()
    zero_method: str = static_field()
    correction: bool = static_field()


def _signed_ranks(d, zero_method):
    """Ranks of ``|d|`` per scipy's ``zero_method``; ``d : (H, n)`` numpy.

    Returns ``(signed ranks with 0 for zeros, r_plus, r_minus, n used, mean, sd)``:
    the last two the normal approximation's mean and sd of ``r_plus`` under H0
    (tie-corrected; Pratt's zero adjustment of Cureton 1967), as scipy.
    """
    zero = d == 0
    n0 = np.sum(zero, axis=-1).astype(float)
    # ranked on the host in numpy (scipy's rankdata's average ranks): nothing compiles
    rank, tie_term = kstatistics.average_ranks(np.abs(d), xp=np)
    # Zeros have the smallest |d|; their own group is never a tie of nonzero ranks
    # (it counts with "zsplit", where the zeros are ranked and kept).
    if zero_method != "zsplit":
        tie_term = tie_term - (n0**3 - n0)
    if zero_method == "wilcox":  # ranks among the nonzero differences only
        rank = rank - n0[:, None]
        count = d.shape[-1] - n0
    else:
        count = np.full(n0.shape, float(d.shape[-1]))
    r = np.where(zero, 0.0, rank)
    r_plus = np.sum(np.where(d > 0, r, 0.0), axis=-1)
    r_minus = np.sum(np.where(d < 0, r, 0.0), axis=-1)
    mean = count * (count + 1) / 4
    var24 = count * (count + 1) * (2 * count + 1)
    if zero_method == "zsplit":
        half = np.sum(np.where(zero, rank, 0.0), axis=-1) / 2
        r_plus, r_minus = r_plus + half, r_minus + half
    if zero_method == "pratt":
        mean = mean - n0 * (n0 + 1) / 4
        var24 = var24 - n0 * (n0 + 1) * (2 * n0 + 1)
    sd = np.sqrt((var24 - tie_term / 2) / 24)
    signed = np.where(d > 0, r, np.where(d < 0, -r, 0.0))
    return signed, r_plus, r_minus, count, mean, sd


def _lattice_pvalues(signed, nonzero, alternative):
    """Exact p-values of the signed ranks ``signed : (H, n)`` by subset sums on the host
    (what the sign-flip engine counts for them, without its program: nothing compiled).

    Columns zero in every row change no sum and are left out, as the engine leaves them.
    The observed sum keeps every sign, so ``P >= sum`` and ``P <= sum`` are the tails
    (half-integer ranks: exact, no tolerance needed). Returns ``(p, (low, high), 2^m)``.
    """
    keep = np.flatnonzero(nonzero) if nonzero.any() else np.array([0])
    dk = signed[:, keep]
    total = dk.sum(axis=-1)
    ge, le = _pvalues.lattice_counts(dk, total, total)
    n_total = 2 ** dk.shape[1]
    p, _, interval = _pvalues.counts_to_pvalues(ge, le, n_total, alternative, True)
    return p, interval, n_total


def _normal_pvalue(r_plus, mean, sd, alternative, correction):
    from scipy import special  # scipy.special only (scipy.stats costs ~0.5 s to import)

    with np.errstate(divide="ignore", invalid="ignore"):
        z = (r_plus - mean) / sd
        if correction:
            sign = {"greater": 1.0, "less": -1.0}.get(alternative)
            sign = np.sign(z) if sign is None else sign
            z = z - sign * 0.5 / sd
    if alternative == "greater":
        p = special.ndtr(-z)
    elif alternative == "less":
        p = special.ndtr(z)
    else:
        p = np.minimum(1.0, 2 * special.ndtr(-np.abs(z)))
    return z, p


@x64
def wilcoxon(
    x,
    y=None,
    *,
    zero_method="wilcox",
    correction=False,
    alternative="two-sided",
    method="auto",
    n_resamples=None,
    key=None,
    axis=-1,
):
    """Wilcoxon signed-rank test of paired scores (data sets or folds), as scipy's.

    Parameters
    ----------
    x, y : array_like
        Paired scores of two learners along ``axis`` (e.g. one accuracy per data set),
        or ``x`` alone as the differences. Other axes are independent tests.
    zero_method : {"wilcox", "pratt", "zsplit"}
        Zero differences: dropped before ranking ("wilcox"), ranked and then dropped
        ("pratt"), or ranked with half their rank to each sign ("zsplit").
    correction : bool
        Continuity correction of the normal approximation (method "approx").
    alternative : {"two-sided", "less", "greater"}
        About the location of ``x - y``: "greater" is ``P(R+ >= r_plus)``.
    method : {"auto", "exact", "approx", "permutation"}
        "exact": every sign pattern of the signed ranks, counted by the sign-flip
        engine (up to 1,000 nonzero differences), exact with ties and zeros too.
        "approx" (scipy's "asymptotic", also accepted): normal approximation with tie
        correction. "permutation": the same sign flips, enumerated when
        ``2^n <= n_resamples`` and drawn at random otherwise. "auto": "exact" up to
        1,000 nonzero differences, else "approx".
    n_resamples : int, optional
        "permutation" only: the most patterns enumerated and the Monte Carlo draws
        (default 100,000).
    key : int, JAX key or None
        "permutation" only: randomness of the draws, recorded in the result.
    axis : int
        Axis of the pairs.

    Returns
    -------
    WilcoxonResult

    Notes
    -----
    ``R+`` is the sum of the ranks of ``|d|`` (average ranks for ties) over positive
    differences. Under H0 each difference is symmetric about 0, so the signs of
    the ranked differences are fair coins: the exact null of ``R+`` is that of the
    sign-flipped mean of the signed ranks (an increasing function of ``R+``), which
    is what :func:`jaxtests.signflip_test` enumerates. Without ties and zeros it is
    the distribution scipy tabulates; with them it is the exact permutation
    distribution, where scipy's "exact" rounds a non-integer ``R+`` and its "auto"
    uses the normal approximation beyond 13 pairs. scipy's "auto" is exact up to 50
    pairs without ties; here "auto" is exact up to 1,000 nonzero differences, ties or
    not. Average ranks are multiples of 1/2, so the engine counts the ``2^n`` patterns
    by subset sums of the doubled ranks (``O(n^3)``; integer counts up to 62
    differences, float64 probabilities beyond). Two-sided exact p-values are
    ``min(1, 2 min(P(R+ >= r), P(R+ <= r)))``.

    Edge cases, as scipy 1.17: one pair is a test of one sign (two-sided p = 1, exact;
    one-sided 1/2 or 1; "approx" ``2 Phi(-1)`` = 0.3173). Where every difference is
    zero, p = 1 for every method, ``zero_method`` and alternative, as scipy's "auto"
    (the exact null is a point mass at the observed value); scipy's "asymptotic" gives
    NaN there (``z = 0/0``), "approx" here ``z = 0`` and p = 1.

    References
    ----------
    Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics 1(6).
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets.
    JMLR 7, 1-30.
    Pratt, J. W. (1959). Remarks on zeros and ties in the Wilcoxon signed rank
    procedures. JASA 54. Cureton, E. E. (1967). JASA 62.
    Kerby, D. S. (2014). The simple difference formula: an approach to teaching
    nonparametric correlation. Comprehensive Psychology 3.

    Examples
    --------
    >>> a = [0.763, 0.599, 0.954, 0.628, 0.882, 0.936, 0.661, 0.583, 0.775, 1.000]
    >>> b = [0.768, 0.591, 0.971, 0.661, 0.888, 0.931, 0.668, 0.583, 0.838, 1.000]
    >>> r = wilcoxon(a, b)  # two zero differences dropped: 2^8 sign patterns
    >>> float(r.statistic), round(float(r.pvalue), 4), r.method
    (6.5, 0.1172, 'exact')
    """
    v.check_choice(zero_method, "zero_method", ZERO_METHODS)
    v.check_choice(method, "method", METHODS)
    v.check_choice(alternative, "alternative", kstatistics.ALTERNATIVES)
    if not isinstance(correction, bool | np.bool_):
        raise TypeError(f"`correction` must be a bool, got {type(correction).__name__}.")
    if method == "asymptotic":
        method = "approx"
    if method != "permutation" and (n_resamples is not None or key is not None):
        raise ValueError(
            "`n_resamples` and `key` apply to method='permutation' only; leave them out."
        )
    if correction and method in ("exact", "permutation"):
        raise ValueError("`correction` applies to method='approx' only.")
    xa = v.as_float_array(x, "x", min_ndim=1)
    if y is None:
        d = np.asarray(xa)
    else:
        ya = v.as_float_array(y, "y", min_ndim=1)
        v.check_same_shape(xa, ya, "x", "y")
        d = np.asarray(xa) - np.asarray(ya)
    axis = v.normalize_axis(axis, d.ndim)
    d = np.moveaxis(d, axis, -1)
    batch_shape, n = d.shape[:-1], d.shape[-1]
    d2 = d.reshape(-1, n)
    signed, r_plus, r_minus, count, mean, sd = _signed_ranks(d2, zero_method)
    nonzero = np.any(d2 != 0, axis=0)
    # The engine counts half-integer ranks by subset sums when their table is small enough
    # (up to 1,000 differences), and any differences up to MAX_MITM by meeting in the middle.
    exact_ok = nonzero.sum() <= MAX_MITM or _pvalues.lattice_feasible(signed[:, nonzero])
    if method == "auto":
        method = "exact" if exact_ok else "approx"
    if method == "exact" and not exact_ok:
        raise ValueError(
            f"`method`='exact' counts at most {_pvalues.LATTICE_MAX_M} nonzero differences "
            f"(fewer when 'pratt' or 'zsplit' rank the zeros), got {int(nonzero.sum())}. "
            "Use 'approx' or 'permutation'."
        )
    fields = {}
    z = None
    if method == "approx":
        z, p = _normal_pvalue(r_plus, mean, sd, alternative, correction)
        # Every difference zero: p = 1 for any zero_method and alternative, as the exact
        # test and scipy's "auto" (scipy's "asymptotic" gives NaN, z = 0/0, or 1/2 one-sided
        # with "zsplit").
        none = ~np.any(d2 != 0, axis=-1)
        z, p = np.where(none, 0.0, z), np.where(none, 1.0, p)
        if alternative == "two-sided":
            z = -np.abs(z)  # scipy's convention
    elif method == "exact" and _pvalues.lattice_feasible(signed[:, nonzero]):
        p, interval, n_total = _lattice_pvalues(signed, nonzero, alternative)
        fields = dict(
            pvalue_interval=np.stack(interval, axis=-1).reshape(*batch_shape, 2),
            n_resamples=n_total,
            seed=None,
            permutation_method="exact",
        )
    else:
        if n == 1:
            # One pair: R+ is 0 or its rank, each with probability 1/2 (scipy: p = 1
            # two-sided). The engine needs two columns; a zero signed rank flips to itself,
            # so it doubles every pattern and changes no p-value.
            signed = np.concatenate([signed, np.zeros_like(signed)], axis=-1)
        perm = signflip_pvalue(
            "mean",
            signed,
            alternative=alternative,
            n_resamples=None if method == "exact" else n_resamples,
            method="exact" if method == "exact" else "auto",
            key=key,
        )
        p = np.asarray(perm.pvalue)
        fields = dict(
            pvalue_interval=np.asarray(perm.pvalue_interval).reshape(*batch_shape, 2),
            n_resamples=perm.n_resamples,
            seed=perm.seed,
            permutation_method=perm.method,
        )
    statistic = np.minimum(r_plus, r_minus) if alternative == "two-sided" else r_plus
    with np.errstate(divide="ignore", invalid="ignore"):
        rbc = (r_plus - r_minus) / (r_plus + r_minus)

    def shaped(a):
        return np.asarray(a, dtype=np.float64).reshape(batch_shape)

    return WilcoxonResult(
        statistic=shaped(statistic),
        pvalue=shaped(p),
        r_plus=shaped(r_plus),
        r_minus=shaped(r_minus),
        zstatistic=None if z is None else shaped(z),
        rank_biserial=shaped(rbc),
        n=np.asarray(count, dtype=np.int64).reshape(batch_shape),
        alternative=alternative,
        method=method,
        zero_method=zero_method,
        correction=bool(correction),
        **fields,
    )
