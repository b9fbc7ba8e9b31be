"""Options to run a subcommand as one of several processes (JAX's distributed runtime)."""

import argparse
import contextlib
import os

from jaxtests._cli._common import BadInput


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
        "once per process; process 0 prints the result). Without these options, "
        "--distributed detects the cluster as jax.distributed.initialize() does (SLURM, "
        "Open MPI, or JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID)",
    )
    g.add_argument(
        "--distributed", action="store_true", help="join a multi-process run (implied below)"
    )
    g.add_argument("--coordinator", type=_address, metavar="HOST:PORT", help="process 0's address")
    g.add_argument("--num-processes", type=_count, metavar="N", help="number of processes")
    g.add_argument("--process-id", type=_count, metavar="I", help="this process, 0 .. N-1")


def join(args):
    """Join the run the options describe; returns a context that hides a non-zero process's
    standard output (process 0 reports, every process computes)."""
    given = [args.coordinator, args.num_processes, args.process_id]
    if not (args.distributed or any(v is not None for v in given)):
        return contextlib.nullcontext()
    n, i = args.num_processes, args.process_id
    if n is not None and i is not None and i >= n:
        raise BadInput(f"--process-id {i} is not below --num-processes {n}.")
    from jaxtests import _distributed
    from jaxtests._report import Progress

    try:
        _distributed.initialize(args.coordinator, n, i)
        # gloo announces its first connection on the C++ standard output: make it
        # now, with file descriptor 1 pointing at stderr, so stdout (--json) stays clean
        import sys

        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
        try:
            _distributed.agree(0)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    except (RuntimeError, ValueError) as exc:  # JAX's words, on one line
        raise BadInput(f"could not join the distributed run: {exc}") from None
    import jax

    if jax.process_index() == 0:
        return contextlib.nullcontext()
    Progress.hidden = True
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(stack.enter_context(open(os.devnull, "w"))))
    return stack
