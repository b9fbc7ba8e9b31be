"""permutation_test_score: Ojala & Garriga test 1 (seed 003) against scikit-learn."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import StratifiedKFold
from sklearn.model_selection import permutation_test_score as sk_pts

from jaxtests import datasets, models
from jaxtests._sanity import _perm_keys, draw_binary_labels, permutation_test_score


@pytest.fixture(scope="module")
def data():
    X, y = datasets.load_breast_cancer()
    X = (X - X.mean(0)) / X.std(0)
    return X[:150, :6], y[:150]


def test_ridge_equals_sklearn_same_folds_and_permutations(data):
    X, y = data
    folds = list(StratifiedKFold(5).split(X, y))
    B = 40
    # sklearn's _shuffle draws random_state.permutation(n) once per permutation, in order
    rs = np.random.RandomState(7)
    perms = np.stack([rs.permutation(len(y)) for _ in range(B)])
    ours = permutation_test_score(
        models.ridge_classifier(1.0), X, y, cv=folds, permutations=perms, key=0
    )
    s, ps, p = sk_pts(RidgeClassifier(1.0), X, y, cv=folds, n_permutations=B, random_state=7)
    np.testing.assert_allclose(ours.statistic, s, atol=1e-8)
    np.testing.assert_allclose(ours.permutation_scores, ps, atol=1e-8)
    np.testing.assert_allclose(ours.pvalue, p, rtol=1e-12)
    # the sklearn-estimator fallback reproduces the same numbers
    calls = []
    fb = permutation_test_score(
        RidgeClassifier(1.0),
        X,
        y,
        cv=folds,
        permutations=perms[:5],
        progress=lambda i, n: calls.append((i, n)),
    )
    np.testing.assert_allclose(fb.permutation_scores, ps[:5], atol=1e-8)
    assert calls[-1] == (5, 5)


def test_binary_label_draws_are_exact_permutations():
    n, n_pos, B = 12, 5, 20_000
    with jax.enable_x64(True):
        Y = np.asarray(
            draw_binary_labels(_perm_keys(jax.random.key(3), 0, B), n, n_pos, jnp.float64)
        )
    assert np.all((Y > 0).sum(1) == n_pos)
    # each position is positive with probability n_pos / n: binomial SE per position
    # sqrt(p (1 - p) / B) = 0.0035; 5 SE bound, failure budget < 1e-5 over 12 positions
    np.testing.assert_allclose((Y > 0).mean(0), n_pos / n, atol=5 * 0.0035)
    # pairs: P(both positive) = n_pos (n_pos - 1) / (n (n - 1)) = 0.1515, SE 0.0025
    np.testing.assert_allclose(
        ((Y[:, 0] > 0) & (Y[:, 1] > 0)).mean(), n_pos * (n_pos - 1) / (n * (n - 1)), atol=5 * 0.0026
    )
    # batch-size invariance: a sub-block starting at 100 reproduces those rows
    with jax.enable_x64(True):
        sub = np.asarray(
            draw_binary_labels(_perm_keys(jax.random.key(3), 100, 7), n, n_pos, jnp.float64)
        )
    np.testing.assert_array_equal(sub, Y[100:107])


def test_batch_size_invariance_and_pvalue(data):
    X, y = data
    kw = dict(cv=3, n_permutations=60, key=5, scoring=("accuracy", "f1"))
    a = permutation_test_score(models.ridge_classifier(), X, y, batch_size=60, **kw)
    b = permutation_test_score(models.ridge_classifier(), X, y, batch_size=25, **kw)
    np.testing.assert_array_equal(a.permutation_scores, b.permutation_scores)
    assert a.permutation_scores.shape == (60, 2)
    C = np.sum(np.asarray(a.permutation_scores) >= np.asarray(a.statistic)[None], axis=0)
    np.testing.assert_allclose(a.pvalue, (C + 1) / 61)
    # 99% Clopper-Pearson, scipy.stats.binomtest(C, 60).proportion_ci(0.99, "exact")
    ci = scipy.stats.binomtest(int(C[0]), 60).proportion_ci(0.99, method="exact")
    np.testing.assert_allclose(a.pvalue_interval[0], [ci.low, ci.high], rtol=1e-10)
    assert a.seed == 5


def test_null_is_centred_and_modes(data):
    X, y = data
    base = dict(cv=3, n_permutations=100, key=1)
    r = permutation_test_score(models.lda(), X, y, **base)
    assert float(r.pvalue) == pytest.approx(1 / 101)  # strong signal
    assert float(np.mean(r.permutation_scores)) < 0.65
    for kw in ({"permute": "train"}, {"groups": np.arange(len(y)) % 3}):
        r = permutation_test_score(models.ridge_classifier(), X, y, **base, **kw)
        assert float(r.pvalue) == pytest.approx(1 / 101)  # strong signal
        # permuted accuracy ~ p^2 + (1-p)^2 for a label-blind classifier at best
        assert float(np.mean(r.permutation_scores)) < 0.65
    # permute="train" leaves test labels: different null from "all"
    a = permutation_test_score(models.ridge_classifier(), X, y, **base)
    t = permutation_test_score(models.ridge_classifier(), X, y, permute="train", **base)
    assert not np.allclose(a.permutation_scores, t.permutation_scores)


def test_group_permutations_stay_within_groups():
    # labels constant within groups: permuting within groups changes nothing
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    g = np.repeat(np.arange(6), 10)
    y = np.where(g % 2 == 0, 1.0, -1.0)
    r = permutation_test_score(
        models.ridge_classifier(), X, y, cv=3, n_permutations=20, groups=g, key=0
    )
    np.testing.assert_allclose(r.permutation_scores, float(r.statistic), rtol=1e-14)
    assert float(r.pvalue) == 1.0


def test_regression_r2(data):
    X, y = datasets.load_diabetes()
    r = permutation_test_score(
        models.ridge(1.0), X[:120], y[:120], cv=3, n_permutations=30, scoring="r2", key=0
    )
    assert float(r.statistic) > 0.2 > float(np.max(r.permutation_scores))


def test_validation_messages(data):
    X, y = data
    m = models.ridge_classifier()
    with pytest.raises(ValueError, match="`scoring` must be one of"):
        permutation_test_score(m, X, y, scoring="r2")
    with pytest.raises(ValueError, match="`permute` must be one of"):
        permutation_test_score(m, X, y, permute="test")
    with pytest.raises(ValueError, match="`n_permutations` must be at least 1"):
        permutation_test_score(m, X, y, n_permutations=0)
    with pytest.raises(ValueError, match=r"`groups` must have shape \(150,\)"):
        permutation_test_score(m, X, y, groups=np.zeros(3))
    with pytest.raises(ValueError, match="row 0 is not a permutation"):
        permutation_test_score(m, X, y, permutations=np.zeros((2, 150), int))
    with pytest.raises(ValueError, match="`permutations` must be an integer array"):
        permutation_test_score(m, X, y, permutations=np.zeros((2, 150)))
    with pytest.raises(ValueError, match="`y` must be 1-d with one entry per row"):
        permutation_test_score(m, X, y[:10])
    with pytest.raises(ValueError, match="smaller class has 0"):
        permutation_test_score(m, X, np.ones(150))
    with pytest.raises(ValueError, match="`scoring` is empty"):
        permutation_test_score(m, X, y, scoring=())
