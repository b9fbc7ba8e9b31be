"""Demšar's critical-difference diagram: names on both sides of the rank axis, the CD
bar as long as the critical difference, one thick bar per group, and readable at 12."""

import itertools

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

import jaxtests
from jaxtests import plot

C45 = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf", "C4.5+ls", "C4.5+m+ls"]
TWELVE = [
    "svm-linear",
    "svm-quadratic",
    "svm-cubic",
    "svm-gaussian",
    "lda",
    "logistic",
    "knn",
    "qda",
    "centroid",
    "random-forest",
    "gradient-boosting",
    "naive-bayes",
]


def _result(names, n, seed=0):
    rng = np.random.default_rng(seed)
    effects = np.linspace(0.0, 0.06, len(names))
    scores = 0.8 + 0.1 * rng.standard_normal((n, 1)) + effects
    scores = scores + 0.02 * rng.standard_normal((n, len(names)))
    return jaxtests.nemenyi(scores, names=names)


@pytest.fixture(scope="module")
def c45():
    return _result(C45, 14)


def _texts(fig):
    fig.canvas.draw()
    return {t.get_text(): t for t in fig.axes[0].texts}


def _thick(ax):
    return [line for line in ax.lines if line.get_linewidth() >= 3]


def _no_overlap(fig):
    fig.canvas.draw()  # runs the constrained layout
    r = fig.canvas.get_renderer()
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    texts = [t for t in texts if t.get_visible()]
    boxes = [(t.get_text(), t.get_window_extent(r)) for t in texts]
    for s, b in boxes:
        assert fig.bbox.x0 - 1 <= b.x0 and b.x1 <= fig.bbox.x1 + 1, f"{s!r} is cut off"
        assert fig.bbox.y0 - 1 <= b.y0 and b.y1 <= fig.bbox.y1 + 1, f"{s!r} is cut off"
    for (s1, b1), (s2, b2) in itertools.combinations(boxes, 2):
        assert not b1.padded(-0.5).overlaps(b2.padded(-0.5)), f"{s1!r} and {s2!r} overlap"


def test_names_ranks_and_title(c45):
    fig = plot.critical_difference(c45)
    texts = _texts(fig)
    assert set(C45) <= set(texts)
    for r in np.asarray(c45.average_ranks):
        assert f"{r:.3f}" in texts
    assert f"CD = {float(c45.critical_difference):.2f}" in texts
    ax = fig.axes[0]
    assert ax.get_title() == "Nemenyi, alpha = 0.05, 14 data sets"
    assert list(ax.get_xticks()) == [1, 2, 3, 4, 5, 6]
    assert not ax.yaxis.get_visible()
    assert ax.xaxis.get_ticks_position() == "top"
    plt.close(fig)


def test_better_half_on_the_left(c45):
    fig = plot.critical_difference(c45)
    texts = _texts(fig)
    r = fig.canvas.get_renderer()
    axbox = fig.axes[0].get_window_extent(r)
    mid = (axbox.x0 + axbox.x1) / 2
    ranks = np.asarray(c45.average_ranks)
    order = np.argsort(ranks, kind="stable")
    for pos, i in enumerate(order):
        box = texts[C45[i]].get_window_extent(r)
        if pos < 3:
            assert box.x1 <= axbox.x0 + 1, C45[i]  # left of the axes, best half
        else:
            assert box.x0 >= axbox.x1 - 1, C45[i]
        assert (box.x1 < mid) == (pos < 3)
    # one row per name on each side
    ys = [round(texts[n].get_window_extent(r).y0, 3) for n in C45]
    left = [ys[i] for i in order[:3]]
    right = [ys[i] for i in order[3:]]
    assert len(set(left)) == 3 and len(set(right)) == 3
    plt.close(fig)


def test_group_bars_and_cd_bar(c45):
    fig = plot.critical_difference(c45)
    ax = fig.axes[0]
    groups = [g for g in c45.groups if len(g) > 1]
    assert len(groups) >= 1
    assert len(_thick(ax)) == len(groups)
    ranks = dict(zip(c45.names, np.asarray(c45.average_ranks), strict=True))
    rows = set()
    for line, g in zip(_thick(ax), groups, strict=True):
        x, y = line.get_data()
        rs = [ranks[n] for n in g]
        assert x[0] <= min(rs) and x[1] >= max(rs)
        assert y[0] > 0  # below the rank axis (y grows downwards)
        rows.add(float(y[0]))
    assert len(rows) == len(groups)  # stacked, never on the same row
    (cd,) = [line for line in ax.lines if line.get_gid() == "cd"]
    x, y = cd.get_data()
    assert x[1] - x[0] == pytest.approx(float(c45.critical_difference))
    assert y[0] < 0  # above the rank axis
    plt.close(fig)


def test_wrong_input():
    with pytest.raises(TypeError, match="`result`"):
        plot.critical_difference({"a": 1.0, "b": 2.0})
    with pytest.raises(TypeError, match="`result`"):
        plot.critical_difference(jaxtests.friedman([[1.0, 2.0, 3.0], [2.0, 3.0, 1.0]]))


def test_ax_and_title(c45):
    fig, ax = plt.subplots(1, 2, figsize=(14, 4))
    out = plot.critical_difference(c45, ax=ax[1], title="mine")
    assert out is fig
    assert ax[1].get_title() == "mine"
    assert len(_thick(ax[1])) > 0 and len(ax[0].lines) == 0
    plt.close(fig)


@pytest.mark.parametrize("names, n", [(C45, 14), (TWELVE, 30)])
def test_readable(names, n, tmp_path):
    fig = plot.critical_difference(_result(names, n))
    _no_overlap(fig)
    h = fig.get_size_inches()[1]
    assert h > 2.0
    fig.savefig(tmp_path / "cd.png")
    assert (tmp_path / "cd.png").stat().st_size > 5000
    plt.close(fig)


def test_height_grows_with_k():
    small = plot.critical_difference(_result(C45[:4], 10))
    large = plot.critical_difference(_result(TWELVE, 10))
    assert large.get_size_inches()[1] > small.get_size_inches()[1]
    plt.close("all")
