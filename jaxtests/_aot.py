"""Traced programs kept on disk: a later process skips tracing and lowering too.

JAX's persistent cache (:mod:`jaxtests._cache`) stores compiled executables,
but each process still traces and lowers every program before it can look
one up: about 0.1-0.4 s per program, most of a warm first call. When
jaxtests owns the cache, :func:`call` keeps a :func:`jax.export` serialization
of each program (one per function, static arguments and input shapes) beside
it, and a later process deserializes it (about 1 ms) and calls it; the
executable then comes from the persistent cache. Same StableHLO, same
results. Anything unusual (traced inputs, user callables in the static
arguments, several devices, a serialization error) takes the plain path.
"""

import functools
import hashlib
import os
import tempfile

import jax
import numpy as np

from jaxtests import kernels as jax_kernels

__all__ = ["call"]

_FORMAT = 1  # bump when the key or the file layout changes
_programs = {}  # key -> jitted Exported.call, or None (plain path)


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


def _key(name, args, static, compiler_options):
    leaves, tree = jax.tree_util.tree_flatten(args)
    text = repr(
        (
            _FORMAT,
            _code_digest(),
            name,
            jax.__version__,
            jax.default_backend(),
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


def _load_or_export(path, fn, args, static, compiler_options):
    from jax import export

    exported = None
    if os.path.exists(path):
        try:
            with open(path, "rb") as f:
                exported = export.deserialize(bytearray(f.read()))
        except Exception:  # a file from another version, or a partial one: rebuild it
            exported = None
    if exported is None:
        exported = export.export(fn)(*args, **static)
        blob = exported.serialize()
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)  # atomic: concurrent processes never read half a file
    return jax.jit(exported.call, compiler_options=compiler_options)


def call(fn, name, args, static=None, compiler_options=None):
    """``fn(*args, **static)`` for a jitted ``fn``, through an exported program when possible.

    ``name`` identifies ``fn`` across processes; ``static`` holds its static
    arguments (hashable, with a stable ``repr``); ``compiler_options`` those
    ``fn`` was jitted with.
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
        try:
            os.makedirs(folder, exist_ok=True)
            program = _load_or_export(
                os.path.join(folder, f"{key}.jaxexport"), fn, args, static, compiler_options
            )
        except Exception:  # any failure of the export path: the plain program serves
            program = None
        _programs[key] = program
    if program is None:
        return fn(*args, **static)
    try:
        return program(*args)
    except Exception:  # e.g. a device the export was not lowered for: the plain path decides
        _programs[key] = None
        return fn(*args, **static)
