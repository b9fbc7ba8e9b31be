"""Options to run a subcommand as one of several processes (JAX's distributed runtime)."""

import argparse
import contextlib
import hashlib
import os
import stat
import sys

from jaxtests._cli._common import BadInput, _number_type

# One day: the run waits this long at most for a peer (time.sleep and JAX's timeouts
# overflow on larger values).
MAX_JOIN_TIMEOUT = 86_400
_JOIN_TIMEOUT = _number_type(
    float, lambda x: 0 < x <= MAX_JOIN_TIMEOUT, f"a number of seconds in (0, {MAX_JOIN_TIMEOUT}]"
)
_MAX_TOKEN_BYTES = 4096


def _address(text):
    host, sep, port = text.rpartition(":")
    if not (sep and host and port.isdigit() and 0 < int(port) < 65536):
        raise argparse.ArgumentTypeError(f"must be HOST:PORT, got {text!r}")
    return text


def _count(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return int(text)


def add_options(parser):
    """The ``distributed run`` option group of a subcommand."""
    g = parser.add_argument_group(
        "distributed run",
        "run as one of several processes sharing the resamples (start the same command "
        "once per process; process 0 prints the result). The processes first meet at "
        "--coordinator: each must come within --join-timeout, with a --process-id of its own "
        "and the same --num-processes, versions, options and data; otherwise, or when a "
        "process stops or fails during the run, they print one line and exit with status 2. "
        "Each first proves it knows the run's secret token (--token-file or JAXTESTS_TOKEN; "
        "required unless --coordinator is a loopback address). "
        "Without these options, --distributed detects the cluster (SLURM, Open MPI, ...) or "
        "reads JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID",
    )
    g.add_argument(
        "--distributed", action="store_true", help="join a multi-process run (implied below)"
    )
    g.add_argument(
        "--coordinator",
        type=_address,
        metavar="HOST:PORT",
        help="process 0's address, where it listens: on that IP address only (127.0.0.1: this "
        "machine), or on every interface for a host name",
    )
    g.add_argument("--num-processes", type=_count, metavar="N", help="number of processes")
    g.add_argument("--process-id", type=_count, metavar="I", help="this process, 0 .. N-1")
    g.add_argument(
        "--join-timeout",
        type=_JOIN_TIMEOUT,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for every process to join, and for a process that stopped "
        "answering, before giving up with exit status 2 (default 60, at most 86400)",
    )
    g.add_argument(
        "--token-file",
        metavar="PATH",
        help="a file holding the run's secret (the same on every process; owned by you and "
        "readable by you only, mode 0600); default: the JAXTESTS_TOKEN environment variable",
    )


# Options that may differ between the processes of one run (where they run, how they
# show progress, where they write): every other option must be the same on all of them.
_LOCAL = frozenset(
    {
        "distributed",
        "coordinator",
        "num_processes",
        "process_id",
        "join_timeout",
        "token_file",
        "quiet",
        "out",
    }
)


def _call(args):
    """``(options, data)`` every process of a run must share: the options as text, and a
    digest of the input file's bytes (its path may differ between machines)."""
    options = {
        "--" + k.replace("_", "-"): repr(v)
        for k, v in sorted(vars(args).items())
        if k not in _LOCAL and k != "file" and not callable(v)
    }
    path = getattr(args, "file", None)
    if path is None:
        return options, ""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:  # the subcommand reports it; the processes still compare
        return options, f"unreadable: {exc.strerror}"
    return options, digest.hexdigest()


def read_token(path):
    """The run's secret: the bytes of the file ``path``, else ``JAXTESTS_TOKEN``, else None.

    The file must be a regular file owned by this user that no one else may read
    or write (a token others can read proves nothing); :class:`BadInput` otherwise.
    """
    if path is None:
        text = os.environ.get("JAXTESTS_TOKEN", "").strip()
        return text.encode() if text else None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise BadInput(
            f"--token-file {path}: cannot open it ({exc.strerror}); give a regular file, not "
            "a link, holding the run's secret"
        ) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(
                f"--token-file {path}: not a regular file; give a file holding the secret"
            )
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise BadInput(
                f"--token-file {path}: others may read or change it (mode "
                f"{stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}); it must be yours "
                f"with mode 0600: chmod 600 {path}"
            )
        token = f.read(_MAX_TOKEN_BYTES + 1).strip()
    if len(token) > _MAX_TOKEN_BYTES:
        raise BadInput(
            f"--token-file {path}: longer than {_MAX_TOKEN_BYTES} bytes; is it the token?"
        )
    if not token:
        raise BadInput(f"--token-file {path}: the file is empty; write the secret into it")
    return token


class Run:
    """One process's part of a distributed CLI run: ``with`` joins it, :meth:`leave` ends it.

    Without the distributed options both do nothing. Entering meets the other
    processes and starts JAX's runtime (a failure to: :class:`BadInput`, one
    line); on a process other than 0 it hides standard output (process 0
    reports, every process computes) until exit.
    """

    def __init__(self, args):
        given = [args.coordinator, args.num_processes, args.process_id]
        self.args = args
        self.wanted = args.distributed or any(v is not None for v in given)
        self.link = None
        self.stack = contextlib.ExitStack()

    def __enter__(self):
        if not self.wanted:
            return self
        args = self.args
        n, i = args.num_processes, args.process_id
        if n is not None and i is not None and i >= n:
            raise BadInput(f"--process-id {i} is not below --num-processes {n}.")
        from jaxtests import _distributed
        from jaxtests._rendezvous import JoinError

        token = read_token(args.token_file)
        try:
            self.link = _distributed.initialize(
                args.coordinator, n, i, timeout=args.join_timeout, call=_call(args), token=token
            )
        except JoinError as exc:
            raise BadInput(f"could not start the distributed run: {exc}") from None
        except (RuntimeError, ValueError) as exc:  # JAX's words, on one line
            raise BadInput(f"could not join the distributed run: {exc}") from None
        # gloo announces its first connection on the C++ standard output: make it
        # now, with file descriptor 1 pointing at stderr, so stdout (--json) stays clean
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
        try:
            _distributed.agree(0)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        import jax

        if jax.process_index() != 0:
            from jaxtests._report import Progress

            Progress.hidden = True
            devnull = self.stack.enter_context(open(os.devnull, "w"))
            self.stack.enter_context(contextlib.redirect_stdout(devnull))
        return self

    def __exit__(self, *exc):
        self.stack.close()
        return False

    def leave(self, status, message=None):
        """This process finished: tell the peers; on failure exit now (see ``Link.leave``)."""
        if self.link is not None:
            self.link.leave(status, message)
