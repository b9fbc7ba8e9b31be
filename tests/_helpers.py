"""Helpers shared by test files (``from _helpers import ...``; conftest puts this folder on
``sys.path``, as importlib mode does not)."""

import json
import os
import subprocess
import sys

from jaxtests._cli import main

# JAX's own cache settings: a child that must use jaxtests' cache (or none) runs without them.
JAX_CACHE_VARS = ("JAX_COMPILATION_CACHE_DIR", "JAX_ENABLE_COMPILATION_CACHE")


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


def python(code, *args, env=(), drop=(), prefix=(), timeout=300):
    """Run ``code`` (with ``args`` as ``sys.argv[1:]``) in a fresh interpreter.

    The child has this process' environment less the variables in ``drop``, plus
    ``env``; ``prefix`` goes before the interpreter (``("taskset", "-c", "0")``).
    The run must exit 0 (else the test fails with the tail of its stderr); returns
    the ``subprocess.CompletedProcess`` (text).
    """
    child = {k: v for k, v in os.environ.items() if k not in drop}
    child.update({k: str(v) for k, v in dict(env).items()})
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        env=child,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def python_json(code, *args, **kwargs):
    """:func:`python`, and the last line the child printed, read as JSON."""
    return json.loads(python(code, *args, **kwargs).stdout.strip().splitlines()[-1])


def sign_patterns(m):
    """All ``2^m`` sign patterns, ``(2^m, m)`` float64 (the first one all +1)."""
    import itertools

    import numpy as np

    return np.array(list(itertools.product([1.0, -1.0], repeat=m)))


def tail_pvalues(null, observed, *, exact=True):
    """The three p-values of ``observed`` against a null distribution, by scipy's rules.

    As ``scipy.stats.permutation_test``: draws within ``100 eps |observed|`` of
    it count as ties (an infinite ``observed`` ties only draws equal to it), NaN
    draws are never extreme, a Monte Carlo null (``exact=False``) adds one to
    the count and the size, and the two-sided p-value is twice the smaller
    one-sided p, at most 1. Returns ``{"greater", "less", "two-sided"}``.
    """
    import numpy as np

    null = np.asarray(null, np.float64)
    eps = np.finfo(np.float64).eps
    with np.errstate(invalid="ignore"):
        tol = 100 * eps * abs(observed) if np.isfinite(observed) else 0.0
        ge = np.count_nonzero(null >= observed - tol)
        le = np.count_nonzero(null <= observed + tol)
    adj = 0 if exact else 1
    p_ge, p_le = (ge + adj) / (null.size + adj), (le + adj) / (null.size + adj)
    return {"greater": p_ge, "less": p_le, "two-sided": min(1.0, 2 * min(p_ge, p_le))}
