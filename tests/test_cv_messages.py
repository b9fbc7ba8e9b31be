"""Issue 28.7: a misspelt model name is reported as such, before any design check."""

import numpy as np
import pytest

from jaxtests import cross_validate, models


@pytest.fixture(scope="module")
def cv():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    ms = {"lda": models.lda(), "nc": models.nearest_centroid()}
    return cross_validate(ms, X, y, cv=3, repeats=3, key=0)


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("ttest_paired", ("lda", "lad")),
        ("ttest_5x2cv", ("lad", "nc")),
        ("ftest_5x2cv", ("lda", "lad")),
        ("ttest_corrected", ("lad", "nc")),
        ("hotelling_t2", ("lda", "lad")),
        ("signflip_test", ("lda", "lad")),
        ("signflip_test_folds", ("lda", "lad")),
        ("anova", (["lda", "lad"],)),
        ("manova", (["lda", "lad"],)),
        ("posthoc", (["lda", "lad"],)),
    ],
)
def test_unknown_model_named_before_the_design(cv, method, args):
    # repeated cv: before issue 28 the pooling (or 5x2) refusal came first
    with pytest.raises(ValueError, match=r"unknown model 'lad'; models are \['lda', 'nc'\]"):
        getattr(cv, method)(*args)
