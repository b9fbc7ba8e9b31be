"""Issue 28.3: cliques drawn as they are when not contiguous in the ordering; the
Gaussian contours of rates drawn whole with the region outside [0, 1] shaded, their levels
named.

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


def test_rate_contours_drawn_whole_with_the_impossible_region_shaded():
    # Issue 39.7: the contours of rates were clipped at 0 and 1, at the panel's edge (issue
    # 28.3), which hid how much of the fitted Gaussian lies beyond them: now drawn whole, the
    # view widened to hold them, the region outside [0, 1] shaded and named.
    rng = np.random.default_rng(0)
    pts = {"a": np.c_[rng.uniform(0, 0.03, 10), rng.uniform(0.9, 1.0, 10)]}
    fig = plot.scatter_gaussian(pts, labels=("fpr", "tpr"))
    ax = fig.axes[0]
    contours = [ln for ln in ax.get_lines() if ln.get_gid() == "contour"]
    assert len(contours) == 2
    mean, inv = pts["a"].mean(0), np.linalg.inv(np.cov(pts["a"], rowvar=False))  # numpy
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for c, level in zip(contours, (1.0, 4.0), strict=True):
        assert c.get_clip_path() is None
        xy = np.c_[c.get_xdata(), c.get_ydata()] - mean
        np.testing.assert_allclose(np.einsum("ni,ij,nj->n", xy, inv, xy), level, rtol=1e-9)
        assert x0 <= xy[:, 0].min() + mean[0] and xy[:, 0].max() + mean[0] <= x1
        assert y0 <= xy[:, 1].min() + mean[1] and xy[:, 1].max() + mean[1] <= y1
    assert y1 > 1 and x0 < 0  # the radius-2 contour runs past tpr = 1 and fpr = 0
    outside = [p for p in ax.patches if p.get_gid() == "outside"]
    assert len(outside) == 2  # tpr above 1, fpr below 0
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == [
        "a",
        "Mahalanobis radius 1",
        "Mahalanobis radius 2",
        "outside [0, 1]: impossible",
    ]
    plt.close(fig)
    fig = plot.scatter_gaussian(pts, labels=("x", "y"))  # not rates: nothing impossible
    assert not [p for p in fig.axes[0].patches if p.get_gid() == "outside"]
    plt.close(fig)
    fig = plot.scatter_gaussian(pts, labels=("fpr", "tpr"), limits=False)
    assert not [p for p in fig.axes[0].patches if p.get_gid() == "outside"]
    plt.close(fig)
    with pytest.raises(ValueError, match="`limits` must be"):
        plot.scatter_gaussian(pts, limits=((1, 0), (0, 1)))
