"""JAX's persistent compilation cache, on by default in a per-user folder.

A second process then loads the programs a first one compiled instead of compiling them
again. The folder follows the XDG convention, ``$XDG_CACHE_HOME/jaxtests/jax`` or
``~/.cache/jaxtests/jax``; ``JAXTESTS_CACHE_DIR`` moves it (a path) or turns it off (empty,
``0``, ``off``, ``none``, ``false``). A cache the user configured for JAX wins.

:func:`ensure` runs at the first public call (the ``x64`` wrapper), not at import: JAX
initialises its cache at the first compilation that finds a folder set, so setting it late
still takes effect, and ``import jaxtests`` changes no JAX setting.
"""

import os

import jax

__all__ = ["cache_dir", "ensure"]

# JAX's default (1 s) would skip almost every jaxtests program. Measured (2-core CPU, cold
# signflip_test): its programs compile in 0.01-2.3 s and load from the cache in 0.001-0.08 s,
# so even the shortest gain; 0.05 s or 0.2 s left half or more of them to compile in every process.
MIN_COMPILE_TIME_SECS = 0.0

_OFF = frozenset({"", "0", "off", "none", "false"})
_done = False
_owned = None  # the folder ensure() set, if any


def cache_dir():
    """The folder jaxtests would use, or None where ``JAXTESTS_CACHE_DIR`` turns it off.

    Returns
    -------
    str or None
        ``JAXTESTS_CACHE_DIR`` when set to a path, else ``$XDG_CACHE_HOME/jaxtests/jax``
        (``~/.cache`` when ``XDG_CACHE_HOME`` is unset or relative, as the XDG
        specification says).
    """
    value = os.environ.get("JAXTESTS_CACHE_DIR")
    if value is not None:
        if value.strip().lower() in _OFF:
            return None
        return os.path.abspath(os.path.expanduser(value))
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxtests", "jax")


def ensure():
    """Point JAX's persistent compilation cache at :func:`cache_dir`, once per process.

    Does nothing where the user set ``jax_compilation_cache_dir`` (``jax.config.update`` or
    ``JAX_COMPILATION_CACHE_DIR``) or turned ``jax_enable_compilation_cache`` off, where
    ``JAXTESTS_CACHE_DIR`` turns it off, or where the folder cannot be created or written
    (silently: a missing cache costs time, never a result). Only when it sets the folder does
    it also set ``jax_persistent_cache_min_compile_time_secs``; no other JAX setting changes.

    Returns
    -------
    str or None
        The folder set by this call, or None.
    """
    global _done, _owned
    if _done:
        return None
    _done = True
    if jax.config.jax_compilation_cache_dir is not None:
        return None
    if not jax.config.jax_enable_compilation_cache:
        return None
    folder = cache_dir()
    if folder is None:
        return None
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    # JAX would raise inside the user's first compilation on a folder it cannot use.
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_SECS)
    _owned = folder
    return folder


def programs_dir():
    """Folder of the exported programs (:mod:`jaxtests._aot`), or None.

    ``<cache folder>-programs`` (``~/.cache/jaxtests/jax-programs`` by default), only while
    jaxtests owns JAX's cache: :func:`ensure` set it and it is still JAX's setting.
    """
    if _owned is None or jax.config.jax_compilation_cache_dir != _owned:
        return None
    return _owned.rstrip(os.sep) + "-programs"
