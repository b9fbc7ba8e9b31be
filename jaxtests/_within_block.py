"""Permutations within blocks: anova / manova with folds as blocks (randomized complete blocks)."""

import jax.numpy as jnp
import numpy as np

from jaxtests import _planner
from jaxtests import _validation as v
from jaxtests._engine import jitted
from jaxtests._resampling import Requested, common_iv, wrap
from jaxtests.kernels import exceedance as kexceedance

__all__ = ["within_block_pvalue"]


def within_block_pvalue(
    statistic_fn,
    x,
    *,
    alternative="greater",
    n_resamples=100_000,
    key=None,
    batch_size=None,
    return_null=False,
    progress=None,
):
    """Monte Carlo p-value with labels permuted independently within each block.

    ``x : (n_blocks, k, ...)``: block (fold) ``i`` holds the ``k`` algorithms'
    results; each draw permutes axis 1 of every block independently (Fisher-
    Yates from 53-bit uniforms), as in a randomized complete block design.
    ``statistic_fn(x) -> scalar`` (e.g. the repeated-measures F or a MANOVA
    statistic) gives the observed value and is vmapped over draws; infinite and
    NaN values are treated as in :func:`signflip_test`. Returns a
    :class:`PermutationTestResult`; call under ``jaxtests._precision.x64``.
    """
    opts = common_iv(
        Requested(
            alternative=alternative,
            n_resamples=n_resamples,
            method="monte-carlo",
            batch_size=batch_size,
            return_null=return_null,
            key=key,
            progress=progress,
        )
    )
    x = v.as_float_array(x, "x", min_ndim=2)
    n_blocks, k = x.shape[0], x.shape[1]
    if n_blocks < 2 or k < 2:
        raise ValueError(f"`x` needs at least 2 blocks and 2 groups, got shape {tuple(x.shape)}.")
    observed = jnp.reshape(jitted(statistic_fn)(x), (1,))
    # Size of the statistic's values: its value when block i is rotated by i.
    # (in numpy: an eager jnp.roll compiles a program for every shift, one per block)
    rows = np.arange(n_blocks)[:, None]
    rotated = np.asarray(x)[rows, (np.arange(k)[None, :] - rows) % k]
    magnitude = jitted(statistic_fn)(rotated)
    tol = kexceedance.tie_tol(observed, magnitude)
    res = _planner.Planner().run(_planner.WithinBlock(statistic_fn, x), observed, tol, opts)
    return wrap(observed, (), res, alternative, None)
