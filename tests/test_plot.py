"""Plot functions draw non-empty figures with the expected titles and labels."""

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from jaxtests import plot


def _png_size(fig):
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return len(buf.getvalue())


def test_fold_histograms(rng):
    fig = plot.fold_histograms({"a": rng.normal(size=10), "b": rng.normal(1, size=10)})
    ax = fig.axes[0]
    assert ax.get_title() == "Per-fold error"
    assert ax.get_xlabel() == "error"
    assert len(ax.patches) == 20  # 10 bins for each of the two algorithms
    assert _png_size(fig) > 5000


def test_scatter_gaussian(rng):
    pts = {"svm": rng.normal(size=(10, 2)), "knn": rng.normal(2, size=(10, 2))}
    fig = plot.scatter_gaussian(pts, labels=("fpr", "tpr"))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "fpr" and ax.get_ylabel() == "tpr"
    assert "Gaussian contours" in ax.get_title()
    assert len(ax.lines) == 2 * 3  # points + two contour levels per algorithm
    assert _png_size(fig) > 5000
    with pytest.raises(ValueError, match=r"shape \(n_folds, 2\)"):
        plot.scatter_gaussian({"a": np.ones((4, 3))})


def test_null_distribution(rng):
    fig = plot.null_distribution(rng.normal(size=1000), 2.5, 0.012)
    ax = fig.axes[0]
    assert "1000 resamples" in ax.get_title()
    assert "p = 0.012" in ax.get_legend().get_texts()[0].get_text()
    assert _png_size(fig) > 5000
    with pytest.raises(ValueError, match="finite"):
        plot.null_distribution([np.nan], 0.0)


def test_ordering():
    fig = plot.ordering({"rf": 0.1, "lda": 0.12, "qda": 0.2, "knn": 0.3}, [("rf", "lda"), ("qda",)])
    ax = fig.axes[0]
    assert ax.get_title().startswith("Ordering by mean error")
    assert [t.get_text() for t in ax.texts] == ["rf", "lda", "qda", "knn"]
    assert _png_size(fig) > 3000
    with pytest.raises(ValueError, match="unknown algorithm"):
        plot.ordering({"a": 1.0}, [("a", "b")])


def test_projection(rng):
    x = rng.normal(size=(3, 10, 4))
    fig = plot.projection(
        x, [0.5, -0.5, 0.1, 0.2], ["c45", "qda", "svm2"], measure_names=["tp", "fp", "tn", "fn"]
    )
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("M1 = +0.500·tp")
    assert ax.get_title() == "Projection on the learned measure M1"
    assert _png_size(fig) > 5000
