"""cross_validate, the splitters and CVResult."""

import numpy as np
import pytest
import scipy.stats
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.metrics import zero_one_loss
from sklearn.model_selection import KFold as KFoldSK
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from jaxtests import datasets, models, permutation_test_score
from jaxtests._cv import cross_validate
from jaxtests._splitters import FiveByTwo, KFold, RandomSplits


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

    from jaxtests._splitters import make_splits

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
        # ours standardises on each training fold (issue 28.1): StandardScaler's pipeline
        scaled = make_pipeline(StandardScaler(), RidgeClassifier()).fit(X[tr], y[tr])
        np.testing.assert_array_equal(np.asarray(r.index[0, k, : len(te)]), np.sort(te))
        f_ours, _idx, valid = r.instance_outputs("ours")
        np.testing.assert_allclose(
            f_ours[0, k][valid[0, k]], scaled.decision_function(X[te]), rtol=1e-10
        )
        np.testing.assert_allclose(r.outputs[1, 0, k][r.valid[0, k]], ref, rtol=1e-10)


def test_losses_and_measures_by_hand(res, pima):
    _, y = pima
    f, idx, valid = res.instance_outputs("lda")
    f, idx, valid = np.asarray(f), np.asarray(idx), np.asarray(valid)
    for k in range(5):
        ff, yy = f[0, k][valid[0, k]], y[idx[0, k][valid[0, k]]]
        hinge = np.maximum(0, 1 - yy * ff).mean()
        np.testing.assert_allclose(res.fold_losses("lda", "hinge")[0, k], hinge, rtol=1e-12)
        # sklearn's prediction rule: +1 iff f > 0
        np.testing.assert_allclose(
            res.fold_losses("lda", "zero_one", reduce="sum")[0, k],
            np.sum(np.where(ff > 0, 1, -1) != yy),
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
    with pytest.raises(TypeError, match=r"`models`\['a'\] is neither a jaxtests\.models spec"):
        cross_validate({"a": object()}, X, y)
    # a name is not a model: the argument and position named, and where models come from
    with pytest.raises(
        TypeError, match=r"`models`\[1\] .*'lda' names no model: .*jaxtests\.models"
    ):
        cross_validate([models.lda(), "lda"], X, y)
    with pytest.raises(TypeError, match=r"^`model` is neither .*'ridge' names no model"):
        permutation_test_score("ridge", X, y)
    # a class for an instance said "__sklearn_tags__() missing 1 required positional argument"
    with pytest.raises(TypeError, match=r"^`models`\['lr'\] is the class LogisticRegression.*"
                       r"LogisticRegression\(\)\.$"):  # fmt: skip
        cross_validate({"lr": LogisticRegression, "lda": models.lda()}, X, y)
    with pytest.raises(TypeError, match=r"^`model` is the function .*models\.lda\(\)\.$"):
        permutation_test_score(models.lda, X, y)
    with pytest.raises(ValueError, match="mixes classifiers and regressors"):
        cross_validate([models.lda(), models.ridge()], X, y)
    with pytest.raises(ValueError, match="`X` has 200 rows but `y` has 199"):
        cross_validate([models.lda()], X, y[:-1])
    # two classes of any values are accepted ({1, 2}, strings: issue 28.5), not real targets
    with pytest.raises(ValueError, match=r"`y` holds 2 distinct values including 0\.5"):
        cross_validate([models.lda()], X, np.r_[np.full(100, 0.5), np.full(100, 1.5)])
    # three or more distinct values are multiclass labels: integers or strings only
    with pytest.raises(ValueError, match=r"`y` holds 200 distinct values including 0\.5"):
        cross_validate([models.lda()], X, np.arange(200.0) + 0.5)
    with pytest.raises(ValueError, match="per class; the smallest class has 1"):
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
    # the test's own check said "`names` must be distinct": the user wrote `measures`
    with pytest.raises(ValueError, match=r"^`measures` must be distinct, got \['tpr', 'tpr'\]"):
        r.hotelling_t2("lda", "lda", measures=("tpr", "tpr"))


# ---------------------------------------------------------------- issues 13 and 18


class _FirstFeature(ClassifierMixin, BaseEstimator):
    """Decision value = first feature (exact zeros where it is 0); fit learns nothing."""

    def fit(self, X, y):
        self.classes_ = np.array([-1.0, 1.0])
        return self

    def decision_function(self, X):
        return np.asarray(X)[:, 0]


def test_error_measure_equals_mean_zero_one_at_f_zero(pima):
    # Issue 13.6: one rule for f = 0 (predicts -1). Reference: scikit-learn's
    # predict for a linear decision function that is exactly 0 (RidgeClassifier with
    # weights set to pick the first feature: classes_[scores > 0]).
    X, y = pima
    X = X.copy()
    X[::7, 0] = 0.0  # 29 decision values exactly 0, of both classes
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    r = cross_validate({"f": _FirstFeature()}, X, y, cv=folds)
    sk = RidgeClassifier().fit(X, y)
    sk.coef_ = np.eye(1, X.shape[1])
    sk.intercept_ = np.zeros(1)
    for k, (_, te) in enumerate(folds):
        ref = zero_one_loss(y[te], sk.predict(X[te]))
        np.testing.assert_allclose(r.fold_losses("f", "zero_one")[0, k], ref, rtol=1e-12)
        np.testing.assert_allclose(r.fold_scores("f", "error")[0, k], ref, rtol=1e-12)


def test_regression_defaults_to_square_loss_and_accepts_rmse():
    # Issue 13.8. References: sklearn mean_squared_error / root_mean_squared_error per
    # fold of sklearn Ridge fits, scipy.stats.ttest_rel on them.
    from sklearn.linear_model import Ridge
    from sklearn.metrics import mean_squared_error, root_mean_squared_error

    X, y = datasets.load_diabetes()
    X, y = X[:150], y[:150]
    folds = list(KFoldSK(5, shuffle=True, random_state=0).split(X))
    r = cross_validate({"a": models.ridge(1.0), "b": models.ridge(100.0)}, X, y, cv=folds)
    mse = {a: [] for a in (1.0, 100.0)}
    rmse = {a: [] for a in (1.0, 100.0)}
    for tr, te in folds:
        for a in (1.0, 100.0):
            # models.ridge standardises on each training fold (issue 28.1)
            pred = make_pipeline(StandardScaler(), Ridge(alpha=a)).fit(X[tr], y[tr]).predict(X[te])
            mse[a].append(mean_squared_error(y[te], pred))
            rmse[a].append(root_mean_squared_error(y[te], pred))
    np.testing.assert_allclose(r.fold_losses("a")[0], mse[1.0], rtol=1e-9)
    np.testing.assert_allclose(r.fold_scores("a", "rmse")[0], rmse[1.0], rtol=1e-9)
    ref = scipy.stats.ttest_rel(mse[1.0], mse[100.0])
    out = r.ttest_paired("a", "b")
    np.testing.assert_allclose(out.pvalue, ref.pvalue, rtol=1e-8)
    ref = scipy.stats.ttest_rel(rmse[1.0], rmse[100.0])
    np.testing.assert_allclose(r.ttest_paired("a", "b", loss="rmse").pvalue, ref.pvalue, rtol=1e-8)
    assert r.posthoc(alpha=0.05).names == ("a", "b")
    with pytest.raises(ValueError, match=r"`loss`='rmse' needs a regression result"):
        cross_validate([models.lda()], X, np.where(y > 140, 1, -1), cv=3, key=0).ttest_paired(
            "lda", "lda", loss="rmse"
        )


def test_model_names_pass_through(res):
    # Issue 13.5: posthoc text, cliques and ordering name the models; Hotelling and
    # MANOVA name their measures; posthoc(test="hotelling") takes measures.
    from jaxtests._anova import manova
    from jaxtests._hotelling import hotelling_t2
    from jaxtests._posthoc import posthoc

    ph = res.posthoc(loss="hinge")
    assert ph.names == ("ridge", "lda", "sk_lr")
    assert "ridge vs lda" in ph.text() and "0 vs 1" not in ph.text()
    assert all(set(c) <= set(res.names) for c in ph.cliques)
    x = np.stack([np.asarray(res.fold_losses(m, "hinge")).ravel() for m in res.names])
    np.testing.assert_allclose(ph.pvalue_adjusted, posthoc(x).pvalue_adjusted, rtol=1e-12)
    ms = ("tpr", "fpr")
    h = res.hotelling_t2("ridge", "sk_lr", measures=ms)
    assert h.names == ms
    mat = {
        m: np.stack([np.asarray(res.fold_scores(m, s)).ravel() for s in ms], -1) for m in res.names
    }
    np.testing.assert_allclose(h.pvalue, hotelling_t2(mat["ridge"], mat["sk_lr"]).pvalue)
    mv = res.manova(["ridge", "sk_lr"], measures=ms)
    assert mv.names == ms
    ref = manova(np.stack([mat["ridge"], mat["sk_lr"]]))
    np.testing.assert_allclose(mv.pvalue, ref.pvalue, rtol=1e-12)
    ph2 = res.posthoc(["ridge", "sk_lr"], test="hotelling", measures=ms)
    assert ph2.names == ("ridge", "sk_lr")
    ref = posthoc(np.stack([mat["ridge"], mat["sk_lr"]]), test="hotelling")
    np.testing.assert_allclose(ph2.pvalue, ref.pvalue, rtol=1e-12)
    with pytest.raises(ValueError, match=r"`measures` applies to test='hotelling'"):
        res.posthoc(measures=ms)
    with pytest.raises(TypeError, match=r"`names` is set from the model names"):
        res.posthoc(names=("a", "b", "c"))


def test_signflip_uses_per_instance_differences(res, pima):
    # Issue 13.2: per-instance hinge differences on the identical test instances
    # (reference: sklearn hinge per instance of each fold's outputs), Monte Carlo
    # with the n_resamples asked for; an unused n_resamples is an error.
    from jaxtests._permutation import signflip_test

    _, y = pima
    f, idx, valid = (np.asarray(a) for a in res.instance_outputs("ridge"))
    g = np.asarray(res.instance_outputs("lda")[0])
    d = np.empty(len(y))
    d[idx[valid]] = np.maximum(0, 1 - y[idx[valid]] * f[valid]) - np.maximum(
        0, 1 - y[idx[valid]] * g[valid]
    )
    np.testing.assert_allclose(res.instance_differences("ridge", "lda", "hinge"), d, rtol=1e-12)
    out = res.signflip_test("ridge", "lda", loss="hinge", n_resamples=20_000, key=3)
    assert out.method == "monte-carlo" and out.n_resamples == 20_000
    np.testing.assert_allclose(out.statistic, d.mean(), rtol=1e-12)
    ref = signflip_test(d, n_resamples=20_000, key=3)
    np.testing.assert_array_equal(out.pvalue, ref.pvalue)
    with pytest.raises(ValueError, match=r"`n_resamples`=20000 is not used.*'binomial'"):
        res.signflip_test("ridge", "lda", loss="zero_one", n_resamples=20_000)
    assert res.signflip_test("ridge", "lda", loss="zero_one").method == "binomial"
    with pytest.raises(ValueError, match=r"`loss`='tpr' is not a per-instance loss"):
        res.signflip_test("ridge", "lda", loss="tpr")
    # the per-fold variant says so in its name, and refuses an unused n_resamples
    folds = res.signflip_test_folds("ridge", "lda", loss="hinge")
    assert folds.method == "exact" and folds.n_resamples == 2**5
    with pytest.raises(ValueError, match=r"`n_resamples`=100000 is not used.*'exact'"):
        res.signflip_test_folds("ridge", "lda", loss="hinge", n_resamples=100_000)


def test_repeated_cv_is_not_pooled_silently(pima):
    # Issue 13.9: pooled repetitions need an explicit opt-in; ttest_corrected named.
    X, y = pima
    r = cross_validate([models.lda(), models.nearest_centroid()], X, y, cv=5, repeats=3, key=0)
    with pytest.raises(ValueError, match=r"3 repetitions x 5 folds.*`ttest_corrected`"):
        r.ttest_paired("lda", "nearest_centroid")
    for call in (
        lambda **kw: r.hotelling_t2("lda", "nearest_centroid", **kw),
        lambda **kw: r.anova(**kw),
        lambda **kw: r.manova(**kw),
        lambda **kw: r.posthoc(**kw),
        lambda **kw: r.signflip_test_folds("lda", "nearest_centroid", **kw),
    ):
        with pytest.raises(ValueError, match=r"pool_repetitions=True"):
            call()
    a = np.asarray(r.fold_losses("lda")).ravel()
    b = np.asarray(r.fold_losses("nearest_centroid")).ravel()
    ref = scipy.stats.ttest_rel(a, b)  # the pooled test, asked for explicitly
    out = r.ttest_paired("lda", "nearest_centroid", pool_repetitions=True)
    np.testing.assert_allclose(out.pvalue, ref.pvalue, rtol=1e-10)
    r5 = cross_validate([models.lda(), models.nearest_centroid()], X, y, cv=FiveByTwo(), key=0)
    with pytest.raises(ValueError, match=r"5x2 cv.*`ttest_5x2cv`"):
        r5.ttest_paired("lda", "nearest_centroid")
    with pytest.raises(TypeError, match=r"`pool_repetitions` must be a bool"):
        r5.ttest_paired("lda", "nearest_centroid", pool_repetitions="yes")


def test_bad_input_messages_issue_18(pima):
    X, y = pima
    with pytest.raises(TypeError, match=r"`cv` must be an int .*got float 5\.0"):
        cross_validate([models.lda()], X, y, cv=5.0)
    with pytest.raises(TypeError, match=r"`cv` must be an int"):
        cross_validate([models.lda()], X, y, cv=object())
    with pytest.raises(TypeError, match=r"`stratified` must be a bool, got str 'no'"):
        KFold(stratified="no")
    with pytest.raises(TypeError, match=r"`stratified` must be a bool"):
        RandomSplits(stratified=None)
    with pytest.raises(ValueError, match=r"`y` holds a single class \(every label is \+1\)"):
        KFold(5).split(np.ones(20), None, True)
    from jaxtests import permutation_test_score

    with pytest.raises(ValueError, match=r"`y` holds a single class"):
        permutation_test_score(models.ridge_classifier(), X, np.ones(200), n_permutations=10)
    # a training split with one class: LDA gave NaN, SVC -inf, with an error rate
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    with pytest.raises(ValueError, match=r"training set of split 0 holds only class \+1"):
        cross_validate([models.lda()], X, y, cv=[(pos, neg)])
    r = cross_validate([models.lda()], X, y, cv=5, key=0)
    with pytest.raises(ValueError, match=r"`loss` must be one of .*got 'mse'"):
        r.ttest_paired("lda", "lda", loss="mse")
    with pytest.raises(ValueError, match=r"`measure` must be one of .*got 'mse'"):
        r.fold_scores("lda", "mse")
    with pytest.raises(ValueError, match=r"`measures` must be one of .*got 'mse'"):
        r.hotelling_t2("lda", "lda", measures=("tpr", "mse"))


def test_kernel_machine_beyond_memory_refused_before_fitting():
    # Reliability audit (issue 29): a one-vs-one SVC of 100 classes tried 795 GB. The n x n
    # matrices of all class pairs and folds are estimated and refused before any fit:
    # 5 folds x (2 kernel matrices + 4,950 pairs x one Q) x 8 bytes x 3000^2 = 1.8e12
    # bytes (1,660 GiB), beyond half the memory of any machine this runs on.
    from jaxtests import models, permutation_test_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    y = np.repeat(np.arange(100), 30)
    with pytest.raises(
        ValueError,
        match=r"`models\['svc'\]`: 'svc' \(one-vs-one over 100 "
        r"classes: 4,950 class pairs.*GiB at once.*one-vs-rest learner",
    ):
        cross_validate({"svc": models.svc()}, X, y, cv=5, key=0)
    with pytest.raises(ValueError, match=r"`model`: 'svc' \(one-vs-one over 100 classes"):
        permutation_test_score(models.svc(), X, y, n_permutations=9, key=0)
    # Binary kernel machines too: 5 folds x (2 + 16 label vectors) x 8 bytes x (10^5)^2
    # = 7.2e12 bytes (the label-permutation test fits 16 label vectors at once).
    Xb, yb = rng.normal(size=(100_000, 1)), np.tile([-1.0, 1.0], 50_000)
    with pytest.raises(
        ValueError,
        match=r"`model`: 'svc' would hold about 6,705.5 GiB at once \(16 label vectors",
    ):
        permutation_test_score(models.svc(), Xb, yb, n_permutations=9, key=0)


# ---------------------------------------------------------------- issue 39.6


def test_sklearn_splitters_fold_by_fold(pima):
    # cv= took `list(cv.split(X, y))` only ("pass list(cv.split(X, y))"); a splitter object
    # now gives the same folds, fold by fold, and the outputs of scikit-learn's own runs.
    from sklearn.model_selection import (
        GroupKFold,
        RepeatedStratifiedKFold,
        cross_val_predict,
    )

    X, y = pima
    learners = {"ours": models.ridge_classifier(), "sk": LogisticRegression()}
    skf = StratifiedKFold(5, shuffle=True, random_state=0)
    a = cross_validate(learners, X, y, cv=skf)
    b = cross_validate(learners, X, y, cv=list(skf.split(X, y)))
    np.testing.assert_array_equal(np.asarray(a.index), np.asarray(b.index))
    np.testing.assert_array_equal(np.asarray(a.outputs), np.asarray(b.outputs))
    out = a.test_outputs("sk")  # instance order, unpadded, as cross_val_predict
    ref = cross_val_predict(LogisticRegression(), X, y, cv=skf, method="decision_function")
    np.testing.assert_array_equal(out.index, np.arange(len(y)))
    np.testing.assert_allclose(out.output, ref, rtol=1e-10)  # scikit-learn's predictions
    for k, (_, te) in enumerate(skf.split(X, y)):
        assert set(out.index[out.fold == k]) == set(te)
    # a repeated splitter: n_repeats repetitions of n_splits folds (5 x 2: the 5x2 cv tests)
    rskf = RepeatedStratifiedKFold(n_splits=2, n_repeats=5, random_state=0)
    rep = cross_validate(learners, X, y, cv=rskf)
    flat = cross_validate(learners, X, y, cv=list(rskf.split(X, y)))
    assert rep.index.shape[:2] == (5, 2) and flat.index.shape[:2] == (1, 10)
    np.testing.assert_array_equal(
        np.asarray(rep.outputs).reshape(flat.outputs.shape), np.asarray(flat.outputs)
    )
    assert 0 <= rep.ttest_5x2cv("ours", "sk").pvalue <= 1
    with pytest.raises(ValueError, match=r"`cv`: GroupKFold\.split\(X, y\) failed.*groups"):
        cross_validate(learners, X, y, cv=GroupKFold(5))


def test_held_out_split_outputs_and_delong_interval(pima):
    # A held-out split is one explicit fold: its outputs in instance order (unpadded, the
    # padded (R, K, m) triples of instance_outputs aside) and the AUC's DeLong interval.
    from sklearn.metrics import roc_auc_score

    X, y = pima
    rng = np.random.default_rng(5)
    test = np.sort(rng.choice(len(y), 60, replace=False))
    train = np.setdiff1d(np.arange(len(y)), test)
    r = cross_validate({"sk": LogisticRegression()}, X, y, cv=[(train, test)])
    out = r.test_outputs("sk")
    ref = LogisticRegression().fit(X[train], y[train]).decision_function(X[test])
    np.testing.assert_array_equal(out.index, test)
    np.testing.assert_array_equal(out.fold, np.zeros(60, int))
    np.testing.assert_array_equal(out.y, y[test])
    np.testing.assert_allclose(out.output, ref, rtol=1e-10)  # scikit-learn's fit
    ci = r.delong_interval("sk", confidence_level=0.9)
    assert ci.auc == pytest.approx(roc_auc_score(y[test], ref), rel=1e-12)  # scikit-learn
    assert ci.confidence_interval.low < ci.auc < ci.confidence_interval.high
    with pytest.raises(ValueError, match="`repetition` must be below the number of rep"):
        r.test_outputs("sk", repetition=1)
    with pytest.raises(ValueError, match="pool_folds=True"):
        cross_validate({"sk": LogisticRegression()}, X, y, cv=5, key=0).delong_interval("sk")
