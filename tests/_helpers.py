"""Helpers shared by test files (``from _helpers import ...``; conftest puts this folder on
``sys.path``, as importlib mode does not)."""

from jaxtests._cli import main


def cli(capsys, *args):
    """``jaxtests ARGS`` in this process: ``(exit status, stdout, stderr)`` read from ``capsys``.

    An argparse usage error (``SystemExit``) gives its status, as the command would.
    """
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err
