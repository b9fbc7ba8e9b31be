"""Options to run a subcommand as one of several processes (JAX's distributed runtime)."""

import argparse
import contextlib
import hashlib
import os
import sys

from jaxtests._cli._common import POSITIVE, BadInput


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
        type=POSITIVE,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for every process to join, and for a process that stopped "
        "answering, before giving up with exit status 2 (default 60)",
    )


# Options that may differ between the processes of one run (where they run, how they
# show progress, where they write): every other option must be the same on all of them.
_LOCAL = frozenset(
    {"distributed", "coordinator", "num_processes", "process_id", "join_timeout", "quiet", "out"}
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

        try:
            self.link = _distributed.initialize(
                args.coordinator, n, i, timeout=args.join_timeout, call=_call(args)
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
