"""Issue 28.9: quieter, truer output: a progress bar says it is preparing (or shows its
total) before the first report, the demo lists the post hoc pairs that differ instead of
every adjusted p-value, and a singular covariance is one line."""

import time

from _helpers import cli as _cli

from jaxtests._report import Progress


def _terminal(monkeypatch):
    """stderr as a terminal, where the command line's bars are drawn (issue 39.4)."""
    monkeypatch.setattr("jaxtests._progress.stderr_is_terminal", lambda: True)


def test_progress_bars_on_a_terminal_only(capsys, monkeypatch):
    # Issue 39.4: `jaxtests demo 2> log` wrote 70 lines of carriage-return bars into the
    # file; the library's rule (bars on a terminal only) now holds for the CLI's bars too.
    # capsys' stderr is not a terminal, as a file or a pipe is not.
    with Progress("draws", delay=0.0, interval=0.02, total=10) as bar:
        bar(5, 10)
        time.sleep(0.2)
    assert capsys.readouterr().err == ""
    _terminal(monkeypatch)
    with Progress("draws", delay=0.0, interval=0.02, total=10) as bar:
        bar(5, 10)
        time.sleep(0.2)
    assert "\r" in capsys.readouterr().err


def test_progress_before_the_first_report(capsys, monkeypatch):
    _terminal(monkeypatch)
    with Progress("draws", delay=0.1, interval=0.05):
        time.sleep(0.4)
        early = capsys.readouterr().err
    assert "draws: preparing (compiling)" in early and "?/s" not in early
    with Progress("perm", unit="perm", delay=0.1, interval=0.05, total=1000) as bar:
        time.sleep(0.4)
        early = capsys.readouterr().err
        bar(500, 1000)
        time.sleep(0.2)
    late = capsys.readouterr().err
    assert "0.00/1.00k" in early and "preparing" not in early
    assert "500/1.00k" in late


def test_bayes_rows_show_their_probabilities_and_parametric_tests_no_bar(capsys, tmp_path):
    import numpy as np

    import jaxtests

    rng = np.random.default_rng(1)
    acc = {"a": 0.8 + 0.02 * rng.standard_normal(12), "b": 0.78 + 0.02 * rng.standard_normal(12)}
    path = tmp_path / "scores.csv"
    path.write_text(
        "dataset,learner,accuracy\n"
        + "".join(f"d{i},{n},{float(v[i])!r}\n" for n, v in acc.items() for i in range(12))
    )
    status, out, err = _cli(capsys, "compare", path, "--test", "bayes-signrank", "--pair", "a",
                            "b", "--rope", "0.01", "--seed", "3")  # fmt: skip
    assert status == 0, err
    ref = jaxtests.bayesian.signrank(acc["a"], acc["b"], rope=0.01, key=3)
    row = next(line for line in out.splitlines() if line.startswith("bayes-signrank "))
    assert f"P(a better) = {ref.p_left:.4f}" in row and f"P(b better) = {ref.p_right:.4f}" in row
    # a parametric test draws nothing: no "resamples" bar even past its delay
    folds = tmp_path / "folds.csv"
    tpr, fpr = 0.8 + 0.01 * rng.standard_normal((3, 8)), 0.1 + 0.01 * rng.standard_normal((3, 8))
    folds.write_text(
        "algorithm,fold,tpr,fpr\n"
        + "".join(
            f"{n},{k},{tpr[i, k]:.6f},{fpr[i, k]:.6f}\n"
            for i, n in enumerate("abc")
            for k in range(8)
        )
    )
    status, out, err = _cli(capsys, "compare", folds, "--test", "manova")
    assert status == 0 and "resamples" not in err


def test_constant_differences_make_no_decision(capsys, tmp_path):
    # two folds, the same difference on both: t = inf, p = 0 (scipy.stats.ttest_rel too)
    # is no evidence; the row says "undefined" and why, instead of "reject"
    import json
    import warnings

    import scipy.stats

    path = tmp_path / "f.csv"
    path.write_text("algorithm,fold,error\na,1,0.125\na,2,0.25\nb,1,0.375\nb,2,0.5\n")
    with warnings.catch_warnings():  # scipy warns of the zero variance, as it should
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = scipy.stats.ttest_rel([0.125, 0.25], [0.375, 0.5])  # exactly -0.25 twice
    status, out, _ = _cli(capsys, "compare", path, "--json")
    assert status == 0
    (row,) = json.loads(out)["rows"]
    assert row["pvalue"] == float(ref.pvalue) == 0.0 and row["decision"] == "undefined"
    assert "differences do not vary" in " ".join(row["notes"])


def test_demo_prints_tables_not_python_lists(capsys, tmp_path):
    # Issue 39.7: the demo printed its agreement counts as a raw list ("[[3, 3], [0, 0]]")
    # and an error's first sentence with its capital mid-line ("not defined (The covariance").
    import json

    import numpy as np
    import scipy.stats

    from jaxtests._demo import _clause

    status, out, err = _cli(capsys, "demo", "--quick", "--quiet", "--out", tmp_path)
    assert status == 0, err
    assert "[[" not in out
    report = json.loads((tmp_path / "demo.json").read_text())
    # The agreement of section 2 from the per-fold values: scipy's paired t tests.
    learners = report["learners"]
    table = np.zeros((2, 2), int)
    for pair in report["error_vs_hinge"]["pairs"]:
        a, b = pair["pair"].split(" vs ")
        rej = [
            scipy.stats.ttest_rel(learners[a][m], learners[b][m]).pvalue <= 0.05
            for m in ("error", "hinge")
        ]
        table[int(rej[0]), int(rej[1])] += 1
    lines = out.splitlines()
    at = lines.index("   agreement of the decisions, pairs of kernel machines:")
    assert lines[at + 3].split() == ["error", "accepts", *map(str, table[0])]
    assert lines[at + 4].split() == ["error", "rejects", *map(str, table[1])]
    msg = "The covariance of `a - b` is singular over measures ['tpr', 'fpr']: use fewer"
    assert (
        _clause(ValueError(msg))
        == "the covariance of `a - b` is singular over measures ['tpr', 'fpr']"
    )
    assert _clause(ValueError("MANOVA needs two measures")) == "MANOVA needs two measures"


def test_friedman_permutation_shows_a_bar_on_a_terminal_unless_quiet(capsys, monkeypatch, tmp_path):
    # Issue 43.6: the other permutation commands drew a bar; friedman-permutation none.
    import numpy as np

    _terminal(monkeypatch)
    init = Progress.__init__

    def at_once(self, *args, **kw):  # the bar at once, not after 2 s
        init(self, *args, **{**kw, "delay": 0.0, "interval": 0.02})

    monkeypatch.setattr(Progress, "__init__", at_once)
    x = np.random.default_rng(3).random((8, 3))
    path = tmp_path / "scores.csv"
    path.write_text(
        "dataset,learner,accuracy\n"
        + "".join(f"d{i},{n},{float(x[i, j])!r}\n" for i in range(8) for j, n in enumerate("abc"))
    )
    cmd = ("compare", path, "--test", "friedman-permutation", "--n-resamples", "20000")
    status, _, err = _cli(capsys, *cmd, "--seed", "1")
    assert status == 0, err
    assert "permutations:" in err and "20.0k/20.0k" in err
    status, _, err = _cli(capsys, *cmd, "--seed", "1", "--quiet")
    assert status == 0 and "permutations" not in err, err
