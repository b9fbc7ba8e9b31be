"""Many data sets from a tidy table: ``read_scores`` / ``ScoreTable`` and ``compare``'s layout.

Expected values come from scipy (``friedmanchisquare``, ``wilcoxon``) on the same matrix,
from Demšar (2006) and from numpy means over folds, named beside each check. The CLI is
called in process (``jaxtests._cli.main``).
"""

import itertools
import json
import re

import numpy as np
import pytest
import scipy.stats
from _helpers import cli

import jaxtests

# AUC-like scores of four learners on 14 data sets, with tied scores and a constant row.
SCORES = np.array(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.975, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ]
)
LEARNERS = ("c45", "c45_m", "c45_cf", "c45_m_cf")


def _long(scores, learners=LEARNERS, learner_col="learner", score_col="auc"):
    rows = {"dataset": [], learner_col: [], score_col: []}
    for i, row in enumerate(scores):
        for a, s in zip(learners, row, strict=True):
            rows["dataset"].append(f"d{i}")
            rows[learner_col].append(a)
            rows[score_col].append(float(s))
    return rows


def _exact_wilcoxon(x, y, alternative):
    """Brute force over every sign of the nonzero differences' average ranks (zeros dropped)."""
    d = np.asarray(x) - np.asarray(y)
    d = d[d != 0]
    r = scipy.stats.rankdata(np.abs(d))
    signs = np.array(list(itertools.product((0, 1), repeat=d.size)))
    null = signs @ r  # R+ of every sign pattern
    obs = r[d > 0].sum()
    eps = 1e-9
    tail = {
        "greater": np.mean(null >= obs - eps),
        "less": np.mean(null <= obs + eps),
        "two-sided": 2 * min(np.mean(null >= obs - eps), np.mean(null <= obs + eps)),
    }[alternative]
    return min(tail, 1.0)


def _csv(path, cols):
    names = list(cols)
    lines = [",".join(names)]
    lines += [
        ",".join(repr(c) if isinstance(c, float) else str(c) for c in r)
        for r in zip(*cols.values(), strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_dict_csv_json_and_frame_give_the_same_table(tmp_path):
    cols = _long(SCORES)
    from_dict = jaxtests.read_scores(cols)
    from_csv = jaxtests.read_scores(_csv(tmp_path / "s.csv", cols))
    records = [dict(zip(cols, r, strict=True)) for r in zip(*cols.values(), strict=True)]
    (tmp_path / "s.json").write_text(json.dumps(records))
    from_json = jaxtests.read_scores(tmp_path / "s.json")
    pd = pytest.importorskip("pandas")
    from_frame = jaxtests.read_scores(pd.DataFrame(cols))
    for t in (from_dict, from_csv, from_json, from_frame):
        np.testing.assert_array_equal(t.scores, SCORES)
        assert t.learners == LEARNERS
        assert t.datasets == tuple(f"d{i}" for i in range(14))
        assert t.measure == "auc" and t.higher_is_better and t.n_folds is None


def test_wide_tables_as_autorank_takes_them(tmp_path):
    # Issue 39.6: autorank's table, learners as columns and data sets as rows, was refused
    # ("learner column 'learner' not found") without a hint.
    pd = pytest.importorskip("pandas")
    wide = {a: SCORES[:, j].tolist() for j, a in enumerate(LEARNERS)}
    frame = pd.DataFrame(wide, index=[f"d{i}" for i in range(14)])
    csv = _csv(tmp_path / "w.csv", {"dataset": [f"d{i}" for i in range(14)], **wide})
    for source in (frame, csv):
        t = jaxtests.read_scores(source)
        np.testing.assert_array_equal(t.scores, SCORES)
        assert t.learners == LEARNERS and t.datasets == tuple(f"d{i}" for i in range(14))
        assert t.measure == "score" and t.higher_is_better  # autorank's order="descending"
        ref = scipy.stats.friedmanchisquare(*SCORES.T)
        np.testing.assert_allclose(float(t.friedman().statistic), ref.statistic, rtol=1e-12)
    t = jaxtests.read_scores(wide, score="error")  # a dict: data sets by position
    assert t.datasets == tuple(str(i) for i in range(14)) and not t.higher_is_better
    with pytest.raises(ValueError, match=r"learner column 'model' not found.*wide table"):
        jaxtests.read_scores(csv, learner="model")
    with pytest.raises(ValueError, match=r"a wide table .* at least two"):
        jaxtests.read_scores({"dataset": ["a", "b"], "svm": [0.1, 0.2]})


def test_table_tests_equal_the_functions_and_references():
    t = jaxtests.read_scores(_long(SCORES))
    f = t.friedman()
    ref = scipy.stats.friedmanchisquare(*SCORES.T)
    np.testing.assert_allclose(float(f.statistic), ref.statistic, rtol=1e-12)  # scipy
    chi2, N, k = ref.statistic, 14, 4
    # Iman & Davenport's F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F) (Demšar 2006, eq. 3.2.2)
    np.testing.assert_allclose(float(f.f_statistic), (N - 1) * chi2 / (N * (k - 1) - chi2))
    n = t.nemenyi()
    assert n.names == LEARNERS
    # Demšar (2006), Table 5a: q_0.05 = 2.569 for k = 4; CD = q sqrt(k (k + 1) / (6 N))
    assert round(float(n.critical_difference), 3) == round(2.569 * np.sqrt(20 / 84), 3) == 1.254
    ph = t.friedman_posthoc(control="c45")
    assert ph.control == "c45" and len(ph.comparisons) == 3
    w = t.wilcoxon("c45_m", "c45")
    ref_w = scipy.stats.wilcoxon(SCORES[:, 1], SCORES[:, 0])
    np.testing.assert_allclose(float(w.statistic), ref_w.statistic)  # scipy
    # scipy's p is its normal approximation here (ties, n > 13); the exact p by brute force:
    exact = _exact_wilcoxon(SCORES[:, 1], SCORES[:, 0], "two-sided")
    np.testing.assert_allclose(float(w.pvalue), exact, rtol=1e-12)
    np.testing.assert_array_equal(t.column("c45_cf"), SCORES[:, 2])


def test_signrank_is_the_bayesian_test_of_the_columns():
    t = jaxtests.read_scores(_long(SCORES))
    r = t.signrank("c45_m", "c45", rope=0.01, n_samples=2000, key=4, return_samples=True)
    ref = jaxtests.bayesian.signrank(SCORES[:, 1], SCORES[:, 0], rope=0.01, n_samples=2000, key=4)
    assert (float(r.p_left), float(r.p_rope), float(r.p_right)) == (
        float(ref.p_left),
        float(ref.p_rope),
        float(ref.p_right),
    )
    # Errors instead of scores: negated, so p_left still means "the first learner better".
    lo = jaxtests.read_scores(_long(-SCORES), higher_is_better=False)
    r_lo = lo.signrank("c45_m", "c45", rope=0.01, n_samples=2000, key=4, return_samples=True)
    np.testing.assert_array_equal(np.asarray(r_lo.samples), np.asarray(r.samples))


def test_lower_is_better_reverses_the_ranks():
    hi = jaxtests.read_scores(_long(SCORES)).nemenyi()
    lo = jaxtests.read_scores(_long(-SCORES), higher_is_better=False).nemenyi()
    np.testing.assert_allclose(np.asarray(lo.average_ranks), np.asarray(hi.average_ranks))


def test_folds_are_averaged_per_dataset():
    rng = np.random.default_rng(0)
    per_fold = rng.uniform(size=(3, 2, 5))  # data set, learner, fold
    cols = {"dataset": [], "algorithm": [], "fold": [], "accuracy": []}
    for i in range(3):
        for f in rng.permutation(5):  # rows in any order
            for j, a in enumerate(("x", "y")):
                cols["dataset"].append(f"d{i}")
                cols["algorithm"].append(a)
                cols["fold"].append(int(f))
                cols["accuracy"].append(float(per_fold[i, j, f]))
    t = jaxtests.read_scores(cols)
    np.testing.assert_allclose(t.scores, per_fold.mean(-1), rtol=1e-14)  # numpy mean
    assert t.n_folds == (5, 5, 5) and t.learners == ("x", "y")


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (lambda c: c.pop("dataset"), r"dataset column 'dataset' not found"),
        (lambda c: c.update(extra=[1.0] * len(c["auc"])), r"choose the score column"),
        (lambda c: [c[k].pop() for k in c], r"learner 'c45_m_cf' has no score on data set 'd13'"),
        (lambda c: c["auc"].__setitem__(5, float("nan")), r"line 6, column 'auc': non-finite"),
        (lambda c: c["learner"].__setitem__(1, "c45"), r"a second row for dataset 'd0', learner"),
        (lambda c: c.update(learner=["one"] * len(c["auc"])), r"a second row|only one learner"),
    ],
)
def test_bad_tables_are_refused(change, pattern):
    cols = _long(SCORES)
    change(cols)
    with pytest.raises(ValueError, match=pattern):
        jaxtests.read_scores(cols)


def test_bad_arguments_are_refused(tmp_path):
    with pytest.raises(TypeError, match="`source` must be a path"):
        jaxtests.read_scores([[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="higher_is_better"):
        jaxtests.read_scores(_long(SCORES), higher_is_better="no")
    with pytest.raises(ValueError, match="no such file"):
        jaxtests.read_scores(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="score column 'acc' not found"):
        jaxtests.read_scores(_long(SCORES), score="acc")
    with pytest.raises(ValueError, match="unknown learner 'svm'"):
        jaxtests.read_scores(_long(SCORES)).column("svm")
    cols = {"dataset": ["a", "a", "b", "b"], "algorithm": ["x", "y", "x", "y"]}
    cols.update(fold=[1, 1, 1, 2], acc=[0.1, 0.2, 0.3, 0.4])
    with pytest.raises(
        ValueError, match="learners 'x' and 'y' have different folds on data set 'b'"
    ):
        jaxtests.read_scores(cols)


# ------------------------------------------------------------------------ the CLI


@pytest.fixture(scope="module")
def demsar_csv(tmp_path_factory):
    cols = _long(SCORES, learner_col="algorithm")
    return _csv(tmp_path_factory.mktemp("datasets") / "auc.csv", cols)


def test_compare_defaults_to_friedman_and_nemenyi(capsys, demsar_csv):
    status, out, err = cli(capsys, "compare", demsar_csv, "--json")
    assert status == 0, err
    res = json.loads(out)
    assert res["layout"] == "datasets" and res["learners"] == list(LEARNERS)
    rows = res["rows"]
    ref = scipy.stats.friedmanchisquare(*SCORES.T)
    assert rows[0]["test"] == "friedman (chi2)"
    np.testing.assert_allclose(rows[0]["statistic"], ref.statistic, rtol=1e-12)  # scipy
    np.testing.assert_allclose(rows[0]["pvalue"], ref.pvalue, rtol=1e-10)  # scipy
    assert rows[1]["test"] == "friedman (Iman-Davenport F)" and rows[1]["df"] == "3, 39"
    nem = [r for r in rows if r["test"] == "nemenyi"]
    assert len(nem) == 6
    n = jaxtests.nemenyi(SCORES, names=LEARNERS)
    for r in nem:
        a, b = r["comparison"].split(" vs ")
        i, j = LEARNERS.index(a), LEARNERS.index(b)
        np.testing.assert_allclose(r["pvalue"], float(n.pvalues[i, j]), rtol=1e-12)
        assert (r["decision"] == "reject") == (abs(r["statistic"]) >= float(n.critical_difference))
    status, out, err = cli(capsys, "compare", demsar_csv)
    assert status == 0, err
    assert "14 data sets, 4 learners, auc (higher is better" in out
    assert "critical difference 1.254" in out


def test_compare_control_wilcoxon_and_permutation(capsys, demsar_csv, tmp_path):
    status, out, err = cli(capsys, "compare", demsar_csv, "--control", "c45", "--json")
    assert status == 0, err
    rows = json.loads(out)["rows"]
    ph = jaxtests.friedman_posthoc(SCORES, control="c45", names=LEARNERS)
    post = [r for r in rows if r["test"] == "friedman-posthoc (holm)"]
    np.testing.assert_allclose([r["pvalue"] for r in post], np.asarray(ph.pvalue_adjusted))
    status, out, err = cli(
        capsys,
        "compare",
        demsar_csv,
        "--pair",
        "c45_m",
        "c45",
        "--alternative",
        "greater",
        "--json",
    )
    assert status == 0, err
    (row,) = json.loads(out)["rows"]
    exact = _exact_wilcoxon(SCORES[:, 1], SCORES[:, 0], "greater")  # brute force
    np.testing.assert_allclose(row["pvalue"], exact, rtol=1e-12)
    status, out, err = cli(
        capsys,
        *("compare", demsar_csv, "--test", "friedman-permutation", "--seed", 3),
        *("--n-resamples", 999, "--json", "--quiet"),
    )
    assert status == 0, err
    res = json.loads(out)["results"]["friedman-permutation"]
    assert res["seed"] == 3 and res["n_resamples"] == 999
    status, out, err = cli(capsys, "compare", demsar_csv, "--test", "nemenyi", "--out", tmp_path)
    assert status == 0, err
    png = tmp_path / "critical_difference.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_bayes_signrank(capsys, demsar_csv, tmp_path):
    args = ("compare", demsar_csv, "--test", "bayes-signrank", "--pair", "c45_m", "c45")
    status, out, err = cli(capsys, *args, "--rope", 0.01, "--seed", 7, "--json")
    assert status == 0, err
    res = json.loads(out)
    (row,) = res["rows"]
    ref = jaxtests.bayesian.signrank(SCORES[:, 1], SCORES[:, 0], rope=0.01, key=7)
    for side in ("left", "rope", "right"):
        assert row[f"p_{side}"] == float(getattr(ref, f"p_{side}"))
    best = max(("left", "rope", "right"), key=lambda s_: row[f"p_{s_}"])
    decided = {"left": "c45_m better", "rope": "equivalent", "right": "c45 better"}[best]
    assert row["decision"] == (decided if row[f"p_{best}"] >= 0.95 else "undecided")
    assert res["results"]["bayes-signrank"]["seed"] == 7
    status, out, err = cli(capsys, *args, "--rope", 0.01, "--out", tmp_path)
    assert status == 0, err
    assert "P(c45 better) = " in out and (tmp_path / "simplex.png").exists()
    status, out, err = cli(capsys, *args)
    assert status == 2 and "needs --rope" in err


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (("--rope", "0.1"), r"--rope is not used by --test friedman nemenyi"),
        (("--test", "t"), r"--test t runs on per-fold or per-instance files"),
        (("--blocked",), r"--blocked is not used on a many-data-set file"),
        (("--one-way",), r"--one-way is not used on a many-data-set file"),
        (("--seed", "1"), r"--seed is not used by --test friedman nemenyi"),
        (("--control", "svm", "--test", "friedman-posthoc"), r"--control: learner 'svm' is not"),
        (("--correction", "hommel", "--test", "friedman-posthoc"), r"takes one of"),
        (("--correction", "holm"), r"--correction is not used"),
        (("--alternative", "less"), r"--test friedman has no one-sided version"),
        (("--test", "wilcoxon"), r"choose two with --pair"),
        (("--measures", "auc", "x"), r"one score column at a time"),
        (("--out", "o"), r"--out is not used by --test friedman-posthoc|--out is not used"),
    ],
)
def test_compare_refuses_what_the_layout_does_not_use(capsys, demsar_csv, args, pattern):
    if args == ("--out", "o"):
        args = ("--test", "friedman", "--out", "o")
    status, out, err = cli(capsys, "compare", demsar_csv, *args)
    assert status == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and re.search(pattern, err), err


def test_per_fold_files_refuse_the_dataset_options(capsys, tmp_path):
    path = tmp_path / "folds.csv"
    path.write_text("algorithm,fold,error\na,1,0.1\na,2,0.2\nb,1,0.3\nb,2,0.25\n")
    for args, pattern in (
        (("--test", "nemenyi"), r"no 'dataset' column"),
        (("--lower-is-better",), r"--lower-is-better is not used by --test t: .*only posthoc"),
        (("--correction", "shaffer", "--test", "posthoc"), r"step procedure of friedman-posthoc"),
    ):
        status, _, err = cli(capsys, "compare", path, *args)
        assert status == 2 and re.search(pattern, err), err


def test_fold_means_do_not_overflow():
    # Issue 29: two folds of 1e308 averaged to inf (numpy's sum overflows first).
    def table(folds):
        n = len(folds)
        return {
            "dataset": ["a"] * n + ["b"] * n + ["a"] * n + ["b"] * n,
            "learner": ["x"] * 2 * n + ["y"] * 2 * n,
            "fold": list(range(n)) * 4,
            "s": [*folds, *([0.5] * 3 * n)],
        }

    # Exact means: of two equal values, and 1e308 / 3 of (1e308, -1e308, 1e308).
    assert jaxtests.read_scores(table([1e308, 1e308])).scores[0, 0] == 1e308
    got = jaxtests.read_scores(table([1e308, -1e308, 1e308])).scores[0, 0]
    assert got == pytest.approx(1e308 / 3, rel=1e-15)
    # Ordinary folds keep numpy's mean, bit for bit.
    folds = [0.81, 0.79, 0.84, 0.77, 0.8]
    assert jaxtests.read_scores(table(folds)).scores[0, 0] == np.mean(folds)


@pytest.mark.parametrize("missing", [None, float("nan"), np.nan])
@pytest.mark.parametrize("column", ["dataset", "learner"])
def test_missing_names_are_refused(missing, column):
    # Issue 29: a missing name became a learner (or data set) called 'nan'.
    cols = _long(SCORES)
    cols[column][1] = missing
    with pytest.raises(ValueError, match=rf"line 2, column '{column}': missing value"):
        jaxtests.read_scores(cols)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_long(SCORES))
    frame.loc[1, column] = pd.NA if missing is None else missing
    with pytest.raises(ValueError, match=rf"line 2, column '{column}': missing value"):
        jaxtests.read_scores(frame)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        # Issue 29: OverflowError and RecursionError tracebacks.
        ('[{"dataset": "a", "learner": "x", "s": 1' + "0" * 400 + "}]", r"line 1, column 's'"),
        ("[" * 100_000 + "]" * 100_000, r"nested too deeply"),
        ('[{"dataset": "a", "learner": "x", "s": 1' + "0" * 5000 + "}]", r"invalid JSON"),
        ('[{"dataset": NaN, "learner": "x", "s": 1}]', r"column 'dataset': missing value nan"),
    ],
)
def test_bad_json_is_one_line(capsys, tmp_path, text, pattern):
    path = tmp_path / "scores.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=pattern):
        jaxtests.read_scores(path)
    status, out, err = cli(capsys, "compare", path)
    assert status == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and re.search(pattern, err), err
