"""What every resampling test shares: its result class, option checks and wrapping.

A test reads ``_iv -> plan -> drive -> wrap``: :func:`common_iv` checks the
options every test takes (an :class:`jaxtests._engine.Options`), the test's
planner builds a :class:`jaxtests._engine.Plan`, :func:`jaxtests._engine.drive`
runs it, and :func:`wrap` turns its :class:`jaxtests._engine.EngineResult`
into a :class:`PermutationTestResult`.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._engine import Options
from jaxtests._progress import as_progress
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field

__all__ = [
    "PermutationTestResult",
    "Requested",
    "check_exact_cap",
    "check_statistic",
    "common_iv",
    "wrap",
]

METHODS = ("auto", "exact", "monte-carlo", "binomial")
N_RESAMPLES = 100_000  # default n_resamples (None in the public signatures)


@result
class PermutationTestResult:
    """Result of a permutation test.

    Attributes
    ----------
    statistic : array
        Observed statistic, one per hypothesis (the input's batch shape).
    pvalue : array
        p-value (scipy's conventions, see :func:`signflip_test`); NaN where a
        user statistic (or Hotelling's T²) is NaN.
    pvalue_interval : array, (..., 2)
        Low and high ends of a 99% Clopper-Pearson interval for the p-value that
        infinitely many draws would give (Monte Carlo); ``(pvalue, pvalue)`` for
        exact and binomial results.
    n_extreme : array
        Number of rearrangements at least as extreme as the observed one (the
        smaller tail for two-sided tests); 0 where ``pvalue`` is NaN; -1 where the
        exact count of more than 62 differences exceeds int64 (``pvalue`` is exact;
        such counts below it carry float64 rounding past 2^53).
    pvalue_adjusted : array or None
        Westfall-Young single-step max-T adjusted p-values (``correction="maxT"``);
        the name matches :func:`jaxtests.posthoc`'s results.
    n_draws : array or None
        Draws used per hypothesis when ``sequential`` stopping is on.
    null_distribution : array or None
        Statistic of every rearrangement, ``(..., n_resamples)``, when asked.
    method : str
        "exact", "monte-carlo", "binomial" or "sequential".
    alternative : str
    n_resamples : int
        Rearrangements evaluated (all of them for "exact"; 0 for "binomial").
    correction : str or None
    seed : int, tuple or None
        Seed that repeats the draws (None when no randomness was used).
    n_clusters : int or None
        :func:`signflip_test` with ``cluster``: the clusters flipped (``m`` above is
        this number).
    """

    statistic: jax.Array
    pvalue: jax.Array
    pvalue_interval: jax.Array
    n_extreme: jax.Array
    pvalue_adjusted: jax.Array | None = None
    n_draws: jax.Array | None = None
    null_distribution: jax.Array | None = None
    method: str = static_field(default="monte-carlo")
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=0)
    correction: str | None = static_field(default=None)
    seed: object = static_field(default=None)
    n_clusters: int | None = static_field(default=None)


class Requested(NamedTuple):
    """The options every resampling test takes, as its caller gave them (unchecked)."""

    alternative: str
    n_resamples: int | None  # None: the default, N_RESAMPLES
    method: str = "auto"
    batch_size: int | None = None
    correction: str | None = None
    sequential: int | None = None
    return_null: bool = False
    key: object = None
    progress: object = None


def common_iv(requested):
    """Check a :class:`Requested` before any method is chosen; an ``Options``.

    ``n_resamples=None`` is the default (100,000). ``key`` is checked here so
    that a bad key fails on every path, also where no randomness is used.
    Sequential stopping makes ``method="auto"`` Monte Carlo.
    """
    r = requested
    progress = as_progress(r.progress)
    v.check_alternative(r.alternative)
    n_resamples = N_RESAMPLES if r.n_resamples is None else r.n_resamples
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    method = r.method
    v.check_choice(method, "method", METHODS)
    batch_size = r.batch_size
    if batch_size is not None:
        batch_size = v.as_int_scalar(batch_size, "batch_size", minimum=1)
    v.check_choice(r.correction, "correction", (None, "maxT"))
    if not isinstance(r.return_null, bool | np.bool_):
        raise TypeError(f"`return_null` must be a bool, got {type(r.return_null).__name__}.")
    return_null = bool(r.return_null)
    sequential = r.sequential
    if sequential is not None:
        sequential = v.as_int_scalar(sequential, "sequential", minimum=1)
        if method not in ("auto", "monte-carlo"):
            raise ValueError(f"`sequential` needs method='monte-carlo', got method={method!r}.")
        if r.correction is not None or return_null:
            raise ValueError("`sequential` cannot be combined with `correction` or `return_null`.")
        method = "monte-carlo"
    if r.key is not None:
        resolve_key(r.key)  # raises on a bad key; the draw itself happens in drive
    return Options(
        alternative=r.alternative,
        n_resamples=n_resamples,
        method=method,
        batch_size=batch_size,
        correction=r.correction,
        sequential=sequential,
        return_null=return_null,
        key=r.key,
        explicit_n=r.n_resamples is not None,
        progress=progress,
    )


def check_exact_cap(n_patterns, n_resamples, explicit_n):
    """An explicit ``n_resamples`` with method="exact" is the most rearrangements evaluated.

    ``n_patterns`` None stands for "more than ``n_resamples``".
    """
    if explicit_n and (n_patterns is None or n_patterns > n_resamples):
        count = "" if n_patterns is None else f"{n_patterns} rearrangements, "
        raise ValueError(
            f"method='exact' enumerates {count}more than `n_resamples`={n_resamples}: "
            "leave `n_resamples` out with 'exact' (or give at least that many), or use "
            "method='monte-carlo'."
        )


def check_statistic(fn, shapes, name, called_on):
    """A callable statistic must return one real scalar per hypothesis (checked on shapes only)."""
    args = [jax.ShapeDtypeStruct(s, jnp.float64) for s in shapes]
    out = jax.eval_shape(fn, *args)
    if not isinstance(out, jax.ShapeDtypeStruct) or out.shape != ():
        got = out.shape if isinstance(out, jax.ShapeDtypeStruct) else type(out).__name__
        raise ValueError(
            f"`{name}` must return a scalar: it is called on {called_on} and vmapped "
            f"over hypotheses and rearrangements; it returned {got}."
        )
    if np.dtype(out.dtype).kind not in "biuf":
        raise ValueError(f"`{name}` must return a real number, got dtype {out.dtype}.")


def wrap(statistic, batch_shape, res, alternative, correction, null_map=None):
    """The :class:`PermutationTestResult` of an :class:`jaxtests._engine.EngineResult`.

    Flat ``(H,)`` fields are reshaped to ``batch_shape``; ``null_map`` maps the
    engine's null statistics to the reported statistic (e.g. means to t).
    """
    # An undefined compared statistic has an undefined p-value (scipy's
    # permutation_test would report its smallest p: NaN compares False).
    undefined = res.undefined
    if undefined is None:
        undefined = np.zeros(np.size(res.pvalue), bool)
    undefined = np.asarray(undefined).reshape(-1)

    def host(a):
        a = np.where(undefined, np.nan, np.asarray(a, dtype=np.float64).reshape(-1))
        return a.reshape(batch_shape)

    def shape(a):
        # With a dtype: jnp.asarray of a numpy array without one compiles per shape (jax 0.10).
        return jnp.asarray(host(a), dtype=np.float64)

    null = res.null
    if null is not None:
        if null_map is not None:
            null = null_map(null)
        null = np.asarray(null).reshape((*batch_shape, null.shape[-1]))
        null = jnp.asarray(null, dtype=null.dtype)
    lo, hi = res.interval
    n_extreme = np.asarray(res.n_extreme).reshape(-1)
    if n_extreme.dtype.kind == "f":  # subset-sum counts past 62 differences: beyond int64
        n_extreme = np.where(n_extreme < 2.0**63, n_extreme, -1.0)
    n_extreme = np.where(undefined, 0, n_extreme.astype(np.int64))
    return PermutationTestResult(
        statistic=jnp.asarray(
            np.asarray(statistic, dtype=np.float64).reshape(batch_shape), dtype=np.float64
        ),
        pvalue=shape(res.pvalue),
        pvalue_interval=jnp.asarray(np.stack([host(lo), host(hi)], axis=-1), dtype=np.float64),
        n_extreme=jnp.asarray(n_extreme.reshape(batch_shape), dtype=np.int64),
        pvalue_adjusted=shape(res.adjusted) if res.adjusted is not None else None,
        n_draws=(
            jnp.asarray(np.asarray(res.n_draws, np.int64).reshape(batch_shape), dtype=np.int64)
            if res.n_draws is not None
            else None
        ),
        null_distribution=null,
        method=res.method,
        alternative=alternative,
        n_resamples=int(res.n_resamples),
        correction=correction,
        seed=res.seed,
    )
