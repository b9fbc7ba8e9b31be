"""P-value arithmetic shared by the resampling tests: ties, tails, counts, intervals.

Every resampling p-value of the library goes through these few functions, so
the conventions are stated once: a resampled statistic ties the observed one
within :func:`tie_tol`; a Monte Carlo p-value is ``(count + 1) / (n + 1)``
(Phipson & Smyth 2010), an exact one ``count / n``; a two-sided p-value is
twice the smaller tail, capped at 1 (scipy's ``permutation_test``); the
uncertainty of a Monte Carlo count is a Clopper-Pearson interval.
"""

import functools

import numpy as np

from jaxtests.kernels import exceedance as kexceedance

__all__ = [
    "CI_LEVEL",
    "EPS",
    "clopper_pearson",
    "combine_tails",
    "counts_to_pvalues",
    "lattice_counts",
    "lattice_feasible",
    "sign_test",
    "tie_tol",
]

EPS = kexceedance.EPS
CI_LEVEL = 0.99  # level of the Monte Carlo intervals of p-values
tie_tol = kexceedance.tie_tol  # one tie rule for every test (see its docstring)
LATTICE_WORK = 2**30  # additions of a subset-sum count (about a second in numpy)
LATTICE_MAX_M = 1000  # 2^-m stays a normal float64 (probabilities past 62 terms)


def combine_tails(p_ge, p_le, alternative):
    """The p-value of ``alternative`` from the two one-sided tail probabilities.

    ``"greater"``: ``P(T >= t)``; ``"less"``: ``P(T <= t)``; ``"two-sided"``:
    twice the smaller, capped at 1 (scipy's ``permutation_test`` and R's
    ``binom.test`` for symmetric nulls).
    """
    if alternative == "greater":
        return p_ge
    if alternative == "less":
        return p_le
    return np.minimum(1.0, 2.0 * np.minimum(p_ge, p_le))


def clopper_pearson(k, n, level=CI_LEVEL):
    """Clopper-Pearson interval ``(low, high)`` of a binomial proportion ``k / n`` (numpy).

    The beta quantiles of R's ``binom.test``; ``low = 0`` at ``k = 0`` and
    ``high = 1`` at ``k = n``.
    """
    # scipy.special, not scipy.stats (~0.5-4 s to import): beta.ppf is betaincinv.
    from scipy import special

    k = np.asarray(k, float)
    n = np.asarray(n, float)
    a = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1), n - k + 1, a), 0.0)
        hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1), 1 - a), 1.0)
    return lo, hi


def counts_to_pvalues(ge, le, n, alternative, exact, level=CI_LEVEL):
    """p-values, tail counts and intervals from the counts ``ge``/``le`` of ``n`` draws.

    ``ge`` counts draws at least as large as the observed statistic (ties
    included), ``le`` at most as large. Exact (all ``n`` rearrangements):
    ``p = count / n`` and the interval is the point. Monte Carlo:
    ``p = (count + 1) / (n + 1)`` and a Clopper-Pearson interval of the
    underlying exact p-value (doubled, capped at 1, when two-sided).
    Returns ``(p, count, (low, high))``.
    """
    ge = np.asarray(ge)
    le = np.asarray(le)
    adj = 0 if exact else 1  # Phipson & Smyth (2010): a Monte Carlo p is never 0
    p = combine_tails((ge + adj) / (n + adj), (le + adj) / (n + adj), alternative)
    if alternative == "greater":
        cnt, factor = ge, 1.0
    elif alternative == "less":
        cnt, factor = le, 1.0
    else:
        cnt, factor = np.minimum(ge, le), 2.0
    if exact:
        return p, cnt, (p, p)
    lo, hi = clopper_pearson(cnt, n, level)
    return p, cnt, (np.minimum(1.0, factor * lo), np.minimum(1.0, factor * hi))


SIGN_TEST_EXACT_N = 4096  # up to this many nonzero differences the tails are exact rationals


@functools.lru_cache(maxsize=16)  # a row of n is n^2 / 2 bits: a few at a time
def _binomial_cdf_numerators(n):
    """``[sum_{j <= k} C(n, j) for k = 0 .. n]`` as Python ints (the tails over ``2^n``)."""
    row, c = [], 1
    total = 0
    for k in range(n + 1):
        total += c
        row.append(total)
        c = c * (n - k) // (k + 1)
    return row


def sign_test(pos, nz, alternative):
    """Exact sign-test p-value: ``pos`` positive among ``nz`` nonzero differences.

    Under sign flips ``pos ~ Binomial(nz, 1/2)``; ``nz = 0`` gives 1. The same
    as R's ``binom.test(pos, nz)`` and scipy's ``binomtest``: up to
    :data:`SIGN_TEST_EXACT_N` nonzero differences each tail is the float64 nearest
    its exact rational value (integer sums of binomial coefficients over ``2^nz``;
    cephes' ``bdtr`` is off by a few ulps, e.g. 0.4531249999999996 for 29/64), beyond
    that ``scipy.special.bdtr``/``bdtrc`` (relative error about 1e-15).
    """
    pos, nz = np.broadcast_arrays(np.asarray(pos), np.asarray(nz))
    p_ge = np.ones(pos.shape)
    p_le = p_ge.copy()
    for i in np.ndindex(pos.shape):  # one per hypothesis (never per resample)
        k, n = int(pos[i]), int(nz[i])
        if n == 0:
            continue
        if n <= SIGN_TEST_EXACT_N:
            cdf, whole = _binomial_cdf_numerators(n), 1 << n
            p_le[i] = cdf[k] / whole  # int / int: correctly rounded
            p_ge[i] = (whole - cdf[k - 1]) / whole if k > 0 else 1.0
        else:
            from scipy import special  # binom.sf/cdf without importing scipy.stats

            p_le[i] = special.bdtr(k, n, 0.5)
            p_ge[i] = special.bdtrc(k - 1, n, 0.5) if k > 0 else 1.0
    return combine_tails(p_ge, p_le, alternative)


def _lattice_weights(d):
    """``2 |d|`` as int64 when every ``2 d`` is an integer (ranks, counts), else None."""
    w = 2.0 * np.abs(np.asarray(d, dtype=np.float64))
    if not np.all(np.isfinite(w)) or np.any(w != np.round(w)) or np.any(w > 2.0**40):
        return None
    return w.astype(np.int64)


def lattice_feasible(d):
    """Whether :func:`lattice_counts` takes ``d : (H, m)``: every ``2 d`` integral, and the
    subset-sum table small enough (``m (sum 2|d| + 1) <= 2^30``, ``m <= 1000``)."""
    w = _lattice_weights(d)
    if w is None or w.shape[-1] > LATTICE_MAX_M:
        return False
    return w.shape[-1] * (int(w.sum(axis=-1).max(initial=0)) + 1) <= LATTICE_WORK


def lattice_counts(d, lo, hi):
    """Exact sign-flip tail counts ``#{P >= hi}``, ``#{P <= lo}`` by subset sums, ``d : (H, m)``.

    ``P`` is the sum of ``d`` over the instances whose sign is kept, over all ``2^m``
    patterns. When every ``2 d_i`` is an integer (signed ranks, integer counts),
    ``Q = 2 P + sum_{d_i < 0} |2 d_i|`` is a sum of a subset of the integers ``|2 d_i|``, whose
    distribution is counted exactly in ``O(m sum |2 d|)`` (the counting recursion of
    Wilcoxon's exact null, as scipy's for untied ranks). Counts are int64 up to
    ``m = 62``; beyond, probabilities (each step halves them: relative rounding
    ``~ m eps``), returned as counts times ``2^m``. Check :func:`lattice_feasible` first.
    """
    d = np.asarray(d, dtype=np.float64)
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), d.shape[:1])
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), d.shape[:1])
    m = d.shape[-1]
    exact = m <= 62
    ge = np.empty(d.shape[0], np.int64 if exact else np.float64)
    le = np.empty_like(ge)
    for h, row in enumerate(d):
        a = _lattice_weights(row)
        shift = int(np.sum(np.where(row < 0, a, 0)))  # Q = 2 P + shift
        c = np.zeros(int(a.sum()) + 1, np.int64 if exact else np.float64)
        c[0] = 1
        top = 0
        for w in a:  # a zero weight doubles every count (both signs give the same Q)
            c[w : top + w + 1] += c[: top + 1].copy() if w else c[: top + 1]
            top += w
            if not exact:
                c *= 0.5
        # P >= hi and P <= lo in Q; the bounds carry the tie tolerance.
        q_ge = int(np.ceil(2.0 * hi[h] + shift))
        q_le = int(np.floor(2.0 * lo[h] + shift))
        ge[h] = c[max(q_ge, 0) :].sum() if q_ge <= top else 0
        le[h] = c[: min(q_le, top) + 1].sum() if q_le >= 0 else 0
    if exact:
        return ge, le
    return ge * 2.0**m, le * 2.0**m
