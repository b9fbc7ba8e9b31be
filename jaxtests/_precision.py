"""Scoped float64: public functions compute in float64 without touching global config."""

import concurrent.futures
import functools

import jax

__all__ = ["map_concurrently", "x64"]


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


def map_concurrently(fn, items, *, workers=2, on_result=None):
    """``[fn(item) for item in items]``, computed by ``workers`` threads.

    XLA:CPU runs one computation's small operations one after another, so a
    loop of many small steps leaves cores idle; two computations in flight fill
    them (about 1.7x for the label-permutation stream on two cores). Each
    result must not depend on which thread computed it (pure jitted calls).
    The caller's precision (``jax_enable_x64``, thread-local) is carried into
    the threads. ``on_result(item, result)`` runs in the calling thread, in
    order, as results arrive (progress reports).
    """
    flag = bool(jax.config.jax_enable_x64)

    def call(item):
        with jax.enable_x64(flag):
            return jax.block_until_ready(fn(item))

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(call, item) for item in items]
        out = []
        for item, future in zip(items, futures, strict=True):
            out.append(future.result())
            if on_result is not None:
                on_result(item, out[-1])
    return out
