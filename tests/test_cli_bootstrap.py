"""``jaxtests compare --test bootstrap|delong|cochran`` on per-instance files, and the
CVResult methods that reach the same functions: the same numbers as the library calls, every
option honoured or refused."""

import json

import numpy as np
import pytest

import jaxtests
from jaxtests._cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 80
    y = np.where(rng.random(n) < 0.4, 1, -1)
    shifts = (("A", 1.2), ("B", 0.5), ("C", 0.2))
    scores = {alg: np.round(rng.normal(size=n) + s * y, 3) for alg, s in shifts}
    folder = tmp_path_factory.mktemp("onetestset")
    out = {}
    for name, n_folds in (("one", 1), ("four", 4)):
        lines = ["algorithm,fold,instance,y_true,score"]
        for alg, s in scores.items():
            lines += [f"{alg},{i % n_folds},{i},{y[i]},{s[i]}" for i in range(n)]
        path = folder / f"{name}.csv"
        path.write_text("\n".join(lines) + "\n")
        out[name] = str(path)
    return out, y, scores


def _json(capsys, *argv):
    assert main(["compare", *argv, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def test_delong_row_equals_the_library(files, capsys):
    paths, y, s = files
    out = _json(capsys, paths["one"], "--test", "delong", "--pair", "A", "B")
    (row,) = out["rows"]
    r = jaxtests.delong_test(y, s["A"], s["B"])
    assert row["statistic"] == pytest.approx(float(r.statistic), rel=1e-12)
    assert row["pvalue"] == pytest.approx(float(r.pvalue), rel=1e-12)
    assert row["auc_difference_interval"] == pytest.approx(list(r.confidence_interval), rel=1e-12)


def test_cochran_rows_equal_the_library(files, capsys):
    paths, y, s = files
    out = _json(capsys, paths["four"], "--test", "cochran", "--correction", "bonferroni")
    preds = [np.where(s[k] > 0, 1, -1) for k in "ABC"]
    r = jaxtests.cochran_q(y, *preds, correction="bonferroni")
    assert out["rows"][0]["statistic"] == pytest.approx(float(r.statistic), rel=1e-12)
    assert out["rows"][0]["pvalue"] == pytest.approx(float(r.pvalue), rel=1e-12)
    assert [row["pvalue"] for row in out["rows"][1:]] == pytest.approx(
        [
            r.pairwise_pvalue_adjusted[0, 1],
            r.pairwise_pvalue_adjusted[0, 2],
            r.pairwise_pvalue_adjusted[1, 2],
        ]
    )


def test_bootstrap_row_equals_the_library(files, capsys):
    paths, y, s = files
    argv = ("--test", "bootstrap", "--pair", "A", "B", "--seed", "3", "--n-resamples", "999")
    out = _json(capsys, paths["four"], *argv, "--measures", "hinge")
    (row,) = out["rows"]
    d = np.maximum(0, 1 - y * s["A"]) - np.maximum(0, 1 - y * s["B"])
    r = jaxtests.bootstrap_test((d, np.zeros_like(d)), n_resamples=999, key=3)
    assert row["statistic"] == pytest.approx(float(r.statistic), rel=1e-12)
    assert row["pvalue"] == float(r.pvalue)
    assert row["mean_difference_interval"] == pytest.approx(list(r.confidence_interval))


@pytest.mark.parametrize(
    ("file", "argv", "match"),
    [
        ("four", ["--test", "delong", "--pair", "A", "B"], "4 folds"),
        ("one", ["--test", "delong", "--pair", "A", "B", "--measures", "hinge"], "--measures"),
        ("one", ["--test", "delong", "--pair", "A", "B", "--seed", "1"], "--seed"),
        ("one", ["--test", "cochran", "--alternative", "greater"], "no one-sided"),
        (
            "one",
            ["--test", "bootstrap", "--pair", "A", "B", "--measures", "square"],
            "per-instance",
        ),
        ("four", ["--test", "bootstrap", "--pair", "A", "B", "--measures", "roc_auc"], "4 folds"),
        ("one", ["--test", "t", "--pair", "A", "B"], "needs at least 2 folds, got 1; a held-out"),
    ],
)
def test_options_refused(files, capsys, file, argv, match):
    paths, _, _ = files
    assert main(["compare", paths[file], *argv, "--quiet"]) == 2
    assert match in capsys.readouterr().err


def test_held_out_set_takes_mcnemar_swap_and_signflip(files, capsys):
    # Issue 39.4: a one-fold file (a held-out test set) was refused by mcnemar ("need at
    # least 2 folds") while delong, cochran and bootstrap took it.
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    paths, y, s = files
    out = _json(capsys, paths["one"], "--test", "mcnemar", "--pair", "A", "B")
    (row,) = out["rows"]
    right_a, right_b = (np.where(s[k] > 0, 1, -1) == y for k in "AB")
    table = [[np.sum(right_a & right_b), np.sum(right_a & ~right_b)],
             [np.sum(~right_a & right_b), np.sum(~right_a & ~right_b)]]  # fmt: skip
    ref = sm_mcnemar(table, exact=True)  # statsmodels' exact binomial McNemar
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
    for test in ("swap", "signflip"):
        argv = ("--test", test, "--pair", "A", "B", "--seed", "1", "--n-resamples", "999")
        assert _json(capsys, paths["one"], *argv)["rows"][0]["pvalue"] > 0


def test_bootstrap_of_the_auc_and_its_footnote(files, capsys):
    # Issue 39.4: --test bootstrap could not bootstrap an AUC, and its footnote named DeLong.
    from sklearn.metrics import roc_auc_score

    paths, y, s = files
    argv = ("--test", "bootstrap", "--pair", "A", "B", "--seed", "3", "--n-resamples", "999")
    out = _json(capsys, paths["one"], *argv, "--measures", "roc_auc")
    (row,) = out["rows"]
    auc_diff = roc_auc_score(y, s["A"]) - roc_auc_score(y, s["B"])  # scikit-learn's AUCs
    assert row["statistic"] == pytest.approx(auc_diff, rel=1e-12)
    r = jaxtests.bootstrap_test((y, s["A"], s["B"]), "roc_auc_difference", n_resamples=999, key=3)
    assert row["pvalue"] == float(r.pvalue)
    assert row["roc_auc_difference_interval"] == pytest.approx(list(r.confidence_interval))
    assert main(["compare", paths["one"], *argv, "--measures", "roc_auc", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "bootstrap (roc_auc, BCa)" in text and "difference: AUC of A - AUC of B" in text
    assert main(["compare", paths["one"], *argv, "--quiet"]) == 0  # the 0/1 loss
    note = capsys.readouterr().out.splitlines()[-1]
    assert note.startswith("difference: mean per-instance loss difference A - B")
    assert "delong" not in note.lower() and "AUC" not in note


def test_cvresult_methods_reach_the_functions():
    X, y = jaxtests.datasets.load_breast_cancer()
    X, y = X[:150], y[:150]
    from jaxtests import models

    cv = jaxtests.cross_validate(
        {"lda": models.lda(), "nc": models.nearest_centroid(), "ridge": models.ridge_classifier()},
        X,
        y,
        cv=3,
        key=0,
    )
    with pytest.raises(ValueError, match="pool_folds=True"):
        cv.delong_test("lda", "nc")
    r = cv.delong_test("lda", "nc", pool_folds=True)
    assert 0 <= r.pvalue <= 1
    q = cv.cochran_q()
    assert q.names == ("lda", "nc", "ridge") and q.pairwise_pvalue.shape == (3, 3)
    d = cv.instance_differences("lda", "nc", "hinge")
    b = cv.bootstrap("lda", "nc", loss="hinge", n_resamples=199, key=0)
    ref = jaxtests.bootstrap((d, np.zeros_like(d)), "mean_difference", n_resamples=199, key=0)
    assert b.confidence_interval == ref.confidence_interval
    t = cv.bootstrap_test("lda", "nc", measure="accuracy", n_resamples=199, key=0)
    assert 0 < t.pvalue <= 1
    with pytest.raises(ValueError, match="not both"):
        cv.bootstrap("lda", "nc", measure="accuracy", loss="hinge")
