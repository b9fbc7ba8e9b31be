"""Issue 28.5: McNemar from CVResult and the CLI; binary labels of any two values.

References: statsmodels' ``mcnemar(exact=True)`` on the 2x2 table of scikit-learn
``make_pipeline(StandardScaler(), ...)`` predictions on the same folds; scikit-learn's
``LabelBinarizer`` for which of two labels is positive (the later of the sorted values).
"""

import json

import numpy as np
import pytest
from _helpers import cli
from sklearn import discriminant_analysis as da
from sklearn import neighbors
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import LabelBinarizer, StandardScaler
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from jaxtests import RandomSplits, cross_validate, datasets, models, permutation_test_score


@pytest.fixture(scope="module")
def data():
    X, y = datasets.load_breast_cancer()  # ±1, malignant = +1
    return X[:120, :6], y[:120]


@pytest.fixture(scope="module")
def folds(data):
    return list(StratifiedKFold(4).split(*data))


@pytest.fixture(scope="module")
def cv(data, folds):
    ms = {"lda": models.lda(), "nc": models.nearest_centroid()}
    return cross_validate(ms, *data, cv=folds, key=0)


def _sm_reference(X, y, folds):
    right = {}
    for name, est in (
        ("lda", da.LinearDiscriminantAnalysis(solver="lsqr")),
        ("nc", neighbors.NearestCentroid()),
    ):
        ok = np.empty(len(y), bool)
        for tr, te in folds:
            ok[te] = make_pipeline(StandardScaler(), est).fit(X[tr], y[tr]).predict(X[te]) == y[te]
        right[name] = ok
    a, b = right["lda"], right["nc"]
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    return sm_mcnemar(table, exact=True), int(np.sum(a & ~b)), int(np.sum(~a & b))


def test_cv_mcnemar_equals_statsmodels_on_sklearn_predictions(data, folds, cv):
    ref, n01, n10 = _sm_reference(*data, folds)
    r = cv.mcnemar("lda", "nc")
    assert (int(r.n01), int(r.n10)) == (n01, n10)
    assert n01 + n10 > 0  # the test has something to count
    np.testing.assert_allclose(r.pvalue, ref.pvalue, rtol=1e-12)
    np.testing.assert_allclose(r.statistic, ref.statistic)
    chi = cv.mcnemar("lda", "nc", method="chi2")
    np.testing.assert_allclose(
        chi.pvalue,
        sm_mcnemar([[0, n01], [n10, 0]], exact=False, correction=True).pvalue,
        rtol=1e-12,
    )


def test_cv_mcnemar_refusals(data):
    X, y = data
    ms = {"lda": models.lda(), "nc": models.nearest_centroid()}
    rep = cross_validate(ms, X, y, cv=3, repeats=2, key=0)
    with pytest.raises(ValueError, match=r"has 2 repetitions .* `repetition=`"):
        rep.mcnemar("lda", "nc")
    assert int(rep.mcnemar("lda", "nc", repetition=1).n01) >= 0
    with pytest.raises(ValueError, match="`repetition` must be below 2"):
        rep.mcnemar("lda", "nc", repetition=2)
    with pytest.raises(TypeError, match="`repetition` must be an int"):
        rep.mcnemar("lda", "nc", repetition=0.5)
    splits = cross_validate(ms, X, y, cv=RandomSplits(4, test_size=0.5), key=0)
    with pytest.raises(ValueError, match=r"4 repetitions \(or random splits\)"):
        splits.mcnemar("lda", "nc")
    assert int(splits.mcnemar("lda", "nc", repetition=0).n10) >= 0  # one holdout set
    n = len(y)
    a, b = np.arange(0, n, 2), np.arange(1, n, 2)
    overlap = cross_validate(ms, X, y, cv=[(a, b), (b[:30], np.r_[a, b[30:]])], key=0)
    with pytest.raises(ValueError, match="each instance tested once"):
        overlap.mcnemar("lda", "nc")
    reg = cross_validate({"r": models.ridge()}, X, X[:, 0], cv=3, key=0)
    with pytest.raises(ValueError, match="`mcnemar` needs a classification result"):
        reg.mcnemar("r", "r")


@pytest.mark.parametrize(
    "labels", [("benign", "malignant"), (1, 2), (3.0, 7.0)], ids=["strings", "1-2", "3-7"]
)
def test_two_labels_of_any_values_encoded_as_sklearn(data, folds, cv, labels):
    X, y = data
    neg, pos = labels
    y2 = np.where(y > 0, pos, neg)
    # scikit-learn's LabelBinarizer: the later of the sorted classes is the positive one
    assert np.array_equal(LabelBinarizer().fit_transform(y2).ravel() == 1, y > 0)
    r = cross_validate({"lda": models.lda(), "nc": models.nearest_centroid()}, X, y2, cv=folds)
    assert r.binary_classes == labels and r.classes is None
    np.testing.assert_array_equal(r.y, y)
    np.testing.assert_array_equal(r.outputs, cv.outputs)  # the same fits as ±1 labels
    p2 = permutation_test_score(models.lda(), X, y2, cv=folds, n_permutations=5, key=1)
    p1 = permutation_test_score(models.lda(), X, y, cv=folds, n_permutations=5, key=1)
    np.testing.assert_array_equal(p2.permutation_scores, p1.permutation_scores)
    assert cv.binary_classes == (-1, 1)


def test_cli_mcnemar_and_string_labels(tmp_path, capsys, data, folds, cv):
    X, y = data
    # per-instance file of the cross-validation above: McNemar as the library's
    rows = ["algorithm,fold,instance,y_true,score"]
    for name in cv.names:
        out, index, valid = cv.instance_outputs(name)
        for k in range(out.shape[1]):
            for f, i in zip(out[0, k][valid[0, k]], index[0, k][valid[0, k]], strict=True):
                rows.append(f"{name},{k},{i},{int(y[i])},{float(f)!r}")
    p = tmp_path / "inst.csv"
    p.write_text("\n".join(rows) + "\n")
    status, out, err = cli(capsys, "compare", p, "--test", "mcnemar", "--json")
    assert status == 0, err
    row = json.loads(out)["rows"][0]
    ref = cv.mcnemar("lda", "nc")
    assert row["pvalue"] == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert row["test"] == "mcnemar (exact)"
    folds_csv = tmp_path / "folds.csv"
    folds_csv.write_text("algorithm,fold,error\na,1,0.1\na,2,0.2\nb,1,0.3\nb,2,0.25\n")
    status, _, err = cli(capsys, "compare", folds_csv, "--test", "mcnemar")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "--test mcnemar needs a per-instance file" in err
    # sanity on a label column of class names: the library's result with ±1 labels
    xy = tmp_path / "xy.csv"
    names = np.where(y > 0, "malignant", "benign")
    xy.write_text(
        "a,b,c,diagnosis\n"
        + "".join(f"{r[0]!r},{r[1]!r},{r[2]!r},{t}\n" for r, t in zip(X[:, :3].tolist(), names))
    )
    status, out, err = cli(capsys, "sanity", xy, "--label", "diagnosis", "--n-permutations", "9",
                           "--seed", "2", "--json")  # fmt: skip
    assert status == 0, err
    lib = permutation_test_score(models.ridge_classifier(), X[:, :3], y, n_permutations=9, key=2)
    assert json.loads(out)["result"]["statistic"] == pytest.approx(float(lib.statistic))
