"""Issue 28.2: orderings know which way is better.

Losses and error rates rank the smallest first, accuracies and other scores the largest
(scikit-learn's ``greater_is_better`` of the same scorers); an explicit flag overrides.
References: numpy's argsort of the means, scipy.stats.rankdata of the scores.
"""

import re

import matplotlib
import numpy as np
import pytest
import scipy.stats
from _helpers import cli as _cli

import jaxtests
from jaxtests import cross_validate, models, plot
from jaxtests._direction import higher_is_better

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def cv():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=60) > 0, 1, -1)
    ms = {"lda": models.lda(), "nc": models.nearest_centroid(), "knn": models.knn(1)}
    return cross_validate(ms, X, y, cv=5, key=0)


def test_the_table():
    assert higher_is_better("accuracy") and higher_is_better("AUC") and higher_is_better("f1")
    assert not higher_is_better("error") and not higher_is_better("hinge")
    assert not higher_is_better(lambda y, f: y) and higher_is_better("x", None) is None


@pytest.mark.parametrize(("loss", "higher"), [("accuracy", True), ("error", False), ("f1", True)])
def test_cv_posthoc_orders_best_first(cv, loss, higher):
    r = cv.posthoc(loss=loss)
    means = {n: float(np.mean(cv.fold_scores(n, loss))) for n in cv.names}
    best_first = sorted(means, key=means.get, reverse=higher)  # numpy/python sort of means
    assert list(r.ordering.labels) == best_first
    assert r.ordering.higher_is_better is higher
    words = "higher is better" if higher else "lower is better"
    assert f"Ordering, best first ({words}):" in r.text()
    # the explicit override flips the order, not the tests
    flipped = cv.posthoc(loss=loss, higher_is_better=not higher)
    assert list(flipped.ordering.labels) == best_first[::-1]
    np.testing.assert_array_equal(flipped.pvalue_adjusted, r.pvalue_adjusted)


def test_posthoc_and_ordering_flags():
    x = [[0.8, 0.82, 0.79], [0.7, 0.72, 0.71], [0.9, 0.91, 0.92]]  # accuracy, 3 folds
    up = jaxtests.posthoc(x, names=["a", "b", "c"], higher_is_better=True)
    assert up.ordering.labels == ("c", "a", "b")
    assert jaxtests.posthoc(x, names=["a", "b", "c"]).ordering.labels == ("b", "a", "c")
    reject = np.zeros((3, 3), bool)
    m = np.mean(x, axis=1)
    assert jaxtests.ordering(m, reject, descending=True).order == (2, 0, 1)  # the old flag
    assert jaxtests.ordering(m, reject, higher_is_better=True).order == (2, 0, 1)
    assert jaxtests.ordering(m, reject).order == tuple(np.argsort(m))
    with pytest.raises(ValueError, match="`descending`=True and `higher_is_better`=False"):
        jaxtests.ordering(m, reject, descending=True, higher_is_better=False)
    with pytest.raises(TypeError, match="`higher_is_better` must be a bool"):
        jaxtests.posthoc(x, higher_is_better="yes")
    with pytest.raises(TypeError, match="`higher_is_better` must be a bool or None"):
        jaxtests.ordering(m, reject, higher_is_better=1)


def test_plot_ordering_puts_the_best_on_top(cv):
    import matplotlib.pyplot as plt

    r = cv.posthoc(loss="accuracy")
    fig = plot.ordering(r, measure="accuracy")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(r.ordering.labels)
    assert "higher is better" in ax.get_title() and "higher is better" in ax.get_xlabel()
    plt.close(fig)
    fig = plot.ordering({"a": 0.9, "b": 0.7}, measure="accuracy")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["a", "b"]
    plt.close(fig)
    fig = plot.ordering({"a": 0.9, "b": 0.7})  # default measure "error": lower first
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["b", "a"]
    plt.close(fig)
    fig = plot.ordering({"a": 0.9, "b": 0.7}, measure="score", higher_is_better=True)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["a", "b"]
    plt.close(fig)
    with pytest.raises(TypeError, match="`higher_is_better` must be a bool or None"):
        plot.ordering({"a": 0.9, "b": 0.7}, higher_is_better="up")


SCORES = np.array([[0.10, 0.20, 0.30], [0.15, 0.10, 0.35], [0.12, 0.22, 0.25], [0.2, 0.3, 0.4]])


def _table(col):
    return {
        "dataset": [f"d{i}" for i in range(4) for _ in range(3)],
        "learner": ["a", "b", "c"] * 4,
        col: SCORES.ravel().tolist(),
    }


def test_read_scores_takes_the_direction_from_the_column():
    err = jaxtests.read_scores(_table("error"))
    assert err.higher_is_better is False
    # Demšar's ranks: rank 1 = best; for an error, the lowest (scipy.stats.rankdata)
    ref = scipy.stats.rankdata(SCORES, axis=1).mean(0)
    np.testing.assert_allclose(err.nemenyi().average_ranks, ref)
    acc = jaxtests.read_scores(_table("accuracy"))
    assert acc.higher_is_better is True
    np.testing.assert_allclose(acc.nemenyi().average_ranks, 4 - ref)
    assert jaxtests.read_scores(_table("error"), higher_is_better=True).higher_is_better
    assert jaxtests.read_scores(_table("whatever")).higher_is_better  # unknown: as before


def test_cli_directions(capsys, tmp_path):
    path = tmp_path / "err.csv"
    t = _table("error")
    rows = zip(t["dataset"], t["learner"], t["error"], strict=True)
    path.write_text("dataset,learner,error\n" + "".join(f"{d},{a},{s}\n" for d, a, s in rows))
    status, out, err = _cli(capsys, "compare", path, "--test", "friedman", "--quiet")
    assert status == 0, err
    assert "error (lower is better; rank 1 = best)" in out
    status, out, _ = _cli(capsys, "compare", path, "--test", "friedman", "--higher-is-better")
    assert status == 0 and "error (higher is better" in out
    status, out, _ = _cli(capsys, "compare", path, "--test", "friedman", "--lower-is-better")
    assert status == 0 and "error (lower is better" in out
    # a per-fold accuracy file: posthoc's ordering puts the most accurate first
    folds = tmp_path / "folds.csv"
    acc = {
        "a": [0.80, 0.82, 0.79, 0.81],
        "b": [0.70, 0.72, 0.71, 0.69],
        "c": [0.9, 0.91, 0.9, 0.92],
    }
    folds.write_text(
        "algorithm,fold,accuracy\n"
        + "".join(f"{a},{k},{v}\n" for a, vs in acc.items() for k, v in enumerate(vs))
    )
    status, out, err = _cli(capsys, "compare", folds, "--test", "posthoc")
    assert status == 0, err
    assert "Ordering, best first (higher is better):" in out
    assert re.search(r"^\s+c\s+a\s+b$", out, re.M), out
    status, out, _ = _cli(capsys, "compare", folds, "--test", "posthoc", "--lower-is-better")
    assert status == 0 and re.search(r"^\s+b\s+a\s+c$", out, re.M), out
    status, _, err = _cli(capsys, "compare", folds, "--test", "t", "--pair", "a", "b",
                          "--higher-is-better")  # fmt: skip
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "--higher-is-better is not used" in err
