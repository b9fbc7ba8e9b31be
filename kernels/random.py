"""The library's one random stream: counter-based words keyed by threefry.

Word ``j`` of draw ``g`` is ``keyed_words(k0, k1, (g mod 4096) n_words + j)``
(``n_words``: the stride, at least the draw's words; the sign-flip and two-sample
Monte Carlo draws use :func:`stride_words`, fixed for good, whatever the data's
padding)
with ``(k0, k1) = bits(fold_in(key, g // 4096))`` (threefry): two keyed rounds
of Wellons' ``lowbias32`` integer hash, a counter-based generator, so any word
is recomputed on demand (no word matrix is stored) and a draw's randomness
depends on its index only, not on block sizes, batches or devices. Within a
key block distinct counters give distinct inner values; the second key word
decorrelates key blocks whose inner streams happen to overlap. Needs
``4096 n_words <= 2^32`` (up to 33 million instances).

Every resampling draw of the library (sign flips, label permutations, swaps,
within-block permutations, the learners' random restarts) reads this stream.
Pure; no validation.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "KEY_BLOCK",
    "block_keys",
    "draw_keys",
    "hash32",
    "keyed_words",
    "ladder",
    "stride_words",
    "threefry2x32",
    "uniform_below",
    "word_grid",
]


def hash32(x, xp=jnp):
    """Wellons' ``lowbias32`` integer hash of ``uint32`` values (a bijection).

    ``x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16``:
    the multiply-xorshift pair with the lowest avalanche bias among those
    searched by Wellons' hash prospector (2018). ``xp``: the array namespace
    (``numpy`` for concrete words on the host, the same bits). Pure; no validation.
    """
    x = x ^ (x >> xp.uint32(16))
    x = x * xp.uint32(0x7FEB352D)
    x = x ^ (x >> xp.uint32(15))
    x = x * xp.uint32(0x846CA68B)
    return x ^ (x >> xp.uint32(16))


def keyed_words(k0, k1, x, xp=jnp):
    """Counter-based random words ``hash32(hash32(x ^ k0) + k1)``; all ``uint32``.

    Two keyed rounds of :func:`hash32`. For one key the map ``x -> word`` is a
    bijection, so the words of distinct counters never repeat within a key
    block; across key blocks (independent threefry keys) equal inner values are
    separated by the random offset ``k1 - k1'`` before the second round.
    About 14 integer operations per 32 random bits, against about 100 for the
    32 masked adds that consume them, so the generator costs ~15% of a
    sign-flip sum; ``jax.random.bits`` (threefry, 20 rounds) would cost more
    than the sum itself. ``xp`` as :func:`hash32`. Pure; no validation.
    """
    return hash32(hash32(x ^ k0, xp) + k1, xp)


KEY_BLOCK = 4096  # draws sharing one fold_in key

# The random layout of the sign-flip and two-sample Monte Carlo draws: the counter stride of a
# draw's words for n instances. Part of every Monte Carlo p-value of a given key: never change
# it. (These were the CPU capacities of 16,384 and 262,144 instances when it was frozen;
# padding is a backend's choice and no longer moves the draws.)
_STRIDES = (2**9, 2**13)


def ladder(n):
    """The smallest of 1, 2, 3, 4, 6, 8, 12, ... (``2^k`` and ``3 2^k``) that is ``>= n``."""
    n = max(int(n), 1)
    p = 1 << (n - 1).bit_length()  # the power of two at or above n
    return 3 * p // 4 if p >= 4 and 3 * p // 4 >= n else p


def stride_words(n):
    """Counter stride (in words) of a draw over ``n`` instances: frozen, independent of padding.

    ``512`` up to 16,384 instances, ``8192`` up to 262,144, beyond that
    :func:`ladder` of the draw's words.
    """
    words = -(-int(n) // 32)
    for stride in _STRIDES:
        if words <= stride:
            return stride
    return ladder(words)


_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(k0, k1, x0, x1):
    """JAX's ``threefry2x32`` hash of ``(x0, x1)`` under key ``(k0, k1)``, all ``uint32``.

    The 20 rounds of Salmon et al. (2011) as JAX's unrolled lowering writes
    them (integer adds, rotations and xors: the same bits on every backend),
    straight-line instead of the rolled loop JAX lowers on a CPU, so a handful
    of keys costs one fused kernel instead of a loop of small ones (it was
    a fifth of the two-sample engine program's compile). Pure; no validation.
    """
    # lax on arrays of one shape: a third of the trace time of jnp's broadcasting operators
    k0, k1, x0, x1 = jnp.broadcast_arrays(k0, k1, x0, x1)
    add, xor = lax.add, lax.bitwise_xor
    ks = (k0, k1, xor(xor(k0, k1), np.uint32(0x1BD11BDA)))
    x0, x1 = add(x0, ks[0]), add(x1, ks[1])
    for i in range(5):
        for r in _THREEFRY_ROTATIONS[i % 2]:
            x0 = add(x0, x1)
            rot = lax.shift_left(x1, np.uint32(r)) | lax.shift_right_logical(x1, np.uint32(32 - r))
            x1 = xor(x0, rot)
        x0 = add(x0, ks[(i + 1) % 3])
        x1 = add(add(x1, ks[(i + 2) % 3]), np.uint32(i + 1))
    return x0, x1


def _threefry_bits(key):
    """Whether ``key``'s bits come from :func:`threefry2x32` as written (JAX's default)."""
    if not jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
        return False  # a raw uint32 key: jax.random's path, as before
    return jax.random.key_impl(key) == "threefry2x32" and jax.config.jax_threefry_partitionable


def block_keys(key, block_ids, n_keys=2):
    """Per-block ``uint32`` key words ``bits(fold_in(key, block))``: ``(k,)`` -> ``(k, n_keys)``.

    For threefry keys (JAX's default) the words are computed by
    :func:`threefry2x32` as :func:`jax.random.fold_in` and :func:`jax.random.bits`
    compute them (a test compares them bit for bit); other key kinds call those.
    """
    if not _threefry_bits(key):
        return jax.vmap(
            lambda b: jax.random.bits(jax.random.fold_in(key, b), (n_keys,), jnp.uint32)
        )(block_ids)
    k = jax.random.key_data(key)
    b = block_ids.astype(jnp.uint32)
    # fold_in(key, b): the hash of the seed words (0, b); bits(., (n,)): of (0, i), hi ^ lo.
    f0, f1 = threefry2x32(k[0], k[1], jnp.zeros_like(b), b)
    i = jnp.arange(n_keys, dtype=jnp.uint32)[None, :]
    y0, y1 = threefry2x32(f0[:, None], f1[:, None], jnp.zeros_like(i), i)
    return y0 ^ y1


def draw_keys(key, first, n_draws, n_keys=2):
    """Key words and in-block counters of draws ``first, ..., first + n_draws - 1``.

    Draw ``g`` belongs to key block ``g // KEY_BLOCK`` (key words
    ``bits(fold_in(key, g // KEY_BLOCK))``) at position ``g % KEY_BLOCK``.
    ``first`` is a traced int64, ``n_draws`` static. Returns
    ``((n_draws, n_keys)`` uint32, ``(n_draws,)`` uint32)``. The randomness of
    a draw depends on its global index only, so any grouping of draws into
    evaluation blocks, batches or devices sees the same draws.
    """
    g = first + jnp.arange(n_draws, dtype=jnp.int64)
    n_kb = -(-n_draws // KEY_BLOCK) + 1  # key blocks the range can touch
    kb0 = first // KEY_BLOCK
    keys = block_keys(key, kb0 + jnp.arange(n_kb, dtype=jnp.int64), n_keys)  # (n_kb, n_keys)
    keys = jnp.take(keys, g // KEY_BLOCK - kb0, axis=0, mode="clip")
    return keys, (g % KEY_BLOCK).astype(jnp.uint32)


def word_grid(k0, k1, local, n_words, stride=None):
    """Materialised words ``(n_words, L)`` of draws with key words ``k0, k1``, counters ``local``.

    The same words as :func:`bit_sums` uses (word ``j`` of a draw has counter
    ``local stride + j``; ``stride`` defaults to ``n_words``, and a fused sum
    over capacity-padded data has the capacity's word count), for statistics
    that need explicit bits.
    """
    j = jnp.arange(n_words, dtype=jnp.uint32)
    step = jnp.uint32(n_words if stride is None else stride)
    return keyed_words(k0[None, :], k1[None, :], local[None, :] * step + j[:, None])


def uniform_below(r, n):
    """Lemire's multiply-shift: ``(r * n) >> 32`` and whether it is unbiased.

    ``r : uint32`` random, ``n`` a uint32 scalar or array. Rejecting the low
    products below ``2^32 mod n`` makes the accepted values exactly uniform on
    ``[0, n)`` (Lemire 2019, "Fast random integer generation in an interval").
    """
    prod = r.astype(jnp.uint64) * n.astype(jnp.uint64)
    low = (prod & jnp.uint64(0xFFFFFFFF)).astype(jnp.uint32)
    threshold = ((jnp.uint64(1) << 32) % n.astype(jnp.uint64)).astype(jnp.uint32)
    return (prod >> 32).astype(jnp.uint32), low >= threshold
