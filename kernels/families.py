"""Evaluator families: the ways the banded Monte Carlo sums ``P = sum_i bit_i d_i`` are computed.

The fused evaluators (:class:`~jaxtests.kernels.evaluators.FusedEval`,
:class:`~jaxtests.kernels.evaluators.SubsetEval`) read a block's random words
from :mod:`jaxtests.kernels.random` and hand the sums to a family: the family
decides how the words become sums, and bounds how far its sums may lie from
the ordered float64 ones of :func:`~jaxtests.kernels.resampling.bit_sums_ordered`,
which recheck every draw whose decision that bound could change. So any
family gives the same counts for the same words.

A family (:class:`Family`) is its traced ``sums`` of :class:`Terms`, whether
they read the float32 copy (``float32``), and ``err_bound``, the bound on
their distance from the ordered sums (:func:`layout` lays the terms out once
per call inside a test's preparation program). :data:`FAMILIES` names them
and :func:`for_platform` gives a platform's default; the
host-side choices of a family (padding, block sizes) are its entry in
:mod:`jaxtests._profile`. A new family (a Pallas kernel, say) is one
:class:`Family` subclass like this module's, :func:`register`-ed, plus its
schedule.

Pure jnp; no validation.
"""

import abc
import dataclasses
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import resampling as kresampling

__all__ = [
    "DENSE",
    "DENSE32",
    "FAMILIES",
    "WORDS",
    "Dense",
    "Dense32",
    "Family",
    "Sums",
    "Terms",
    "WordLoop",
    "dense32_err",
    "float32_err",
    "float64_err",
    "for_platform",
    "layout",
    "pad_words",
    "register",
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


class Family(abc.ABC):
    """What the engine asks of an evaluator family (every family here is one).

    ``name`` (what ``JAXTESTS_EVALUATORS`` says), ``float32`` (whether
    :meth:`sums` reads :attr:`Terms.f32`, which :func:`layout` then makes),
    ``err_bound(d, n_words, slope, offset, live)`` (the bound on
    ``|T - T_ordered|`` of its sums, traced), :meth:`sums` and
    :meth:`recheck_pass`. Families are frozen dataclasses: static arguments
    of the programs that read them, chosen once per call.
    """

    name: ClassVar[str]
    float32: ClassVar[bool]
    err_bound: ClassVar[object]

    @abc.abstractmethod
    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` of the lanes ``(keys, local)`` (:func:`kresampling.bit_sums`' words);
        with ``count_mask : (W,)`` also the set bits under it, ``(L,)`` int32."""

    def recheck_pass(self, n_words):
        """``(group, per)``: unsure lanes are rechecked by groups of ``group`` consecutive
        draws, ``per`` groups a pass, for terms of ``n_words`` padded words."""
        # A cumulative sum over 2^17 lanes costs about 1 ms on XLA:CPU, as much as the sums of
        # m = 100: lanes are found by groups of 16. A pass holds at most 1024 lanes and 2^22
        # float64 adds at the padded size (a pass costs its lanes times the live instances; a
        # capacity holds up to 16,384 instances in 16 groups, enough for data with many ties
        # at a threshold).
        group = 16
        per = 1024 // group
        while per > 1 and per * group * n_words * 32 > 2**22:
            per //= 2
        return group, per


@dataclasses.dataclass(frozen=True)
class WordLoop(Family):
    """Loops over the live words, float32 masked adds in 512-bit lanes: fast on a CPU.

    :func:`~kresampling.bit_sums` generates each word inside the loop and
    consumes it at once; the loop stops at the live words, so one program
    serves every size up to the padding.
    """

    name: ClassVar[str] = "words"
    float32: ClassVar[bool] = True
    err_bound = staticmethod(float32_err)

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` (and with ``count_mask`` the set bits under it, ``(L,)``)."""
        return kresampling.bit_sums(
            keys[:, 0], keys[:, 1], local, terms.f32, count_mask, terms.live_words, stride
        )


@dataclasses.dataclass(frozen=True)
class Dense(Family):
    """A block's words generated at once, ``where(bit, d, 0)`` summed in one fused reduction.

    :func:`~kresampling.dense_sums` in float64 (no loop whose trip count grows
    with the data): the shape for GPUs, where a long sequence of small
    kernels is what made the word loop slow.
    """

    name: ClassVar[str] = "dense"
    float32: ClassVar[bool] = False
    err_bound = staticmethod(float64_err)

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` of :attr:`Terms.exact` (integers stay exact in any order)."""
        d = terms.exact
        mask = None if count_mask is None else count_mask[: d.shape[1]]
        return kresampling.dense_sums(keys[:, 0], keys[:, 1], local, d, stride or d.shape[1], mask)


@dataclasses.dataclass(frozen=True)
class Dense32(Family):
    """:class:`Dense`'s shape with float32 byte tables: a lookup per 8 instances.

    :func:`~kresampling.dense_sums32`: each byte of a draw's words selects an
    entry of a float32 table of the float32 copy's byte sums
    (:func:`~kresampling.byte_tables32`, made once per block), the entries
    added in float64, one fused reduction per chunk (no loop over words),
    within :func:`dense32_err` of the ordered float64 sums: about ``2 u
    sum|d|`` (``u = 2^-24``), so at ``m = 10^4`` a few lanes in 10^5 go to the
    float64 recheck. The tables take 4 KB per word and hypothesis (8 KB while
    made). (Its first shape, a float32 tree of 32 terms per word,
    ran 2x slower than :class:`Dense` on an H200.) A block is ``chunks`` chunks of
    a dense block's size (:mod:`jaxtests._profile`), summed one after the
    other, so the recheck (a loop over the data's words on any device) runs
    once per ``chunks`` dense blocks, on single lanes gathered from all of them
    (up to ``recheck_lanes`` per pass).
    """

    name: ClassVar[str] = "dense32"
    float32: ClassVar[bool] = True
    err_bound = staticmethod(dense32_err)
    chunks: int = 16
    recheck_lanes: int = 8192

    def recheck_pass(self, n_words):
        """Single lanes, :attr:`recheck_lanes` a pass: each pass is a loop over the words."""
        return 1, self.recheck_lanes

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        """``P : (H, L)`` float64 (integers in ``f32`` come out exact: every partial sum is)."""
        d = terms.f32
        mask = None if count_mask is None else count_mask[: d.shape[1]]
        stride = stride or d.shape[1]
        n = local.shape[0]
        tables = kresampling.byte_tables32(d)  # once per block, for all its chunks

        def one(kl):
            k, loc = kl
            return kresampling.dense_sums32(k[:, 0], k[:, 1], loc, tables, stride, mask)

        # Small blocks (a test of a few thousand draws) stay one chunk.
        k = self.chunks if n % self.chunks == 0 and n // self.chunks >= 1024 else 1
        if k == 1:
            return one((keys, local))
        out = lax.map(one, (keys.reshape(k, n // k, -1), local.reshape(k, n // k)))
        if count_mask is None:
            return jnp.moveaxis(out, 0, 1).reshape(out.shape[1], n)
        p, ones = out
        return jnp.moveaxis(p, 0, 1).reshape(p.shape[1], n), ones.reshape(n)


# The registry, as jax registers a lowering per platform: families by name (what
# ``JAXTESTS_EVALUATORS`` may force), and the default family of each platform.
FAMILIES = {}
_DEFAULTS = {}
_ANY = "*"


def register(family, platforms=()):
    """Make ``family`` known by its name, and the default of ``platforms`` ("*": any other)."""
    FAMILIES[family.name] = family
    for platform in platforms:
        _DEFAULTS[platform] = family
    return family


def for_platform(platform):
    """The default family of the devices of ``platform`` ("cpu", "gpu", ...)."""
    return _DEFAULTS.get(platform, _DEFAULTS[_ANY])


# Words on the CPU (several times faster there than a dense kernel); dense on accelerators
# ("dense32" becomes a GPU's default only once a GPU has measured it faster: its first shape
# ran 2x slower than dense on an H200; its byte tables are not yet measured there).
WORDS = register(WordLoop(), ("cpu",))
DENSE = register(Dense(), (_ANY,))
DENSE32 = register(Dense32())


def layout(family, d, slope, offset, live):
    """:class:`Sums` of ``slope P + offset`` over ``d : (H, 32 W)`` (zero-padded) for ``family``.

    ``live`` (traced) the words the loops run over.
    """
    n_words = d.shape[-1] // 32
    f32 = pad_words(d, n_words) if family.float32 else None
    terms = Terms(pad_words(d, n_words, jnp.float64), f32, live)
    return Sums(terms, slope, offset, family.err_bound(d, n_words, slope, offset, live))
