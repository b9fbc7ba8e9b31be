"""Layout rules of the customer's card, installation, and scoped float64."""

import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ALLOWED_KERNEL_IMPORTS = {
    "jax",
    "numpy",
    "typing",
    "functools",
    "math",
    "dataclasses",
    "abc",  # abstract methods of the evaluator and family protocols
    "collections",
    "enum",  # the typed start of a Monte Carlo split (resampling.SubsetStart)
    "jaxtests",
}


def _imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, 0
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, node.module or "", node.level


@pytest.mark.parametrize("path", sorted((ROOT / "kernels").glob("*.py")), ids=lambda p: p.name)
def test_kernels_import_only_jax_numpy_and_kernels(path):
    for lineno, module, level in _imports(path):
        top = module.split(".")[0]
        where = f"{path.name}:{lineno} imports {module!r}"
        if level:  # relative import stays inside kernels/
            continue
        assert top in ALLOWED_KERNEL_IMPORTS, where
        if top == "jaxtests":
            assert module.startswith("jaxtests.kernels"), f"{where}: kernels never import the API"


def _python_files():
    for sub in ("jaxtests", "kernels", "tests", "bench"):
        yield from sorted((ROOT / sub).rglob("*.py"))


def test_no_top_level_kernels_import():
    for path in _python_files():
        for lineno, module, level in _imports(path):
            assert level or module.split(".")[0] != "kernels", (
                f"{path.relative_to(ROOT)}:{lineno} imports top-level `kernels` (a PyPI package "
                "owns that name); use `jaxtests.kernels`"
            )


def test_api_imports_kernels_as_subpackage():
    from jaxtests.kernels import losses as klosses

    assert pathlib.Path(klosses.__file__).parent.name == "kernels"


def test_import_does_not_enable_x64_globally():
    code = textwrap.dedent(
        """
        import jax, jaxtests
        assert not jax.config.jax_enable_x64
        out = jaxtests.losses.hinge([1, -1], [0.5, 0.25])
        assert out.dtype == "float64", out.dtype
        assert not jax.config.jax_enable_x64
        import jax.numpy as jnp
        assert jnp.ones(2).dtype == "float32"
        print("ok")
        """
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def _check_outside(python, env=None, prefix=None):
    code = (
        "import jaxtests, pathlib; from jaxtests.kernels import losses as klosses; "
        "import importlib.util as u; "
        "s = u.find_spec('kernels'); "
        "assert s is None or 'jaxtests' not in str(s.origin); "
        "print(pathlib.Path(klosses.__file__).parent.name, jaxtests.__file__)"
    )
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd="/", env=env)
    assert res.returncode == 0, res.stderr
    name, where = res.stdout.split()
    assert name == "kernels"
    if prefix is not None:
        assert where.startswith(str(prefix)), where


@pytest.mark.slow
def test_wheel_installs_every_module_and_runs_the_demo(tmp_path):
    # Issue 39.1: a wheel once lacked jaxtests/_plotting/ (a hand-written package list), so
    # `jaxtests demo` failed after every regular `pip install`. Build the wheel as pip does,
    # install it without -e into a fresh target, import every module pkgutil finds there,
    # and run the quick demo from it (the check of the demo's output lives here too: it is
    # what a pip user sees).
    import os
    import shutil

    # from a copy of the sources: setuptools would reuse a stale build/ in the checkout
    src, wheels, target = tmp_path / "src", tmp_path / "wheels", tmp_path / "site"
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("jaxtests", "kernels"):
        shutil.copytree(ROOT / name, src / name, ignore=junk)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", wheels, src]
    subprocess.run(build, check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = wheels.glob("jaxtests-*.whl")
    install = [*pip, "install", "--no-deps", "--no-build-isolation", "--target", target, wheel]
    subprocess.run(install, check=True, capture_output=True, cwd=tmp_path)
    assert (target / "jaxtests" / "kernels" / "losses.py").exists()
    assert not (target / "kernels").exists()
    env = dict(os.environ, PYTHONPATH=str(target), PYTHONNOUSERSITE="1", JAX_PLATFORMS="cpu")
    _check_outside(sys.executable, env=env, prefix=target)

    code = (
        "import importlib, pkgutil, jaxtests; "
        "names = [m.name for m in pkgutil.walk_packages(jaxtests.__path__, 'jaxtests.')]; "
        "[importlib.import_module(n) for n in names]; "
        "assert all(importlib.import_module(n).__file__.startswith(jaxtests.__path__[0]) "
        "for n in names); print(len(names), sorted(n for n in names if n.count('.') == 1))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env=env)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    count, packages = res.stdout.split(" ", 1)
    source = [p for p in (ROOT / "jaxtests").rglob("*.py") if "__pycache__" not in p.parts]
    kernels = list((ROOT / "kernels").glob("*.py"))
    assert int(count) == len(source) + len(kernels) - 1  # every module but jaxtests itself
    for sub in ("'jaxtests._plotting'", "'jaxtests._cli'", "'jaxtests.kernels'"):
        assert sub in packages

    out_dir = tmp_path / "demo"
    demo = [target / "bin" / "jaxtests", "demo", "--quick", "--quiet", "--out", out_dir]
    res = subprocess.run(demo, capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    assert sorted(p.suffix for p in out_dir.iterdir()).count(".png") >= 2
    out = res.stdout
    # issue 28.9: the demo lists the post hoc pairs that differ, not every adjusted p-value
    assert "p_adj = 1\n" not in out and ": p_adj = " not in out
    assert "post hoc t on error (Holm): " in out and " of 3 pairs differ at alpha = 0.05" in out
    assert "Ordering, best first (lower is better):" in out
    assert all(len(line) < 300 for line in out.splitlines())  # no paragraph-long lines


@pytest.mark.slow
def test_pip_install_editable(tmp_path):
    import site
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    # Borrow this environment's packages (jax, pip, setuptools) so no network is needed.
    purelib = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    pathlib.Path(purelib, "_borrowed.pth").write_text("\n".join(dict.fromkeys(ours)) + "\n")
    res = subprocess.run(
        [py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    _check_outside(py, prefix=ROOT)


PUBLIC_MODULES = [
    "jaxtests",
    "jaxtests.models",
    "jaxtests.losses",
    "jaxtests.measures",
    "jaxtests.study",
    "jaxtests.plot",
    "jaxtests.datasets",
    "jaxtests.power",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_module_exposes_exactly_all(name):
    # Public modules are re-export files: nothing but `__all__` is a public attribute
    # (no `jaxtests.models.jax`, `measures.as_float_array`, `datasets.os`). Submodules of
    # a package are set as attributes by the import system itself (`jaxtests.kernels`,
    # `jaxtests.plot` once imported), so they are exempt; other modules are not.
    import importlib
    import types

    module = importlib.import_module(name)
    # dir(), not vars(): the package imports most names at first use (its __dir__ lists them)
    public = {
        attr
        for attr, value in ((a, getattr(module, a)) for a in dir(module))
        if not attr.startswith("_")
        and not (
            isinstance(value, types.ModuleType)
            and value.__name__ == f"{name}.{attr}"
            and attr not in module.__all__
        )
    }
    assert public == set(module.__all__), (
        f"{name}: not in __all__: {sorted(public - set(module.__all__))}; "
        f"missing: {sorted(set(module.__all__) - public)}"
    )
    for attr in module.__all__:
        getattr(module, attr)  # every name in __all__ resolves


def test_public_submodules_are_attributes_after_import():
    # issue 28.8: `import jaxtests; jaxtests.plot.critical_difference(...)` as the README
    # writes it (AttributeError before); matplotlib still loads only to draw
    import subprocess
    import sys

    code = (
        "import sys, jaxtests; print('matplotlib' in sys.modules); "
        "print(callable(jaxtests.plot.critical_difference), 'matplotlib' in sys.modules); "
        "print(jaxtests.kernels.__name__, 'plot' in dir(jaxtests), 'plot' in jaxtests.__all__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "False", "jaxtests.kernels", "True", "True"]


def test_import_loads_no_scipy_plotting_or_data_sets():
    # issue 12: `import jaxtests` stays light; the rest is imported at first use.
    import subprocess
    import sys

    code = (
        "import sys, jaxtests; "
        "print(sorted(m for m in ('scipy', 'matplotlib', 'jaxtests.datasets', 'jaxtests._cv', "
        "'jaxtests.study', 'tqdm') if m in sys.modules)); "
        "jaxtests.datasets; print('jaxtests.datasets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "True"]
