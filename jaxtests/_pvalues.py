"""P-value arithmetic shared by the resampling tests: ties, tails, counts, intervals.

Every resampling p-value of the library goes through these few functions, so
the conventions are stated once: a resampled statistic ties the observed one
within :func:`tie_tol`; a Monte Carlo p-value is ``(count + 1) / (n + 1)``
(Phipson & Smyth 2010), an exact one ``count / n``; a two-sided p-value is
twice the smaller tail, capped at 1 (scipy's ``permutation_test``); the
uncertainty of a Monte Carlo count is a Clopper-Pearson interval.
"""

import numpy as np

from jaxtests.kernels import exceedance as kexceedance

__all__ = [
    "CI_LEVEL",
    "EPS",
    "clopper_pearson",
    "combine_tails",
    "counts_to_pvalues",
    "sign_test",
    "tie_tol",
]

EPS = kexceedance.EPS
CI_LEVEL = 0.99  # level of the Monte Carlo intervals of p-values
tie_tol = kexceedance.tie_tol  # one tie rule for every test (see its docstring)


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


def sign_test(pos, nz, alternative):
    """Exact sign-test p-value: ``pos`` positive among ``nz`` nonzero differences.

    Under sign flips ``pos ~ Binomial(nz, 1/2)``; ``nz = 0`` gives 1. The same
    as R's ``binom.test(pos, nz)`` and scipy's ``binomtest``.
    """
    from scipy import special  # binom.sf/cdf without importing scipy.stats

    pos = np.asarray(pos)
    nz = np.asarray(nz)
    with np.errstate(invalid="ignore"):
        p_ge = np.where((nz > 0) & (pos > 0), special.bdtrc(pos - 1, nz, 0.5), 1.0)
        p_le = np.where(nz > 0, special.bdtr(pos, nz, 0.5), 1.0)
    return combine_tails(p_ge, p_le, alternative)
