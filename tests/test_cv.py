"""cross_validate, the splitters and CVResult."""

import numpy as np
import pytest
import scipy.stats
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.model_selection import StratifiedKFold

from jaxtests import datasets, models
from jaxtests._cv import FiveByTwo, KFold, RandomSplits, cross_validate


@pytest.fixture(scope="module")
def pima():
    X, y = datasets.load_pima()
    X = (X - X.mean(0)) / X.std(0)
    return X[:200], y[:200]


@pytest.fixture(scope="module")
def res(pima):
    X, y = pima
    return cross_validate(
        {"ridge": models.ridge_classifier(), "lda": models.lda(), "sk_lr": LogisticRegression()},
        X,
        y,
        cv=5,
        key=0,
    )


def test_kfold_assignment_statistics(pima):
    _, y = pima
    import jax

    from jaxtests._cv import make_splits

    s = make_splits(KFold(5, repeats=2), y, jax.random.key(0), True)
    assert s.shape == (2, 5)
    # every instance is tested exactly once per repetition
    np.testing.assert_array_equal(s.test.sum(1), 1)
    np.testing.assert_array_equal(s.train, ~s.test)
    sizes = s.test.sum(-1)
    pos = (s.test & (y > 0)).sum(-1)
    # sklearn StratifiedKFold gives the same fold sizes and per-fold class counts
    ref = [(y[te] > 0).sum() for _, te in StratifiedKFold(5).split(y[:, None], y)]
    ref_sizes = [len(te) for _, te in StratifiedKFold(5).split(y[:, None], y)]
    for r in range(2):
        assert sorted(sizes[r]) == sorted(ref_sizes)
        assert sorted(pos[r]) == sorted(ref)
    assert not np.array_equal(s.test[0], s.test[1])  # repetitions reshuffle
    s2 = make_splits(KFold(5, repeats=2), y, jax.random.key(0), True)
    np.testing.assert_array_equal(s.test, s2.test)  # reproducible from the key
    u = make_splits(KFold(5, stratified=False), y, jax.random.key(0), True)
    assert sorted(u.test.sum(-1)[0]) == [40] * 5


def test_random_splits_and_5x2(pima):
    X, y = pima
    # 5 splits: the same batch of 5 fits as cv=5, so the compiled fits are shared
    r = cross_validate([models.lda()], X, y, cv=RandomSplits(5, test_size=0.25), key=1)
    assert r.index.shape[:2] == (5, 1)
    n_pos = int((y > 0).sum())
    assert int(r.valid.sum(-1)[0, 0]) == round(n_pos * 0.25) + round((200 - n_pos) * 0.25)
    r5 = cross_validate([models.lda()], X, y, cv=FiveByTwo(), key=1)
    assert r5.index.shape[:2] == (5, 2)
    assert r5.outputs.shape[:3] == (1, 5, 2)


def test_outputs_equal_sklearn_per_fold(pima):
    X, y = pima
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    r = cross_validate({"ours": models.ridge_classifier(), "sk": RidgeClassifier()}, X, y, cv=folds)
    for k, (tr, te) in enumerate(folds):
        ref = RidgeClassifier().fit(X[tr], y[tr]).decision_function(X[te])
        np.testing.assert_array_equal(np.asarray(r.index[0, k, : len(te)]), np.sort(te))
        f_ours, _idx, valid = r.instance_outputs("ours")
        np.testing.assert_allclose(f_ours[0, k][valid[0, k]], ref, rtol=1e-10)
        np.testing.assert_allclose(r.outputs[1, 0, k][r.valid[0, k]], ref, rtol=1e-10)


def test_losses_and_measures_by_hand(res, pima):
    _, y = pima
    f, idx, valid = res.instance_outputs("lda")
    f, idx, valid = np.asarray(f), np.asarray(idx), np.asarray(valid)
    for k in range(5):
        ff, yy = f[0, k][valid[0, k]], y[idx[0, k][valid[0, k]]]
        hinge = np.maximum(0, 1 - yy * ff).mean()
        np.testing.assert_allclose(res.fold_losses("lda", "hinge")[0, k], hinge, rtol=1e-12)
        np.testing.assert_allclose(
            res.fold_losses("lda", "zero_one", reduce="sum")[0, k], np.sum(yy * ff <= 0)
        )
        tp = np.sum((yy > 0) & (ff > 0))
        fn = np.sum((yy > 0) & (ff <= 0))
        fp = np.sum((yy < 0) & (ff > 0))
        assert float(res.confusion("lda").tp[0, k]) == tp
        np.testing.assert_allclose(res.fold_scores("lda", "tpr")[0, k], tp / (tp + fn))
        np.testing.assert_allclose(res.fold_scores("lda", "f1")[0, k], 2 * tp / (2 * tp + fp + fn))
        from sklearn.metrics import roc_auc_score

        np.testing.assert_allclose(
            res.fold_scores("lda", "roc_auc")[0, k], roc_auc_score(yy, ff), rtol=1e-12
        )
    li = res.instance_losses("lda", "square")
    assert np.isnan(np.asarray(li)[~valid]).all() or valid.all()


def test_regression_losses(pima):
    X, y = datasets.load_diabetes()
    X = (X - X.mean(0)) / X.std(0)
    r = cross_validate({"ridge": models.ridge(1.0)}, X[:150], y[:150], cv=3, key=2)
    f, idx, valid = (np.asarray(a) for a in r.instance_outputs("ridge"))
    yy = y[:150][idx[0, 0]][valid[0, 0]]
    ff = f[0, 0][valid[0, 0]]
    np.testing.assert_allclose(
        r.fold_losses("ridge", "epsilon_insensitive", epsilon=5.0)[0, 0],
        np.maximum(0, np.abs(yy - ff) - 5.0).mean(),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        r.fold_losses("ridge", "power", p=1.5)[0, 0], (np.abs(yy - ff) ** 1.5).mean(), rtol=1e-12
    )
    with pytest.raises(ValueError, match="needs ±1 labels"):
        r.fold_losses("ridge", "hinge")
    with pytest.raises(ValueError, match="needs the keyword `epsilon`"):
        r.fold_losses("ridge", "epsilon_insensitive")


def test_ttest_paired_delegation(res):
    a = np.asarray(res.fold_losses("ridge", "hinge")).ravel()
    b = np.asarray(res.fold_losses("lda", "hinge")).ravel()
    ref = scipy.stats.ttest_rel(a, b)
    try:
        out = res.ttest_paired("ridge", "lda", loss="hinge")
    except ImportError:
        pytest.skip("jaxtests._ttests not available yet")
    np.testing.assert_allclose(out.statistic, ref.statistic, rtol=1e-10)
    np.testing.assert_allclose(out.pvalue, ref.pvalue, rtol=1e-10)


def test_validation_messages(pima):
    X, y = pima
    with pytest.raises(TypeError, match="`models` must be a dict"):
        cross_validate(models.lda(), X, y)
    with pytest.raises(ValueError, match="`models` is empty"):
        cross_validate({}, X, y)
    with pytest.raises(TypeError, match=r"neither a jaxtests\.models spec"):
        cross_validate({"a": object()}, X, y)
    with pytest.raises(ValueError, match="mixes classifiers and regressors"):
        cross_validate([models.lda(), models.ridge()], X, y)
    with pytest.raises(ValueError, match="`X` has 200 rows but `y` has 199"):
        cross_validate([models.lda()], X, y[:-1])
    with pytest.raises(ValueError, match="`y` must hold binary labels"):
        cross_validate([models.lda()], X, np.arange(200.0))
    with pytest.raises(ValueError, match="`X` contains NaN at index"):
        cross_validate([models.lda()], np.where(X == X[3, 2], np.nan, X), y)
    with pytest.raises(ValueError, match="`cv` must be at least 2"):
        cross_validate([models.lda()], X, y, cv=1)
    with pytest.raises(ValueError, match="needs at least 5 instances per class"):
        cross_validate([models.lda()], X[:10], np.r_[np.ones(8), -np.ones(2)], cv=5)
    with pytest.raises(ValueError, match="`repeats` applies only"):
        cross_validate([models.lda()], X, y, cv=FiveByTwo(), repeats=2)
    with pytest.raises(ValueError, match="split 0 has instances in both"):
        cross_validate([models.lda()], X, y, cv=[(np.arange(100), np.arange(50))])
    with pytest.raises(ValueError, match="out of range"):
        cross_validate([models.lda()], X, y, cv=[(np.arange(100), np.arange(199, 201))])
    r = cross_validate([models.lda()], X, y, cv=5, key=0)
    with pytest.raises(ValueError, match="unknown model 'x'"):
        r.fold_losses("x")
    with pytest.raises(ValueError, match="`loss` must be one of"):
        r.fold_losses("lda", "log")
    with pytest.raises(ValueError, match="5x2 cv tests need 5 repetitions"):
        r.ttest_5x2cv("lda", "lda")
    with pytest.raises(TypeError, match="`measures` must be a sequence"):
        r.hotelling_t2("lda", "lda", measures="tpr")
