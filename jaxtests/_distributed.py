"""One test over several processes (hosts), with JAX's multi-controller runtime.

Every process runs the same call after :func:`jax.distributed.initialize`;
the engine then shards its resample blocks over :func:`jax.devices` (every
device of every process), each process evaluates the blocks of its own
devices, and only counts (and max-T maxima) cross processes, in the
``psum`` of the engine's ``shard_map``. The helpers here are the rest of
the protocol: integers every process must agree on (a drawn seed, a chunk
size sized by one process's clock) come from process 0, and host loops
(the label streams of ``permutation_test_score``, the bootstrap's dispatches)
take a contiguous share of their items and gather the rows back in order, and
spread their own share over this process's devices (:func:`local_devices`).
With one process every helper is the identity, at no cost.
"""

import collections
import hashlib
import math
import os

import jax
import numpy as np

__all__ = [
    "WORK",
    "active",
    "agree",
    "dealt",
    "gather",
    "gather_rows",
    "initialize",
    "local_devices",
    "local_sum",
    "replicas",
    "share",
    "to_host",
]

# Work this process did itself: resampled draws its devices evaluated (engine),
# half-sum chunks (meet in the middle), label vectors scored (label streams),
# bootstrap resamples ("resamples").
# Diagnostics for tests and benchmarks: every process adds only its own share.
WORK = collections.Counter()


def initialize(
    coordinator=None, num_processes=None, process_id=None, *, timeout=60.0, call=None, token=None
):
    """Join a multi-process run (the CLI's ``--coordinator``; a library user calls JAX's).

    Without a coordinator, process count or id, they come from
    ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID``,
    then from the cluster JAX detects (SLURM, Open MPI, ...). The processes
    first meet over a plain socket on the coordinator's address
    (:func:`jaxtests._rendezvous.meet`: a free port, every process there
    within ``timeout`` seconds, one process per id, the same count, versions,
    ``call`` options and data digest), so that JAX's runtime, which aborts
    from C++ on such faults, starts only when it can succeed. Before anything
    else, every process proves it knows ``token`` (bytes, the run's shared
    secret; it may be None only for a loopback coordinator). Process 0
    listens on the coordinator's IP address (every interface for a host
    name). CPU processes exchange counts through collectives chosen before
    the backend starts: gloo (jax 0.10's default) unless the user chose
    others. Returns the :class:`jaxtests._rendezvous.Link` watching the
    peers; raises :class:`jaxtests._rendezvous.JoinError` with one line.
    """
    from jaxtests import _rendezvous

    coordinator, num_processes, process_id, local = _detect(
        coordinator, num_processes, process_id, timeout
    )
    host, _, port = coordinator.rpartition(":")
    options, data = call if call is not None else ({}, "")
    hello = _rendezvous.Hello(_versions(), num_processes, process_id, options, data)
    link = _rendezvous.meet(host, int(port), hello, timeout, token)
    link.watch(timeout)
    if jax.config.jax_cpu_collectives_implementation in (None, "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    bind = _rendezvous.bind_host(host)
    bind = f"[{bind}]" if ":" in bind else bind or "[::]"
    jax.distributed.initialize(
        coordinator_address=coordinator,
        num_processes=num_processes,
        process_id=process_id,
        local_device_ids=local,
        initialization_timeout=max(1, math.ceil(timeout)),
        # The link notices a silent peer after `timeout` s; JAX's heartbeat (an abort)
        # only well after it.
        heartbeat_timeout_seconds=max(100, 2 * math.ceil(timeout) + 10),
        coordinator_bind_address=f"{bind}:{port}",
    )
    return link


def _versions():
    from jaxtests import _aot
    from jaxtests._version import __version__

    # The source digest too: two checkouts of one version number may compute differently.
    code = _aot._code_digest()[:12]
    return f"jaxtests {__version__} (source {code}) with jax {jax.__version__}"


def _from_env(value, name):
    """``value``, or the integer in the environment variable ``name`` when ``value`` is None."""
    from jaxtests._rendezvous import JoinError

    text = os.environ.get(name, "").strip()
    if value is not None or not text:
        return value
    if not text.isdigit():
        raise JoinError(f"{name}={text!r} is not a non-negative integer")
    return int(text)


def _detect(coordinator, num_processes, process_id, timeout):
    """``(address, count, id, local device ids)`` from the arguments, the environment or JAX."""
    from jaxtests._rendezvous import JoinError

    coordinator = coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS") or None
    num_processes = _from_env(num_processes, "JAX_NUM_PROCESSES")
    process_id = _from_env(process_id, "JAX_PROCESS_ID")
    local = None
    if None in (coordinator, num_processes, process_id):
        from jax._src import clusters

        coordinator, num_processes, process_id, local = (
            clusters.ClusterEnv.auto_detect_unset_distributed_params(
                coordinator, num_processes, process_id, None, None, max(1, math.ceil(timeout))
            )
        )
    if None in (coordinator, num_processes, process_id):
        raise JoinError(
            "no cluster found (SLURM, Open MPI, ...): give --coordinator, --num-processes "
            "and --process-id, or set JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and "
            "JAX_PROCESS_ID"
        )
    host, sep, port = str(coordinator).rpartition(":")
    if not (sep and host and port.isdigit() and 0 < int(port) < 65536):
        raise JoinError(f"coordinator address {coordinator!r} is not HOST:PORT")
    if not 0 <= process_id < num_processes:
        raise JoinError(f"process id {process_id} is not below the process count {num_processes}")
    return str(coordinator), int(num_processes), int(process_id), local


def active():
    """Whether this call is one of several processes of a distributed run."""
    return jax.process_count() > 1


def agree(value):
    """Process 0's integer ``value`` in [0, 2^64), on every process (identity with one)."""
    if not active():
        return value
    from jax.experimental import multihost_utils

    # two 32-bit words: without x64 an int64 would be cut to int32 on the way
    words = np.array([value >> 32, value & 0xFFFFFFFF], np.uint32)
    hi, lo = (int(w) for w in np.asarray(multihost_utils.broadcast_one_to_all(words)))
    return (hi << 32) | lo


def same_call(*parts):
    """Refuse, on every process, a run whose processes were given different calls.

    Each process digests ``parts`` (arrays by dtype, shape and bytes, the rest by
    ``repr``); the digests are gathered and compared, so every process raises the
    same ``ValueError`` instead of combining counts of different data into a
    wrong answer. Nothing with one process.
    """
    if not active():
        return
    from jax.experimental import multihost_utils

    h = hashlib.sha256()
    for part in parts:
        for leaf in jax.tree_util.tree_leaves(part):
            if hasattr(leaf, "dtype") and hasattr(leaf, "shape"):
                a = np.asarray(leaf)
                h.update(f"{a.dtype}{a.shape}".encode() + np.ascontiguousarray(a).tobytes())
            else:
                h.update(repr(leaf).encode())
            h.update(b"\0")
    mine = np.frombuffer(h.digest()[:8], np.uint32)
    every = np.asarray(multihost_utils.process_allgather(mine)).reshape(-1, 2)
    differ = [i for i in range(every.shape[0]) if not np.array_equal(every[i], every[0])]
    if differ:
        raise ValueError(
            "the processes of this distributed run were given different calls (data, "
            f"options, n_resamples or key): process(es) {differ} differ from process 0. "
            "Start every process with the same arguments."
        )


def local_devices(array):
    """The devices a host loop may spread its work over: ``array``'s own first, then every
    other device of its backend in this process."""
    home = array.devices().pop()
    return [home, *(d for d in home.client.local_devices() if d != home)]


def replicas(tree, devices):
    """``tree`` (on ``devices[0]``) and a copy of it on each other device of ``devices``."""
    return [tree] + [jax.device_put(tree, d) for d in devices[1:]]


def dealt(items, lanes, start, land):
    """``start(item)`` for each item in order, at most two a lane in flight (the calls run
    asynchronously on their devices), and ``land(started)`` of each in the same order."""
    pending = collections.deque()
    for item in items:
        if len(pending) == 2 * lanes:
            land(pending.popleft())
        pending.append(start(item))
    while pending:
        land(pending.popleft())


def share(n):
    """This process's contiguous range ``(lo, hi)`` of ``n`` items (the first ones larger)."""
    p, i = jax.process_count(), jax.process_index()
    base, extra = divmod(n, p)
    lo = i * base + min(i, extra)
    return lo, lo + base + (i < extra)


def gather_rows(local):
    """Every process's rows, in process order, on every process (identity with one).

    ``local : (r_i, ...)`` numpy or JAX array of this process's rows (of its
    :func:`share`); the ``r_i`` may differ. 64-bit values travel as 32-bit words: every
    bit as computed, whatever the precision in force (without x64 they would be cut).
    """
    if not active():
        return local
    from jax.experimental import multihost_utils

    local = np.ascontiguousarray(local)
    if local.dtype.itemsize == 8:
        width = 2 * int(np.prod(local.shape[1:], dtype=np.int64))
        words = gather_rows(local.view(np.uint32).reshape(local.shape[0], width))
        return np.ascontiguousarray(words).view(local.dtype).reshape(-1, *local.shape[1:])
    sizes = np.asarray(multihost_utils.process_allgather(np.int64(local.shape[0]))).ravel()
    pad = np.zeros((int(sizes.max()), *local.shape[1:]), local.dtype)
    pad[: local.shape[0]] = local
    every = np.asarray(multihost_utils.process_allgather(pad))  # (processes, max, ...)
    return np.concatenate([every[i, :r] for i, r in enumerate(sizes)])


def to_host(x):
    """A replicated result (every device holds all of it) as numpy, on any process."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    return np.asarray(x.addressable_data(0))


def local_sum(x):
    """Sum of the parts of a per-device result held by this process's devices."""
    if getattr(x, "is_fully_addressable", True):
        return int(np.sum(np.asarray(x)))
    return int(sum(np.sum(np.asarray(s.data)) for s in x.addressable_shards))


def gather(x):
    """A result sharded over every process's devices, whole, as numpy."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))
