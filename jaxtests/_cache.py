"""Where compiled programs persist, and whether those folders can be trusted.

JAX's persistent compilation cache is on by default in a per-user folder, so a
second process loads the programs a first one compiled instead of compiling
them again. The folder follows the XDG convention, ``$XDG_CACHE_HOME/jaxtests/jax``
or ``~/.cache/jaxtests/jax``; ``JAXTESTS_CACHE_DIR`` moves it (a path) or turns
it off (empty, ``0``, ``off``, ``none``, ``false``). A cache the user configured
for JAX wins (and is the user's to secure).

Loading a compiled program runs its native code, so jaxtests trusts these
folders as ssh trusts ``~/.ssh``: it creates them ``0700`` (files ``0600``) and
uses one only where it, its entries and the folder holding it belong to the
current user (or root) and are not writable by group or others (a sticky
parent such as ``/tmp`` is fine). Otherwise it warns once, naming the folder
and the fix, and computes without a cache. Its own program files also carry a
keyed hash (:func:`user_key`), checked before anything in them is used.

:func:`ensure` runs at the first public call (the ``x64`` wrapper), not at import: JAX
initialises its cache at the first compilation that finds a folder set, so setting it late
still takes effect, and ``import jaxtests`` changes no JAX setting.
"""

import os
import secrets
import stat
import warnings

import jax

__all__ = ["cache_dir", "ensure", "programs_dir", "untrusted", "user_key"]

# JAX's default (1 s) would skip almost every jaxtests program. Measured (2-core CPU, cold
# signflip_test): its programs compile in 0.01-2.3 s and load from the cache in 0.001-0.08 s,
# so even the shortest gain; 0.05 s or 0.2 s left half or more of them to compile in every process.
MIN_COMPILE_TIME_SECS = 0.0

_OFF = frozenset({"", "0", "off", "none", "false"})
_KEY_BYTES = 32
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
    return os.path.join(_xdg("XDG_CACHE_HOME", ".cache"), "jaxtests", "jax")


def _xdg(variable, default):
    base = os.environ.get(variable, "")
    if not os.path.isabs(base):  # the XDG specification: ignore a relative path
        base = os.path.join(os.path.expanduser("~"), default)
    return base


def untrusted(path, *, entries=False):
    """Why the folder ``path`` must not be used for compiled programs, or None.

    Trusted: a folder (a symbolic link is followed, and its target judged) that
    belongs to the current user and is not writable by group or others, held by
    a folder that belongs to the current user or root and is not writable by
    group or others unless sticky (``/tmp``). With ``entries``, every entry in it
    must belong to the current user, and not be writable by group or others unless
    nobody else can enter the folder.
    """
    me = os.geteuid()
    try:
        st = os.stat(path)
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid != me:
        return f"it belongs to user id {st.st_uid}, not to you ({me})"
    if st.st_mode & 0o022:
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    parent = os.path.dirname(os.path.realpath(path))
    try:
        up = os.stat(parent)
    except OSError as e:
        return f"its parent {parent} cannot be read ({e.strerror})"
    if up.st_uid not in (me, 0):
        return f"its parent {parent} belongs to user id {up.st_uid}"
    if up.st_mode & 0o022 and not up.st_mode & stat.S_ISVTX:
        return f"its parent {parent} is writable by group or others and not sticky"
    if entries:
        # A group-writable entry is harmless only where nobody else can reach it (umask 002).
        shut = not st.st_mode & 0o011
        try:
            with os.scandir(path) as it:
                for entry in it:
                    est = entry.stat(follow_symlinks=False)
                    if est.st_uid != me:
                        return f"its entry {entry.name} belongs to user id {est.st_uid}"
                    if est.st_mode & 0o022 and not shut:
                        return f"its entry {entry.name} is writable by group or others"
        except OSError as e:
            return f"it cannot be listed ({e.strerror})"
    return None


def _private_dir(path):
    """Create ``path`` and any missing parents with mode 0700 (existing ones are left)."""
    missing = []
    head = os.path.abspath(path)
    while not os.path.lexists(head):
        missing.append(head)
        head = os.path.dirname(head)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:  # another process made it first; it is judged like any other
            pass


def user_key():
    """This user's secret key for the keyed hash of stored programs (bytes), or None.

    Kept in ``$XDG_CONFIG_HOME/jaxtests/cache-key`` (``~/.config`` by default), made
    ``0600`` in a ``0700`` folder on first use; None where that file or folder is not the
    user's alone or cannot be made (stored programs are then neither loaded nor written).
    """
    folder = os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "jaxtests")
    path = os.path.join(folder, "cache-key")
    try:
        _private_dir(folder)
        if untrusted(folder) is not None:
            return None
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(_KEY_BYTES))
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd) as f:
            st = os.fstat(f.fileno())
            if (
                not stat.S_ISREG(st.st_mode)
                or st.st_uid != os.geteuid()
                or st.st_mode & 0o077  # a secret: nobody else may read it either
            ):
                return None
            key = bytes.fromhex(f.read(4 * _KEY_BYTES).strip())
    except (OSError, ValueError):
        return None
    return key if len(key) == _KEY_BYTES else None


def _warn(folder, why):
    warnings.warn(
        f"jaxtests: not using the compiled-program cache {folder}: {why}. Programs are "
        f"compiled anew in every process. Fix: remove it (rm -r {folder}) so that jaxtests "
        "makes it private, or set JAXTESTS_CACHE_DIR to a folder of your own (or to 'off').",
        RuntimeWarning,
        stacklevel=4,
    )


def ensure():
    """Point JAX's persistent compilation cache at :func:`cache_dir`, once per process.

    Does nothing where the user set ``jax_compilation_cache_dir`` (``jax.config.update`` or
    ``JAX_COMPILATION_CACHE_DIR``) or turned ``jax_enable_compilation_cache`` off, where
    ``JAXTESTS_CACHE_DIR`` turns it off, or where the folder cannot be created or written
    (silently: a missing cache costs time, never a result). Where the folder or its
    ``-programs`` sibling is not the user's alone (:func:`untrusted`), warns once and does
    nothing. Only when it sets the folder does it also set
    ``jax_persistent_cache_min_compile_time_secs``; no other JAX setting changes.

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
    programs = _programs_of(folder)
    try:
        _private_dir(folder)
        _private_dir(programs)
    except OSError:
        return None
    for path in (folder, programs):
        why = untrusted(path, entries=path == folder)  # JAX loads its own entries unchecked
        if why is not None:
            _warn(path, why)
            return None
    # JAX would raise inside the user's first compilation on a folder it cannot use.
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_SECS)
    _owned = folder
    return folder


def _programs_of(folder):
    return folder.rstrip(os.sep) + "-programs"


def programs_dir():
    """Folder of the stored executables (:mod:`jaxtests._aot`), or None.

    ``<cache folder>-programs`` (``~/.cache/jaxtests/jax-programs`` by default), only while
    jaxtests owns JAX's cache: :func:`ensure` set it and it is still JAX's setting.
    """
    if _owned is None or jax.config.jax_compilation_cache_dir != _owned:
        return None
    return _programs_of(_owned)
