"""An automatic report of a score table, as autorank makes one (Herbold 2020).

:meth:`ScoreTable.report` checks the assumptions of the parametric tests, picks the tests
by autorank's rules, runs them with jaxtests' own functions (:func:`jaxtests.anova`,
:func:`jaxtests.friedman`, :func:`jaxtests.nemenyi`, :func:`jaxtests.ttest_paired`,
:func:`jaxtests.wilcoxon`) and writes the result as prose, Markdown and LaTeX.
"""

import dataclasses

import numpy as np

from jaxtests import _direction, _results
from jaxtests import _validation as v
from jaxtests._report import column_format

__all__ = ["ScoreReport", "report"]

MIN_DATASETS = 5  # autorank's minimum (the normality checks need a few samples)
# Cohen (1988) for d and Akinshin's gamma; Romano et al. (2006) for Cliff's delta: the
# thresholds of autorank's ``_effect_level``.
MAGNITUDES = ((0.2, "negligible"), (0.5, "small"), (0.8, "medium"))
OMNIBUS_NAMES = {
    "anova": "repeated-measures ANOVA",
    "friedman": "Friedman test",
    "ttest": "paired t test",
    "wilcoxon": "Wilcoxon signed-rank test (one-sided)",
}
POSTHOC_NAMES = {"tukeyhsd": "Tukey's HSD", "nemenyi": "Nemenyi test"}


def magnitude(effect_size):
    """``"negligible"``, ``"small"``, ``"medium"`` or ``"large"`` for Cohen's d or gamma;
    ``"undefined"`` for NaN (0/0: constant scores)."""
    size = abs(float(effect_size))
    if np.isnan(size):
        return "undefined"
    for bound, word in MAGNITUDES:
        if size < bound:
            return word
    return "large"


@dataclasses.dataclass(frozen=True)
class ScoreReport:
    """Result of :meth:`ScoreTable.report`: the decisions, the numbers and their write-ups.

    Per-learner arrays are in the report's order, best first (by mean rank).
    ``to_dict()`` and ``to_json()`` give the fields as strict JSON (NaN as null), as
    every result's.

    Attributes
    ----------
    learners : tuple of str
        Best first.
    measure : str
    higher_is_better : bool
    alpha : float
    n_datasets : int
    normality_pvalues : ndarray ``(k,)``
        Shapiro-Wilk p-value of each learner's scores.
    alpha_normality : float
        ``alpha / k`` (Bonferroni); a learner is normal when its p-value is at least this.
    all_normal : bool
    homogeneity_test : {"bartlett", "levene"}
    homogeneity_pvalue : float
    homoscedastic : bool
        ``homogeneity_pvalue >= alpha``.
    omnibus : {"anova", "friedman", "ttest", "wilcoxon"}
    statistic, pvalue : float
        Of the omnibus test (F, chi-square, t or the signed-rank sum ``r_plus``).
    reject : bool
        ``pvalue <= alpha``: the learners differ.
    posthoc : {"tukeyhsd", "nemenyi"} or None
        None for two learners.
    posthoc_pvalues : ndarray ``(k, k)`` or None
    critical_difference : float or None
        Nemenyi's critical difference of mean ranks.
    groups : tuple of tuples of str
        Maximal sets of learners with no significant difference (post hoc), best first.
    center_name, spread_name : str
        ``"mean"`` and ``"std"`` when all learners are normal, else ``"median"`` and
        ``"mad"`` (the unscaled median absolute deviation).
    center, spread, mean_ranks : ndarray ``(k,)``
        ``mean_ranks``: rank 1 = best on a data set, ties averaged.
    effect_size_name : {"cohen_d", "akinshin_gamma"}
    effect_sizes : ndarray ``(k,)``
        Of the best learner against each (0 for itself); positive where the best is better.
    magnitudes : tuple of str
    """

    learners: tuple
    measure: str
    higher_is_better: bool
    alpha: float
    n_datasets: int
    normality_pvalues: np.ndarray
    alpha_normality: float
    all_normal: bool
    homogeneity_test: str
    homogeneity_pvalue: float
    homoscedastic: bool
    omnibus: str
    statistic: float
    pvalue: float
    reject: bool
    posthoc: str | None
    posthoc_pvalues: np.ndarray | None
    critical_difference: float | None
    groups: tuple
    center_name: str
    spread_name: str
    center: np.ndarray
    spread: np.ndarray
    mean_ranks: np.ndarray
    effect_size_name: str
    effect_sizes: np.ndarray
    magnitudes: tuple

    # strict JSON of the fields, as every result's (NaN and inf as null)
    to_dict = _results.to_dict
    to_json = _results.to_json

    def table_rows(self):
        """Column labels and the formatted cells of each learner (best first)."""
        center = "M" if self.center_name == "mean" else "MD"
        spread = "SD" if self.spread_name == "std" else "MAD"
        effect = "d" if self.effect_size_name == "cohen_d" else "gamma"
        head = ("learner", "MR", center, spread, effect, "magnitude")
        # one number of decimals per column (0.0824 beside 0.09292 reads 0.08240)
        fc, fs = column_format(self.center), column_format(self.spread)
        rows = [
            (
                name,
                f"{self.mean_ranks[i]:.3f}",
                format(float(self.center[i]), fc),
                format(float(self.spread[i]), fs),
                f"{self.effect_sizes[i]:.3f}",
                self.magnitudes[i],
            )
            for i, name in enumerate(self.learners)
        ]
        return head, rows

    def markdown(self):
        """A Markdown table: mean rank, center, spread, effect size and its magnitude."""
        head, rows = self.table_rows()
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)

    def latex(self):
        """A LaTeX ``tabular`` of the same columns as :meth:`markdown` (booktabs rules)."""
        head, rows = self.table_rows()
        tex = {"MR": "MR", "gamma": r"$\gamma$", "d": "$d$"}

        def esc(s):
            for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("&", r"\&"), ("%", r"\%")):
                s = s.replace(a, b)
            for c in "#$":
                s = s.replace(c, "\\" + c)
            return s

        lines = [
            r"\begin{tabular}{l" + "r" * (len(head) - 2) + "l}",
            r"\toprule",
            " & ".join(tex.get(h, esc(h)) for h in head) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(esc(c) for c in r) + r" \\" for r in rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines)

    def text(self):
        """A short prose summary with the numbers, in the spirit of autorank's report."""
        k = len(self.learners)
        way = _direction.direction_words(self.higher_is_better)
        out = [
            f"{k} learners on {self.n_datasets} data sets, {self.measure} ({way}), "
            f"alpha = {self.alpha:g}."
        ]
        not_normal = [
            f"{n} (p = {p:.3g})"
            for n, p in zip(self.learners, self.normality_pvalues, strict=True)
            if p < self.alpha_normality
        ]
        if not_normal:
            out.append(
                f"Shapiro-Wilk rejects normality (alpha = {self.alpha_normality:.3g}, "
                f"Bonferroni) for {', '.join(not_normal)}: not all learners are normal."
            )
        else:
            out.append(
                f"Shapiro-Wilk accepts normality for every learner (alpha = "
                f"{self.alpha_normality:.3g}, Bonferroni; smallest p = "
                f"{min(self.normality_pvalues):.3g})."
            )
        test = "Bartlett's" if self.homogeneity_test == "bartlett" else "Levene's"
        if np.isnan(self.homogeneity_pvalue):  # constant scores: autorank's "unequal" too
            out.append(f"{test} test: undefined (p = nan), variances not taken as equal.")
        else:
            equal = "equal" if self.homoscedastic else "unequal"
            out.append(f"{test} test: variances {equal} (p = {self.homogeneity_pvalue:.3g}).")
        omnibus = OMNIBUS_NAMES[self.omnibus]
        why = {
            "anova": "all normal and homoscedastic",
            "friedman": "not all normal" if not self.all_normal else "heteroscedastic",
            "ttest": "two learners, both normal",
            "wilcoxon": "two learners, not both normal",
        }[self.omnibus]
        then = f", then {POSTHOC_NAMES[self.posthoc]}" if self.posthoc else ""
        out.append(f"Tests ({why}): {omnibus}{then}.")
        c = "M" if self.center_name == "mean" else "MD"
        s = "SD" if self.spread_name == "std" else "MAD"
        each = "; ".join(
            f"{n} ({c} = {self.center[i]:.4g}, {s} = {self.spread[i]:.4g}, "
            f"MR = {self.mean_ranks[i]:.3f})"
            for i, n in enumerate(self.learners)
        )
        verdict = "differ" if self.reject else "show no significant difference"
        out.append(
            f"The learners {verdict} (p = {self.pvalue:.3g}, statistic {self.statistic:.4g}): "
            f"{each}."
        )
        if self.posthoc is not None and self.reject:
            cd = (
                f" (critical difference of mean ranks {self.critical_difference:.3f})"
                if self.critical_difference is not None
                else ""
            )
            together = [g for g in self.groups if len(g) > 1]
            if any(len(g) == k for g in together):
                out.append(f"{POSTHOC_NAMES[self.posthoc]}{cd}: no pair differs significantly.")
            elif together:
                within = ", ".join("{" + ", ".join(g) + "}" for g in together)
                out.append(
                    f"{POSTHOC_NAMES[self.posthoc]}{cd}: no significant difference within "
                    f"{within}; all other pairs differ."
                )
            else:
                out.append(f"{POSTHOC_NAMES[self.posthoc]}{cd}: every pair differs.")
        name = "Cohen's d" if self.effect_size_name == "cohen_d" else "Akinshin's gamma"
        effects = ", ".join(
            f"{n} {self.effect_sizes[i]:.3f} ({self.magnitudes[i]})"
            for i, n in enumerate(self.learners)
            if i > 0
        )
        out.append(f"{name} of {self.learners[0]} against {effects}.")
        return "\n".join(out)

    def __str__(self):
        return self.text()


def _pooled(sx, sy):
    """Pooled scale of two equal-sized samples: ``((n-1) sx² + (n-1) sy²) / (2n - 2)``."""
    return np.sqrt((sx**2 + sy**2) / 2)


def _tukey_hsd(scores, rm_anova):
    """Tukey's HSD p-values ``(k, k)`` of the learners' means, with the residual mean square
    of the repeated-measures ANOVA ``rm_anova`` and its ``(k - 1)(N - 1)`` degrees of freedom
    (Montgomery 2009, §4.1: the randomized complete block design)."""
    from scipy import stats

    n, k = scores.shape
    df = rm_anova.df[1]
    mse = float(rm_anova.ss_error) / df
    means = scores.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(means[:, None] - means[None, :]) / np.sqrt(mse / n)
    p = stats.studentized_range.sf(q, k, df)
    return np.where(np.eye(k, dtype=bool), 1.0, np.minimum(p, 1.0))


# Most learners report() takes: its Tukey post-hoc integrates scipy's studentized range
# once per pair (about 10 ms: 100 learners, 4,950 pairs, took 76 s on a loaded 2-core host).
MAX_LEARNERS = 100


def report(table, *, alpha=0.05):
    """The body of :meth:`ScoreTable.report` (see there)."""
    from scipy import stats

    from jaxtests._posthoc import cliques

    alpha = float(v.check_probability(alpha, "alpha"))
    x = np.asarray(table.scores, dtype=np.float64)
    n, k = x.shape
    if n < MIN_DATASETS:
        raise ValueError(
            f"`table`: report() needs at least {MIN_DATASETS} data sets (autorank's minimum "
            f"for the normality checks), got {n}."
        )
    if k > MAX_LEARNERS:
        # Refused at once: 1,000 learners ran past 600 s without a word (499,500 pairs).
        raise ValueError(
            f"`table`: report() compares all {k * (k - 1) // 2:,} pairs of {k} learners; it "
            f"takes at most {MAX_LEARNERS} ({MAX_LEARNERS * (MAX_LEARNERS - 1) // 2:,} pairs, "
            "each Tukey p-value a numerical integral of ~10 ms); compare fewer learners, or "
            "test them all with friedman and against one control with friedman_posthoc."
        )
    higher = bool(table.higher_is_better)
    sign = 1.0 if higher else -1.0
    alpha_normality = alpha / k  # Bonferroni, as autorank
    normality = np.array([float(stats.shapiro(x[:, j]).pvalue) for j in range(k)])
    all_normal = bool(np.all(normality >= alpha_normality))
    columns = [x[:, j] for j in range(k)]
    with np.errstate(all="ignore"):  # a constant learner: log(0) inside; p says it
        if all_normal:
            homogeneity_test, homogeneity_p = "bartlett", float(stats.bartlett(*columns).pvalue)
        else:  # scipy's default center="median" (Brown-Forsythe), as autorank
            homogeneity_test, homogeneity_p = "levene", float(stats.levene(*columns).pvalue)
    homoscedastic = bool(homogeneity_p >= alpha)
    friedman = table.friedman(method="chi2")
    ranks = np.asarray(friedman.average_ranks, dtype=np.float64)
    order = np.argsort(ranks, kind="stable")  # best first
    names = [table.learners[j] for j in order]
    posthoc_p, cd, groups = None, None, ()
    if k == 2:
        posthoc = None
        if all_normal:
            from jaxtests._ttests import ttest_paired

            omnibus = "ttest"
            res = ttest_paired(x[:, order[0]], x[:, order[1]])
        else:
            from jaxtests._wilcoxon import wilcoxon

            # autorank: one-sided, the larger median against the smaller; here the better
            # median first (``alternative`` in the direction of the measure), the same p.
            omnibus = "wilcoxon"
            best = int(np.argmax(sign * np.median(x, axis=0)))
            res = wilcoxon(x[:, best], x[:, 1 - best], alternative="greater" if higher else "less")
        statistic, pvalue = float(res.statistic), float(res.pvalue)
    elif all_normal and homoscedastic:
        from jaxtests._anova import anova

        omnibus, posthoc = "anova", "tukeyhsd"
        res = anova(x.T, blocked=True)  # data sets as blocks: statsmodels' AnovaRM
        statistic, pvalue = float(res.statistic), float(res.pvalue)
        posthoc_p = _tukey_hsd(x, res)[np.ix_(order, order)]
        groups = cliques(posthoc_p <= alpha, names)
    else:
        omnibus, posthoc = "friedman", "nemenyi"
        statistic, pvalue = float(friedman.statistic), float(friedman.pvalue)
        nem = table.nemenyi(alpha=alpha)
        posthoc_p = np.asarray(nem.pvalues)[np.ix_(order, order)]
        cd = float(nem.critical_difference)
        groups = tuple(nem.groups)
    if all_normal:
        center_name, spread_name, effect_name = "mean", "std", "cohen_d"
        center, spread = x.mean(axis=0), x.std(axis=0, ddof=1)
        scale = spread
    else:  # autorank 1.3's default effect size for non-normal data
        center_name, spread_name, effect_name = "median", "mad", "akinshin_gamma"
        center = np.median(x, axis=0)
        spread = stats.median_abs_deviation(x, axis=0)
        scale = spread * 1.4826  # gamma pools the MAD scaled as the SD of a normal
    b = order[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        effects = sign * (center[b] - center) / _pooled(scale[b], scale)
    effects[b] = 0.0
    effects = effects[order]
    return ScoreReport(
        learners=tuple(names),
        measure=table.measure,
        higher_is_better=higher,
        alpha=alpha,
        n_datasets=n,
        normality_pvalues=normality[order],
        alpha_normality=alpha_normality,
        all_normal=all_normal,
        homogeneity_test=homogeneity_test,
        homogeneity_pvalue=homogeneity_p,
        homoscedastic=homoscedastic,
        omnibus=omnibus,
        statistic=statistic,
        pvalue=pvalue,
        reject=bool(pvalue <= alpha),
        posthoc=posthoc,
        posthoc_pvalues=posthoc_p,
        critical_difference=cd,
        groups=tuple(tuple(g) for g in groups),
        center_name=center_name,
        spread_name=spread_name,
        center=center[order],
        spread=spread[order],
        mean_ranks=ranks[order],
        effect_size_name=effect_name,
        effect_sizes=effects,
        magnitudes=tuple(magnitude(e) for e in effects),
    )
