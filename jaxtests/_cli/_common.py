"""What several subcommands share: the user-error class, option types, result rows, plots."""

import argparse
import contextlib
import math
import os
import sys
import warnings

import numpy as np

ALTERNATIVES = ("two-sided", "less", "greater")
# Most algorithms (or learners) an all-pairs table compares: 4,950 rows. 1000 learners made
# 499,500 rows, 7.4 GB and more than 2 GiB of text, cut short with exit status 0.
MAX_ALL_PAIRS = 100


class BadInput(ValueError):
    """A user error the CLI reports in one line with exit status 2."""


@contextlib.contextmanager
def bad_input(where):
    """Report a ValueError of the library as a :class:`BadInput` that starts with ``where``."""
    try:
        yield
    except BadInput:
        raise
    except ValueError as exc:
        raise BadInput(f"{where}: {exc}") from None


def print_json(payload, left_out):
    """Print ``payload`` as JSON; the tests a default left out (and why) go in its ``notes``
    and, one line each, to standard error."""
    from jaxtests._report import dumps

    if left_out:
        payload["notes"] = left_out
        for n in left_out:
            print(f"jaxtests: note: {n}", file=sys.stderr)
    print(dumps(payload))


def run_tests(tests, run, file, *args):
    """``run(test, *args) -> (rows, results)`` of each test in turn, the rows joined and the
    results merged; a test's ValueError names the file and the test."""
    rows, results = [], {}
    for t in tests:
        with bad_input(f"{file}: --test {t}"):
            r, res = run(t, *args)
        rows += r
        results.update(res)
    return rows, results


def _number_type(kind, test, what):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if (kind is float and not math.isfinite(v)) or not test(v):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return v

    return parse


ALPHA = _number_type(float, lambda a: 0 < a < 1, "a level in (0, 1), e.g. 0.05")
POSITIVE_INT = _number_type(int, lambda n: n >= 1, "a positive integer")
NONNEGATIVE = _number_type(float, lambda x: x >= 0, "a number >= 0")
POSITIVE = _number_type(float, lambda x: x > 0, "a number > 0")
DF = _number_type(float, lambda x: x > 2, "a number > 2 (the t generator has unit variance)")
SEED = _number_type(int, lambda n: 0 <= n < 2**63, "an integer in [0, 2^63)")


def all_names(names, noun="algorithms", limit=10):
    """The comparison column of a test of all ``names``: their list, abbreviated past ``limit``.

    A text table pads every row to its widest cell, so the full list of many names
    would widen every row of the table.
    """
    names = list(names)
    if len(names) <= limit:
        return " / ".join(names)
    return f"{names[0]} / {names[1]} / ... / {names[-1]} ({len(names)} {noun})"


def too_many_pairs(n, test, noun, instead):
    """Why an all-pairs ``test`` of ``n`` algorithms is refused (None when it is not)."""
    if n <= MAX_ALL_PAIRS:
        return None
    top = MAX_ALL_PAIRS * (MAX_ALL_PAIRS - 1) // 2
    return (
        f"{test} compares all {n * (n - 1) // 2:,} pairs of {n} {noun}, more than the "
        f"{top:,} pairs ({MAX_ALL_PAIRS} {noun}) compare tests and prints; {instead}"
    )


def _given_twice(values, option):
    for v in values or ():
        if list(values).count(v) > 1:
            raise BadInput(f"{option}: {v!r} is given twice.")


def _row(test, comparison, measure, res, alpha, notes=(), pvalue=None):
    """One line of a result table: the test, what it compares, statistic, p-value, decision."""
    p = float(np.asarray(res.pvalue if pvalue is None else pvalue))
    df = getattr(res, "df", None)
    if df is not None:
        df = np.asarray(df).tolist()
        df = ", ".join(f"{d:.4g}" for d in df) if isinstance(df, list) else float(df)
    row = {
        "test": test,
        "comparison": comparison,
        "measure": measure,
        "statistic": float(np.asarray(res.statistic)),
        "df": df,
        "pvalue": p,
        "decision": "reject" if p <= alpha else "accept",
    }
    if not (np.isfinite(row["statistic"]) and np.isfinite(p)):
        row["decision"] = "undefined" if np.isnan(p) else row["decision"]
    if np.isinf(row["statistic"]) and p == 0:  # (an F with its exact p keeps its decision)
        # Issue 28.9: differences that do not vary make t infinite and p 0, which is no
        # evidence from a few folds: no decision, and a note saying why.
        row["decision"] = "undefined"
        notes = [
            *notes,
            "the statistic is infinite: the differences do not vary over the folds (zero "
            "variance), so p = 0 carries no evidence; use more folds or a permutation test",
        ]
    if notes:
        row["notes"] = list(notes)
    return row


def _bayes_row(test, comparison, measure, res, regions, df=None, notes=()):
    """A result-table row of a Bayesian test: its posterior probabilities ``p_left``,
    ``p_rope``, ``p_right`` and the region (``regions``, in that order) whose probability
    reaches 0.95 as the decision (Benavoli et al. 2017), else "undecided"."""
    sides = ("left", "rope", "right")
    probs = {f"p_{s}": float(np.asarray(getattr(res, f"p_{s}"))) for s in sides}
    best = max(range(3), key=lambda i: probs[f"p_{sides[i]}"])
    row = {
        "test": test,
        "comparison": comparison,
        "measure": measure,
        "statistic": None,
        "df": df,
        "pvalue": None,
        "decision": regions[best] if probs[f"p_{sides[best]}"] >= 0.95 else "undecided",
        **probs,
        # the table's cell (no statistic or p-value): the three probabilities, named
        "posterior": ", ".join(
            f"P({r}) = {probs[f'p_{s}']:.4f}" for r, s in zip(regions, sides, strict=True)
        ),
    }
    if notes:
        row["notes"] = list(notes)
    return row


def _quiet_call(fn, *a, **kw):
    """``fn(*a, **kw)`` with its warnings returned as one-line notes, not printed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fn(*a, **kw)
    return res, list(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))


def _resamples_used(res, args, what):
    """The note for a given ``--n-resamples`` that ``res`` did not draw (an exact or
    binomial p-value), or None. A note, not an error (issue 28.7): the option cannot
    change the answer, and the answer is better than asked for."""
    if args.n_resamples is not None and res.method != "monte-carlo":
        why = {
            "exact": "every rearrangement is enumerated (exact p-value)",
            "binomial": "the differences take only the values -c, 0, +c, so the exact "
            "binomial (sign test) p-value is used",
        }.get(res.method, f"the method is {res.method!r}")
        return f"--n-resamples {args.n_resamples} is not used by {what}: {why}."
    return None


def _matplotlib_agg():
    import matplotlib

    matplotlib.use("Agg")


def _save_plot(fig, out, name):
    import matplotlib.pyplot as plt

    from jaxtests._report import prepare_out, replace_file

    prepare_out(out, [name])
    path = os.path.join(out, name)
    try:
        replace_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    finally:
        plt.close(fig)
    return path
