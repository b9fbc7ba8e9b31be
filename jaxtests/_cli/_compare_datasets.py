"""``compare`` on a many-data-set file: one score per data set and learner (Demšar 2006).

A file with a ``dataset`` column (``dataset, algorithm|learner, <score>``, optionally per
``fold``) is read by :func:`jaxtests.read_scores`; its tests rank the learners within each
data set (Friedman, Nemenyi, post hoc against a control or all pairs) or compare two
learners' scores over the data sets (Wilcoxon signed-rank).
"""

import dataclasses
import sys
from collections.abc import Callable

import numpy as np

from jaxtests._cli._common import (
    BadInput,
    _bayes_row,
    _given_twice,
    _quiet_call,
    _row,
    all_names,
    bad_input,
    print_json,
    run_tests,
    too_many_pairs,
)
from jaxtests._report import estimate_text

# Demšar's recommendation for many learners: Friedman, then Nemenyi (or a control).
CONTROL_CORRECTIONS = ("holm", "bonferroni", "hochberg", "hommel")
PAIRS_CORRECTIONS = ("holm", "shaffer", "bergmann", "bonferroni")


@dataclasses.dataclass(frozen=True)
class DatasetTest:
    """How ``compare`` runs one ``--test`` on a many-data-set file."""

    run: Callable  # run(table, args) -> (rows, results)
    pairwise: bool = False  # two learners (--pair)
    random: bool = False  # draws resamples (--n-resamples, --seed)
    one_sided: bool = False  # takes --alternative less/greater


def _pair(table, args):
    if args.pair:
        for a in args.pair:
            if a not in table.learners:
                raise BadInput(
                    f"--pair: learner {a!r} is not in the file ({list(table.learners)})."
                )
        return args.pair
    if len(table.learners) > 2:
        raise BadInput(
            f"the file has {len(table.learners)} learners; choose two with --pair A B, or use "
            "--test friedman/nemenyi/friedman-posthoc."
        )
    return list(table.learners)


def _all(table):
    return all_names(table.learners, "learners")


def _friedman(table, args):
    res, notes = _quiet_call(table.friedman, method="chi2")
    # method "f": exact where the F approximation does not hold its level, with a note (42.1)
    res_f, notes_f = _quiet_call(table.friedman, method="f")
    rows = [
        _row("friedman (chi2)", _all(table), table.measure, res, args.alpha, notes),
        _row("friedman (Iman-Davenport F)", _all(table), table.measure, res_f, args.alpha, notes_f),
    ]
    rows[1]["statistic"] = float(res_f.f_statistic)
    rows[1]["df"] = ", ".join(str(d) for d in res.df)
    rows[0]["df"] = float(res.df[0])
    return rows, {"friedman": res}


def _friedman_permutation(table, args):
    from jaxtests._report import Progress

    # on a terminal only, as the other permutation commands' bars; none with --quiet
    with Progress("permutations", disable=args.quiet) as bar:
        res, notes = _quiet_call(
            table.friedman,
            method="permutation",
            n_resamples=args.n_resamples or 100_000,
            key=args.seed,
            progress=bar,
        )
    row = _row("friedman (permutation)", _all(table), table.measure, res, args.alpha, notes)
    row["df"] = None
    return [row], {"friedman-permutation": res}


def _nemenyi(table, args):
    res, notes = _quiet_call(table.nemenyi, alpha=args.alpha)
    ranks, p = np.asarray(res.average_ranks), np.asarray(res.pvalues)
    rows = []
    k = len(table.learners)
    for i in range(k):
        for j in range(i + 1, k):
            rows.append(
                {
                    "test": "nemenyi",
                    "comparison": f"{table.learners[i]} vs {table.learners[j]}",
                    "measure": table.measure,
                    "statistic": float(ranks[i] - ranks[j]),  # difference of average ranks
                    "df": None,
                    "pvalue": float(p[i, j]),
                    "decision": "reject" if p[i, j] <= args.alpha else "accept",
                    **({"notes": notes} if notes else {}),
                }
            )
    return rows, {"nemenyi": res, "nemenyi_text": res.text()}


def _posthoc(table, args):
    control = args.control
    allowed = CONTROL_CORRECTIONS if control is not None else PAIRS_CORRECTIONS
    method = args.correction or "holm"
    if method not in allowed:
        against = f"against the control {control!r}" if control is not None else "of all pairs"
        raise BadInput(
            f"--correction {method}: friedman-posthoc {against} takes one of {list(allowed)}."
        )
    res, notes = _quiet_call(
        table.friedman_posthoc, control=control, method=method, alpha=args.alpha
    )
    rows = []
    for c, (a, b) in enumerate(res.comparisons):
        row = {
            "test": f"friedman-posthoc ({method})",
            "comparison": f"{a} vs {b}",
            "measure": table.measure,
            "statistic": float(res.statistic[c]),
            "df": None,
            "pvalue": float(res.pvalue_adjusted[c]),
            "raw_pvalue": float(res.pvalue[c]),
            "decision": "reject" if bool(res.reject[c]) else "accept",
        }
        if notes:
            row["notes"] = notes
        rows.append(row)
    return rows, {"friedman-posthoc": res}  # res.text() would repeat the table's rows


def _wilcoxon(table, args):
    a, b = _pair(table, args)
    res, notes = _quiet_call(table.wilcoxon, a, b, alternative=args.alternative or "two-sided")
    row = _row(f"wilcoxon ({res.method})", f"{a} vs {b}", table.measure, res, args.alpha, notes)
    row["effect"] = estimate_text(res.rank_biserial, label="r_rb ")  # rank-biserial correlation
    row["rank_biserial"] = float(res.rank_biserial)
    return [row], {"wilcoxon": res}


def _bayes_signrank(table, args):
    a, b = _pair(table, args)
    if args.rope is None:
        raise BadInput("--test bayes-signrank needs --rope (e.g. 0.01 for accuracy).")
    res, notes = _quiet_call(
        table.signrank, a, b, rope=args.rope, key=args.seed, return_samples=args.out is not None
    )  # the samples only for the simplex plot
    # baycomp's orientation: left is the first learner better
    regions = (f"{a} better", "equivalent", f"{b} better")
    row = _bayes_row("bayes-signrank", f"{a} vs {b}", table.measure, res, regions, notes=notes)
    probs = {k: row[k] for k in ("p_left", "p_rope", "p_right")}
    # the probabilities are in the table's row: the text says how they were drawn
    text = (
        f"bayes-signrank {a} vs {b}: rope {args.rope:g}, {res.n_samples} posterior samples "
        f"(seed {res.seed})."
    )
    summary = {**probs, "rope": res.rope, "n_samples": res.n_samples, "seed": res.seed}
    return [row], {"bayes-signrank": summary, "bayes_text": text, "bayes_result": (res, (a, b))}


DATASET_TESTS = {
    "friedman": DatasetTest(_friedman),
    "friedman-permutation": DatasetTest(_friedman_permutation, random=True),
    "nemenyi": DatasetTest(_nemenyi),
    "friedman-posthoc": DatasetTest(_posthoc),
    "wilcoxon": DatasetTest(_wilcoxon, pairwise=True, one_sided=True),
    "bayes-signrank": DatasetTest(_bayes_signrank, pairwise=True, random=True),
}

# Options of the per-fold and per-instance layouts that a many-data-set file does not take.
_PER_FOLD_OPTIONS = (
    ("n_train", "--n-train"),
    ("n_test", "--n-test"),
    ("blocked", "--blocked"),
    ("one_way", "--one-way"),
    ("pool_repetitions", "--pool-repetitions"),
    ("swap_measure", "--swap-measure"),
    ("epsilon", "--epsilon"),
    ("p", "--p"),
)


def _check_options(args, tests, table):
    _given_twice(args.test, "--test")
    for t in tests:
        if t not in DATASET_TESTS:
            raise BadInput(
                f"--test {t} runs on per-fold or per-instance files; this file has a 'dataset' "
                f"column (one score per data set): choose from {list(DATASET_TESTS)}."
            )
    for name, option in _PER_FOLD_OPTIONS:
        if getattr(args, name) not in (None, False):
            raise BadInput(
                f"{option} is not used on a many-data-set file (it has a 'dataset' column)."
            )

    def unused(option, why):
        raise BadInput(f"{option} is not used by --test {' '.join(tests)}: {why}.")

    if args.pair:
        if args.pair[0] == args.pair[1]:
            raise BadInput(f"--pair: the two learners must differ, got {args.pair[0]!r} twice.")
        if not any(DATASET_TESTS[t].pairwise for t in tests):
            unused("--pair", "those tests compare all learners at once")
    random = any(DATASET_TESTS[t].random for t in tests)
    if args.n_resamples is not None and "friedman-permutation" not in tests:
        unused("--n-resamples", "only friedman-permutation draws resamples")
    if args.seed is not None and not random:
        unused("--seed", "only friedman-permutation and bayes-signrank draw random numbers")
    if args.rope is not None and "bayes-signrank" not in tests:
        unused("--rope", "only bayes-signrank has a region of practical equivalence")
    if args.alternative not in (None, "two-sided"):
        fixed = [t for t in tests if not DATASET_TESTS[t].one_sided]
        if fixed:
            raise BadInput(
                f"--alternative {args.alternative}: --test {fixed[0]} has no one-sided version."
            )
    if args.correction is not None and "friedman-posthoc" not in tests:
        unused("--correction", "it sets the step procedure of friedman-posthoc")
    if args.control is not None:
        if "friedman-posthoc" not in tests:
            unused("--control", "only friedman-posthoc compares against a control")
        if args.control not in table.learners:
            raise BadInput(
                f"--control: learner {args.control!r} is not in the file ({list(table.learners)})."
            )
    if args.out is not None and not {"nemenyi", "bayes-signrank"} & set(tests):
        unused("--out", "it receives the plots of --test nemenyi and bayes-signrank")
    for t in tests:
        if t == "nemenyi" or (t == "friedman-posthoc" and args.control is None):
            reason = _too_many(table, t)
            if reason:
                raise BadInput(f"--test {reason}.")


def _too_many(table, test):
    instead = (
        "use --test friedman-posthoc --control A (each learner against one control) or "
        "--test friedman (one test of all of them)"
    )
    return too_many_pairs(len(table.learners), test, "learners", instead)


def read(args):
    """The file's :class:`ScoreTable`, its score column chosen by ``--measures``."""
    from jaxtests._scores import read_scores

    if args.measures and len(args.measures) > 1:
        raise BadInput(
            f"--measures: a many-data-set file is tested on one score column at a time, got "
            f"{len(args.measures)}."
        )
    score = args.measures[0] if args.measures else None
    way = False if args.lower_is_better else True if args.higher_is_better else None
    return read_scores(args.file, score=score, higher_is_better=way)


def _report(table, args):
    """``--report``: :meth:`ScoreTable.report` as text, Markdown, LaTeX or JSON."""
    from jaxtests._report import dumps, text_table

    for option, value in (
        ("--test", args.test),
        ("--pair", args.pair),
        ("--control", args.control),
        ("--correction", args.correction),
        ("--alternative", args.alternative),
        ("--n-resamples", args.n_resamples),
        ("--seed", args.seed),
        ("--rope", args.rope),
        ("--out", args.out),
    ):
        if value not in (None, False):
            raise BadInput(f"{option} is not used by --report: it chooses its own tests.")
    for name, option in _PER_FOLD_OPTIONS:
        if getattr(args, name) not in (None, False):
            raise BadInput(
                f"{option} is not used on a many-data-set file (it has a 'dataset' column)."
            )
    with bad_input(f"{args.file}: --report"):
        rep = table.report(alpha=args.alpha)
    if args.json:
        print(dumps({"file": str(args.file), "layout": "datasets", "report": rep}))
    elif args.latex:
        print(rep.latex())
    elif args.markdown:
        print(rep.text())
        print()
        print(rep.markdown())
    else:
        head, rows = rep.table_rows()
        print(rep.text())
        print()
        print(text_table(rows, list(head)))
    if table.n_folds is not None:
        folds = "/".join(map(str, sorted(set(table.n_folds))))
        print(f"jaxtests: note: each data set's score is the mean over its {folds} folds.",
              file=sys.stderr)  # fmt: skip
    return 0


def run(args):
    """``compare`` on a file with a ``dataset`` column."""
    from jaxtests._report import markdown_table, text_table

    table = read(args)
    if args.report:
        return _report(table, args)
    if args.latex:
        raise BadInput("--latex writes the table of --report; add --report.")
    tests = list(args.test or [])
    left_out = []
    if not tests:
        if len(table.learners) == 2 or args.pair:
            tests = ["wilcoxon"]
        elif args.control is not None:
            tests = ["friedman", "friedman-posthoc"]
        else:
            tests = ["friedman", "nemenyi"]
            reason = _too_many(table, "nemenyi")
            if reason:  # the default: the test of all, and a note
                tests = ["friedman"]
                left_out.append(f"nemenyi left out: {reason}.")
    _check_options(args, tests, table)
    if len(table.datasets) < 2:
        raise BadInput(f"{args.file}: need at least 2 data sets, got {len(table.datasets)}.")
    rows, results = run_tests(tests, lambda t: DATASET_TESTS[t].run(table, args), args.file)
    figures = _figures(results, args.out) if args.out is not None else []
    results.pop("bayes_result", None)
    notes = [f"{r['test']}, {r['measure']}: {n}" for r in rows for n in r.get("notes", ())]
    notes += left_out
    if table.n_folds is not None:
        folds = sorted(set(table.n_folds))
        notes.append(
            f"each data set's score is the mean over its {'/'.join(map(str, folds))} folds."
        )
    if args.json:
        payload = {
            "file": str(args.file),
            "layout": "datasets",
            "datasets": list(table.datasets),
            "learners": list(table.learners),
            "measure": table.measure,
            "higher_is_better": table.higher_is_better,
            "alpha": args.alpha,
            "rows": rows,
            "results": {k: v for k, v in results.items() if not k.endswith("_text")},
        }
        if figures:
            payload["figures"] = figures
        print_json(payload, left_out)
        return 0
    columns = ["test", "comparison", "measure", "statistic", "df", "pvalue", "decision"]
    columns += [c for c in ("effect", "posterior") if any(c in r for r in rows)]
    render = markdown_table if args.markdown else text_table
    direction = "higher" if table.higher_is_better else "lower"
    print(
        f"{len(table.datasets)} data sets, {len(table.learners)} learners, "
        f"{table.measure} ({direction} is better; rank 1 = best)"
    )
    print(render(rows, columns))
    if any(r["test"] == "nemenyi" for r in rows):
        print("nemenyi: statistic = difference of average ranks.")
    if any(r["test"].startswith("friedman-posthoc") for r in rows):
        print(
            "friedman-posthoc: statistic = z of the average ranks; adjusted p-values (raw "
            "ones with --json)."
        )
    for key in ("bayes_text", "nemenyi_text", "posthoc_text"):
        if key in results:
            print()
            print(results[key])
    for path in figures:
        print(f"wrote {path}")
    for n in dict.fromkeys(notes):
        print(f"jaxtests: note: {n}", file=sys.stderr)
    return 0


def _figures(results, out):
    """PNGs of the tests that have a plot: the CD diagram and the posterior simplex."""
    from jaxtests._cli._common import _matplotlib_agg, _save_plot

    _matplotlib_agg()
    from jaxtests import plot

    paths = []
    if "nemenyi" in results:
        fig = plot.critical_difference(results["nemenyi"])
        paths.append(_save_plot(fig, out, "critical_difference.png"))
    if "bayes_result" in results:
        res, names = results["bayes_result"]
        fig = plot.simplex(res, names=names)
        paths.append(_save_plot(fig, out, "simplex.png"))
    return paths
