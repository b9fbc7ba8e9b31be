"""jaxtests command line: the demo and tests on your own result files.

Exit status: 0 success, 2 bad input (one line on stderr naming the problem; in a
distributed run also a process that cannot join, or a peer that fails, stops or goes
silent), 130 interrupted.

Each subcommand is a module here with ``add_parser(subparsers)`` and ``run(args)``; a new
subcommand is a new module added to :data:`COMMANDS`.
"""

import argparse
import contextlib
import os
import sys
import traceback
import warnings

from jaxtests._cli import _cluster, agreement, compare, demo, power, sanity, signflip, warmup
from jaxtests._progress import no_auto_bar

__all__ = ["main"]

# In the order of ``jaxtests --help``.
COMMANDS = (demo, compare, sanity, signflip, power, agreement, warmup)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors in one line (exit 2), like every other bad input."""

    def error(self, message):
        msg = " ".join(message.split())
        self.exit(2, f"jaxtests: error: {msg} (see '{self.prog} --help')\n")


def _parser():
    from jaxtests._version import __version__

    p = _Parser(
        prog="jaxtests",
        description="Statistical tests for comparing learning algorithms (JAX).",
    )
    p.add_argument("--version", action="version", version=f"jaxtests {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    for name, parser in sub.choices.items():
        if name != "warmup":  # compiling happens on each machine, not shared
            _cluster.add_options(parser)
    return p


def main(argv=None):
    """Entry point of the ``jaxtests`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    run = _cluster.Run(args) if hasattr(args, "distributed") else None
    error = None
    with warnings.catch_warnings(record=True) as caught:
        # Library warnings as one line each, without Python's source path and line.
        warnings.simplefilter("default")
        try:
            # the commands draw their own bars (none with --quiet), never the API's automatic one
            with run if run is not None else contextlib.nullcontext(), no_auto_bar():
                status = args.func(args)
        except KeyboardInterrupt:
            print("jaxtests: interrupted", file=sys.stderr)
            status, error = 130, "interrupted"
        except BrokenPipeError:
            # The reader went away (`jaxtests ... | head`): stop quietly, as Unix tools do, with
            # stdout on /dev/null so that Python's flush at exit does not complain again.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            status, error = 1, "broken pipe"
        except (ValueError, TypeError, OSError, KeyError) as exc:
            msg = " ".join(str(exc).split()) or type(exc).__name__
            if isinstance(exc, OSError) and exc.filename:
                msg = f"{exc.filename}: {exc.strerror}"
            print(f"jaxtests: error: {msg}", file=sys.stderr)
            status, error = 2, msg
        except Exception as exc:
            if run is None or run.link is None:
                raise
            # A peer that was killed makes this process's collective fail: let the link
            # report that (it exits 2) before calling it a bug. A bug in a distributed
            # run: its traceback, and the other processes are stopped.
            run.link.settle()
            traceback.print_exc()
            status, error = 1, " ".join(f"{type(exc).__name__}: {exc}".split())
        finally:
            shown = [w for w in caught if not issubclass(w.category, DeprecationWarning)]
            for m in dict.fromkeys(" ".join(str(w.message).split()) for w in shown):
                print(f"jaxtests: warning: {m}", file=sys.stderr)
    if run is not None:
        run.leave(status, error)  # a failed distributed run ends here (os._exit)
    return status
