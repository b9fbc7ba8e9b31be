"""Issue 28.1: built-in learners standardise on each training fold (scikit-learn pipelines).

Reference: ``make_pipeline(StandardScaler(), estimator)`` fitted on the same training
folds of the raw (unscaled) features; the scaler sees the training rows only, so
nothing leaks from the test fold.
"""

import numpy as np
import pytest
from _helpers import cli
from sklearn import discriminant_analysis as da
from sklearn import linear_model as lm
from sklearn import neighbors
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from jaxtests import cross_validate, datasets, models, permutation_test_score


@pytest.fixture(scope="module")
def raw():
    # breast cancer, raw features of very unequal scales (area ~1e3, smoothness ~1e-1)
    X, y = datasets.load_breast_cancer()
    return X[:150, :8], y[:150]


@pytest.fixture(scope="module")
def folds(raw):
    X, y = raw
    return [(tr, te) for tr, te in StratifiedKFold(5).split(X, y)]


def _pipe(est):
    return make_pipeline(StandardScaler(), est)


# (ours, scikit-learn pipeline's estimator, the output compared, tolerance)
BINARY = {
    "ridge": (models.ridge_classifier(0.7), lm.RidgeClassifier(alpha=0.7), "decision", 1e-8),
    "lda": (models.lda(), da.LinearDiscriminantAnalysis(solver="lsqr"), "decision", 1e-6),
    "qda": (
        models.qda(0.05),
        da.QuadraticDiscriminantAnalysis(reg_param=0.05),
        "decision",
        1e-6,
    ),
    # sklearn's lbfgs stops at its own tolerance: decision values within 1e-4
    "logistic": (
        models.logistic(0.5),
        lm.LogisticRegression(C=0.5, tol=1e-10, max_iter=10_000),
        "decision",
        1e-4,
    ),
    "knn": (models.knn(5), neighbors.KNeighborsClassifier(5), "proba", 1e-12),
    "centroid": (models.nearest_centroid(), neighbors.NearestCentroid(), "predict", 0),
}


@pytest.fixture(scope="module")
def binary_cv(raw, folds):
    X, y = raw
    return cross_validate({k: v[0] for k, v in BINARY.items()}, X, y, cv=folds, key=0)


def _reference(est, X, y, folds, output):
    out = []
    for tr, te in folds:
        p = _pipe(est).fit(X[tr], y[tr])
        if output == "decision":
            out.append(p.decision_function(X[te]))
        elif output == "proba":  # kNN's decision value is 2 P(+1) - 1
            out.append(2 * p.predict_proba(X[te])[:, 1] - 1)
        else:
            out.append(p.predict(X[te]))
    return out


@pytest.mark.parametrize("name", list(BINARY))
def test_builtins_equal_standard_scaler_pipelines(raw, folds, binary_cv, name):
    X, y = raw
    _, est, output, tol = BINARY[name]
    ref = _reference(est, X, y, folds, output)
    outputs, index, valid = binary_cv.instance_outputs(name)
    for k, (_, te) in enumerate(folds):
        got = np.asarray(outputs)[0, k][np.asarray(valid)[0, k]]
        np.testing.assert_array_equal(np.asarray(index)[0, k][np.asarray(valid)[0, k]], te)
        if output == "predict":
            np.testing.assert_array_equal(np.where(got > 0, 1, -1), ref[k])
        else:
            np.testing.assert_allclose(got, ref[k], rtol=0, atol=tol)
    # the per-fold 0/1 loss equals the pipeline's on every fold (no decision near 0 here)
    err = [
        np.mean(np.sign(r) != y[te]) if output != "predict" else np.mean(r != y[te])
        for r, (_, te) in zip(ref, folds)
    ]
    np.testing.assert_allclose(np.ravel(binary_cv.fold_scores(name, "error")), err, atol=1e-12)


def test_standardize_false_fits_the_raw_features(raw, folds):
    # the pre-issue-28 model: unscaled features give another (worse) logistic model here
    X, y = raw
    cv = cross_validate(
        {"scaled": models.logistic(), "raw": models.logistic(standardize=False)},
        X,
        y,
        cv=folds,
        key=0,
    )
    ref = _reference(lm.LogisticRegression(tol=1e-10, max_iter=10_000), X, y, folds, "decision")
    got = np.asarray(cv.instance_outputs("scaled")[0])[0, 0][np.asarray(cv.valid)[0, 0]]
    np.testing.assert_allclose(got, ref[0], atol=1e-4)
    raw_out = np.asarray(cv.instance_outputs("raw")[0])[0, 0][np.asarray(cv.valid)[0, 0]]
    assert np.max(np.abs(raw_out - ref[0])) > 0.5


def test_test_rows_do_not_enter_the_scaling(raw, folds):
    # fold 0's test rows blown up by 1e3: a scaler fitted on all rows would change the
    # fit; fitted on the training rows only, the outputs are the pipeline's on the same rows
    X, y = raw
    X2 = X.copy()
    tr, te = folds[0]
    X2[te] *= 1e3
    cv = cross_validate({"m": models.ridge_classifier()}, X2, y, cv=folds[:1], key=0)
    ref = _pipe(lm.RidgeClassifier()).fit(X2[tr], y[tr]).decision_function(X2[te])
    v = np.asarray(cv.valid)[0, 0]
    np.testing.assert_allclose(np.asarray(cv.outputs)[0, 0, 0][v], ref, rtol=1e-9)


def test_ridge_regression_and_multiclass_equal_pipelines():
    Xr, yr = datasets.load_diabetes()
    Xr = Xr[:120] * np.array([1e3, 1, 1e-2, 50, 3, 1, 1, 1, 1, 1])  # unequal scales
    yr = yr[:120]
    fr = [(tr, te) for tr, te in StratifiedKFold(4).split(Xr, yr > np.median(yr))]
    cv = cross_validate({"ridge": models.ridge(2.0)}, Xr, yr, cv=fr, key=0)
    for k, (tr, te) in enumerate(fr):
        ref = _pipe(lm.Ridge(alpha=2.0)).fit(Xr[tr], yr[tr]).predict(Xr[te])
        v = np.asarray(cv.valid)[0, k]
        np.testing.assert_allclose(np.asarray(cv.outputs)[0, 0, k][v], ref, rtol=1e-9)
    Xw, yw = datasets.load_wine()
    fw = [(tr, te) for tr, te in StratifiedKFold(3).split(Xw, yw)]
    cv = cross_validate({"knn": models.knn(5)}, Xw, yw, cv=fw, key=0)
    for k, (tr, te) in enumerate(fw):
        ref = _pipe(neighbors.KNeighborsClassifier(5)).fit(Xw[tr], yw[tr]).predict(Xw[te])
        v = np.asarray(cv.valid)[0, k]
        np.testing.assert_array_equal(np.asarray(cv.outputs)[0, 0, k][v], ref)


def test_permutation_test_score_scales_on_each_training_fold(raw, folds):
    # the observed score through the ridge fast path equals the pipeline's mean accuracy
    X, y = raw
    res = permutation_test_score(
        models.ridge_classifier(), X, y, cv=folds, n_permutations=16, key=0
    )
    acc = np.mean(
        [_pipe(lm.RidgeClassifier()).fit(X[tr], y[tr]).score(X[te], y[te]) for tr, te in folds]
    )
    np.testing.assert_allclose(float(res.statistic), acc, atol=1e-12)


def test_standardize_validation():
    with pytest.raises(TypeError, match="`standardize` must be a bool"):
        models.knn(standardize=1)
    with pytest.raises(TypeError, match="`standardize` must be a bool"):
        models.ridge(standardize="yes")


def test_cli_sanity_standardizes_unless_told_not(tmp_path, capsys, raw):
    # `jaxtests sanity` fits the same model as the library: standardised by default,
    # raw with --no-standardize; the JSON says which, and the scores equal the library's
    import json

    X, y = raw
    X, y = X[:60, :3] * np.array([1.0, 1e-2, 1e3]), y[:60]
    p = tmp_path / "xy.csv"
    p.write_text(
        "a,b,c,label\n"
        + "\n".join(",".join([*(repr(float(v)) for v in r), str(int(t))]) for r, t in zip(X, y))
        + "\n"
    )
    scores = {}
    for flag, standardize in (([], True), (["--no-standardize"], False)):
        args = ["sanity", p, "--label", "label", "--model", "knn", "--n-permutations", "9"]
        status, stdout, err = cli(capsys, *args, "--seed", "3", "--json", *flag)
        assert status == 0, err
        out = json.loads(stdout)
        assert out["standardize"] is standardize
        lib = permutation_test_score(
            models.knn(standardize=standardize), X, y, cv=5, n_permutations=9, key=3
        )
        assert out["result"]["statistic"] == pytest.approx(float(lib.statistic), abs=1e-12)
        scores[standardize] = out["result"]["statistic"]
    assert scores[True] != scores[False]  # feature c (x 1e3) dominates the raw distances
