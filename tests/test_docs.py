"""Docstring examples run, and every public function documents its parameters."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

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
