"""Issue 28, the command line (in-process): ``compare FILE --report`` prints
:meth:`ScoreTable.report`, and every result is printed once (28.9)."""

import json

import numpy as np
import pytest
from _helpers import cli
from scipy import stats


@pytest.fixture(scope="module")
def scores_csv(tmp_path_factory):
    rng = np.random.default_rng(7)  # the "skew" table of tests/test_score_report.py
    rng.uniform(size=15), rng.standard_normal(60)
    x = 0.7 + 0.05 * rng.exponential(size=(16, 3)) ** 3 + [0.03, 0.0, -0.01]
    path = tmp_path_factory.mktemp("report") / "scores.csv"
    lines = ["dataset,learner,accuracy"]
    lines += [f"d{i},{n},{float(x[i, j])!r}" for i in range(16) for j, n in enumerate("abc")]
    path.write_text("\n".join(lines) + "\n")
    return path, x


def test_report_text_markdown_latex_json(scores_csv, capsys):
    path, x = scores_csv
    status, out, err = cli(capsys, "compare", path, "--report")
    assert status == 0, err
    assert "Tests (not all normal): Friedman test, then Nemenyi test." in out
    assert "learner  MR     MD" in out and out.count("Friedman test") == 1
    status, out, _ = cli(capsys, "compare", path, "--report", "--markdown")
    assert "| learner | MR | MD | MAD | gamma | magnitude |" in out
    status, out, _ = cli(capsys, "compare", path, "--report", "--latex")
    assert out.startswith(r"\begin{tabular}{lrrrrl}") and r"$\gamma$" in out
    status, out, _ = cli(capsys, "compare", path, "--report", "--json")
    rep = json.loads(out)["report"]
    assert (rep["omnibus"], rep["posthoc"]) == ("friedman", "nemenyi")
    # scipy.stats.friedmanchisquare of the same table
    assert rep["pvalue"] == pytest.approx(stats.friedmanchisquare(*x.T).pvalue, rel=1e-12)
    assert rep["learners"] == ["a", "b", "c"] and rep["groups"] == [["a", "b"], ["b", "c"]]


def test_report_options_refused(scores_csv, capsys, tmp_path):
    path, _ = scores_csv
    for extra, pattern in (
        (("--test", "friedman"), "--test is not used by --report"),
        (("--seed", "1"), "--seed is not used by --report"),
        (("--latex",), None),
    ):
        status, _, err = cli(capsys, "compare", path, "--report", *extra)
        assert (status == 2 and pattern in err) if pattern else status == 0, err
    status, _, err = cli(capsys, "compare", path, "--latex")
    assert status == 2 and "add --report" in err
    folds = tmp_path / "folds.csv"
    folds.write_text(
        "algorithm,fold,error\n" + "".join(f"a,{i},0.{i}\nb,{i},0.{i}5\n" for i in range(1, 4))
    )
    status, _, err = cli(capsys, "compare", folds, "--report")
    assert status == 2 and "--report is used on a many-data-set file" in err


def test_each_result_printed_once(scores_csv, capsys, tmp_path):
    # Issue 28.9: the pairs were printed twice, as table rows and again as text after it.
    rng = np.random.default_rng(3)
    folds = tmp_path / "folds.csv"
    folds.write_text(
        "algorithm,fold,error\n"
        + "".join(
            f"{a},{k},{0.1 + s + 0.02 * rng.standard_normal():.4f}\n"
            for a, s in (("svm", 0.0), ("knn", 0.03), ("lda", 0.01))
            for k in range(10)
        )
    )
    status, out, err = cli(capsys, "compare", folds, "--quiet")
    assert status == 0, err
    assert out.count("svm vs knn") == 1 and "p_adj" not in out
    assert "Cliques: " in out and "Ordering, best first (lower is better):" in out
    path, _ = scores_csv
    status, out, err = cli(capsys, "compare", path, "--test", "friedman-posthoc")
    assert status == 0, err
    assert out.count("a vs c") == 1 and "a - c" not in out
    status, out, err = cli(capsys, "compare", path, "--test", "bayes-signrank", "--pair", "a",
                           "b", "--rope", "0.01", "--seed", "1")  # fmt: skip
    assert status == 0, err
    assert out.count("P(a better)") == 1 and "50000 posterior samples (seed 1)" in out


_TOO_MUCH = """
import sys, time
import numpy as np
from jaxtests._cli import main
from jaxtests.bayesian import signrank
rng = np.random.default_rng(0)
x = rng.normal(0.8, 0.05, (6, 1000))
path = sys.argv[1]
with open(path, "w") as f:
    f.write("dataset,learner,accuracy\\n")
    f.writelines(f"d{i},l{j},{x[i, j]:.5f}\\n" for i in range(6) for j in range(1000))
start = time.monotonic()
status = main(["compare", path, "--report"])
print("report", status, f"{time.monotonic() - start:.1f}")
start = time.monotonic()
try:
    signrank(rng.random(100_000), rng.random(100_000), rope=0.01, key=0)
except ValueError as exc:
    print("signrank", f"{time.monotonic() - start:.1f}", exc, file=sys.stderr)
"""


def test_too_much_work_is_refused_at_once(tmp_path):
    # Issue 43.4: --report on 1,000 learners and bayes-signrank on 100,000 data sets gave no
    # output after 600 s. Both are refused at once, naming the limit.
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _TOO_MUCH, str(tmp_path / "many.csv")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    report, signrank = out.stdout.split(), out.stderr.strip().splitlines()
    assert report[:2] == ["report", "2"] and float(report[2]) < 30, out
    assert signrank[0].startswith("jaxtests: error: ") and "--report: `table`: " in signrank[0]
    assert "all 499,500 pairs of 1000 learners; it takes at most 100" in signrank[0]
    assert signrank[1].startswith("signrank ") and float(signrank[1].split()[1]) < 30
    assert "`n_samples`=50,000 posterior samples over 100,000 data sets" in signrank[1]
    assert "use n_samples <= 5,000" in signrank[1]
