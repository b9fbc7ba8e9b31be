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
    "collections",
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
def test_pip_install_regular(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    assert (target / "jaxtests" / "kernels" / "losses.py").exists()
    assert not (target / "kernels").exists()
    import os

    env = dict(os.environ, PYTHONPATH=str(target), PYTHONNOUSERSITE="1")
    _check_outside(sys.executable, env=env, prefix=target)


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
