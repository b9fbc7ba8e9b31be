"""Keys and seeds: every random result records the seed that reproduces it."""

import secrets

import jax
import numpy as np

from jaxtests import _distributed

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
