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

import functools
import math
import statistics
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _bootstrap_draws as _draws
from jaxtests import _clusters, _pvalues
from jaxtests._buckets import bucket, pad_axis
from jaxtests._precision import x64
from jaxtests._progress import as_progress
from jaxtests._random import resolve_key
from jaxtests._results import ConfidenceInterval, result, static_field
from jaxtests._validation import (
    as_float_array,
    as_int_scalar,
    as_label_array,
    check_alternative,
    check_choice,
    check_probability,
    normalize_axis,
    to_device,
)

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
# Fewer clusters than this: the cluster bootstrap warns (Cameron, Gelbach & Miller 2008 find
# its rejection rates well above the level at 5-10 clusters; 3 of 5 tests here at G = 5)
FEW_CLUSTERS = 20
_SQRT1_2 = math.sqrt(0.5)
_MEASURES = ("accuracy", "error", "tpr", "recall", "fpr", "precision", "f1")


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
    n_clusters : int or None
        With ``cluster``: the number of clusters resampled.
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
    n_clusters: int | None = static_field(default=None)


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
    n_clusters : int or None
        With ``cluster``: the number of clusters resampled.
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
    n_clusters: int | None = static_field(default=None)


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
    progress: object = None  # a jaxtests._progress.Reporter or None


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


def _acceleration(theta_ji):
    """scipy's jackknife acceleration: ``sum U^3 / n_j^3 / 6 (sum U^2 / n_j^2)^1.5``."""
    # `a` does not change when every U is scaled by one factor: scaled to at most 1, the
    # cubes of large statistics (|U| > 1e103) do not overflow to inf / inf = NaN
    with np.errstate(invalid="ignore", over="ignore"):
        us = [
            (t.size - 1) * (np.mean(t) - t) for t in (np.asarray(t, np.float64) for t in theta_ji)
        ]
        top = max((float(np.max(np.abs(u))) for u in us if u.size), default=0.0)
    if np.isfinite(top) and top > 0:
        us = [u / 2.0 ** math.frexp(top)[1] for u in us]  # a power of two: exact
    nums = sum(np.sum(u**3) / u.size**3 for u in us)
    dens = sum(np.sum(u**2) / u.size**2 for u in us)
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


def _tie_tol(theta, dist):
    """The permutation engine's tie tolerance (:func:`jaxtests._pvalues.tie_tol`,
    ``100 eps max(|t|, max |t*|)``) of the observed statistic ``t`` among the resampled
    ``t*``: a resample equal to ``t`` in exact arithmetic can land an ulp to either side."""
    if not np.isfinite(theta):
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN distribution
        magnitude = np.nanmax(np.abs(dist), initial=0.0)
    return float(_pvalues.tie_tol(theta, magnitude, xp=np))


def _ndtr(x):
    """The standard normal CDF, cephes' ``ndtr`` on the standard library's erf and erfc
    (importing ``scipy.special`` would be most of a bootstrap's first call)."""
    z = abs(x) * _SQRT1_2
    if z < _SQRT1_2:
        return 0.5 + 0.5 * math.erf(x * _SQRT1_2)
    y = 0.5 * math.erfc(z)
    return 1 - y if x > 0 else y


def _ndtri(p):
    """The standard normal quantile (Wichura's AS 241, as ``statistics.NormalDist``), with
    ``scipy.special.ndtri``'s infinities at 0 and 1."""
    if not 0 < p < 1:
        return {0.0: -math.inf, 1.0: math.inf}.get(float(p), math.nan)
    return statistics.NormalDist().inv_cdf(p)


def _interval(dist, theta_hat, stat, samples, paired, opts, live=None):
    """``(low, high, z0, a)`` of one test from its distribution."""
    level = opts.confidence_level
    alpha = (1 - level) / 2 if opts.alternative == "two-sided" else 1 - level
    z0 = a = None
    if opts.method == "BCa":
        # resamples within the tie tolerance of theta-hat count as ties (half below, half
        # above), as in the permutation engine's p-values; scipy compares floats exactly
        tol = _tie_tol(theta_hat, dist)
        below, at_most = np.sum(dist < theta_hat - tol), np.sum(dist <= theta_hat + tol)
        z0 = _ndtri((below + at_most) / (2 * dist.size))
        a = _acceleration(_draws.jackknife(stat, samples, paired, live))
        z_a = float(_ndtri(alpha))
        with np.errstate(invalid="ignore", divide="ignore"):
            n1, n2 = z0 + z_a, z0 - z_a
            probs = (_ndtr(z0 + n1 / (1 - a * n1)), _ndtr(z0 + n2 / (1 - a * n2)))
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


def _ratio(s, n):
    # A cluster resample's statistic: the pooled instances' mean (sum over clusters' sums)
    return jnp.sum(s) / jnp.sum(n)


@functools.cache
def _cluster_measure(name):
    """The measure (or its A - B difference) of a resample of clusters' confusion counts:
    one function object per name, so its programs are compiled once per cluster count."""
    base = name.removesuffix("_difference")

    def of(*cells):  # (tp, fn, fp, tn) per model, each (G,) cluster sums
        vals = [
            _draws._measure(base, jnp.stack([jnp.sum(c) for c in cells[i : i + 4]]))
            for i in range(0, len(cells), 4)
        ]
        return _draws._difference(vals)

    of.__name__ = f"cluster_{name}"
    return of


def _cluster_samples(arrays, stat, paired, cluster):
    """Clusters as the observations: each built-in statistic is a ratio of sums over the
    instances, so resampling whole clusters is the ordinary (paired) bootstrap of the
    clusters' sums, with the statistic of the pooled sums (and the jackknife leaves one
    cluster out). Returns ``(samples, statistic, groups)``."""
    if callable(stat) or stat.startswith("roc_auc"):
        raise ValueError(
            "`cluster` resamples whole clusters for the built-in means and measures (ratios "
            "of sums over instances); "
            + ("a callable" if callable(stat) else f"{stat!r}")
            + " is not one: pass per-cluster values yourself, or leave `cluster` out."
        )
    if not paired:
        raise ValueError("`cluster` needs `paired=True`: clusters hold paired instances.")
    groups = _clusters.cluster_iv(cluster, arrays[0].shape[-1])
    if groups.n_clusters < FEW_CLUSTERS:
        warnings.warn(
            f"the cluster bootstrap resamples {groups.n_clusters} clusters: with fewer than "
            f"{FEW_CLUSTERS} its intervals are too narrow and its p-values too small (Cameron, "
            "Gelbach & Miller 2008); prefer wild_cluster_bootstrap or signflip_test(..., "
            "cluster=) there.",
            RuntimeWarning,
            stacklevel=5,  # the caller of bootstrap(): _run, bootstrap, the x64 wrapper
        )
    batch = arrays[0].shape[:-1]
    sizes = np.broadcast_to(groups.sizes.astype(np.float64), (*batch, groups.n_clusters))
    if stat in ("mean", "mean_difference"):
        x = arrays[0] if stat == "mean" else arrays[0] - arrays[1]
        return [groups.sums(x), sizes], _ratio, groups
    y = np.asarray(arrays[0]) > 0
    cells = []
    for f in arrays[1:]:
        pos = np.asarray(f) > 0  # predicted +1 iff the decision value is > 0
        for cell in (y & pos, y & ~pos, ~y & pos, ~y & ~pos):
            cells.append(groups.sums(cell.astype(np.float64)))
    return cells, _cluster_measure(stat), groups


# Means are scaled by a power of two (exact) past this magnitude: their sums would overflow.
_LARGE = 2.0**512


def _scale(stat, raw):
    """``e``: ``2^-e`` brings the values of a mean statistic near 1 (0 for the others).

    A mean, and a difference of means, is homogeneous of degree 1, so its
    distribution and interval scale back exactly (``z0`` and ``a`` do not
    change); summed unscaled, values near 1e308 overflow to inf.
    """
    if stat not in ("mean", "mean_difference"):
        return 0
    top = max(float(np.max(np.abs(x))) for x in raw)
    return math.frexp(top)[1] if top > _LARGE else 0


def _warn_overflow(theta_hat, dist, stat):
    inf = int(np.isinf(dist).sum()) + int(np.isinf(theta_hat))
    if inf:
        warnings.warn(
            f"the statistic overflowed to +-inf on {inf} of {dist.size + 1} evaluations "
            "(the resamples and the original data): its values exceed the float64 range "
            f"(1.8e308){'' if callable(stat) else ' even scaled'}; rescale the data (e.g. "
            "divide by a power of ten) and scale the interval back.",
            RuntimeWarning,
            stacklevel=4,
        )
    return inf


class _Offset:
    """Progress of test ``t`` of a batch of ``h`` as the whole batch's (closed by the caller)."""

    def __init__(self, progress, t, h):
        self._progress, self._t, self._h = progress, t, h

    def __call__(self, done, total):
        self._progress(self._t * total + done, self._h * total)

    def close(self):
        pass


def _run(data, statistic, paired, axis, opts, cluster=None):
    """Per test of the batch: ``(theta_hat, dist, low, high, z0, a)`` lists, and the
    clusters (None without ``cluster``)."""
    stat = _statistic_iv(statistic)
    arrays, batch = _data_iv(data, stat, paired, axis)
    groups = None
    if cluster is not None:
        arrays, stat, groups = _cluster_samples(arrays, stat, paired, cluster)
        paired = True
    h = math.prod(batch)
    if h * opts.n_resamples > MAX_RESAMPLES:
        # refused before any draw: 4 tests of 10^8 resamples failed after 215 s
        raise ValueError(
            f"`data` holds a batch of {h:,} tests of `n_resamples`={opts.n_resamples:,}: "
            f"{h * opts.n_resamples:,} resamples in all, more than {MAX_RESAMPLES:,} (the "
            "distributions are kept, 8 bytes a resample); bootstrap the tests in separate "
            "calls, or draw fewer resamples."
        )
    # sliced on the host: eager jnp indexing compiles a program per shape
    flat = [np.asarray(a).reshape((h, a.shape[-1])) for a in arrays]
    rows = []
    try:
        for t in range(h):
            raw = [a[t] for a in flat]
            scale = _scale(stat, raw)
            if scale:
                raw = [np.ldexp(x, -scale) for x in raw]
            live = None
            size = None
            if _draws.pads(stat):  # padded to shape buckets: a new size compiles nothing
                live = np.asarray([x.shape[0] for x in raw], np.int32)
                size = bucket(raw[0].shape[0])
                # an AUC's padding: labels 0 (neither class), scores NaN (sorted last)
                auc = stat.startswith("roc_auc")
                fills = [0.0] + [np.nan if auc else 0.0] * (len(raw) - 1)
                samples = tuple(
                    to_device(pad_axis(x, bucket(x.shape[0]), value=f)) for x, f in zip(raw, fills)
                )
            else:
                samples = tuple(to_device(x) for x in raw)
            layouts = _draws.layouts(stat, raw, size)
            theta_hat = float(_draws.observed(samples, layouts, stat, bool(paired), live))
            dist = _draws.distribution(
                stat,
                opts.key,
                samples,
                layouts,
                bool(paired),
                opts.n_resamples,
                opts.batch_size,
                live,
                None if opts.progress is None else _Offset(opts.progress, t, h),
            )
            _warn_undefined(dist)
            low, high, z0, a = _interval(dist, theta_hat, stat, samples, bool(paired), opts, live)
            if scale:
                with np.errstate(over="ignore"):  # a difference of means past 1.8e308: inf, warned
                    theta_hat, dist, low, high = (
                        float(np.ldexp(v, scale)) if np.ndim(v) == 0 else np.ldexp(v, scale)
                        for v in (theta_hat, dist, low, high)
                    )
            overflow = _warn_overflow(theta_hat, dist, stat)
            if (
                opts.method == "BCa"
                and not overflow
                and not np.isnan(dist).any()
                and np.isnan([low, high]).any()
            ):
                # "constant" only of a distribution that is: a = 0/0 has other causes too
                why = (
                    "every resample gives the same statistic, e.g. constant data"
                    if np.ptp(dist) == 0
                    else "the jackknife acceleration is 0/0: every leave-one-out statistic is "
                    "the same"
                    if np.isnan(a)
                    else "a degenerate bootstrap distribution"
                )
                warnings.warn(
                    f"The BCa confidence interval cannot be calculated ({why}): the interval is "
                    "NaN, as scipy's. method='percentile' gives the point.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            rows.append((theta_hat, dist, low, high, z0, a))
    finally:
        if opts.progress is not None:
            opts.progress.close()
    return rows, batch, groups


def _standard_error(dist):
    """``std(dist, ddof=1)`` along the last axis, scaled first: squares of 1e160 overflow."""
    with np.errstate(invalid="ignore", over="ignore"):
        top = np.max(np.abs(dist), axis=-1, keepdims=True)
        e = np.frexp(np.where(np.isfinite(top) & (top > 0), top, 1.0))[1]  # by 2^-e: exact
        return np.ldexp(np.std(np.ldexp(dist, -e), axis=-1, ddof=1), e[..., 0])


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
    cluster=None,
    progress=None,
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
        At most ``MAX_RESAMPLES`` (10^8) over the whole batch: the distribution is kept,
        8 bytes a resample.
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
    cluster : array_like, (n,), optional
        One cluster label per observation (integers or strings), shared by the
        batch: whole clusters are resampled (the cluster bootstrap; Davison &
        Hinkley 1997, 3.8), for dependent observations within a cluster. Built-in
        means and measures (``paired=True``) only: each is a ratio of sums over the
        instances, so a resample of ``G`` clusters pools their sums, and BCa's
        jackknife leaves one cluster out. The AUCs and callables are refused. With
        fewer than 20 clusters a ``RuntimeWarning`` says the intervals are too narrow
        (Cameron, Gelbach & Miller 2008): prefer :func:`wild_cluster_bootstrap` there.
    progress : None, bool, tqdm or callable, optional
        Progress of the resamples, as the permutation tests': None shows a bar in an
        interactive session once the call has run a few seconds, False nothing, True a
        tqdm bar, a tqdm instance is updated, a callable is called ``progress(done,
        total)`` (over the whole batch). Ctrl-C stops the call within about a second.

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
    ``z0 = Phi^-1((#{t* < t} + #{t* <= t}) / 2B)``, where a resample within the
    permutation engine's tie tolerance ``100 eps max(|t|, max |t*|)`` of ``t`` counts as
    equal to it (a resampled statistic equal to ``t`` in exact arithmetic, e.g. a mean of
    the same values in another order, can land an ulp to either side; scipy compares the
    floats exactly, so its ``z0`` can differ by a few hundredths there), ``a`` from the
    jackknife of each resampled sample (scipy's ``sum_j sum_i U_ji^3 / n_j^3 / 6 (sum_j
    sum_i U_ji^2 / n_j^2)^{3/2}``, ``U_ji = (n_j - 1)(mean_i t_ji - t_ji)``), quantiles
    ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))``. A statistic undefined (NaN) on some
    resample, or a degenerate BCa (constant data: ``a = 0/0``) gives a NaN interval
    and a ``RuntimeWarning``, as scipy does. Memory: the distribution (``8
    n_resamples`` bytes per test) and one block of about 2^20 indices.

    Parallelism: the resamples are drawn in dispatches of a fixed number of blocks (set
    by ``batch_size``), each a slice of the distribution keyed by its draws' indices.
    The dispatches of a built-in statistic run one per core on the CPU (host threads);
    with several devices of the samples' backend (GPUs, or CPU devices from
    ``XLA_FLAGS=--xla_force_host_platform_device_count=N``) the samples are copied to
    each and the dispatches dealt out over them (each device runs its own compiled
    copy of a program); with several processes of a distributed run
    (:func:`jax.distributed.initialize`, the same call in each) each process computes a
    contiguous share of the dispatches and every process returns the whole
    distribution. None of these changes a bit of the result for a given key.

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
    )._replace(progress=as_progress(progress, unit="resamples"))
    rows, batch, groups = _run(data, statistic, paired, axis, opts, cluster)
    dist = np.stack([r[1] for r in rows]).reshape((*batch, opts.n_resamples))
    se = _standard_error(dist)
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
        n_clusters=None if groups is None else groups.n_clusters,
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
    cluster=None,
    progress=None,
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
return_distribution, cluster, progress
        As :func:`bootstrap` (``cluster``: resample whole clusters); ``alternative``
        is also the test's (``"greater"``: A's statistic larger).

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
    )._replace(progress=as_progress(progress, unit="resamples"))
    if (
        isinstance(statistic, str)
        and statistic in STATISTICS
        and not (statistic.endswith("_difference"))
    ):
        raise ValueError(
            f"`statistic`={statistic!r} is not a difference: use 'mean_difference', "
            "'roc_auc_difference' or '<measure>_difference' (or a callable difference)."
        )
    rows, batch, groups = _run(data, statistic, paired, axis, opts, cluster)
    p, n_ext = [], []
    for theta, dist, *_ in rows:
        tol = _tie_tol(theta, dist)
        shifted = dist - theta
        ge = int(np.sum(shifted >= theta - tol))
        le = int(np.sum(shifted <= theta + tol))
        pv, cnt, _ = _pvalues.counts_to_pvalues(ge, le, dist.size, opts.alternative, False)
        undefined = np.isnan(theta) or np.isnan(dist).any()
        p.append(np.nan if undefined else float(pv))
        n_ext.append(int(cnt))
    dist = np.stack([r[1] for r in rows]).reshape((*batch, opts.n_resamples))
    se = _standard_error(dist)
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
        n_clusters=None if groups is None else groups.n_clusters,
    )
