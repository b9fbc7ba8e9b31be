"""Issue 28.7: the command line reads what users have (learner columns, tabs,
semicolons), says which measure it tested, and answers --version and --help plainly.

References: scipy.stats.ttest_rel on the same per-fold values.
"""

import json

import numpy as np
import pytest
import scipy.stats
from _helpers import cli as _cli

import jaxtests

A = [0.10, 0.12, 0.11, 0.13, 0.09]
B = [0.14, 0.15, 0.12, 0.16, 0.13]


def _write(path, sep, name="algorithm", extra=False):
    head = [name, "fold", "error", *(["tpr"] if extra else [])]
    lines = [sep.join(head)]
    for alg, vals in (("a", A), ("b", B)):
        for k, v in enumerate(vals):
            lines.append(sep.join([alg, str(k), repr(v), *(["0.5"] if extra else [])]))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("sep", "name"), [(",", "learner"), ("\t", "algorithm"), (";", "learner")], ids=str
)
def test_learner_column_and_separators(capsys, tmp_path, sep, name):
    path = _write(tmp_path / "f.csv", sep, name)
    status, out, err = _cli(capsys, "compare", path, "--json")
    assert status == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["pvalue"] == pytest.approx(scipy.stats.ttest_rel(A, B).pvalue, rel=1e-10)


def test_both_name_columns_refused(capsys, tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("algorithm,learner,fold,error\na,a,1,0.1\n")
    status, _, err = _cli(capsys, "compare", path)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "both 'algorithm' and 'learner' columns" in err


def test_every_measure_column_is_tested(capsys, tmp_path):
    # Issue 28.7: with two measure columns and no --measures only the first was tested (a
    # note named the other); now each column is tested, in a block of its own.
    path = _write(tmp_path / "f.csv", ",", extra=True)
    status, out, err = _cli(capsys, "compare", path, "--json")
    assert status == 0
    payload = json.loads(out)
    assert [r["measure"] for r in payload["rows"]] == ["error", "tpr"]
    assert "notes" not in payload and "ran on 'error' only" not in err
    assert payload["rows"][0]["pvalue"] == pytest.approx(
        scipy.stats.ttest_rel(A, B).pvalue, rel=1e-10
    )
    assert set(payload["results"]["t"]) == {"error", "tpr"}  # as with several --measures
    status, out, _ = _cli(capsys, "compare", path)
    assert status == 0 and out.startswith("error:\n") and "\ntpr:\n" in out


def test_version_and_help(capsys):
    status, out, _ = _cli(capsys, "--version")
    assert status == 0 and out.strip() == f"jaxtests {jaxtests.__version__}"
    status, out, _ = _cli(capsys, "--help")
    assert status == 0 and "seeds" not in out and "--version" in out
    status, out, _ = _cli(capsys, "sanity", "--help")
    assert status == 0 and "--standardize" in out and "svm" in out
    # every option of sanity says what it does
    assert "number of folds" in out and "label permutations" in out
    assert np.all([w in out for w in ("--scoring", "--seed", "--json", "--quiet")])


def test_a_line_or_file_past_the_bounds_is_refused_without_reading_it(
    tmp_path, capsys, monkeypatch
):
    # Issue 43.4: a 2 MB gzip expanding to one 2 GiB line raised a MemoryError. Here 64 MiB
    # in one line: refused after reading 1 MiB of it (the peak memory says so).
    import gzip
    import tracemalloc

    from jaxtests._cli import main
    from jaxtests.datasets import _text

    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"diff\n")
        for _ in range(64):
            f.write(b"1" * (1 << 20))
    tracemalloc.start()
    try:
        status = main(["signflip", str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    err = capsys.readouterr().err.splitlines()
    assert status == 2 and len(err) == 1, err
    assert err[0] == (
        f"jaxtests: error: {path}, line 2: longer than 1,048,576 characters once decompressed "
        "(no line breaks: not a CSV table?); a row of a results table is a few kB."
    )
    assert peak < 32 << 20  # the whole line is 64 MiB
    monkeypatch.setattr(_text, "MAX_TEXT", 100)
    for name, text in (("d.csv", "diff\n" + "0.5\n" * 40), ("d.json", "[" + "{},\n" * 40 + "{}]")):
        (tmp_path / name).write_text(text)
        assert main(["signflip", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"jaxtests: error: {tmp_path / name}: more than 100 characters, more than jaxtests "
            "reads; split the file, or keep only the columns the test needs.\n"
        )


def test_signflip_names_the_cell_that_is_not_a_number(tmp_path, capsys):
    # a column with a word in it was read as class names, and the test said "`d` must be an
    # array of real numbers, got dtype <U3": the file, line and column say where
    from jaxtests._cli import main

    path = tmp_path / "d.csv"
    path.write_text("a,b\n0.1,0.2\n0.3,x\n0.2,0.4\n")
    assert main(["signflip", str(path), "--column", "b"]) == 2
    err = capsys.readouterr().err
    assert err == f"jaxtests: error: {path}, line 3, column 'b': non-numeric value 'x'.\n"
