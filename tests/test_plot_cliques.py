"""Issue 28.3: cliques drawn as they are when not contiguous in the ordering; the
Gaussian contours of rates clipped to [0, 1], their levels named.

The reference for a clique is the definition: a maximal set of algorithms with no
significant pair (Bron-Kerbosch, checked by brute force over all subsets here).
"""

import itertools

import matplotlib
import numpy as np
import pytest

import jaxtests
from jaxtests import plot

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _brute_cliques(reject):
    n = len(reject)
    ok = [
        set(c)
        for k in range(2, n + 1)
        for c in itertools.combinations(range(n), k)
        if not any(reject[i, j] for i, j in itertools.combinations(c, 2))
    ]
    return {frozenset(c) for c in ok if not any(c < d for d in ok)}


def test_tied_means_are_ordered_to_keep_cliques_contiguous():
    # the demo's case: svm-quadratic and svm-gaussian tied; gaussian and centroid differ
    names = ["quadratic", "gaussian", "logistic", "centroid"]
    means = [0.0193, 0.0193, 0.021, 0.07]
    reject = np.zeros((4, 4), bool)
    reject[1, 3] = reject[3, 1] = True
    o = jaxtests.ordering(means, reject, names)
    assert {frozenset(o.order[p] for p in c) for c in o.cliques} == _brute_cliques(reject)
    assert o.labels == ("gaussian", "quadratic", "logistic", "centroid")  # ties swapped
    assert not o.split_cliques() and o.groups == o.cliques
    lines = o.text().split("\n")
    assert lines[1] == "─" * len("gaussian  quadratic  logistic")
    assert lines[2] == " " * len("gaussian  ") + "─" * len("quadratic  logistic  centroid")


def test_a_clique_that_skips_an_algorithm_is_drawn_split():
    # A and C are not different, B differs from A: cliques {A, C} and {B, C, D}
    reject = np.zeros((4, 4), bool)
    reject[0, 1] = reject[1, 0] = reject[0, 3] = reject[3, 0] = True
    o = jaxtests.ordering([0.1, 0.2, 0.3, 0.4], reject, ["A", "B", "C", "D"])
    assert {frozenset(c) for c in o.cliques} == _brute_cliques(reject)
    assert o.split_cliques()
    assert o.text().split("\n") == ["A  B  C  D", "─┈┈┈┈┈─", "   ───────"]
    fig = plot.ordering(o)
    ax = fig.axes[0]
    bars = [ln for ln in ax.get_lines() if ln.get_gid() == "group"]
    # {A, C}: one bar per run of member rows (A, C: two one-row runs); {B, C, D}: one bar
    assert sorted(tuple(np.asarray(b.get_ydata(), float)) for b in bars) == [
        (0.0, 0.0),
        (1.0, 3.0),
        (2.0, 2.0),
    ]
    dotted = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert len(dotted) == 1 and tuple(dotted[0].get_ydata()) == (0, 2)
    plt.close(fig)
    # the post hoc text explains the marks
    x = np.array([[1.0, 1.1, 0.9, 1.0], [2.0, 2.1, 1.9, 2.0], [1.5, 1.6, 1.4, 1.5]])
    r = jaxtests.posthoc(x, names=["a", "b", "c"])
    assert ("┈: not in it" in r.text()) == r.ordering.split_cliques()


def test_rate_contours_are_clipped_and_labelled():
    rng = np.random.default_rng(0)
    pts = {"a": np.c_[rng.uniform(0, 0.03, 10), rng.uniform(0.9, 1.0, 10)]}
    fig = plot.scatter_gaussian(pts, labels=("fpr", "tpr"))
    ax = fig.axes[0]
    contours = [ln for ln in ax.get_lines() if ln.get_gid() == "contour"]
    assert len(contours) == 2
    for c in contours:  # each contour is clipped to the unit square of (fpr, tpr)
        box = c.get_clip_box().transformed(ax.transData.inverted())
        np.testing.assert_allclose(box.extents, [0, 0, 1, 1], atol=1e-9)
    assert ax.get_ylim()[1] <= 1.02 + 1e-12 and ax.get_xlim()[0] >= -0.02 - 1e-12
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["a", "Mahalanobis radius 1", "Mahalanobis radius 2"]
    plt.close(fig)
    fig = plot.scatter_gaussian(pts, labels=("x", "y"))  # not rates: the axes' own clip
    ax = fig.axes[0]
    for ln in ax.get_lines():
        np.testing.assert_allclose(ln.get_clip_box().extents, ax.bbox.extents)
    plt.close(fig)
    with pytest.raises(ValueError, match="`limits` must be"):
        plot.scatter_gaussian(pts, limits=((1, 0), (0, 1)))
