"""Every CLI option honoured or refused (issue 13), hostile files and output (issue 18).

In-process calls of ``jaxtests._cli.main``: bad input must give exit status 2 and one line
on stderr naming the file, line, column or argument; expected values come from scipy or
numpy formulas, named beside each literal or computation.
"""

import gzip
import json
import os
import re
import time

import numpy as np
import pytest
import scipy.stats
from _helpers import cli, printed


def refused(capsys, pattern, *args):
    status, out, err = cli(capsys, *args)
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.search(pattern, lines[0]), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(7)
    d = tmp_path_factory.mktemp("doors")
    # Per-instance classification results: 2 algorithms, 60 instances in 5 folds.
    n = 60
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    scores = {"a": 0.9 * y + rng.normal(size=n), "b": 0.4 * y + rng.normal(size=n)}
    rows = ["algorithm,fold,instance,y_true,score"]
    rows += [
        f"{a},{i % 5},{i},{int(y[i])},{float(s[i])!r}" for a, s in scores.items() for i in range(n)
    ]
    (d / "inst.csv").write_text("\n".join(rows) + "\n")
    # Per-fold results: 2 algorithms, 10 folds, two measures.
    err = {"a": 0.10 + 0.01 * rng.normal(size=10), "b": 0.12 + 0.01 * rng.normal(size=10)}
    hin = {"a": 0.30 + 0.02 * rng.normal(size=10), "b": 0.31 + 0.02 * rng.normal(size=10)}
    rows = ["algorithm,fold,error,hinge"]
    rows += [f"{a},{j},{float(err[a][j])!r},{float(hin[a][j])!r}" for a in "ab" for j in range(10)]
    (d / "folds.csv").write_text("\n".join(rows) + "\n")
    # The same values as 5 repetitions x 2 folds.
    rows = ["algorithm,repetition,fold,error"]
    rows += [f"{a},{j // 2 + 1},{j % 2 + 1},{float(err[a][j])!r}" for a in "ab" for j in range(10)]
    (d / "5x2.csv").write_text("\n".join(rows) + "\n")
    return d, y, scores, err, hin


# ---------------------------------------------------------------- issue 13


def test_signflip_on_instances_tests_instance_differences(files, capsys):
    d, y, scores, _, _ = files
    status, out, _ = cli(
        capsys, "compare", d / "inst.csv", "--test", "signflip", "--measures", "hinge",
        "--n-resamples", 3000, "--seed", 0, "--quiet", "--json",
    )  # fmt: skip
    assert status == 0
    res = json.loads(out)["results"]["signflip"]
    # hinge loss max(0, 1 - y f) per instance (seed 000, eq. 3), differences a - b
    diff = np.maximum(0, 1 - y * scores["a"]) - np.maximum(0, 1 - y * scores["b"])
    np.testing.assert_allclose(res["statistic"], diff.mean(), rtol=1e-12)
    assert res["method"] == "monte-carlo" and res["n_resamples"] == 3000
    # scipy.stats.ttest_1samp on the same 60 differences: the permutation p is close
    p_t = scipy.stats.ttest_1samp(diff, 0.0).pvalue
    assert abs(res["pvalue"] - p_t) < 0.05
    row = json.loads(out)["rows"][0]
    assert row["test"] == "signflip (per instance, monte-carlo)"


def test_swap_auc_on_folds_is_the_mean_per_fold_auc(files, capsys):
    # Issue 29, item 5: per-instance scores of 5 fold models; the swap test's AUC is each
    # fold's, averaged (pooled folds mixed the models' scales: 7.3% rejections at 0.05 under
    # H0). Reference: scikit-learn's roc_auc_score on each fold, differences averaged.
    from sklearn.metrics import roc_auc_score

    d, y, scores, _, _ = files
    status, out, _ = cli(
        capsys, "compare", d / "inst.csv", "--test", "swap", "--swap-measure", "auc",
        "--n-resamples", 999, "--seed", 0, "--quiet", "--json",
    )  # fmt: skip
    assert status == 0
    row = json.loads(out)["rows"][0]
    assert row["measure"] == "auc (mean per fold)"
    fold = np.arange(y.size) % 5  # the fixture's fold of instance i
    ref = np.mean(
        [
            roc_auc_score(y[fold == k], scores["a"][fold == k])
            - roc_auc_score(y[fold == k], scores["b"][fold == k])
            for k in range(5)
        ]
    )
    np.testing.assert_allclose(row["statistic"], ref, rtol=1e-12)
    pooled = roc_auc_score(y, scores["a"]) - roc_auc_score(y, scores["b"])
    assert abs(pooled - ref) > 1e-3  # the fixture tells the two apart


def test_mcc_is_a_swap_measure_and_a_per_fold_measure(files, capsys):
    # Issue 27: "mcc" is named everywhere measures are. Reference: scikit-learn's
    # matthews_corrcoef of the predictions (score > 0), pooled (swap) and per fold.
    from sklearn.metrics import matthews_corrcoef

    d, y, scores, _, _ = files
    pred = {a: np.where(s > 0, 1, -1) for a, s in scores.items()}
    status, out, _ = cli(
        capsys, "compare", d / "inst.csv", "--test", "swap", "--test", "t", "--swap-measure", "mcc",
        "--measures", "mcc", "--n-resamples", 99, "--seed", 0, "--quiet", "--json",
    )  # fmt: skip
    assert status == 0, out
    rows = {r["test"]: r for r in json.loads(out)["rows"]}
    ref = matthews_corrcoef(y, pred["a"]) - matthews_corrcoef(y, pred["b"])
    np.testing.assert_allclose(rows["swap"]["statistic"], ref, rtol=1e-12)
    fold = np.arange(y.size) % 5
    per_fold = [
        matthews_corrcoef(y[fold == k], pred["a"][fold == k])
        - matthews_corrcoef(y[fold == k], pred["b"][fold == k])
        for k in range(5)
    ]
    np.testing.assert_allclose(rows["t"]["mean_difference"], np.mean(per_fold), rtol=1e-12)


def test_all_pairs_of_more_than_100_algorithms_refused(tmp_path, capsys):
    # Reliability audit (issue 29): 1000 learners made 499,500 posthoc rows, 7.4 GB and a
    # stdout cut at 2 GiB with exit 0. Beyond 100 algorithms (4,950 pairs) an all-pairs test
    # is refused before it runs; the default runs the test of all of them, with a note.
    names = [f"m{i}" for i in range(101)]  # 101 * 100 / 2 = 5,050 pairs
    rows = ["algorithm,fold,error"] + [
        f"{a},{j},0.{i:03d}{j}" for i, a in enumerate(names) for j in (1, 2)
    ]
    (tmp_path / "many.csv").write_text("\n".join(rows) + "\n")
    refused(
        capsys, r"--test posthoc compares all 5,050 pairs of 101 algorithms.*--pair A B",
        "compare", tmp_path / "many.csv", "--test", "posthoc", "--quiet",
    )  # fmt: skip
    status, out, err = cli(capsys, "compare", tmp_path / "many.csv", "--json")
    assert status == 0
    got = json.loads(out)["rows"]
    assert [r["test"] for r in got] == ["anova (folds as blocks)"]
    assert got[0]["comparison"] == "m0 / m1 / ... / m100 (101 algorithms)"
    assert "posthoc left out: posthoc compares all 5,050 pairs" in err
    rows = ["dataset,learner,score"] + [
        f"d{d},{a},0.{i:03d}{d}" for i, a in enumerate(names) for d in (1, 2, 3)
    ]
    (tmp_path / "sets.csv").write_text("\n".join(rows) + "\n")
    for test in ("nemenyi", "friedman-posthoc"):
        refused(
            capsys, rf"--test {test} compares all 5,050 pairs of 101 learners.*--control A",
            "compare", tmp_path / "sets.csv", "--test", test,
        )  # fmt: skip
    status, out, err = cli(capsys, "compare", tmp_path / "sets.csv", "--json")
    assert status == 0 and "nemenyi left out" in err
    assert {r["test"] for r in json.loads(out)["rows"]} == {
        "friedman (chi2)",
        "friedman (Iman-Davenport F)",
    }


def test_unused_n_resamples_is_a_note(files, capsys):
    # issue 28.7: an --n-resamples that an exact (or binomial) p-value does not need cannot
    # change the answer: a note on the row, not an error
    d = files[0]
    status, out, err = cli(capsys, "compare", d / "folds.csv", "--test", "signflip",
                           "--n-resamples", 5000, "--quiet")  # fmt: skip
    assert status == 0
    assert re.search(
        r"note: .*--n-resamples 5000 is not used .* 10 per-fold differences: every rearrangement",
        err,
    )
    status, out, _ = cli(capsys, "compare", d / "inst.csv", "--test", "signflip",
                         "--n-resamples", 500, "--quiet", "--json")  # fmt: skip
    assert status == 0
    notes = " ".join(json.loads(out)["rows"][0]["notes"])
    assert re.search(r"--n-resamples 500 is not used .*binomial", notes)
    status, out, _ = cli(capsys, "compare", d / "folds.csv", "--test", "signflip", "--json")
    assert status == 0
    assert json.loads(out)["rows"][0]["test"] == "signflip (per fold, exact)"


def test_5x2cv_needs_a_repetition_column(files, capsys):
    d, _, _, err, _ = files
    refused(capsys, r"needs 5 repetitions .* add a 'repetition' column",
            "compare", d / "folds.csv", "--test", "5x2cv-t")  # fmt: skip
    status, out, _ = cli(capsys, "compare", d / "5x2.csv", "--test", "5x2cv-t", "--json")
    assert status == 0
    # Dietterich (1998): t = p_11 / sqrt(mean_i s_i^2), s_i^2 = sum_j (p_ij - pbar_i)^2, df 5
    p = (err["a"] - err["b"]).reshape(5, 2)
    s2 = ((p - p.mean(1, keepdims=True)) ** 2).sum(1)
    t = p[0, 0] / np.sqrt(s2.mean())
    row = json.loads(out)["rows"][0]
    np.testing.assert_allclose(row["statistic"], t, rtol=1e-10)
    np.testing.assert_allclose(row["pvalue"], 2 * scipy.stats.t.sf(abs(t), 5), rtol=1e-10)
    refused(capsys, r"--test t would pool the 10 folds of 5 repetitions",
            "compare", d / "5x2.csv", "--test", "t")  # fmt: skip


def test_every_measure_is_tested_with_a_correction(files, capsys):
    d, _, _, err, hin = files
    status, out, _ = cli(
        capsys, "compare", d / "folds.csv", "--measures", "error", "hinge", "--test", "t", "--json"
    )
    assert status == 0
    rows = json.loads(out)["rows"]
    assert [r["measure"] for r in rows] == ["error", "hinge"]
    raw = [scipy.stats.ttest_rel(m["a"], m["b"]).pvalue for m in (err, hin)]
    np.testing.assert_allclose([r["raw_pvalue"] for r in rows], raw, rtol=1e-10)
    # Holm (1979) for two p-values: min(1, 2 p_(1)), then max(that, min(1, p_(2)))
    lo = min(1.0, 2 * min(raw))
    holm = [lo if p == min(raw) else max(lo, min(1.0, p)) for p in raw]
    np.testing.assert_allclose([r["pvalue"] for r in rows], holm, rtol=1e-10)
    assert all(r["test"] == "t (holm, 2 measures)" for r in rows)
    status, out, _ = cli(capsys, "compare", d / "inst.csv", "--measures", "tpr", "fpr",
                         "--test", "anova", "--json")  # fmt: skip
    assert status == 0
    assert [r["measure"] for r in json.loads(out)["rows"]] == ["tpr", "fpr"]


def test_options_honoured_or_refused(files, capsys):
    d = files[0]
    refused(capsys, r"'epsilon_insensitive' is not available \(it needs --epsilon",
            "compare", d / "inst.csv", "--measures", "epsilon_insensitive")  # fmt: skip
    refused(capsys, r"--epsilon is not used", "compare", d / "folds.csv", "--epsilon", "0.1")
    refused(capsys, r"--seed is not used by --test t", "compare", d / "folds.csv", "--seed", 1)
    refused(capsys, r"--pair is not used by --test anova",
            "compare", d / "folds.csv", "--test", "anova", "--pair", "a", "b")  # fmt: skip
    refused(capsys, r"--alternative greater: --test anova has no one-sided",
            "compare", d / "folds.csv", "--test", "anova", "--alternative", "greater")  # fmt: skip
    refused(capsys, r"--correction is not used", "compare", d / "folds.csv", "--correction", "bh")
    refused(capsys, r"--blocked is not used", "compare", d / "folds.csv", "--blocked")
    refused(capsys, r"--measures: 'error' is given twice",
            "compare", d / "folds.csv", "--measures", "error", "error")  # fmt: skip
    status, out, err = cli(capsys, "compare", d / "folds.csv", "--quiet")  # documented
    # no bar; both measure columns tested, one block each (issue 28.7)
    assert status == 0 and err == "" and "error:\n" in out and "\nhinge:\n" in out


@pytest.mark.parametrize("alpha", ["2", "-1", "nan", "0", "1", "x"])
def test_alpha_outside_0_1_refused(files, capsys, alpha):
    refused(capsys, r"argument --alpha: .*\(0, 1\)|is not a level",
            "compare", files[0] / "folds.csv", f"--alpha={alpha}")  # fmt: skip


def test_signflip_command_needs_differences_or_pair(files, capsys, tmp_path):
    _, _, _, err, _ = files
    p = tmp_path / "losses.csv"
    rows = ["algorithm,fold,error"] + [
        f"{a},{j},{float(err[a][j])!r}" for a in "ab" for j in range(10)
    ]
    p.write_text("\n".join(rows) + "\n")
    refused(capsys, r"losses\.csv: column 'error' holds the values of each algorithm",
            "signflip", p, "--column", "error")  # fmt: skip
    status, out, _ = cli(capsys, "signflip", p, "--pair", "a", "b", "--exact", "--json")
    assert status == 0
    res = json.loads(out)["result"]
    np.testing.assert_allclose(res["statistic"], np.mean(err["a"] - err["b"]), rtol=1e-12)
    assert res["method"] == "exact" and json.loads(out)["pair"] == ["a", "b"]


# ---------------------------------------------------------------- issue 18


def test_hostile_compare_files(tmp_path, capsys):
    cases = {
        "labels12.csv": (
            "algorithm,fold,instance,y_true,score\n"
            + "".join(f"{a},{i % 2},{i},{1 + i % 2},0.{i}\n" for a in "ab" for i in range(8)),
            r"labels12\.csv, column 'y_true': the two values 1 and 2 are not class labels",
        ),
        "dup.csv": ("algorithm,fold,error,error\na,1,0.1,0.2\n", r"duplicate column name"),
        "extra.csv": (
            "algorithm,fold,instance,y_true,score,w\na,1,1,1,0.5,1\n",
            r"extra\.csv, line 1: unknown column\(s\) \['w'\]",
        ),
        "blank.csv": ("algorithm,fold,e\na,1,1\n\nb,1,2\n", r"blank\.csv, line 3: blank line"),
        "under.csv": ("algorithm,fold,e\na,1,1_000\n", r"under\.csv, line 2, column 'e': non-num"),
    }
    for name, (text, pattern) in cases.items():
        (tmp_path / name).write_text(text)
        refused(capsys, pattern, "compare", tmp_path / name)
    lat = tmp_path / "latin.csv"
    lat.write_bytes("algorithm,fold,e\nr\u00e9,1,1\n".encode("latin-1"))
    refused(capsys, r"latin\.csv: not UTF-8 text", "compare", lat)


def test_errors_name_the_file_fold_and_algorithm(tmp_path, capsys):
    one = tmp_path / "one.csv"
    one.write_text("d\n0.5\n")
    refused(capsys, r"one\.csv: column 'd' has 1 difference", "signflip", one)
    rows = ["algorithm,fold,instance,y_true,score"]
    # fold 0 holds positives only: its ROC AUC is 0/0
    rows += [f"{a},{0 if i < 3 else 1},{i},{1 if i < 3 or i % 2 else -1},0.{i}"
             for a in "ab" for i in range(10)]  # fmt: skip
    p = tmp_path / "oneclass.csv"
    p.write_text("\n".join(rows) + "\n")
    refused(capsys, r"oneclass\.csv: roc_auc is undefined .* algorithm 'a' in fold '0': the fold "
            "has instances of one class only", "compare", p, "--measures", "roc_auc")  # fmt: skip
    xy = tmp_path / "xy.csv"
    xy.write_text("x,label\n1,0\n2,1\n")
    refused(capsys, r"--features includes the label column 'label'",
            "sanity", xy, "--label", "label", "--features", "label")  # fmt: skip


def test_spreadsheet_files_read(files, tmp_path, capsys):
    d = files[0]
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + (d / "folds.csv").read_bytes())  # Excel "CSV UTF-8"
    status, out, _ = cli(capsys, "compare", bom, "--json")
    assert status == 0
    status, ref, _ = cli(capsys, "compare", d / "folds.csv", "--json")
    assert json.loads(out)["rows"] == json.loads(ref)["rows"]
    diffs = np.array([0.5, 1.25, -0.25, 2.0, 0.75, 1.5])
    gz = tmp_path / "d.csv.gz"
    gz.write_bytes(gzip.compress(("d\n" + "\n".join(map(repr, diffs.tolist())) + "\n").encode()))
    status, out, _ = cli(capsys, "signflip", gz, "--exact", "--json")
    assert status == 0
    # scipy.stats.permutation_test, permutation_type="samples", exact over 2^6 sign patterns
    ref = scipy.stats.permutation_test(
        (diffs,), np.mean, permutation_type="samples", n_resamples=np.inf
    )
    np.testing.assert_allclose(json.loads(out)["result"]["pvalue"], ref.pvalue, rtol=1e-12)


def test_json_is_strict_with_reasons(tmp_path, capsys):
    p = tmp_path / "same.csv"
    p.write_text(
        "algorithm,fold,error\n" + "".join(f"{a},{j},0.1\n" for a in "ab" for j in range(5))
    )
    status, out, err = cli(capsys, "compare", p, "--json")
    assert status == 0
    row = json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))["rows"][0]
    # scipy.stats.ttest_rel on identical samples: statistic and p-value NaN
    assert np.isnan(scipy.stats.ttest_rel([0.1] * 5, [0.1] * 5).pvalue)
    assert row["pvalue"] is None and row["statistic"] is None
    assert "zero variance" in row["reason"] and row["decision"] == "undefined"
    assert "RuntimeWarning" not in err and ".py:" not in err


def test_out_dir_never_follows_links(tmp_path, capsys):
    from jaxtests._report import prepare_out, replace_file

    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "demo.json").symlink_to(victim)
    refused(capsys, r"out/demo\.json is a symbolic link; refusing",
            "demo", "--quick", "--out", out, "--quiet")  # fmt: skip
    assert victim.read_text() == "precious"
    # replace_file swaps the link itself for a new file, even past prepare_out's check
    replace_file(str(out / "demo.json"), lambda tmp: open(tmp, "w").write("new"))
    assert victim.read_text() == "precious" and (out / "demo.json").read_text() == "new"
    prepare_out(str(out), ["demo.json", "x.png"])
    assert "overwriting 1 file(s)" in capsys.readouterr().err
    assert sorted(os.listdir(out)) == ["demo.json"]


def test_progress_bar_shows_before_the_first_chunk(capsys, monkeypatch):
    from jaxtests._report import Progress

    monkeypatch.setattr("jaxtests._progress.stderr_is_terminal", lambda: True)  # bars there

    # The engine may report only after a long first chunk (issue 18.12): the bar must
    # still appear after `delay`, and show the total and an ETA once reported.
    with Progress("draws", delay=0.2, interval=0.05) as bar:
        time.sleep(0.5)
        early = capsys.readouterr().err
        bar(50, 100)
        time.sleep(0.2)
    late = capsys.readouterr().err
    assert "draws" in early and "00:00" in early
    assert "50.0/100" in late and "<00:0" in late


def test_compare_bayes_t_is_the_correlated_ttest(capsys, tmp_path):
    import jaxtests

    rng = np.random.default_rng(8)
    a = 0.80 + 0.02 * rng.standard_normal(10)
    b = a - 0.01 + 0.01 * rng.standard_normal(10)
    path = tmp_path / "folds.csv"
    lines = ["algorithm,fold,accuracy"]
    lines += [f"{n},{j},{float(x[j])!r}" for n, x in (("a", a), ("b", b)) for j in range(10)]
    path.write_text("\n".join(lines) + "\n")
    args = ("compare", path, "--test", "bayes-t", "--rope", "0.005")
    status, out, err = cli(capsys, *args, "--n-train", 90, "--n-test", 10, "--json")
    assert status == 0, err
    (row,) = json.loads(out)["rows"]
    ref = jaxtests.bayesian.correlated_ttest(a, b, rope=0.005, rho=10 / 100)
    for side in ("left", "rope", "right"):
        np.testing.assert_allclose(row[f"p_{side}"], float(getattr(ref, f"p_{side}")), rtol=1e-12)
    refused(capsys, r"bayes-t needs --n-train and --n-test", *args)
    refused(
        capsys,
        r"bayes-t needs --rope",
        "compare",
        path,
        "--test",
        "bayes-t",
        "--n-train",
        9,
        "--n-test",
        1,
    )
    refused(capsys, r"--rope is not used by --test t", "compare", path, "--rope", "0.01")


def test_signflip_reports_the_mean_with_its_t_interval(capsys, tmp_path):
    d = np.array([0.1, -0.05, 0.2, 0.15, 0.05, 0.12, -0.02, 0.08, 0.11, 0.03])
    path = tmp_path / "d.csv"
    path.write_text("d\n" + "\n".join(repr(float(x)) for x in d) + "\n")
    status, out, err = cli(capsys, "signflip", path)
    assert status == 0, err
    ci = scipy.stats.ttest_1samp(d, 0).confidence_interval(0.95)  # scipy's t interval
    dz = d.mean() / d.std(ddof=1)  # Cohen's d_z
    head = out.splitlines()[0]
    mean = re.search(r"mean (\S+) \[(\S+), (\S+)\] \(95% t interval\)", head)
    assert mean, head
    for text, ref in zip(mean.groups(), (d.mean(), ci.low, ci.high), strict=True):
        assert printed(text, ref), head
    assert printed(re.search(r"d_z (\S+)", head).group(1), dz), head


def test_multiclass_per_instance_file_is_refused_not_read_as_regression(capsys, tmp_path):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 30)
    lines = ["algorithm,fold,instance,y_true,score"]
    for a in ("lda", "knn"):
        pred = np.where(rng.uniform(size=30) < 0.8, y, rng.integers(0, 3, 30))
        lines += [f"{a},{i % 3},{i},{y[i]},{pred[i]}" for i in range(30)]
    path = tmp_path / "multi.csv"
    path.write_text("\n".join(lines) + "\n")
    refused(capsys, r"look like multiclass labels and predictions", "compare", path)
    # A regression target with real-valued predictions is still a regression.
    reg = tmp_path / "reg.csv"
    rows = ["algorithm,fold,instance,y_true,score"]
    noisy = {a: y + 0.1 * rng.normal(size=30) for a in "ab"}
    rows += [f"{a},{i % 3},{i},{y[i]},{float(noisy[a][i])!r}" for a in "ab" for i in range(30)]
    reg.write_text("\n".join(rows) + "\n")
    status, out, err = cli(capsys, "compare", reg, "--json")
    assert status == 0, err
    assert json.loads(out)["rows"][0]["measure"] == "square"


def test_out_refusals_name_the_path_and_what_to_do(tmp_path, capsys):
    # Issue 43.6: "jaxtests: error: /x/out: File exists" said neither that --out was at
    # fault nor what to do.
    from jaxtests._report import prepare_out

    afile = tmp_path / "afile"
    afile.write_text("")
    refused(capsys, rf"--out {afile}: a file of that name exists, and --out names a folder",
            "demo", "--quick", "--out", afile, "--quiet")  # fmt: skip
    cases = [
        (afile / "sub", rf"--out {afile / 'sub'}: cannot create the folder: {afile} is a file"),
        (tmp_path, rf"--out {tmp_path}: {tmp_path / 'x.png'} exists and is not a regular file"),
    ]
    (tmp_path / "x.png").mkdir()
    for out, words in cases:
        with pytest.raises(ValueError, match=words):
            prepare_out(str(out), ["x.png"])
