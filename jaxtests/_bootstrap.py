"""Bootstrap confidence intervals (percentile, basic, BCa) and the paired bootstrap test.

The conventions are ``scipy.stats.bootstrap``'s: resamples of the observations
(of all samples together when ``paired``, of each sample independently
otherwise), the bootstrap distribution's ``"linear"`` quantiles, BCa with scipy's
jackknife acceleration (Efron & Tibshirani 1993, 14.3 and eq. 15.36) and
``percentileofscore(kind="mean")`` bias correction, ``standard_error`` the
distribution's standard deviation with ``ddof=1``. The draws come from
:mod:`jaxtests.kernels.bootstrap`: the same key gives the same resamples for any
``batch_size``.
"""

import collections
import functools
import math
import os
import warnings
from concurrent import futures
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtests import _pvalues
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests._validation import (
    as_float_array,
    as_int_scalar,
    as_label_array,
    check_alternative,
    check_choice,
    check_probability,
    normalize_axis,
)
from jaxtests.kernels import bootstrap as kboot
from jaxtests.kernels import measures as kmeasures

__all__ = [
    "MAX_RESAMPLES",
    "BootstrapResult",
    "BootstrapTestResult",
    "ConfidenceInterval",
    "bootstrap",
    "bootstrap_test",
]

METHODS = ("percentile", "basic", "BCa")
# The bootstrap distribution is kept (its quantiles give the interval): 8 bytes a resample
# per test; 10^8 resamples are 800 MB.
MAX_RESAMPLES = 10**8
_BLOCK_ELEMENTS = 2**19  # indices per block of draws (2 MiB of them; 2^17-2^22 timed alike)
_THREADS_ENV = "JAXTESTS_HOST_THREADS"
_MEASURES = ("accuracy", "error", "tpr", "recall", "fpr", "precision", "f1")


class ConfidenceInterval(NamedTuple):
    """Lower and upper confidence bounds (scipy's ``ConfidenceInterval``)."""

    low: np.ndarray
    high: np.ndarray


class _Spec(NamedTuple):
    """A built-in statistic: samples it takes, whether they are labels/scores, paired only."""

    n_samples: int
    paired_only: bool
    roles: tuple  # "x", "y" (labels) or "s" (scores/decision values) per sample


def _builtin_specs():
    specs = {
        "mean": _Spec(1, False, ("x",)),
        "mean_difference": _Spec(2, False, ("x", "x")),
        "roc_auc": _Spec(2, True, ("y", "s")),
        "roc_auc_difference": _Spec(3, True, ("y", "s", "s")),
    }
    for m in _MEASURES:
        specs[m] = _Spec(2, True, ("y", "s"))
        specs[f"{m}_difference"] = _Spec(3, True, ("y", "s", "s"))
    return specs


STATISTICS = _builtin_specs()
# Measures whose paired difference is built in (``f"{m}_difference"``), for callers that name
# a measure (CVResult.bootstrap, the CLI)
DIFFERENCE_MEASURES = ("roc_auc", *_MEASURES)


@result
class BootstrapResult:
    """Result of :func:`bootstrap` (scipy's ``BootstrapResult`` fields, and more).

    Attributes
    ----------
    confidence_interval : ConfidenceInterval
        ``low`` and ``high`` (``-inf``/``+inf`` on the open side of a one-sided interval).
    standard_error : array
        Standard deviation (``ddof=1``) of the bootstrap distribution.
    statistic : array
        The statistic of the original data.
    bootstrap_distribution : array or None
        ``(..., n_resamples)``, with ``return_distribution=True``.
    bias_correction, acceleration : array or None
        BCa's ``z0`` and jackknife ``a`` (None for the other methods).
    method, confidence_level, alternative, n_resamples, seed, paired
    """

    confidence_interval: ConfidenceInterval
    standard_error: jax.Array
    statistic: jax.Array
    bootstrap_distribution: jax.Array | None = None
    bias_correction: jax.Array | None = None
    acceleration: jax.Array | None = None
    method: str = static_field(default="BCa")
    confidence_level: float = static_field(default=0.95)
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=9999)
    seed: object = static_field(default=None)
    paired: bool = static_field(default=True)


@result
class BootstrapTestResult:
    """Result of :func:`bootstrap_test`: a p-value of "no difference" and an interval.

    Attributes
    ----------
    statistic : array
        The observed difference.
    pvalue : array
        ``(b + 1) / (B + 1)`` from the shifted bootstrap distribution (see :func:`bootstrap_test`).
    confidence_interval : ConfidenceInterval
        The bootstrap interval of the difference (``method``).
    standard_error : array
    n_extreme : array
        ``b``: resamples at least as extreme as the observed difference under the shifted null.
    bootstrap_distribution : array or None
    method, confidence_level, alternative, n_resamples, seed
    """

    statistic: jax.Array
    pvalue: jax.Array
    confidence_interval: ConfidenceInterval
    standard_error: jax.Array
    n_extreme: jax.Array
    bootstrap_distribution: jax.Array | None = None
    method: str = static_field(default="BCa")
    confidence_level: float = static_field(default=0.95)
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=9999)
    seed: object = static_field(default=None)


# ----------------------------------------------------------------------------------------
# Kernels: statistics of a block of resamples, given as counts (built-in) or indices
# ----------------------------------------------------------------------------------------


def _auc_layout(y, s):
    """One score's layout for :func:`kboot.auc_parts`, on the host: ``(src_p, src_q, tie_src,
    tie_pos, tie_group)``.

    Sorted position ``p`` (ascending score, negatives first within a tie) sits at row
    ``p mod K``, column ``p // K`` of ``K = AUC_ROWS`` rows of ``m = ceil(n / K)``;
    ``src_p``/``src_q`` the observation of each slot, a positive/a negative (``n``, an
    always-empty count, otherwise), and the instances in tie groups (observation, positive,
    group number).
    """
    n = s.shape[0]
    k = kboot.AUC_ROWS
    m = -(-n // k)
    positive = y > 0
    order = np.lexsort((positive, s))
    p = np.arange(n)
    slot = (p % k) * m + p // k
    src_p = np.full(k * m, n, np.int32)  # slot n of the counts: always 0
    src_q = np.full(k * m, n, np.int32)
    src_p[slot] = np.where(positive[order], order, n)
    src_q[slot] = np.where(positive[order], n, order)
    ss = s[order]
    group = np.cumsum(np.r_[True, ss[1:] != ss[:-1]]) - 1
    tied = np.bincount(group)[group] > 1
    tie_group = np.unique(group[tied], return_inverse=True)[1].astype(np.int32)
    return (
        jnp.asarray(src_p.reshape(k, m)),
        jnp.asarray(src_q.reshape(k, m)),
        jnp.asarray(order[tied].astype(np.int32)),
        jnp.asarray(positive[order][tied].astype(np.int32)),
        jnp.asarray(tie_group.reshape(-1)),
    )


def _layouts(stat, samples):
    """The AUC statistics' score layouts (host arrays in, device arrays out); None otherwise."""
    if callable(stat) or not stat.startswith("roc_auc"):
        return None
    y = np.asarray(samples[0])
    return tuple(_auc_layout(y, np.asarray(s)) for s in samples[1:])


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
    """The built-in statistic of weighted observations (one ``(R, n_s)`` per sample)."""
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
        n = weights[0].shape[-1]
        dtype = _auc_dtype(n)
        vals = [kboot.auc_finish(*kboot.auc_parts(w, lay, dtype), n, dtype) for lay in layouts]
        return _difference(vals)[None]
    return _from_slots(name, [kboot.slot_weights(weights[0], sl, m) for sl, m in prep], dtype)


def _resample_block(stat, key, start, samples, prep, layouts, paired, draws):
    """Statistics of draws ``start .. start + draws - 1``: ``(draws,)``."""
    sizes = [s.shape[0] for s in samples]
    if paired:
        idx = [kboot.draw_indices(key, start, draws, 0, sizes[0])] * len(samples)
    else:
        offsets = np.cumsum([0, *sizes[:-1]]).tolist()
        idx = [kboot.draw_indices(key, start, draws, o, n) for o, n in zip(offsets, sizes)]
    if callable(stat):
        xs = [s[i] for s, i in zip(samples, idx)]
        return jax.vmap(stat)(*xs)
    if stat == "mean":
        return jnp.mean(samples[0][idx[0]], axis=-1)
    if stat == "mean_difference":
        if paired:
            return jnp.mean((samples[0] - samples[1])[idx[0]], axis=-1)
        return jnp.mean(samples[0][idx[0]], axis=-1) - jnp.mean(samples[1][idx[1]], axis=-1)
    # AUC: counts of each observation in each score's layout; measures: per confusion cell
    # (exact integers)
    if stat.startswith("roc_auc"):
        n = sizes[0]
        return _difference(kboot.auc_resamples(idx[0], n, layouts, _auc_dtype(n)))
    counts = [kboot.slot_counts(sl[idx[0]], m) for sl, m in prep]
    return _from_slots(stat, counts, samples[-1].dtype)


@functools.partial(jax.jit, static_argnames=("stat", "paired", "draws", "n_blocks"))
def _resample_blocks(key, first, samples, layouts, stat, paired, draws, n_blocks):
    """``n_blocks`` blocks of ``draws`` resamples from draw ``first``: ``(n_blocks draws,)``."""
    prep = None if callable(stat) else _prepare(stat, samples)

    def one(b):
        start = first + b.astype(jnp.int64) * draws
        return _resample_block(stat, key, start, samples, prep, layouts, paired, draws)

    return lax.map(one, jnp.arange(n_blocks)).reshape(-1)


@functools.partial(jax.jit, static_argnames=("stat", "paired"))
def _observed(samples, layouts, stat, paired):
    if callable(stat):
        return stat(*samples)
    prep = _prepare(stat, samples)
    if stat == "mean_difference" and paired:
        return jnp.mean(samples[0] - samples[1])
    weights = [jnp.ones((1, s.shape[0]), samples[-1].dtype) for s in samples]
    return _from_weights(stat, weights, samples, prep, layouts)[0]


@functools.partial(jax.jit, static_argnames=("stat", "which", "paired", "rows"))
def _jackknife_block(first, samples, stat, which, paired, rows):
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


def _loo_mean(x):
    return (jnp.sum(x) - x) / (x.shape[0] - 1)


def _loo_auc(y, s):
    """Leave-one-out AUCs ``(n,)`` from DeLong's placements: dropping a positive removes
    its ``n_neg v10`` pairs won, a negative its ``n_pos v01`` pairs lost."""
    auc, v10, v01 = kboot.delong_placements(y, s[None, :])
    auc, v10, v01 = auc[0], v10[0], v01[0]
    pos = y > 0
    n_pos = jnp.sum(pos).astype(s.dtype)
    n_neg = y.shape[0] - n_pos
    u = auc * n_pos * n_neg
    with_pos = (u - n_neg * v10) / ((n_pos - 1) * n_neg)
    with_neg = (u - n_pos * v01) / (n_pos * (n_neg - 1))
    return jnp.where(pos, with_pos, with_neg)


@functools.partial(jax.jit, static_argnames=("stat", "which", "paired"))
def _jackknife_builtin(samples, stat, which, paired):
    """Leave-one-out statistics ``(n_which,)`` of a built-in statistic, in closed form."""
    if stat == "mean":
        return _loo_mean(samples[0])
    if stat == "mean_difference":
        a, b = samples
        if paired:
            return _loo_mean(a - b)
        return _loo_mean(a) - jnp.mean(b) if which == 0 else jnp.mean(a) - _loo_mean(b)
    y = samples[0]
    if stat.startswith("roc_auc"):
        vals = [_loo_auc(y, s) for s in samples[1:]]
        return vals[0] - vals[1] if len(vals) == 2 else vals[0]
    # measures: the confusion cells less the left-out instance's own cell
    dtype = samples[-1].dtype
    ((slot, m),) = _prepare(stat, samples)
    total = jnp.zeros((m,), dtype).at[slot].add(1)
    counts = total[None, :] - jax.nn.one_hot(slot, m, dtype=dtype)
    return _from_slots(stat, [counts], dtype)


# ----------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------


def _statistic_iv(statistic):
    if callable(statistic):
        return statistic
    if not isinstance(statistic, str):
        raise TypeError(
            f"`statistic` must be a callable or the name of a built-in statistic, got "
            f"{type(statistic).__name__}."
        )
    return check_choice(statistic, "statistic", tuple(STATISTICS))


def _data_iv(data, statistic, paired, axis):
    if isinstance(data, np.ndarray | jax.Array) or not isinstance(data, list | tuple):
        raise TypeError(
            "`data` must be a sequence of samples (a tuple or list of arrays), e.g. `(x,)` for "
            f"one sample; got {type(data).__name__}."
        )
    if len(data) == 0:
        raise ValueError("`data` must hold at least one sample.")
    if not isinstance(paired, bool | np.bool_):
        raise TypeError(f"`paired` must be a bool, got {type(paired).__name__}.")
    spec = STATISTICS.get(statistic) if isinstance(statistic, str) else None
    if spec is not None:
        if len(data) != spec.n_samples:
            raise ValueError(
                f"`statistic`={statistic!r} takes {spec.n_samples} sample(s) in `data` "
                f"({', '.join(_ROLE_NAMES[r] for r in spec.roles)}), got {len(data)}."
            )
        if spec.paired_only and not paired:
            raise ValueError(
                f"`statistic`={statistic!r} reads labels and scores of the same instances: "
                "it needs `paired=True`."
            )
    arrays = []
    for i, (x, role) in enumerate(
        zip(data, spec.roles if spec is not None else ("x",) * len(data))
    ):
        name = f"data[{i}]"
        if role == "y":
            a = np.asarray(x) if not isinstance(x, jax.Array) else x
            if a.ndim < 1:
                raise ValueError(f"`{name}` must have at least 1 dimension, got a scalar.")
            arrays.append(as_label_array(a, name))
        else:
            arrays.append(as_float_array(x, name, min_ndim=1))
    ndim = arrays[0].ndim
    axis = normalize_axis(axis, ndim)
    arrays = [np.moveaxis(np.asarray(a), axis, -1) if a.ndim == ndim else a for a in arrays]
    batch = arrays[0].shape[:-1]
    for i, a in enumerate(arrays):
        if a.ndim != ndim or a.shape[:-1] != batch:
            raise ValueError(
                f"`data[{i}]` has shape {tuple(a.shape)}; every sample must have the batch "
                f"shape {tuple(batch)} of `data[0]` besides its `axis`."
            )
        if a.shape[-1] < 2:
            raise ValueError(
                f"`data[{i}]` has {a.shape[-1]} observation(s) along `axis`: a bootstrap needs "
                "at least 2 (scipy's rule)."
            )
        if paired and a.shape[-1] != arrays[0].shape[-1]:
            raise ValueError(
                f"paired samples must have the same number of observations: `data[0]` has "
                f"{arrays[0].shape[-1]}, `data[{i}]` {a.shape[-1]}."
            )
        if a.shape[-1] >= 2**31:
            raise ValueError(f"`data[{i}]` has too many observations (at most 2^31 - 1).")
    return arrays, batch


_ROLE_NAMES = {"x": "values", "y": "true labels", "s": "scores"}


class _Options(NamedTuple):
    n_resamples: int
    confidence_level: float
    method: str
    alternative: str
    key: object
    seed: object
    batch_size: int | None
    return_distribution: bool


def _options_iv(
    n_resamples, confidence_level, method, alternative, key, batch_size, return_distribution
):
    n_resamples = as_int_scalar(n_resamples, "n_resamples", minimum=1)
    if n_resamples > MAX_RESAMPLES:
        raise ValueError(
            f"`n_resamples`={n_resamples} exceeds {MAX_RESAMPLES:,}: the bootstrap distribution "
            "(8 bytes a resample) is kept to take its quantiles."
        )
    confidence_level = check_probability(confidence_level, "confidence_level")
    if isinstance(method, str) and method.lower() == "bca":
        method = "BCa"
    check_choice(method, "method", METHODS)
    check_alternative(alternative)
    if batch_size is not None:
        batch_size = as_int_scalar(batch_size, "batch_size", minimum=1)
    if not isinstance(return_distribution, bool | np.bool_):
        raise TypeError(
            f"`return_distribution` must be a bool, got {type(return_distribution).__name__}."
        )
    key, seed = resolve_key(key)
    return _Options(
        n_resamples,
        confidence_level,
        method,
        alternative,
        key,
        seed,
        batch_size,
        bool(return_distribution),
    )


# ----------------------------------------------------------------------------------------
# Orchestration
# ----------------------------------------------------------------------------------------


def _block_draws(samples, paired):
    """Draws per block: about ``_BLOCK_ELEMENTS`` indices, a power of two in [1, 256]."""
    per_draw = samples[0].shape[0] if paired else sum(s.shape[0] for s in samples)
    r = 256
    while r > 1 and r * per_draw > _BLOCK_ELEMENTS:
        r //= 2
    return r


def _host_threads(stat, samples):
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


def _distribution(stat, key, samples, layouts, paired, n_resamples, batch_size):
    """The bootstrap distribution ``(n_resamples,)`` float64, computed in fixed blocks."""
    draws = _block_draws(samples, paired)
    # Blocks per dispatch, whatever n_resamples (one program per data size; surplus draws of
    # the last dispatch are dropped)
    per_call = max(1, (batch_size or 8 * draws) // draws)
    n_blocks = -(-n_resamples // draws)
    out = np.empty(n_resamples, np.float64)

    def dispatch(b):
        first = jnp.asarray(b * draws, jnp.int64)
        vals = np.asarray(
            _resample_blocks(key, first, samples, layouts, stat, paired, draws, per_call)
        )
        lo = b * draws
        hi = min(n_resamples, lo + vals.size)
        out[lo:hi] = vals[: hi - lo]

    starts = range(0, n_blocks, per_call)
    dispatch(starts[0])  # compiles once, here (threads would each trace the first call)
    threads = min(_host_threads(stat, samples), len(starts) - 1)
    if threads <= 1:
        for b in starts[1:]:
            dispatch(b)
        return out
    # JAX's precision and default device are thread-local (jaxtests computes inside a
    # scoped enable_x64): a worker thread starts from the global settings, where the same
    # call would be traced again in float32, or run on another device.
    x64_on = bool(jax.config.jax_enable_x64)
    device = samples[0].devices().pop()

    def in_caller_precision(b):
        with jax.enable_x64(x64_on), jax.default_device(device):
            dispatch(b)

    pool = futures.ThreadPoolExecutor(threads, thread_name_prefix="jaxtests-bootstrap")
    pending = collections.deque()  # at most two dispatches a thread: memory stays flat
    try:
        for b in starts[1:]:
            if len(pending) == 2 * threads:
                pending.popleft().result()  # raises the first error
            pending.append(pool.submit(in_caller_precision, b))
        while pending:
            pending.popleft().result()
    finally:  # an interrupt or an error cancels the dispatches not started
        pool.shutdown(wait=True, cancel_futures=True)
    return out


def _jackknife(stat, samples, paired):
    """Leave-one-out statistics, one array per resampled sample (one when paired)."""
    which = [0] if paired else list(range(len(samples)))
    if not callable(stat):
        return [np.asarray(_jackknife_builtin(samples, stat, j, paired)) for j in which]
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


def _acceleration(theta_ji):
    """scipy's jackknife acceleration: ``sum U^3 / n_j^3 / 6 (sum U^2 / n_j^2)^1.5``."""
    nums, dens = 0.0, 0.0
    for t in theta_ji:
        n = float(t.size)
        u = (n - 1) * (np.mean(t) - t)
        nums = nums + np.sum(u**3) / n**3
        dens = dens + np.sum(u**2) / n**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1 / 6 * nums / dens ** (3 / 2)


def _quantiles(dist, probs):
    """``"linear"`` quantiles of the distribution (NaN for a NaN probability or distribution)."""
    probs = np.asarray(probs, np.float64)
    out = np.full(probs.shape, np.nan)
    if np.isnan(dist).any():
        return out
    ok = np.isfinite(probs)
    if ok.any():
        out[ok] = np.quantile(dist, probs[ok], method="linear")
    return out


def _interval(dist, theta_hat, stat, samples, paired, opts):
    """``(low, high, z0, a)`` of one test from its distribution."""
    from scipy import special

    level = opts.confidence_level
    alpha = (1 - level) / 2 if opts.alternative == "two-sided" else 1 - level
    z0 = a = None
    if opts.method == "BCa":
        b = dist.size
        z0 = special.ndtri((np.sum(dist < theta_hat) + np.sum(dist <= theta_hat)) / (2 * b))
        a = _acceleration(_jackknife(stat, samples, paired))
        z_a = float(special.ndtri(alpha))
        with np.errstate(invalid="ignore", divide="ignore"):
            n1, n2 = z0 + z_a, z0 - z_a
            probs = (special.ndtr(z0 + n1 / (1 - a * n1)), special.ndtr(z0 + n2 / (1 - a * n2)))
    else:
        probs = (alpha, 1 - alpha)
    low, high = _quantiles(dist, probs)
    if opts.method == "basic":
        low, high = 2 * theta_hat - high, 2 * theta_hat - low
    if opts.alternative == "less":
        low = -np.inf
    elif opts.alternative == "greater":
        high = np.inf
    return low, high, z0, a


def _warn_undefined(dist):
    bad = int(np.isnan(dist).sum())
    if bad:
        warnings.warn(
            f"the statistic is undefined (NaN) on {bad} of {dist.size} resamples (e.g. an AUC "
            "of a resample without both classes): the interval is NaN, as scipy's.",
            RuntimeWarning,
            stacklevel=4,
        )


def _run(data, statistic, paired, axis, opts):
    """Per test of the batch: ``(theta_hat, dist, low, high, z0, a)`` lists."""
    stat = _statistic_iv(statistic)
    arrays, batch = _data_iv(data, stat, paired, axis)
    h = math.prod(batch)
    # sliced on the host: eager jnp indexing compiles a program per shape
    flat = [np.asarray(a).reshape((h, a.shape[-1])) for a in arrays]
    rows = []
    for t in range(h):
        samples = tuple(jnp.asarray(a[t]) for a in flat)
        layouts = _layouts(stat, [a[t] for a in flat])
        theta_hat = float(_observed(samples, layouts, stat, bool(paired)))
        dist = _distribution(
            stat, opts.key, samples, layouts, bool(paired), opts.n_resamples, opts.batch_size
        )
        _warn_undefined(dist)
        low, high, z0, a = _interval(dist, theta_hat, stat, samples, bool(paired), opts)
        if opts.method == "BCa" and not np.isnan(dist).any() and np.isnan([low, high]).any():
            warnings.warn(
                "The BCa confidence interval cannot be calculated (a degenerate bootstrap "
                "distribution, e.g. constant data): the interval is NaN, as scipy's. "
                "method='percentile' gives the point.",
                RuntimeWarning,
                stacklevel=3,
            )
        rows.append((theta_hat, dist, low, high, z0, a))
    return rows, batch


def _field(rows, i, batch):
    return np.asarray([r[i] for r in rows], np.float64).reshape(batch)


@x64
def bootstrap(
    data,
    statistic,
    *,
    paired=True,
    n_resamples=9999,
    confidence_level=0.95,
    method="BCa",
    alternative="two-sided",
    key=None,
    batch_size=None,
    axis=-1,
    return_distribution=False,
):
    """Bootstrap confidence interval of a statistic (``scipy.stats.bootstrap``'s conventions).

    Parameters
    ----------
    data : sequence of array_like
        The samples, each ``(..., n_i)`` along ``axis``; leading axes are a batch of
        tests (all drawn with the same resamples). Built-in statistics take:
        ``"mean"``: ``(x,)``; ``"mean_difference"``: ``(a, b)``; ``"roc_auc"`` and the
        measures ``"accuracy"``, ``"error"``, ``"tpr"``/``"recall"``, ``"fpr"``,
        ``"precision"``, ``"f1"``: ``(y_true, scores)`` (labels ±1 or 0/1, decision
        values predicting +1 iff ``> 0``); their ``"<name>_difference"``:
        ``(y_true, scores_a, scores_b)``, the paired difference A - B.
    statistic : str or callable
        A built-in name (fused: a resample is read as its counts of each
        observation, without gathering data), or a JAX-traceable
        ``statistic(*samples) -> scalar`` of 1-d samples, vmapped over resamples
        (compiled once per function object and data size: define it once, reuse it).
    paired : bool, default True
        Resample the observations of all samples together (``paired=True``, samples
        of equal size), or each sample independently. The AUC and measure statistics
        need ``paired=True``.
    n_resamples : int, default 9999
        At most ``MAX_RESAMPLES`` (10^8): the distribution is kept, 8 bytes a resample.
    confidence_level : float, default 0.95
    method : {"BCa", "percentile", "basic"}
    alternative : {"two-sided", "less", "greater"}
        One-sided intervals are open (``-inf`` or ``+inf``) on the other side.
    key : int or JAX key, optional
        Seed (drawn from OS entropy and recorded in ``seed`` when omitted).
    batch_size : int, optional
        Resamples per compiled dispatch (memory); never changes the result.
    axis : int, default -1
        The observation axis of every sample.
    return_distribution : bool, default False
        Keep ``bootstrap_distribution`` in the result.

    Returns
    -------
    BootstrapResult
        ``confidence_interval`` (``low``, ``high``), ``standard_error``,
        ``statistic``, ``bootstrap_distribution`` (on request), BCa's
        ``bias_correction`` and ``acceleration``.

    Notes
    -----
    Percentile: the ``alpha`` and ``1 - alpha`` quantiles (``"linear"``) of the
    bootstrap distribution, ``alpha = (1 - confidence_level) / 2`` (two-sided) or
    ``1 - confidence_level``. Basic: ``2 theta - `` those, swapped. BCa:
    ``z0 = Phi^-1((#{t* < t} + #{t* <= t}) / 2B)``, ``a`` from the jackknife of each
    resampled sample (scipy's ``sum_j sum_i U_ji^3 / n_j^3 / 6 (sum_j sum_i
    U_ji^2 / n_j^2)^{3/2}``, ``U_ji = (n_j - 1)(mean_i t_ji - t_ji)``), quantiles
    ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))``. A statistic undefined (NaN) on some
    resample, or a degenerate BCa (constant data: ``a = 0/0``) gives a NaN interval
    and a ``RuntimeWarning``, as scipy does. Memory: the distribution (``8
    n_resamples`` bytes per test) and one block of about 2^20 indices.

    References
    ----------
    Efron, B. & Tibshirani, R. (1993), An Introduction to the Bootstrap, 14.3, 15.4.
    scipy.stats.bootstrap.

    Examples
    --------
    >>> import numpy as np, jaxtests
    >>> x = np.arange(20.0)
    >>> r = jaxtests.bootstrap((x,), "mean", n_resamples=2000, key=0)
    >>> bool(r.confidence_interval.low < 9.5 < r.confidence_interval.high)
    True
    """
    opts = _options_iv(
        n_resamples, confidence_level, method, alternative, key, batch_size, return_distribution
    )
    rows, batch = _run(data, statistic, paired, axis, opts)
    dist = np.stack([r[1] for r in rows]).reshape((*batch, opts.n_resamples))
    with np.errstate(invalid="ignore"):
        se = np.std(dist, axis=-1, ddof=1)
    bca = opts.method == "BCa"
    return BootstrapResult(
        confidence_interval=ConfidenceInterval(
            _field(rows, 2, batch)[()], _field(rows, 3, batch)[()]
        ),
        standard_error=se[()],
        statistic=_field(rows, 0, batch)[()],
        bootstrap_distribution=dist if opts.return_distribution else None,
        bias_correction=_field(rows, 4, batch)[()] if bca else None,
        acceleration=_field(rows, 5, batch)[()] if bca else None,
        method=opts.method,
        confidence_level=opts.confidence_level,
        alternative=opts.alternative,
        n_resamples=opts.n_resamples,
        seed=opts.seed,
        paired=bool(paired),
    )


@x64
def bootstrap_test(
    data,
    statistic="mean_difference",
    *,
    paired=True,
    n_resamples=9999,
    confidence_level=0.95,
    method="BCa",
    alternative="two-sided",
    key=None,
    batch_size=None,
    axis=-1,
    return_distribution=False,
):
    """Paired bootstrap test of "no difference" (Berg-Kirkpatrick et al. 2012), with its interval.

    Parameters
    ----------
    data : sequence of array_like
        ``(a, b)`` for ``"mean_difference"`` (per-instance losses or scores of A and
        B), ``(y_true, scores_a, scores_b)`` for ``"roc_auc_difference"`` and
        ``"<measure>_difference"``; the samples of a callable.
    statistic : str or callable, default "mean_difference"
        A difference ``delta`` of A and B on the same instances: a built-in
        ``*_difference`` name or a callable (as in :func:`bootstrap`).
    paired, n_resamples, confidence_level, method, alternative, key, batch_size, axis, \
return_distribution
        As :func:`bootstrap`; ``alternative`` is also the test's (``"greater"``: A's
        statistic larger).

    Returns
    -------
    BootstrapTestResult
        ``statistic`` (the observed ``delta``), ``pvalue``, the bootstrap
        ``confidence_interval`` of ``delta`` (``method``), ``standard_error``,
        ``n_extreme``.

    Notes
    -----
    The bootstrap distribution of ``delta* - delta`` stands in for the null
    distribution of ``delta`` (the distribution shifted to mean zero:
    Berg-Kirkpatrick, Burkett & Klein 2012, whose test counts ``delta* > 2 delta``;
    Koehn 2004). With ``B`` resamples: ``"greater"`` (A's statistic larger):
    ``b = #{delta* - delta >= delta}``; ``"less"``: ``b = #{delta* - delta <= delta}``;
    p-value ``(b + 1) / (B + 1)`` (Phipson & Smyth 2010: never 0), resamples within
    ``100 eps`` of the threshold counting as reaching it. ``"two-sided"``: twice the
    smaller of the two one-sided p-values, capped at 1 (the library's convention).

    References
    ----------
    Berg-Kirkpatrick, T., Burkett, D. & Klein, D. (2012), An empirical investigation of
    statistical significance in NLP, EMNLP. Koehn, P. (2004), Statistical significance
    tests for machine translation evaluation, EMNLP.

    Examples
    --------
    >>> import numpy as np, jaxtests
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(1.0, 1, 50), rng.normal(0.0, 1, 50)
    >>> r = jaxtests.bootstrap_test((a, b), "mean_difference", n_resamples=1999, key=0)
    >>> bool(r.pvalue < 0.01)
    True
    """
    opts = _options_iv(
        n_resamples, confidence_level, method, alternative, key, batch_size, return_distribution
    )
    if (
        isinstance(statistic, str)
        and statistic in STATISTICS
        and not (statistic.endswith("_difference"))
    ):
        raise ValueError(
            f"`statistic`={statistic!r} is not a difference: use 'mean_difference', "
            "'roc_auc_difference' or '<measure>_difference' (or a callable difference)."
        )
    rows, batch = _run(data, statistic, paired, axis, opts)
    p, n_ext = [], []
    for theta, dist, *_ in rows:
        tol = 100 * _pvalues.EPS * max(abs(theta), float(np.nanmax(np.abs(dist), initial=0)))
        shifted = dist - theta
        ge = int(np.sum(shifted >= theta - tol))
        le = int(np.sum(shifted <= theta + tol))
        pv, cnt, _ = _pvalues.counts_to_pvalues(ge, le, dist.size, opts.alternative, False)
        undefined = np.isnan(theta) or np.isnan(dist).any()
        p.append(np.nan if undefined else float(pv))
        n_ext.append(int(cnt))
    dist = np.stack([r[1] for r in rows]).reshape((*batch, opts.n_resamples))
    with np.errstate(invalid="ignore"):
        se = np.std(dist, axis=-1, ddof=1)
    return BootstrapTestResult(
        statistic=_field(rows, 0, batch)[()],
        pvalue=np.asarray(p, np.float64).reshape(batch)[()],
        confidence_interval=ConfidenceInterval(
            _field(rows, 2, batch)[()], _field(rows, 3, batch)[()]
        ),
        standard_error=se[()],
        n_extreme=np.asarray(n_ext, np.int64).reshape(batch)[()],
        bootstrap_distribution=dist if opts.return_distribution else None,
        method=opts.method,
        confidence_level=opts.confidence_level,
        alternative=opts.alternative,
        n_resamples=opts.n_resamples,
        seed=opts.seed,
    )
