"""Docstring, README and docs examples run; every public function documents its parameters."""

import doctest
import importlib
import inspect
import pathlib
import pkgutil
import re

import pytest
from _helpers import python

import jaxtests

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(jaxtests.__path__, "jaxtests.")
    if not name.startswith("jaxtests.kernels") and name != "jaxtests._cli"
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"


@pytest.mark.parametrize("name", jaxtests.__all__)
def test_public_functions_have_numpydoc(name):
    obj = getattr(jaxtests, name)
    if inspect.ismodule(obj):
        assert obj.__doc__, name
        return
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    if inspect.isfunction(obj) and inspect.signature(obj).parameters:
        assert "Parameters\n----------" in doc, f"{name}: no Parameters section"
        assert "Returns\n-------" in doc, f"{name}: no Returns section"


ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def _python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def _example_blocks():
    # The README's and the documentation pages' python blocks, each distinct block once
    # (the README repeats the user guide's first example).
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    blocks = [b for page in pages for b in _python_blocks(page.read_text(encoding="utf-8"))]
    return list(dict.fromkeys(blocks))


def test_readme_finds_python_blocks():
    assert _python_blocks("a\n```python\nx = 1\n```\n```sh\nls\n```\n") == ["x = 1\n"]
    assert len(_python_blocks(README.read_text(encoding="utf-8"))) >= 1
    assert len(_example_blocks()) >= 6  # the user guide's examples are found too


def _page(name):
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_docs_state_the_measured_limits():
    # Issue 42.4 and 42.5: the comparison with autorank says whom its effect sizes are
    # measured against, and the functions' descriptions state the measured limits (these
    # moved from the README to the user guide, issue 39.8).
    for page, fact in (
        (
            "user_guide/many_datasets.md",
            "measures every effect size against the first row, its worst learner",
        ),
        ("user_guide/limits.md", "86-87% of 2,000 simulated test sets"),  # DeLong, n = 12
        ("user_guide/limits.md", "cover about 93-95% at n = 50-200"),  # BCa, accuracy difference
        ("user_guide/limits.md", "smallest two-sided `signflip_test` p-value of k folds is 2/2^k"),
        ("user_guide/limits.md", "conf.int` stays the two-sided interval"),  # one-sided delong
        ("user_guide/many_datasets.md", "from N = 39 for 3 learners"),  # Friedman's F (42.1)
    ):
        assert fact in _page(page), (page, fact)


@pytest.mark.parametrize("index", range(len(_example_blocks())))
def test_readme_and_docs_python_blocks_run(index):
    # Issue 13.11: every README and documentation python block runs as written, in a fresh
    # interpreter (as a user would: no test-suite float64 or promotion settings).
    code = _example_blocks()[index]
    python(code, timeout=600)


PUBLIC_MODULES = ("jaxtests", "jaxtests.models", "jaxtests.losses", "jaxtests.measures")
PUBLIC_MODULES += ("jaxtests.study", "jaxtests.plot", "jaxtests.datasets", "jaxtests.power")


def _public_callables():
    seen = {}
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) and id(obj) not in seen:
                seen[id(obj)] = (f"{modname}.{name}", obj)
    cv = jaxtests.CVResult
    for name, obj in vars(cv).items():
        if (
            inspect.isfunction(obj)
            and not name.startswith("_")
            and name not in ("to_dict", "to_json")
        ):
            seen[id(obj)] = (f"CVResult.{name}", obj)
    return sorted(seen.values(), key=lambda kv: kv[0])


@pytest.mark.parametrize(
    "name, obj", _public_callables(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_public_functions_have_examples(name, obj):
    # Issue 17: every public function and CVResult method shows how it is called.
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc and ">>> " in doc, f"{name}: no Examples section"
