"""Issue 28.4: CVResult's accessors return float64 numpy arrays, as scipy's results do.

A float64 ``jax.Array`` outside x64 warns in ``np.mean`` ("truncated to float32") and
``json.dumps`` refuses it; numpy arrays do neither.
"""

import json

import numpy as np
import pytest
from _helpers import python

from jaxtests import cross_validate, models


@pytest.fixture(scope="module")
def cv():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1, -1)
    return cross_validate({"lda": models.lda(), "nc": models.nearest_centroid()}, X, y, cv=5, key=0)


def _is_float64_numpy(a):
    return type(a) is np.ndarray and a.dtype == np.float64


def test_accessors_return_float64_numpy(cv):
    for a in (
        cv.fold_scores("lda", "tpr"),
        cv.fold_scores("lda", "roc_auc"),
        cv.fold_scores("lda", "f1_macro"),
        cv.fold_scores_any("lda", "hinge"),
        cv.fold_losses("lda", "hinge"),
        cv.fold_losses("lda", reduce="sum"),
        cv.instance_losses("lda", "zero_one"),
        cv.confusion_matrix("lda"),
        cv.instance_differences("lda", "nc", "hinge"),
        *cv.confusion("lda"),
    ):
        assert _is_float64_numpy(a), (type(a), a.dtype)
    assert type(cv.confusion("lda")).__name__ == "ConfusionCounts"  # named tuple kept
    outputs, index, valid = cv.instance_outputs("lda")
    assert all(type(a) is np.ndarray for a in (outputs, index, valid))
    json.dumps(cv.fold_scores("lda", "error").tolist())


def test_no_truncation_warning_outside_x64():
    # a fresh interpreter with JAX's default precision (x64 off), warnings as errors
    code = (
        "import warnings, numpy as np, jaxtests; from jaxtests import models\n"
        "warnings.simplefilter('error')\n"
        "rng = np.random.default_rng(0); X = rng.normal(size=(30, 2))\n"
        "y = np.where(X[:, 0] > 0, 1, -1)\n"
        "cv = jaxtests.cross_validate({'a': models.lda()}, X, y, cv=3, key=0)\n"
        "s = cv.fold_scores('a', 'error')\n"
        "print(type(s).__name__, s.dtype, float(np.mean(s)) >= 0)\n"
    )
    assert python(code).stdout.split() == ["ndarray", "float64", "True"]


def test_adjust_pvalues_is_numpy():
    import jaxtests

    # R: p.adjust(c(0.01, 0.04, 0.03), "holm") = 0.03 0.06 0.06
    out = jaxtests.adjust_pvalues([0.01, 0.04, 0.03], "holm")
    assert _is_float64_numpy(out)
    np.testing.assert_allclose(out, [0.03, 0.06, 0.06])


def test_rank_and_bayesian_fields_are_numpy_scalars_for_json():
    # Issue 39.3: wilcoxon's pvalue/statistic/rank_biserial, ScoreTable.wilcoxon and
    # correlated_ttest's p_right were 0-d arrays, which json.dumps refuses.
    import jaxtests

    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 12))
    w = jaxtests.wilcoxon(a, b)
    c = jaxtests.bayesian.correlated_ttest(a[:10], b[:10], rho=0.1, rope=0.01)
    n = len(a)
    table = jaxtests.read_scores(
        {"dataset": [*range(n), *range(n)], "learner": ["x"] * n + ["y"] * n, "score": [*a, *b]}
    )
    tw = table.wilcoxon("x", "y")
    fields = [w.pvalue, w.statistic, w.rank_biserial, tw.pvalue, c.p_left, c.p_right, c.p_rope]
    assert all(type(v) is np.float64 for v in fields), [type(v) for v in fields]
    json.dumps(fields)
