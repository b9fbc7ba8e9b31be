"""Multiclass labels in cross_validate and permutation_test_score, against scikit-learn."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtests.kernels import learners as klearners
from jaxtests.kernels import measures as kmeasures
from sklearn import discriminant_analysis as da
from sklearn import linear_model as lm
from sklearn import metrics, neighbors, svm
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import StratifiedKFold
from sklearn.model_selection import permutation_test_score as sk_permutation_test_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import jaxtests
from jaxtests import KFold, RandomSplits, cross_validate, models, permutation_test_score
from jaxtests._learners import fit_predict, fold_predictions
from jaxtests._sanity import _permutation_test_score_iv
from jaxtests._sanity_streams import _permute_within_strata
from jaxtests._splitters import make_splits


def _blobs(seed, n=160, n_classes=4, d=3, shift=0.9):
    """Overlapping Gaussian classes with unequal sizes (errors on every fold)."""
    rng = np.random.default_rng(seed)
    p = np.linspace(1.0, 2.0, n_classes)
    y = rng.choice(n_classes, size=n, p=p / p.sum())
    X = rng.normal(size=(n, d)) + shift * np.eye(n_classes, d)[y]
    return X, y


@pytest.fixture(scope="module")
def data():
    return _blobs(0)


@pytest.fixture(scope="module")
def folds(data):
    X, y = data
    return list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))


# ---------------------------------------------------------------- labels and folds


def test_labels_encoded_as_sorted_classes(data):
    X, y = data
    names = np.array(["setosa", "b", "virginica", "a"])[y]
    r = cross_validate({"nc": models.nearest_centroid()}, X, names, cv=4, key=0)
    assert r.classes == ("a", "b", "setosa", "virginica")
    assert r.n_classes == 4
    # LabelEncoder: index of the label among the sorted classes
    np.testing.assert_array_equal(np.asarray(r.y), np.searchsorted(r.classes, names))
    # integer labels 3, 7, 9 -> 0, 1, 2 (any integers, not only 0..C-1)
    r3 = cross_validate({"nc": models.nearest_centroid()}, X, np.array([3, 7, 9, 9])[y], cv=4)
    assert r3.classes == (3, 7, 9)
    # two classes keep the binary ±1 convention (no classes recorded)
    rb = cross_validate({"nc": models.nearest_centroid()}, X, np.where(y > 1, 1, 0), cv=4, key=0)
    assert rb.classes is None and rb.n_classes == 2
    assert set(np.unique(np.asarray(rb.y))) == {-1.0, 1.0}


def test_stratified_folds_keep_class_counts(data):
    X, y = data
    y = y.astype(np.float64)
    for k in (3, 5, 7):
        s = make_splits(KFold(k), y, jax.random.key(1), True)
        ours = np.stack([np.bincount(y[t].astype(int), minlength=4) for t in s.test[0]])
        ref = np.stack(
            [
                np.bincount(y[te].astype(int), minlength=4)
                for _, te in StratifiedKFold(k, shuffle=True, random_state=0).split(X, y)
            ]
        )
        # per class, both deal the class's instances to the folds in turn: the
        # same floor/ceil counts (a fold may get the extra one in another order)
        np.testing.assert_array_equal(np.sort(ours, axis=0), np.sort(ref, axis=0))
        assert np.all(ours.max(0) - ours.min(0) <= 1)
        sizes = s.test[0].sum(-1)
        assert sizes.max() - sizes.min() <= 1
    # random splits hold out the fraction of each class
    s = make_splits(RandomSplits(4, 0.25), y, jax.random.key(2), True)
    counts = np.bincount(y.astype(int))
    for t in s.test[:, 0]:
        np.testing.assert_array_equal(
            np.bincount(y[t].astype(int), minlength=4), np.round(counts * 0.25)
        )


# ---------------------------------------------------------------- learners vs scikit-learn

_SVC = {"kernel": "rbf", "gamma": 0.4, "tol": 1e-6, "normalize": False, "standardize": False}


def _scaled(est):
    # the built-ins standardise on each training fold by default (issue 28.1)
    return lambda: make_pipeline(StandardScaler(), est())


# (built-in, scikit-learn equivalent, how near a tie a disagreement may be)
_PAIRS = {
    "lda": (models.lda(), _scaled(lambda: da.LinearDiscriminantAnalysis(solver="lsqr")), 0.0),
    "qda": (
        models.qda(0.05),
        _scaled(lambda: da.QuadraticDiscriminantAnalysis(reg_param=0.05)),
        0.0,
    ),
    "nc": (models.nearest_centroid(), _scaled(neighbors.NearestCentroid), 0.0),
    "knn4": (models.knn(4), _scaled(lambda: neighbors.KNeighborsClassifier(4)), 0.0),
    "knn5": (models.knn(5), _scaled(lambda: neighbors.KNeighborsClassifier(5)), 0.0),
    "ridge": (models.ridge_classifier(0.7), _scaled(lambda: lm.RidgeClassifier(alpha=0.7)), 0.0),
    # iterative solvers: lbfgs stops at a gradient tolerance, SMO at a KKT gap
    "logistic": (
        models.logistic(0.5),
        _scaled(lambda: lm.LogisticRegression(C=0.5, tol=1e-12, max_iter=10_000)),
        1e-5,
    ),
    "svc": (
        models.svc(C=1.0, **_SVC),
        lambda: svm.SVC(kernel="rbf", gamma=0.4, C=1.0, tol=1e-6, decision_function_shape="ovo"),
        1e-4,
    ),
}


@pytest.fixture(scope="module")
def cv_all(data, folds):
    X, y = data
    return cross_validate({k: v[0] for k, v in _PAIRS.items()}, X, y, cv=folds)


def _near_tie(est, Z, kind):
    """Distance to the decision boundary of scikit-learn's own scores at ``Z``."""
    dec = est.decision_function(Z)
    if kind == "svc":  # one-vs-one: the smallest |pairwise decision|
        return np.min(np.abs(dec), axis=1)
    top = np.sort(dec, axis=1)
    return top[:, -1] - top[:, -2]


@pytest.mark.parametrize("name", list(_PAIRS))
def test_predictions_equal_sklearn_on_the_same_folds(data, folds, cv_all, name):
    X, y = data
    _, ref, tie = _PAIRS[name]
    out, index, valid = (np.asarray(a) for a in cv_all.instance_outputs(name))
    n_diff = 0
    for k, (tr, te) in enumerate(folds):
        est = ref().fit(X[tr], y[tr])
        v = valid[0, k]
        idx = index[0, k, v]
        np.testing.assert_array_equal(np.sort(idx), np.sort(te))
        expected = est.predict(X[idx])
        diff = out[0, k, v] != expected
        if diff.any():
            # a disagreement is allowed only at a genuine near-tie of the reference
            assert tie > 0, f"{name}: {diff.sum()} predictions differ in fold {k}"
            assert np.all(_near_tie(est, X[idx][diff], name) < tie)
        n_diff += int(diff.sum())
    assert n_diff <= 1  # and rare: at most one of 160 instances


def test_multinomial_logistic_probabilities_match_sklearn(data):
    X, y = data
    w = (np.random.default_rng(3).random(len(y)) < 0.7).astype(float)
    fit = jax.jit(klearners.logistic_multinomial_fit, static_argnums=(3, 4, 5))(
        jnp.asarray(X), jnp.asarray(y, jnp.float64), jnp.asarray(w), 2.0, 25, 4
    )
    scores = np.asarray(klearners.linear_scores(fit, jnp.asarray(X)))
    ref = lm.LogisticRegression(C=2.0, tol=1e-12, max_iter=10_000).fit(X[w > 0], y[w > 0])
    p = np.exp(scores - scores.max(1, keepdims=True))
    np.testing.assert_allclose(p / p.sum(1, keepdims=True), ref.predict_proba(X), atol=1e-6)
    # intercepts sum to zero (the representative the tie penalty selects)
    assert abs(float(np.sum(fit.intercept))) < 1e-8


def test_svc_one_vs_one_standardises_on_the_training_fold(data, folds):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = data
    X = X * np.array([1.0, 10.0, 0.1])  # scales that matter to an rbf kernel
    opts = {**_SVC, "standardize": True}
    r = cross_validate({"svc": models.svc(C=1.0, **opts)}, X, y, cv=folds[:2])
    out, index, valid = (np.asarray(a) for a in r.instance_outputs("svc"))
    for k, (tr, _) in enumerate(folds[:2]):
        est = make_pipeline(StandardScaler(), svm.SVC(kernel="rbf", gamma=0.4, tol=1e-6))
        idx = index[0, k, valid[0, k]]
        pred = est.fit(X[tr], y[tr]).predict(X[idx])
        assert np.sum(out[0, k, valid[0, k]] != pred) <= 1


def test_sklearn_estimators_use_predict(data, folds, cv_all):
    X, y = data
    names = np.array(["d", "c", "b", "a"])[y]  # classes sorted: a, b, c, d
    r = cross_validate(
        {"lda": da.LinearDiscriminantAnalysis(solver="lsqr"), "own": models.lda()},
        X,
        names,
        cv=folds,
    )
    np.testing.assert_array_equal(np.asarray(r.outputs[0]), np.asarray(r.outputs[1]))
    np.testing.assert_array_equal(
        np.asarray(r.fold_losses("lda")), np.asarray(cv_all.fold_losses("lda"))
    )


# ---------------------------------------------------------------- losses and measures


def _fold_predictions(r, name):
    out, index, valid = (np.asarray(a) for a in r.instance_outputs(name))
    y = np.asarray(r.y)
    for k in range(out.shape[1]):
        v = valid[0, k]
        yield k, y[index[0, k, v]], out[0, k, v]


_SK_MEASURES = {
    "accuracy": metrics.accuracy_score,
    "balanced_accuracy": metrics.balanced_accuracy_score,
    "precision_macro": lambda t, p: metrics.precision_score(t, p, average="macro", zero_division=0),
    "recall_macro": lambda t, p: metrics.recall_score(t, p, average="macro", zero_division=0),
    "f1_macro": lambda t, p: metrics.f1_score(t, p, average="macro", zero_division=0),
    "mcc": metrics.matthews_corrcoef,  # the dummy's folds: 0/0, scikit-learn's 0
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # sklearn: classes missing from a fold
def test_measures_match_sklearn_metrics(data, folds, cv_all):
    X, y = data
    # "most_frequent" predicts one class: precision of the others is 0/0
    dummy = cross_validate({"dummy": DummyClassifier(strategy="most_frequent")}, X, y, cv=folds)
    for r, name in ((cv_all, "knn5"), (cv_all, "qda"), (dummy, "dummy")):
        losses = np.asarray(r.fold_losses(name, "zero_one"))
        for k, t, p in _fold_predictions(r, name):
            assert losses[0, k] == pytest.approx(np.mean(t != p), abs=1e-15)
            for m, ref in _SK_MEASURES.items():
                got = float(r.fold_scores(name, m)[0, k])
                assert got == pytest.approx(ref(t, p), abs=1e-12), (name, m, k)
        np.testing.assert_allclose(
            np.asarray(r.fold_scores(name, "error")), losses, rtol=0, atol=1e-15
        )
    cm = np.asarray(cv_all.confusion_matrix("lda"))
    for k, t, p in _fold_predictions(cv_all, "lda"):
        np.testing.assert_array_equal(cm[0, k], metrics.confusion_matrix(t, p, labels=range(4)))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_matrix_kernels_with_absent_classes():
    # class 3 is neither true nor predicted, class 2 only predicted, class 1 only true
    t = np.array([0, 0, 0, 1, 1, 0])
    p = np.array([0, 2, 1, 0, 0, 0])
    cm = jnp.asarray(metrics.confusion_matrix(t, p, labels=range(4)), jnp.float64)
    c = kmeasures.class_counts(cm)
    for name, ref in _SK_MEASURES.items():
        got = float(kmeasures.MEASURES[name].classes(c, jnp.nan, -1))
        assert got == pytest.approx(ref(t, p)), name


def test_binary_results_take_the_macro_measures_too(data):
    X, y = data
    yb = np.where(y > 1, 1, -1)
    r = cross_validate({"lda": models.lda()}, X, yb, cv=4, key=0)
    c = r.confusion("lda")
    cm = np.asarray(r.confusion_matrix("lda"))
    np.testing.assert_array_equal(cm[..., 1, 1], np.asarray(c.tp))
    np.testing.assert_array_equal(cm[..., 0, 1], np.asarray(c.fp))
    out, index, valid = (np.asarray(a) for a in r.instance_outputs("lda"))
    for k in range(4):
        v = valid[0, k]
        t, p = yb[index[0, k, v]], np.where(out[0, k, v] > 0, 1, -1)
        for m, ref in _SK_MEASURES.items():
            assert float(r.fold_scores("lda", m)[0, k]) == pytest.approx(ref(t, p), abs=1e-12)


FOLDS3 = ("lda", "qda", "knn5")


def test_tests_on_multiclass_fold_values(cv_all, statsmodels_mv_test):
    # The fold values' Hotelling and MANOVA against pingouin's multivariate_ttest and
    # statsmodels' MANOVA.
    import pingouin

    la = np.asarray(cv_all.fold_losses("lda")).ravel()
    lb = np.asarray(cv_all.fold_losses("nc")).ravel()
    t = cv_all.ttest_paired("lda", "nc")
    assert float(t.statistic) == pytest.approx(float(jaxtests.ttest_paired(la, lb).statistic))
    f1 = np.stack([np.asarray(cv_all.fold_scores(m, "f1_macro")).ravel() for m in ("lda", "nc")])
    a = cv_all.anova(["lda", "nc"], loss="f1_macro")
    assert float(a.pvalue) == pytest.approx(float(jaxtests.anova(f1).pvalue))
    ph = cv_all.posthoc(["lda", "qda", "nc"], loss="balanced_accuracy")
    assert ph.names == ("lda", "qda", "nc")
    ms = ("recall_macro", "precision_macro")
    v = {n: np.column_stack([np.ravel(cv_all.fold_scores(n, m)) for m in ms]) for n in FOLDS3}
    h = cv_all.hotelling_t2("lda", "knn5", measures=ms)
    ref = pingouin.multivariate_ttest(v["lda"], v["knn5"], paired=True)
    assert h.names == ms
    np.testing.assert_allclose(h.statistic, ref["T2"].iloc[0], rtol=1e-10)
    np.testing.assert_allclose(h.pvalue, ref["pval"].iloc[0], rtol=1e-10)
    mv = cv_all.manova(list(FOLDS3), measures=ms)
    wilks = statsmodels_mv_test(np.stack([v[n] for n in FOLDS3])).loc["Wilks' lambda"]
    np.testing.assert_allclose(mv.statistic, wilks["Value"], rtol=1e-10)
    np.testing.assert_allclose(mv.pvalue, wilks["Pr > F"], rtol=1e-10)
    # per-instance 0/1 differences: (pred_a != y) - (pred_b != y), by instance
    d = cv_all.instance_differences("lda", "knn5")
    out = np.asarray(cv_all.outputs)
    names = cv_all.names
    y = np.asarray(cv_all.y)
    idx, v = np.asarray(cv_all.index)[np.asarray(cv_all.valid)], np.asarray(cv_all.valid)
    ea = np.zeros(len(y))
    eb = np.zeros(len(y))
    ea[idx] = out[names.index("lda")][v] != y[idx]
    eb[idx] = out[names.index("knn5")][v] != y[idx]
    np.testing.assert_array_equal(d, ea - eb)
    s = cv_all.signflip_test("lda", "knn5")
    assert s.method == "binomial" and 0 < float(s.pvalue) <= 1
    sf = cv_all.signflip_test_folds("lda", "nc", loss="f1_macro")
    assert sf.method == "exact"


def test_multiclass_refusals(data, folds, cv_all):
    X, y = data
    for loss in ("hinge", "square", "absolute"):
        with pytest.raises(ValueError, match=rf"`loss`='{loss}' is binary only.*'zero_one'"):
            cv_all.fold_losses("lda", loss)
    for m in ("tpr", "fpr", "f1", "precision", "roc_auc", "average_precision", "tp"):
        with pytest.raises(ValueError, match=rf"`measure`='{m}' is binary only.*4 classes"):
            cv_all.fold_scores("lda", m)
    with pytest.raises(ValueError, match=r"`measures`='tpr' is binary only.*recall_macro"):
        cv_all.hotelling_t2("lda", "nc")  # the default measures are binary
    with pytest.raises(ValueError, match=r"`loss`='hinge' is binary only"):
        cv_all.ttest_paired("lda", "nc", loss="hinge")
    with pytest.raises(ValueError, match=r"`confusion` is binary only.*`confusion_matrix`"):
        cv_all.confusion("lda")
    with pytest.raises(ValueError, match=r"`y` holds 4 distinct values including 0\.5"):
        cross_validate([models.lda()], X, y * 0.5)
    # a training fold without class 3: refused, not fitted with an empty class
    keep = np.flatnonzero(y != 3)
    with pytest.raises(ValueError, match=r"split 0 has no instance of class index 3"):
        cross_validate([models.lda()], X, y, cv=[(keep[:60], np.flatnonzero(y == 3))])
    with pytest.raises(ValueError, match=r"the smallest class has"):
        cross_validate([models.lda()], X[:30], y[:30], cv=10)
    for s in ("roc_auc", "f1", "tpr", "precision"):
        with pytest.raises(ValueError, match=rf"`scoring`='{s}' is binary only; `y` has 4"):
            permutation_test_score(models.lda(), X, y, scoring=s, n_permutations=3)


# ---------------------------------------------------------------- permutation_test_score


_SK_SCORER = {"mcc": "matthews_corrcoef"}  # scikit-learn's scorer names


@pytest.fixture(scope="module")
def ptest(data, folds):
    X, y = data
    scoring = ("accuracy", "balanced_accuracy", "f1_macro", "mcc")
    return permutation_test_score(
        models.lda(), X, y, cv=folds, n_permutations=40, scoring=scoring, key=5
    )


def test_permutation_score_equals_sklearn(data, folds, ptest):
    X, y = data
    est = da.LinearDiscriminantAnalysis(solver="lsqr")
    for j, s in enumerate(ptest.scoring):
        s = _SK_SCORER.get(s, s)
        score, _, _ = sk_permutation_test_score(est, X, y, cv=folds, n_permutations=2, scoring=s)
        assert float(ptest.statistic[j]) == pytest.approx(score, abs=1e-12)
    # scikit-learn's p-value: (1 + #{permuted >= observed}) / (1 + n_permutations)
    perm = np.asarray(ptest.permutation_scores)
    exceed = np.sum(perm >= np.asarray(ptest.statistic)[None] - 1e-12, axis=0)
    np.testing.assert_allclose(np.asarray(ptest.pvalue), (1 + exceed) / 41, rtol=1e-15)
    assert np.all(np.asarray(ptest.pvalue) == 1 / 41)  # the classes are well separated
    assert ptest.classes == (0, 1, 2, 3)


def test_permuted_labels_keep_class_counts(data):
    # the label vectors that permutation_test_score fits: its plan (stratified
    # 5-fold, so permutations within folds) and the draws of its sort-based path
    X, y = data
    plan = _permutation_test_score_iv(
        models.lda(), X, y, 5, 8, "accuracy", 0, "all", None, None, None
    )
    assert plan.by_fold and plan.classes == (0, 1, 2, 3)
    keys = jax.vmap(lambda i: jax.random.fold_in(plan.key, i))(jnp.arange(8))
    Y = np.asarray(
        _permute_within_strata(keys, jnp.asarray(plan.y), None, jnp.asarray(plan.strata), "all")
    )
    assert not np.any(np.all(Y == y[None], axis=1))  # every row moves some label
    for row in Y:
        np.testing.assert_array_equal(np.sort(row), np.sort(y))
        for t in plan.test:  # and every fold keeps its class counts
            np.testing.assert_array_equal(
                np.bincount(row[t].astype(int), minlength=4), np.bincount(y[t], minlength=4)
            )


def test_batched_predictions_equal_looped(data):
    X, y = data
    rng = np.random.default_rng(4)
    Y = jnp.asarray(np.stack([y, rng.permutation(y)]), jnp.float64)
    W = jnp.asarray((rng.random((3, len(y))) < 0.7).astype(float))
    one = jax.jit(fit_predict, static_argnums=(0, 4))
    for m in (models.lda(), models.logistic(), models.svc(C=1.0, **_SVC)):
        batched = np.asarray(fold_predictions(m, jnp.asarray(X), Y, W, n_classes=4))
        for b in range(2):
            for f in range(3):
                np.testing.assert_array_equal(
                    batched[b, f], np.asarray(one(m, jnp.asarray(X), Y[b], W[f], 4))
                )


def test_same_key_same_result_any_batch_size(data, folds, ptest):
    X, y = data
    kw = {"cv": folds, "n_permutations": 40, "scoring": ptest.scoring, "key": 5}
    for b in (7, 64):
        r = permutation_test_score(models.lda(), X, y, batch_size=b, **kw)
        np.testing.assert_array_equal(
            np.asarray(r.permutation_scores), np.asarray(ptest.permutation_scores)
        )


def test_sklearn_estimator_path_equals_builtin(data, folds):
    X, y = data
    perms = np.stack([np.random.default_rng(i).permutation(len(y)) for i in range(4)])
    kw = {"cv": folds, "permutations": perms, "scoring": ("accuracy", "f1_macro")}
    ours = permutation_test_score(models.lda(), X, y, **kw)
    ref = permutation_test_score(da.LinearDiscriminantAnalysis(solver="lsqr"), X, y, **kw)
    np.testing.assert_allclose(
        np.asarray(ours.permutation_scores), np.asarray(ref.permutation_scores), atol=1e-12
    )
    # the permuted score of row b is the score of y[perms[b]] on the same folds
    est = da.LinearDiscriminantAnalysis(solver="lsqr")
    yb = y[perms[0]]
    acc = np.mean([est.fit(X[tr], yb[tr]).score(X[te], yb[te]) for tr, te in folds])
    assert float(ours.permutation_scores[0, 0]) == pytest.approx(acc, abs=1e-12)


def test_pvalues_not_small_on_noise():
    # Null calibration, lightly: 16 pure-noise 3-class data sets, 19 permutations
    # each. p is uniform on {1/20, ..., 1} under H0 (mean 0.525, sd 0.29): the mean of
    # 16 lies in [0.3, 0.75] with probability > 0.998 (sd of the mean 0.072).
    ps = []
    for seed in range(16):
        rng = np.random.default_rng(100 + seed)
        X = rng.normal(size=(45, 2))
        y = np.repeat(np.arange(3), 15)
        r = permutation_test_score(models.nearest_centroid(), X, y, n_permutations=19, key=seed)
        ps.append(float(r.pvalue))
    assert 0.3 <= np.mean(ps) <= 0.75
    assert np.mean(np.asarray(ps) <= 0.05) <= 0.25


def test_train_mode_and_groups_keep_counts(data):
    X, y = data
    g = np.arange(len(y)) % 4
    r = permutation_test_score(models.nearest_centroid(), X, y, n_permutations=8, groups=g, key=0)
    assert r.classes == (0, 1, 2, 3) and 0 < float(r.pvalue) <= 1
    with pytest.warns(RuntimeWarning, match="anti-conservative"):
        rt = permutation_test_score(
            models.nearest_centroid(), X, y, n_permutations=8, permute="train", key=0
        )
    assert float(rt.statistic) == pytest.approx(float(r.statistic))


@pytest.mark.filterwarnings("ignore::UserWarning")  # sklearn's 0/0 precision on its permutation
def test_binary_macro_scorers_equal_sklearn(data):
    # the macro scorers are new for binary labels too (from the 2 x 2 counts)
    X, y = data
    yb = np.where(y > 1, 1, -1)
    bfolds = list(StratifiedKFold(4, shuffle=True, random_state=1).split(X, yb))
    scoring = ("f1_macro", "precision_macro", "recall_macro", "accuracy", "mcc")
    r = permutation_test_score(
        models.lda(), X, yb, cv=bfolds, n_permutations=4, scoring=scoring, key=0
    )
    assert r.classes is None
    est = da.LinearDiscriminantAnalysis(solver="lsqr")
    for j, s in enumerate(scoring):
        s = _SK_SCORER.get(s, s)
        score, _, _ = sk_permutation_test_score(est, X, yb, cv=bfolds, n_permutations=1, scoring=s)
        assert float(r.statistic[j]) == pytest.approx(score, abs=1e-12)
