"""The command line, in-process (``main(argv)``) and once through a subprocess: outputs, JSON
against the library, bad input."""

import contextlib
import io
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from _helpers import printed

import jaxtests
from jaxtests._anova import anova
from jaxtests._cli import main
from jaxtests._hotelling import hotelling_t2
from jaxtests._permutation import signflip_test
from jaxtests._ttests import ttest_paired


def run(*args):
    """``jaxtests ARGS`` in this process: exit status, stdout and stderr, as a subprocess gives."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse: --help, usage errors
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def run_process(*args):
    """``python -m jaxtests._cli ARGS`` in a fresh process (the entry point, a cold start)."""
    return subprocess.run(
        [sys.executable, "-m", "jaxtests._cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
        timeout=600,
    )


@pytest.fixture(scope="module")
def folds_csv(tmp_path_factory):
    rng = np.random.default_rng(3)
    d = tmp_path_factory.mktemp("cli")
    rows = ["algorithm,fold,error,tpr,fpr"]
    vals = {}
    for a, shift in (("svm", 0.0), ("knn", 0.03), ("lda", 0.01)):
        e = 0.1 + shift + 0.02 * rng.standard_normal(10)
        t = 0.9 - shift + 0.03 * rng.standard_normal(10)
        f = 0.1 + shift / 2 + 0.02 * rng.standard_normal(10)
        vals[a] = np.stack([e, t, f], -1)
        rows += [f"{a},{j},{float(e[j])!r},{float(t[j])!r},{float(f[j])!r}" for j in range(10)]
    p = d / "folds.csv"
    p.write_text("\n".join(rows) + "\n")
    return p, vals


def test_compare_t_json_matches_library(folds_csv):
    path, vals = folds_csv
    res = run(
        "compare", path, "--pair", "svm", "knn", "--test", "t", "--test", "hotelling", "--json"
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    t = ttest_paired(vals["svm"][:, 0], vals["knn"][:, 0])
    row = out["rows"][0]
    assert row["test"] == "t" and row["measure"] == "error"
    np.testing.assert_allclose(row["statistic"], float(t.statistic), rtol=1e-12)
    np.testing.assert_allclose(row["pvalue"], float(t.pvalue), rtol=1e-12)
    # every measure column tested (issue 28.7): results by test, then measure
    assert [r["measure"] for r in out["rows"]] == ["error", "tpr", "fpr", "tpr, fpr"]
    np.testing.assert_allclose(out["results"]["t"]["error"]["df"], float(t.df), rtol=1e-12)
    # Effect sizes at 1 - alpha: the library's intervals (themselves tested against
    # scipy and pingouin in test_effect_sizes.py).
    ci, dz = t.confidence_interval(0.95), t.effect_size_interval(0.95)
    assert row["confidence_level"] == 0.95
    np.testing.assert_allclose(row["mean_difference_interval"], [ci.low, ci.high], rtol=1e-12)
    np.testing.assert_allclose(row["effect_size"], float(t.effect_size), rtol=1e-12)
    np.testing.assert_allclose(row["effect_size_interval"], [dz.low, dz.high], rtol=1e-12)
    assert row["effect"].startswith("d_z ") and row["difference"].count("[") == 1
    h = hotelling_t2(vals["svm"][:, 1:], vals["knn"][:, 1:])
    np.testing.assert_allclose(out["rows"][-1]["statistic"], float(h.statistic), rtol=1e-12)
    np.testing.assert_allclose(out["rows"][-1]["pvalue"], float(h.pvalue), rtol=1e-12)


def test_compare_default_three_algorithms_text_and_markdown(folds_csv):
    path, vals = folds_csv
    res = run("compare", path, "--markdown")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("error:\n| test | comparison | measure |")  # one per measure
    a = anova(np.stack([vals[k][:, 0] for k in ("svm", "knn", "lda")]), blocked=True)
    row = next(line for line in res.stdout.splitlines() if line.startswith("| anova"))
    assert printed(row.split("|")[4].strip(), float(a.statistic)), row
    assert "Cliques" in res.stdout or "clique" in res.stdout.lower()


def test_compare_anova_takes_the_folds_as_blocks_by_default(folds_csv):
    # Issue 39.4: the default ANOVA was one-way (df 2, 27) beside paired post hoc rows,
    # although every algorithm ran on the same folds.
    pd = pytest.importorskip("pandas")
    from statsmodels.stats.anova import AnovaRM

    path, vals = folds_csv
    out = json.loads(run("compare", path, "--measures", "error", "--json").stdout)
    row = out["rows"][0]
    assert row["test"] == "anova (folds as blocks)" and row["df"] == "2, 18"
    long = pd.DataFrame(
        [(a, j, vals[a][j, 0]) for a in ("svm", "knn", "lda") for j in range(10)],
        columns=["alg", "fold", "error"],
    )
    ref = AnovaRM(long, "error", "fold", within=["alg"]).fit().anova_table  # statsmodels
    np.testing.assert_allclose(row["statistic"], ref["F Value"].iloc[0], rtol=1e-12)
    np.testing.assert_allclose(row["pvalue"], ref["Pr > F"].iloc[0], rtol=1e-10)
    text = run("compare", path, "--measures", "error").stdout
    assert text.splitlines()[2].startswith("anova (folds as blocks)")
    one = json.loads(run("compare", path, "--test", "anova", "--one-way", "--json").stdout)
    assert one["rows"][0]["test"] == "anova (one-way)" and one["rows"][0]["df"] == "2, 27"
    both = run("compare", path, "--test", "anova", "--one-way", "--blocked")
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_compare_signflip_exact_json(folds_csv):
    path, vals = folds_csv
    res = run("compare", path, "--pair", "svm", "lda", "--test", "signflip", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    ref = signflip_test(vals["svm"][:, 0] - vals["lda"][:, 0], n_resamples=100_000)
    assert out["results"]["signflip"]["error"]["method"] == ref.method == "exact"
    np.testing.assert_allclose(out["rows"][0]["pvalue"], float(ref.pvalue), rtol=1e-12)


def test_a_closed_pipe_ends_the_command_quietly(folds_csv):
    # `jaxtests ... | head`: the reader went away; no "error: Broken pipe" line, status 1.
    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    err = io.StringIO()
    with contextlib.redirect_stdout(Closed()), contextlib.redirect_stderr(err):
        code = main(["compare", str(folds_csv[0]), "--pair", "svm", "knn", "--test", "t"])
    assert code == 1 and err.getvalue() == ""


def test_signflip_command_in_a_fresh_process(tmp_path):
    d = np.array([0.5, 1.25, -0.25, 2.0, 0.75, 1.5])
    p = tmp_path / "d.csv"
    p.write_text("diff\n" + "\n".join(map(str, d)) + "\n")
    res = run_process("signflip", p, "--exact", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    # Exact: 2^6 = 64 patterns; count |sum| >= observed by enumeration (seed 003).
    signs = np.array([[1 - 2 * ((i >> j) & 1) for j in range(6)] for i in range(64)])
    sums = signs @ d
    p_exact = np.mean(sums >= d.sum() - 1e-12)
    assert out["result"]["method"] == "exact"
    np.testing.assert_allclose(out["result"]["pvalue"], min(1.0, 2 * p_exact), rtol=1e-12)


def test_sanity_command(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    p = tmp_path / "xy.csv"
    p.write_text(
        "a,b,c,label\n" + "\n".join(f"{r[0]},{r[1]},{r[2]},{t}" for r, t in zip(X, y)) + "\n"
    )
    res = run("sanity", p, "--label", "label", "--n-permutations", "99", "--seed", "1", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["result"]["pvalue"] == pytest.approx(1 / 100)  # clearly learnable
    assert out["result"]["seed"] == 1


def test_signflip_and_sanity_print_a_summary_not_a_repr(tmp_path):
    d = tmp_path / "d.csv"
    diffs = [0.5, 1.25, -0.25, 2.0, 0.75, 1.5, 0.3, -0.1, 0.9, -0.6, 1.1, 0.2]
    d.write_text("diff\n" + "\n".join(map(str, diffs)) + "\n")
    res = run("signflip", d, "--n-resamples", "999", "--seed", "7", "--statistic", "t")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[1].split() == ["statistic", "(t)", "p-value", "99%", "interval"]
    ref = signflip_test(np.array(diffs), statistic="t", n_resamples=999, key=7)
    assert ref.method == "monte-carlo"
    stat, p = lines[3].split()[:2]
    assert printed(stat, float(ref.statistic)) and printed(p, float(ref.pvalue)), lines[3]
    assert lines[4] == f"method     {ref.method}, two-sided"
    assert lines[5] == "resamples  999 sign patterns"
    assert lines[6] == "seed       7 (repeat with --seed 7)"
    assert "Result(" not in res.stdout
    exact = run("signflip", d, "--exact").stdout
    assert "resamples  4096 sign patterns" in exact and "seed       none" in exact

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    p = tmp_path / "xy.csv"
    p.write_text("a,b,label\n" + "\n".join(f"{r[0]},{r[1]},{t}" for r, t in zip(X, y)) + "\n")
    res = run("sanity", p, "--label", "label", "--n-permutations", "49", "--quiet")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "array(shape" not in out and "Result(" not in out
    assert "score (accuracy)" in out and "p-value" in out and "99% interval" in out
    assert "resamples  49 label permutations" in out
    seed = out.split("seed       ")[1].split()[0]
    assert f"(repeat with --seed {seed})" in out
    again = run("sanity", p, "--label", "label", "--n-permutations", "49", "--seed", seed, "--json")
    assert json.loads(again.stdout)["result"]["seed"] == int(seed)


BAD = [
    ("missing.csv", None, r"missing\.csv: no such file"),
    ("onealg.csv", "algorithm,fold,error\na,1,0.1\na,2,0.2\n", r"only one algorithm"),
    (
        "nocol.csv",
        "algo,fold,error\na,1,0.1\n",
        r"line 1: column 'algorithm' \(or 'learner'\) not found",
    ),
    (
        "text.csv",
        "algorithm,fold,error\na,1,0.1\nb,1,abc\n",
        r"text\.csv, line 3, column 'error': non-numeric value 'abc'",
    ),
    (
        "nan.csv",
        "algorithm,fold,error\na,1,NaN\nb,1,0.1\n",
        r"nan\.csv, line 2, column 'error': empty or missing",
    ),
    ("folds.csv", "algorithm,fold,error\na,1,0.1\na,2,0.1\nb,1,0.2\nb,3,0.2\n", r"unequal folds"),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_compare_bad_input_exit_2_one_line(tmp_path, name, text, message):
    import re

    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    res = run("compare", path)
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert re.search(message, lines[0]), lines[0]


def test_other_bad_input(tmp_path, folds_csv):
    path, _ = folds_csv
    res = run("compare", path, "--test", "t")
    assert res.returncode == 2 and "choose two with --pair" in res.stderr
    res = run("compare", path, "--pair", "svm", "xgb")
    assert res.returncode == 2 and "'xgb' is not in the file" in res.stderr
    res = run("compare", path, "--pair", "svm", "knn", "--measures", "auc")
    assert res.returncode == 2 and "'auc' is not available" in res.stderr
    res = run("signflip", tmp_path / "none.csv")
    assert res.returncode == 2 and "none.csv" in res.stderr
    res = run("demo", "--dataset", "iris")
    assert res.returncode == 2 and "--dataset must be one of" in res.stderr
    res = run("compare")  # argparse usage error
    assert res.returncode == 2


def test_version_and_help():
    res = run("--help")
    assert res.returncode == 0 and "demo" in res.stdout and "compare" in res.stdout
    assert jaxtests.__version__


def test_power_json_matches_library():
    from jaxtests import study

    res = run(
        "power",
        "--tests",
        "t",
        "sign",
        "--n-experiments",
        "400",
        "--m",
        "12",
        "--effect",
        "0",
        "0.8",
        "--seed",
        "5",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["power"]
    ref = study.power(tests=("t", "sign"), n_experiments=400, m=12, effect=(0.0, 0.8), key=5)
    assert out == json.loads(json.dumps(ref.to_dict()))


def test_agreement_counts_sum(tmp_path):
    res = run("agreement", "--quick", "--folds", "3", "--json", "--out", tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["agreement"]
    assert np.sum(out["counts"]) == 3 * 2  # 3 pairs of kernel machines x 2 repetitions
    assert (tmp_path / "agreement_error_hinge.png").stat().st_size > 5000
    bad = run("agreement", "--dataset", "diabetes", "--tests", "error_hinge")
    assert bad.returncode == 2 and "needs a classification dataset" in bad.stderr
