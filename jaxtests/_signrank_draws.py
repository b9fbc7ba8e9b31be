"""The Bayesian signed-rank test's posterior samples, drawn on the host in numpy.

Nothing here compiles: the Dirichlet weights read the library's random stream
(:mod:`jaxtests.kernels.random`, the words computed by numpy), and the posterior sums are
:func:`jaxtests.kernels.statistics.signrank_posterior_sorted` with ``xp=numpy``. Every
sample depends on its index only (its key block ``fold_in(key, g // 4096)``, its
counters ``g % 4096``) and is computed alone (elementwise operations, sequential sums
along each sample), so the samples are bit-identical for any block size.
"""

import numpy as np

from jaxtests._random import block_key_words
from jaxtests.kernels import random as krandom
from jaxtests.kernels import statistics as kstatistics

__all__ = ["dirichlet_weights", "gamma", "posterior", "winner_shares"]

KEY_BLOCK = krandom.KEY_BLOCK

# Marsaglia-Tsang candidates per gamma draw: each is accepted with probability above 0.95 for
# shapes >= 1 (a shape s < 1 is boosted to s + 1); all 12 fail with probability below
# 0.05^12 = 2.4e-16, and then the last is taken.
_GAMMA_TRIES = 12


def uniform53(hi, lo):
    """Uniform doubles in ``(0, 1)`` from two ``uint32`` words: 53 random bits, never 0 or 1."""
    top = (hi >> np.uint32(5)).astype(np.float64)  # 27 bits
    bottom = (lo >> np.uint32(6)).astype(np.float64)  # 26 bits
    return (top * 2.0**26 + bottom + 0.5) * 2.0**-53


def _uniforms(k0, k1, local, index):
    """Uniforms number ``index : (k,)`` of draws with key words ``k0, k1 : (L, 1)`` and
    counters ``local : (L, 1)``: ``(L, k)``. Uniform ``i`` reads the words at counters
    ``2 i KEY_BLOCK + local`` and ``KEY_BLOCK`` further on."""
    offs = np.asarray(index, np.uint32)[None, :] * np.uint32(2 * KEY_BLOCK) + local
    hi = krandom.keyed_words(k0, k1, offs, xp=np)
    lo = krandom.keyed_words(k0, k1, offs + np.uint32(KEY_BLOCK), xp=np)
    return uniform53(hi, lo)


def gamma(k0, k1, local, shape):
    """Gamma(``shape``) draws ``(L,)`` with key words ``k0, k1`` and counters ``local``.

    Marsaglia & Tsang (2000): ``d = a - 1/3``, ``c = 1 / sqrt(9 d)``, a standard normal
    ``x`` (Box-Muller on uniforms ``3t + 1``, ``3t + 2``) and ``v = (1 + c x)^3`` are
    accepted as ``d v`` when ``v > 0`` and ``log u < x^2 / 2 + d - d v + d log v`` (``u``:
    uniform ``3t + 3``); for ``shape < 1``, ``Gamma(a + 1) U^(1 / a)`` with uniform 0. The
    first accepted of :data:`_GAMMA_TRIES` candidates, the last if none is (probability
    under ``2.4e-16``); a try is drawn only for the draws that still need it.
    """
    shape = float(shape)
    a = shape + 1 if shape < 1 else shape
    d = a - 1 / 3
    c = 1 / np.sqrt(9 * d)
    k0, k1, local = k0[:, None], k1[:, None], local[:, None]
    g = np.empty(local.shape[0])
    todo = np.arange(local.shape[0])
    for t in range(_GAMMA_TRIES):
        u = _uniforms(k0[todo], k1[todo], local[todo], 3 * t + np.arange(1, 4))
        x = np.sqrt(-2 * np.log(u[:, 0])) * np.cos(2 * np.pi * u[:, 1])
        y = 1 + c * x
        v = y * (y * y)
        with np.errstate(divide="ignore"):  # v == 0 is rejected by v > 0
            ok = (v > 0) & (np.log(u[:, 2]) < 0.5 * x * x + d - d * v + d * np.log(np.abs(v)))
        take = ok | (t == _GAMMA_TRIES - 1)
        g[todo[take]] = d * np.maximum(v[take], 0)
        todo = todo[~take]
        if not todo.size:
            break
    if shape < 1:
        g = g * np.exp(np.log(_uniforms(k0, k1, local, [0])[:, 0]) / shape)
    return g


def _halving_sum(x):
    """Sum over the last axis by halves (zero-padded to a power of two): elementwise adds,
    the same bits for any number of rows."""
    p = 1 << (x.shape[-1] - 1).bit_length()
    x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, p - x.shape[-1])])
    while x.shape[-1] > 1:
        h = x.shape[-1] // 2
        x = x[..., :h] + x[..., h:]
    return x[..., 0]


def dirichlet_weights(key, m, prior_strength, first, count):
    """Dirichlet weights ``(count, m)`` of posterior samples ``first .. first + count - 1``.

    Dirichlet(prior_strength, 1, ..., 1) over the pseudo-observation (entry 0) and ``m - 1``
    data sets as normalised Gamma draws: Exp(1) ``= -log U`` for the data sets,
    :func:`gamma` for the pseudo-observation (weight exactly 0 when ``prior_strength ==
    0``). The library's random stream: sample ``g`` has the key words
    ``bits(fold_in(key, g // 4096), 4)`` and entry ``j``'s uniform the words at counters
    ``2 j 4096 + g % 4096`` and the next ``4096`` on (the first two key words; the gamma
    the other two), so a sample depends on its index only.
    """
    g = first + np.arange(count, dtype=np.int64)
    kb0 = first // KEY_BLOCK
    blocks = np.arange(kb0, (first + count - 1) // KEY_BLOCK + 1, dtype=np.int64)
    keys = block_key_words(key, blocks, 4)[g // KEY_BLOCK - kb0]  # (count, 4)
    local = (g % KEY_BLOCK).astype(np.uint32)
    e = np.empty((count, m))
    e[:, 1:] = -np.log(_uniforms(keys[:, :1], keys[:, 1:2], local[:, None], np.arange(1, m)))
    e[:, 0] = gamma(keys[:, 2], keys[:, 3], local, prior_strength) if prior_strength > 0 else 0
    return e / _halving_sum(e)[:, None]


def posterior(z, w, rope, pairs):
    """Posterior samples ``(count, 3)`` of the values ``z : (m,)`` for weights ``w : (count,
    m)``: :func:`jaxtests.kernels.statistics.signrank_posterior_sorted` in numpy, with
    ``pairs`` its :func:`~jaxtests.kernels.statistics.signrank_pairs` of ``z``."""
    return kstatistics.signrank_posterior_sorted(z, w, rope, pairs, xp=np)


def winner_shares(samples):
    """Each sample's vote for the largest of its three probabilities, in sixths:
    ``(..., 3)`` integers, 6 to a sole winner, 3 to each of two tied, 2 to each of three.

    baycomp's ``Posterior.probs`` gives a tie to the first (``argmax``): for ``a == b``
    with ``rope = 0`` every sample is ``(1/2, 0, 1/2)`` and "b better" got probability 1,
    and again after swapping the learners. Split evenly, as Benavoli et al.'s tutorial
    code does (``BayesianSignedRank.R``: each winner gets ``1 / winners``), a tie counts
    the same for both sides, and swapping ``a`` and ``b`` swaps ``p_left`` and
    ``p_right``. Integers, so sums over blocks are exact.
    """
    win = samples == np.max(samples, axis=-1, keepdims=True)
    n_win = np.sum(win, axis=-1, keepdims=True)
    return np.where(win, 6 // n_win, 0)
