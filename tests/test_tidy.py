"""Reading tidy per-fold and per-instance result files, and every bad-input message."""

import json

import numpy as np
import pytest

from jaxtests._tidy import PerFold, PerInstance, read_tidy


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_per_fold_csv(tmp_path):
    p = _write(
        tmp_path,
        "r.csv",
        "algorithm,fold,error,tpr\na,1,0.1,0.9\nb,1,0.2,0.8\na,2,0.15,0.85\nb,2,0.25,0.7\n",
    )
    r = read_tidy(p)
    assert isinstance(r, PerFold)
    assert r.algorithms == ("a", "b") and r.folds == ("1", "2") and r.measures == ("error", "tpr")
    np.testing.assert_array_equal(r.measure("error"), [[0.1, 0.15], [0.2, 0.25]])


def test_per_instance_json(tmp_path):
    recs = [
        {"algorithm": a, "fold": f, "instance": i, "y_true": y, "score": s}
        for a, off in (("a", 0.0), ("b", 0.5))
        for f, i, y, s in ((0, 0, 1, 0.3), (0, 1, -1, -0.2), (1, 2, 1, 0.9))
        for s in [s + off]
    ]
    p = _write(tmp_path, "r.json", json.dumps(recs))
    r = read_tidy(p)
    assert isinstance(r, PerInstance)
    np.testing.assert_array_equal(r.y_true, [1, -1, 1])
    np.testing.assert_allclose(r.scores[1] - r.scores[0], 0.5)
    np.testing.assert_array_equal(r.fold_of, [0, 0, 1])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"r\.csv: the file is empty"),
        ("algo,fold,error\n", r"line 1: column 'algorithm' \(or 'learner'\) not found"),
        ("algorithm,fold,error\na,1,0.1\na,2,0.2\n", r"only one algorithm \('a'\)"),
        (
            "algorithm,fold,error\na,1,x\nb,1,0.2\n",
            r"line 2, column 'error': non-numeric value 'x'",
        ),
        ("algorithm,fold,error\na,1,0.1\nb,1,nan\n", r"line 3, column 'error': empty or missing"),
        ("algorithm,fold,error\na,1,0.1\nb,2,0.2\n", r"unequal folds"),
        ("algorithm,fold,error\na,1,0.1\na,1,0.2\nb,1,0.1\n", r"line 3: duplicate row"),
        ("algorithm,fold,error\na,1\n", r"line 2: 2 fields, the header has 3"),
        ("algorithm,fold\na,1\n", r"no measure column"),
        ("algorithm,fold,instance,score\na,1,1,0.1\n", r"needs column\(s\) \['y_true'\]"),
    ],
)
def test_bad_input_messages(tmp_path, text, message):
    p = _write(tmp_path, "r.csv", text)
    with pytest.raises(ValueError, match=message):
        read_tidy(p)


def test_missing_file(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_tidy(tmp_path / "nope.csv")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Issue 18.4: the second of two equal names used to win silently.
        ("algorithm,fold,error,error\na,1,0.1,0.2\nb,1,0.2,0.3\n", r"duplicate column name"),
        # Issue 18.7: extra columns, blank rows and "1_000" were accepted.
        (
            "algorithm,fold,instance,y_true,score,weight\na,1,1,1,0.5,2\nb,1,1,1,0.4,2\n",
            r"line 1: unknown column\(s\) \['weight'\] in a per-instance file",
        ),
        ("algorithm,fold,error\na,1,0.1\n\nb,1,0.2\n", r"r\.csv, line 3: blank line between"),
        ("algorithm,fold,n\na,1,1_000\nb,1,2000\n", r"line 2, column 'n': non-numeric value"),
    ],
)
def test_hostile_csv_refused(tmp_path, text, message):
    p = _write(tmp_path, "r.csv", text)
    with pytest.raises(ValueError, match=message):
        read_tidy(p)


def test_hostile_json_refused(tmp_path):
    p = _write(
        tmp_path,
        "r.json",
        '[{"algorithm": "a", "fold": 1, "error": 0.1},'
        ' {"algorithm": "b", "fold": 1, "error": 0.2, "note": "x"}]',
    )
    with pytest.raises(ValueError, match=r"record 2: keys differ .*extra \['note'\]"):
        read_tidy(p)
    p.write_text('[{"algorithm": "a", "fold": 1, "error": 0.1, "error": 0.3}]')
    with pytest.raises(ValueError, match=r"r\.json: duplicate key\(s\) \['error'\]"):
        read_tidy(p)


def test_spreadsheet_encodings(tmp_path):
    import gzip

    text = "algorithm,fold,error\na,1,0.1\nb,1,0.2\na,2,0.15\nb,2,0.25\n"
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + text.encode())  # Excel's "CSV UTF-8"
    r = read_tidy(p)
    assert r.algorithms == ("a", "b")
    g = tmp_path / "r.csv.gz"
    g.write_bytes(gzip.compress(text.encode()))
    np.testing.assert_array_equal(read_tidy(g).values, r.values)
    lat = tmp_path / "lat.csv"
    lat.write_bytes("algorithm,fold,error\nr\u00e9gression,1,0.1\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"lat\.csv: not UTF-8 text"):
        read_tidy(lat)


def test_repetition_column(tmp_path):
    rows = ["algorithm,repetition,fold,error"]
    rows += [f"{a},{r},{f},0.{r}{f}" for a in "ab" for r in (1, 2) for f in (1, 2)]
    r = read_tidy(_write(tmp_path, "r.csv", "\n".join(rows) + "\n"))
    assert r.folds == ("1/1", "1/2", "2/1", "2/2")
    assert r.repetitions == ("1", "1", "2", "2")
    assert r.measures == ("error",)
