"""``method="permutation"`` for the parametric tests: their kernels on the permutation engine.

The parametric modules compute a statistic with a kernel of
:mod:`jaxtests.kernels.statistics` and refer it to a t, F or chi-square
distribution. Here the same kernel is handed to the permutation engine of
:mod:`jaxtests._engine` instead: sign flips of paired differences
(``ttest_paired``, paired ``hotelling_t2``, ``posthoc``), label permutations
between two samples (unpaired tests) or permutations of the algorithm labels
within each fold (``anova``, ``manova``). The helpers take canonical arrays,
call the engine under the caller's scoped float64, and return the fields that
the result classes record.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _resampling, _results
from jaxtests._random import resolve_key
from jaxtests._signflip import signflip_pvalue
from jaxtests._twosample import permutation_test, rows_pvalue
from jaxtests._validation import as_int_scalar, check_choice, is_concrete
from jaxtests._within_block import within_block_pvalue
from jaxtests.kernels import statistics as kstatistics

__all__ = [
    "METHODS",
    "N_RESAMPLES",
    "Resampled",
    "hotelling_two_sample",
    "permutation_iv",
    "signflip",
    "twosample",
    "within_blocks",
]

METHODS = ("parametric", "permutation")
N_RESAMPLES = _resampling.N_RESAMPLES  # one default for every resampling option


class Resampled(NamedTuple):
    """Engine output in the shape of the caller's batch.

    ``pvalue_interval`` is ``(..., 2)``: a 99% Clopper-Pearson interval for
    Monte Carlo p-values, ``(p, p)`` for exact ones. ``permutation_method`` is
    the engine's "exact", "monte-carlo" or "binomial"; ``seed`` is None when no
    randomness was used.
    """

    statistic: jax.Array
    pvalue: jax.Array
    pvalue_interval: jax.Array
    pvalue_adjusted: jax.Array | None
    n_resamples: int
    seed: object
    permutation_method: str


def permutation_iv(method, n_resamples, key, *arrays):
    """Validate ``method``, ``n_resamples`` and ``key``; return ``(n_resamples, key, seed)``.

    ``arrays`` are ``(array, name)`` pairs that a permutation test must be able
    to read (the engine counts on the host, so it cannot run under ``jit``).
    For ``method="parametric"`` the key is only type-checked and ``(n, None,
    None)`` is returned.
    """
    check_choice(method, "method", METHODS)
    n_resamples = as_int_scalar(n_resamples, "n_resamples", minimum=1)
    if method == "parametric":
        if key is not None:
            resolve_key(key)
        return n_resamples, None, None
    for arr, name in arrays:
        if not is_concrete(arr):
            raise TypeError(
                f"`{name}` is traced: method='permutation' counts exceedances on the host and "
                "cannot run under jit/vmap; call it on concrete arrays."
            )
    typed_key, seed = resolve_key(key)
    return n_resamples, typed_key, seed


def result_fields(perm):
    """The permutation fields of a parametric test's result, from a :class:`Resampled`."""
    return {name: getattr(perm, name) for name in _results.PermutationFields.__annotations__}


def _from_engine(res, seed):
    return Resampled(
        statistic=res.statistic,
        pvalue=res.pvalue,
        pvalue_interval=res.pvalue_interval,
        pvalue_adjusted=res.pvalue_adjusted,
        n_resamples=int(res.n_resamples),
        # The engine records None for exact/binomial results and the key's data
        # otherwise; keep the caller's seed, which repeats the run as `key=seed`.
        seed=None if res.seed is None else seed,
        permutation_method=res.method,
    )


def signflip(statistic, d, *, alternative, n_resamples, key, seed, correction=None):
    """Sign-flip p-values of ``d : (..., m)`` ("t") or ``(..., m, p)`` ("hotelling").

    All hypotheses (leading axes) share the same sign patterns; "exact" runs
    when ``2^m <= n_resamples``.
    """
    res = signflip_pvalue(
        statistic,
        d,
        alternative=alternative,
        n_resamples=n_resamples,
        key=key,
        correction=correction,
    )
    return _from_engine(res, seed)


def twosample(x, y, *, n_resamples, key, seed, correction=None):
    """Two-sided pooled-t label permutation p-values, ``x : (H, n1)``, ``y : (H, n2)``."""
    res = permutation_test(
        x,
        y,
        statistic="t",
        alternative="two-sided",
        n_resamples=n_resamples,
        key=key,
        correction=correction,
    )
    return _from_engine(res, seed)


def hotelling_two_sample(a, b, *, n_resamples, key, seed, correction=None):
    """Label permutations of whole rows between ``a : (..., n1, p)`` and ``b : (..., n2, p)``.

    Each split of the ``n1 + n2`` rows is scored by the pooled two-sample T²
    kernel, a module-level function: the engine's compiled program is reused
    by every later call of the same shapes.
    """
    batch = a.shape[:-2]
    n1, n2, p = a.shape[-2], b.shape[-2], a.shape[-1]
    res = rows_pvalue(
        kstatistics.hotelling_t2_two_sample,
        np.reshape(a, (-1, n1, p)),
        np.reshape(b, (-1, n2, p)),
        alternative="greater",
        n_resamples=n_resamples,
        key=key,
        correction=correction,
    )
    out = _from_engine(res, seed)

    def shape(v, tail=()):
        return None if v is None else jnp.reshape(v, (*batch, *tail))

    return out._replace(
        statistic=shape(out.statistic),
        pvalue=shape(out.pvalue),
        pvalue_interval=shape(out.pvalue_interval, (2,)),
        pvalue_adjusted=shape(out.pvalue_adjusted),
    )


def within_blocks(statistic_fn, xb, n_core, *, n_resamples, key, seed, progress=None):
    """Within-fold label permutation p-values ("greater") of ``xb : (..., k, L, ...)``.

    The last ``n_core`` axes are one test: folds (blocks) first, algorithms
    second. Tests of a batch run one after the other with the same key, so
    they share their draws as the engine's batched tests do; the compiled
    engine is reused (same shapes, same module-level ``statistic_fn``).
    """
    batch = xb.shape[: xb.ndim - n_core]
    flat = xb.reshape((-1, *xb.shape[xb.ndim - n_core :]))
    outs = [
        within_block_pvalue(
            statistic_fn,
            flat[h],
            alternative="greater",
            n_resamples=n_resamples,
            key=key,
            progress=progress,
        )
        for h in range(flat.shape[0])
    ]
    first = _from_engine(outs[0], seed)
    return first._replace(
        statistic=jnp.reshape(jnp.stack([o.statistic for o in outs]), batch),
        pvalue=jnp.reshape(jnp.stack([o.pvalue for o in outs]), batch),
        pvalue_interval=jnp.reshape(jnp.stack([o.pvalue_interval for o in outs]), (*batch, 2)),
    )
