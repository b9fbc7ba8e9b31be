"""Post hoc analysis of ``L`` algorithms: pairwise tests, p-value adjustment, cliques and
the ordering with underlined groups (Yildiz & Alpaydin, §2.2 and §3.5).
"""

import dataclasses
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _permutation_methods as PM
from jaxtests import _tails
from jaxtests._direction import direction_words
from jaxtests._precision import x64
from jaxtests._results import PermutationFields, _to_numpy, result, static_field
from jaxtests._validation import (
    as_float_array,
    as_names,
    check_choice,
    check_finite,
    check_probability,
    normalize_axis,
    rescale_pow2,
    scale_back,
)
from jaxtests._validation import check_rcond as _check_rcond
from jaxtests.kernels import multitest as kmultitest
from jaxtests.kernels import statistics as kstatistics

__all__ = ["Ordering", "PosthocResult", "adjust_pvalues", "cliques", "ordering", "posthoc"]

METHODS = PM.METHODS
TESTS = ("t", "hotelling", "permutation")
_ADJUST_ALIASES = {"fdr_bh": "bh", "fdr_by": "by", "simes-hochberg": "hochberg"}


# ----------------------------------------------------------------------------------------
# adjust_pvalues
# ----------------------------------------------------------------------------------------


def _adjust(p, method):
    return _tails.adjust(p, method)


@x64
def adjust_pvalues(p, method="holm", *, axis=-1):
    """Adjust p-values for multiple comparisons.

    Parameters
    ----------
    p : array_like, shape ``(..., m, ...)``
        Raw p-values in [0, 1]; the ``m`` comparisons lie along ``axis``, other axes
        are batch axes.
    method : {"holm", "bonferroni", "hochberg", "hommel", "bh", "by", "none"}
        Family-wise error control (Bonferroni, Holm 1979, Hochberg 1988, Hommel 1988) or
        false discovery rate control (Benjamini-Hochberg 1995, Benjamini-Yekutieli 2001).
        ``"fdr_bh"``, ``"fdr_by"`` and ``"simes-hochberg"`` (statsmodels' names) are
        accepted as aliases.
    axis : int

    Returns
    -------
    numpy.ndarray
        Adjusted p-values in the original order and shape, as R's ``p.adjust`` and
        statsmodels' ``multipletests(...)[1]``.

    Notes
    -----
    Reject hypothesis ``i`` at family-wise (or FDR) level ``alpha`` when
    ``adjusted[i] <= alpha``. Hein introduces the Bonferroni correction; Yildiz & Alpaydin
    uses Holm's.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    Scandinavian Journal of Statistics 6(2), 65-70.
    Hochberg, Y. (1988). Biometrika 75(4), 800-802. Hommel, G. (1988). Biometrika
    75(2), 383-386. Benjamini, Y. & Hochberg, Y. (1995). JRSS B 57(1), 289-300.
    Benjamini, Y. & Yekutieli, D. (2001). Annals of Statistics 29(4), 1165-1188.
    Hein, M. (2013). "Performance Measures and Statistical Tests II", lecture 16,
    Machine Learning, Saarland University.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").tolist()
    [0.03, 0.06, 0.06]
    """
    method = _ADJUST_ALIASES.get(method, method)
    check_choice(method, "method", kmultitest.ADJUSTMENTS)
    p = as_float_array(p, "p", min_ndim=1)
    arr = np.asarray(p)
    if ((arr < 0) | (arr > 1)).any():
        idx = tuple(int(i) for i in np.argwhere((arr < 0) | (arr > 1))[0])
        raise ValueError(
            f"`p` must hold probabilities in [0, 1]; found {float(arr[idx])!r} at index "
            f"{idx[0] if len(idx) == 1 else idx}."
        )
    ax = normalize_axis(axis, p.ndim)
    out = _adjust(np.moveaxis(arr, ax, -1), method)  # numpy on the host: nothing compiled
    return _to_numpy(np.moveaxis(out, -1, ax))  # numpy, as scipy's (issue 28.4)


# ----------------------------------------------------------------------------------------
# Cliques and ordering (host-side graph algorithms on small L)
# ----------------------------------------------------------------------------------------


def _reject_iv(reject):
    r = np.asarray(reject)
    if r.ndim != 2 or r.shape[0] != r.shape[1]:
        raise ValueError(f"`reject` must be a square (L, L) matrix, got shape {r.shape}.")
    if r.dtype.kind != "b":
        raise TypeError(f"`reject` must be a boolean matrix, got dtype {r.dtype}.")
    if not np.array_equal(r, r.T):
        raise ValueError("`reject` must be symmetric (reject[i, j] == reject[j, i]).")
    return r


# Bron-Kerbosch's work (pivot candidates examined, about 0.3 us each) and maximal cliques
# before refusing: a few seconds. A graph can have 3^(L/3) maximal cliques (Moon & Moser
# 1965): 30 algorithms in 10 triples of significantly different ones, 59,049.
MAX_CLIQUE_WORK = 5_000_000
MAX_CLIQUES = 100_000


def _bron_kerbosch(adj, limit=MAX_CLIQUE_WORK):
    """Every maximal clique of the graph ``adj`` (a bit mask of neighbours per vertex).

    Bron-Kerbosch with Tomita's pivot, iterative (an explicit stack: 1,000 vertices
    in one clique recursed past Python's limit), on integer bit sets. Raises
    ``ValueError`` once ``limit`` units of work are spent.
    """
    out = []
    work = 0
    stack = [(0, (1 << len(adj)) - 1, 0)]  # (R, P, X) as bit sets
    while stack:
        r, p, x = stack.pop()
        if not p:
            if not x:
                out.append(r)
            continue
        px = p | x
        work += px.bit_count()
        if work > limit or len(out) > MAX_CLIQUES:
            raise ValueError(
                f"`reject`: the maximal cliques of these {len(adj)} algorithms are too many to "
                f"list (more than {limit:,} steps of the search or {MAX_CLIQUES:,} cliques; "
                f"{len(out):,} found so far; L algorithms can have 3^(L/3)): compare fewer "
                "algorithms."
            )
        pivot, best = 0, -1
        for u in _bits(px):  # the pivot leaves the fewest branches: P minus its neighbours
            c = (p & adj[u]).bit_count()
            if c > best:
                pivot, best = u, c
        for v in _bits(p & ~adj[pivot]):
            stack.append((r | 1 << v, p & adj[v], x & adj[v]))
            p &= ~(1 << v)
            x |= 1 << v
    found = [tuple(_bits(c)) for c in out]
    return sorted(found, key=lambda c: (-len(c), c))


def _near_bits(reject):
    """Bit ``j`` of entry ``i``: algorithms ``i != j`` are not significantly different."""
    near = ~reject
    np.fill_diagonal(near, False)
    return [int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little") for row in near]


def _bits(mask):
    """The indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cliques(reject, names=None):
    """Maximal sets of algorithms with no significantly different pair (Yildiz & Alpaydin).

    Parameters
    ----------
    reject : array_like of bool, shape ``(L, L)``
        Symmetric matrix of pairwise rejections (diagonal ignored).
    names : sequence of str, optional
        Names of the ``L`` algorithms; the cliques are returned as names if given.

    Returns
    -------
    list of tuple
        The maximal cliques of the "not significantly different" graph, largest first.
        Cliques may overlap; an algorithm different from all others is a singleton.

    Raises
    ------
    ValueError
        When there are more than ``MAX_CLIQUES`` (1e5) or listing them takes more
        than ``MAX_CLIQUE_WORK`` (5e6) steps of the search (a few seconds): a graph
        of ``L`` vertices can have ``3^(L/3)`` maximal cliques.

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification Algorithms"
    (§3.5).

    Examples
    --------
    >>> import jaxtests
    >>> import numpy as np
    >>> reject = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], bool)  # C differs from A and B
    >>> jaxtests.cliques(reject, names=["A", "B", "C"])
    [('A', 'B'), ('C',)]
    """
    r = _reject_iv(reject)
    n = r.shape[0]
    names = as_names(names, n, "names")
    found = _bron_kerbosch(_near_bits(r))
    if names is None:
        return found
    return [tuple(names[i] for i in c) for c in found]


@dataclasses.dataclass(frozen=True)
class Ordering:
    """Algorithms sorted by mean with the groups that are not significantly different.

    ``order`` holds indices (best first under the chosen direction), ``labels`` their
    names, ``means`` the sorted means, and ``groups`` maximal runs of consecutive
    algorithms (positions in ``order``) with no significant pair: the seed's underlines.
    ``higher_is_better`` is the direction: True sorts from the largest mean.
    ``cliques`` are the maximal sets with no significant pair (positions in ``order``,
    two or more members); equal means are ordered so that as many of them as possible
    are contiguous. Where every clique is contiguous the cliques are the ``groups``;
    where one is not, :meth:`text` and :func:`jaxtests.plot.ordering` draw it split,
    with its non-members marked.
    """

    order: tuple
    labels: tuple
    means: tuple
    groups: tuple
    higher_is_better: bool = False
    cliques: tuple = ()

    def split_cliques(self):
        """Whether a clique skips an algorithm between its members (drawn split)."""
        return any(c[-1] - c[0] + 1 != len(c) for c in self.cliques)

    def header(self):
        """What the order means, e.g. ``"best first (lower is better)"``."""
        return f"best first ({direction_words(self.higher_is_better)})"

    def text(self):
        """The underlined display of Yildiz & Alpaydin §3.5, one underline per group."""
        width = [max(len(s), 1) for s in self.labels]
        starts = np.concatenate([[0], np.cumsum([w + 2 for w in width])])[:-1]
        lines = ["  ".join(self.labels)]
        # A clique that skips an algorithm is drawn split: "─" under its members, "┈"
        # under the algorithms between them that are not members (issue 28.3).
        split = self.split_cliques()
        rows = []  # pack non-overlapping underlines onto the same line
        for g in self.cliques if split else self.groups:
            lo, hi = int(starts[g[0]]), int(starts[g[-1]] + width[g[-1]])
            for row in rows:
                if all(hi + 1 < a or lo > b + 1 for a, b, _ in row):
                    row.append((lo, hi, g))
                    break
            else:
                rows.append([(lo, hi, g)])
        for row in rows:
            buf = [" "] * max(b for _, b, _ in row)
            for _, _, g in row:
                members = set(g)
                for p in range(g[0], g[-1] + 1):
                    a, b = int(starts[p]), int(starts[p] + width[p])
                    buf[a:b] = ("─" if p in members else "┈") * (b - a)
                    if p < g[-1]:  # the two spaces to the next name
                        joined = p in members and p + 1 in members
                        buf[b : b + 2] = ("─" if joined else "┈") * 2
            lines.append("".join(buf).rstrip())
        return "\n".join(lines)

    def __str__(self):
        return self.text()


def ordering(means, reject, names=None, *, descending=False, higher_is_better=None):
    """Sort algorithms by mean and find the groups not significantly different.

    Parameters
    ----------
    means : array_like, shape ``(L,)``
        Mean performance of each algorithm (e.g. error; lower first by default).
    reject : array_like of bool, shape ``(L, L)``
        Symmetric pairwise rejection matrix.
    names : sequence of str, optional
    descending : bool
        Sort from the largest mean (for scores such as accuracy); the same as
        ``higher_is_better=True``.
    higher_is_better : bool or None, default None
        Whether a higher mean is better (accuracy) and comes first; ``None`` is
        ``descending``. Recorded in the result (:meth:`Ordering.header`).

    Returns
    -------
    Ordering
        With ``text()`` giving the underlined display, e.g.::

            rf  lda  qda  knn  c4.5
            ───────

    Notes
    -----
    A group is a maximal run ``i..j`` of consecutive algorithms in the sorted order with
    no rejected pair inside it; runs of one algorithm are not underlined (Yildiz &
    Alpaydin §3.5).

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification Algorithms"
    (§3.5).

    Examples
    --------
    >>> import jaxtests
    >>> import numpy as np
    >>> reject = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], bool)  # C differs from A and B
    >>> print(jaxtests.ordering([0.10, 0.12, 0.30], reject, names=["A", "B", "C"]).text())
    A  B  C
    ────
    """
    r = _reject_iv(reject)
    descending = _direction_iv(descending, higher_is_better)
    m = np.asarray(means)
    if m.dtype.kind not in "biuf":
        raise TypeError(f"`means` must be an array of real numbers, got dtype {m.dtype}.")
    m = m.astype(float)
    check_finite(m, "means")  # a NaN mean has no place in the order
    if m.shape != (r.shape[0],):
        raise ValueError(
            f"`means` must have shape ({r.shape[0]},) to match `reject`, got {m.shape}."
        )
    names = as_names(names, r.shape[0], "names") or tuple(str(i) for i in range(r.shape[0]))
    order = np.argsort(-m if descending else m, kind="stable")
    found = [c for c in _bron_kerbosch(_near_bits(r)) if len(c) >= 2]
    order = _contiguous_ties(order, m, found)
    rs = r[np.ix_(order, order)]
    n = len(order)
    runs = []
    for i in range(n):
        j = i
        while j + 1 < n and not rs[i : j + 2, i : j + 2].any():
            j += 1
        if j > i and not any(a <= i and j <= b for a, b in runs):
            runs.append((i, j))
    groups = tuple(tuple(range(a, b + 1)) for a, b in runs)
    pos = {int(a): p for p, a in enumerate(order)}
    return Ordering(
        order=tuple(int(i) for i in order),
        labels=tuple(names[i] for i in order),
        means=tuple(float(v) for v in m[order]),
        groups=groups,
        higher_is_better=descending,
        cliques=tuple(sorted(tuple(sorted(pos[i] for i in c)) for c in found)),
    )


def _n_contiguous(order, found):
    pos = {int(a): p for p, a in enumerate(order)}
    spans = ([pos[i] for i in c] for c in found)
    return sum(max(s) - min(s) + 1 == len(s) for s in spans)


def _contiguous_ties(order, m, found, max_block=6):
    """``order`` with each run of equal means (up to ``max_block`` long) permuted so that
    as many cliques as possible are contiguous; the first best permutation, so the
    stable order when none is better. Only equal means move."""
    order = np.array(order)
    k = 0
    while k < len(order):
        j = k
        while j + 1 < len(order) and m[order[j + 1]] == m[order[k]]:
            j += 1
        if 0 < j - k < max_block and found:
            block = order[k : j + 1].copy()
            best, best_n = block, -1
            for perm in itertools.permutations(block):
                order[k : j + 1] = perm
                n = _n_contiguous(order, found)
                if n > best_n:
                    best, best_n = np.array(perm), n
            order[k : j + 1] = best
        k = j + 1
    return order


def _direction_iv(descending, higher_is_better):
    """The one direction of ``descending`` and ``higher_is_better`` (which may be None)."""
    if not isinstance(descending, bool | np.bool_):
        raise TypeError(f"`descending` must be a bool, got {type(descending).__name__}.")
    if higher_is_better is None:
        return bool(descending)
    if not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be a bool or None, got {type(higher_is_better).__name__}."
        )
    if descending and not higher_is_better:
        raise ValueError("`descending`=True and `higher_is_better`=False contradict each other.")
    return bool(higher_is_better)


# ----------------------------------------------------------------------------------------
# posthoc
# ----------------------------------------------------------------------------------------


@result
class PosthocResult(PermutationFields):
    """Result of :func:`posthoc`.

    ``statistic``, ``pvalue`` and ``pvalue_adjusted`` are ``(L, L)`` matrices (the
    ``t`` of ``x_i - x_j`` is antisymmetric, T² symmetric; diagonal 0 / 1 / 1);
    ``reject`` is ``pvalue_adjusted <= alpha``. ``mean`` is ``(L,)`` or ``(L, p)``.
    ``cliques`` are the maximal sets with no significant pair (names if given) and
    ``ordering`` (univariate tests only) the sorted algorithms with their groups.
    ``method`` is "parametric" or "permutation"; permutation results also carry the
    fields of :class:`~jaxtests._results.PermutationFields`, ``pvalue_interval`` of each
    raw p-value ``(L, L, 2)``.
    """

    statistic: jax.Array
    pvalue: jax.Array
    pvalue_adjusted: jax.Array
    reject: jax.Array
    mean: jax.Array
    cliques: tuple = static_field()
    ordering: Ordering | None = static_field()
    names: tuple | None = static_field()
    test: str = static_field()
    correction: str = static_field()
    alpha: float = static_field()
    paired: bool = static_field()
    method: str = static_field()

    def text(self, *, pairs=True):
        """A short report: adjusted p-value of every pair, cliques and the ordering.

        ``pairs=False`` leaves out the pairs' lines (a table shows them already).
        """
        n = self.pvalue.shape[0]
        names = self.names or tuple(str(i) for i in range(n))
        padj = np.asarray(self.pvalue_adjusted)
        rej = np.asarray(self.reject)
        how = "" if self.method == "parametric" else f" ({self.permutation_method} permutation)"
        out = [
            f"Pairwise {self.test} tests{how}, {self.correction} correction, alpha = {self.alpha}"
        ]
        for i in range(n if pairs else 0):
            for j in range(i + 1, n):
                mark = " *" if rej[i, j] else ""
                out.append(f"  {names[i]} vs {names[j]}: p_adj = {padj[i, j]:.4g}{mark}")
        shown = ("{" + ", ".join(map(str, c)) + "}" for c in self.cliques)
        out.append("Cliques: " + ", ".join(shown))
        if self.ordering is not None:
            out.append(f"Ordering, {self.ordering.header()}:")
            out.extend("  " + line for line in self.ordering.text().split("\n"))
            if self.ordering.split_cliques():
                out.append("  (one line per group not significantly different; ┈: not in it)")
        return "\n".join(out)


def _pairs(n):
    i, j = np.triu_indices(n, 1)
    return i, j


def _pairwise_t(x, paired, correction):
    t, mean = _pairwise_t_statistics(x, paired)
    k = x.shape[1]
    p = _tails.t_pvalue(t, k - 1 if paired else 2 * k - 2, "two-sided")
    return t, p, _tails.adjust(p, correction), mean


@functools.partial(jax.jit, static_argnames=("paired",))
def _pairwise_t_statistics(x, paired):
    i, j = _pairs(x.shape[0])
    if paired:
        t = kstatistics.t_statistic(x[i] - x[j])
    else:
        t = kstatistics.pooled_t_statistic(x[i], x[j])
    return t, jnp.mean(x, axis=-1)


def _pairwise_hotelling(x, paired, correction):
    t2, f, mean, rcond = _pairwise_hotelling_statistics(x, paired)
    k, p = x.shape[1], x.shape[2]
    pv = _tails.f_sf(f, p, k - p) if paired else _tails.f_sf(f, p, 2 * k - 2 - p + 1)
    return t2, pv, _tails.adjust(pv, correction), mean, rcond


@functools.partial(jax.jit, static_argnames=("paired",))
def _pairwise_hotelling_statistics(x, paired):
    i, j = _pairs(x.shape[0])
    k, p = x.shape[1], x.shape[2]
    if paired:
        d = x[i] - x[j]
        parts = kstatistics.hotelling_parts(d)
        f = parts.statistic * (k - p) / (p * (k - 1))
        scale = jnp.max(jnp.abs(d), axis=-2)
    else:
        parts = kstatistics.hotelling_parts_two_sample(x[i], x[j])
        m = 2 * k - 2
        f = parts.statistic * (m - p + 1) / (p * m)
        scale = jnp.maximum(jnp.max(jnp.abs(x[i]), axis=-2), jnp.max(jnp.abs(x[j]), axis=-2))
    rcond = kstatistics.correlation_rcond(parts.covariance, scale)
    return parts.statistic, f, jnp.mean(x, axis=-2), rcond


def _square(vals, n, diag, antisym=False):
    """``(n_pairs, ...)`` pair values -> ``(n, n, ...)`` matrix (pair order of ``_pairs``)."""
    i, j = _pairs(n)
    v = np.asarray(vals)
    out = np.full((n, n, *v.shape[1:]), diag, dtype=v.dtype)
    out[i, j] = v
    out[j, i] = -v if antisym else v
    return out


def _pairwise_permutation(x, test, paired, correction, n_resamples, key, seed):
    """Raw (and maxT-adjusted) permutation p-values of every pair, sharing the draws."""
    i, j = _pairs(x.shape[0])
    maxt = "maxT" if correction == "maxT" else None
    draws = dict(n_resamples=n_resamples, key=key, seed=seed, correction=maxt)
    if test == "t" and paired:
        return PM.signflip("t", x[i] - x[j], alternative="two-sided", **draws)
    if test == "t":
        return PM.twosample(x[i], x[j], **draws)
    if paired:
        return PM.signflip("hotelling", x[i] - x[j], alternative="greater", **draws)
    return PM.hotelling_two_sample(x[i], x[j], **draws)


@x64
def posthoc(
    x,
    *,
    test="t",
    correction="holm",
    alpha=0.05,
    names=None,
    paired=True,
    method="parametric",
    n_resamples=PM.N_RESAMPLES,
    key=None,
    higher_is_better=False,
):
    """All pairwise post hoc tests among ``L`` algorithms, with cliques and ordering.

    Parameters
    ----------
    x : array_like
        ``(L, k)`` for ``test="t"`` or ``"permutation"`` (one measure) or ``(L, k, p)``
        for ``test="hotelling"``: ``L`` algorithms on the same ``k`` folds.
    test : {"t", "hotelling", "permutation"}
        Pairwise paired t test or paired Hotelling T² (Yildiz & Alpaydin, eq. 1);
        ``"permutation"`` is short for ``test="t", method="permutation"``.
    correction : {"holm", "bonferroni", "hochberg", "hommel", "bh", "by", "none", "maxT"}
        Adjustment over the ``L (L - 1) / 2`` pairs (Yildiz & Alpaydin use Holm's). ``"maxT"``
        (permutation only) is Westfall & Young's single-step max-T adjustment from the
        draws that all pairs share; the others adjust the raw p-values.
    alpha : float
        Level at which adjusted p-values reject.
    names : sequence of str, optional
        Names of the ``L`` algorithms.
    paired : bool
        Paired tests (the folds are shared, the default) or two-sample tests.
    method : {"parametric", "permutation"}
        Reference distribution of each pair's statistic: t or F, or the permutation
        distribution of the same statistic: sign flips of the paired differences of the
        ``k`` folds (exact when ``2^k <= n_resamples``), or, with ``paired=False``,
        random splits of the ``2 k`` folds between the two algorithms (exact when
        ``C(2k, k) <= n_resamples``). All pairs share the same draws.
    n_resamples : int
        Permutation only: Monte Carlo draws, and the most rearrangements enumerated.
    key : int, JAX key or None
        Permutation only: randomness of the draws, recorded as ``seed``.
    higher_is_better : bool, default False
        Direction of the ordering: False (errors, losses) puts the smallest mean first,
        True (accuracy, AUC) the largest; the tests do not depend on it.
        :meth:`CVResult.posthoc` sets it from the measure.

    Returns
    -------
    PosthocResult
        Raw and adjusted p-value matrices, ``reject``, ``cliques``, ``ordering`` (for
        ``test="t"``; best first: by ascending mean, e.g. error, or descending with
        ``higher_is_better=True``) and ``text()``.

    Notes
    -----
    Post hoc analysis is a per-data-set report, so ``x`` carries no batch axes; for many
    data sets at once call :func:`ttest_paired` or :func:`hotelling_t2` on stacked pairs.

    Permutation t tests are two-sided, ``min(1, 2 min(P(T >= t), P(T <= t)))`` (t is
    increasing in the mean under sign flips and in the mean difference under splits,
    so the engine counts those linear forms exactly); T² uses ``P(T²* >= T²)``. With
    ``correction="maxT"`` the adjusted p-value of pair ``(i, j)`` is the share of draws
    whose largest statistic over all pairs (t on the scale of its null standard
    deviation, which orders draws as ``max |t|`` does) reaches pair ``(i, j)``'s
    observed one; it is never below the raw p-value and controls the family-wise error
    without Bonferroni's loss under correlated pairs.

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification Algorithms"
    (§2.2, §3.5). Holm, S. (1979). Scand. J. Statist. 6, 65-70.
    Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing. Wiley.

    Examples
    --------
    >>> import jaxtests
    >>> x = [[0.20, 0.22, 0.19, 0.21, 0.23, 0.20],   # error of 3 algorithms on 6 folds
    ...      [0.21, 0.22, 0.20, 0.22, 0.22, 0.21],
    ...      [0.30, 0.33, 0.29, 0.31, 0.34, 0.30]]
    >>> r = jaxtests.posthoc(x, names=["A", "B", "C"])
    >>> r.cliques
    (('A', 'B'), ('C',))
    """
    check_choice(test, "test", TESTS)
    check_choice(method, "method", METHODS)
    asked = test
    if test == "permutation":
        test, method = "t", "permutation"
    correction = _ADJUST_ALIASES.get(correction, correction)
    check_choice(correction, "correction", (*kmultitest.ADJUSTMENTS, "maxT"))
    if correction == "maxT" and method != "permutation":
        raise ValueError(
            "`correction`='maxT' adjusts with the permutation draws: use "
            "method='permutation' (or test='permutation')."
        )
    alpha = check_probability(alpha, "alpha")
    if not isinstance(paired, bool | np.bool_):
        raise TypeError(f"`paired` must be a bool, got {type(paired).__name__}.")
    if not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be a bool, got {type(higher_is_better).__name__}."
        )
    ndim = 2 if test == "t" else 3
    x = as_float_array(x, "x")
    if x.ndim != ndim:
        shape = "(L, k)" if test == "t" else "(L, k, p)"
        raise ValueError(f"`x` must have shape {shape} for test={asked!r}, got {tuple(x.shape)}.")
    n_resamples, typed_key, seed = PM.permutation_iv(method, n_resamples, key, (x, "x"))
    n, k = x.shape[0], x.shape[1]
    if n < 2:
        raise ValueError(f"`x` needs at least 2 algorithms (axis 0), got {n}.")
    if k < 2:
        raise ValueError(f"`x` needs at least 2 folds (axis 1), got {k}.")
    names = as_names(names, n, "names")
    factor, x = rescale_pow2(x)  # exact; statistics and p-values are scale-invariant
    # The parametric adjustment runs on the raw p-values; maxT replaces it below.
    adjust_with = "none" if correction == "maxT" else correction
    if test == "t":
        stat, p, padj, mean = _pairwise_t(x, bool(paired), adjust_with)
    else:
        p_dim = x.shape[2]
        if (paired and k <= p_dim) or (not paired and 2 * k - 2 < p_dim):
            raise ValueError(
                f"`x` has k={k} folds for p={p_dim} measures: pairwise Hotelling tests need "
                "more folds than measures. Use more folds or fewer measures."
            )
        stat, p, padj, mean, rcond = _pairwise_hotelling(x, bool(paired), adjust_with)
        ii, jj = _pairs(n)
        r = np.asarray(rcond)
        bad = np.flatnonzero(~(r > 1e-10))
        if bad.size:
            lab = names or tuple(str(v) for v in range(n))
            first = int(bad[0])
            _check_rcond(
                r[first],
                f"The covariance of x[{lab[ii[first]]}] - x[{lab[jj[first]]}]",
                None,
                "Drop a redundant measure or use more folds.",
            )
    fields = {}
    if method == "permutation":
        perm = _pairwise_permutation(
            x, test, bool(paired), correction, n_resamples, typed_key, seed
        )
        p = perm.pvalue
        padj = perm.pvalue_adjusted if correction == "maxT" else _adjust(p, correction)
        fields = dict(
            pvalue_interval=jnp.asarray(_square(perm.pvalue_interval, n, 1.0)),
            n_resamples=perm.n_resamples,
            seed=perm.seed,
            permutation_method=perm.permutation_method,
        )
    stat_m = _square(stat, n, 0.0, antisym=(test == "t"))
    p_m = _square(p, n, 1.0)
    padj_m = _square(padj, n, 1.0)
    rej = padj_m <= alpha
    np.fill_diagonal(rej, False)
    cl = tuple(cliques(rej, names))
    hib = bool(higher_is_better)
    order = ordering(np.asarray(mean), rej, names, higher_is_better=hib) if test == "t" else None
    return PosthocResult(
        statistic=jnp.asarray(stat_m),
        pvalue=jnp.asarray(p_m),
        pvalue_adjusted=jnp.asarray(padj_m),
        reject=jnp.asarray(rej),
        mean=scale_back(mean, factor),
        cliques=cl,
        ordering=order,
        names=names,
        test=test,
        correction=correction,
        alpha=alpha,
        paired=bool(paired),
        method=method,
        **fields,
    )
