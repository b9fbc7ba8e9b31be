"""One test over several processes (hosts), with JAX's multi-controller runtime.

Every process runs the same call after :func:`jax.distributed.initialize`;
the engine then shards its resample blocks over :func:`jax.devices` (every
device of every process), each process evaluates the blocks of its own
devices, and only counts (and max-T maxima) cross processes, in the
``psum`` of the engine's ``shard_map``. The helpers here are the rest of
the protocol: integers every process must agree on (a drawn seed, a chunk
size sized by one process's clock) come from process 0, and host loops
(the label streams of ``permutation_test_score``) take a contiguous share of
their items and gather the rows back in order. With one process every
helper is the identity, at no cost.
"""

import collections

import jax
import numpy as np

__all__ = [
    "WORK",
    "active",
    "agree",
    "gather",
    "gather_rows",
    "initialize",
    "local_sum",
    "share",
    "to_host",
]

# Work this process did itself: resampled draws its devices evaluated (engine),
# half-sum chunks (meet in the middle), label vectors scored (label streams).
# Diagnostics for tests and benchmarks: every process adds only its own share.
WORK = collections.Counter()


def initialize(coordinator=None, num_processes=None, process_id=None):
    """Join a multi-process run (the CLI's ``--coordinator``; a library user calls JAX's).

    With no arguments JAX detects the cluster (SLURM, Open MPI, Kubernetes,
    or the ``JAX_COORDINATOR_ADDRESS`` / ``JAX_NUM_PROCESSES`` /
    ``JAX_PROCESS_ID`` environment variables). CPU processes exchange counts
    through collectives chosen before the backend starts: gloo (jax 0.10's
    default) unless the user chose others.
    """
    if jax.config.jax_cpu_collectives_implementation in (None, "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=coordinator, num_processes=num_processes, process_id=process_id
    )


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


def share(n):
    """This process's contiguous range ``(lo, hi)`` of ``n`` items (the first ones larger)."""
    p, i = jax.process_count(), jax.process_index()
    base, extra = divmod(n, p)
    lo = i * base + min(i, extra)
    return lo, lo + base + (i < extra)


def gather_rows(local):
    """Every process's rows, in process order, on every process (identity with one).

    ``local : (r_i, ...)`` numpy or JAX array of this process's rows (of its
    :func:`share`); the ``r_i`` may differ.
    """
    if not active():
        return local
    from jax.experimental import multihost_utils

    local = np.asarray(local)
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
