"""Evaluator families: the ways the banded Monte Carlo sums ``P = sum_i bit_i d_i`` are computed.

The fused evaluators (:class:`~jaxtests.kernels.evaluators.FusedEval`,
:class:`~jaxtests.kernels.evaluators.SubsetEval`) read a block's random words
from :mod:`jaxtests.kernels.random` and hand the sums to a family: the family
decides how the words become sums, and bounds how far its sums may lie from
the ordered float64 ones of :func:`~jaxtests.kernels.resampling.bit_sums_ordered`,
which recheck every draw whose decision that bound could change. So any
family gives the same counts for the same words.

A family is its traced ``sums`` of :class:`Terms`, whether they read the
float32 copy (``float32``), and ``err_bound``, the bound on their distance
from the ordered sums (:func:`layout` lays the terms out once per call
inside a test's preparation program). :data:`FAMILIES` names them; the
host-side choices of a family (padding, block sizes) are its entry in
:mod:`jaxtests._profile`. A new family (a Pallas kernel, say) is one class
like this module's plus those two entries.

Pure jnp; no validation.
"""

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import resampling as kresampling

__all__ = [
    "FAMILIES",
    "Dense",
    "Dense32",
    "Sums",
    "Terms",
    "WordLoop",
    "dense32_err",
    "float32_err",
    "float64_err",
    "layout",
    "pad_words",
]

EPS = float(np.finfo(np.float64).eps)


class Terms(NamedTuple):
    """The terms ``d_i`` of ``P = sum_i bit_i d_i``, as a family's sums read them.

    ``exact : (H, W, 32)`` zero-padded, in a dtype that holds them exactly
    (float64 data, or integer count changes in float32): what the dense
    family and the ordered recheck sum; ``f32`` their float32 copy, for the
    families that sum in float32 (None for the others); ``live_words`` (int32)
    the words the loops run over (None: all ``W``).
    """

    exact: jax.Array
    f32: jax.Array | None = None
    live_words: jax.Array | None = None


class Sums(NamedTuple):
    """The arrays of the banded statistics ``T = slope P + offset`` of one call.

    ``terms`` laid out for the call's family; ``slope, offset, err_bound : (H,)``,
    ``err_bound`` bounding ``|T - T_ordered|`` for the family's sums (the
    half-width of the band that :func:`jaxtests.kernels.exceedance.evaluate`
    rechecks).
    """

    terms: Terms
    slope: jax.Array
    offset: jax.Array
    err_bound: jax.Array


def pad_words(d, n_words, dtype=jnp.float32):
    """``(H, m)`` -> ``(H, n_words, 32)`` zero-padded, for :func:`~kresampling.bit_sums`."""
    m = d.shape[-1]
    return jnp.pad(d, ((0, 0), (0, 32 * n_words - m))).reshape(-1, n_words, 32).astype(dtype)


def float32_err(d, n_words, a, c, n_live=None):
    """Bound on ``|t32 - t64|`` for ``t = a P + c`` of ``bit_sums`` vs ``bit_sums_ordered``.

    Both sums are within their rounding bounds of the exact ``P`` (the float32
    one, Higham's, of :func:`jaxtests.kernels.resampling.bit_sums_error_bound`;
    the float64 one ``gamma_{32 n_live}``), plus a float64 correction and the
    affine map. ``d : (H, m)``, ``a, c : (H,)``; ``n_live`` (traced or int,
    default ``n_words``) the words the sums run over.
    """
    live = n_words if n_live is None else n_live
    abs_sum = jnp.sum(jnp.abs(d), axis=-1)
    bound = kresampling.bit_sums_error_bound(abs_sum, n_words, live)
    live_f = live if isinstance(live, int) else live.astype(abs_sum.dtype)
    bound = bound + (32 * live_f + 8) * EPS * abs_sum
    return (a * bound + 8 * EPS * jnp.abs(c)) * (1 + 2.0**-20)


def float64_err(d, n_words, a, c, n_live=None):
    """Bound on ``|t - t64|`` for ``t = a P + c`` of :func:`~kresampling.dense_sums` in float64.

    The dense sum over ``n_words`` padded words is within
    :func:`~kresampling.dense_sums_error_bound` of the exact ``P``, the ordered
    float64 sum within ``gamma_{32 n_live}``, plus the affine map's rounding
    (an FMA only rounds less). ``d : (H, m)``, ``a, c : (H,)``.
    """
    return _dense_err(kresampling.dense_sums_error_bound, d, n_words, a, c, n_live)


def dense32_err(d, n_words, a, c, n_live=None):
    """Bound on ``|t - t64|`` for ``t = a P + c`` of :func:`~kresampling.dense_sums32`.

    The float32 dense sum over ``n_words`` padded words is within
    :func:`~kresampling.dense_sums32_error_bound` of the exact ``P``, the
    ordered float64 sum within ``gamma_{32 n_live}``, plus the affine map's
    rounding. ``d : (H, m)``, ``a, c : (H,)``.
    """
    return _dense_err(kresampling.dense_sums32_error_bound, d, n_words, a, c, n_live)


def _dense_err(sum_bound, d, n_words, a, c, n_live):
    """A dense family's bound: its sums' ``sum_bound`` plus the ordered sum's and the map's."""
    live = n_words if n_live is None else n_live
    live_f = live if isinstance(live, int) else live.astype(d.dtype)
    abs_sum = jnp.sum(jnp.abs(d), axis=-1)
    bound = sum_bound(abs_sum, n_words)
    bound = bound + (32 * live_f + 8) * EPS * abs_sum
    return (a * bound + 8 * EPS * jnp.abs(c)) * (1 + 2.0**-20)


@dataclasses.dataclass(frozen=True)
class WordLoop:
    """Loops over the live words, float32 masked adds in 512-bit lanes: fast on a CPU.

    :func:`~kresampling.bit_sums` generates each word inside the loop and
    consumes it at once; the loop stops at the live words, so one program
    serves every size up to the padding.
    """

    name: str = "words"
    float32: bool = True  # sums :attr:`Terms.f32`
    err_bound = staticmethod(float32_err)

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` (and with ``count_mask`` the set bits under it, ``(L,)``)."""
        return kresampling.bit_sums(
            keys[:, 0], keys[:, 1], local, terms.f32, count_mask, terms.live_words, stride
        )


@dataclasses.dataclass(frozen=True)
class Dense:
    """A block's words generated at once, ``where(bit, d, 0)`` summed in one fused reduction.

    :func:`~kresampling.dense_sums` in float64 (no loop whose trip count grows
    with the data): the shape for GPUs, where a long sequence of small
    kernels is what made the word loop slow.
    """

    name: str = "dense"
    float32: bool = False
    err_bound = staticmethod(float64_err)

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` of :attr:`Terms.exact` (integers stay exact in any order)."""
        d = terms.exact
        mask = None if count_mask is None else count_mask[: d.shape[1]]
        return kresampling.dense_sums(keys[:, 0], keys[:, 1], local, d, stride or d.shape[1], mask)


@dataclasses.dataclass(frozen=True)
class Dense32:
    """:class:`Dense`'s shape on the float32 copy: the rate of a hand-written float32 kernel.

    :func:`~kresampling.dense_sums32`: each word's 32 terms added in float32
    by a fixed tree, the word sums in float64, one fused reduction per chunk
    (no loop over words), within :func:`dense32_err` of the ordered float64
    sums: about ``6 u sum|d|`` (``u = 2^-24``), so at ``m = 10^4`` a few
    lanes in 10^5 go to the float64 recheck. A block is ``chunks`` chunks of
    a dense block's size (:mod:`jaxtests._profile`), summed one after the
    other, so the recheck (a loop over the data's words on any device) runs
    once per ``chunks`` dense blocks, on single lanes gathered from all of them
    (``recheck_group``, up to ``recheck_lanes`` per pass).
    """

    name: str = "dense32"
    chunks: int = 16
    recheck_group: int = 1
    recheck_lanes: int = 8192
    float32: bool = True
    err_bound = staticmethod(dense32_err)

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` float64 (integers in ``f32`` come out exact: every partial sum is)."""
        d = terms.f32
        mask = None if count_mask is None else count_mask[: d.shape[1]]
        stride = stride or d.shape[1]
        n = local.shape[0]

        def one(kl):
            k, loc = kl
            return kresampling.dense_sums32(k[:, 0], k[:, 1], loc, d, stride, mask)

        # Small blocks (a test of a few thousand draws) stay one chunk.
        k = self.chunks if n % self.chunks == 0 and n // self.chunks >= 1024 else 1
        if k == 1:
            return one((keys, local))
        out = lax.map(one, (keys.reshape(k, n // k, -1), local.reshape(k, n // k)))
        if count_mask is None:
            return jnp.moveaxis(out, 0, 1).reshape(out.shape[1], n)
        p, ones = out
        return jnp.moveaxis(p, 0, 1).reshape(p.shape[1], n), ones.reshape(n)


FAMILIES = {f.name: f for f in (WordLoop(), Dense(), Dense32())}


def layout(family, d, slope, offset, live):
    """:class:`Sums` of ``slope P + offset`` over ``d : (H, 32 W)`` (zero-padded) for ``family``.

    ``live`` (traced) the words the loops run over.
    """
    fam = FAMILIES[family]
    n_words = d.shape[-1] // 32
    f32 = pad_words(d, n_words) if fam.float32 else None
    terms = Terms(pad_words(d, n_words, jnp.float64), f32, live)
    return Sums(terms, slope, offset, fam.err_bound(d, n_words, slope, offset, live))
