"""The persistent compilation cache: on by default, moved or turned off by the environment.

``ensure`` runs once per process, so each case runs in a fresh interpreter with its
environment set explicitly (``XDG_CACHE_HOME`` always points into ``tmp_path``: nothing is
written to the real ``~/.cache``).
"""

import os

import pytest
from _helpers import python_json

from jaxtests import _cache

_SCRIPT = """
import json
import jax
import jax.monitoring

counts = {"hits": 0, "requests": 0, "compiles": 0}


def listen(event, **kwargs):
    if event == "/jax/compilation_cache/cache_hits":
        counts["hits"] += 1
    elif event == "/jax/compilation_cache/compile_requests_use_cache":
        counts["requests"] += 1


def duration(event, seconds, **kwargs):
    # JAX reports a load from its cache as a backend compile too
    if event == "/jax/core/compile/backend_compile_duration":
        counts["compiles"] += 1


jax.monitoring.register_event_listener(listen)
jax.monitoring.register_event_duration_secs_listener(duration)
PRELUDE
import numpy as np
import jaxtests

at_import = jax.config.jax_compilation_cache_dir
# a Monte Carlo sign-flip test (programs kept by jaxtests._aot) and a paired t under the
# user's jit (plain jit: the Bayesian signed-rank sampler runs in numpy now)
jaxtests.signflip_test(np.linspace(-1, 2, 40), n_resamples=99, key=0)
x = np.arange(12.0)
jax.jit(jaxtests.ttest_paired)(np.sin(x), np.cos(x))
print(json.dumps(dict(
    counts,
    at_import=at_import,
    folder=jax.config.jax_compilation_cache_dir,
    min_time=jax.config.jax_persistent_cache_min_compile_time_secs,
)))
"""

_OWN = ("JAXTESTS_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE")


def _run(tmp_path, prelude="", **env):
    """Run the script in a fresh interpreter; its last stdout line as a dict."""
    env = {"JAX_PLATFORMS": "cpu", "XDG_CACHE_HOME": tmp_path / "xdg", **env}
    return python_json(_SCRIPT.replace("PRELUDE", prelude), env=env, drop=_OWN)


def _entries(folder):
    return [f for f in os.listdir(folder) if f.endswith(".jaxentry")]


def _programs(folder):
    return [f for f in os.listdir(f"{folder}-programs") if f.endswith(".jaxexec")]


def test_default_folder_and_second_process_hits(tmp_path):
    folder = tmp_path / "xdg" / "jaxtests" / "jax"
    first = _run(tmp_path)
    assert first["at_import"] is None  # import alone changes no JAX setting
    assert first["folder"] == str(folder)
    assert first["min_time"] == _cache.MIN_COMPILE_TIME_SECS
    assert first["requests"] > 0 and first["compiles"] > first["hits"]
    assert len(_entries(folder)) > 0  # JAX's cache: the plain jitted programs
    assert len(_programs(folder)) > 0  # jaxtests' own: the engine's executables
    # A second process compiles nothing the first compiled: JAX's cache answers every
    # request, and the engine's programs are loaded without asking it.
    second = _run(tmp_path)
    assert second["hits"] == second["requests"] > 0
    assert second["compiles"] == second["hits"]


def test_environment_moves_it(tmp_path):
    other = tmp_path / "other"
    out = _run(tmp_path, JAXTESTS_CACHE_DIR=str(other))
    assert out["folder"] == str(other)
    assert len(_entries(other)) > 0
    assert len(_programs(other)) > 0
    assert not (tmp_path / "xdg").exists()


@pytest.mark.parametrize(
    ("prelude", "env"),
    [
        ("", {"JAXTESTS_CACHE_DIR": ""}),
        ("", {"JAXTESTS_CACHE_DIR": "Off"}),
        ("", {"JAX_ENABLE_COMPILATION_CACHE": "false"}),
        ("", {"JAX_COMPILATION_CACHE_DIR": "USER"}),
        ("jax.config.update('jax_compilation_cache_dir', 'USER')", {}),
    ],
    ids=["empty", "off", "jax-disabled", "jax-env", "jax-config"],
)
def test_off_or_the_users_setting_wins(tmp_path, prelude, env):
    user = str(tmp_path / "user")
    env = {k: v.replace("USER", user) for k, v in env.items()}
    out = _run(tmp_path, prelude.replace("USER", user), **env)
    assert not (tmp_path / "xdg").exists()
    user_set = "USER" in prelude or "JAX_COMPILATION_CACHE_DIR" in env
    assert out["folder"] == (user if user_set else None)
    assert out["min_time"] == 1.0  # JAX's default, untouched when jaxtests does not own it


def test_unwritable_folder_is_skipped_silently(tmp_path, monkeypatch):
    # In this process: ensure() must return before touching any JAX setting.
    import jax

    blocker = tmp_path / "file"
    blocker.write_text("")
    before = jax.config.jax_compilation_cache_dir
    monkeypatch.setenv("JAXTESTS_CACHE_DIR", str(blocker / "jax"))
    monkeypatch.setattr(_cache, "_done", False)
    enabled = jax.config.jax_enable_compilation_cache  # off in the suite's processes (conftest)
    jax.config.update("jax_enable_compilation_cache", True)  # as in a user's process
    try:
        assert _cache.ensure() is None
    finally:
        jax.config.update("jax_enable_compilation_cache", enabled)
    assert jax.config.jax_compilation_cache_dir == before


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "HOME/.cache/jaxtests/jax"),
        ({"XDG_CACHE_HOME": "/xdg"}, "/xdg/jaxtests/jax"),
        ({"XDG_CACHE_HOME": "relative"}, "HOME/.cache/jaxtests/jax"),  # XDG: ignore relative
        ({"JAXTESTS_CACHE_DIR": "~/c"}, "HOME/c"),
        ({"JAXTESTS_CACHE_DIR": " NONE "}, None),
        ({"JAXTESTS_CACHE_DIR": "False"}, None),
        ({"JAXTESTS_CACHE_DIR": "0"}, None),
    ],
)
def test_cache_dir(tmp_path, monkeypatch, env, expected):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_CACHE_HOME", "JAXTESTS_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if expected is not None:
        expected = expected.replace("HOME", str(tmp_path))
    assert _cache.cache_dir() == expected
