"""The compiled-program cache runs native code from disk, so it trusts only what the user alone
can write: untrusted folders are refused with one warning, changed files are recompiled, and the
answers never depend on what the folder holds.

Each end-to-end case is one fresh interpreter running a small Monte Carlo sign-flip test, a
paired t test and a two-sample permutation test (all through stored programs) against the
answers of this process, where the cache is off (conftest). Ownership cases need root
(``chown``); the read-only folder drops root's override of file permissions with ``setpriv``.
"""

import inspect
import os
import shutil
import stat
import textwrap
import warnings

import jax
import numpy as np
import pytest
from _helpers import python_json

import jaxtests
from jaxtests import _aot, _cache

ROOT = os.geteuid() == 0
NOBODY = 65534

SCRIPT = textwrap.dedent(
    """
    import json, os, warnings
    import jax
    import numpy as np
    import jaxtests

    loaded = []
    jax.monitoring.register_event_listener(
        lambda event, **kw: loaded.append(event) if event == "/jaxtests/programs/loaded" else None
    )
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = _answers()
    print(json.dumps({
        "out": out,
        "loaded": len(loaded),
        "warnings": [str(w.message) for w in seen],
        "folder": jax.config.jax_compilation_cache_dir,
    }))
    """
)


def _answers():
    d = np.sin(np.arange(1.0, 201.0)) + 0.1
    r = jaxtests.signflip_test(d, n_resamples=999, key=3)
    t = jaxtests.ttest_paired(d, np.zeros(200))
    p = jaxtests.permutation_test(d[:50], d[50:], n_resamples=999, key=4)
    h = jaxtests.signflip_test(np.stack([d, d - 0.2]), n_resamples=999, key=5)  # 2 hypotheses
    return [float(r.pvalue), float(r.statistic), float(t.pvalue), float(p.pvalue)] + [
        float(x) for x in h.pvalue
    ]


ANSWERS = inspect.getsource(_answers)  # the same function in the child


def _run(tmp_path, cache, prefix=(), prelude="", env=()):
    base = {
        "JAX_PLATFORMS": "cpu",
        "JAXTESTS_CACHE_DIR": cache,
        "XDG_CONFIG_HOME": tmp_path / "config",
        "XDG_CACHE_HOME": tmp_path / "xdg",
        **dict(env),
    }
    code = prelude + ANSWERS + SCRIPT
    return python_json(code, env=base, drop=("JAX_COMPILATION_CACHE_DIR",), prefix=prefix)


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache filled by one process (the user's key beside it), and that process' output."""
    tmp = tmp_path_factory.mktemp("filled")
    out = _run(tmp, tmp / "jax")
    return tmp, out


@pytest.fixture(scope="module")
def expected():
    return _answers()  # the cache is off in this process (conftest)


def _copy(filled, tmp_path):
    """A fresh copy of the filled cache and key (mode bits kept), in ``tmp_path``."""
    src, _ = filled
    for name in ("jax", "jax-programs", "config"):
        if (src / name).exists():
            shutil.copytree(src / name, tmp_path / name, symlinks=True)
    return tmp_path / "jax"


def _programs(cache):
    folder = f"{cache}-programs"
    return sorted(os.path.join(folder, f) for f in os.listdir(folder))


def test_filled_cache_is_private_and_loads(filled, tmp_path, expected):
    src, first = filled
    assert first["out"] == expected and first["loaded"] == 0 and not first["warnings"]
    for path in (src / "jax", src / "jax-programs", src / "config" / "jaxtests"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700, path
    key = src / "config" / "jaxtests" / "cache-key"
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    files = _programs(src / "jax")
    assert files and all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in files)
    second = _run(tmp_path, _copy(filled, tmp_path))
    assert second["out"] == expected
    assert second["loaded"] == len(files)  # every stored program, none recompiled


def test_changed_swapped_planted_and_fifo_files_are_never_loaded(filled, tmp_path, expected):
    cache = _copy(filled, tmp_path)
    files = _programs(cache)
    assert len(files) == 6  # per sign-flip shape two programs, two two-sample ones
    marker = tmp_path / "planted-code-ran"
    # One flipped bit in the executable's bytes.
    blob = bytearray(open(files[0], "rb").read())
    blob[-100] ^= 1
    open(files[0], "wb").write(bytes(blob))
    # Two programs' files exchanged: each verifies only under its own name.
    os.rename(files[1], str(tmp_path / "swap"))
    os.rename(files[2], files[1])
    os.rename(str(tmp_path / "swap"), files[2])
    # A pickle that runs code when loaded (the attack on the earlier format).
    import pickle

    class Plant:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    with open(files[3], "wb") as f:
        pickle.dump((Plant(), None, None), f)
    os.chmod(files[3], 0o600)
    # A FIFO under a program's name would block a reader forever.
    os.remove(files[4])
    os.mkfifo(files[4], 0o600)
    # A file cut short (a full disk, a killed writer).
    with open(files[5], "r+b") as f:
        f.truncate(100)
    out = _run(tmp_path, cache)
    assert out["out"] == expected
    assert not marker.exists()
    assert out["loaded"] == 0
    assert not out["warnings"]


def test_group_writable_folder_is_refused_with_one_warning(filled, tmp_path, expected):
    cache = _copy(filled, tmp_path)
    os.chmod(cache, 0o770)
    out = _run(tmp_path, cache)
    assert out["out"] == expected
    assert out["loaded"] == 0 and out["folder"] is None
    assert len(out["warnings"]) == 1
    assert str(cache) in out["warnings"][0] and "writable by group or others" in out["warnings"][0]


@pytest.mark.parametrize("mode", [0o707, 0o722, 0o1777])
def test_folders_others_can_write_are_untrusted(tmp_path, mode):
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    assert _cache.untrusted(str(folder), entries=True) is None
    os.chmod(folder, mode)  # sticky does not help inside the cache itself
    assert "writable by group or others" in _cache.untrusted(str(folder))


@pytest.mark.skipif(not ROOT, reason="giving a folder to another user needs root")
@pytest.mark.parametrize("how", ["owner", "symlink", "entry"])
def test_folder_of_another_user_is_refused(tmp_path, how):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    (theirs / "planted-cache").write_bytes(b"x")
    if how == "entry":  # our folder, holding a file that someone else put there
        os.chown(theirs / "planted-cache", NOBODY, NOBODY)
        cache = theirs
    else:
        os.chown(theirs, NOBODY, NOBODY)
        cache = theirs
        if how == "symlink":
            cache = tmp_path / "link"
            cache.symlink_to(theirs)
    why = _cache.untrusted(str(cache), entries=True)
    assert why is not None and ("user id 65534" in why), why
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert _ensure_with(cache) is None
    assert len(seen) == 1 and str(cache) in str(seen[0].message)


def _ensure_with(cache):
    """``_cache.ensure()`` as a fresh process would run it, leaving this process' JAX setting."""
    before = jax.config.jax_compilation_cache_dir
    saved = os.environ.get("JAXTESTS_CACHE_DIR")
    enabled = jax.config.jax_enable_compilation_cache  # off in the suite's processes (conftest)
    done, _cache._done = _cache._done, False
    os.environ["JAXTESTS_CACHE_DIR"] = str(cache)
    jax.config.update("jax_enable_compilation_cache", True)
    try:
        return _cache.ensure()
    finally:
        jax.config.update("jax_enable_compilation_cache", enabled)
        _cache._done = done
        os.environ["JAXTESTS_CACHE_DIR"] = saved if saved is not None else ""
        assert jax.config.jax_compilation_cache_dir == before


def test_parent_writable_by_others_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # not sticky: anyone may rename the cache away and plant another
    (shared / "jax").mkdir(mode=0o700)
    assert "not sticky" in _cache.untrusted(str(shared / "jax"))
    os.chmod(shared, 0o1777)  # /tmp's mode: fine
    assert _cache.untrusted(str(shared / "jax")) is None


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o757])
def test_every_folder_above_is_checked(tmp_path, mode):
    # Issue 43.1: a shared project folder two levels up let another user swap the cache.
    shared = tmp_path / "project"
    (shared / "me" / "cache" / "jax").mkdir(parents=True)
    for folder in (shared / "me", shared / "me" / "cache", shared / "me" / "cache" / "jax"):
        os.chmod(folder, 0o700)
    cache = str(shared / "me" / "cache" / "jax")
    assert _cache.untrusted(cache) is None
    os.chmod(shared, mode)
    why = _cache.untrusted(cache)
    assert why == (
        f"the folder {shared} above it is writable by group or others and not sticky "
        f"(mode {mode:04o})"
    )
    link = tmp_path / "link"  # reached through a link: the folders above its target count
    link.symlink_to(cache)
    assert _cache.untrusted(str(link)) == why
    os.chmod(shared, 0o1000 | mode)
    assert _cache.untrusted(cache) is None


def test_unusable_key_file_warns_once_and_caches_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert _cache.user_key() is not None
    key = tmp_path / "cfg" / "jaxtests" / "cache-key"
    os.chmod(key, 0o644)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert _ensure_with(tmp_path / "jax") is None
    assert len(seen) == 1, [str(w.message) for w in seen]
    message = str(seen[0].message)
    assert f"its key file {key} cannot be used (others may read it (mode 0644))" in message
    assert f"rm {key}" in message


def test_read_only_folder_computes_uncached(filled, tmp_path, expected):
    cache = _copy(filled, tmp_path)
    for path in (cache, f"{cache}-programs"):
        os.chmod(path, 0o500)
    prefix = ()
    if ROOT:  # root writes anywhere: drop that override for the child
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv is needed to run a child of root without file-permission override")
        prefix = ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")
    before = _programs(cache)
    out = _run(tmp_path, cache, prefix=prefix)
    assert out["out"] == expected and out["loaded"] == 0 and out["folder"] is None
    assert _programs(cache) == before


def test_full_disk_leaves_no_temporary_files(tmp_path, expected):
    cache = tmp_path / "jax"
    # Every write beyond 64 KiB fails (EFBIG: Python ignores SIGXFSZ), as on a full disk.
    small_files = "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))\n"
    out = _run(tmp_path, cache, prelude=small_files)
    assert out["out"] == expected
    leftovers = [f for f in os.listdir(f"{cache}-programs") if not f.endswith(".jaxexec")]
    assert leftovers == []
    for f in _programs(cache):  # only whole files: a partial one never lands
        assert os.path.getsize(f) <= 1 << 16


def test_every_program_is_stored_again_after_its_file_goes(tmp_path, expected):
    # A plain jitted program first (a paired t under the user's jit: friedman's ranks, once,
    # now run in numpy) opens JAX's cache before the engine's programs compile; they went
    # into JAX's cache too, and with their files gone only those JAX did not hold were
    # stored again (issue 43.5: 2 of 7).
    prelude = (
        "import jax, numpy, jaxtests\n"
        "jax.jit(jaxtests.ttest_paired)(numpy.arange(5.0), numpy.arange(5.0) ** 0.5)\n"
    )
    cache = tmp_path / "jax"
    first = _run(tmp_path, cache, prelude=prelude)
    stored = _programs(cache)
    assert first["out"] == expected and len(stored) == 6
    for path in stored:
        os.remove(path)
    again = _run(tmp_path, cache, prelude=prelude)
    assert again["out"] == expected
    assert _programs(cache) == stored


# -- in-process: the pieces


def test_key_follows_jax_settings_and_the_variables_xla_started_with(monkeypatch):
    args = (np.zeros(3),)
    base = _aot._key("f", args, {}, None)
    with jax.threefry_partitionable(not jax.config.jax_threefry_partitionable):
        assert _aot._key("f", args, {}, None) != base
    with jax.default_matmul_precision("highest"):
        assert _aot._key("f", args, {}, None) != base
    # XLA read XLA_FLAGS when the backend started: a later value compiles nothing differently,
    # so it must not name the program (issue 43.3: it stored one under the wrong key).
    flags = "--xla_cpu_max_isa=SSE4_2"
    monkeypatch.setenv("XLA_FLAGS", flags)
    assert _aot._key("f", args, {}, None) == base
    entry = _cache._entry_name("jit_f-0", _cache.backend_env())
    # A backend started with them: another program, and another name for JAX's entries.
    started = tuple(sorted({**dict(_cache.backend_env()), "XLA_FLAGS": flags}.items()))
    monkeypatch.setattr(_cache, "_start_env", started)
    assert _aot._key("f", args, {}, None) != base
    assert _cache._entry_name("jit_f-0", _cache.backend_env()) != entry


def test_a_file_verifies_only_with_its_key_name_and_bytes():
    secret, other = b"s" * 32, b"t" * 32
    blob = _aot._pack(secret, "k1", {"a": 1}, b"payload")
    assert _aot._unpack(secret, "k1", blob) == ({"a": 1}, b"payload")
    assert _aot._unpack(other, "k1", blob) is None  # another user's key
    assert _aot._unpack(secret, "k2", blob) is None  # moved to another program's name
    for i in range(len(blob)):  # any one flipped bit, header and length included
        bad = bytearray(blob)
        bad[i] ^= 0x10
        assert _aot._unpack(secret, "k1", bytes(bad)) is None
    assert _aot._unpack(secret, "k1", blob[:-1]) is None


def test_only_private_regular_files_are_read(tmp_path):
    good = tmp_path / "good"
    good.write_bytes(b"x")
    os.chmod(good, 0o600)
    assert _aot._read(str(good)) == b"x"
    os.chmod(good, 0o620)
    assert _aot._read(str(good)) is None
    os.chmod(good, 0o600)
    link = tmp_path / "link"
    link.symlink_to(good)
    assert _aot._read(str(link)) is None
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    assert _aot._read(str(fifo)) is None  # returns at once
    if ROOT:
        os.chown(good, NOBODY, NOBODY)
        assert _aot._read(str(good)) is None


def test_user_key_is_private_and_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    key = _cache.user_key()
    assert key is not None and len(key) == 32
    assert _cache.user_key() == key
    path = tmp_path / "cfg" / "jaxtests" / "cache-key"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o644)  # a secret others can read is no secret
    assert _cache.user_key() is None
    os.chmod(path, 0o600)
    os.chmod(path.parent, 0o770)
    assert _cache.user_key() is None


def test_writes_leave_nothing_behind_on_failure(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        _aot._write(str(tmp_path / "p.jaxexec"), b"data")
    assert os.listdir(tmp_path) == []
