"""Compiled programs kept on disk: a later process neither traces, lowers nor compiles them.

JAX's persistent cache (:mod:`jaxtests._cache`) stores compiled executables,
but each process still traces and lowers every program to find its key:
about 0.02-0.1 s per program, and a first lowering of an exported call
imports ``scipy.linalg`` (0.1 s). When jaxtests owns the cache, :func:`call`
keeps each program's executable (one per function, static arguments, input
shapes, JAX settings and compiler variables, on this backend and machine) beside
it, and a later process loads it and calls it. Same program, same results.
Anything unusual (traced inputs, user callables in the static arguments,
several devices, a file that does not verify or load) takes the plain jit path.

Two tiers (CPU only): a program whose call does little work (``work``, elements times
draws, at most :data:`QUICK_WORK`) is first compiled with XLA:CPU's older emitters
(:data:`QUICK_OPTIONS`: it compiles in about half the time and runs 1.5-10x slower);
after :data:`PROMOTE_AFTER` such calls in one process, or when the optimised program is
already held or on disk, the optimised one serves. Both give the same bits (the tests
compare them on every path); ``JAXTESTS_COMPILE=quick`` or ``=optimized`` forces one.

A file holds the executable's bytes as XLA serializes them, a JSON header (the
output avals and tree, the kept inputs) and an HMAC-SHA256 over the program's key,
the header and the bytes, keyed by the user's secret (:func:`jaxtests._cache.user_key`).
Nothing is unpickled: the wrapper JAX runs the executable with is rebuilt from the
call's own arguments and the header, and a program is stored only where that
rebuild reproduces the compiled one exactly. A file that was changed, moved to
another program's name, truncated, or that belongs to someone else is never loaded.
"""

import contextlib
import functools
import hashlib
import hmac
import importlib
import json
import os
import platform

import jax
import numpy as np

import jaxtests.kernels as jax_kernels
from jaxtests._monitoring import PROGRAM_LOADED, CompileCounter

__all__ = [
    "COMPILE_ENV",
    "PROMOTE_AFTER",
    "QUICK_OPTIONS",
    "QUICK_WORK",
    "call",
    "forced",
    "loop_options",
    "mode",
    "one_call",
    "quick_or",
]

_FORMAT = 5  # bump when the key or the file layout changes
_MAGIC = b"jaxtests-program-4\n"
_MAX_BYTES = 1 << 30  # a program file larger than this is not ours
# Settings that say where programs are kept or how compiles are logged, not what they compute.
_NOT_PROGRAM = ("cache", "log", "pprint", "traceback")
LOADED = PROGRAM_LOADED  # a jax.monitoring event per program loaded from disk
_programs = {}  # key -> jax.stages.Compiled, or None (plain path)
_keys = {}  # a call's parts -> its key (:func:`_key`)
_MAX_KEYS = 4096

COMPILE_ENV = "JAXTESTS_COMPILE"
_MODES = ("auto", "optimized", "quick")
# XLA:CPU's loop emitters instead of its fusion emitters: the engine's programs compile in
# 0.5-0.6x the time (two-sample 200 + 200: 1.05 -> 0.66 s) and run 1.6x (that size, 10^4
# draws) to 5-10x (10^4 instances, 10^5 draws) slower; bench/RESULTS.md, twentieth session.
QUICK_OPTIONS = {"xla_cpu_use_fusion_emitters": False}
# Largest work (elements x draws) compiled quick first: at most ~60 ms slower a call here
# (CPU time at 2^26: sign flips of 600 at 10^5 draws 52 vs 6 ms, two-sample 300 + 300 118 vs
# 57 ms; the bootstrap's programs run as fast in either tier).
QUICK_WORK = 2**26
_NO_OPTION = "No such compile option"
_loop_emitters = [True]  # False once this jaxlib said it has no loop emitters (:func:`quick_or`)
PROMOTE_AFTER = 8  # quick calls (public calls: :func:`one_call`) before the optimised compile
_quick_calls = {}  # optimised program's key -> quick calls made in its place
_held = set()  # keys of the optimised programs this process compiled or loaded
_twins = {}  # (function, static names, options) -> the function jitted with QUICK_OPTIONS
_forced = []  # mode set by :func:`forced` (innermost last)
_scopes = []  # per :func:`one_call` block: {key: tier}, so that its chunks count once


def _folder():
    """The descriptor of the programs' folder (checked when opened), or None."""
    from jaxtests import _cache

    return _cache.programs_fd()


@functools.cache
def _secret():
    from jaxtests import _cache

    return _cache.user_key()


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
    # An executable runs on the devices it was compiled for: an array elsewhere is another key.
    where = tuple(sorted(d.id for d in x.devices())) if isinstance(x, jax.Array) else ()
    return (tuple(np.shape(x)), str(dtype), weak, where)


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


@functools.lru_cache(maxsize=4)
def _setting_names(n_options):
    """The settings that may change a program: (read as attributes, read from the dict).

    Recomputed when JAX registers new options. An attribute gives the value in force
    (thread-local scopes included); an option without one exists only globally.
    """
    names = [n for n in sorted(jax.config.values) if not any(w in n for w in _NOT_PROGRAM)]
    scoped = tuple(n for n in names if hasattr(jax.config, n))
    return scoped, tuple(n for n in names if n not in scoped)


@functools.lru_cache(maxsize=64)
def _settings_text(values, env):
    return repr((values, env))


def _setting_values():
    """Every JAX setting in force and XLA's variables as the backend started with them."""
    every = jax.config.values  # a new dict at each access
    scoped, plain = _setting_names(len(every))
    values = (
        scoped,
        plain,
        tuple(getattr(jax.config, n) for n in scoped),
        tuple(every[n] for n in plain),
    )
    from jaxtests import _cache

    return values, _cache.backend_env()


def _settings(settings=None):
    """:func:`_setting_values` (or ``settings``, its value) as text."""
    values, env = _setting_values() if settings is None else settings
    try:
        return _settings_text(values, env)
    except TypeError:  # an unhashable setting: no memo
        return repr((values, env))


@functools.lru_cache(maxsize=4)
def _layout(n_processes, n_devices):
    """Devices and processes a sharded program spans: each process keeps its own copy."""
    return (n_processes, jax.process_index(), [(d.id, d.process_index) for d in jax.devices()])


def _key(name, args, static, compiler_options):
    leaves, tree = jax.tree_util.tree_flatten(args)
    avals = [_aval(x) for x in leaves]
    static, options = sorted(static.items()), sorted((compiler_options or {}).items())
    settings = _setting_values()
    n_processes, n_devices = jax.process_count(), jax.device_count()
    # The text and its digest cost about 0.1-0.3 ms a call (a loop of chunks makes hundreds):
    # a call like an earlier one (equal static arguments, as jit's own cache compares them)
    # takes its key from the memo.
    memo = (name, tuple(static), tuple(options), tree, tuple(avals), settings)
    memo += (n_processes, n_devices)
    try:
        return _keys[memo]
    except TypeError:  # an unhashable part: no memo
        memo = None
    except KeyError:
        pass
    text = repr((name, static, options, str(tree), avals))
    # A function or object without a stable repr (a user statistic), or an elided one.
    if " at 0x" in text or "..." in text:
        raise TypeError("unstable static argument")
    h = hashlib.sha256()
    digest, layout = _settings(settings), _layout(n_processes, n_devices)
    for part in (_FORMAT, _code_digest(), jax.__version__, _machine(), digest, layout, text):
        h.update(repr(part).encode() + b"\0")
    key = h.hexdigest()[:32]
    if memo is not None:
        if len(_keys) >= _MAX_KEYS:
            _keys.clear()
        _keys[memo] = key
    return key


# -- the output tree as JSON: tuples, lists, dicts with string keys, None, and the named
# tuples of jaxtests' own modules (imported by name, never from the file's say-so alone)


def _encode_tree(x):
    if x is None:
        return None
    if isinstance(x, int) and not isinstance(x, bool):  # a leaf of the skeleton
        return 0
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        cls = type(x)
        if not cls.__module__.startswith("jaxtests."):
            raise TypeError("foreign named tuple")
        return {"nt": f"{cls.__module__}:{cls.__qualname__}", "c": [_encode_tree(c) for c in x]}
    if type(x) in (tuple, list):
        return {type(x).__name__: [_encode_tree(c) for c in x]}
    if type(x) is dict and all(type(k) is str for k in x):
        return {"dict": [[k, _encode_tree(v)] for k, v in x.items()]}
    raise TypeError(f"cannot store an output of type {type(x).__name__}")


def _decode_tree(x):
    if x is None:
        return None
    if x == 0:
        return 0
    if "nt" in x:
        module, _, qualname = x["nt"].partition(":")
        if not module.startswith("jaxtests."):
            raise TypeError("foreign named tuple")
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
            raise TypeError("not a named tuple")
        return cls(*map(_decode_tree, x["c"]))
    if "tuple" in x:
        return tuple(map(_decode_tree, x["tuple"]))
    if "list" in x:
        return list(map(_decode_tree, x["list"]))
    return {k: _decode_tree(v) for k, v in x["dict"]}


def _out_tree(encoded):
    return jax.tree_util.tree_structure(_decode_tree(encoded))


def _sharding_text(s):
    """A sharding as JSON: one device, replicated over a device list, or named over a mesh."""
    from jax._src.sharding_impls import GSPMDSharding

    if isinstance(s, jax.sharding.SingleDeviceSharding):
        return {"single": next(iter(s.device_set)).id}
    if isinstance(s, GSPMDSharding) and s.is_fully_replicated:
        return {"replicated": [d.id for d in s._device_assignment]}
    if isinstance(s, jax.sharding.NamedSharding) and isinstance(s.mesh, jax.sharding.Mesh):
        spec = [list(e) if isinstance(e, tuple) else e for e in s.spec]
        if not all(e is None or isinstance(e, str | list) for e in spec):
            raise TypeError("unusual partition spec")
        ids = np.vectorize(lambda d: d.id, otypes=[np.int64])(s.mesh.devices)
        return {"mesh": ids.tolist(), "axes": list(s.mesh.axis_names), "spec": spec}
    raise TypeError(f"cannot store a {type(s).__name__}")


def _sharding_from(text, by_id):
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    if "single" in text:
        return jax.sharding.SingleDeviceSharding(by_id[text["single"]])
    if "replicated" in text:
        devices = xc.DeviceList(tuple(by_id[i] for i in text["replicated"]))
        return GSPMDSharding.get_replicated(devices, memory_kind="device")
    devices = np.vectorize(lambda i: by_id[i], otypes=[object])(np.asarray(text["mesh"]))
    spec = [tuple(e) if isinstance(e, list) else e for e in text["spec"]]
    mesh = jax.sharding.Mesh(devices, tuple(text["axes"]))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec))


def _header(compiled):
    """What the file needs beside the executable's bytes (JSON-able)."""
    unloaded = compiled._executable._unloaded_executable
    skeleton = jax.tree_util.tree_unflatten(compiled.out_tree, [0] * compiled.out_tree.num_leaves)
    return {
        "devices": [d.id for d in unloaded.device_list],
        "inputs": [_sharding_text(x) for x in unloaded.input_shardings],
        "out_shardings": [_sharding_text(x) for x in unloaded.output_shardings],
        "name": str(unloaded.name),
        "committed": bool(unloaded.committed),
        "kept": sorted(int(i) for i in unloaded.kept_var_idx),
        "no_kwargs": bool(compiled._no_kwargs),
        "outputs": [
            [list(a.shape), str(a.dtype), bool(a.weak_type)] for a in unloaded.output_avals
        ],
        "tree": _encode_tree(skeleton),
    }


def _device_list(header):
    from jax._src.lib import xla_client as xc

    by_id = {d.id: d for d in jax.devices()}
    return by_id, xc.DeviceList(tuple(by_id[i] for i in header["devices"]))


def _rebuild(header, executable, args):
    """A ``jax.stages.Compiled`` running the loaded XLA ``executable`` on the header's devices."""
    from jax._src import stages
    from jax._src.interpreters import pxla

    leaves, in_tree = jax.tree_util.tree_flatten((tuple(args), {}))
    by_id, devices = _device_list(header)
    in_shardings = [_sharding_from(x, by_id) for x in header["inputs"]]
    out_shardings = [_sharding_from(x, by_id) for x in header["out_shardings"]]
    in_avals = [jax.typeof(leaves[i]) for i in header["kept"]]
    out_avals = [
        jax.core.ShapedArray(tuple(shape), np.dtype(dtype), weak_type=weak)
        for shape, dtype, weak in header["outputs"]
    ]
    in_layouts, out_layouts = pxla._get_layouts_from_executable(
        executable, [None] * len(in_avals), [None] * len(out_avals), 0, in_avals, out_avals
    )
    unloaded = pxla.UnloadedMeshExecutable(
        xla_executable=executable,
        device_list=devices,
        backend=jax.devices()[0].client,
        input_avals=in_avals,
        input_shardings=in_shardings,
        output_avals=out_avals,
        output_shardings=out_shardings,
        committed=header["committed"],
        name=header["name"],
        unordered_effects=[],
        ordered_effects=[],
        keepalive=[],
        host_callbacks=[],
        kept_var_idx=set(header["kept"]),
        mut=None,
        xla_in_layouts=in_layouts,
        dispatch_in_layouts=pxla.get_dispatch_layouts(in_layouts, in_shardings, in_avals),
        xla_out_layouts=out_layouts,
        all_args_info=None,
        pgle_profiler=None,
    )
    args_info = in_tree.unflatten([stages.ArgInfo(jax.typeof(x), False) for x in leaves])
    compiled = stages.Compiled(
        unloaded.load(), [], args_info, _out_tree(header["tree"]), no_kwargs=header["no_kwargs"]
    )
    return unloaded, compiled


_SAME = (
    "input_avals",
    "input_shardings",
    "output_avals",
    "output_shardings",
    "committed",
    "name",
    "unordered_effects",
    "ordered_effects",
    "keepalive",
    "host_callbacks",
    "kept_var_idx",
    "mut",
    "xla_in_layouts",
    "dispatch_in_layouts",
    "xla_out_layouts",
)


def _storable(compiled, args):
    """The header for ``compiled``, checked to rebuild it exactly; TypeError where it cannot."""
    original = compiled._executable._unloaded_executable
    if original is None or compiled._params.const_args or original.pgle_profiler is not None:
        raise TypeError("not a plain one-device executable")
    header = json.loads(json.dumps(_header(compiled)))  # exactly what a later process reads
    unloaded, rebuilt = _rebuild(header, original.xla_executable, args)
    for field in _SAME:
        a, b = getattr(original, field), getattr(unloaded, field)
        if (list(a) if isinstance(a, list | tuple) else a) != (
            list(b) if isinstance(b, list | tuple) else b
        ):
            raise TypeError(f"the rebuilt executable differs in {field}")
    if rebuilt.args_info != compiled.args_info or rebuilt.out_tree != compiled.out_tree:
        raise TypeError("the rebuilt executable differs in its trees")
    return header


def _tag(secret, key, header, payload):
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    for part in (key.encode(), header, payload):
        mac.update(len(part).to_bytes(8, "little") + part)
    return mac.digest()


def _pack(secret, key, header, payload):
    header = json.dumps(header, separators=(",", ":")).encode()
    tag = _tag(secret, key, header, payload)
    return _MAGIC + tag + len(header).to_bytes(8, "little") + header + payload


def _unpack(secret, key, blob):
    """``(header, payload)`` of a file whose tag verifies, else None."""
    if not blob.startswith(_MAGIC):
        return None
    rest = blob[len(_MAGIC) :]
    tag, size, rest = rest[:32], int.from_bytes(rest[32:40], "little"), rest[40:]
    header, payload = rest[:size], rest[size:]
    if len(tag) != 32 or not hmac.compare_digest(tag, _tag(secret, key, header, payload)):
        return None
    return json.loads(header), payload


def _read(path, dir_fd=None):
    """The bytes of ``path`` if it is a regular file that only this user can write, else None."""
    from jaxtests import _cache

    return _cache.read_private(path, dir_fd=dir_fd, limit=_MAX_BYTES)[0]


def _write(path, blob, dir_fd=None):
    """Write ``blob`` to ``path`` atomically (mode 0600); on any failure leave nothing behind."""
    from jaxtests import _cache

    _cache.write_private(path, blob, dir_fd=dir_fd)


def _fresh_compile(fn, args, static):
    """``fn`` compiled, and whether the executable may be stored.

    An executable JAX loaded from its persistent cache serializes without its
    kernels (jax 0.10: the reloaded copy fails with "Function ... not found"),
    so only a fresh compilation may be written; JAX's cache is set aside for
    this one compilation (a scoped setting), and a hit seen anyway is reported.
    A program with a custom call is compiled through JAX's cache and never stored.
    """
    lowered = fn.lower(*args, **static)
    if "custom_call" in lowered.as_text():
        # A custom call (LAPACK's solvers in a learner's fits): a stored copy crashed the
        # process that loaded it (jax 0.10, XLA:CPU), so never stored; JAX's cache keeps it.
        return lowered.compile(), False
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


def _load(folder, path, key, args):
    """The stored executable for ``key`` as a ``Compiled``, or None."""
    secret = _secret()
    blob = _read(path, folder) if secret is not None else None
    unpacked = _unpack(secret, key, blob) if blob is not None else None
    if unpacked is None:
        return None
    header, payload = unpacked
    _, devices = _device_list(header)
    executable = jax.devices()[0].client.deserialize_executable(payload, executable_devices=devices)
    return _rebuild(header, executable, args)[1]


def _load_or_compile(folder, path, key, fn, args, static):
    """``(program, loaded)``: the stored executable, or a fresh one (stored when it can be)."""
    try:
        program = _load(folder, path, key, args)
    except Exception:  # verified but not loadable here (another jaxlib build): rebuild it
        program = None
    if program is not None:
        jax.monitoring.record_event(LOADED)  # counted by `jaxtests warmup` and the bench
        return program, True
    compiled, fresh = _fresh_compile(fn, args, static)
    secret = _secret()
    if fresh and secret is not None:
        try:
            header = _storable(compiled, args)
            payload = compiled._executable._unloaded_executable.xla_executable
            payload = payload.client.serialize_executable(payload)
            _write(path, _pack(secret, key, header, payload), folder)
        except Exception:  # not rebuildable, not serializable, or a full disk: used, not stored
            pass
    return compiled, False


def mode():
    """The tier policy in force: :func:`forced`'s, else ``JAXTESTS_COMPILE``'s, else "auto"."""
    if _forced:
        return _forced[-1]
    value = os.environ.get(COMPILE_ENV, "").strip().lower() or "auto"
    if value not in _MODES:
        raise ValueError(
            f"the environment variable {COMPILE_ENV} must be 'auto', 'optimized' or 'quick' "
            f"or unset, got {os.environ[COMPILE_ENV]!r}."
        )
    return value


@contextlib.contextmanager
def forced(tier):
    """Within the block every program with a quick twin is compiled ``tier`` ("quick" or
    "optimized"; ``jaxtests warmup`` keeps optimised programs). Process-wide, threads too."""
    if tier not in _MODES[1:]:
        raise ValueError(f"tier must be 'optimized' or 'quick', got {tier!r}")
    _forced.append(tier)
    try:
        yield
    finally:
        _forced.pop()


@contextlib.contextmanager
def one_call():
    """Within the block (one public call's loop of chunks) each program's tier is decided
    once, at its first call, and counts as one call towards promotion. A block inside
    another belongs to the same public call: it shares the outer block's decisions."""
    _scopes.append(_scopes[-1] if _scopes else {})
    try:
        yield
    finally:
        _scopes.pop()


def loop_options():
    """Compiler options for programs that run fastest with XLA:CPU's loop emitters (a bootstrap
    of a user's statistic): :data:`QUICK_OPTIONS` on the CPU, unless the optimised tier is
    forced (``JAXTESTS_COMPILE=optimized``: the fusion emitters everywhere)."""
    if _machine()[0] != "cpu" or mode() == "optimized" or not _loop_emitters[0]:
        return {}
    return dict(QUICK_OPTIONS)


def _may_be_quick(work):
    """Whether a call of this ``work`` can take the quick tier at all (one CPU process)."""
    return (
        work is not None
        and _machine()[0] == "cpu"
        and jax.process_count() == 1
        and _loop_emitters[0]
    )


def quick_or(run, again):
    """``run()``, a call that may compile with :data:`QUICK_OPTIONS`; ``again()`` instead where
    this jaxlib no longer knows them.

    XLA:CPU retired its loop emitters in 2026 (openxla/xla#48001; jax 0.11.2 answers "No
    such compile option: 'xla_cpu_use_fusion_emitters'"). The first such answer turns the
    quick tier off for the process (:func:`loop_options` is then empty too), so ``again``,
    which asks for the tier anew, gets the optimised program. No probe: where the option is
    known nothing is compiled for the question.
    """
    try:
        return run()
    except jax.errors.JaxRuntimeError as exc:
        if _NO_OPTION not in str(exc):
            raise
    _loop_emitters[0] = False
    return again()


def _quick(key, folder, work):
    """Whether this call runs the quick twin of the optimised program ``key``."""
    if not _may_be_quick(work):
        return False
    tier = mode()
    if tier != "auto":
        return tier == "quick"
    scope = _scopes[-1] if _scopes else {}
    if key not in scope:
        scope[key] = _first_quick(key, folder, work)
    return scope[key]


def _first_quick(key, folder, work):
    """:func:`_quick` in "auto" mode, counting the call."""
    if work > QUICK_WORK or key in _held:
        return False
    if folder is not None:
        try:
            os.stat(f"{key}.jaxexec", dir_fd=folder)
            return False  # the optimised program loads faster than the quick one compiles
        except OSError:
            pass
    calls = _quick_calls.get(key, 0)
    if calls >= PROMOTE_AFTER:
        return False  # called often: worth its compile
    _quick_calls[key] = calls + 1
    return True


def _twin(fn, static, options):
    """``fn``'s function jitted again with ``options`` (the quick tier's)."""
    names = tuple(sorted(static))
    key = (fn, names, tuple(sorted(options.items())))
    twin = _twins.get(key)
    if twin is None:
        twin = jax.jit(fn.__wrapped__, static_argnames=names, compiler_options=options)
        _twins[key] = twin
    return twin


def _unkept(fn, name, args, static, compiler_options, work):
    """A program that is not kept on disk, in its tier: decided by a key for this process
    only (its hash: no reference to a user's function is kept)."""
    if _may_be_quick(work):
        try:
            leaves, tree = jax.tree_util.tree_flatten(args)
            key = hash((name, tuple(sorted(static.items())), tree, *map(_aval, leaves)))
        except TypeError:  # traced or unhashable: the plain program
            return fn(*args, **static)
        if _quick(key, None, work):
            options = {**(compiler_options or {}), **QUICK_OPTIONS}
            return quick_or(
                lambda: _twin(fn, static, options)(*args, **static),
                lambda: fn(*args, **static),
            )
        _held.add(key)
    return fn(*args, **static)


def call(fn, name, args, static=None, compiler_options=None, work=None):
    """``fn(*args, **static)`` for a jitted ``fn``, through a compiled program kept on disk.

    ``name`` identifies ``fn`` across processes; ``static`` holds its static
    arguments (hashable, with a stable ``repr``); ``compiler_options`` those
    ``fn`` was jitted with (part of the key). ``work`` (elements times draws)
    lets a small call run a quick twin first (the module's docstring); None:
    always the optimised program.
    """
    static = static or {}
    folder = _folder()
    if folder is None and not _may_be_quick(work):
        return fn(*args, **static)
    try:
        key = _key(name, args, static, compiler_options)
    except TypeError:  # traced inputs, or a user's function among the static arguments
        return _unkept(fn, name, args, static, compiler_options, work)
    if _quick(key, folder, work):
        options = {**(compiler_options or {}), **QUICK_OPTIONS}
        return quick_or(
            lambda: call(_twin(fn, static, options), f"{name}~quick", args, static, options),
            lambda: call(fn, name, args, static, compiler_options, work),
        )
    _held.add(key)
    if folder is None:
        return fn(*args, **static)
    program = _programs.get(key, False)
    if program is False:
        path = f"{key}.jaxexec"  # relative to the folder's descriptor
        try:
            program, loaded = _load_or_compile(folder, path, key, fn, args, static)
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
                    os.remove(path, dir_fd=folder)
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
