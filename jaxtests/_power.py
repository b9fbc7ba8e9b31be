"""Analytic power and sample size of the paired designs: the paired t test (also on
clustered items) and McNemar's test.

Each function follows statsmodels' ``solve_power``: give all but one of the number of
items, the effect and the power, and the missing one (``None``) is solved for.
"""

import math
import numbers

import numpy as np
from scipy import optimize, stats

from jaxtests._results import result, static_field
from jaxtests._validation import ALTERNATIVES, check_choice
from jaxtests._validation import check_probability as _probability

__all__ = ["McNemarPowerResult", "TtestPowerResult", "mcnemar_power", "ttest_paired_power"]

# brentq's tolerances: the solved quantity to about 1e-12 relative
_XTOL, _RTOL = 1e-14, 1e-13


# ----------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------


@result
class TtestPowerResult:
    """Result of :func:`ttest_paired_power`.

    Attributes
    ----------
    power : float
        Probability that the paired t test rejects at ``alpha``.
    n : int
        Items (pairs of scores); the solved ``n`` rounded up (to whole clusters when
        clustered, so ``n = n_clusters * cluster_size``).
    n_real : float
        The real-valued solution of the power equation (``n`` itself when given).
    effect_size : float
        Cohen's ``d_z``: the mean of the per-item differences over their standard
        deviation (negative for ``alternative="less"``).
    difference : float or None
        The mean difference in the scores' units, where a standard deviation was given.
    sd : float or None
        The standard deviation of one per-item difference, where given or derived.
    n_clusters : float or None
        Clusters ``n / cluster_size`` of a clustered design (whole when solved for).
    design_effect : float
        Variance inflation of the mean by clustering (1 without clusters).
    df : float
        Degrees of freedom of the t test: ``n - 1``, or ``n_clusters - 1`` clustered.
    alpha, alternative, solved_for
        The level, the alternative, and which of ``"n"``, ``"effect"``, ``"power"``
        was solved for.
    """

    power: float
    n: int
    n_real: float
    effect_size: float
    difference: float | None = None
    sd: float | None = None
    n_clusters: float | None = None
    design_effect: float = 1.0
    df: float = 0.0
    alpha: float = static_field(default=0.05)
    alternative: str = static_field(default="two-sided")
    solved_for: str = static_field(default="power")


@result
class McNemarPowerResult:
    """Result of :func:`mcnemar_power`.

    Attributes
    ----------
    power : float
        Probability that :func:`jaxtests.mcnemar` with ``method`` (and
        ``correction``) rejects at ``alpha``.
    n : int
        Items (test instances).
    n_real : float or None
        The real-valued ``n`` of Connor's formula (``power_method="connor"``); None
        where the power is summed over whole items.
    p01, p10 : float
        Probabilities of the discordant outcomes: A right and B wrong (the event that
        ``McNemarResult.n01`` counts), and A wrong and B right (``n10``).
    p1, p2 : float or None
        Accuracies of A and B, where given (or solved).
    correlation : float or None
        Phi coefficient of the two models' 0/1 correctness, where given.
    difference : float
        ``p1 - p2 = p01 - p10``.
    alpha, method, correction, power_method, solved_for
        The level, the test (:func:`jaxtests.mcnemar`'s ``method`` and
        ``correction``), how its power was computed, and what was solved for.
    """

    power: float
    n: int
    n_real: float | None
    p01: float
    p10: float
    p1: float | None = None
    p2: float | None = None
    correlation: float | None = None
    difference: float = 0.0
    alpha: float = static_field(default=0.05)
    method: str = static_field(default="exact")
    correction: bool = static_field(default=True)
    power_method: str = static_field(default="enumerate")
    solved_for: str = static_field(default="power")


# ----------------------------------------------------------------------------------------
# Validation helpers
# ----------------------------------------------------------------------------------------


def _real(value, name, *, low=-math.inf, high=math.inf, low_open=False, high_open=False):
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    x = float(value)
    ok = (
        math.isfinite(x)
        and (x > low if low_open else x >= low)
        and (x < high if high_open else x <= high)
    )
    if not ok:
        lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
        raise ValueError(f"`{name}` must lie in {lo}{low:g}, {high:g}{hi}, got {value!r}.")
    return x


def _power_iv(power, alpha):
    if power is None:
        return None
    p = _real(power, "power", low=0.0, high=1.0, low_open=True, high_open=True)
    if p <= alpha:
        raise ValueError(
            f"`power`={p:g} must exceed `alpha`={alpha:g}: the test rejects with "
            "probability alpha at no effect."
        )
    return p


def _one_missing(names, values):
    missing = [n for n, v in zip(names, values) if v is None]
    if len(missing) != 1:
        given = ", ".join(f"`{n}`" for n in names)
        raise ValueError(
            f"exactly one of {given} must be None (the one solved for); got "
            f"{len(missing)} None ({', '.join(missing) or 'none'})."
        )
    return missing[0]


def _alternative_iv(alternative):
    return check_choice(alternative, "alternative", ALTERNATIVES)


def _brentq(f, lo, hi):
    return optimize.brentq(f, lo, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500)


# ----------------------------------------------------------------------------------------
# Paired t
# ----------------------------------------------------------------------------------------


def _nct_sf(x, df, nc):
    """scipy's ``nct.sf``, whose far tails at few degrees of freedom can be NaN."""
    v = stats.nct.sf(x, df, nc)
    if np.isnan(v):
        v = 1.0 - stats.nct.cdf(x, df, nc)
    if np.isnan(v):
        # both NaN only where the tail is far below 1e-30 (or its complement is)
        v = 0.0 if x > nc else 1.0
    return float(v)


def _t_power(nc, df, alpha, alternative):
    """Power of the one-sample t test with noncentrality ``nc`` (statsmodels' ``ttest_power``)."""
    if alternative == "two-sided":
        crit = stats.t.isf(alpha / 2, df)
        # P(T <= -crit; nc) = P(T >= crit; -nc) by the symmetry of the t
        return _nct_sf(crit, df, nc) + _nct_sf(crit, df, -nc)
    crit = stats.t.isf(alpha, df)
    if alternative == "greater":
        return _nct_sf(crit, df, nc)
    return _nct_sf(crit, df, -nc)


class _TDesign:
    """``n`` items in clusters of mean size ``m``: t with ``n / m - 1`` df (``m = 1``:
    ``n - 1``) and noncentrality ``d_z sqrt(n / design_effect)``."""

    def __init__(self, m, design_effect, clustered):
        self.m, self.de, self.clustered = m, design_effect, clustered

    def power(self, n, d, alpha, alternative):
        df = n / self.m - 1
        return _t_power(d * math.sqrt(n / self.de), df, alpha, alternative)

    def min_n(self):
        return 2.0 * self.m  # a t test needs df >= 1


def _scale_iv(sd, sd_a, sd_b, correlation):
    """The standard deviation of one per-item difference, or None."""
    pair = (sd_a, sd_b, correlation)
    if sd is not None:
        if any(x is not None for x in pair):
            raise ValueError("give either `sd` or `sd_a`, `sd_b` and `correlation`, not both.")
        return _real(sd, "sd", low=0.0, low_open=True)
    if all(x is None for x in pair):
        return None
    if any(x is None for x in pair):
        raise ValueError(
            "`sd_a`, `sd_b` and `correlation` go together: the sd of a difference is "
            "sqrt(sd_a^2 + sd_b^2 - 2 correlation sd_a sd_b)."
        )
    sa = _real(sd_a, "sd_a", low=0.0, low_open=True)
    sb = _real(sd_b, "sd_b", low=0.0, low_open=True)
    r = _real(correlation, "correlation", low=-1.0, high=1.0)
    var = sa * sa + sb * sb - 2 * r * sa * sb
    if not var > 0:
        raise ValueError(
            f"`correlation`={r:g} with equal `sd_a` and `sd_b` makes every difference equal "
            "to the mean difference (sd 0): no test is needed, and no power is defined."
        )
    return math.sqrt(var)


def _cluster_iv(cluster_size, icc, cluster_size_cv):
    if cluster_size is None:
        if icc is not None or cluster_size_cv != 0:
            raise ValueError("`icc` and `cluster_size_cv` need `cluster_size`.")
        return _TDesign(1.0, 1.0, False)
    m = _real(cluster_size, "cluster_size", low=1.0)
    if icc is None:
        raise ValueError("`cluster_size` needs `icc`, the intra-cluster correlation.")
    rho = _real(icc, "icc", low=0.0, high=1.0)
    cv = _real(cluster_size_cv, "cluster_size_cv", low=0.0)
    # Eldridge, Ashby & Kerry (2006), eq. 6: 1 + ((cv^2 + 1) m - 1) rho; cv = 0 gives
    # the design effect of equal clusters, 1 + (m - 1) rho (Kish 1965).
    return _TDesign(m, 1.0 + ((cv * cv + 1.0) * m - 1.0) * rho, True)


def ttest_paired_power(
    n=None,
    effect_size=None,
    power=None,
    *,
    difference=None,
    sd=None,
    sd_a=None,
    sd_b=None,
    correlation=None,
    cluster_size=None,
    icc=None,
    cluster_size_cv=0.0,
    alpha=0.05,
    alternative="two-sided",
):
    """Power, items or detectable effect of the paired t test (:func:`jaxtests.ttest_paired`).

    Give all but one of ``n``, the effect and ``power``; the one left ``None`` is solved
    for (statsmodels' ``TTestPower.solve_power``). The effect is Cohen's ``d_z``
    (``effect_size``) or a mean ``difference`` with the standard deviation of one
    per-item difference: ``sd``, or the two models' score deviations ``sd_a``, ``sd_b``
    and the ``correlation`` of their per-item scores.

    Parameters
    ----------
    n : int or None
        Items (pairs of scores). None: solve for it.
    effect_size : float or None
        Cohen's ``d_z = mean(d) / sd(d)`` of the per-item differences ``d = a - b``.
    power : float or None
        Target power, in ``(alpha, 1)``. None: compute it.
    difference : float or None
        The mean difference in the scores' units, instead of ``effect_size`` (needs a
        standard deviation). Leave both None to solve for the effect.
    sd : float or None
        Standard deviation of one per-item difference.
    sd_a, sd_b, correlation : float or None
        Instead of ``sd``: the two models' per-item score deviations and the correlation
        of their scores, ``sd = sqrt(sd_a^2 + sd_b^2 - 2 correlation sd_a sd_b)``.
    cluster_size : float or None
        Mean items per cluster (questions per passage...) for a clustered design,
        analysed by the cluster-robust t with ``n_clusters - 1`` degrees of freedom.
    icc : float or None
        Intra-cluster correlation of the per-item differences, in [0, 1].
    cluster_size_cv : float
        Coefficient of variation of the cluster sizes (0: equal sizes).
    alpha : float
        Level of the test.
    alternative : {"two-sided", "greater", "less"}
        As :func:`jaxtests.ttest_paired`'s (``"greater"``: mean of ``a - b`` above 0).

    Returns
    -------
    TtestPowerResult
        ``power``, ``n`` (rounded up), ``n_real``, ``effect_size``, ``difference``, ``sd``,
        ``n_clusters``, ``design_effect``, ``df``.

    Notes
    -----
    With ``n`` items the statistic is noncentral t with ``n - 1`` degrees of freedom and
    noncentrality ``d_z sqrt(n)``; the power is its probability beyond the critical
    values (scipy's ``nct``), as statsmodels' ``TTestPower``. Clustered items: with
    ``G = n / cluster_size`` clusters and design effect
    ``DE = 1 + ((cv^2 + 1) m - 1) icc`` (Eldridge et al. 2006; ``1 + (m - 1) icc`` for
    equal sizes ``m``, Kish 1965), the noncentrality is ``d_z sqrt(n / DE)`` and the
    degrees of freedom ``G - 1``. For equal clusters and normal differences that is the
    exact power of the t test on the ``G`` cluster means, which is what the CR1
    cluster-robust t reduces to; for unequal sizes it is an approximation. A solved ``n``
    is rounded up to whole items (whole clusters when clustered). The solved effect is
    positive, negative for ``alternative="less"``.

    References
    ----------
    Cohen, J. (1988), Statistical Power Analysis for the Behavioral Sciences, 2nd ed.
    Eldridge, S. M., Ashby, D. & Kerry, S. (2006), Sample size for cluster randomized
    trials: effect of coefficient of variation of cluster size and analysis method,
    Int. J. Epidemiol. 35, 1292-1300. Kish, L. (1965), Survey Sampling.

    Examples
    --------
    >>> from jaxtests import power
    >>> r = power.ttest_paired_power(effect_size=0.5, power=0.8)  # how many items?
    >>> r.n, round(r.n_real, 4)
    (34, 33.3671)
    >>> round(power.ttest_paired_power(n=200, power=0.8).effect_size, 4)  # detectable d_z
    0.1991
    >>> r = power.ttest_paired_power(difference=0.02, sd=0.2, power=0.8,
    ...                              cluster_size=5, icc=0.3)  # 5 questions per passage
    >>> r.n, r.n_clusters, round(r.design_effect, 2)
    (1740, 348.0, 2.2)
    """
    alpha = _probability(alpha, "alpha")
    alternative = _alternative_iv(alternative)
    design = _cluster_iv(cluster_size, icc, cluster_size_cv)
    scale = _scale_iv(sd, sd_a, sd_b, correlation)
    if effect_size is not None and difference is not None:
        raise ValueError("give either `effect_size` or `difference`, not both.")
    if difference is not None:
        if scale is None:
            raise ValueError("`difference` needs `sd` (or `sd_a`, `sd_b` and `correlation`).")
        effect = _real(difference, "difference") / scale
    elif effect_size is not None:
        effect = _real(effect_size, "effect_size")
    else:
        effect = None
    power = _power_iv(power, alpha)
    solved = _one_missing(("n", "effect_size/difference", "power"), (n, effect, power))
    if n is not None:
        if isinstance(n, bool | np.bool_) or not isinstance(n, numbers.Integral):
            raise TypeError(f"`n` must be an int, got {type(n).__name__} {n!r}.")
        if n < design.min_n():
            why = "two clusters' worth of items: " if design.clustered else ""
            raise ValueError(
                f"`n` must be at least {design.min_n():g} ({why}a t with 1 degree of "
                f"freedom), got {n}."
            )
        n_real = float(n)
    if effect is not None and alternative != "two-sided" and effect != 0:
        if (effect > 0) != (alternative == "greater"):
            raise ValueError(
                f"the effect ({effect:g}) lies on the other side of `alternative`="
                f"{alternative!r}: its power would be below alpha."
            )

    if solved == "power":
        power = design.power(n_real, effect, alpha, alternative)
    elif solved == "n":
        if effect == 0:
            raise ValueError("no `n` gives power above alpha at effect 0.")
        lo = design.min_n()
        if design.power(lo, effect, alpha, alternative) >= power:
            n_real = lo
        else:
            hi = 2 * lo
            while design.power(hi, effect, alpha, alternative) < power:
                hi *= 2
            n_real = _brentq(lambda x: design.power(x, effect, alpha, alternative) - power, lo, hi)
    else:
        sign = -1.0 if alternative == "less" else 1.0
        hi = 1.0
        while design.power(n_real, sign * hi, alpha, alternative) < power:
            hi *= 2
        effect = sign * _brentq(
            lambda e: design.power(n_real, sign * e, alpha, alternative) - power, 0.0, hi
        )

    n_clusters = None
    if solved == "n":
        # whole items; clustered: whole clusters
        if design.clustered:
            g = math.ceil(n_real / design.m - 1e-9)
            n_int = math.ceil(g * design.m - 1e-9)
        else:
            n_int = math.ceil(n_real - 1e-9)
        power = design.power(float(n_int), effect, alpha, alternative)
    else:
        n_int = int(n_real)
    if design.clustered:
        n_clusters = n_int / design.m if solved != "n" else float(g)
    return TtestPowerResult(
        power=float(power),
        n=int(n_int),
        n_real=float(n_real),
        effect_size=float(effect),
        difference=None if scale is None else float(effect * scale),
        sd=scale,
        n_clusters=n_clusters,
        design_effect=float(design.de),
        df=float((n_clusters if design.clustered else n_int) - 1),
        alpha=alpha,
        alternative=alternative,
        solved_for={"effect_size/difference": "effect"}.get(solved, solved),
    )


# ----------------------------------------------------------------------------------------
# McNemar
# ----------------------------------------------------------------------------------------

MCNEMAR_METHODS = ("exact", "midp", "chi2")
POWER_METHODS = ("enumerate", "connor")
# Above this many items a solved n is found by bisection rather than by scanning every n.
_SCAN_LIMIT = 2**12


def _mcnemar_pvalue(m, nd, method, correction):
    """:func:`jaxtests.mcnemar`'s p-value where the smaller discordant count is ``m`` of ``nd``."""
    if method == "chi2":
        diff = nd - 2.0 * m
        if correction:
            diff = np.where(diff >= 1, diff - 1, diff)
        stat = np.where(nd > 0, diff**2 / np.maximum(nd, 1), 0.0)
        return stats.chi2.sf(stat, 1)
    cdf = stats.binom.cdf(m, nd, 0.5)
    if method == "exact":
        return np.minimum(1.0, 2 * cdf)
    return np.minimum(1.0, 2 * cdf - stats.binom.pmf(m, nd, 0.5))


def _critical(nd, alpha, method, correction):
    """Largest ``c`` with p(c) <= alpha for each count ``nd`` of discordant items (-1: none).

    Every method's p-value rises with the smaller count ``m`` up to ``nd / 2``, so
    McNemar's test rejects exactly when ``min(n01, n10) <= c``; found by bisection.
    """
    lo = np.full(nd.shape, -1.0)  # p(lo) <= alpha, p(-1) taken as 0
    hi = np.floor(nd / 2) + 1  # p(hi) > alpha, hi past the range
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        ok = _mcnemar_pvalue(mid, nd, method, correction) <= alpha
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lo


def _rejection(nd, pi, alpha, method, correction):
    """P(reject | nd discordant items) for each count in ``nd``: n01 ~ Bin(nd, pi)."""
    c = _critical(nd, alpha, method, correction)
    # c < nd / 2, so the two tails {n01 <= c} and {n01 >= nd - c} are disjoint
    r = stats.binom.cdf(c, nd, pi) + stats.binom.sf(nd - c - 1, nd, pi)
    return np.where(c >= 0, r, 0.0)


def _enumerated_power(n, p01, p10, alpha, method, correction):
    """Exact power at ``n`` items: nd ~ Bin(n, p01 + p10), then the conditional power."""
    psi = p01 + p10
    # Bin(n, psi) beyond 12 sd (plus a margin for small n) holds under 1e-30 of the mass
    half = 12 * math.sqrt(n * psi * (1 - psi)) + 20
    nd = np.arange(max(0, math.floor(n * psi - half)), min(n, math.ceil(n * psi + half)) + 1)
    nd = nd.astype(np.float64)
    r = _rejection(nd, p01 / psi, alpha, method, correction)
    return float(np.dot(stats.binom.pmf(nd, n, psi), r))


def _enumerated_curve(n_max, p01, p10, alpha, method, correction):
    """Exact power at every ``n = 0..n_max``, the Bin(n, psi) weights built one n at a time."""
    psi = p01 + p10
    r = _rejection(np.arange(n_max + 1.0), p01 / psi, alpha, method, correction)
    w = np.zeros(n_max + 1)
    w[0] = 1.0
    out = np.empty(n_max + 1)
    out[0] = 0.0
    for n in range(1, n_max + 1):
        # Bin(n, psi) from Bin(n - 1, psi): one more item, discordant with probability psi
        w[1 : n + 1] = (1 - psi) * w[1 : n + 1] + psi * w[:n]
        w[0] *= 1 - psi
        out[n] = np.dot(w[: n + 1], r[: n + 1])
    return out


def _connor_power(n, p01, p10, alpha):
    """Connor (1987), eq. 3: the uncorrected McNemar z test's power, the far tail left out."""
    psi, delta = p01 + p10, abs(p01 - p10)
    if psi - delta**2 <= 0:  # every item discordant one way: the statistic has no spread
        return 1.0
    z = stats.norm.isf(alpha / 2)
    return float(
        stats.norm.cdf((delta * math.sqrt(n) - z * math.sqrt(psi)) / math.sqrt(psi - delta**2))
    )


def _connor_n(p01, p10, alpha, power):
    """Connor (1987), eq. 4: ``n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2``."""
    psi, delta = p01 + p10, p01 - p10
    za, zb = stats.norm.isf(alpha / 2), stats.norm.ppf(power)
    return (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2


def _discordant(p1, p2, phi):
    """``(p01, p10)`` of accuracies ``p1``, ``p2`` and the phi correlation of correctness."""
    p11 = p1 * p2 + phi * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    # at phi's bounds a discordant probability is 0 up to rounding
    return min(max(p1 - p11, 0.0), 1.0), min(max(p2 - p11, 0.0), 1.0)


def _phi_bounds(p1, p2):
    """The phi coefficients two Bernoulli variables with means ``p1``, ``p2`` can have."""
    s = math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    if s == 0:
        return -1.0, 1.0
    return (max(0.0, p1 + p2 - 1) - p1 * p2) / s, (min(p1, p2) - p1 * p2) / s


def _check_phi(p1, p2, phi):
    lo, hi = _phi_bounds(p1, p2)
    if not lo - 1e-12 <= phi <= hi + 1e-12:
        raise ValueError(
            f"`correlation`={phi:g} is impossible for accuracies {p1:g} and {p2:g}: the phi "
            f"coefficient of their correctness lies in [{lo:.4g}, {hi:.4g}]."
        )


def _mcnemar_design_iv(p1, p2, correlation, p01, p10):
    """``"accuracies"`` or ``"discordant"``, and the unknown among p1 / p01 (or None)."""
    acc = (p1, p2, correlation)
    dis = (p01, p10)
    if any(x is not None for x in acc) and any(x is not None for x in dis):
        raise ValueError(
            "give either the accuracies (`p1`, `p2`, `correlation`) or the discordant "
            "probabilities (`p01`, `p10`), not both."
        )
    if any(x is not None for x in dis):
        if p10 is None:
            raise ValueError("`p10` is needed (solve for `p01`, A's advantage, instead).")
        return "discordant"
    if p2 is None or correlation is None:
        raise ValueError(
            "give `p2` and `correlation` with `p1` (or the discordant `p01` and `p10`)."
        )
    return "accuracies"


def mcnemar_power(
    n=None,
    power=None,
    *,
    p1=None,
    p2=None,
    correlation=None,
    p01=None,
    p10=None,
    alpha=0.05,
    method="exact",
    correction=True,
    power_method="enumerate",
):
    """Power, items or detectable accuracy difference of McNemar's test (:func:`jaxtests.mcnemar`).

    Give all but one of ``n``, the effect and ``power``; the one left ``None`` is solved
    for. The design is either the two models' accuracies ``p1`` (A) and ``p2`` (B) with
    the ``correlation`` (phi) of their 0/1 correctness on an item, or directly the
    discordant probabilities ``p01`` (A right, B wrong) and ``p10`` (A wrong, B right).
    The effect left to solve is ``p1`` (given ``p2`` and ``correlation``) or ``p01``
    (given ``p10``): the accuracy of A that the test detects.

    Parameters
    ----------
    n : int or None
        Items (test instances). None: solve for it.
    power : float or None
        Target power, in ``(alpha, 1)``. None: compute it.
    p1, p2 : float or None
        Accuracies of A and B, in [0, 1].
    correlation : float or None
        Phi coefficient of A's and B's correctness on the same item, within the bounds
        that ``p1`` and ``p2`` allow.
    p01, p10 : float or None
        Instead of the accuracies: P(A right, B wrong) (``McNemarResult.n01``'s event)
        and P(A wrong, B right) (``n10``'s).
    alpha : float
        Level of the test.
    method : {"exact", "midp", "chi2"}
        The test, as :func:`jaxtests.mcnemar`'s (default ``"exact"``, as there).
    correction : bool
        Continuity correction of ``"chi2"``, as :func:`jaxtests.mcnemar`.
    power_method : {"enumerate", "connor"}
        ``"enumerate"``: the exact power of ``method``, summed over the binomial counts
        of discordant items. ``"connor"``: Connor's (1987) normal approximation, which is
        for the uncorrected chi-square test (needs ``method="chi2"``,
        ``correction=False``).

    Returns
    -------
    McNemarPowerResult
        ``power``, ``n``, ``n_real`` (Connor's only), ``p01``, ``p10``, ``p1``, ``p2``,
        ``correlation``, ``difference``.

    Notes
    -----
    With ``p11 = p1 p2 + phi sqrt(p1 (1 - p1) p2 (1 - p2))`` (both right),
    ``p01 = p1 - p11`` and ``p10 = p2 - p11``. The discordant count ``N_d`` is
    Bin(n, psi), ``psi = p01 + p10``, and given ``N_d`` the count ``n01`` is
    Bin(N_d, p01 / psi). McNemar's test (every method) rejects when
    ``min(n01, n10) <= c(N_d)``, so ``"enumerate"`` sums
    ``P(N_d = k) P(reject | N_d = k)`` over ``k = 0..n``: the exact power, no simulation
    and no approximation. It saw-tooths in ``n`` (discrete critical values): the solved
    ``n`` is the smallest with at least the target power (every ``n`` scanned up to
    4,096 items, bisection beyond). Connor (1987):
    ``power = Phi((|delta| sqrt(n) - z_{1-alpha/2} sqrt(psi)) / sqrt(psi - delta^2))``,
    ``delta = p01 - p10``, and ``n = (z_{1-alpha/2} sqrt(psi) + z_power
    sqrt(psi - delta^2))^2 / delta^2`` (its ``n_real``; Lachin 1992's unconditional
    formula). The test is two-sided (as :func:`jaxtests.mcnemar`); the solved effect
    has A the more accurate.

    References
    ----------
    Connor, R. J. (1987), Sample size for testing differences in proportions for the
    paired-sample design, Biometrics 43, 207-211. Lachin, J. M. (1992), Power and sample
    size evaluation for the McNemar test with application to matched case-control
    studies, Stat. Med. 11, 1239-1251.

    Examples
    --------
    >>> from jaxtests import power
    >>> r = power.mcnemar_power(p1=0.80, p2=0.75, correlation=0.5, power=0.8)
    >>> r.n, round(r.p01, 4), round(r.p10, 4)  # items for the exact test (the default)
    (584, 0.1134, 0.0634)
    >>> r = power.mcnemar_power(n=1000, p2=0.75, correlation=0.5, power=0.8)
    >>> round(r.p1, 4)  # the accuracy of A that 1,000 items detect against 0.75
    0.7883
    """
    alpha = _probability(alpha, "alpha")
    check_choice(method, "method", MCNEMAR_METHODS)
    if not isinstance(correction, bool | np.bool_):
        raise TypeError(f"`correction` must be a bool, got {type(correction).__name__}.")
    correction = bool(correction)
    check_choice(power_method, "power_method", POWER_METHODS)
    if power_method == "connor" and (method != "chi2" or correction):
        raise ValueError(
            "`power_method`='connor' is the power of the uncorrected chi-square test: use it "
            "with `method`='chi2' and `correction`=False."
        )
    power = _power_iv(power, alpha)
    form = _mcnemar_design_iv(p1, p2, correlation, p01, p10)
    unknown = "p1" if form == "accuracies" else "p01"
    effect_given = p1 if form == "accuracies" else p01
    solved = _one_missing(("n", unknown, "power"), (n, effect_given, power))
    if n is not None:
        if isinstance(n, bool | np.bool_) or not isinstance(n, numbers.Integral):
            raise TypeError(f"`n` must be an int, got {type(n).__name__} {n!r}.")
        if n < 1:
            raise ValueError(f"`n` must be at least 1, got {n}.")
        n = int(n)

    if form == "accuracies":
        p2 = _real(p2, "p2", low=0.0, high=1.0)
        phi = _real(correlation, "correlation", low=-1.0, high=1.0)
        if p1 is not None:
            p1 = _real(p1, "p1", low=0.0, high=1.0)
            _check_phi(p1, p2, phi)
    else:
        p10 = _real(p10, "p10", low=0.0, high=1.0)
        if p01 is not None:
            p01 = _real(p01, "p01", low=0.0, high=1.0)
            if p01 + p10 > 1 + 1e-12:
                raise ValueError(f"`p01` + `p10` must be at most 1, got {p01 + p10:g}.")

    def discordant(x):
        return _discordant(x, p2, phi) if form == "accuracies" else (x, p10)

    def power_at(nn, q01, q10):
        if q01 + q10 <= 0:
            return 0.0  # no discordant items: McNemar's test never rejects
        if power_method == "connor":
            return _connor_power(nn, q01, q10, alpha)
        return _enumerated_power(int(nn), q01, q10, alpha, method, correction)

    n_real = None
    if solved == "p1" or solved == "p01":
        # A's accuracy (or advantage) from no effect to the largest the design allows
        if form == "accuracies":
            lo = p2
            hi = _largest_p1(p2, phi)
        else:
            lo, hi = p10, 1.0 - p10
        if not hi > lo or power_at(n, *discordant(hi)) < power:
            raise ValueError(
                f"no `{unknown}` reaches power {power:g} with n={n}: even the largest "
                f"feasible ({hi:.4g}) gives {power_at(n, *discordant(hi)):.4g}."
            )
        x = _brentq(lambda x: power_at(n, *discordant(x)) - power, lo, hi)
        if form == "accuracies":
            p1 = x
        else:
            p01 = x
    q01, q10 = discordant(p1 if form == "accuracies" else p01)
    if solved == "n":
        if q01 == q10:
            raise ValueError(
                "the two models are equally accurate (p01 == p10): no `n` gives power above alpha."
            )
        if power_method == "connor":
            n_real = _connor_n(q01, q10, alpha, power)
            n = max(1, math.ceil(n_real - 1e-9))
        else:
            n = _smallest_n(q01, q10, alpha, method, correction, power)
    elif power_method == "connor":
        n_real = float(n)
    power = power_at(n, q01, q10)
    return McNemarPowerResult(
        power=float(power),
        n=int(n),
        n_real=n_real,
        p01=float(q01),
        p10=float(q10),
        p1=None if form != "accuracies" else float(p1),
        p2=None if form != "accuracies" else float(p2),
        correlation=None if form != "accuracies" else float(phi),
        difference=float(q01 - q10),
        alpha=alpha,
        method=method,
        correction=correction,
        power_method=power_method,
        solved_for={"p1": "effect", "p01": "effect"}.get(solved, solved),
    )


def _largest_p1(p2, phi):
    """The largest accuracy of A that phi allows beside ``p2``."""

    def feasible(p):
        lo, hi = _phi_bounds(p, p2)
        return lo - 1e-12 <= phi <= hi + 1e-12

    top = 1.0 - 1e-12
    if not 0 < p2 < 1 or feasible(top):
        return top if 0 < p2 < 1 else p2
    # every phi is feasible at p1 = p2, and the feasible p1 beyond it form an interval
    lo, hi = p2, top
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if feasible(mid) else (lo, mid)
    return lo


def _smallest_n(p01, p10, alpha, method, correction, power):
    """The smallest n whose enumerated power reaches ``power``."""
    guess = _connor_n(p01, p10, alpha, power)
    n_max = min(_SCAN_LIMIT, max(64, math.ceil(2 * guess)))
    while True:
        curve = _enumerated_curve(n_max, p01, p10, alpha, method, correction)
        hit = np.flatnonzero(curve >= power)
        if hit.size:
            return int(hit[0])
        if n_max >= _SCAN_LIMIT:
            break
        n_max = min(_SCAN_LIMIT, 2 * n_max)
    lo, hi = n_max, 2 * n_max
    while _enumerated_power(hi, p01, p10, alpha, method, correction) < power:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _enumerated_power(mid, p01, p10, alpha, method, correction) >= power:
            hi = mid
        else:
            lo = mid
    return hi
