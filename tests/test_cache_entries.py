"""JAX's own cache entries, kept by jaxtests: read through the folder checked at the first call
(a folder swapped in later is never read), verified by the user's keyed hash (an entry moved to
another program's name is a miss, compiled anew and replaced) and opened only as regular files
(a FIFO never blocks).

One filling process compiles two jitted functions of the same signature, f(x) = x + 1 and
g(x) = x * 100; each case plants g's entry under f's name (the look-alike executable of
issue 43) and checks that f(1) is still 2. The risky runs have a timeout, so a reader that
blocks fails the test instead of hanging the suite.
"""

import json
import os
import shutil
import textwrap

import pytest
from _helpers import python

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import jax
    import numpy as np
    import jaxtests

    hits = []
    jax.monitoring.register_event_listener(
        lambda e, **k: hits.append(e) if e == "/jax/compilation_cache/cache_hits" else None
    )
    mode, folder = sys.argv[1], sys.argv[2]
    jaxtests.ttest_paired(np.array([1.0, 2.0, 4.0]), np.zeros(3))  # checks the folder
    f = jax.jit(lambda x: x + 1.0)
    g = jax.jit(lambda x: x * 100.0)
    out = {}
    before = set(os.listdir(folder))
    if mode == "race":  # another user swaps the folder between the check and the read
        os.rename(folder, folder + "-victim")
        os.rename(sys.argv[3], folder)
    n = len(hits)
    out["f"] = float(f(np.float32(1.0)))
    out["f_hit"] = len(hits) - n
    if mode == "fill":
        middle = set(os.listdir(folder))
        g(np.float32(1.0)).block_until_ready()
        out["f_files"] = sorted(middle - before)
        out["g_files"] = sorted(set(os.listdir(folder)) - middle)
    print(json.dumps(out))
    """
)


def _run(config, cache, mode, *extra, timeout=120):
    env = {"JAX_PLATFORMS": "cpu", "JAXTESTS_CACHE_DIR": cache, "XDG_CONFIG_HOME": config}
    drop = ("JAX_COMPILATION_CACHE_DIR",)
    proc = python(SCRIPT, mode, cache, *extra, env=env, drop=drop, timeout=timeout)
    assert "persistent compilation cache" not in proc.stderr  # JAX's read/write warnings
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A JAX cache holding f's and g's entries, the key beside it, and their file names.

    JAX's key holds the cache's path (an XLA option names a folder in it), so every case
    runs at the same path, on a fresh copy of what the filling process left (:func:`_fresh`).
    """
    tmp = tmp_path_factory.mktemp("entries")
    out = _run(tmp / "config", tmp / "jax", "fill")
    assert out["f"] == 2.0 and out["f_hit"] == 0
    assert len(out["f_files"]) == len(out["g_files"]) == 1, out
    shutil.copytree(tmp / "jax", tmp / "pristine")
    return tmp, out["f_files"][0], out["g_files"][0]


def _fresh(filled, planted=False):
    """The cache as filled; with ``planted``, g's executable under f's name."""
    tmp, f_name, g_name = filled
    for name in ("jax", "jax-victim"):
        shutil.rmtree(tmp / name, ignore_errors=True)
    shutil.copytree(tmp / "pristine", tmp / "jax")
    if planted:
        shutil.copyfile(tmp / "jax" / g_name, tmp / "jax" / f_name)
    return tmp / "jax"


def test_a_folder_swapped_after_the_check_is_never_read(filled):
    tmp = filled[0]
    shutil.rmtree(tmp / "planted", ignore_errors=True)
    os.rename(_fresh(filled, planted=True), tmp / "planted")
    victim = _fresh(filled)
    out = _run(tmp / "config", victim, "race", tmp / "planted")
    # Read through the descriptor of the folder checked: the user's own entry for f.
    assert out["f"] == 2.0  # the planted executable gave 100.0 (issue 43.1)
    assert out["f_hit"] == 1


def test_an_entry_under_another_programs_name_is_a_miss_once(filled):
    tmp, f_name, _ = filled
    cache = _fresh(filled, planted=True)
    planted = (cache / f_name).read_bytes()
    first = _run(tmp / "config", cache, "run")
    assert first["f"] == 2.0 and first["f_hit"] == 0  # compiled anew, never loaded
    assert (cache / f_name).read_bytes() != planted  # and replaced by f's own
    second = _run(tmp / "config", cache, "run")
    assert second["f"] == 2.0 and second["f_hit"] == 1


def test_a_fifo_in_the_folder_is_never_opened(filled):
    tmp, f_name, _ = filled
    cache = _fresh(filled)
    os.remove(cache / f_name)
    os.mkfifo(cache / f_name, 0o600)
    out = _run(tmp / "config", cache, "run", timeout=120)  # a blocked reader times out
    assert out["f"] == 2.0 and out["f_hit"] == 0
    assert (cache / f_name).is_file()  # the FIFO was replaced by f's entry
