"""The documentation site builds with warnings as errors and covers every public name."""

import importlib
import inspect
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import jaxtests

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PUBLIC_SUBMODULES = (
    "bayesian",
    "datasets",
    "losses",
    "measures",
    "models",
    "plot",
    "power",
    "study",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    # Issue 39.8: `sphinx-build -W` from a copy of docs/ (autosummary writes its stubs into
    # the source folder); about 15-40 s on two cores, no code run but imports.
    tmp = tmp_path_factory.mktemp("docs")
    src, out = tmp / "src", tmp / "html"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", src, out]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
    assert run.returncode == 0, run.stderr[-5000:]
    return out


def _inventory(out):
    from sphinx.util.inventory import InventoryFile

    with open(out / "objects.inv", "rb") as f:
        inv = InventoryFile.load(f, "", lambda base, uri: uri)
    inv = getattr(inv, "data", inv)  # Sphinx 8.2+: an _Inventory; before: the dict itself
    return {name for entries in inv.values() for name in entries}


def _public_names():
    names = []
    for name in jaxtests.__all__:
        names.append(f"jaxtests.{name}")
    for mod in PUBLIC_SUBMODULES:
        module = importlib.import_module(f"jaxtests.{mod}")
        names += [f"jaxtests.{mod}.{name}" for name in module.__all__]
    return names


@pytest.mark.slow
def test_docs_build_without_warnings_and_list_every_public_name(built):
    documented = _inventory(built)
    missing = [name for name in _public_names() if name not in documented]
    assert not missing, f"public names without an API page: {missing}"
    for page in ("coming_from", "figures", "changelog", "development/index", "api/index"):
        assert (built / f"{page}.html").exists(), page
    for png in (DOCS / "_static" / "figures").glob("*.png"):  # every committed figure shown
        assert (built / "_static" / "figures" / png.name).exists(), png.name
        assert png.name in (DOCS / "figures.md").read_text(encoding="utf-8"), png.name


def test_public_name_list_is_complete():
    # the list the build is checked against holds the names the issue names
    names = _public_names()
    assert "jaxtests.ttest_paired" in names and "jaxtests.bayesian.signrank" in names
    assert "jaxtests.models.svc" in names and "jaxtests.study.power" in names


def _resolve(dotted):
    obj = jaxtests
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _map_calls():
    # `name(args)` calls in the jaxtests column (the second) of every table on the map page,
    # innermost first, so `cross_validate(..., cv=RandomSplits(n_splits=))` gives both calls
    calls = []
    for line in (DOCS / "coming_from.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[1] in ("jaxtests", "---"):
            continue
        for span in re.findall(r"`([^`]*)`", cells[1]):
            inner = re.compile(r"(\.?[A-Za-z_][\w.]*)\(([^()]*)\)")
            while m := inner.search(span):
                calls.append(m.groups())
                span = span[: m.start()] + "_" + span[m.end() :]
    return calls


def test_name_map_names_real_functions_and_arguments():
    # Issue 39.8: every jaxtests function in the map of peers' names exists, and every
    # keyword it names (`key=`, `n_resamples=`...) is one of its parameters.
    calls = _map_calls()
    assert ("RandomSplits", "n_splits=, test_size=") in calls  # nested calls are found
    assert len(calls) >= 40
    for name, args in calls:
        if name.startswith((".", "_")):  # a method of a result: `f(x).text()`, `.probs()`
            continue
        obj = _resolve(name)
        params = inspect.signature(obj).parameters
        takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        for kw in re.findall(r"(\w+)=", args):
            assert kw in params or takes_kwargs, f"{name} has no argument {kw!r}"


def test_name_map_covers_every_peer():
    text = (DOCS / "coming_from.md").read_text(encoding="utf-8")
    for peer in ("## scipy.stats", "## scikit-learn", "## mlxtend", "## statsmodels"):
        assert peer in text, peer
    for peer in ("## autorank", "## baycomp", "## R"):
        assert peer in text, peer
    for name in ("random_state", "rng", "nsamples", "runs", "prior", "random_seed", "num_rounds"):
        assert f"`{name}" in text or f"{name}," in text or f"{name})" in text, name
    for name in ("paired_ttest_5x2cv", "mcnemar", "cochrans_q", "roc.test", "friedman.test"):
        assert name in text, name
    for name in ("t.test", "frdAllPairsNemenyiTest", "autorank(", "SignedRankTest"):
        assert name in text, name


def test_citation_file_parses():
    yaml = pytest.importorskip("yaml")  # installed with the docs' myst-parser
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == jaxtests.__version__
    assert cff["title"] and cff["authors"] and cff["license"] == "BSD-3-Clause"


def test_readme_names_the_docs_build_command():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/sphinx-build -W -b html docs docs/_build/html" in text
    lines = text.splitlines()
    # the two opening commands stay first (.ci/run greps the second)
    cmds = [i for i, line in enumerate(lines) if line.startswith("python3 -m venv .venv")]
    assert len(cmds) == 2 and cmds[0] < 25
