"""Friedman's test and Nemenyi's critical difference over many data sets (Demšar 2006)."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _permutation_methods as PM
from jaxtests import _validation as v
from jaxtests._friedman_exact import EXACT_MAX_WORK, exact_pvalues, n_orders
from jaxtests._precision import x64
from jaxtests._results import PermutationFields, result, static_field
from jaxtests._studentized import range_isf, range_sf
from jaxtests.kernels import statistics as kstatistics

__all__ = ["FriedmanResult", "NemenyiResult", "friedman", "nemenyi"]

METHODS = ("chi2", "f", "exact", "permutation")
# From how many data sets the Iman-Davenport F holds its level (issue 42.1): its size at
# alpha = 0.05 and at 0.01 stays within two standard errors of a rejection rate measured on
# 10,000 null tables (5.436% and 1.199%) at every N from there on. Sizes by exact
# enumeration of the null for k <= 5 (k = 3 to N = 200, k = 4 to 38, k = 5 to 30), by
# 400,000 simulated null tables for k >= 6 (their estimate plus two standard errors);
# bench/friedman_level.py recomputes them. Rows: (largest k of the row, N from which the F
# approximation is used, and its largest size below that N at alpha = 0.05 and at 0.01, %).
# Below it method "f" reports the exact p-value, or warns where that is too long to count.
F_LEVEL = (
    (2, None, 12.5, 3.9),  # never (6.2% at N = 115, 1.26% at N = 118): the sign test
    (3, 39, 19.4, 4.2),  # 5.80% at N = 12, 5.49% at N = 30; 1.24% at N = 38
    (4, 13, 7.5, 2.0),  # 5.81% at N = 8, 5.47% at N = 12; 1.45% at N = 8
    (5, 11, 6.7, 4.2),  # 5.35% at N = 8; 1.24% at N = 10
    (6, 11, 6.9, 1.8),  # 5.42% at N = 8; 1.17% at N = 10
    (9, 9, 6.9, 1.8),
    (12, 6, 6.2, 1.5),
    (16, 4, 5.7, 1.4),
    (39, 3, 5.5, 1.3),
)  # k >= 40: from N = 2


def f_min_datasets(k):
    """``(N, size_05, size_01)``: the data sets from which the F approximation holds its
    level for ``k`` learners (None: never) and its largest size below, in percent."""
    for k_max, n_min, size_05, size_01 in F_LEVEL:
        if k <= k_max:
            return n_min, size_05, size_01
    return 2, None, None


@result
class FriedmanResult(PermutationFields):
    """Result of :func:`friedman`.

    Attributes
    ----------
    statistic : array
        Friedman's ``chi2_F`` (tie-corrected, as ``scipy.stats.friedmanchisquare``).
    pvalue : array
        The p-value of ``method``: chi-square, Iman-Davenport F (exact where the F
        approximation does not hold its level, ``F_LEVEL``, see :func:`friedman`), exact,
        or permutation.
    chi2_pvalue : array
        ``P(chi2_{k-1} >= chi2_F)``.
    f_statistic, f_pvalue : arrays
        Iman & Davenport's ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` and its
        ``F(k - 1, (k - 1)(N - 1))`` p-value; where every data set ranks the learners
        alike (``F_F`` infinite) ``f_pvalue`` is the exact permutation p-value
        ``(k! / prod t!)^(1 - N)``.
    average_ranks : array ``(..., k)``
        Mean rank of each learner over the data sets (rank 1 = highest score, or lowest
        with ``higher_is_better=False``).
    df : tuple
        ``(k - 1, (k - 1)(N - 1))``.
    n_datasets, n_learners : int
    method : str
    pvalue_interval, n_resamples, seed, permutation_method
        Permutation only (:class:`~jaxtests._results.PermutationFields`); ``permutation_method`` is
        "exact" for method "exact" (and for "f" where it gave the exact p-value).
    """

    statistic: jax.Array
    pvalue: jax.Array
    chi2_pvalue: jax.Array
    f_statistic: jax.Array
    f_pvalue: jax.Array
    average_ranks: jax.Array
    df: tuple = static_field()
    n_datasets: int = static_field()
    n_learners: int = static_field()
    method: str = static_field()


def _ranks_iv(scores, higher_is_better, batch=False):
    if batch:
        x = np.asarray(v.as_float_array(scores, "scores", min_ndim=2))
    else:
        x = np.asarray(v.as_float_array(scores, "scores", ndim=2))
    n, k = x.shape[-2:]
    if n < 2:
        raise ValueError(f"`scores` needs at least 2 data sets (rows), got {n}.")
    if k < 2:
        raise ValueError(f"`scores` needs at least 2 learners (columns), got {k}.")
    if not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be a bool, got {type(higher_is_better).__name__}."
        )
    # ranked on the host in numpy (scipy's rankdata's average ranks): nothing compiles
    return kstatistics.average_ranks(-x if higher_is_better else x, xp=np)


def _learner_names(names, k):
    """``names`` as a tuple of ``k`` distinct strings (default "0", "1", ...)."""
    names = tuple(str(i) for i in range(k)) if names is None else tuple(str(s) for s in names)
    if len(names) != k or len(set(names)) != k:
        raise ValueError(f"`names` must be {k} distinct names, one per learner; got {names}.")
    return names


def _rank_sums_squared(xb):
    """``sum_j R_j^2`` of within-block ranks ``xb : (N, k)``: Friedman's chi2 is increasing in
    it, and within-block permutations leave the tie correction unchanged."""
    return jnp.sum(jnp.sum(xb, axis=0) ** 2)


def _alike_pvalues(ranks, alike):
    """Exact permutation p-values of the tables of ``ranks : (..., N, k)`` whose data sets all
    rank the learners alike (``alike``); NaN elsewhere.

    Friedman's statistic ``sum_j R_j^2 = |sum_i r_i|^2 <= (sum_i |r_i|)^2`` (Cauchy-Schwarz) is
    then the largest any arrangement gives, and reached only where every data set takes the
    same of the ``m = k! / prod t!`` distinct arrangements of the common row (``t`` the sizes
    of its groups of ties): ``p = m * m^-N = m^(1 - N)``.
    """
    n, k = ranks.shape[-2:]
    first = ranks[..., 0, :].reshape(-1, k)
    out = np.full(first.shape[0], np.nan)
    for h in np.flatnonzero(alike.reshape(-1)):
        m = n_orders(tuple(first[h].tolist()))
        # m^(1 - N) as a correctly rounded integer quotient, 0 below the float64 range
        out[h] = 0.0 if (n - 1) * (m.bit_length() - 1) > 1075 else 1 / m ** (n - 1)
    return out.reshape(alike.shape)


def _f_below_its_level(ranks, f_p, n, k, n_min, size_05, size_01):
    """Method "f" where the F approximation exceeds its level: the exact p-value where it
    can be counted, else the F p-value; a warning with the measured size either way."""
    exact = exact_pvalues(ranks)
    done = ~np.isnan(exact)
    p = np.where(done, exact, f_p)
    fields = dict(permutation_method="exact") if done.all() else {}
    if done.all():
        what = "pvalue is the exact permutation p-value (method='exact')"
    else:
        what = (
            f"the exact enumeration is too long for {k} learners, so pvalue is the F "
            "approximation's: prefer method='permutation'"
        )
    sizes = f"{size_05:.1f}% at alpha = 0.05 and {size_01:.1f}% at alpha = 0.01"
    if n_min is None:  # two learners: the sign test
        why = (
            "with k = 2 learners the Iman-Davenport F approximation does not hold its level "
            f"at any N (its size on the null reaches {sizes})"
        )
    else:
        why = (
            f"N = {n} data sets are too few for the Iman-Davenport F approximation with k = "
            f"{k} learners: it holds its level from N = {n_min} (below, its size on the null "
            f"reaches {sizes})"
        )
    warnings.warn(
        f"friedman: {why}; {what}. f_pvalue keeps the F approximation.",
        RuntimeWarning,
        stacklevel=4,
    )
    return p, fields


@x64
def friedman(
    scores, *, higher_is_better=True, method="chi2", n_resamples=None, key=None, progress=None
):
    """Friedman's rank test that ``k`` learners perform alike over ``N`` data sets.

    Parameters
    ----------
    scores : array_like, shape ``(..., N, k)``
        One score per data set (row) and learner (column), e.g. accuracies. Leading
        axes are independent tables (methods "chi2" and "f"; "permutation" takes one).
    higher_is_better : bool
        Rank 1 goes to the highest score (accuracy, AUC); False for errors or losses.
        The test does not depend on it; the average ranks do.
    method : {"chi2", "f", "exact", "permutation"}
        p-value reported as ``pvalue``: the chi-square approximation (scipy's
        ``friedmanchisquare``), Iman & Davenport's F (less conservative; Demšar
        recommends it; exact where the F approximation does not hold its level: every N
        for 2 learners, N < 39 for 3, N < 13 for 4, N < 11 for 5, see Notes), or the
        permutation distribution of ``chi2_F`` under independent permutations of the
        ranks within each data set, enumerated ("exact", for few data sets and learners:
        at most ``EXACT_MAX_WORK`` = 10^7 steps, about 2 s; without ties k = 3 learners
        up to about 200 data sets, 4 up to 36, 5 up to 12, 6 up to 5, 7 up to 3) or drawn
        (Monte Carlo). Every result carries the chi-square and F p-values.
    n_resamples : int, optional
        "permutation" only: Monte Carlo draws (default 100,000).
    key : int, JAX key or None
        "permutation" only: randomness of the draws, recorded in the result.
    progress : bool, tqdm bar, callable or None
        "permutation" only: progress of the draws, as in :func:`signflip_test`
        (a callable is called as ``progress(done, total)``).

    Returns
    -------
    FriedmanResult

    Notes
    -----
    With average ranks ``r_ij`` within each data set, ``R_j = mean_i r_ij`` and
    ``chi2_F = 12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4] / C``, where
    ``C = 1 - sum (t^3 - t) / (N k (k^2 - 1))`` corrects for ties (groups of ``t`` equal
    scores), as scipy. ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)``. The permutation
    null keeps each data set's ranks and shuffles which learner got which.

    Where every data set ranks the learners alike, the residual sum of squares of
    the ranks is 0 and ``F_F`` is infinite: the F distribution gives no answer
    there (it gave p = 0), and ``f_pvalue`` is the exact permutation p-value
    ``(k! / prod t!)^(1 - N)``, the probability that ``N`` independent shuffles all
    agree (0.25 for three data sets and two learners).

    The F approximation's level (issue 42.1): exact sizes (%) of the F test at alpha =
    0.05 / 0.01 on the null without ties, by enumerating it (``bench/friedman_level.py``)::

        k   N = 5        8            10           12           15           20           30
        2   0.00/0.00    7.03/0.78    2.15/2.15    3.86/0.64    3.52/0.74    4.14/1.18    4.28/1.61
        3   3.94/2.39    4.69/1.79    4.56/1.15    5.80/1.07    4.68/1.11    5.25/1.15    5.49/1.16
        4   6.66/1.96    5.81/1.45    5.34/1.31    5.47/1.15    4.91/1.16    5.04/1.11    5.18/1.07
        5   5.77/1.35    5.35/1.27    5.21/1.24    5.40/1.17    5.24/1.13    5.23/1.11    5.11/1.07

    (for two learners it is the sign test's normal approximation, and its size keeps
    swinging: 6.54% at N = 11, 9.23% at 13, 6.17% at 115). ``method="f"`` uses the F
    approximation only from where its size stays within two standard errors of a
    rejection rate measured on 10,000 null tables (5.436% at 0.05, 1.199% at 0.01) at
    every larger N measured (``F_LEVEL``): from N = 39 for k = 3 (largest size there
    5.38% / 1.14%, N up to 200), 13 for k = 4 (5.32% / 1.19%, to N = 40), 11 for k = 5
    (5.40% / 1.17%, to N = 30), never for k = 2; by 400,000 simulated tables, from 11
    for k = 6, 9 for k = 7 to 9, 6 for 10 to 12, 4 for 13 to 16, 3 for 17 to 39, 2 from
    40. Below, ``pvalue`` is the exact permutation p-value (method "exact"; for two
    learners the two-sided sign test), with a ``RuntimeWarning`` that gives the F's
    measured size; where the enumeration is too long (mostly 6 learners or more), the F
    p-value, with a warning that points to "permutation". ``f_pvalue`` keeps the F
    approximation. The chi-square p-value (method "chi2", scipy's) is conservative from
    k = 4 on (at most 4.9% / 0.91% from N = 8) but not for 2 and 3 learners (7.03% at
    N = 8, k = 2; 5.70% at N = 9 and 5.80% at N = 12, k = 3): prefer "f" there.

    The exact null is counted by dynamic programming over the learners' sorted rank
    sums (doubled ranks, exact integers), once per distinct multiset of data sets in a
    batch, tables that share data sets sharing the counts of their common part.

    References
    ----------
    Friedman, M. (1937). JASA 32. Iman, R. L., & Davenport, J. M. (1980).
    Communications in Statistics 9. Demšar, J. (2006). Statistical comparisons of
    classifiers over multiple data sets. JMLR 7, 1-30.

    Examples
    --------
    >>> scores = [[0.81, 0.79, 0.70], [0.92, 0.90, 0.85], [0.66, 0.69, 0.60],
    ...           [0.75, 0.71, 0.72], [0.88, 0.84, 0.80]]
    >>> r = friedman(scores)
    >>> round(float(r.statistic), 2), round(float(r.pvalue), 4), r.average_ranks.tolist()
    (6.4, 0.0408, [1.2, 2.0, 2.8])
    """
    from scipy import special

    v.check_choice(method, "method", METHODS)
    if method != "permutation" and progress not in (None, False):
        raise ValueError("`progress` applies to method='permutation' only; leave it out.")
    if method != "permutation" and (n_resamples is not None or key is not None):
        raise ValueError(
            "`n_resamples` and `key` apply to method='permutation' only; leave them out."
        )
    ranks, ties = _ranks_iv(scores, higher_is_better, batch=True)
    n, k = ranks.shape[-2:]
    if method == "permutation" and ranks.ndim > 2:
        raise ValueError(
            f"method='permutation' takes one (N, k) table, got shape {ranks.shape}; "
            "call it on each table."
        )
    sums = ranks.sum(axis=-2)
    c = 1 - ties.sum(axis=-1) / (n * k * (k * k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = (12.0 / (n * k * (k + 1)) * np.sum(sums**2, axis=-1) - 3 * n * (k + 1)) / c
        chi2_p = special.chdtrc(k - 1, chi2)
        dfd = (k - 1) * (n - 1)
        f = (n - 1) * chi2 / (n * (k - 1) - chi2)
        f_p = np.where(np.isinf(f), 0.0, special.fdtrc(k - 1, dfd, np.where(np.isinf(f), 1, f)))
    # Every data set ranks alike: residual sum of squares 0, F_F infinite (0/0 where every
    # score ties). The exact permutation p-value, in closed form, instead of p = 0.
    alike = np.all(ranks == ranks[..., :1, :], axis=(-2, -1))
    if np.any(alike):
        f_p = np.where(alike, _alike_pvalues(ranks, alike), f_p)
    fields = {}
    p = chi2_p if method == "chi2" else f_p
    if method == "exact":
        p = exact_pvalues(ranks)
        if np.isnan(p).any():
            raise ValueError(
                f"method='exact' enumerates the arrangements of {k} learners over {n} data "
                f"sets in at most {EXACT_MAX_WORK:,} steps, and these need more; use "
                "method='permutation' (Monte Carlo)."
            )
        fields = dict(permutation_method="exact")
    n_min, size_05, size_01 = f_min_datasets(k)
    if method == "f" and (n_min is None or n < n_min):
        p, fields = _f_below_its_level(ranks, f_p, n, k, n_min, size_05, size_01)
    if method == "permutation":
        n_res, typed_key, seed = PM.permutation_iv(
            "permutation", PM.N_RESAMPLES if n_resamples is None else n_resamples, key
        )
        perm = PM.within_blocks(
            _rank_sums_squared,
            jnp.asarray(ranks),
            2,
            n_resamples=n_res,
            key=typed_key,
            seed=seed,
            progress=progress,
        )
        p = perm.pvalue
        fields = PM.result_fields(perm)
    return FriedmanResult(
        statistic=np.asarray(chi2, np.float64)[()],
        pvalue=p if method == "permutation" else np.asarray(p, np.float64)[()],
        chi2_pvalue=np.asarray(chi2_p, np.float64)[()],
        f_statistic=np.asarray(f, np.float64)[()],
        f_pvalue=np.asarray(f_p, np.float64)[()],
        average_ranks=sums / n,
        df=(k - 1, dfd),
        n_datasets=n,
        n_learners=k,
        method=method,
        **fields,
    )


@result
class NemenyiResult:
    """Result of :func:`nemenyi`.

    Attributes
    ----------
    average_ranks : array ``(k,)``
        Mean rank of each learner (1 = best).
    critical_difference : float
        ``q_alpha sqrt(k (k + 1) / (6 N))``: average ranks at least this far apart differ.
    q_alpha : float
        The studentized range quantile over ``sqrt 2`` (Demšar's Table 5a).
    pvalues : array ``(k, k)``
        Pairwise Nemenyi p-values, ``P(Q_{k, inf} >= |R_i - R_j| / sqrt(k (k + 1) / (12 N)))``.
    groups : tuple of tuples
        Maximal sets of learners (by name) whose average ranks all lie within less than the
        critical difference of each other: the bars of a critical-difference diagram.
    names : tuple of str
    alpha : float
    n_datasets : int
    """

    average_ranks: jax.Array
    critical_difference: float
    q_alpha: float
    pvalues: jax.Array
    groups: tuple = static_field()
    names: tuple = static_field()
    alpha: float = static_field()
    n_datasets: int = static_field()

    def text(self):
        """The average ranks in order, the critical difference and the groups."""
        order = np.argsort(np.asarray(self.average_ranks), kind="stable")
        width = max(len(s) for s in self.names)
        lines = [
            f"Nemenyi test, alpha = {self.alpha:g}, {self.n_datasets} data sets: "
            f"critical difference {float(self.critical_difference):.4g} "
            f"(q_alpha = {float(self.q_alpha):.4g})"
        ]
        lines += [
            f"  {self.names[i]:<{width}}  average rank {float(self.average_ranks[i]):.3f}"
            for i in order
        ]
        groups = ", ".join("{" + ", ".join(g) + "}" for g in self.groups)
        lines.append(f"  groups (no difference within): {groups}")
        return "\n".join(lines)


@x64
def nemenyi(scores, *, alpha=0.05, higher_is_better=True, names=None):
    """Nemenyi's post hoc test after :func:`friedman`: all pairs, critical difference.

    Parameters
    ----------
    scores : array_like, shape ``(N, k)``
        One score per data set (row) and learner (column).
    alpha : float
        Level of the critical difference and of the groups.
    higher_is_better : bool
        Rank 1 goes to the highest score; False for errors or losses.
    names : sequence of str, optional
        Learner names (default "0", "1", ...).

    Returns
    -------
    NemenyiResult

    Notes
    -----
    Two learners differ when their average ranks differ by at least
    ``CD = q_alpha sqrt(k (k + 1) / (6 N))``, ``q_alpha`` the studentized range
    quantile of ``k`` means with infinite degrees of freedom over ``sqrt 2``
    (:mod:`jaxtests._studentized`: ``scipy.stats.studentized_range``'s values to 1e-14,
    without importing ``scipy.stats``).

    References
    ----------
    Nemenyi, P. B. (1963). Distribution-free multiple comparisons. PhD thesis,
    Princeton University. Demšar, J. (2006). Statistical comparisons of classifiers
    over multiple data sets. JMLR 7, 1-30 (section 3.2.2 and Table 5).

    Examples
    --------
    >>> scores = [[0.81, 0.79, 0.70], [0.92, 0.90, 0.85], [0.66, 0.69, 0.60],
    ...           [0.75, 0.71, 0.72], [0.88, 0.84, 0.80]]
    >>> r = nemenyi(scores, names=["svm", "lda", "knn"])
    >>> round(float(r.critical_difference), 3), r.groups
    (1.482, (('svm', 'lda'), ('lda', 'knn')))
    """
    alpha = v.check_probability(alpha, "alpha")
    ranks, _ = _ranks_iv(scores, higher_is_better)
    n, k = ranks.shape
    names = _learner_names(names, k)
    avg = ranks.mean(axis=0)
    q = range_isf(float(alpha), int(k)) / np.sqrt(2)
    cd = q * np.sqrt(k * (k + 1) / (6 * n))
    diff = np.abs(avg[:, None] - avg[None, :])
    pvalues = range_sf(diff / np.sqrt(k * (k + 1) / (12 * n)), k)
    pvalues = np.where(np.eye(k, dtype=bool), 1.0, np.minimum(pvalues, 1.0))
    order = np.argsort(avg, kind="stable")
    groups, last_end = [], -1
    for i in range(k):  # maximal runs of the sorted ranks spanning less than CD
        j = i
        while j + 1 < k and avg[order[j + 1]] - avg[order[i]] < cd:
            j += 1
        if j > last_end:  # not inside the previous run (a learner alone is a group too)
            groups.append(tuple(names[t] for t in order[i : j + 1]))
            last_end = j
    return NemenyiResult(
        average_ranks=avg,
        critical_difference=np.float64(cd),
        q_alpha=np.float64(q),
        pvalues=pvalues,
        groups=tuple(groups),
        names=names,
        alpha=float(alpha),
        n_datasets=n,
    )
