"""The simplex of a Bayesian signed-rank test's posterior: baycomp's plot_simplex."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from jaxtests import bayesian, plot
from jaxtests._plotting import simplex as simplex_figure


def _scores():
    rng = np.random.default_rng(0)
    b = rng.normal(0.8, 0.05, 12)
    return b + rng.normal(0.01, 0.01, 12), b


# One compiled posterior program (its data and sample sizes) for every call here.
KW = dict(rope=0.01, n_samples=3_000, key=0)


@pytest.fixture(scope="module")
def result():
    return bayesian.signrank(*_scores(), **KW, return_samples=True)


def _corners(fig):
    return {t.get_text(): t for t in fig.axes[0].texts if t.get_gid() == "corner"}


def test_simplex_draws_every_sample_in_the_triangle(result):
    fig = plot.simplex(result, names=("svm", "knn"))
    ax = fig.axes[0]
    (points,) = [c for c in ax.collections if c.get_gid() == "samples"]
    xy = points.get_offsets()
    assert len(xy) == result.n_samples == 3_000
    assert 0 < points.get_alpha() < 1
    # barycentric: right corner (1, 0), rope corner (1/2, sqrt(3)/2)
    s = result.samples
    np.testing.assert_allclose(xy[:, 0], s[:, 2] + s[:, 1] / 2)
    np.testing.assert_allclose(xy[:, 1], np.sqrt(3) / 2 * s[:, 1])
    plt.close(fig)


def test_simplex_corners_say_which_learner_is_better(result):
    fig = plot.simplex(result, names=("svm", "knn"))
    texts = _corners(fig)
    assert len(texts) == 3
    by_label = {k.splitlines()[0]: t for k, t in texts.items()}
    assert set(by_label) == {"knn better", "rope", "svm better"}
    # baycomp's layout (issue 28.6): a = svm better is p_left, at the bottom left;
    # b = knn better, p_right, at the bottom right
    assert by_label["svm better"].get_position() == (0.0, -0.04)
    assert by_label["knn better"].get_position() == (1.0, -0.04)
    assert f"p = {result.p_left:.3f}" in by_label["svm better"].get_text()
    assert f"p = {result.p_right:.3f}" in by_label["knn better"].get_text()
    assert f"p = {result.p_rope:.3f}" in by_label["rope"].get_text()
    plt.close(fig)
    fig = plot.simplex(result)
    assert {k.splitlines()[0] for k in _corners(fig)} == {"b better", "rope", "a better"}
    plt.close(fig)


def test_simplex_draws_at_most_its_subsample_and_on_given_axes(monkeypatch, result):
    monkeypatch.setattr(simplex_figure, "_SIMPLEX_POINTS", 1_000)
    fig, ax = plt.subplots()
    out = plot.simplex(result, ax=ax, title="mine")
    assert out is fig and ax.get_title() == "mine"
    (points,) = [c for c in ax.collections if c.get_gid() == "samples"]
    assert len(points.get_offsets()) == 1_000
    plt.close(fig)


def test_simplex_refuses_other_input(result):
    with pytest.raises(TypeError, match="SignRankResult"):
        plot.simplex(result.samples)
    with pytest.raises(ValueError, match="`names`"):
        plot.simplex(result, names=("a", "b", "c"))
    lean = bayesian.signrank(*_scores(), **KW)
    with pytest.raises(ValueError, match="return_samples=True"):
        plot.simplex(lean)
