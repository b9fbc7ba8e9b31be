"""Where compiled programs persist, and whether those folders can be trusted.

JAX's persistent compilation cache is on by default in a per-user folder, so a
second process loads the programs a first one compiled instead of compiling
them again. The folder follows the XDG convention, ``$XDG_CACHE_HOME/jaxtests/jax``
or ``~/.cache/jaxtests/jax``; ``JAXTESTS_CACHE_DIR`` moves it (a path) or turns
it off (empty, ``0``, ``off``, ``none``, ``false``). A cache the user configured
for JAX wins (and is the user's to secure).

Loading a compiled program runs its native code, so jaxtests trusts these
folders as ssh trusts ``~/.ssh``: it creates them ``0700`` (files ``0600``) and
uses one only where it and its entries belong to the current user, not writable by
group or others, below folders up to ``/`` that each belong to the user or root and
are not writable by group or others unless sticky (``/tmp``) (:func:`open_trusted`).
Otherwise it warns once, naming the folder and the fix, and computes without a
cache. The folders are checked once, on the descriptors then opened, and every
entry is read and written relative to those descriptors (:func:`read_private`:
regular files of the user's only), so a folder swapped later is never read. JAX's
own entries go through a jaxtests backend for JAX's cache that adds a keyed hash
(:func:`user_key`) over each entry's name and bytes, as jaxtests' program files have.

:func:`ensure` runs at the first public call (the ``x64`` wrapper), not at import: JAX
initialises its cache at the first compilation that finds a folder set, so setting it late
still takes effect, and ``import jaxtests`` changes no JAX setting.
"""

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import warnings

import jax

__all__ = [
    "backend_env",
    "cache_dir",
    "ensure",
    "open_trusted",
    "programs_dir",
    "programs_fd",
    "read_private",
    "untrusted",
    "user_key",
    "write_private",
]

# JAX's default (1 s) would skip almost every jaxtests program. Measured (2-core CPU, cold
# signflip_test): its programs compile in 0.01-2.3 s and load from the cache in 0.001-0.08 s,
# so even the shortest gain; 0.05 s or 0.2 s left half or more of them to compile in every process.
MIN_COMPILE_TIME_SECS = 0.0

_OFF = frozenset({"", "0", "off", "none", "false"})
_KEY_BYTES = 32
_done = False
_owned = None  # the folder ensure() set, if any
_programs_fd = None  # its -programs sibling, opened when checked


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


def _flaw(st, me, name, last):
    """Why the folder with status ``st`` cannot hold or lead to the cache, or None."""
    if st.st_uid not in ((me,) if last else (me, 0)):
        return f"{name} belongs to user id {st.st_uid}, not to you ({me})"
    if st.st_mode & 0o022 and (last or not st.st_mode & stat.S_ISVTX):
        mode = f"mode {stat.S_IMODE(st.st_mode):04o}"
        if last:
            return f"{name} is writable by group or others ({mode})"
        return f"{name} is writable by group or others and not sticky ({mode})"
    return None


def open_trusted(path, *, entries=False):
    """``(fd, None)``: a descriptor of the folder ``path`` checked as :func:`untrusted` says,
    or ``(None, why)``.

    The folder is reached from ``/`` one name at a time (``O_NOFOLLOW``, relative to the
    folder above, each checked on its open descriptor), so what is checked is what is
    opened: a folder renamed or swapped later leaves the descriptor where it was.
    """
    me = os.geteuid()
    names = [n for n in os.path.realpath(path).split(os.sep) if n]
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd, where, why = None, os.sep, None
    try:
        fd = os.open(os.sep, flags)
        for name in names:
            why = _flaw(os.fstat(fd), me, f"the folder {where} above it", False)
            if why is not None:
                break
            where = os.path.join(where, name)
            child = os.open(name, flags | os.O_NOFOLLOW, dir_fd=fd)  # a link here: refused
            os.close(fd)
            fd = child
        else:
            st = os.fstat(fd)
            why = _flaw(st, me, "it", True) or (_entries_flaw(fd, st, me) if entries else None)
    except OSError as e:
        why = f"{where} cannot be read ({e.strerror})"
    if why is not None and fd is not None:
        os.close(fd)
        fd = None
    return fd, why


def _entries_flaw(fd, st, me):
    # A group-writable entry is harmless only where nobody else can reach it (umask 002).
    shut = not st.st_mode & 0o011
    with os.scandir(fd) as it:  # scandir reads a duplicate of fd
        for entry in it:
            est = entry.stat(follow_symlinks=False)
            if est.st_uid != me:
                return f"its entry {entry.name} belongs to user id {est.st_uid}"
            if est.st_mode & 0o022 and not shut:
                return f"its entry {entry.name} is writable by group or others"
    return None


def untrusted(path, *, entries=False):
    """Why the folder ``path`` must not be used for compiled programs, or None.

    Trusted: a folder (a symbolic link is followed, and its target judged) that
    belongs to the current user and is not writable by group or others, below
    folders that each belong to the current user or root and are not writable by
    group or others unless sticky (``/tmp``), every one of them up to ``/``: a folder
    above that others could write would let them rename the cache away and put their
    own in its place. With ``entries``, every entry in it must belong to the current
    user, and not be writable by group or others unless nobody else can enter the folder.
    """
    fd, why = open_trusted(path, entries=entries)
    if fd is not None:
        os.close(fd)
    return why


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


def key_path():
    """Where :func:`user_key` keeps the key: ``$XDG_CONFIG_HOME/jaxtests/cache-key``."""
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "jaxtests", "cache-key")


def user_key():
    """This user's secret key for the keyed hash of stored programs (bytes), or None.

    Kept in ``$XDG_CONFIG_HOME/jaxtests/cache-key`` (``~/.config`` by default), made
    ``0600`` in a ``0700`` folder on first use; None where that file or folder is not the
    user's alone or cannot be made (stored programs are then neither loaded nor written).
    """
    return _user_key()[0]


def _user_key():
    """``(key, None)``, or ``(None, why)`` where the key file cannot be used."""
    path = key_path()
    folder = os.path.dirname(path)
    try:
        _private_dir(folder)
    except OSError as e:
        return None, f"its folder cannot be made ({e.strerror})"
    fd, why = open_trusted(folder)
    if fd is None:
        return None, f"its folder {folder}: {why}"
    try:
        try:
            new = os.open("cache-key", _NEW_FILE, 0o600, dir_fd=fd)
        except FileExistsError:
            pass
        else:
            with os.fdopen(new, "w") as f:
                f.write(secrets.token_hex(_KEY_BYTES))
        # A secret: nobody else may read it either.
        text, why = read_private("cache-key", dir_fd=fd, limit=4 * _KEY_BYTES, private=True)
        if text is None:
            return None, why
        key = bytes.fromhex(text.decode().strip())
    except (OSError, ValueError) as e:
        return None, f"it cannot be read ({getattr(e, 'strerror', None) or 'not a key'})"
    finally:
        os.close(fd)
    return (key, None) if len(key) == _KEY_BYTES else (None, "it is not a key")


# O_NONBLOCK: a FIFO planted under an entry's name never blocks; O_NOFOLLOW: no links.
_READ_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def read_private(name, *, dir_fd=None, limit, private=False):
    """``(bytes, None)`` of the file ``name`` (relative to ``dir_fd``), or ``(None, why)``.

    Only a regular file (no link, FIFO or device: ``O_NOFOLLOW | O_NONBLOCK``, then
    ``fstat`` on the open file) that belongs to the current user, that group and others
    cannot write (nor read, with ``private``) and that is at most ``limit`` bytes long.
    """
    try:
        fd = os.open(name, _READ_FILE, dir_fd=dir_fd)
    except OSError as e:
        return None, f"it cannot be opened ({e.strerror})"
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "it is not a regular file"
        if st.st_uid != os.geteuid():
            return None, f"it belongs to user id {st.st_uid}"
        if st.st_mode & (0o077 if private else 0o022):
            how = "read" if private else "write"
            return None, f"others may {how} it (mode {stat.S_IMODE(st.st_mode):04o})"
        if st.st_size > limit:
            return None, "it is too large"
        data = f.read(limit + 1)
    return (data, None) if len(data) <= limit else (None, "it is too large")


def write_private(name, blob, *, dir_fd=None):
    """Write ``blob`` to ``name`` (relative to ``dir_fd``) atomically, mode 0600.

    A temporary file is written and renamed over ``name`` (concurrent readers never see
    half a file, and whatever was there, a FIFO included, is replaced); on any failure
    nothing is left behind and the error propagates.
    """
    tmp = f"{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, _NEW_FILE, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp, dir_fd=dir_fd)
        raise


def _warn(folder, why):
    warnings.warn(
        f"jaxtests: not using the compiled-program cache {folder}: {why}. Programs are "
        f"compiled anew in every process. Fix: remove it (rm -r {folder}) so that jaxtests "
        "makes it private, or set JAXTESTS_CACHE_DIR to a folder of your own (or to 'off').",
        RuntimeWarning,
        stacklevel=4,
    )


def _warn_key(why):
    path = key_path()
    warnings.warn(
        f"jaxtests: not using the compiled-program cache: its key file {path} cannot be "
        f"used ({why}), so nothing is cached and programs are compiled anew in every process. "
        f"Fix: remove it (rm {path}) so that jaxtests makes a private one, or set "
        "JAXTESTS_CACHE_DIR=off.",
        RuntimeWarning,
        stacklevel=4,
    )


# -- the environment XLA started with

# Variables read by XLA or the GPU runtime that can change a compiled program or its numerics
# (XLA_FLAGS, NVIDIA_TF32_OVERRIDE, ...); JAX_* ones too, beside the settings they feed.
ENV_PREFIXES = ("XLA_", "TF_", "JAX_", "LIBTPU_", "NVIDIA_", "CUDA_", "ROCM_", "HIP_")
_start_env = None


def _env_now():
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)))


def _backend_started(backend=None):
    global _start_env
    if _start_env is None:
        _start_env = _env_now()


def backend_env():
    """The XLA/JAX variables in force when JAX's first backend started, as a sorted tuple.

    XLA reads ``XLA_FLAGS`` once, when the backend starts: a value set later changes
    nothing that is compiled, so it must not change where a program is kept. Taken by a
    JAX backend-initialisation hook (registered at import); where the backend started
    before jaxtests was imported, or this jax has no such hook, the variables at the
    first call here are the best knowledge there is.
    """
    if _start_env is None:
        _backend_started()
    return _start_env


try:  # jax >= 0.4.36: runs at once for a backend already started
    from jax._src import xla_bridge as _xla_bridge

    _xla_bridge.register_backend_initialization_hook(_backend_started)
except (ImportError, AttributeError):  # another jax: backend_env() takes its first look
    pass


# -- JAX's own cache entries, kept by jaxtests

_ENTRY_MAGIC = b"jaxtests-jax-entry-1\n"
_ENTRY_SUFFIX = ".jaxentry"  # not JAX's "-cache": JAX's own cache never reads these
_MAX_ENTRY_BYTES = 1 << 31


def _entry_name(key, env):
    """The file of JAX's entry ``key``: its key and the start flags (JAX hashes the flags
    in force at each compile, which a later ``XLA_FLAGS`` change makes wrong)."""
    digest = hashlib.sha256(repr(env).encode()).hexdigest()[:16]
    return f"{key}-{digest}{_ENTRY_SUFFIX}"


def _entry_tag(secret, name, value):
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    for part in (name.encode(), value):
        mac.update(len(part).to_bytes(8, "little") + part)
    return mac.digest()


def _entries_class():
    """A backend for JAX's persistent cache (its ``CacheInterface``), through a folder fd.

    Each entry is read relative to the folder's descriptor, checked at the first call
    (:func:`open_trusted`), so a folder swapped later is never read; only a regular file
    of the user's is opened (a FIFO never blocks), and its HMAC-SHA256 over its name and
    bytes must verify under the user's key, so an entry changed, planted, or moved to
    another program's name is a miss, compiled anew and replaced.
    """
    import pathlib

    from jax._src import config as jax_config
    from jax._src.compilation_cache_interface import CacheInterface

    class Entries(CacheInterface):
        def __init__(self, fd, path, secret):
            self._fd, self._path, self._secret = fd, pathlib.Path(path), secret

        def get(self, key):
            # _aot compiles its stored programs fresh in a scope with JAX's cache off.
            if not key or not jax_config.enable_compilation_cache.value:
                return None
            name = _entry_name(key, backend_env())
            blob, _ = read_private(name, dir_fd=self._fd, limit=_MAX_ENTRY_BYTES)
            if blob is None or not blob.startswith(_ENTRY_MAGIC):
                return None
            tag = blob[len(_ENTRY_MAGIC) : len(_ENTRY_MAGIC) + 32]
            value = blob[len(_ENTRY_MAGIC) + 32 :]
            if len(tag) != 32 or not hmac.compare_digest(
                tag, _entry_tag(self._secret, name, value)
            ):
                return None
            return value

        def put(self, key, value):
            if not key or not jax_config.enable_compilation_cache.value:
                return
            name = _entry_name(key, backend_env())
            blob = _ENTRY_MAGIC + _entry_tag(self._secret, name, value) + value
            # A full disk or a read-only folder only costs time.
            with contextlib.suppress(OSError):
                write_private(name, blob, dir_fd=self._fd)

    return Entries


def _install(fd, folder, secret):
    """Make JAX read and write its cache entries through ``fd`` and the HMAC; False where
    this jax has no place for a cache backend (or has built its own already)."""
    try:
        from jax._src import compilation_cache as cc

        backend = _entries_class()(fd, folder, secret)
        if jax.config.jax_compilation_cache_check_contents:
            backend = cc.VerificationCache(backend)
        with cc._cache_initialized_mutex:
            if cc._cache is not None:
                return False
            cc._cache = backend
            cc._cache_initialized = True
    except (ImportError, AttributeError, TypeError):
        return False
    return True


def ensure():
    """Point JAX's persistent compilation cache at :func:`cache_dir`, once per process.

    Does nothing where the user set ``jax_compilation_cache_dir`` (``jax.config.update`` or
    ``JAX_COMPILATION_CACHE_DIR``) or turned ``jax_enable_compilation_cache`` off, where
    ``JAXTESTS_CACHE_DIR`` turns it off, or where the folder cannot be created or written
    (silently: a missing cache costs time, never a result). Where the folder or its
    ``-programs`` sibling is not the user's alone (:func:`untrusted`), or the key file
    cannot be used (:func:`user_key`), warns once and does nothing. Otherwise JAX keeps
    its entries through a jaxtests backend (descriptor-relative, HMAC-checked), and
    ``jax_persistent_cache_min_compile_time_secs`` is set; no other JAX setting changes.

    Returns
    -------
    str or None
        The folder set by this call, or None.
    """
    global _done, _owned, _programs_fd
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
    fds = []
    try:
        for path in (folder, programs):
            fd, why = open_trusted(path, entries=True)
            if fd is None:
                _warn(path, why)
                return None
            fds.append(fd)
        # JAX would raise inside the user's first compilation on a folder it cannot use.
        if not os.access(".", os.W_OK | os.X_OK, dir_fd=fds[0]):
            return None
        secret, why = _user_key()
        if secret is None:
            _warn_key(why)
            return None
        if not _install(fds[0], folder, secret):
            return None
        jax.config.update("jax_compilation_cache_dir", folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_SECS)
        _owned, _programs_fd = folder, fds[1]
        fds = []  # kept open for the process: the folders checked are the ones used
        return folder
    finally:
        for fd in fds:
            os.close(fd)


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


def programs_fd():
    """A descriptor of :func:`programs_dir`, opened when it was checked, or None."""
    return None if programs_dir() is None else _programs_fd
