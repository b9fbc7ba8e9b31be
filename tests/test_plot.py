"""Plot functions draw readable figures: titles and labels, result objects accepted, and at
nine learners no text box overlaps another, count axes are integers and legends sit
outside the data."""

import io
import itertools

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

import jaxtests
from jaxtests import plot

NINE = [
    "svm-linear",
    "svm-quadratic",
    "svm-cubic",
    "svm-gaussian",
    "lda",
    "logistic",
    "knn",
    "qda",
    "centroid",
]


def _png_size(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return len(buf.getvalue())


def _visible_texts(fig):
    """Every drawn, non-empty text of ``fig``: titles, labels, annotations, legends and
    the tick labels inside each axis's view interval."""
    fig.canvas.draw()
    out = []
    for t in fig.findobj(matplotlib.text.Text):
        if not t.get_text().strip() or not t.get_visible():
            continue
        if any(t is lab for ax in fig.axes for ax_ in (ax.xaxis, ax.yaxis)
               for tick in ax_.get_major_ticks() + ax_.get_minor_ticks()
               for lab in (tick.label1, tick.label2)):  # fmt: skip
            continue  # tick labels: added below, only those that are drawn
        if not _shown(t):
            continue
        out.append(t)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            eps = 1e-9 * max(1.0, abs(hi - lo))
            for tick in axis.get_major_ticks():
                if not lo - eps <= tick.get_loc() <= hi + eps:
                    continue
                for lab in (tick.label1, tick.label2):
                    if lab.get_visible() and lab.get_text().strip() and tick.get_visible():
                        out.append(lab)
    return out


def _shown(artist):
    while artist is not None:
        if not artist.get_visible():
            return False
        artist = getattr(artist, "axes", None) if artist is not getattr(
            artist, "axes", None) else None  # fmt: skip
    return True


def check_readable(fig):
    """No two visible texts overlap, every text lies inside the figure, legends lie
    outside every axes' data area. Returns the number of texts checked."""
    r = fig.canvas.get_renderer()
    texts = _visible_texts(fig)
    boxes = [(t.get_text(), t.get_window_extent(r)) for t in texts]
    figbox = fig.bbox
    for s, b in boxes:
        inside = figbox.x0 - 1 <= b.x0 and b.x1 <= figbox.x1 + 1
        assert inside and figbox.y0 - 1 <= b.y0 and b.y1 <= figbox.y1 + 1, f"{s!r} is cut off"
    for (s1, b1), (s2, b2) in itertools.combinations(boxes, 2):
        shrunk1 = b1.expanded(1.0, 1.0).padded(-0.5)
        assert not shrunk1.overlaps(b2.padded(-0.5)), f"texts {s1!r} and {s2!r} overlap"
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is None or not ax.get_visible():
            continue
        lb = leg.get_window_extent(r).padded(-1)
        for other in fig.axes:
            if other.get_visible():
                assert not lb.overlaps(other.get_window_extent(r).padded(-1)), (
                    "legend over the data"
                )
    return len(boxes)


def _integer_ticks(axis):
    lo, hi = sorted(axis.get_view_interval())
    locs = [x for x in axis.get_ticklocs() if lo <= x <= hi]
    return len(locs) >= 2 and np.allclose(locs, np.round(locs))


def test_fold_histograms(rng):
    fig = plot.fold_histograms({"a": rng.normal(size=10), "b": rng.normal(1, size=10)})
    ax = fig.axes[0]
    assert ax.get_title() == "Per-fold error"
    assert ax.get_xlabel() == "error"
    assert len(ax.patches) == 20  # 10 bins for each of the two algorithms
    assert _integer_ticks(ax.yaxis)  # no "1.5 folds"
    check_readable(fig)
    assert _png_size(fig) > 5000


def test_fold_histograms_nine_learners_small_multiples(rng):
    vals = {n: rng.integers(0, 5, size=10) / 57 for n in NINE}
    fig = plot.fold_histograms(vals, measure="error")
    panels = [a for a in fig.axes if a.get_visible()]
    assert len(panels) == 9  # one per learner: none hides another
    assert all(_integer_ticks(a.yaxis) for a in panels)
    assert check_readable(fig) >= 9 + 4
    plt.close(fig)


def test_scatter_gaussian(rng):
    pts = {"svm": rng.normal(size=(10, 2)), "knn": rng.normal(2, size=(10, 2))}
    fig = plot.scatter_gaussian(pts, labels=("fpr", "tpr"))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "fpr" and ax.get_ylabel() == "tpr"
    assert "Gaussian contours" in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["svm", "knn", "Mahalanobis radius 1", "Mahalanobis radius 2"]
    check_readable(fig)
    assert _png_size(fig) > 5000
    with pytest.raises(ValueError, match=r"shape \(n_folds, 2\)"):
        plot.scatter_gaussian({"a": np.ones((4, 3))})


def test_scatter_gaussian_nine_learners_labelled_panels(rng):
    pts = {n: rng.normal(i, size=(10, 2)) for i, n in enumerate(NINE)}
    fig = plot.scatter_gaussian(pts)
    panels = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in panels] == NINE  # every ellipse has its name
    check_readable(fig)
    plt.close(fig)


def test_null_distribution(rng):
    fig = plot.null_distribution(rng.normal(size=1000), 2.5, 0.012)
    ax = fig.axes[0]
    assert "1000 resamples" in ax.get_title()
    assert "p = 0.012" in ax.get_legend().get_texts()[0].get_text()
    check_readable(fig)
    assert _png_size(fig) > 5000
    with pytest.raises(ValueError, match="finite"):
        plot.null_distribution([np.nan], 0.0)
    with pytest.raises(TypeError, match="`observed` is required"):
        plot.null_distribution(rng.normal(size=10))


def test_null_distribution_accepts_results(rng):
    d = rng.normal(0.3, 1.0, size=40)
    res = jaxtests.signflip_test(d, n_resamples=2000, key=0, return_null=True)
    fig = plot.null_distribution(res, statistic="mean difference")
    ax = fig.axes[0]
    legend = ax.get_legend().get_texts()[0].get_text()
    assert f"{float(res.statistic):.4g}" in legend and f"p = {float(res.pvalue):.3g}" in legend
    assert "2000 resamples" in ax.get_title()
    check_readable(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="return_null=True"):
        plot.null_distribution(jaxtests.signflip_test(d, n_resamples=100, key=0))


def test_ordering():
    fig = plot.ordering({"rf": 0.1, "lda": 0.12, "qda": 0.2, "knn": 0.3}, [("rf", "lda"), ("qda",)])
    ax = fig.axes[0]
    assert ax.get_title().startswith("Ordering by mean error")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rf", "lda", "qda", "knn"]
    check_readable(fig)
    assert _png_size(fig) > 3000
    with pytest.raises(ValueError, match="unknown algorithm"):
        plot.ordering({"a": 1.0}, [("a", "b")])


def test_ordering_close_means_never_overlap():
    # Five learners within 0.004 of each other: the old plot printed their names on top
    # of one another.
    means = dict(zip(NINE, [0.0228, 0.0193, 0.0228, 0.0193, 0.0404, 0.0211, 0.03, 0.0212, 0.05]))
    fig = plot.ordering(means, [[*NINE[:4], "logistic", "qda"], ["lda", "knn", "centroid"]])
    check_readable(fig)
    plt.close(fig)


def test_ordering_accepts_posthoc_result(rng):
    err = rng.normal([[0.1], [0.1], [0.3], [0.3]], 0.05, size=(4, 10))
    ph = jaxtests.posthoc(err, test="t", names=["a", "b", "c", "d"])
    fig = plot.ordering(ph)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(ph.ordering.labels)
    assert len(ax.lines) == 1 + 2 * 2  # the means, and a bar with dots per group {a,b}, {c,d}
    check_readable(fig)
    plt.close(fig)


def test_projection(rng):
    x = rng.normal(size=(3, 10, 4))
    fig = plot.projection(
        x, [0.5, -0.5, 0.1, 0.2], ["c45", "qda", "svm2"], measure_names=["tp", "fp", "tn", "fn"]
    )
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("M1 = +0.500·tp")
    assert ax.get_title() == "Projection on the learned measure M1"
    check_readable(fig)
    assert _png_size(fig) > 5000


def test_projection_accepts_manova_result_nine_learners(rng):
    x = rng.normal(size=(9, 10, 2)) + np.arange(9)[:, None, None] * 0.2
    ma = jaxtests.manova(x, names=("tpr", "fpr"))
    fig = plot.projection(x, ma, NINE)
    w = np.asarray(ma.eigenvectors)[:, 0]
    panels = [a for a in fig.axes if a.get_visible()]
    assert len(panels) == 9
    assert panels[-1].get_xlabel() == f"M1 = {w[0]:+.3f}·tpr {w[1]:+.3f}·fpr"
    check_readable(fig)
    plt.close(fig)


def test_panels_replace_a_given_subplot(rng):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), layout="constrained")
    out = plot.fold_histograms({n: rng.normal(size=10) for n in NINE[:5]}, ax=axes[1])
    assert out is fig
    plot.ordering({"a": 0.1, "b": 0.2}, [("a", "b")], ax=axes[0])
    check_readable(fig)
    plt.close(fig)


def test_study_plots_readable_legends_outside():
    # the study plots had their legends inside the axes, over the curves
    from jaxtests import study

    pw = study.power(["t", "sign"], "normal", n_experiments=200, m=12, effect=[0, 1], key=0)
    cal = study.calibration(["t", "sign"], "normal", n_experiments=200, m=12, key=0)
    for fig in (study.plot_power(pw), study.plot_calibration(cal)):
        check_readable(fig)
        plt.close(fig)


def test_fold_differences_show_what_the_paired_test_tests(rng):
    # Issue 39.7: the demo's fold histograms were unpaired although the test is paired.
    import scipy.stats

    a = rng.normal(0.10, 0.02, size=10)
    b = a + np.r_[0.0, rng.normal(0.01, 0.01, size=9)]  # fold 0: no difference
    fig = plot.fold_differences({"svm": a, "knn": b}, measure="error")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "error: svm - knn (per fold)"
    d = a - b
    bars = [p for p in ax.patches if p.get_gid() is None]
    heights = np.array([p.get_height() for p in bars])
    edges = [p.get_x() for p in bars] + [bars[-1].get_x() + bars[-1].get_width()]
    np.testing.assert_array_equal(heights, np.histogram(d, edges)[0])  # numpy's counts
    assert heights.sum() == 10 and _integer_ticks(ax.yaxis)
    zero = next(p for p in bars if p.get_x() <= 0 < p.get_x() + p.get_width())
    assert zero.get_x() + zero.get_width() / 2 == pytest.approx(0.0, abs=1e-15)  # centred
    lines = {ln.get_gid(): ln for ln in ax.get_lines()}
    assert lines["zero"].get_xdata()[0] == 0.0
    np.testing.assert_allclose(lines["mean"].get_xdata()[0], d.mean(), rtol=1e-12)
    span = next(p for p in ax.patches if p.get_gid() == "interval")
    ci = scipy.stats.ttest_rel(a, b).confidence_interval(0.95)  # scipy's paired t interval
    got = [span.get_x(), span.get_x() + span.get_width()]
    np.testing.assert_allclose(got, [ci.low, ci.high], rtol=1e-10)
    check_readable(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="`values` must hold two algorithms, got 3"):
        plot.fold_differences({"a": a, "b": b, "c": a})
    with pytest.raises(ValueError, match="the same folds"):
        plot.fold_differences({"a": a, "b": b[:5]})


def test_null_histogram_bins_follow_the_lattice_of_possible_values(rng):
    # Issue 39.7: a label-permutation null of accuracies (multiples of 1/n, a mean over
    # folds within rounding of them) drawn in bins that straddled the lattice: a comb of
    # full and empty bins. Now each bin holds the same whole number of lattice points.
    n = 569
    k = rng.binomial(n, 0.6, size=1000)
    null = k / n + rng.uniform(-0.1, 0.1, size=1000) / n  # unequal folds: off by < 1/(2n)
    fig = plot.null_distribution(null, 0.95, lattice=1 / n)
    bars = fig.axes[0].patches
    widths = np.array([p.get_width() for p in bars])
    merge = round(widths[0] * n)
    np.testing.assert_allclose(widths, merge / n, rtol=1e-9)  # whole lattice steps
    lefts = np.array([p.get_x() for p in bars]) * n + 0.5  # edges halfway between k/n
    np.testing.assert_allclose(lefts, np.round(lefts), atol=1e-6)
    counts = np.array([p.get_height() for p in bars]) * widths * null.size
    ref = [np.sum((k >= s) & (k < s + merge)) for s in np.round(lefts).astype(int)]
    np.testing.assert_allclose(counts, ref, rtol=1e-9)  # numpy's count of each k
    plt.close(fig)
    # detected when the null takes a few values on a lattice (an exact null)
    fig = plot.null_distribution(rng.integers(0, 21, size=500) / 20, 0.9)
    centres = np.array([p.get_x() + p.get_width() / 2 for p in fig.axes[0].patches]) * 20
    np.testing.assert_allclose(centres, np.round(centres), atol=1e-9)
    plt.close(fig)
    with pytest.raises(ValueError, match="`lattice` must be a positive finite"):
        plot.null_distribution(null, 0.9, lattice=0.0)
    with pytest.raises(TypeError, match="`lattice` must be a positive number"):
        plot.null_distribution(null, 0.9, lattice="1/n")
