"""Strict numerics for the whole suite: float64, no implicit rank or dtype promotion; plots
drawn with matplotlib's Agg backend (no display)."""

import gc
import os
import shutil
import sys
import tempfile

import jax
import matplotlib
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests/_helpers.py (importlib mode adds none)
matplotlib.use("Agg")  # before any test module imports pyplot

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")

# This process compiles as a first run does: no persistent compilation cache here (JAX's
# setting, which subprocesses do not inherit), so compile and trace counts stay exact.
# Subprocesses (the CLI, README and docs blocks, bench smoke runs) share one compilation cache for
# the session, in a private temporary folder that the controller of a pytest-xdist run
# creates and its workers inherit, with one signing key for the cache
# (jaxtests._cache.user_key, under XDG_CONFIG_HOME): a program compiled by one subprocess
# is loaded by the next. Tests of the cache itself set their own environment.
jax.config.update("jax_enable_compilation_cache", False)
if "JAXTESTS_TESTS_SESSION" not in os.environ:  # the controller; its workers inherit it
    os.environ["JAXTESTS_TESTS_SESSION"] = tempfile.mkdtemp(prefix="jaxtests-tests-")
_SESSION = os.environ["JAXTESTS_TESTS_SESSION"]
os.environ["JAXTESTS_CACHE_DIR"] = os.path.join(_SESSION, "cache", "jax")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_SESSION, "config")


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):  # the controller (or a run without workers)
        shutil.rmtree(_SESSION, ignore_errors=True)


@pytest.fixture
def optimized_programs():
    """Every program in its optimised tier (``jaxtests._aot``): a test that counts compiles
    sees no quick program promoted inside its window (promotion counts calls per process)."""
    from jaxtests import _aot

    with _aot.forced("optimized"):
        yield


def _collect_and_freeze():
    gc.collect()
    gc.freeze()  # the survivors leave every later collection


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    """Collect the garbage now and freeze what is left, so the session's end is quick.

    Under pytest-xdist a worker reports "finished" after this hook; then pytest's
    unraisable-exception plugin runs ``gc.collect()`` over the whole heap (every compiled
    JAX object of the worker's files), and if the worker has not exited 5 s after the
    controller's shutdown, execnet sends it a SIGINT (``WorkerGateway._terminate_execution``).
    On a loaded machine that SIGINT landed in hypothesis' gc callback: a green run ended
    with a ``KeyboardInterrupt`` traceback (``PytestUnraisableExceptionWarning``, issue
    28.10). Collected here, with pytest's hook still reporting anything unraisable, and
    frozen (``gc.freeze``), the later collections skip the surviving objects.
    """
    _collect_and_freeze()


@pytest.fixture
def key():
    """A fixed JAX key; tests that need independent streams split it."""
    return jax.random.key(20131218)


@pytest.fixture
def rng():
    """A fixed numpy Generator for reference data."""
    return np.random.default_rng(20131218)


def _statsmodels_mv_test(x):
    import pandas as pd
    from statsmodels.multivariate.manova import MANOVA

    n_groups, k, p = x.shape
    data = pd.DataFrame(x.reshape(n_groups * k, p), columns=[f"y{i}" for i in range(p)])
    data["g"] = pd.Categorical(np.repeat(np.arange(n_groups), k))
    formula = " + ".join(data.columns[:p]) + " ~ g"
    return MANOVA.from_formula(formula, data).mv_test().results["g"]["stat"]


@pytest.fixture
def statsmodels_mv_test():
    """statsmodels' one-way MANOVA table of ``x : (groups, k, p)`` (Wilks, Pillai, ... rows)."""
    return _statsmodels_mv_test


@pytest.fixture(scope="module", autouse=True)
def _freeze_survivors():
    """After each file: collect its garbage, then move what survives out of later collections.

    A worker's heap grows with every compiled program (gigabytes of JAX objects), and each
    full collection walks all of it: late in a run a numpy-only test spent most of its time
    in the collector. Frozen objects (``gc.freeze``) are never walked again.
    """
    yield
    _collect_and_freeze()
