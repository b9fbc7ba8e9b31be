"""The bootstrap's resamples: statistics of blocks of draws, and their dispatch.

Built-in statistics are computed from resample counts (:mod:`jaxtests.kernels.bootstrap`)
through per-statistic layouts, callables from materialised indices; blocks of draws
are dispatched in the engine's host-level chunks (progress, Ctrl-C), over every local
device, a share per process of a distributed run, and from one host thread per usable
core on one CPU device (:func:`distribution`, :func:`host_threads`);
the jackknife's leave-one-out statistics serve BCa's acceleration.
"""

import collections
import functools
import os
from concurrent import futures
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtests import _aot, _distributed, _engine
from jaxtests._buckets import pad_axis
from jaxtests._validation import to_device
from jaxtests.kernels import bootstrap as kboot
from jaxtests.kernels import measures as kmeasures

_BLOCK_ELEMENTS = 2**19  # indices per block of draws (2 MiB of them; 2^17-2^22 timed alike)
_THREADS_ENV = "JAXTESTS_HOST_THREADS"


# ----------------------------------------------------------------------------------------
# Kernels: statistics of a block of resamples, given as counts (built-in) or indices
# ----------------------------------------------------------------------------------------


def _auc_layout(y, s, size=None):
    """One score's layout for :func:`kboot.auc_parts`, on the host: ``(src_p, src_q, tie_src,
    tie_pos, tie_group)``.

    Sorted position ``p`` (ascending score, negatives first within a tie) sits at row
    ``p mod K``, column ``p // K`` of ``K = AUC_ROWS`` rows of ``m = ceil(n / K)``;
    ``src_p``/``src_q`` the observation of each slot, a positive/a negative (``n``, an
    always-empty count, otherwise), and the instances in tie groups (observation, positive,
    group number).
    """
    n = s.shape[0]
    padded = size is not None
    size = n if size is None else size  # a shape bucket's size: slot `size` is the empty one
    k = kboot.AUC_ROWS
    m = -(-size // k)
    positive = y > 0
    order = np.lexsort((positive, s))
    p = np.arange(n)
    slot = (p % k) * m + p // k
    src_p = np.full(k * m, size, np.int32)  # slot `size` of the counts: always 0
    src_q = np.full(k * m, size, np.int32)
    src_p[slot] = np.where(positive[order], order, size)
    src_q[slot] = np.where(positive[order], size, order)
    ss = s[order]
    group = np.cumsum(np.r_[True, ss[1:] != ss[:-1]]) - 1
    tied = np.bincount(group)[group] > 1
    tie_group = np.unique(group[tied], return_inverse=True)[1].astype(np.int32)
    tie_src = order[tied].astype(np.int32)
    tie_pos = positive[order][tied].astype(np.int32)
    if padded and tie_src.size:
        # Tied instances padded (empty slot, group 0) to a sixteenth, a quarter or all of
        # the size: at most four programs per size bucket (no ties, few, some, many),
        # whatever the data's tie count, for at most 1/16 of the size in extra gathers.
        t = next(c for c in (-(-size // 16), -(-size // 4), size) if c >= tie_src.size)
        tie_src = pad_axis(tie_src, t, value=size)
        tie_pos, tie_group = pad_axis(tie_pos, t), pad_axis(tie_group, t)
    return tuple(
        to_device(np.ascontiguousarray(a))
        for a in (src_p.reshape(k, m), src_q.reshape(k, m), tie_src, tie_pos, tie_group)
    )


def pads(stat):
    """Whether ``stat``'s samples are padded to shape buckets (a new size compiles nothing):
    every built-in statistic (the AUCs' score layouts and tie groups too); callables run
    at their exact size."""
    return not callable(stat)


def _columns(samples, live):
    """Each padded sample's live-observation mask ``(n_s,)`` and count (None, None: no
    padding), as two lists."""
    if live is None:
        return [None] * len(samples), [None] * len(samples)
    counts = [live[i] for i in range(len(samples))]
    cols = [jnp.arange(s.shape[0], dtype=live.dtype) < c for s, c in zip(samples, counts)]
    return cols, counts


def _masked_mean(x, col, n):
    """Mean over the last axis of the columns ``col`` (all when ``col`` is None)."""
    if col is None:
        return jnp.mean(x, axis=-1)
    return jnp.sum(jnp.where(col, x, 0), axis=-1) / n.astype(x.dtype)


def layouts(stat, samples, size=None):
    """The AUC statistics' score layouts (host arrays in, device arrays out); None otherwise.

    ``size``: the shape bucket the samples are padded to (None: their own size).
    """
    if callable(stat) or not stat.startswith("roc_auc"):
        return None
    y = np.asarray(samples[0])
    return tuple(_auc_layout(y, np.asarray(s), size) for s in samples[1:])


def _prepare(name, samples):
    """The measures' constants computed once from the data: the confusion cell of each instance."""
    if name in ("mean", "mean_difference") or name.startswith("roc_auc"):
        return None
    y = samples[0]
    cells = [kboot.confusion_slots(y, s) for s in samples[1:]]
    if len(cells) == 2:  # the joint cell of A and B: one scatter for both measures
        return ((4 * cells[0] + cells[1], 16),)
    return ((cells[0], 4),)


def _measure(name, cc):
    """A measure of the table from counts ``cc : (..., 4)`` (tp, fn, fp, tn), 0/0 NaN."""
    c = kmeasures.ConfusionCounts(cc[..., 0], cc[..., 1], cc[..., 2], cc[..., 3])
    return kmeasures.measure(name).of_binary(c, jnp.nan)


def _auc_dtype(n):
    """An integer type exact for twice the Mann-Whitney count of ``n`` draws (at most n^2 / 2)."""
    return jnp.int32 if n * n // 2 < 2**31 else jnp.int64


def _difference(vals):
    return vals[0] - vals[1] if len(vals) == 2 else vals[0]


def _from_slots(name, slot_counts, dtype):
    """A measure statistic from the prepared slot map's counts ``(R, S)``."""
    base = name.removesuffix("_difference")
    c = slot_counts[0].astype(dtype)
    if c.shape[-1] == 16:
        joint = c.reshape(c.shape[0], 4, 4)
        return _measure(base, jnp.sum(joint, axis=2)) - _measure(base, jnp.sum(joint, axis=1))
    return _measure(base, c)


def _from_weights(name, weights, samples, prep, layouts):
    """The built-in statistic of weighted observations (one ``(R, n_s)`` per sample; a
    shape bucket's padding has weight 0)."""
    if name == "mean":
        return kboot.weighted_mean(weights[0], samples[0])
    if name == "mean_difference":
        if weights[0] is weights[1]:  # paired: the mean of the differences (0 for a == b)
            return kboot.weighted_mean(weights[0], samples[0] - samples[1])
        return kboot.weighted_mean(weights[0], samples[0]) - kboot.weighted_mean(
            weights[1], samples[1]
        )
    dtype = samples[-1].dtype
    if name.startswith("roc_auc"):  # integer weights (the observed statistic's ones)
        w = jnp.pad(weights[0][0].astype(jnp.int32), (0, 1))  # slot n: empty
        dtype = _auc_dtype(weights[0].shape[-1])
        n = jnp.sum(w, dtype=dtype)  # the live observations (a bucket's padding weighs 0)
        vals = [kboot.auc_finish(*kboot.auc_parts(w, lay, dtype), n, dtype) for lay in layouts]
        return _difference(vals)[None]
    return _from_slots(name, [kboot.slot_weights(weights[0], sl, m) for sl, m in prep], dtype)


def _resample_block(stat, key, start, samples, prep, layouts, paired, draws, live):
    """Statistics of draws ``start .. start + draws - 1``: ``(draws,)``.

    ``live`` (traced ``(n_samples,)``, or None): the samples' observation counts when
    they are padded to shape buckets. Each live column draws the index it draws
    unpadded (the counters are the same), the padding's columns are masked out.
    """
    sizes = [s.shape[0] for s in samples]
    col, n_live = _columns(samples, live)
    if paired:
        idx = [kboot.draw_indices(key, start, draws, 0, sizes[0], n_live[0])] * len(samples)
    elif live is None:
        offsets = np.cumsum([0, *sizes[:-1]]).tolist()
        idx = [kboot.draw_indices(key, start, draws, o, n) for o, n in zip(offsets, sizes)]
    else:  # the counters of the unpadded samples: each starts after the live ones before it
        offsets = [jnp.sum(live[:i]) for i in range(len(samples))]
        idx = [
            kboot.draw_indices(key, start, draws, o, n, nl)
            for o, n, nl in zip(offsets, sizes, n_live)
        ]
    if callable(stat):
        xs = [s[i] for s, i in zip(samples, idx)]
        return jax.vmap(stat)(*xs)
    if stat == "mean":
        return _masked_mean(samples[0][idx[0]], col[0], n_live[0])
    if stat == "mean_difference":
        if paired:
            return _masked_mean((samples[0] - samples[1])[idx[0]], col[0], n_live[0])
        return _masked_mean(samples[0][idx[0]], col[0], n_live[0]) - _masked_mean(
            samples[1][idx[1]], col[1], n_live[1]
        )
    # AUC: counts of each observation in each score's layout; measures: per confusion cell
    # (exact integers)
    if stat.startswith("roc_auc"):
        n = sizes[0]
        if live is None:
            return _difference(kboot.auc_resamples(idx[0], n, layouts, _auc_dtype(n)))
        # the padding's draws go to slot n + 1, which no layout reads
        i = jnp.where(col[0], idx[0], jnp.uint32(n + 1))
        dtype = _auc_dtype(n)
        return _difference(kboot.auc_resamples(i, n, layouts, dtype, n_live[0].astype(dtype)))
    if live is None:
        counts = [kboot.slot_counts(sl[idx[0]], m) for sl, m in prep]
    else:  # the padding's draws go to an extra slot, dropped
        counts = [
            kboot.slot_counts(jnp.where(col[0], sl[idx[0]], m), m + 1)[:, :m] for sl, m in prep
        ]
    return _from_slots(stat, counts, samples[-1].dtype)


def _resample_blocks(stat, key, first, samples, layouts, paired, draws, n_blocks, live):
    """``n_blocks`` blocks of ``draws`` resamples from draw ``first``: ``(n_blocks draws,)``."""
    prep = None if callable(stat) else _prepare(stat, samples)

    def one(b):
        start = first + b.astype(jnp.int64) * draws
        return _resample_block(stat, key, start, samples, prep, layouts, paired, draws, live)

    return lax.map(one, jnp.arange(n_blocks)).reshape(-1)


def _observed(stat, samples, layouts, paired, live):
    if callable(stat):
        return stat(*samples)
    prep = _prepare(stat, samples)
    col, n = _columns(samples, live)
    if stat == "mean_difference" and paired:
        return _masked_mean(samples[0] - samples[1], col[0], n[0])
    dtype = samples[-1].dtype
    weights = [
        jnp.ones((1, s.shape[0]), dtype) if c is None else c[None, :].astype(dtype)
        for s, c in zip(samples, col)
    ]
    return _from_weights(stat, weights, samples, prep, layouts)[0]


def _jackknife_rows(stat, first, samples, which, paired, rows):
    """Leave-one-out statistics ``(rows,)`` of a callable: observations ``first ..`` of ``which``.

    Pure gathers of ``n - 1`` observations, vmapped.
    """
    n = samples[which].shape[0]
    i = kboot.jackknife_indices(first, rows, n)
    if paired:
        xs = [s[i] for s in samples]
    else:
        xs = [
            s[i] if j == which else jnp.broadcast_to(s, (rows, *s.shape))
            for j, s in enumerate(samples)
        ]
    return jax.vmap(stat)(*xs)


class _Programs(NamedTuple):
    resample_blocks: object
    observed: object
    jackknife_rows: object


def _jit(stat, options):
    """The jitted programs of a callable statistic ``stat``, bound in, compiled with
    ``options`` (:func:`jaxtests._aot.loop_options`)."""
    options = dict(options)
    return _Programs(
        jax.jit(
            functools.partial(_resample_blocks, stat),
            static_argnames=("paired", "draws", "n_blocks"),
            compiler_options=options,
        ),
        jax.jit(
            functools.partial(_observed, stat),
            static_argnames=("paired",),
            compiler_options=options,
        ),
        jax.jit(
            functools.partial(_jackknife_rows, stat),
            static_argnames=("which", "paired", "rows"),
            compiler_options=options,
        ),
    )


def _builtin_blocks(key, first, samples, layouts, live, *, stat, paired, draws, n_blocks):
    return _resample_blocks(stat, key, first, samples, layouts, paired, draws, n_blocks, live)


def _builtin_observed(samples, layouts, live, *, stat, paired):
    return _observed(stat, samples, layouts, paired, live)


# A built-in statistic's name is a static argument of one set of programs, called through
# the programs kept on disk (jaxtests._aot: a later process neither traces nor lowers them).
_BUILTIN_BLOCKS = jax.jit(_builtin_blocks, static_argnames=("stat", "paired", "draws", "n_blocks"))
_BUILTIN_OBSERVED = jax.jit(_builtin_observed, static_argnames=("stat", "paired"))
# A callable's programs, the most recently used first out last: jit keyed by a static
# callable kept every new lambda's programs (7.6 MB a call) for the life of the process.
_CALLABLE_PROGRAMS = collections.OrderedDict()
MAX_CALLABLE_PROGRAMS = 8


def _programs(stat):
    # XLA:CPU's loop emitters: the same bits, and 1.3-35x faster here than its fusion
    # emitters for a user's statistic (a gather of every resample; bench/RESULTS.md)
    options = tuple(sorted(_aot.loop_options().items()))
    progs = _CALLABLE_PROGRAMS.pop((stat, options), None) or _jit(stat, options)
    _CALLABLE_PROGRAMS[(stat, options)] = progs
    while len(_CALLABLE_PROGRAMS) > MAX_CALLABLE_PROGRAMS:
        _CALLABLE_PROGRAMS.popitem(last=False)
    return progs


def _run(stat, method, *args, **kwargs):
    """A callable's program ``method`` run, with the loop emitters where this jaxlib has them
    (:func:`jaxtests._aot.quick_or`: without them, its programs are jitted again without)."""

    def run():
        return getattr(_programs(stat), method)(*args, **kwargs)

    return _aot.quick_or(run, run)


def resample_blocks(key, first, samples, layouts, stat, paired, draws, n_blocks, live=None):
    """``n_blocks`` blocks of ``draws`` resamples from draw ``first``: ``(n_blocks draws,)``,
    on the device the samples are on (its own stored program: :func:`jaxtests._aot.call`)."""
    if not callable(stat):
        static = {"stat": stat, "paired": paired, "draws": draws, "n_blocks": n_blocks}
        args = (key, first, samples, layouts, live)
        work = draws * n_blocks * sum(int(np.size(s)) for s in samples)
        return _aot.call(
            _BUILTIN_BLOCKS, "bootstrap_draws._builtin_blocks", args, static, work=work
        )
    return _run(
        stat,
        "resample_blocks",
        key,
        first,
        samples,
        layouts,
        paired=paired,
        draws=draws,
        n_blocks=n_blocks,
        live=live,
    )


def observed(samples, layouts, stat, paired, live=None):
    """The statistic of the original samples."""
    if not callable(stat):
        static = {"stat": stat, "paired": paired}
        args = (samples, layouts, live)
        work = sum(int(np.size(s)) for s in samples)
        return _aot.call(
            _BUILTIN_OBSERVED, "bootstrap_draws._builtin_observed", args, static, work=work
        )
    return _run(stat, "observed", samples, layouts, paired=paired, live=live)


def _jackknife_block(first, samples, stat, which, paired, rows):
    return _run(stat, "jackknife_rows", first, samples, which=which, paired=paired, rows=rows)


def _loo_mean(x, col=None, n=None):
    """Leave-one-out means of ``x`` (of its columns ``col`` out of ``n``, when padded)."""
    if col is None:
        return (jnp.sum(x) - x) / (x.shape[0] - 1)
    return (jnp.sum(jnp.where(col, x, 0)) - x) / (n - 1).astype(x.dtype)


def _loo_auc(y, s):
    """Leave-one-out AUCs ``(n,)`` from DeLong's placements: dropping a positive removes
    its ``n_neg v10`` pairs won, a negative its ``n_pos v01`` pairs lost."""
    auc, v10, v01 = kboot.delong_placements(y, s[None, :])
    auc, v10, v01 = auc[0], v10[0], v01[0]
    pos = y > 0
    n_pos = jnp.sum(pos).astype(s.dtype)
    n_neg = jnp.sum(y < 0).astype(s.dtype)  # y = 0: a shape bucket's padding
    u = auc * n_pos * n_neg
    with_pos = (u - n_neg * v10) / ((n_pos - 1) * n_neg)
    with_neg = (u - n_pos * v01) / (n_pos * (n_neg - 1))
    return jnp.where(pos, with_pos, with_neg)


@functools.partial(jax.jit, static_argnames=("stat", "which", "paired"))
def _jackknife_builtin(samples, live=None, *, stat, which, paired):
    """Leave-one-out statistics ``(n_which,)`` of a built-in statistic, in closed form
    (padded samples: the padding's entries are meaningless, sliced off by the caller)."""
    col, n = _columns(samples, live)

    if stat == "mean":
        return _loo_mean(samples[0], col[0], n[0])
    if stat == "mean_difference":
        a, b = samples
        if paired:
            return _loo_mean(a - b, col[0], n[0])
        if which == 0:
            return _loo_mean(a, col[0], n[0]) - _masked_mean(b, col[1], n[1])
        return _masked_mean(a, col[0], n[0]) - _loo_mean(b, col[1], n[1])
    y = samples[0]
    if stat.startswith("roc_auc"):
        vals = [_loo_auc(y, s) for s in samples[1:]]
        return vals[0] - vals[1] if len(vals) == 2 else vals[0]
    # measures: the confusion cells less the left-out instance's own cell
    dtype = samples[-1].dtype
    ((slot, m),) = _prepare(stat, samples)
    if col[0] is None:
        total = jnp.zeros((m,), dtype).at[slot].add(1)
    else:  # the padding counts in an extra cell, dropped
        total = jnp.zeros((m + 1,), dtype).at[jnp.where(col[0], slot, m)].add(1)[:m]
    counts = total[None, :] - jax.nn.one_hot(slot, m, dtype=dtype)
    return _from_slots(stat, [counts], dtype)


# ----------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------
# Orchestration
# ----------------------------------------------------------------------------------------


def block_draws(samples, paired):
    """Draws per block: about ``_BLOCK_ELEMENTS`` indices, a power of two in [1, 256]."""
    per_draw = samples[0].shape[0] if paired else sum(s.shape[0] for s in samples)
    r = 256
    while r > 1 and r * per_draw > _BLOCK_ELEMENTS:
        r //= 2
    return r


def host_threads(stat, samples):
    """Dispatches in flight at once: one per usable core for a built-in statistic on the CPU.

    XLA:CPU runs one program's ``lax.map`` of blocks on one thread, so two dispatches of
    different blocks from two threads run on two cores (1.9-2.5x measured with 2 cores). Each
    dispatch writes its own slice of the distribution: the result does not depend on the
    number of threads. Only the built-in statistics' programs, which were stress-tested
    from two threads (24,000 dispatches each of the AUC and accuracy differences, no
    hang): with jax 0.10.2 two threads hung other programs (README, development notes), and
    a callable may be any program. An accelerator queues dispatches on its own stream.
    ``JAXTESTS_HOST_THREADS`` caps the count (``1``: one dispatch at a time).
    """
    if callable(stat) or samples[0].devices().pop().platform != "cpu":
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    cap = os.environ.get(_THREADS_ENV, "").strip()
    if cap:
        if not cap.isdigit() or int(cap) < 1:
            raise ValueError(f"{_THREADS_ENV}={cap!r} is not a positive whole number")
        cores = min(cores, int(cap))
    return max(1, cores)


def _statistic_name(stat):
    """A statistic's name, the same in every process (a callable's ``repr`` holds its address)."""
    if not callable(stat):
        return stat
    return f"{getattr(stat, '__module__', '')}.{getattr(stat, '__qualname__', type(stat).__name__)}"


def distribution(
    stat, key, samples, layouts, paired, n_resamples, batch_size, live=None, progress=None
):
    """The bootstrap distribution ``(n_resamples,)`` float64, computed in fixed blocks
    (``live``: the observation counts of samples padded to shape buckets, or None).

    The draws come in steps of ``per_call`` blocks of :func:`block_draws` draws, one
    dispatch each (``batch_size`` sets ``per_call``), and a step's draws depend on their
    indices only, so each dispatch writes its own slice of the distribution and no way of
    spreading the steps changes a bit:

    - several processes (:mod:`jaxtests._distributed`): each computes a contiguous share
      of the steps (:func:`jaxtests._distributed.share`), and the slices are gathered in
      draw order on every process; ``WORK["resamples"]`` counts a process's own.
    - several local devices of the samples' backend: the samples, layouts and key are
      copied once to each, and the steps of each host-level chunk are dealt out in
      contiguous runs, one a device, dispatched asynchronously from the calling thread
      (two in flight a device). Each device runs its own compiled copy of a program
      (stored on disk like the first one's: :func:`jaxtests._aot.call` keys by device).
    - one device, a built-in statistic on the CPU: one dispatch per usable core from a
      pool of host threads (:func:`host_threads`).

    The dispatches run in the engine's host-level chunks sized by time
    (:func:`jaxtests._engine.run_chunks`): ``progress(done, n_resamples)`` after each
    chunk and Ctrl-C between chunks.
    """
    draws = block_draws(samples, paired)
    # Blocks per dispatch, whatever n_resamples (one program per data size; surplus draws of
    # the last dispatch are dropped)
    per_call = max(1, (batch_size or 8 * draws) // draws)
    step_draws = per_call * draws
    n_blocks = -(-n_resamples // draws)
    n_steps = -(-n_blocks // per_call)
    # Every process must run the same call: slices of different data would join silently.
    _distributed.same_call(
        samples,
        layouts,
        live,
        (_statistic_name(stat), paired, n_resamples, draws, per_call),
        jax.random.key_data(key),
    )
    lo, hi = _distributed.share(n_steps)  # this process's steps (all of them with one)
    n_local = hi - lo
    # Every process runs as many chunks (their sizes are agreed collectively), its steps
    # past its share skipped.
    span = -(-n_steps // jax.process_count())
    offset = lo * step_draws  # this process's first draw
    out = np.empty(max(0, min(n_resamples, hi * step_draws) - offset), np.float64)
    devices = _distributed.local_devices(samples[0])
    lanes = _distributed.agree(min(len(devices), span))  # every process's chunk layout
    copies = _distributed.replicas((key, samples, layouts, live), devices[:lanes])

    def launch(step, lane=0):
        """Start local step ``step`` on lane ``lane``'s device; its values (maybe unfinished)."""
        c = lane % len(copies)  # a process with fewer devices than process 0: lanes share
        k, s, lay, lv = copies[c]
        first = np.int64((lo + step) * step_draws)
        return resample_blocks(k, first, s, lay, stat, paired, draws, per_call, lv)

    def land(step, vals):
        vals = np.asarray(vals)
        a = step * step_draws
        b = min(out.size, a + vals.size)
        out[a:b] = vals[: b - a]

    def dispatch(step):
        land(step, launch(step))

    threads = 1 if lanes > 1 else min(host_threads(stat, samples), span - 1)
    pool = None
    if threads > 1:
        # the first chunk is one dispatch: it compiles once (threads would each trace it).
        # JAX's precision and default device are thread-local (jaxtests computes inside a
        # scoped enable_x64): a worker thread starts from the global settings, where the
        # same call would be traced again in float32, or run on another device.
        x64_on = bool(jax.config.jax_enable_x64)
        device = devices[0]

        def in_caller_precision(step):
            with jax.enable_x64(x64_on), jax.default_device(device):
                dispatch(step)

        pool = futures.ThreadPoolExecutor(threads, thread_name_prefix="jaxtests-bootstrap")

    def run(first, n_run):
        steps = range(first, min(first + n_run * lanes, n_local))
        if lanes > 1:
            # steps first + i n_run + j on lane i (run_chunks' layout), started across the
            # devices so that every one works at once; read back in the order started
            order = [(first + i * n_run + j, i) for j in range(n_run) for i in range(lanes)]
            _distributed.dealt(
                [(step, i) for step, i in order if step < n_local],
                lanes,
                lambda item: (item[0], launch(*item)),
                lambda started: land(*started),
            )
            return
        if pool is None or n_run == 1:
            for step in steps:
                dispatch(step)
            return
        pending = collections.deque()  # at most two dispatches a thread: memory stays flat
        for step in steps:
            if len(pending) == 2 * threads:
                pending.popleft().result()  # raises the first error
            pending.append(pool.submit(in_caller_precision, step))
        while pending:
            pending.popleft().result()

    what = f"This bootstrap ({n_resamples:,} resamples)"
    # progress counts the whole run: each local step stands for one of every process's
    per_step = step_draws * jax.process_count()
    try:
        _engine.run_chunks(run, span, n_resamples, per_step, progress, what, n_dev=lanes)
    finally:  # an interrupt or an error cancels the dispatches not started
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    _distributed.WORK["resamples"] += out.size
    return _distributed.gather_rows(out)


def jackknife(stat, samples, paired, live=None):
    """Leave-one-out statistics, one array per resampled sample (one when paired)."""
    which = [0] if paired else list(range(len(samples)))
    if not callable(stat):
        out = [
            np.asarray(
                _aot.call(
                    _jackknife_builtin,
                    "bootstrap_draws._jackknife_builtin",
                    (samples, live),
                    {"stat": stat, "which": j, "paired": paired},
                    work=int(np.size(samples[j])) ** 2,
                )
            )
            for j in which
        ]
        return out if live is None else [o[: int(live[j])] for o, j in zip(out, which)]
    out = []
    for j in which:
        n = samples[j].shape[0]
        rows = max(1, min(n, _BLOCK_ELEMENTS // n))
        vals = [
            np.asarray(_jackknife_block(jnp.asarray(f), samples, stat, j, paired, rows))
            for f in range(0, n, rows)
        ]
        out.append(np.concatenate(vals)[:n])
    return out
