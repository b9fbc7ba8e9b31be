"""Scoped float64: public functions compute in float64 without touching global config."""

import functools

import jax

__all__ = ["x64"]


def x64(fn):
    """Run ``fn`` under ``jax.enable_x64(True)``.

    The user's global ``jax_enable_x64`` flag is left as it was: the context
    manager is thread-local and restored on exit, so importing or calling
    jaxtests never changes the precision of the caller's own JAX code.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper
