"""Built-in learners (jaxtests.kernels.learners) against scikit-learn on the same data."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtests.kernels import learners as klearners
from sklearn import discriminant_analysis as da
from sklearn import linear_model as lm
from sklearn import neighbors, svm
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from jaxtests import _learners, cross_validate, datasets, models
from jaxtests._learners import LEARNERS, cli_models, fit_decision, fold_decisions, learner


@pytest.fixture(scope="module")
def clf_data():
    X, y = datasets.load_breast_cancer()
    X = (X - X.mean(0)) / X.std(0)
    X, y = X[:120, :5], y[:120]
    w = (np.random.default_rng(0).random(120) < 0.75).astype(float)
    return X, y, w


@pytest.fixture(scope="module")
def reg_data():
    X, y = datasets.load_diabetes()
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    w = (np.random.default_rng(1).random(120) < 0.75).astype(float)
    return X[:120], y[:120], w


def _split(X, y, w):
    tr, te = w > 0, w == 0
    return X[tr], y[tr], X[te], tr, te


# jitted once per model spec and shared by the tests
_fit_decision = jax.jit(fit_decision, static_argnums=0)


def _ours(model, X, y, w):
    return np.asarray(_fit_decision(model, jnp.asarray(X), jnp.asarray(y), jnp.asarray(w)))


@pytest.mark.parametrize(
    ("model", "ref"),
    [
        (models.ridge_classifier(0.7, standardize=False), lambda: lm.RidgeClassifier(alpha=0.7)),
        (models.lda(standardize=False), lambda: da.LinearDiscriminantAnalysis(solver="lsqr")),
        (
            models.qda(0.01, standardize=False),
            lambda: da.QuadraticDiscriminantAnalysis(reg_param=0.01),
        ),
    ],
    ids=["ridge_classifier", "lda", "qda"],
)
def test_closed_forms_match_sklearn(clf_data, model, ref):
    # the solvers on the given features (standardize=False); scaling inside the folds
    # against scikit-learn's StandardScaler pipelines: test_standardize.py
    X, y, w = clf_data
    Xtr, ytr, Xte, _, te = _split(X, y, w)
    expected = ref().fit(Xtr, ytr).decision_function(Xte)
    np.testing.assert_allclose(_ours(model, X, y, w)[te], expected, rtol=1e-9, atol=1e-10)


def test_ridge_regression_matches_sklearn(reg_data):
    X, y, w = reg_data
    Xtr, ytr, Xte, _, te = _split(X, y, w)
    expected = lm.Ridge(alpha=2.0).fit(Xtr, ytr).predict(Xte)
    np.testing.assert_allclose(
        _ours(models.ridge(2.0, standardize=False), X, y, w)[te], expected, rtol=1e-10
    )


def test_logistic_matches_sklearn(clf_data):
    X, y, w = clf_data
    Xtr, ytr, Xte, _, te = _split(X, y, w)
    ref = lm.LogisticRegression(C=0.5, tol=1e-12, max_iter=10_000).fit(Xtr, ytr)
    # lbfgs stops at a gradient tolerance, Newton at machine precision: 1e-5 absolute
    np.testing.assert_allclose(
        _ours(models.logistic(0.5, standardize=False), X, y, w)[te],
        ref.decision_function(Xte),
        atol=1e-5,
    )


def test_knn_and_nearest_centroid_match_sklearn(clf_data):
    X, y, w = clf_data
    Xtr, ytr, Xte, _, te = _split(X, y, w)
    proba = neighbors.KNeighborsClassifier(5).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    np.testing.assert_allclose(
        _ours(models.knn(5, standardize=False), X, y, w)[te], 2 * proba - 1, atol=1e-12
    )
    pred = neighbors.NearestCentroid().fit(Xtr, ytr).predict(Xte)
    np.testing.assert_array_equal(
        np.sign(_ours(models.nearest_centroid(standardize=False), X, y, w)[te]), pred
    )


_SVM_KERNELS = [("linear", 1), ("poly", 2), ("poly", 3), ("rbf", 1)]
# Yildiz & Alpaydin's normalised kernels with coef0 = 1, the kernels that the LIBSVM
# precomputed references below build with ``gram(..., coef0=1.0, normalize=True)``
_YA = {"coef0": 1.0, "normalize": True}


@pytest.mark.parametrize(("kernel", "degree"), _SVM_KERNELS)
def test_svc_matches_libsvm_precomputed(clf_data, kernel, degree):
    X, y, w = clf_data
    _, ytr, _, tr, te = _split(X, y, w)
    # the solver on the given features (standardisation is tested separately)
    m = models.svc(kernel, C=1.0, degree=degree, gamma=0.2, tol=1e-6, standardize=False, **_YA)
    K = np.asarray(klearners.gram(jnp.asarray(X), jnp.asarray(X), kernel, degree, 0.2, 1.0, True))
    ref = svm.SVC(kernel="precomputed", C=1.0, tol=1e-6).fit(K[np.ix_(tr, tr)], ytr)
    # Both solvers stop at KKT gap 1e-6 (LIBSVM's `tol` is the same gap), so the
    # dual objectives agree to ~1e-6 relative and decision values to ~1e-5.
    np.testing.assert_allclose(
        _ours(m, X, y, w)[te], ref.decision_function(K[np.ix_(te, tr)]), atol=2e-5
    )


@pytest.mark.parametrize(("kernel", "degree"), [("linear", 1), ("poly", 2), ("rbf", 1)])
def test_svr_matches_libsvm_precomputed(reg_data, kernel, degree):
    X, y, w = reg_data
    _, ytr, _, tr, te = _split(X, y, w)
    m = models.svr(
        kernel, C=1.0, epsilon=0.1, degree=degree, gamma=0.1, tol=1e-6, standardize=False
    )
    K = np.asarray(klearners.gram(jnp.asarray(X), jnp.asarray(X), kernel, degree, 0.1, 1.0, True))
    ref = svm.SVR(kernel="precomputed", C=1.0, epsilon=0.1, tol=1e-6).fit(K[np.ix_(tr, tr)], ytr)
    # same KKT-gap stopping rule as above
    np.testing.assert_allclose(_ours(m, X, y, w)[te], ref.predict(K[np.ix_(te, tr)]), atol=2e-5)


def _raw_scales(X):
    # undo the fixture's standardisation with very unequal feature scales
    return X * np.array([1e3, 1.0, 1e-2, 50.0, 3.0])[: X.shape[1]] + 7.0


@pytest.mark.parametrize("task", ["svc", "svr"])
def test_svm_standardizes_on_the_training_fold(clf_data, reg_data, task):
    # Issue 13.11: kernel machines standardise features by default with the training
    # rows' mean and standard deviation only. Reference: scikit-learn's StandardScaler
    # fitted on the training rows, then LIBSVM (SVC/SVR) on the same kernel matrix.
    X, y, w = clf_data if task == "svc" else reg_data
    X = _raw_scales(X[:, :5])
    _, ytr, _, tr, te = _split(X, y, w)
    Xs = StandardScaler().fit(X[tr]).transform(X)
    kw = dict(C=1.0, degree=2, gamma=0.2, tol=1e-6, **_YA)
    if task == "svc":
        m = models.svc("poly", **kw)
        ref = svm.SVC(kernel="precomputed", C=1.0, tol=1e-6)
    else:
        m = models.svr("poly", epsilon=0.1, **kw)
        ref = svm.SVR(kernel="precomputed", C=1.0, epsilon=0.1, tol=1e-6)
    K = np.asarray(klearners.gram(jnp.asarray(Xs), jnp.asarray(Xs), "poly", 2, 0.2, 1.0, True))
    ref.fit(K[np.ix_(tr, tr)], ytr)
    expected = ref.decision_function if task == "svc" else ref.predict
    ours = _ours(m, X, y, w)[te]
    np.testing.assert_allclose(ours, expected(K[np.ix_(te, tr)]), atol=2e-5)  # KKT gap 1e-6
    # the test rows do not enter the scaling: changing them changes only their outputs
    X2 = X.copy()
    X2[te] *= 100.0
    np.testing.assert_allclose(_ours(m, X2, y, w)[tr], _ours(m, X, y, w)[tr], atol=1e-9)
    # standardize=False fits the raw features: a different model here
    raw = models.svc("poly", standardize=False, **kw) if task == "svc" else None
    if raw is not None:
        assert np.max(np.abs(_ours(raw, X, y, w)[te] - ours)) > 0.1


@pytest.fixture(scope="module")
def svc_folds(clf_data):
    # raw feature scales (the pipeline's scaler matters) and a constant feature, 0 on
    # every scaled training fold: there gamma="scale" is 1/5 and gamma="auto" 1/6
    X, y, _ = clf_data
    X = np.c_[_raw_scales(X), np.full(len(y), 3.7)]
    return X, y, list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))


@pytest.mark.parametrize("gamma", ["scale", "auto"])
@pytest.mark.parametrize("kernel", ["linear", "poly", "rbf"])
def test_svc_defaults_match_sklearn_pipeline_fold_by_fold(svc_folds, kernel, gamma):
    # Issue 39.2: svc's defaults are scikit-learn's SVC (degree=3, gamma="scale", coef0=0,
    # no kernel normalisation, tol=1e-3), behind a StandardScaler fitted on each training
    # fold. Reference: scikit-learn's make_pipeline(StandardScaler(), SVC(kernel=kernel,
    # gamma=gamma)) fitted on the same explicit folds.
    X, y, folds = svc_folds
    m = models.svc(kernel) if gamma == "scale" else models.svc(kernel, gamma=gamma)
    r = cross_validate({"svc": m}, X, y, cv=folds)
    out, index, valid = (np.asarray(a) for a in r.instance_outputs("svc"))
    errors = np.asarray(r.fold_losses("svc", "zero_one"))[0]
    for k, (tr, te) in enumerate(folds):
        ref = make_pipeline(StandardScaler(), svm.SVC(kernel=kernel, gamma=gamma))
        ref.fit(X[tr], y[tr])
        idx = index[0, k, valid[0, k]]
        expected = ref.decision_function(X[idx])
        # Both SMOs stop at a KKT gap of tol = 1e-3 (decision-value units on the
        # training rows) but select different working sets (maximal violating pair vs
        # LIBSVM's second order, with shrinking), so they stop at different points of
        # that band: the decision values differ by about tol times their scale (at most
        # 1.0 tol max|f| here; 0.14-0.41 on all of breast cancer, ten folds).
        scale = max(1.0, float(np.max(np.abs(expected))))
        np.testing.assert_allclose(out[0, k, valid[0, k]], expected, rtol=0, atol=3e-3 * scale)
        # the same predictions: the same fold errors (scikit-learn's predict)
        assert errors[k] == pytest.approx(np.mean(ref.predict(X[te]) != y[te]), abs=1e-12)


def test_svc_gamma_scale_is_computed_on_the_training_rows(clf_data):
    # gamma="scale" depends on the training fold (traced in the fit), never on the test
    # rows. Reference: scikit-learn's SVC() (gamma="scale") on the raw training rows;
    # clf_data was scaled on all 569 rows, so these rows' variance is not 1.
    X, y, w = clf_data
    Xtr, ytr, Xte, tr, te = _split(X, y, w)
    m = models.svc(standardize=False)
    expected = svm.SVC().fit(Xtr, ytr).decision_function(Xte)
    ours = _ours(m, X, y, w)
    # SMO tolerance 1e-3 as in the test above
    np.testing.assert_allclose(ours[te], expected, rtol=0, atol=3e-3 * np.max(np.abs(expected)))
    X2 = X.copy()
    X2[te] *= 100.0
    np.testing.assert_allclose(_ours(m, X2, y, w)[tr], ours[tr], atol=1e-9)
    # scikit-learn's formula, 1 / (n_features X.var()), on the weighted training rows;
    # 1 where the variance is 0
    g = klearners.gamma_scale(jnp.asarray(X), jnp.asarray(w))
    np.testing.assert_allclose(g, 1 / (Xtr.shape[1] * Xtr.var()), rtol=1e-12)
    const = jnp.full((4, 3), 2.5)
    assert float(klearners.gamma_scale(const, jnp.ones(4))) == 1.0


def test_standardize_fit_matches_standard_scaler(clf_data):
    # weighted (w = 0/1) mean and population sd; a constant feature keeps scale 1
    X, _, w = clf_data
    X = np.c_[_raw_scales(X), np.full(len(X), 3.7)]
    mean, scale = klearners.standardize_fit(jnp.asarray(X), jnp.asarray(w))
    ref = StandardScaler().fit(X[w > 0])
    np.testing.assert_allclose(mean, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(scale, ref.scale_, rtol=1e-12)
    assert float(scale[-1]) == 1.0


def test_normalized_kernels_have_unit_diagonal(clf_data):
    X = jnp.asarray(clf_data[0])
    for kernel, degree in _SVM_KERNELS:
        K = klearners.gram(X, X, kernel, degree, 0.2, 1.0, True)
        np.testing.assert_allclose(jnp.diagonal(K), 1.0, rtol=1e-12)
        assert float(jnp.max(jnp.abs(K))) <= 1 + 1e-12  # Cauchy-Schwarz in feature space


def test_batched_fits_equal_looped(clf_data):
    # fold_decisions vmaps over label vectors and folds: each entry equals the
    # single fit (specs shared with the reference tests, so _ours is compiled);
    # the cheap-order ridge kernel equals the generic ridge fit at the test rows
    X, y, _ = clf_data
    rng = np.random.default_rng(2)
    W = (rng.random((3, X.shape[0])) < 0.7).astype(float)
    Y = np.stack([y, -y, y[rng.permutation(len(y))]])
    Xj, Yj, Wj = jnp.asarray(X), jnp.asarray(Y), jnp.asarray(W)
    ridge = models.ridge_classifier(0.7)
    svc = models.svc("poly", C=1.0, degree=2, gamma=0.2, tol=1e-6, standardize=False, **_YA)
    # per-fold standardisation rounds differently batched (1 ulp), and SMO can then
    # take another path to the same KKT gap 1e-6: agreement to that gap only
    scaled = models.svc("poly", C=1.0, degree=2, gamma=0.2, tol=1e-6, **_YA)
    for m, atol in ((ridge, 1e-10), (svc, 1e-10), (scaled, 2e-5)):
        batched = np.asarray(fold_decisions(m, Xj, Yj, Wj))
        for b in range(3):
            for k in range(3):
                np.testing.assert_allclose(batched[b, k], _ours(m, X, Y[b], W[k]), atol=atol)
        if m is ridge:
            idx = np.stack([np.flatnonzero(W[k] == 0)[:10] for k in range(3)])
            # the default ridge_classifier standardises on each training fold
            fast = jax.jit(klearners.ridge_fold_decisions, static_argnums=(4, 5))(
                Xj, Yj, Wj, jnp.asarray(idx), 0.7, True
            )
            np.testing.assert_allclose(fast, np.take_along_axis(batched, idx[None], -1), atol=1e-12)


# the specs (and data) of the reference tests above: the jitted functions are shared
_SPECS = [
    models.ridge_classifier(0.7),
    models.ridge(2.0),
    models.lda(),
    models.qda(0.01),
    models.nearest_centroid(),
    models.knn(5),
    models.logistic(0.5),
    models.svc("rbf", C=1.0, gamma=0.2, tol=1e-6),
]


@pytest.mark.parametrize("model", _SPECS, ids=[m.kind for m in _SPECS])
def test_jit_matches_eager(clf_data, reg_data, model):
    # the kernels are pure and not jitted where defined: eager and jitted runs
    # agree to round-off; SMO stops at a KKT gap of 1e-6, and round-off can
    # change its path, so the SVM agrees to that gap
    X, y, w = clf_data if model.task == "classification" else reg_data
    args = [jnp.asarray(a) for a in (X, y, w)]
    eager = np.asarray(fit_decision(model, *args))
    atol = 2e-5 if model.kind == "svc" else 1e-10
    np.testing.assert_allclose(_ours(model, X, y, w), eager, rtol=1e-9, atol=atol)


def test_logistic_stops_once_converged(clf_data):
    # Newton from zero converges quadratically: more allowed steps change nothing,
    # and the gradient of the objective vanishes at the result
    X, y, w = clf_data
    Xj, yj, wj = jnp.asarray(X), jnp.asarray(y), jnp.asarray(w)
    a = jax.jit(klearners.logistic_fit, static_argnums=(3, 4))(Xj, yj, wj, 0.5, 25)
    b = jax.jit(klearners.logistic_fit, static_argnums=(3, 4))(Xj, yj, wj, 0.5, 200)
    np.testing.assert_array_equal(a.coef, b.coef)
    f = X @ np.asarray(a.coef) + float(a.intercept)
    r = w * y / (1 + np.exp(y * f))  # w y sigmoid(-y f)
    grad = np.r_[np.asarray(a.coef) / 0.5 - X.T @ r, -r.sum()]
    assert np.max(np.abs(grad)) < 1e-9


def test_model_validation_messages():
    with pytest.raises(ValueError, match="`alpha` must be a finite non-negative"):
        models.ridge(-1.0)
    with pytest.raises(TypeError, match="`k` must be an int"):
        models.knn(2.5)
    with pytest.raises(ValueError, match="`k` must be at least 1"):
        models.knn(0)
    with pytest.raises(ValueError, match="`kernel` must be one of"):
        models.svc("sigmoid")
    with pytest.raises(ValueError, match="`C` must be a finite positive"):
        models.svr(C=0)
    with pytest.raises(ValueError, match=r"`reg_param` must lie in \[0, 1\]"):
        models.qda(2.0)
    with pytest.raises(ValueError, match="`gamma` must be 'scale', 'auto' or a positive"):
        models.svc(gamma="median")
    with pytest.raises(TypeError, match="`gamma` must be 'scale', 'auto' or a real number"):
        models.svc(gamma=None)
    with pytest.raises(ValueError, match="`gamma` must be a finite positive"):
        models.svc(gamma=0.0)
    with pytest.raises(TypeError, match="`standardize` must be a bool"):
        models.svc(standardize="yes")
    with pytest.raises(TypeError, match="`normalize` must be a bool"):
        models.svr(normalize=1)
    assert repr(models.ridge(0.5)) == "ridge(alpha=0.5, standardize=True)"


def test_learner_table_has_one_row_per_constructor():
    # the table is the one place a learner is registered: every public
    # constructor has a row, and the row's constructor builds its kind and task
    assert set(LEARNERS) == set(models.__all__) - {"Model"}
    for kind, row in LEARNERS.items():
        m = row.make()
        assert (m.kind, m.task) == (kind, row.task)
        assert learner(kind) is row
    # the CLI's `sanity --model` choices, in the order it lists them
    assert list(cli_models()) == ["ridge", "lda", "logistic", "centroid", "knn", "qda", "svm"]
    assert cli_models()["ridge"]() == models.ridge_classifier()
    assert cli_models("regression") == {}
    with pytest.raises(ValueError, match="Unknown learner 'tree'"):
        learner("tree")


# ---- host fits and padded rows (issue 37: a first cross_validate compiles little, a new
# number of rows compiles nothing)


@pytest.mark.parametrize("standardize", [True, False])
def test_host_fits_equal_the_jitted_fits_and_sklearn(clf_data, reg_data, standardize):
    # cross_validate fits the closed forms in numpy for concrete data: the same values
    # as the jitted kernels to round-off, and scikit-learn's where it is the reference
    X, y, _ = clf_data
    W = (np.random.default_rng(5).random((3, X.shape[0])) < 0.7).astype(float)
    specs = [
        models.ridge_classifier(0.7, standardize=standardize),
        models.lda(standardize=standardize),
        models.nearest_centroid(standardize=standardize),
        models.ridge(2.0, standardize=standardize),
    ]
    for m in specs:
        Xm, ym, _ = clf_data if m.task == "classification" else reg_data
        host = _learners.host_fold_decisions(m, Xm, ym.astype(float), W)
        jitted = np.asarray(fold_decisions(m, jnp.asarray(Xm), jnp.asarray(ym[None]), W))[0]
        np.testing.assert_allclose(host, jitted, rtol=1e-12, atol=1e-12 * np.abs(jitted).max())
    w = W[0]
    tr, te = w > 0, w == 0
    Xs = StandardScaler().fit(X[tr]).transform(X) if standardize else X
    for m, ref in (
        (specs[0], lm.RidgeClassifier(alpha=0.7)),
        (specs[1], da.LinearDiscriminantAnalysis(solver="lsqr")),
    ):
        expected = ref.fit(Xs[tr], y[tr]).decision_function(Xs[te])
        host = _learners.host_fold_decisions(m, X, y.astype(float), W[:1])[0]
        np.testing.assert_allclose(host[te], expected, rtol=1e-9, atol=1e-10)
    # learners without a closed form stay jitted
    assert _learners.host_fold_decisions(models.logistic(), X, y, W) is None


def test_host_fit_of_a_singular_system_falls_back_to_the_jitted_fit(clf_data):
    # numpy refuses an exactly singular LDA covariance (a zero feature, no shrinkage);
    # cross_validate then gives JAX's values, as before the host path
    X, y, _ = clf_data
    X = np.column_stack([X[:, :2], np.zeros(len(y))])
    m = models.lda(standardize=False)
    W = np.ones((1, len(y)))
    assert _learners.host_fold_decisions(m, X, y.astype(float), W) is None
    splits = [(np.arange(100), np.arange(100, 120))]
    cv = cross_validate({"lda": m}, X, y, cv=splits)
    W = np.zeros((1, len(y)))
    W[0, :100] = 1
    jitted = np.asarray(fold_decisions(m, jnp.asarray(X), jnp.asarray(y[None]), W))[0, 0]
    np.testing.assert_array_equal(cv.test_outputs("lda").output, jitted[100:])


_PADDED = _SPECS[:7]  # every learner of the reference tests but the kernel machines


@pytest.mark.parametrize("model", _PADDED, ids=[m.kind for m in _PADDED])
def test_padded_rows_change_no_fit(clf_data, reg_data, model):
    # cross_validate pads the rows to their shape bucket with zero rows of weight 0:
    # every fit (binary, and multiclass where the learner has one) is unchanged to
    # round-off at the real rows
    X, y, _ = clf_data if model.task == "classification" else reg_data
    X = X[:100]  # 100 rows pad to 128
    W = (np.random.default_rng(6).random((3, 100)) < 0.7).astype(float)
    targets = [(y[:100], 0)]
    if learner(model.kind).scores is not None:
        targets.append((np.arange(100) % 3.0, 3))
    for t, C in targets:
        Xp, tp, Wp = _learners.pad_rows(X, t, W)
        assert Xp.shape == (128, X.shape[1]) and Wp.shape == (3, 128)
        assert not Wp[:, 100:].any() and not Xp[100:].any()
        if C:
            ref = _learners.fold_predictions(model, X, t[None], W, n_classes=C)
            pad = _learners.fold_predictions(model, Xp, tp[None], Wp, n_classes=C)
            np.testing.assert_array_equal(np.asarray(pad)[..., :100], ref)
        else:
            ref = np.asarray(fold_decisions(model, X, t[None], W))
            pad = np.asarray(fold_decisions(model, Xp, tp[None], Wp))[..., :100]
            np.testing.assert_allclose(pad, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
