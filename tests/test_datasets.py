"""Bundled datasets and the CSV loader."""

import gzip

import numpy as np
import pytest
import sklearn.datasets

from jaxtests import datasets


def test_breast_cancer_matches_sklearn():
    X, y = datasets.load_breast_cancer()
    ref = sklearn.datasets.load_breast_cancer()
    assert X.shape == (569, 30) and X.dtype == np.float64
    np.testing.assert_array_equal(X, ref.data)
    # sklearn: target 0 = malignant; ours: +1 = malignant
    np.testing.assert_array_equal(y, np.where(ref.target == 0, 1.0, -1.0))
    assert (y > 0).sum() == 212  # UCI WDBC: 212 malignant, 357 benign


def test_pima_shape_and_classes():
    X, y = datasets.load_pima()
    assert X.shape == (768, 8)
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert (y > 0).sum() == 268  # R mlbench: table(PimaIndiansDiabetes$diabetes) pos = 268
    # R 4.x: colMeans(PimaIndiansDiabetes[, 1:8]) (mlbench 2.1-3), first three columns
    np.testing.assert_allclose(X[:, :3].mean(0), [3.845052, 120.894531, 69.105469], rtol=1e-6)


def test_diabetes_matches_sklearn():
    X, y = datasets.load_diabetes()
    ref = sklearn.datasets.load_diabetes(scaled=False)
    np.testing.assert_array_equal(X, ref.data)
    np.testing.assert_array_equal(y, ref.target)


def test_list_datasets():
    info = datasets.list_datasets()
    assert set(info) == {"breast_cancer", "pima", "diabetes", "wine"}
    for name, meta in info.items():
        X, _ = getattr(datasets, meta["loader"])()
        assert X.shape == meta["shape"], name


def test_wine_equals_scikit_learns_copy():
    sk = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_wine()
    ref = sk.load_wine()  # the UCI wine recognition data as scikit-learn ships it
    np.testing.assert_array_equal(X, ref.data)
    np.testing.assert_array_equal(y, ref.target)
    assert np.bincount(y.astype(int)).tolist() == [59, 71, 48]  # UCI: class distribution


def test_load_csv_roundtrip_and_gzip(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,b,label\n1,2.5,0\n3,-4,1\n\n")
    X, y = datasets.load_csv(p, label="label")
    np.testing.assert_array_equal(X, [[1, 2.5], [3, -4]])
    np.testing.assert_array_equal(y, [0, 1])
    X2, _ = datasets.load_csv(p, label="label", features=["b"])
    np.testing.assert_array_equal(X2, [[2.5], [-4]])
    g = tmp_path / "d.csv.gz"
    with gzip.open(g, "wt") as fh:
        fh.write(p.read_text())
    np.testing.assert_array_equal(datasets.load_csv(g, label="label")[0], X)


def test_load_csv_errors(tmp_path):
    def write(text):
        p = tmp_path / "bad.csv"
        p.write_text(text)
        return p

    with pytest.raises(ValueError, match=r"bad.csv: column\(s\) \['y'\] not found"):
        datasets.load_csv(write("a,b\n1,2\n"), label="y")
    with pytest.raises(ValueError, match=r"line 3, column 'b': non-numeric value 'x'"):
        datasets.load_csv(write("a,b\n1,2\n3,x\n"), label="a")
    with pytest.raises(ValueError, match=r"line 2, column 'b': empty or missing"):
        datasets.load_csv(write("a,b\n1,\n"), label="a")
    with pytest.raises(ValueError, match=r"line 2, column 'a': empty or missing value 'NaN'"):
        datasets.load_csv(write("a,b\nNaN,1\n"), label="b")
    with pytest.raises(ValueError, match=r"line 2, column 'a': non-finite value 'inf'"):
        datasets.load_csv(write("a,b\ninf,1\n"), label="b")
    with pytest.raises(ValueError, match=r"line 2: 3 fields, the header has 2"):
        datasets.load_csv(write("a,b\n1,2,3\n"), label="b")
    with pytest.raises(ValueError, match="the file is empty"):
        datasets.load_csv(write(""), label="b")
    with pytest.raises(ValueError, match="no data rows"):
        datasets.load_csv(write("a,b\n"), label="b")
    with pytest.raises(ValueError, match="duplicate column"):
        datasets.load_csv(write("a,a,b\n1,2,3\n"), label="b")
    with pytest.raises(TypeError, match="`label` must be a column name"):
        datasets.load_csv(write("a,b\n1,2\n"), label=1)
    with pytest.raises(TypeError, match="`features` must be a sequence"):
        datasets.load_csv(write("a,b\n1,2\n"), label="b", features="a")


def test_load_csv_reads_what_spreadsheets_write(tmp_path):
    # Excel's "CSV UTF-8" starts with a byte-order mark; gzip of it too.
    p = tmp_path / "bom.csv"
    p.write_bytes("\ufeffa,label\n1,0\n2,1\n\n\n".encode())
    X, y = datasets.load_csv(p, label="a")
    np.testing.assert_array_equal(X, [[0], [1]])
    np.testing.assert_array_equal(y, [1, 2])
    g = tmp_path / "bom.csv.gz"
    g.write_bytes(gzip.compress(p.read_bytes()))
    np.testing.assert_array_equal(datasets.load_csv(g, label="a")[1], [1, 2])


def test_load_csv_refuses_hostile_files(tmp_path):
    def write(data):
        p = tmp_path / "bad.csv"
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return p

    with pytest.raises(ValueError, match=r"bad\.csv: not UTF-8 text \(byte 0xe9"):
        datasets.load_csv(write("caf\u00e9,b\n1,2\n".encode("latin-1")), label="b")
    with pytest.raises(ValueError, match=r"line 3, column 'a': non-numeric value '1_000'"):
        datasets.load_csv(write("a,b\n1,2\n1_000,3\n"), label="b")
    with pytest.raises(ValueError, match=r"line 2, column 'a': non-finite value 'infinity'"):
        datasets.load_csv(write("a,b\ninfinity,2\n"), label="b")
    with pytest.raises(ValueError, match=r"bad\.csv, line 3: blank line between data rows"):
        datasets.load_csv(write("a,b\n1,2\n\n3,4\n"), label="b")
    with pytest.raises(ValueError, match=r"`features` contains the label column 'd'"):
        datasets.load_csv(write("a,d\n1,2\n"), label="d", features=["d"])
    with pytest.raises(ValueError, match=r"`features` names column\(s\) \['a'\] more than once"):
        datasets.load_csv(write("a,d\n1,2\n"), label="d", features=["a", "a"])
    with pytest.raises(ValueError, match=r"line 1: column 2 has no name"):
        datasets.load_csv(write("a,,d\n1,2,3\n"), label="d")
