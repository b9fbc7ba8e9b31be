"""Evaluator families: the ways the banded Monte Carlo sums ``P = sum_i bit_i d_i`` are computed.

The fused evaluators (:class:`~jaxtests.kernels.evaluators.FusedEval`,
:class:`~jaxtests.kernels.evaluators.SubsetEval`) read a block's random words
from :mod:`jaxtests.kernels.random` and hand the sums to a family: the family
decides how the words become sums, and bounds how far its sums may lie from
the ordered float64 ones of :func:`~jaxtests.kernels.resampling.bit_sums_ordered`,
which recheck every draw whose decision that bound could change. So any
family gives the same counts for the same words.

A family is two traced functions: ``layout`` (the arrays its sums read and
their error bound, computed once per call inside a test's preparation
program) and ``sums``. :data:`FAMILIES` names them; the host-side choices of a
family (padding, block sizes) are its entry in :mod:`jaxtests._profile`. A new
family (a Pallas kernel, say) is one module like this one's classes plus those
two entries.

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
    "WordLoop",
    "dense32_err",
    "float32_err",
    "float64_err",
    "layout",
    "pad_words",
]

EPS = float(np.finfo(np.float64).eps)


class Sums(NamedTuple):
    """The arrays of the banded statistics ``T = a P + c`` of one call, laid out for a family.

    ``a, c, err : (H,)`` (``err`` bounds ``|T - T_ordered|`` for the family's
    sums); ``d64 : (H, W, 32)`` the zero-padded data in float64 (the ordered
    recheck reads it); ``nw`` the live words the loops run over (int32);
    ``d32`` the float32 copy, for families that sum in float32 (else None).
    """

    a: jax.Array
    c: jax.Array
    d64: jax.Array
    nw: jax.Array
    err: jax.Array
    d32: jax.Array | None = None

    def arrays(self):
        """The evaluators' data: the fields that are set."""
        return {k: v for k, v in self._asdict().items() if v is not None}


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

    def layout(self, d, a, c, live):
        n_words = d.shape[-1] // 32
        return {"d32": pad_words(d, n_words), "err": float32_err(d, n_words, a, c, live)}

    def sums(self, keys, local, data, stride=None, count_mask=None, integers=False):
        """``P : (H, L)`` (and with ``count_mask`` the set bits under it, ``(L,)``)."""
        del integers  # the float32 copy is what this family always sums
        return kresampling.bit_sums(
            keys, None, local, data["d32"], count_mask, data.get("nw"), stride
        )


@dataclasses.dataclass(frozen=True)
class Dense:
    """A block's words generated at once, ``where(bit, d, 0)`` summed in one fused reduction.

    :func:`~kresampling.dense_sums` in float64 (no loop whose trip count grows
    with the data): the shape for GPUs, where a long sequence of small
    kernels is what made the word loop slow.
    """

    name: str = "dense"

    def layout(self, d, a, c, live):
        return {"err": float64_err(d, d.shape[-1] // 32, a, c, live)}

    def sums(self, keys, local, data, stride=None, count_mask=None, integers=False):
        """``integers``: ``data["d32"]`` holds integers (exact in float32 in any order)."""
        d = data["d32"] if integers else data["d64"]
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

    def layout(self, d, a, c, live):
        n_words = d.shape[-1] // 32
        return {"d32": pad_words(d, n_words), "err": dense32_err(d, n_words, a, c, live)}

    def sums(self, keys, local, data, stride=None, count_mask=None, integers=False):
        """``P : (H, L)`` float64 (integers in ``d32`` come out exact: every partial sum is)."""
        del integers  # the float32 copy is what this family always sums
        d = data["d32"]
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


def layout(family, d, a, c, live):
    """:class:`Sums` of ``a P + c`` over ``d : (H, 32 W)`` (zero-padded) for ``family`` (traced)."""
    n_words = d.shape[-1] // 32
    extra = FAMILIES[family].layout(d, a, c, live)
    return Sums(a, c, pad_words(d, n_words, jnp.float64), live, extra["err"], extra.get("d32"))
