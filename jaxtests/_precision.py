"""Scoped float64: public functions compute in float64 without touching global config.

The wrapper is also where the first public call turns on the persistent compilation cache
(:mod:`jaxtests._cache`), the one JAX setting jaxtests may change.
"""

import functools

import jax

from jaxtests import _cache

__all__ = ["x64"]


def _traced(args, kwargs):
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves((args, kwargs)))


def _under_jit(args, kwargs):
    """True while a ``jax.jit`` (or other staging) trace is being built."""
    try:
        from jax._src import core

        return core.unsafe_am_i_under_a_jit()
    except (ImportError, AttributeError):  # moved in another JAX version: traced inputs
        return _traced(args, kwargs)


def x64(fn):
    """Run ``fn`` under ``jax.enable_x64(True)``, or in the caller's precision under jit.

    The user's global ``jax_enable_x64`` flag is left as it was: the context
    manager is thread-local and restored on exit, so importing or calling
    jaxtests never changes the precision of the caller's own JAX code.

    Inside the caller's ``jax.jit`` with x64 off, the trace is built in float32
    and switching to float64 half-way mixes the two in one jaxpr ("lax.lt requires
    arguments to have the same dtypes"); there ``fn`` runs in float32 (the kernels
    are dtype-generic). Under ``jax.vmap`` alone it still runs in float64. A public
    function that needs concrete values (it validates them, or picks its method or
    its number of draws from them) raises a ``TypeError`` naming that under ``jit``
    and ``vmap``.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _cache._done:  # the persistent compilation cache, set at the first public call
            _cache.ensure()
        try:
            if jax.config.jax_enable_x64 or not _under_jit(args, kwargs):
                with jax.enable_x64(True):
                    return fn(*args, **kwargs)
            return fn(*args, **kwargs)
        except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError) as e:
            if not _traced(args, kwargs):
                raise
            raise TypeError(
                f"jaxtests.{fn.__name__} cannot run under jax.jit or jax.vmap: it needs the "
                "concrete values of its inputs (to validate them and to choose its method "
                "and its draws from them). Call it outside the transformation."
            ) from e

    return wrapper
