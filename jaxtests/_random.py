"""Keys and seeds: every random result records the seed that reproduces it."""

import secrets

import jax
import numpy as np

from jaxtests import _distributed
from jaxtests.kernels import random as krandom

__all__ = ["resolve_key"]

_MAX_SEED = 2**63


def _seed_key(seed):
    """``jax.random.key(seed)``, its threefry words made on the host (no program to compile)."""
    if jax.config.jax_default_prng_impl != "threefry2x32":
        return jax.random.key(seed)
    # threefry's seed: the high and low 32-bit words of the 64-bit seed
    return jax.random.wrap_key_data(np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32))


def resolve_key(key, name="key"):
    """Return ``(typed_key, seed)`` for a user-supplied ``key``.

    ``key`` may be None (a fresh 63-bit seed is drawn from OS entropy), a
    non-negative int, or a JAX key (typed, or a raw ``uint32`` key array).
    ``seed`` is the int given or drawn, or the key's data as a tuple of ints,
    so that ``key=seed`` (or ``jax.random.wrap_key_data``) repeats the run.
    Call it under ``jax.enable_x64`` so 64-bit seeds keep their high word.
    """
    if key is None:
        # every process of a distributed run must draw with the same seed
        seed = _distributed.agree(secrets.randbits(63))
        return _seed_key(seed), seed
    if isinstance(key, bool | np.bool_):
        raise TypeError(f"`{name}` must be an int seed or a JAX key, got a bool.")
    if isinstance(key, int | np.integer):
        seed = int(key)
        if not 0 <= seed < _MAX_SEED:
            raise ValueError(f"`{name}` must be an int seed in [0, 2**63), got {seed}.")
        return _seed_key(seed), seed
    if isinstance(key, jax.Array | np.ndarray):
        if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
            if key.shape != ():
                raise ValueError(
                    f"`{name}` must be a single key, got key array of shape {key.shape}."
                )
            data = jax.random.key_data(key)
        elif key.dtype == np.uint32 and key.shape == (2,):
            data = key
            key = jax.random.wrap_key_data(key)
        else:
            raise TypeError(
                f"`{name}` must be an int seed or a JAX key, got an array of dtype {key.dtype} "
                f"and shape {key.shape}."
            )
        if isinstance(data, jax.core.Tracer):
            return key, None
        return key, tuple(int(v) for v in np.asarray(data).ravel())
    raise TypeError(f"`{name}` must be an int seed or a JAX key, got {type(key).__name__}.")


# ---------------------------------------------------------------- threefry on the host
# Threefry-2x32 (Salmon et al. 2011, 20 rounds) as jax's `threefry2x32_p` computes it, its key
# derivations and uniform draws in numpy for concrete keys: the same words as jax.random
# (tests/test_random_host.py and tests/test_bayesian.py check them against it), without a
# program to compile for each.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))  # the two alternating round groups
_PARITY = 0x1BD11BDA  # the key schedule's parity constant


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 of the counter pairs ``(x0, x1)`` under the key ``(k0, k1)``, in numpy.

    The same words as ``jax.random``'s threefry (``jax/_src/random/threefry2x32.py``).
    All ``uint32``, broadcast together; returns the pair ``(y0, y1)``.
    """
    k0, k1, x0, x1 = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (k0, k1, x0, x1)))
    with np.errstate(over="ignore"):  # words wrap modulo 2^32, as the hash means them to
        ks = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
        # fresh arrays (0-d for scalars), updated in place below
        x0 = np.add(x0, ks[0], out=np.empty(x0.shape, np.uint32))
        x1 = np.add(x1, ks[1], out=np.empty(x1.shape, np.uint32))
        tmp = np.empty_like(x1)
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                np.add(x0, x1, out=x0)
                np.left_shift(x1, np.uint32(r), out=tmp)  # x1 rotated left by r
                np.right_shift(x1, np.uint32(32 - r), out=x1)
                np.bitwise_or(x1, tmp, out=x1)
                np.bitwise_xor(x1, x0, out=x1)
            np.add(x0, ks[(i + 1) % 3], out=x0)
            np.add(x1, ks[(i + 2) % 3], out=x1)
            np.add(x1, np.uint32(i + 1), out=x1)
    return x0[()], x1[()]  # scalars for scalar inputs


def host_threefry():
    """Whether keys' words can be derived on the host: JAX's default threefry, partitionable."""
    return jax.config.jax_default_prng_impl == "threefry2x32" and bool(
        jax.config.jax_threefry_partitionable
    )


def host_words(key):
    """``key``'s words where :func:`split_words` and the like derive its keys on the host
    (a concrete threefry key, partitionable layout), else None (``jax.random`` does)."""
    if not host_threefry() or isinstance(key, jax.core.Tracer):
        return None
    return key_words(key)


def key_words(key):
    """The ``(2,)`` ``uint32`` words of a concrete threefry key (typed or raw, numpy), or None
    for a key of another PRNG implementation (whose words only ``jax.random`` computes)."""
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        if str(jax.random.key_impl(key)) != "threefry2x32":
            return None
        key = jax.random.key_data(key)
    elif jax.config.jax_default_prng_impl != "threefry2x32":
        return None
    return np.asarray(key, np.uint32)


def _counters(n):
    i = np.arange(n, dtype=np.uint64)
    return (i >> np.uint64(32)).astype(np.uint32), i.astype(np.uint32)


def fold_in_words(words, data):
    """Words of ``jax.random.fold_in(key, data)`` from the key's words ``(2,)`` uint32."""
    return np.array(fold_in_pair(words[0], words[1], data % 2**32), np.uint32)


def split_words(words, n):
    """Words ``(n, 2)`` of ``jax.random.split(key, n)`` (partitionable threefry)."""
    a, b = threefry2x32(words[0], words[1], *_counters(n))
    return np.stack([a, b], axis=-1)


def bits32_words(words, n):
    """``jax.random.bits(key, (n,), uint32)`` (partitionable threefry)."""
    a, b = threefry2x32(words[0], words[1], *_counters(n))
    return a ^ b


def uniform64_words(words, n):
    """``jax.random.uniform(key, (n,), float64)`` (partitionable threefry)."""
    return uniform64_pairs(words[0], words[1], n)


def uniform64_pairs(k0, k1, n):
    """``jax.random.uniform(key, (n,), float64)`` of the keys' words ``k0, k1`` (scalars, or
    arrays ``(k,)`` -> ``(k, n)``), partitionable threefry."""
    k0, k1 = np.asarray(k0, np.uint32)[..., None], np.asarray(k1, np.uint32)[..., None]
    a, b = threefry2x32(k0, k1, *_counters(n))
    bits = a.astype(np.uint64)  # the 64-bit word a b, then JAX's uniform: 52 random
    np.left_shift(bits, np.uint64(32), out=bits)  # mantissa bits under the exponent of 1.0,
    np.bitwise_or(bits, b, out=bits, casting="unsafe")  # minus 1 (in place: no copies)
    np.right_shift(bits, np.uint64(12), out=bits)
    np.bitwise_or(bits, np.array(1.0).view(np.uint64), out=bits)
    out = bits.view(np.float64)
    np.subtract(out, 1.0, out=out)
    return out


def split_key(key, n=2):
    """``jax.random.split(key, n)`` as ``n`` typed keys, on the host where it can be."""
    words = host_words(key)
    if words is not None:
        return [jax.random.wrap_key_data(w) for w in split_words(words, n)]
    return list(jax.random.split(key, n))


def block_key_words(key, blocks, n_keys):
    """``bits(fold_in(key, b), (n_keys,))`` of each block ``b`` of ``blocks``: ``(k, n_keys)``.

    The key words of :func:`jaxtests.kernels.random.block_keys`, for a concrete key:
    threefry on the host (:func:`threefry2x32`, no compiled program), either of
    ``jax_threefry_partitionable``'s layouts as ``jax.random.bits`` has them now; a key
    of another implementation gets its words from ``jax.random`` (small programs).
    """
    blocks = np.asarray(blocks, np.int64).astype(np.uint32)  # fold_in takes uint32 data
    data = key_words(key)
    if data is None:
        with jax.enable_x64(True):
            return np.asarray(krandom.block_keys(key, np.asarray(blocks, np.int64), n_keys))
    return bits_pair(*fold_in_pair(data[0], data[1], blocks), n_keys)


def fold_in_pair(k0, k1, data):
    """The words ``(f0, f1)`` of ``jax.random.fold_in`` of the keys ``(k0, k1)`` and uint32
    ``data`` (broadcast): ``threefry(key, (0, data))``, as ``threefry_seed`` splits it."""
    data = np.asarray(data, np.uint32)
    return threefry2x32(k0, k1, np.zeros_like(data), data)


def bits_pair(k0, k1, n_keys):
    """``jax.random.bits(key, (n_keys,), uint32)`` of the keys ``(k0, k1)`` (each ``(k,)``):
    ``(k, n_keys)``, in the ``jax_threefry_partitionable`` layout in force."""
    k0, k1 = np.asarray(k0)[..., None], np.asarray(k1)[..., None]
    j = np.arange(n_keys, dtype=np.uint32)
    if jax.config.jax_threefry_partitionable:  # word j: both halves of threefry(k, (0, j))
        y0, y1 = threefry2x32(k0, k1, np.zeros_like(j), j)
        return y0 ^ y1
    # the original layout: threefry of the counters 0 .. n - 1 (and a 0 to make them even)
    # split in halves
    half = -(-n_keys // 2)
    c = np.zeros(2 * half, np.uint32)
    c[:n_keys] = np.arange(n_keys)
    y0, y1 = threefry2x32(k0, k1, c[:half], c[half:])
    return np.concatenate([y0, y1], axis=-1)[..., :n_keys]
