"""The resampling engine: counts over blocks of draws, sharded over local devices.

Every resampling test reads ``_iv -> plan -> drive -> wrap``: its ``_iv``
checks the arguments (:class:`Options`), its planner builds a :class:`Plan`
(a block evaluator of :mod:`jaxtests.kernels.evaluators`, the canonical data,
the observed statistic and its tie tolerance), :func:`drive` runs the plan and
returns an :class:`EngineResult` (p-values, counts, intervals; the null and
max-T adjusted p-values on request), and ``_permutation.wrap`` makes the
public result. Closed forms (the binomial sign test, meet-in-the-middle
counts) give an :class:`EngineResult` too (:func:`closed_form`).

Reproducibility: the random bits of draw ``g`` are counter-based words keyed
by ``fold_in(key, g // 4096)`` (:mod:`jaxtests.kernels.random`), so they depend
on the draw's index only; blocks of draws have a size fixed by the data's
shape, the statistic and ``n_resamples``, and counts are integers, so the same
key gives bit-identical counts and p-values for any ``batch_size``, any
``progress`` chunking and any number of local devices (blocks are sharded over
every device with :func:`jax.shard_map`). With several processes (hosts),
each started with :func:`jax.distributed.initialize` and running the same
call, the mesh holds the devices of every process: each process evaluates
its own devices' blocks, only the counts cross processes, and every process
returns the result of a one-process run with the same key
(:mod:`jaxtests._distributed`).
"""

import dataclasses
import functools
import os
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, PartitionSpec

from jaxtests import _aot, _distributed, _pvalues
from jaxtests._progress import as_progress, warn_long_run
from jaxtests._random import resolve_key
from jaxtests.kernels import exceedance as kexceedance
from jaxtests.kernels import resampling as kresampling

MAX_ENUMERATION = 2**30  # rearrangements enumerated one by one
MAX_MITM = 48  # sign flips counted by meeting in the middle (2 x 2^24 half sums)


@dataclasses.dataclass(frozen=True)
class Options:
    """A test's checked options (from ``_permutation.common_iv``); frozen."""

    alternative: str
    n_resamples: int  # the default (100,000) filled in
    method: str
    batch_size: int | None
    correction: str | None
    sequential: int | None
    return_null: bool
    key: object
    explicit_n: bool  # whether the caller gave ``n_resamples``
    progress: object = None  # a jaxtests._progress.Reporter or None


@dataclasses.dataclass(frozen=True)
class Plan:
    """What :func:`drive` runs: ``n_total`` draws of ``evaluator`` in blocks of ``draws``.

    ``data`` the evaluator's arrays (its own NamedTuple of
    :mod:`jaxtests.kernels.evaluators`); ``observed : (H,)`` the observed
    statistics on the scale the evaluator returns,
    ``tol`` their tie tolerances, ``scale`` the null standard deviations used
    by max-T (ones when unused); ``exact`` when the draws enumerate every
    rearrangement (no key, ``p = count / n``). ``tail`` overrides the counted
    tail (Hotelling's T² counts large values whatever the alternative).
    ``work``: draws times the instances (of all hypotheses) each one touches,
    which picks the compile tier of the program (:mod:`jaxtests._aot`).
    """

    evaluator: object
    data: tuple
    observed: np.ndarray
    tol: jax.Array
    scale: jax.Array
    n_total: int
    draws: int
    exact: bool
    tail: str | None = None
    work: int | None = None


class EngineResult(NamedTuple):
    """p-values of ``H`` hypotheses, flat ``(H,)`` numpy arrays."""

    pvalue: np.ndarray
    n_extreme: np.ndarray
    interval: tuple  # (low, high) of the p-value; the point itself when exact
    method: str
    n_resamples: int
    seed: int | None
    adjusted: np.ndarray | None = None  # max-T adjusted p-values
    n_draws: np.ndarray | None = None  # draws used per hypothesis (sequential stopping)
    null: np.ndarray | None = None  # (H, n_resamples) statistics (return_null)
    undefined: np.ndarray | None = None  # hypotheses whose observed statistic is NaN


def choose_method(method, n_patterns, n_resamples):
    """Resolve ``method="auto"``: exact when every rearrangement fits in ``n_resamples``.

    ``n_patterns`` is the number of rearrangements, None for "more than can
    be counted"; any other ``method`` is returned as given.
    """
    if method != "auto":
        return method
    return "exact" if n_patterns is not None and n_patterns <= n_resamples else "monte-carlo"


def check_enumerable(n_patterns, what, limit=MAX_ENUMERATION):
    """Refuse ``method="exact"`` beyond ``limit`` rearrangements (None: too many to count)."""
    if n_patterns is None or n_patterns > limit:
        raise ValueError(
            f"`method`='exact' would enumerate {what} (limit 2^{int(np.log2(limit))}). "
            "Use 'monte-carlo'."
        )


def closed_form(pvalue, n_extreme, method, n_resamples=0, interval=None):
    """An :class:`EngineResult` computed without drawing (binomial, meet in the middle)."""
    return EngineResult(
        pvalue=pvalue,
        n_extreme=n_extreme,
        interval=(pvalue, pvalue) if interval is None else interval,
        method=method,
        n_resamples=n_resamples,
        seed=None,
    )


_SMALL_RUN = 4096  # draws up to which a sharded run keeps blocks of this size


def blocks_for(n_total):
    """The number of draws a Monte Carlo block size is chosen for (``block_draws_fused``).

    With one process, ``n_total``: a test evaluates a block of about its
    size, one program per power of two up to 2^17 draws. With several
    processes, two sizes only: runs of at most ``_SMALL_RUN`` draws take
    blocks of that many, and every larger run the largest blocks, so a
    sharded program serves every ``n_resamples`` above 4096 (each process
    compiles its own copy, and JAX's persistent cache serves process 0
    only). A run just above 4096 draws then evaluates up to one masked
    block of 2^17 draws per device (measured: 9,999 draws of m = 10^4 in
    0.59 s instead of 0.09 s on a loaded 2-core machine), against seconds
    for a compilation in every process. The draws' bits depend on their
    indices only, so the block size never changes a result.
    """
    if not _distributed.active():
        return n_total
    return _SMALL_RUN if n_total <= _SMALL_RUN else 2**62


# Compiled once per statistic: repeated calls (many keys, many tests) reuse them.
@functools.lru_cache(maxsize=64)
def jitted(fn):
    return jax.jit(fn)


@functools.lru_cache(maxsize=64)
def vmapped(fn):
    return jax.jit(jax.vmap(fn))


@functools.lru_cache(maxsize=64)
def swap_terms(fn):
    return jax.jit(lambda y, a, b: (fn(y, a), fn(y, b)))


# 512-bit vectors for the masked float32 adds of ``bit_sums`` (XLA:CPU defaults to
# 256-bit ones; measured 1.6-2x faster on AVX-512 machines; other backends ignore it).
_COMPILER_OPTIONS = {"xla_cpu_prefer_vector_width": 512}


def _block_tails(
    evaluator, key, step, data, t_obs, tol, scale, n_total, draws, per_step, alt, maxt
):
    """Statistics of one step's blocks: ``(t, valid, ge, le)``; draws past ``n_total`` invalid."""
    bid = step * per_step + jnp.arange(per_step, dtype=jnp.int32)
    t = kexceedance.evaluate(evaluator, key, bid, data, t_obs, tol, scale, alt, maxt)
    gidx = (bid.astype(jnp.int64)[:, None] * draws + jnp.arange(draws)[None, :]).reshape(-1)
    valid = gidx < n_total
    ge, le = kexceedance.tail_counts(t, t_obs, tol, valid)
    return t, valid, ge, le


def _sharded(local, n_dev, n_in, out_specs):
    """``local`` over the first ``n_dev`` devices of every process (axis "d"), inputs replicated."""
    mesh = Mesh(np.array(jax.devices()[:n_dev]), ("d",))
    rep = PartitionSpec()
    return jax.shard_map(
        local, mesh=mesh, in_specs=(rep,) * n_in, out_specs=out_specs, check_vma=False
    )


@functools.partial(
    jax.jit,
    compiler_options=_COMPILER_OPTIONS,
    static_argnames=(
        "evaluator",
        "draws",
        "per_step",
        "null_steps",
        "n_dev",
        "alternative",
        "maxt",
        "step_rows",
    ),
)
def _run_counts(
    key,
    data,
    t_obs,
    tol,
    scale,
    first_step,
    n_run,
    n_total,
    *,
    evaluator,
    draws,
    per_step,
    null_steps,
    n_dev,
    alternative,
    maxt,
    step_rows=0,
):
    """Exceedance counts (and optionally the null) of ``n_run`` steps per device.

    Device ``i`` runs steps ``first_step + i n_run + j`` for ``j < n_run``;
    step ``s`` evaluates blocks ``s per_step, ..., (s + 1) per_step - 1``, and
    draws past ``n_total`` are masked, so calls over consecutive step ranges
    add up to the counts of one call over all of them. ``first_step`` and
    ``n_run`` are traced: one compilation serves every chunk size, and
    ``n_total`` too: every number of draws with the same block size. With
    ``null_steps > 0`` (a static capacity, ``n_run <= null_steps``) each
    device also fills the first ``n_run`` steps of its part of the null,
    ``(H, n_dev null_steps per_step draws)``; otherwise the null is None.
    ``drawn : (n_dev,)`` counts the draws each device evaluated (each process
    reads its own devices': :data:`jaxtests._distributed.WORK`).

    With ``step_rows > 0`` (a static capacity, ``n_run <= step_rows``; no
    max-T, no null) each device keeps one ``(ge, le)`` row per step instead of
    their sum, and the counts are those rows, ``(n_dev step_rows, 2, H)``
    stacked over the devices (rows ``i step_rows + j``), so the host can find
    the step where a stopping rule fires.
    """
    lanes = per_step * draws

    def local(key, data, t_obs, tol, scale, first_step, n_run, n_total):
        base = first_step + (lax.axis_index("d") * n_run if n_dev > 1 else 0)
        h = t_obs.shape[0]

        def step(j, carry):
            counts, null, drawn = carry
            t, valid, ge, le = _block_tails(
                evaluator,
                key,
                base + j,
                data,
                t_obs,
                tol,
                scale,
                n_total,
                draws,
                per_step,
                alternative,
                maxt,
            )
            if step_rows:
                counts = counts.at[j].set(jnp.stack([ge, le]))
                return counts, null, drawn + jnp.sum(valid, dtype=jnp.int64)
            mx = kexceedance.maxt_counts(t, t_obs, tol, scale, valid, alternative) if maxt else ge
            if null_steps:
                null = lax.dynamic_update_slice(null, t.astype(null.dtype), (j * 0, j * lanes))
            drawn = drawn + jnp.sum(valid, dtype=jnp.int64)
            return (counts[0] + ge, counts[1] + le, counts[2] + mx), null, drawn

        zero = jnp.zeros((h,), jnp.int64)
        counts = jnp.zeros((step_rows, 2, h), jnp.int64) if step_rows else (zero, zero, zero)
        null = jnp.zeros((h, null_steps * lanes), t_obs.dtype) if null_steps else None
        carry = (counts, null, jnp.zeros((1,), jnp.int64))
        counts, null, drawn = lax.fori_loop(0, n_run, step, carry)
        if n_dev > 1 and not step_rows:
            counts = lax.psum(counts, "d")
        return counts, null, drawn

    if n_dev == 1:
        return local(key, data, t_obs, tol, scale, first_step, n_run, n_total)
    counted = PartitionSpec("d") if step_rows else PartitionSpec()
    f = _sharded(local, n_dev, 8, (counted, PartitionSpec(None, "d"), PartitionSpec("d")))
    return f(key, data, t_obs, tol, scale, first_step, n_run, n_total)


@functools.partial(
    jax.jit,
    compiler_options=_COMPILER_OPTIONS,
    static_argnames=("evaluator", "draws", "per_step", "alternative", "h"),
)
def _run_sequential(
    key, data, t_obs, tol, state, n_steps, n_total, *, evaluator, draws, per_step, alternative, h
):
    """Besag-Clifford: per hypothesis, the draw at which ``h`` extreme values were seen.

    ``state = (first_step, ge, le, stop)`` (``stop`` 0 while running); runs
    steps ``first_step, ...`` until ``first_step + n_steps`` (traced: one
    compilation serves every chunk size) or until every hypothesis stopped,
    and returns the new state, so host-level chunks of steps continue one
    another exactly.
    """
    end = state[0] + n_steps

    lo, hi = kexceedance.tie_band(t_obs, tol)

    def tail(t):
        return t >= lo[:, None], t <= hi[:, None]

    def cond(state):
        step, _, _, stop = state
        started = step.astype(jnp.int64) * (per_step * draws)
        return (step < end) & (started < n_total) & jnp.any(stop == 0)

    def body(state):
        step, ge_c, le_c, stop = state
        bid = step * per_step + jnp.arange(per_step, dtype=jnp.int32)
        t = kexceedance.evaluate(evaluator, key, bid, data, t_obs, tol, None, alternative, False)
        gidx = (bid.astype(jnp.int64)[:, None] * draws + jnp.arange(draws)[None, :]).reshape(-1)
        valid = (gidx < n_total)[None, :]
        ge, le = tail(t)
        cge = ge_c[:, None] + jnp.cumsum(ge & valid, axis=1, dtype=jnp.int64)
        cle = le_c[:, None] + jnp.cumsum(le & valid, axis=1, dtype=jnp.int64)
        if alternative == "greater":
            c = cge
        elif alternative == "less":
            c = cle
        else:
            c = jnp.minimum(cge, cle)
        reached = (c >= h) & valid
        first = jnp.argmax(reached, axis=1)
        hit = jnp.any(reached, axis=1)
        new_stop = jnp.where((stop == 0) & hit, gidx[first] + 1, stop)
        # Counts stop growing once a hypothesis has stopped.
        keep = stop == 0
        ge_c = jnp.where(keep, cge[:, -1], ge_c)
        le_c = jnp.where(keep, cle[:, -1], le_c)
        return step + 1, ge_c, le_c, new_stop

    return lax.while_loop(cond, body, state)


def mitm_counts(d, lo, hi, group=1):
    """Exact sign-flip counts ``#{P >= hi}``, ``#{P <= lo}`` per hypothesis (meet in the middle).

    The half-sum chunks are shared by every device of every process; the
    integer counts add up to the one-device ones. ``group`` (the backend
    profile's) chunks matched per step never changes a count.
    """
    n_dev = jax.device_count()
    if n_dev == 1:
        return _mitm_counts(d, lo, hi, group=group)
    counts = _mitm_counts_sharded(d, lo, hi, n_dev=n_dev, group=group)
    return tuple(_distributed.to_host(c) for c in counts)


@functools.partial(jax.jit, static_argnames=("group",))
def _mitm_counts(d, lo, hi, *, group):
    part = functools.partial(kresampling.mitm_signflip_counts, group=group)
    return jax.vmap(part)(d, lo, hi)


@functools.partial(jax.jit, static_argnames=("n_dev", "group"))
def _mitm_counts_sharded(d, lo, hi, *, n_dev, group):
    def local(d, lo, hi):
        part = functools.partial(
            kresampling.mitm_signflip_counts,
            shard=lax.axis_index("d"),
            n_shards=n_dev,
            group=group,
        )
        return lax.psum(jax.vmap(part)(d, lo, hi), "d")

    return _sharded(local, n_dev, 3, PartitionSpec())(d, lo, hi)


_STEP_BYTES = 2**28  # intermediates of one step (a batch of blocks), about 256 MB
_NULL_BYTES = 2**26  # device buffer of one chunk's null statistics (return_null)


def _draw_bytes(evaluator, data, n_h):
    """Rough bytes of intermediates per draw, for the ``batch_size`` cap.

    Evaluators on materialised rearrangements hold a rearranged copy of the
    data per draw (signs or indices, the copy, products); the fused and table
    sums a few values per hypothesis.
    """
    if evaluator.materialised:
        sizes = [int(np.prod(np.shape(a))) for a in jax.tree_util.tree_leaves(data)]
        return 32 * max(sizes, default=1)
    return 32 * n_h + 64


def _per_step(batch_size, draws, n_blocks=None, block_bytes=0):
    """Blocks per step: ``batch_size`` in whole blocks, capped at the work and at memory.

    The cap never changes a result (blocks are fixed, counts integers); it
    keeps ``batch_size=10**12`` from asking XLA for terabytes.
    """
    if batch_size is None:
        return 1
    per = max(1, -(-batch_size // draws))
    if n_blocks is not None:
        per = min(per, max(1, n_blocks))
    if block_bytes > 0:
        per = min(per, max(1, _STEP_BYTES // block_bytes))
    return per


def _n_devices(n_blocks, per_step):
    """Devices a run is sharded over: every one with work; all of them with several processes.

    A process whose devices are not in the mesh could not take part in its
    collectives, so a multi-process run always spans every device (steps past
    the last block are masked).
    """
    n = jax.device_count()
    if _distributed.active():
        return n
    return max(1, min(n, -(-n_blocks // per_step)))


def _check_size(n_total, n_blocks, per_step, draws, n_h, return_null):
    """Refuse runs the engine cannot index or hold, naming the argument."""
    # Block ids are int32 (and so part of every draw's key): the last step may
    # run past n_blocks by a step per device.
    if n_blocks + (jax.device_count() + 1) * per_step >= 2**31:
        limit = (2**31 - (jax.device_count() + 1) * per_step) * draws
        raise ValueError(
            f"`n_resamples`={n_total} is more than the engine indexes ({draws} draws per "
            f"block, under 2^31 blocks: at most about {limit:.3g}); use fewer resamples "
            "or `sequential` stopping."
        )
    if return_null:
        need = 8 * n_total * n_h
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
            memory = 2**34
        if need > memory // 2:
            raise ValueError(
                f"`return_null`=True with `n_resamples`={n_total} keeps {n_total} x {n_h} "
                f"statistics ({need / 2**30:.3g} GiB), more than half of this machine's "
                f"memory ({memory / 2**30:.3g} GiB); lower `n_resamples` or leave "
                "`return_null` off."
            )


_CHUNK_SECONDS = 0.5  # aim of one host-level call: Ctrl-C and progress act between calls
_LONG_RUN_SECONDS = 180.0  # runs estimated beyond this get a LongRunWarning
_ESTIMATE_FROM_SECONDS = 0.1  # shortest chunk whose time is trusted for that estimate


def _step_chunks(n_steps, n_dev, cap=None, what="This permutation test"):
    """Host-level chunks ``(first_step, steps_per_device)`` of ``n_steps`` steps, sized by time.

    The first chunk is one step per device (its time includes compilation),
    so the first progress report comes early; later ones aim at
    ``_CHUNK_SECONDS`` of work, growing at most 16x per chunk, so Ctrl-C
    (seen by Python between chunks) stops a run within about a second. The
    caller finishes a chunk's computation before asking for the next one:
    the time between yields is the chunk's. Once a chunk of at least 0.1 s
    (not the first, which may include compilation) predicts more than ``_LONG_RUN_SECONDS`` to go, a
    :class:`jaxtests._progress.LongRunWarning` gives the estimate. Chunking
    never changes a result: blocks stay whole and counts are integers.
    """
    first, n_run, calls, warned = 0, 1, 0, False
    while first < n_steps:
        n_run = min(n_run, -(-(n_steps - first) // n_dev))
        if cap:
            n_run = min(n_run, cap)
        t0 = time.perf_counter()
        yield first, n_run
        dt = time.perf_counter() - t0
        first += n_run * n_dev
        calls += 1
        per = max(dt / n_run, 1e-7)  # seconds per step on each device
        if calls > 1 and not warned and dt >= _ESTIMATE_FROM_SECONDS and first < n_steps:
            left = per * -(-(n_steps - first) // n_dev)
            if left > _LONG_RUN_SECONDS:
                warn_long_run(left, what)
                warned = True
        n_run = max(1, min(int(_CHUNK_SECONDS / per), 16 * n_run))
        # Chunks are collective calls: every process takes process 0's size.
        n_run = _distributed.agree(n_run)


def run_chunks(run, n_steps, total, per_step, progress, what, *, n_dev=1, cap=None):
    """Run ``n_steps`` steps in host-level chunks sized by time: the loop of every sampler.

    ``run(first_step, n_run)`` evaluates steps ``first_step + i n_run + j``
    (``j < n_run``) on each device ``i < n_dev`` and returns once they are done
    (its results read back to the host), True to stop early. Chunks come from
    :func:`_step_chunks` (``cap`` steps per device at most); ``progress(done,
    total)`` (a :class:`jaxtests._progress.Reporter` or None) is told 0 at the
    start and ``per_step`` units of work per step after each chunk, and closed
    at the end; Ctrl-C raises ``KeyboardInterrupt`` between chunks (a chunk
    takes about ``_CHUNK_SECONDS``). A sampler whose draws depend on their
    indices only gets the same result for any chunking.
    """
    try:
        if progress is not None:
            progress(0, total)
        with _aot.one_call():  # the chunks run one tier of each program, counted once
            for first, n_run in _step_chunks(n_steps, n_dev, cap, what):
                stop = run(first, n_run)
                if progress is not None:
                    done = total if stop else min(total, (first + n_run * n_dev) * per_step)
                    progress(done, total)
                if stop:
                    break
    finally:
        if progress is not None:
            progress.close()


def drive(plan, opts):
    """Run ``plan`` with the options ``opts``; returns an :class:`EngineResult`.

    The blocks run in host-level chunks sized by time (:func:`_step_chunks`):
    ``opts.progress(done, n_total)`` is called at the start and after each
    chunk, and Ctrl-C raises ``KeyboardInterrupt`` between chunks (nothing is
    kept). Counts are integers summed over chunks, so the result is
    bit-identical to one call, whatever the chunking, ``batch_size`` or
    device count.
    """
    progress = as_progress(opts.progress)
    typed_key, seed = (None, None) if plan.exact else resolve_key(opts.key)
    if typed_key is None:
        typed_key = jax.random.key(0)
    n_total, draws, observed = plan.n_total, plan.draws, plan.observed
    tail = plan.tail or opts.alternative
    n_h = observed.shape[0]
    n_blocks = -(-n_total // draws)
    block_bytes = draws * _draw_bytes(plan.evaluator, plan.data, n_h)
    per_step = _per_step(opts.batch_size, draws, n_blocks, block_bytes)
    _check_size(n_total, n_blocks, per_step, draws, n_h, opts.return_null)
    n_steps = -(-n_blocks // per_step)
    lanes = per_step * draws
    what = f"This permutation test ({n_total:,} rearrangements)"
    # Every process must run the same call: counts of different data would add up silently.
    _distributed.same_call(
        plan.data,
        observed,
        (type(plan.evaluator).__name__, n_total, draws, tail, plan.exact, opts.correction),
        (opts.sequential, opts.return_null, seed),
        None if plan.exact else jax.random.key_data(typed_key),
    )
    # No draw reaches a NaN observed statistic's thresholds; wrap reports p = NaN.
    undefined = np.isnan(np.asarray(observed))
    if opts.sequential is not None:
        run = _drive_sequential_sharded if _distributed.active() else _drive_sequential
        res = run(plan, typed_key, per_step, n_steps, tail, opts, progress, what)
        return res._replace(seed=seed, undefined=undefined)
    n_dev = _n_devices(n_blocks, per_step)
    null_steps = 0
    if opts.return_null:
        null_steps = max(1, min(-(-n_steps // n_dev), _NULL_BYTES // (8 * n_h * lanes)))
    counts = np.zeros((3, n_h), np.int64)
    nulls = []
    maxt = opts.correction == "maxT"
    # Both tails are counted in every program; the tail only shapes max-T's decisions, so
    # without max-T the three alternatives share one program (and one cache entry).
    counted_tail = tail if maxt else "two-sided"

    def run(first, n_run):
        nonlocal counts
        c, null, drawn = _aot.call(
            _run_counts,
            "engine._run_counts",
            (
                typed_key,
                plan.data,
                observed,
                plan.tol,
                plan.scale,
                np.int32(first),
                np.int32(n_run),
                np.int64(n_total),
            ),
            dict(
                evaluator=plan.evaluator,
                draws=draws,
                per_step=per_step,
                null_steps=null_steps,
                n_dev=n_dev,
                alternative=counted_tail,
                maxt=maxt,
            ),
            _COMPILER_OPTIONS,
            work=plan.work,
        )
        counts = counts + _distributed.to_host(c)  # integers: chunking never changes a sum
        _distributed.WORK["draws"] += _distributed.local_sum(drawn)
        if opts.return_null:
            null = _distributed.gather(null)
            part = null_steps * lanes  # each device's part of the buffer
            nulls.extend(null[:, i * part : i * part + n_run * lanes] for i in range(n_dev))

    # One call at a time: two computations in flight at once can hang XLA:CPU (README).
    run_chunks(run, n_steps, n_total, lanes, progress, what, n_dev=n_dev, cap=null_steps)
    ge, le, mx = counts
    p, cnt, interval = _pvalues.counts_to_pvalues(ge, le, n_total, tail, plan.exact)
    adjusted = None
    if opts.correction == "maxT":
        adj = 0 if plan.exact else 1
        # Westfall & Young (1993) single-step max-T; never below the raw p-value.
        adjusted = np.maximum(p, (mx + adj) / (n_total + adj))
    return EngineResult(
        pvalue=p,
        n_extreme=cnt,
        interval=interval,
        method="exact" if plan.exact else "monte-carlo",
        n_resamples=n_total,
        seed=seed,
        adjusted=adjusted,
        null=np.concatenate(nulls, axis=1)[:, :n_total] if opts.return_null else None,
        undefined=undefined,
    )


def _drive_sequential(plan, key, per_step, n_steps, tail, opts, progress, what):
    """Besag-Clifford stopping, in time-sized chunks of steps on one device."""
    h, n_total = opts.sequential, plan.n_total
    zero = np.zeros((plan.observed.shape[0],), np.int64)
    state = (np.int32(0), zero, zero, zero)
    what = what.replace("(", "(up to ", 1)

    def run(first, n_run):
        nonlocal state
        state = _aot.call(
            _run_sequential,
            "engine._run_sequential",
            (key, plan.data, plan.observed, plan.tol, state, np.int32(n_run), np.int64(n_total)),
            dict(
                evaluator=plan.evaluator,
                draws=plan.draws,
                per_step=per_step,
                alternative=tail,
                h=h,
            ),
            _COMPILER_OPTIONS,
            work=plan.work,
        )
        return bool(np.all(np.asarray(state[3]) > 0))  # waits for the chunk

    lanes = per_step * plan.draws
    run_chunks(run, n_steps, n_total, lanes, progress, what)
    ge, le, stop = (np.asarray(a) for a in state[1:])
    return _sequential_result(ge, le, stop, h, n_total, tail)


def _sequential_result(ge, le, stop, h, n_total, tail):
    """The :class:`EngineResult` of sequential stopping from counts and stopping draws."""
    p, cnt, (lo, hi) = _pvalues.counts_to_pvalues(ge, le, n_total, tail, exact=False)
    factor = 1.0 if tail != "two-sided" else 2.0
    used = np.where(stop > 0, stop, n_total)
    # Besag & Clifford (1991): stopped at the h-th extreme value, p = h / L.
    p_seq = np.minimum(1.0, factor * h / np.maximum(used, 1))
    slo, shi = _pvalues.clopper_pearson(np.full(used.shape, h), used)
    stopped = stop > 0
    return EngineResult(
        pvalue=np.where(stopped, p_seq, p),
        n_extreme=np.where(stopped, h, cnt),
        interval=(
            np.where(stopped, np.minimum(1.0, factor * slo), lo),
            np.where(stopped, np.minimum(1.0, factor * shi), hi),
        ),
        method="monte-carlo",
        n_resamples=int(used.max()),
        seed=None,
        n_draws=used,
    )


_SHARDED_STEPS = 64  # steps per device per call of the sharded sequential counts


def _drive_sequential_sharded(plan, key, per_step, n_steps, tail, opts, progress, what):
    """Besag-Clifford stopping over every process's devices, decided from global counts.

    Each chunk gives the tail counts of every step (each device its steps);
    the host adds them in draw order, and where a hypothesis reaches ``h``
    extreme values the one step that holds its stopping draw is run again on
    this process by :func:`_run_sequential` from the exact counts before it,
    so the stopping draw, the counts and the p-value are those of the
    one-process run.
    """
    h, n_total, n_h = opts.sequential, plan.n_total, plan.observed.shape[0]
    n_dev = jax.device_count()
    ge_c, le_c = np.zeros(n_h, np.int64), np.zeros(n_h, np.int64)
    stop = np.zeros(n_h, np.int64)
    what = what.replace("(", "(up to ", 1)
    static = dict(evaluator=plan.evaluator, draws=plan.draws, per_step=per_step)

    def run(first, n_run):
        nonlocal ge_c, le_c, stop
        rows, _, drawn = _run_counts(
            key,
            plan.data,
            plan.observed,
            plan.tol,
            plan.scale,
            np.int32(first),
            np.int32(n_run),
            np.int64(n_total),
            null_steps=0,
            n_dev=n_dev,
            alternative="two-sided",  # both tails' rows, whatever the alternative (no max-T)
            maxt=False,
            step_rows=_SHARDED_STEPS,
            **static,
        )
        _distributed.WORK["draws"] += _distributed.local_sum(drawn)
        rows = _distributed.gather(rows).reshape(n_dev, _SHARDED_STEPS, 2, n_h)
        rows = rows[:, :n_run].reshape(n_dev * n_run, 2, n_h)  # step order
        cge = ge_c[None, :] + np.cumsum(rows[:, 0], axis=0)
        cle = le_c[None, :] + np.cumsum(rows[:, 1], axis=0)
        c = {"greater": cge, "less": cle}.get(tail, np.minimum(cge, cle))
        reached = (c >= h) & (stop == 0)[None, :]
        for s in np.unique(np.argmax(reached, axis=0)[reached.any(axis=0)]):
            fires = reached[s] & ~reached[:s].any(axis=0)
            before = (cge[s - 1], cle[s - 1]) if s > 0 else (ge_c, le_c)
            state = (np.int32(first + s), *before, np.where(fires, 0, 1).astype(np.int64))
            state = _run_sequential(
                key,
                plan.data,
                plan.observed,
                plan.tol,
                state,
                np.int32(1),
                np.int64(n_total),
                alternative=tail,
                h=h,
                **static,
            )
            stop = np.where(fires, np.asarray(state[3]), stop)
        keep = stop == 0  # counts of stopped hypotheses are not used
        ge_c = np.where(keep, cge[-1], ge_c)
        le_c = np.where(keep, cle[-1], le_c)
        return bool(np.all(stop > 0))

    lanes = per_step * plan.draws
    run_chunks(run, n_steps, n_total, lanes, progress, what, n_dev=n_dev, cap=_SHARDED_STEPS)
    return _sequential_result(ge_c, le_c, stop, h, n_total, tail)
