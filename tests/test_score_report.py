"""Issue 28: ``ScoreTable.report()``, autorank's automatic analysis of a score table.

Reference numbers: autorank 1.3.0 (``autorank.autorank(df, alpha=0.05)`` on the same
tables, and ``autorank._util._cohen_d`` / ``_akinshin_gamma`` against the best learner),
besides live scipy and statsmodels checks of each step.
"""

import numpy as np
import pytest
from scipy import stats

import jaxtests

NAMES = ("a", "b", "c", "d")


def _tables():
    rng = np.random.default_rng(7)
    base = rng.uniform(0.6, 0.9, (15, 1))
    normal = base + [0.04, 0.0, 0.015, -0.01] + 0.02 * rng.standard_normal((15, 4))
    skew = 0.7 + 0.05 * rng.exponential(size=(16, 3)) ** 3 + [0.03, 0.0, -0.01]
    return {"normal": normal, "skew": skew, "two_n": normal[:, :2], "two_s": skew[:, :2]}


TABLES = _tables()


def _table(x, measure="accuracy"):
    n, k = x.shape
    return jaxtests.read_scores(
        {
            "dataset": np.repeat(np.arange(n), k).astype(str),
            "learner": list(NAMES[:k]) * n,
            measure: x.ravel(),
        }
    )


@pytest.fixture(scope="module")
def reports():
    return {name: _table(x).report() for name, x in TABLES.items()}


def _by_name(r, values):
    return dict(zip(r.learners, np.asarray(values).tolist(), strict=True))


def test_normal_homoscedastic_is_anova_and_tukey(reports):
    r, x = reports["normal"], TABLES["normal"]
    assert (r.omnibus, r.posthoc, r.all_normal, r.homoscedastic) == (
        "anova",
        "tukeyhsd",
        True,
        True,
    )  # autorank 1.3.0: omnibus "anova", posthoc "tukeyhsd"
    assert r.pvalue == pytest.approx(1.7558559646189624e-07, rel=1e-9)  # autorank 1.3.0
    assert r.homogeneity_pvalue == pytest.approx(0.9980737596014021, rel=1e-9)  # autorank
    assert r.learners == ("a", "c", "d", "b")  # by mean rank, best first
    ranks = {"b": 3.4, "d": 3.2, "c": 2.066666666666667, "a": 1.3333333333333333}  # autorank
    assert _by_name(r, r.mean_ranks) == pytest.approx(ranks)
    assert r.center_name == "mean" and r.effect_size_name == "cohen_d"
    # autorank 1.3.0: _cohen_d(best "a", each)
    d = {"a": 0.0, "b": 0.4737360877794473, "c": 0.2150066990792247, "d": 0.5429852742489061}
    assert _by_name(r, r.effect_sizes) == pytest.approx(d, rel=1e-9)
    assert r.magnitudes == ("negligible", "small", "medium", "small")
    # live: scipy's Shapiro-Wilk per learner, Bartlett
    shapiro = {n: stats.shapiro(x[:, j]).pvalue for j, n in enumerate(NAMES)}
    assert _by_name(r, r.normality_pvalues) == pytest.approx(shapiro, rel=1e-12)
    assert r.alpha_normality == 0.05 / 4
    assert r.homogeneity_pvalue == pytest.approx(stats.bartlett(*x.T).pvalue, rel=1e-12)
    # Tukey's HSD on the block design's residual mean square: statsmodels OLS
    # score ~ C(learner) + C(dataset) for the error, scipy's studentized range for p.
    pd = pytest.importorskip("pandas")
    sm = pytest.importorskip("statsmodels.formula.api")
    n, k = x.shape
    df = pd.DataFrame(
        {"s": x.ravel(), "l": np.tile(np.arange(k), n), "ds": np.repeat(np.arange(n), k)}
    )
    fit = sm.ols("s ~ C(l) + C(ds)", df).fit()
    means = x.mean(axis=0)
    q = abs(means[0] - means[2]) / np.sqrt(fit.mse_resid / n)
    p_ad = stats.studentized_range.sf(q, k, fit.df_resid)
    i, j = r.learners.index("a"), r.learners.index("c")
    assert r.posthoc_pvalues[i, j] == pytest.approx(p_ad, rel=1e-9)
    assert r.groups == (("a", "c"), ("d", "b"))


def test_non_normal_is_friedman_and_nemenyi(reports):
    r, x = reports["skew"], TABLES["skew"]
    assert (r.omnibus, r.posthoc, r.all_normal) == ("friedman", "nemenyi", False)  # autorank
    assert r.pvalue == pytest.approx(0.019496896108597995, rel=1e-9)  # autorank 1.3.0
    assert r.pvalue == pytest.approx(stats.friedmanchisquare(*x.T).pvalue, rel=1e-12)
    # autorank 1.3.0 takes the studentized range from statsmodels' qsturng approximation
    assert r.critical_difference == pytest.approx(0.8286244920964834, rel=1e-5)
    assert r.homogeneity_test == "levene"
    assert r.homogeneity_pvalue == pytest.approx(0.48462648741437864, rel=1e-9)  # autorank
    assert r.homogeneity_pvalue == pytest.approx(stats.levene(*x.T).pvalue, rel=1e-12)
    assert r.center_name == "median" and r.spread_name == "mad"
    med = {"c": 0.700515070511418, "b": 0.7695906459731408, "a": 0.7589661161409533}
    mad = {"c": 0.010514993876098833, "b": 0.06793063125970827, "a": 0.02885178563574986}
    assert _by_name(r, r.center) == pytest.approx(med, rel=1e-12)  # autorank 1.3.0
    assert _by_name(r, r.spread) == pytest.approx(mad, rel=1e-12)  # autorank 1.3.0
    # autorank 1.3.0: _akinshin_gamma(best "a", each)
    gamma = {"a": 0.0, "b": -0.13731632955538892, "c": 1.8156393972781648}
    assert _by_name(r, r.effect_sizes) == pytest.approx(gamma, rel=1e-9)
    assert r.groups == (("a", "b"), ("b", "c"))
    text = r.text()
    assert "Friedman test, then Nemenyi test" in text and "p = 0.0195" in text
    assert "critical difference of mean ranks 0.829" in text and "{a, b}, {b, c}" in text


def test_two_learners_t_or_wilcoxon(reports):
    r = reports["two_n"]
    assert r.omnibus == "ttest" and r.posthoc is None  # autorank 1.3.0: "ttest"
    assert r.pvalue == pytest.approx(1.2413944871114106e-05, rel=1e-9)  # autorank 1.3.0
    r = reports["two_s"]
    assert r.omnibus == "wilcoxon"  # autorank 1.3.0: "wilcoxon", one-sided
    assert r.pvalue == pytest.approx(0.7017059326171875, rel=1e-12)  # autorank 1.3.0
    x = TABLES["two_s"]  # b has the larger median
    assert r.pvalue == pytest.approx(
        stats.wilcoxon(x[:, 1], x[:, 0], alternative="greater").pvalue, rel=1e-12
    )
    assert not r.reject and "show no significant difference (p = 0.702" in r.text()


def test_lower_is_better_mirrors_higher_is_better(reports):
    hi = reports["skew"]
    lo = _table(1.0 - TABLES["skew"], measure="error").report()
    assert lo.higher_is_better is False and lo.learners == hi.learners
    assert (lo.omnibus, lo.pvalue) == (hi.omnibus, pytest.approx(hi.pvalue, rel=1e-12))
    np.testing.assert_allclose(lo.effect_sizes, hi.effect_sizes, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lo.mean_ranks, hi.mean_ranks)
    assert "error (lower is better)" in lo.text()


def test_tables(reports):
    r = reports["normal"]
    md = r.markdown().splitlines()
    assert md[0] == "| learner | MR | M | SD | d | magnitude |"
    assert md[2].startswith("| a | 1.333 | 0.7844 | ") and md[2].endswith("| negligible |")
    assert len(md) == 2 + 4
    tex = r.latex()
    assert tex.startswith(r"\begin{tabular}{lrrrrl}") and tex.endswith(r"\end{tabular}")
    assert r"learner & MR & M & SD & $d$ & magnitude \\" in tex
    assert "MD & MAD & $\\gamma$" in reports["skew"].latex()
    assert isinstance(r.pvalue, float) and isinstance(r.mean_ranks, np.ndarray)


def test_to_dict_and_to_json_are_strict_json(reports):
    # Issue 39.6: ScoreReport had no to_dict()/to_json() (every result has them).
    import json

    r, x = reports["skew"], TABLES["skew"]
    d = json.loads(r.to_json())
    assert d == r.to_dict() and d["learners"] == ["a", "b", "c"] and d["omnibus"] == "friedman"
    assert d["pvalue"] == pytest.approx(stats.friedmanchisquare(*x.T).pvalue, rel=1e-12)  # scipy
    assert d["center"] == pytest.approx(list(r.center)) and d["posthoc_pvalues"][0][0] == 1.0
    with pytest.warns(UserWarning, match="range zero"):
        const = _table(np.full((6, 3), 0.5)).report()
    assert json.loads(const.to_json())["homogeneity_pvalue"] is None  # NaN as null
    assert "NaN" not in const.to_json()


def test_bad_input():
    table = _table(TABLES["normal"])
    with pytest.raises(ValueError, match="`alpha`"):
        table.report(alpha=1.5)
    with pytest.raises(ValueError, match="at least 5 data sets"):
        _table(TABLES["normal"][:4]).report()


def test_constant_scores_are_reported_not_misread():
    # every score 0.5: Bartlett's p and the effect sizes are 0/0 (autorank: "unequal" too)
    with pytest.warns(UserWarning, match="range zero"):  # scipy's Shapiro-Wilk says so
        r = _table(np.full((6, 3), 0.5)).report()
    assert np.isnan(r.homogeneity_pvalue) and not r.homoscedastic and not r.reject
    assert r.magnitudes == ("negligible", "undefined", "undefined")
    assert "Bartlett's test: undefined (p = nan)" in r.text()


def test_one_number_format_per_column(reports):
    # Issue 39.7: a column mixed 0.759 with 0.7696 and 0.0824 with 0.09292.
    from jaxtests._report import estimate_text, markdown_table, text_table

    md = reports["skew"].markdown().splitlines()[2:]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in md]
    # autorank 1.3.0's medians and MADs (test_non_normal_is_friedman_and_nemenyi), by name
    med = {"a": 0.7589661161409533, "b": 0.7695906459731408, "c": 0.700515070511418}
    mad = {"a": 0.02885178563574986, "b": 0.06793063125970827, "c": 0.010514993876098833}
    assert [c[2] for c in cells] == [f"{med[c[0]]:.4f}" for c in cells]
    assert [c[2] for c in cells] == ["0.7590", "0.7696", "0.7005"]  # 0.759 before
    assert [c[3] for c in cells] == [f"{mad[c[0]]:.5f}" for c in cells]
    rows = [{"x": 0.0824, "ci": estimate_text(0.046, (0.01108, 0.08092))},
            {"x": 0.09292, "ci": estimate_text(0.5, (0.25, 1.2))}]  # fmt: skip
    lines = text_table(rows, ["x", "ci"]).splitlines()[2:]
    assert [line.split()[0] for line in lines] == ["0.08240", "0.09292"]
    assert lines[0].split(None, 1)[1].strip() == "0.04600 [0.01108, 0.08092]"
    assert lines[1].split(None, 1)[1].strip() == "0.50000 [0.25000, 1.20000]"
    # p-values across four orders of magnitude: scientific for the whole column
    assert markdown_table([{"p": 0.997}, {"p": 2.1e-5}], ["p"]).splitlines()[2:] == [
        "| 9.970e-01 |",
        "| 2.100e-05 |",
    ]
