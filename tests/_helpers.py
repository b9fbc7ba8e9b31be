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


def printed(text, value):
    """Whether the printed number ``text`` (fixed or scientific, as the tables print them)
    is ``value`` rounded to the digits shown."""
    import math

    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    step = 10.0 ** (int(exponent or 0) - decimals)
    return math.isclose(float(text), value, abs_tol=0.5 * step * (1 + 1e-9))
