"""Compiled programs kept on disk: a later process neither traces, lowers nor compiles them.

JAX's persistent cache (:mod:`jaxtests._cache`) stores compiled executables,
but each process still traces and lowers every program to find its key:
about 0.02-0.1 s per program, and a first lowering of an exported call
imports ``scipy.linalg`` (0.1 s). When jaxtests owns the cache, :func:`call`
keeps each program's executable (``jax.experimental.serialize_executable``:
one per function, static arguments and input shapes, on this backend and
machine) beside it, and a later process loads it and calls it. Same program,
same results. Anything unusual (traced inputs, user callables in the static
arguments, several devices, a file that does not load) takes the plain jit path.
"""

import contextlib
import functools
import hashlib
import os
import pickle
import platform
import tempfile

import jax
import numpy as np

from jaxtests import kernels as jax_kernels
from jaxtests._buckets import PROGRAM_LOADED, CompileCounter

__all__ = ["call"]

_FORMAT = 2  # bump when the key or the file layout changes
LOADED = PROGRAM_LOADED  # a jax.monitoring event per program loaded from disk
_programs = {}  # key -> jax.stages.Compiled, or None (plain path)


def _folder():
    from jaxtests import _cache

    return _cache.programs_dir()


@functools.cache
def _code_digest():
    """Digest of jaxtests' own source (kernels included): a new version never reuses a program."""
    root = os.path.dirname(os.path.abspath(__file__))
    kernels = os.path.dirname(os.path.abspath(jax_kernels.__file__))
    h = hashlib.sha256()
    for folder in sorted({root, kernels}):
        for dirpath, dirnames, filenames in sorted(os.walk(folder)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".py"):
                    with open(os.path.join(dirpath, name), "rb") as f:
                        h.update(name.encode() + f.read())
    return h.hexdigest()


def _aval(x):
    if isinstance(x, jax.core.Tracer):
        raise TypeError("traced")
    dtype = getattr(x, "dtype", None)
    if dtype is None:  # Python scalars would be weakly typed: keep them out
        raise TypeError("python scalar")
    weak = bool(getattr(x, "weak_type", False))
    return (tuple(np.shape(x)), str(dtype), weak)


@functools.cache
def _machine():
    """What an executable is built for: backend, device kind and (on CPU) the CPU's features.

    A cache folder shared by machines (a network home) must not hand one CPU's
    object code to another.
    """
    device = jax.devices()[0]
    cpu = ""
    if device.platform == "cpu":
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((line for line in f if line.startswith(("flags", "Features"))), "")
        except OSError:
            cpu = ""
        cpu += platform.machine() + platform.processor()
    return (jax.default_backend(), device.device_kind, device.client.platform_version, cpu)


def _key(name, args, static, compiler_options):
    leaves, tree = jax.tree_util.tree_flatten(args)
    text = repr(
        (
            _FORMAT,
            _code_digest(),
            name,
            jax.__version__,
            _machine(),
            str(jax.config.jax_default_device),
            bool(jax.config.jax_enable_x64),
            sorted(static.items()),
            sorted((compiler_options or {}).items()),
            str(tree),
            [_aval(x) for x in leaves],
        )
    )
    # A function or object without a stable repr (a user statistic), or an elided one.
    if " at 0x" in text or "..." in text:
        raise TypeError("unstable static argument")
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _fresh_compile(fn, args, static):
    """``fn`` compiled by XLA now, never loaded from JAX's cache, and whether it was.

    An executable JAX loaded from its persistent cache serializes without its
    kernels (jax 0.10: the reloaded copy fails with "Function ... not found"),
    so only a fresh compilation may be written; JAX's cache is set aside for
    this one compilation (a scoped setting), and a hit seen anyway is reported.
    """
    lowered = fn.lower(*args, **static)
    try:
        from jax._src import compilation_cache
        from jax._src import config as jax_config

        # JAX decides once per process whether its cache is used, at the first compilation:
        # decided here first, so the scope below never turns it off for the user's programs.
        compilation_cache.is_cache_used(jax.devices()[0].client)
        scope = jax_config.enable_compilation_cache(False)
    except Exception:  # another jax: compile as usual, the hit count decides
        scope = contextlib.nullcontext()
    with scope, CompileCounter() as seen:
        compiled = lowered.compile()
    return compiled, seen.hits == 0


def _load_or_compile(path, fn, args, static):
    """``(program, loaded)``: the stored executable, or a fresh one (stored when it can be)."""
    from jax.experimental import serialize_executable as se

    if os.path.exists(path):
        try:
            with open(path, "rb") as f:
                payload, in_tree, out_tree = pickle.load(f)
            program = se.deserialize_and_load(payload, in_tree, out_tree)
            jax.monitoring.record_event(LOADED)  # counted by `jaxtests warmup` and the bench
            return program, True
        except Exception:  # a file from another version, or a partial one: rebuild it
            pass
    compiled, fresh = _fresh_compile(fn, args, static)
    if fresh:
        try:
            blob = pickle.dumps(se.serialize(compiled), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an executable XLA cannot serialize: used, not stored
            return compiled, False
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)  # atomic: concurrent processes never read half a file
    return compiled, False


def call(fn, name, args, static=None, compiler_options=None):
    """``fn(*args, **static)`` for a jitted ``fn``, through a compiled program kept on disk.

    ``name`` identifies ``fn`` across processes; ``static`` holds its static
    arguments (hashable, with a stable ``repr``); ``compiler_options`` those
    ``fn`` was jitted with (part of the key).
    """
    static = static or {}
    folder = _folder()
    if folder is None or jax.device_count() != 1:  # several devices or processes: plain jit
        return fn(*args, **static)
    try:
        key = _key(name, args, static, compiler_options)
    except TypeError:
        return fn(*args, **static)
    program = _programs.get(key, False)
    if program is False:
        path = os.path.join(folder, f"{key}.jaxexec")
        try:
            os.makedirs(folder, exist_ok=True)
            program, loaded = _load_or_compile(path, fn, args, static)
        except Exception:  # any failure of the stored path: the plain program serves
            program, loaded = None, False
        if loaded:
            # A loaded executable's first run is waited for here, where a failure (a file
            # this jax or machine cannot run) still falls back, not later in the caller.
            try:
                out = jax.block_until_ready(program(*args))
            except Exception:
                program = None
                with contextlib.suppress(OSError):
                    os.remove(path)
            else:
                _programs[key] = program
                return out
        _programs[key] = program
    if program is None:
        return fn(*args, **static)
    try:
        return program(*args)
    except Exception:  # e.g. inputs the stored program does not take: the plain path decides
        _programs[key] = None
        return fn(*args, **static)
