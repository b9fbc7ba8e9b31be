"""Strict numerics for the whole suite: float64, no implicit rank or dtype promotion; plots
drawn with matplotlib's Agg backend (no display)."""

import gc
import os
import tempfile

import jax
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")  # before any test module imports pyplot

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
jax.config.update("jax_numpy_dtype_promotion", "strict")

# No persistent compilation cache for the suite (the CLI's subprocesses inherit this): tests
# never write into the user's ~/.cache, and every run compiles as a first run does.
# tests/test_cache.py sets its own environment for the cache.
os.environ["JAXTESTS_CACHE_DIR"] = ""
# Tests that turn the cache on keep its signing key (jaxtests._cache.user_key) out of ~/.config.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="jaxtests-tests-config-")


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
    gc.collect()
    gc.freeze()


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
