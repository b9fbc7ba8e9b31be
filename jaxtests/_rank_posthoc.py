"""Post hoc tests on Friedman's average ranks: against a control or all pairs (Demšar 2006;
García & Herrera 2008), with Holm, Shaffer's static and Bergmann-Hommel step procedures."""

import functools
import itertools
import math

import jax
import numpy as np

from jaxtests import _validation as v
from jaxtests._friedman import _learner_names, _ranks_iv
from jaxtests._posthoc import adjust_pvalues
from jaxtests._precision import x64
from jaxtests._results import result, static_field

__all__ = ["FriedmanPosthocResult", "friedman_posthoc"]

CONTROL_METHODS = ("holm", "bonferroni", "hochberg", "hommel")
PAIRS_METHODS = ("holm", "shaffer", "bergmann", "bonferroni")
MAX_BERGMANN = 9  # learners: exhaustive sets are the set partitions (Bell(9) = 21,147)
# Shaffer's counts take O(k^2) shifts of C(k, 2)-bit sets: 0.2 s at 400 learners, 6 s at 1,000.
MAX_SHAFFER = 500


@result
class FriedmanPosthocResult:
    """Result of :func:`friedman_posthoc`; one entry per comparison.

    Attributes
    ----------
    comparisons : tuple of (str, str)
        The pairs compared, ``(learner, control)`` or ``(i, j)`` with ``i`` before ``j``.
    statistic : array ``(c,)``
        ``z = (R_i - R_j) / sqrt(k (k + 1) / (6 N))`` of the average ranks (negative: the
        first learner ranks better).
    pvalue : array ``(c,)``
        Unadjusted two-sided normal p-values.
    pvalue_adjusted : array ``(c,)``
        Adjusted p-values of ``method``: a comparison is rejected at level ``alpha`` when
        ``pvalue_adjusted <= alpha``.
    reject : array ``(c,)`` of bool
    average_ranks : array ``(k,)``
    names : tuple of str
    control : str or None
    method : str
    alpha : float
    n_datasets : int
    """

    comparisons: tuple = static_field()
    statistic: jax.Array
    pvalue: jax.Array
    pvalue_adjusted: jax.Array
    reject: jax.Array
    average_ranks: jax.Array
    names: tuple = static_field()
    control: str | None = static_field()
    method: str = static_field()
    alpha: float = static_field()
    n_datasets: int = static_field()

    def text(self):
        """One line per comparison, most significant first."""
        head = f"vs {self.control}" if self.control is not None else "all pairs"
        lines = [
            f"Friedman post hoc ({head}, {self.method}), alpha = {self.alpha:g}, "
            f"{self.n_datasets} data sets"
        ]
        order = np.argsort(np.asarray(self.pvalue), kind="stable")
        width = max(len(f"{a} - {b}") for a, b in self.comparisons)
        for i in order:
            a, b = self.comparisons[i]
            lines.append(
                f"  {f'{a} - {b}':<{width}}  z = {float(self.statistic[i]):+.3f}  "
                f"p = {float(self.pvalue[i]):.4g}  adjusted {float(self.pvalue_adjusted[i]):.4g}"
                f"{'  rejected' if bool(self.reject[i]) else ''}"
            )
        return "\n".join(lines)


# S(0), S(1), ... of shaffer_counts as bit sets (bit x set: x true hypotheses possible).
_SHAFFER_BITS = [1, 1]


@functools.cache
def shaffer_counts(k):
    """Possible numbers of true hypotheses among the ``k (k - 1) / 2`` pairs of ``k`` means.

    Shaffer (1986): ``S(k) = union_j {C(j, 2) + x : x in S(k - j)}``, ``S(0) = S(1) = {0}``,
    built up from ``S(2)`` as bit sets (a shift adds ``C(j, 2)`` to every member), without
    recursion: the recursive form ran out of stack at 1,000 learners.
    """
    while len(_SHAFFER_BITS) <= k:
        n = len(_SHAFFER_BITS)
        bits = 0
        for j in range(1, n + 1):
            bits |= _SHAFFER_BITS[n - j] << math.comb(j, 2)
        _SHAFFER_BITS.append(bits)
    digits = bin(_SHAFFER_BITS[max(k, 0)])[:1:-1]  # lowest bit first
    return frozenset(x for x, c in enumerate(digits) if c == "1")


def _partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]
        yield [[first], *part]


@functools.cache
def exhaustive_sets(k):
    """The exhaustive sets of pairwise hypotheses of ``k`` learners, as tuples of pair indices.

    A set of hypotheses ``mu_i = mu_j`` can be true at once exactly when it is the set of
    pairs inside the blocks of a partition of the learners (Bergmann & Hommel 1988).
    """
    index = {p: n for n, p in enumerate(itertools.combinations(range(k), 2))}
    sets = set()
    for part in _partitions(list(range(k))):
        pairs = tuple(sorted(index[p] for b in part for p in itertools.combinations(sorted(b), 2)))
        if pairs:
            sets.add(pairs)
    return tuple(sorted(sets))


def _step_down(p, weights):
    """``min(1, max_{j <= i} w_j p_(j))`` in the ascending order of ``p``, back in input order."""
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(weights * p[order]))
    out = np.empty_like(adj)
    out[order] = adj
    return out


def _shaffer(p, k):
    m = p.shape[0]
    counts = np.array(sorted(shaffer_counts(k)))
    # t_j: most hypotheses that can be true once j - 1 are false (García & Herrera 2008)
    t = counts[np.searchsorted(counts, m - np.arange(m), side="right") - 1].astype(float)
    return _step_down(p, t)


def _bergmann(p, k):
    sets = exhaustive_sets(k)
    adj = np.zeros_like(p)
    for s in sets:
        idx = np.asarray(s)
        v_s = len(s) * p[idx].min()
        adj[idx] = np.maximum(adj[idx], v_s)
    return np.minimum(1.0, adj)


@x64
def friedman_posthoc(
    scores, *, control=None, method="holm", alpha=0.05, higher_is_better=True, names=None
):
    """Post hoc comparisons of average ranks after :func:`friedman`, with step procedures.

    Parameters
    ----------
    scores : array_like, shape ``(N, k)``
        One score per data set (row) and learner (column).
    control : int or str, optional
        Compare every learner with this one (``k - 1`` comparisons); default: all pairs.
    method : str
        Against a control: ``"holm"``, ``"bonferroni"`` (Bonferroni-Dunn), ``"hochberg"``,
        ``"hommel"``. All pairs: ``"holm"``, ``"shaffer"`` (Shaffer's static procedure, up
        to 500 learners), ``"bergmann"`` (Bergmann-Hommel, up to 9 learners),
        ``"bonferroni"``.
    alpha : float
        Level of ``reject``.
    higher_is_better : bool
        Rank 1 goes to the highest score; False for errors or losses.
    names : sequence of str, optional
        Learner names (default "0", "1", ...).

    Returns
    -------
    FriedmanPosthocResult

    Notes
    -----
    Demšar (2006, section 3.2.2): ``z = (R_i - R_j) / sqrt(k (k + 1) / (6 N))`` is standard
    normal under the null. Adjusted p-values follow García & Herrera (2008, section 5):
    Holm ``min(1, max_{j<=i} (m - j + 1) p_(j))``; Shaffer replaces ``m - j + 1`` by the
    largest number of hypotheses that can be true given that ``j - 1`` are false; Bergmann-
    Hommel takes, for each hypothesis, the largest ``|I| min_{j in I} p_j`` over the exhaustive
    sets ``I`` that contain it.

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR
    7, 1-30. García, S. & Herrera, F. (2008). An extension on "Statistical comparisons of
    classifiers over multiple data sets" for all pairwise comparisons. JMLR 9, 2677-2694.

    Examples
    --------
    >>> scores = [[0.81, 0.79, 0.70], [0.92, 0.90, 0.85], [0.66, 0.69, 0.60],
    ...           [0.75, 0.71, 0.72], [0.88, 0.84, 0.80], [0.70, 0.66, 0.61]]
    >>> r = friedman_posthoc(scores, control="svm", names=["svm", "lda", "knn"])
    >>> r.comparisons
    (('lda', 'svm'), ('knn', 'svm'))
    >>> [round(float(p), 4) for p in r.pvalue_adjusted]
    [0.1489, 0.0078]
    """
    alpha = v.check_probability(alpha, "alpha")
    ranks, _ = _ranks_iv(scores, higher_is_better)
    n, k = ranks.shape
    names = _learner_names(names, k)
    if k < 2:
        raise ValueError(f"`scores` has {k} learner(s); post hoc tests compare at least 2.")
    avg = ranks.mean(axis=0)
    se = np.sqrt(k * (k + 1) / (6 * n))
    if control is not None:
        if isinstance(control, str):
            if control not in names:
                raise ValueError(f"`control`={control!r} is not one of the names {names}.")
            c = names.index(control)
        elif isinstance(control, int | np.integer) and not isinstance(control, bool):
            if not 0 <= control < k:
                raise ValueError(f"`control`={control} is not a learner index in [0, {k}).")
            c = int(control)
        else:
            raise TypeError(f"`control` must be a learner name or index, got {control!r}.")
        v.check_choice(method, "method", CONTROL_METHODS)
        pairs = [(i, c) for i in range(k) if i != c]
    else:
        v.check_choice(method, "method", PAIRS_METHODS)
        if method == "bergmann" and k > MAX_BERGMANN:
            raise ValueError(
                f"`method`='bergmann' enumerates the partitions of the learners: at most "
                f"{MAX_BERGMANN} learners, got {k}. Use 'shaffer'."
            )
        if method == "shaffer" and k > MAX_SHAFFER:
            raise ValueError(
                f"`method`='shaffer' counts the possible sets of true hypotheses in time "
                f"growing as k^4: at most {MAX_SHAFFER} learners, got {k}. Use 'holm' (Shaffer's "
                "procedure refines Holm's; Holm's holds the same error rate for any number of "
                "learners, a little less powerful)."
            )
        pairs = list(itertools.combinations(range(k), 2))
    i, j = np.array(pairs).T
    z = (avg[i] - avg[j]) / se
    from scipy import special  # normal tail without loading scipy.stats

    p = special.erfc(np.abs(z) / np.sqrt(2))
    if method == "shaffer":
        adj = _shaffer(p, k)
    elif method == "bergmann":
        adj = _bergmann(p, k)
    else:
        adj = np.asarray(adjust_pvalues(p, method))
    return FriedmanPosthocResult(
        comparisons=tuple((names[a], names[b]) for a, b in pairs),
        statistic=z,
        pvalue=p,
        pvalue_adjusted=adj,
        reject=adj <= alpha,
        average_ranks=avg,
        names=names,
        control=None if control is None else names[c],
        method=method,
        alpha=float(alpha),
        n_datasets=n,
    )
