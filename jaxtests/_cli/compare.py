"""``jaxtests compare``: tests on per-fold or per-instance results read from a file."""

import argparse
import sys

import numpy as np

from jaxtests._cli import _compare_clusters, _compare_datasets
from jaxtests._cli._common import (
    ALPHA,
    ALTERNATIVES,
    NONNEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    SEED,
    BadInput,
    _given_twice,
    print_json,
    run_tests,
    too_many_pairs,
)
from jaxtests._cli._compare_data import _fold_measures, _losses_of, _task
from jaxtests._cli._compare_datasets import DATASET_TESTS
from jaxtests._cli._compare_tests import BOOTSTRAP_MEASURES, TESTS, Inputs, run_test
from jaxtests._report import Progress, markdown_table, text_table
from jaxtests._tidy import ItemTable, PerFold, PerInstance, has_dataset_column, read_tidy
from jaxtests.kernels import measures as kmeasures

# swap_test's measures: every measure of confusion counts in the table, and the ROC area
SWAP_MEASURES = (*kmeasures.measure_names("counts", aliases=True), "auc", "roc_auc")
CORRECTIONS = ("holm", "bonferroni", "hochberg", "hommel", "bh", "by", "shaffer", "bergmann")
RANK_CORRECTIONS = ("shaffer", "bergmann")  # friedman-posthoc of all pairs only
# the tests of a per-instance file's instances (not of per-fold values): they take a
# held-out test set, one fold
ONE_SET = frozenset({"bootstrap", "delong", "cochran", "mcnemar", "swap", "signflip"})


def add_parser(subparsers):
    c = subparsers.add_parser(
        "compare", help="test per-fold, per-instance or many-data-set results from a file"
    )
    c.add_argument(
        "file",
        help="tidy CSV or JSON: algorithm,fold,<measures...> or "
        "algorithm,fold,instance,y_true,score (optionally a repetition column), or "
        "dataset,algorithm,<score> (one score per data set; optionally per fold), or "
        "model,item,score (optionally a sample column: several sampled answers per item, "
        "averaged per item)",
    )
    c.add_argument(
        "--test",
        action="append",
        choices=(*TESTS, *DATASET_TESTS),
        help="test(s) to run (repeatable); default t for two algorithms, "
        "anova and posthoc for more; on a many-data-set file wilcoxon for two learners, "
        "friedman and nemenyi for more (friedman-posthoc with --control)",
    )
    c.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two algorithms to compare")
    c.add_argument(
        "--measures",
        nargs="+",
        help="measure column(s) to test; a univariate test runs on each, its p-values "
        "adjusted with --correction (default: every measure column of a per-fold file, one "
        "block each, unadjusted)",
    )
    c.add_argument("--alpha", type=ALPHA, default=0.05, help="level in (0, 1)")
    c.add_argument("--alternative", default=None, choices=ALTERNATIVES, help="default two-sided")
    c.add_argument(
        "--correction",
        default=None,
        choices=CORRECTIONS,
        help="multiple-comparison correction of posthoc, friedman-posthoc, cochran's pairwise "
        "McNemar tests and several --measures (default holm)",
    )
    c.add_argument(
        "--n-resamples",
        type=POSITIVE_INT,
        default=None,
        help="Monte Carlo draws of signflip/swap/friedman-permutation (default 10^5) and "
        "resamples of bootstrap (default 9,999); refused if the p-value is exact",
    )
    c.add_argument(
        "--seed",
        type=SEED,
        default=None,
        help="seed of the permutation tests, bootstrap and bayes-signrank",
    )
    c.add_argument("--n-train", type=POSITIVE_INT, help="training-set size (corrected-t, bayes-t)")
    c.add_argument("--n-test", type=POSITIVE_INT, help="test-set size (corrected-t, bayes-t)")
    design = c.add_mutually_exclusive_group()
    design.add_argument(
        "--blocked",
        action="store_true",
        help="ANOVA with folds as blocks (the default: every algorithm ran on the same folds, "
        "as the paired tests beside it take them)",
    )
    design.add_argument(
        "--one-way",
        action="store_true",
        help="one-way ANOVA, the folds pooled as independent samples of each algorithm",
    )
    c.add_argument(
        "--pool-repetitions",
        action="store_true",
        help="pool the folds of several repetitions in t/anova/... (not independent)",
    )
    c.add_argument(
        "--swap-measure", default=None, choices=SWAP_MEASURES, help="measure of the swap test (f1)"
    )
    c.add_argument(
        "--epsilon", type=NONNEGATIVE, default=None, help="epsilon-insensitive loss tube"
    )
    c.add_argument("--p", type=POSITIVE, default=None, help="exponent of the |error|^p loss")
    way = c.add_mutually_exclusive_group()
    way.add_argument(
        "--lower-is-better",
        action="store_true",
        help="the measure is an error or loss: orderings and ranks put the lowest first "
        "(default: from the column's name; error, loss, rmse, fpr... are lower-is-better)",
    )
    way.add_argument(
        "--higher-is-better",
        action="store_true",
        help="the measure is a score: orderings and ranks put the highest first (default for "
        "accuracy, auc, f1... and, on a many-data-set file, any name not known as a loss)",
    )
    d = c.add_argument_group("many-data-set file (a 'dataset' column)")
    d.add_argument("--control", help="friedman-posthoc: compare every learner with this one")
    d.add_argument(
        "--report",
        action="store_true",
        help="an automatic analysis as autorank makes one: checks normality and equal "
        "variances, picks the tests (repeated-measures ANOVA and Tukey's HSD, or Friedman "
        "and Nemenyi; t or Wilcoxon for two learners) and writes a summary and a table",
    )
    c.add_argument(
        "--rope",
        type=NONNEGATIVE,
        default=None,
        help="bayes-t, bayes-signrank: half-width of the region of practical equivalence",
    )
    d.add_argument(
        "--out", help="folder for the PNGs of nemenyi (critical difference) and bayes-signrank"
    )
    _compare_clusters.add_options(c)
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable output")
    fmt.add_argument("--markdown", action="store_true", help="markdown table for papers")
    fmt.add_argument("--latex", action="store_true", help="LaTeX table of --report for papers")
    c.set_defaults(func=run)


def _check_options(args, tests, data, task):
    """Every option is used by a selected test or refused (issue 13: none silently ignored)."""
    per_instance = isinstance(data, PerInstance)
    _given_twice(args.test, "--test")
    _given_twice(args.measures, "--measures")
    if args.pair and args.pair[0] == args.pair[1]:
        raise BadInput(f"--pair: the two algorithms must differ, got {args.pair[0]!r} twice.")

    def unused(option, why):
        raise BadInput(f"{option} is not used by --test {' '.join(tests)}: {why}.")

    for t in tests:
        if t in DATASET_TESTS:
            raise BadInput(
                f"--test {t} compares learners over many data sets; the file has no 'dataset' "
                "column (dataset, algorithm, <score>)."
            )
    for option, value in (
        ("--control", args.control),
        ("--out", args.out),
        ("--report", args.report),
    ):
        if value not in (None, False):
            raise BadInput(
                f"{option} is used on a many-data-set file (with a 'dataset' column) only."
            )
    if args.correction in RANK_CORRECTIONS:
        raise BadInput(
            f"--correction {args.correction} is a step procedure of friedman-posthoc on a "
            "many-data-set file; posthoc takes holm, bonferroni, hochberg, hommel, bh or by."
        )
    if (args.lower_is_better or args.higher_is_better) and "posthoc" not in tests:
        way = "--lower-is-better" if args.lower_is_better else "--higher-is-better"
        unused(way, "on a per-fold file only posthoc orders the algorithms")
    if args.pair and not any(TESTS[t].pairwise for t in tests):
        unused("--pair", "those tests compare all algorithms at once")
    sized = [t for t in tests if t in ("corrected-t", "bayes-t")]
    if (args.n_train is not None or args.n_test is not None) and not sized:
        unused("--n-train/--n-test", "only --test corrected-t and bayes-t use them")
    if sized and (args.n_train is None or args.n_test is None):
        raise BadInput(f"--test {sized[0]} needs --n-train and --n-test.")
    if "bayes-t" in tests and args.rope is None:
        raise BadInput("--test bayes-t needs --rope (e.g. 0.01 for accuracy).")
    if args.rope is not None and "bayes-t" not in tests:
        unused("--rope", "only bayes-t (and bayes-signrank on a many-data-set file) use it")
    for option, value in (("--blocked", args.blocked), ("--one-way", args.one_way)):
        if value and "anova" not in tests:
            unused(option, "only --test anova uses it")
    if args.swap_measure is not None and "swap" not in tests:
        unused("--swap-measure", "only --test swap uses it")
    if args.measures and all(t == "swap" for t in tests):
        unused("--measures", "the swap test's measure is --swap-measure")
    if args.measures and all(t in ("swap", "mcnemar") for t in tests):
        unused("--measures", "mcnemar compares the 0/1 errors of the predictions")
    if args.measures and all(t in ("delong", "cochran") for t in tests):
        unused("--measures", "delong tests the AUCs of the scores, cochran the accuracies")
    random = [t for t in tests if TESTS[t].random]
    if args.n_resamples is not None and not random:
        unused("--n-resamples", "only signflip, swap and bootstrap draw resamples")
    if args.seed is not None and not random:
        unused("--seed", "only signflip, swap and bootstrap draw random numbers")
    if args.alternative not in (None, "two-sided"):
        fixed = [t for t in tests if TESTS[t].two_sided_only]
        if fixed:
            raise BadInput(
                f"--alternative {args.alternative}: --test {fixed[0]} has no one-sided version."
            )
    multi = bool(args.measures and len(args.measures) > 1)
    if args.correction is not None and not {"posthoc", "cochran"} & set(tests):
        if not (multi and any(TESTS[t].per_measure is not None for t in tests)):
            unused(
                "--correction",
                "it adjusts the p-values of posthoc and cochran's pairwise McNemar tests, or of "
                "a test run on several --measures",
            )
    for opt, name, loss in (("--epsilon", "epsilon", "epsilon_insensitive"), ("--p", "p", "power")):
        if getattr(args, name) is None:
            continue
        if task != "regression":
            raise BadInput(
                f"{opt} is not used: it sets the {loss} loss of a per-instance regression file."
            )
        if loss not in (args.measures or ()):
            unused(opt, f"add --measures {loss} to test the {loss} loss")
    instance_tests = [
        t for t in tests if t in ("swap", "mcnemar", "bootstrap", "delong", "cochran")
    ]
    if not per_instance:
        if instance_tests and not isinstance(data, ItemTable):  # (checked for items before)
            raise BadInput(
                f"--test {instance_tests[0]} needs a per-instance file (algorithm, fold, "
                "instance, y_true, score)."
            )
        return
    once = [t for t in instance_tests if t != "bootstrap"]  # bootstrap averages repetitions
    if data.repetitions is not None and once:
        raise BadInput(
            f"--test {once[0]} needs each instance once; the file has repetitions ({once[0]} on "
            "one repetition's rows)."
        )
    for t in once:
        if task != "classification":
            raise BadInput(f"--test {t} compares classifiers; y_true is not -1/+1 or 0/1 labels.")
    for t in ("signflip", "bootstrap"):
        if t not in tests:
            continue
        allowed = _losses_of(task, args)
        if t == "bootstrap" and task == "classification":
            # or the difference of a measure of the pooled instances (AUC, accuracy...)
            allowed = (*allowed, *BOOTSTRAP_MEASURES)
        for m in args.measures or ():
            if m not in allowed:
                also = (
                    f"; bootstrap also takes {list(BOOTSTRAP_MEASURES)}"
                    if t == "bootstrap" and task == "classification"
                    else ""
                )
                raise BadInput(
                    f"--test {t} on a per-instance file tests per-instance loss differences; "
                    f"{m!r} is not a per-instance loss. Choose from {list(allowed)} (or "
                    "--test swap --swap-measure for f1, precision, recall, accuracy, auc; "
                    f"--test delong for the AUC){also}."
                )


def _check_pooling(args, tests, table, per_instance):
    reps = table.repetitions
    if reps is None or len(set(reps)) == 1 or args.pool_repetitions:
        return
    pooled = [t for t in tests if TESTS[t].pooling]
    for t in ("signflip", "t") if args.cluster else ("signflip",):
        if t in pooled and per_instance:
            pooled.remove(t)  # per-instance differences are averaged over repetitions
    if pooled:
        R = len(set(reps))
        raise BadInput(
            f"--test {pooled[0]} would pool the {len(reps)} folds of {R} repetitions as if "
            "they were independent, but the repetitions reuse the same instances, so its "
            "p-value is far too small. Use --test corrected-t (or 5x2cv-t/5x2cv-f for 5x2 "
            "cv), or pass --pool-repetitions to pool anyway."
        )


def _difference_note(rows, alpha):
    """What the ``difference`` column holds, for the tests that ran (A, B: the comparison)."""
    what = {}  # description -> tests
    for r in rows:
        if "difference_of" in r:
            what.setdefault(r["difference_of"], []).append(r["test"].split(" (")[0])
    parts = [
        f"{d} ({', '.join(dict.fromkeys(tests))})" if len(what) > 1 else d
        for d, tests in what.items()
    ]
    return (
        f"difference: {'; '.join(parts)}, for A vs B in the comparison column; intervals at "
        f"{1 - alpha:.0%} (not adjusted across measures)."
    )


def run(args):
    if has_dataset_column(args.file):
        if args.cluster is not None or args.cluster_se is not None:
            raise BadInput(
                "--cluster groups the instances of a per-instance file or the items of a "
                "per-item file; this is a many-data-set file (a 'dataset' column)."
            )
        return _compare_datasets.run(args)
    if args.latex:
        raise BadInput("--latex writes the table of --report, on a many-data-set file only.")
    try:
        data = read_tidy(args.file, cluster=args.cluster)
    except ValueError as exc:  # a missing or inconsistent cluster column: as any bad file
        raise BadInput(str(exc)) from None
    items = isinstance(data, ItemTable)
    per_instance = isinstance(data, PerInstance)
    task = _task(data, args.file) if per_instance else None
    tests = list(args.test or [])
    instead = "run --test anova (one test of all of them) or compare two with --pair A B"
    too_many = too_many_pairs(len(data.algorithms), "posthoc", "algorithms", instead)
    left_out = []
    if not tests:
        tests = ["t"] if len(data.algorithms) == 2 or args.pair else ["anova", "posthoc"]
        if items:  # the t of the per-item differences; --pair picks two of several
            tests = ["t"]
        if too_many and "posthoc" in tests:  # the default: the test of all, and a note
            tests.remove("posthoc")
            left_out.append(f"posthoc left out: {too_many}.")
    elif too_many and "posthoc" in tests:
        raise BadInput(f"--test {too_many}.")
    _compare_clusters.check(args, tests, data, _losses_of(task, args) if per_instance else ())
    _check_options(args, tests, data, task)
    table = _fold_measures(data, args, task) if per_instance else data
    if items:  # one column, 'score': each model's mean over items and samples
        means = data.samples.mean(axis=(1, 2))[:, None, None]
        table = PerFold(data.models, ("items",), ("score",), means)
    # the tests of instances (or items): clustered or per-item, t and wild are among them
    one_set = ONE_SET | {"t", "wild"} if items or args.cluster else ONE_SET
    if not table.values.shape[1] >= 2 and not ((per_instance or items) and set(tests) <= one_set):
        fold_tests = [t for t in tests if t not in ONE_SET]
        raise BadInput(
            f"{args.file}: --test {fold_tests[0]} compares per-fold values and needs at least "
            f"2 folds, got {table.values.shape[1]}; a held-out test set (one fold) takes the "
            f"tests of its instances: {', '.join(sorted(ONE_SET))}."
        )
    _check_pooling(args, tests, table, per_instance)
    univariate = [t for t in tests if TESTS[t].per_measure is not None or t == "posthoc"]
    # Several measure columns and no --measures: each univariate test on every column, one
    # block per measure (issue 28.7), as separate calls of R's t.test or scipy would; the
    # multivariate tests (hotelling, manova) take all columns at once, in a block of their own.
    every = not per_instance and not args.measures and len(table.measures) > 1 and univariate
    if every:
        blocks = [(m, univariate) for m in table.measures]
        rest = [t for t in tests if t not in univariate]
        if rest:
            blocks.append((None, rest))
    else:
        blocks = [(None, tests)]
    # a bar only where something is drawn (not for a parametric test's compilation)
    drawn = any(TESTS[t].random for t in tests)
    done = []  # (measure, rows, results) of each block
    with Progress("resamples", disable=args.quiet or not drawn) as bar:
        for measure, block in blocks:
            block_args = argparse.Namespace(**vars(args))
            if measure is not None:
                block_args.measures = [measure]
            inp = Inputs(table, data, block_args, bar)
            done.append((measure, *run_tests(block, run_test, args.file, inp)))
    rows = [r for _, block_rows, _ in done for r in block_rows]
    results = {}  # as with several --measures: {test: {measure: result}}
    for measure, _, block_results in done:
        for k, v in block_results.items():
            if measure is None or k.endswith("_text"):
                results[k] = v
            else:
                results.setdefault(k, {})[measure] = v
    notes = [f"{r['test']}, {r['measure']}: {n}" for r in rows for n in r.get("notes", ())]
    notes += left_out
    adjusted = sorted({r["test"] for r in rows if "measures)" in r["test"]})
    columns = ["test", "comparison", "measure", "statistic", "df", "pvalue", "decision"]
    extra, extra_lines = _compare_clusters.summary(args, data, tests)
    if args.json:
        for r in rows:
            if r["pvalue"] is None:  # Bayesian rows: posterior probabilities, no p-value
                continue
            stat = np.nan if r["statistic"] is None else r["statistic"]  # None: pairwise rows
            if not (np.isfinite(stat) or r["statistic"] is None) or not np.isfinite(r["pvalue"]):
                r["reason"] = "; ".join(r.get("notes", ())) or "the statistic is undefined"
        payload = {
            "file": str(args.file),
            "algorithms": list(table.algorithms),
            "folds": list(table.folds),
            "alpha": args.alpha,
            "rows": rows,
            "results": {k: v for k, v in results.items() if not k.endswith("_text")},
            **extra,
        }
        print_json(payload, left_out)
        return 0
    columns += [c for c in ("difference", "effect", "posterior") if any(c in r for r in rows)]
    render = markdown_table if args.markdown else text_table
    for b, (measure, block_rows, block_results) in enumerate(done):
        if every:
            if b:
                print()
            print(f"{measure}:" if measure is not None else "all measures:")
        print(render(block_rows, columns))
        for key in ("bayes_text", "posthoc_text"):
            if key in block_results:
                print()
                print(block_results[key])
    if any("difference" in r for r in rows):
        print(_difference_note(rows, args.alpha))
    for t in adjusted:
        print(f"{t}: p-values adjusted across the measures; raw p-values with --json.")
    for line in extra_lines:
        print(line)
    for n in dict.fromkeys(notes):
        print(f"jaxtests: note: {n}", file=sys.stderr)
    return 0
