"""jaxtests command line: the demo and tests on your own result files.

Exit status: 0 success, 2 bad input (one line on stderr naming the problem),
130 interrupted.
"""

import argparse
import csv
import json
import sys

import numpy as np

__all__ = ["main"]

TESTS = (
    "t",
    "5x2cv-t",
    "5x2cv-f",
    "corrected-t",
    "hotelling",
    "anova",
    "manova",
    "posthoc",
    "signflip",
    "swap",
)
CLF_LOSSES = ("zero_one", "hinge")
REG_LOSSES = ("square", "absolute", "epsilon_insensitive", "power")
CLF_MEASURES = ("error", "accuracy", "tpr", "fpr", "precision", "recall", "f1", "roc_auc")


class BadInput(ValueError):
    """A user error the CLI reports in one line with exit status 2."""


# --------------------------------------------------------------------- compare


def _is_binary(y):
    v = np.unique(y)
    return bool(np.all(np.isin(v, (-1, 1))) or np.all(np.isin(v, (0, 1))))


def _fold_measures(data, args):
    """Per-fold table from per-instance outputs: mean losses and count measures."""
    from jaxtests import losses, measures
    from jaxtests._tidy import PerFold

    y = data.y_true
    clf = _is_binary(y)
    names = (*CLF_LOSSES, *CLF_MEASURES) if clf else (*REG_LOSSES, "rmse")
    L, k = len(data.algorithms), len(data.folds)
    out = np.empty((L, k, len(names)))
    for j in range(k):
        sel = data.fold_of == j
        yt, s = y[sel], data.scores[:, sel]
        yb = np.broadcast_to(yt, s.shape)
        col = []
        if clf:
            for name in CLF_LOSSES:
                col.append(np.asarray(getattr(losses, name)(yb, s)).mean(-1))
            pred = np.where(s > 0, 1.0, -1.0)
            c = measures.confusion_counts(yb, pred)
            for name in CLF_MEASURES[:-1]:
                col.append(np.asarray(getattr(measures, name)(c)))
            col.append(np.asarray(measures.roc_auc(yb, s)))
        else:
            col.append(np.asarray(losses.square(yb, s)).mean(-1))
            col.append(np.asarray(losses.absolute(yb, s)).mean(-1))
            col.append(np.asarray(losses.epsilon_insensitive(yb, s, args.epsilon)).mean(-1))
            col.append(np.asarray(losses.power(yb, s, args.p)).mean(-1))
            col.append(np.asarray(measures.rmse(yb, s)))
        out[:, j, :] = np.stack(col, axis=-1)
    return PerFold(data.algorithms, data.folds, names, out)


def _pair(table, args):
    algs = table.algorithms
    if args.pair:
        for a in args.pair:
            if a not in algs:
                raise BadInput(f"--pair: algorithm {a!r} is not in the file ({list(algs)}).")
        return args.pair
    if len(algs) > 2:
        raise BadInput(
            f"the file has {len(algs)} algorithms; choose two with --pair A B, or use "
            "--test anova/posthoc/manova."
        )
    return list(algs)


def _measure_names(table, args, *, multi):
    if args.measures:
        names = args.measures
    elif multi:
        pref = [m for m in ("tpr", "fpr") if m in table.measures]
        names = pref if len(pref) == 2 else list(table.measures)
    else:
        names = [table.measures[0]]
    for m in names:
        if m not in table.measures:
            raise BadInput(
                f"--measures: {m!r} is not available; choose from {list(table.measures)}."
            )
    if multi and len(names) < 2:
        raise BadInput("a multivariate test needs at least two --measures.")
    return names


def _row(test, comparison, measure, res, alpha, pvalue=None):
    p = float(np.asarray(res.pvalue if pvalue is None else pvalue))
    df = getattr(res, "df", None)
    if df is not None:
        df = np.asarray(df).tolist()
        df = ", ".join(f"{d:.4g}" for d in df) if isinstance(df, list) else float(df)
    return {
        "test": test,
        "comparison": comparison,
        "measure": measure,
        "statistic": float(np.asarray(res.statistic)),
        "df": df,
        "pvalue": p,
        "decision": "reject" if p <= alpha else "accept",
    }


def _run_compare_test(test, table, data, args, key):
    from jaxtests import _multivariate, _permutation, _posthoc, _ttests

    rows, extra = [], {}
    alpha = args.alpha
    idx = {a: i for i, a in enumerate(table.algorithms)}
    if test in ("t", "5x2cv-t", "5x2cv-f", "corrected-t", "signflip"):
        a, b = _pair(table, args)
        m = _measure_names(table, args, multi=False)[0]
        xa, xb = table.measure(m)[idx[a]], table.measure(m)[idx[b]]
        if test == "t":
            res = _ttests.ttest_paired(xa, xb, alternative=args.alternative)
        elif test in ("5x2cv-t", "5x2cv-f"):
            if xa.size != 10:
                raise BadInput(f"--test {test} needs 10 folds (5 replications x 2), got {xa.size}.")
            fn = _ttests.ttest_5x2cv if test == "5x2cv-t" else _ttests.ftest_5x2cv
            res = fn(xa.reshape(5, 2), xb.reshape(5, 2))
        elif test == "corrected-t":
            if args.n_train is None or args.n_test is None:
                raise BadInput("--test corrected-t needs --n-train and --n-test.")
            res = _ttests.ttest_corrected(
                xa, xb, n_train=args.n_train, n_test=args.n_test, alternative=args.alternative
            )
        else:
            res = _permutation.signflip_test(
                xa - xb, alternative=args.alternative, n_resamples=args.n_resamples, key=key
            )
        rows.append(_row(test, f"{a} vs {b}", m, res, alpha))
        return rows, {test: res}
    if test == "hotelling":
        a, b = _pair(table, args)
        ms = _measure_names(table, args, multi=True)
        sel = [table.measures.index(m) for m in ms]
        res = _multivariate.hotelling_t2(
            table.values[idx[a]][:, sel], table.values[idx[b]][:, sel], names=ms
        )
        rows.append(_row(test, f"{a} vs {b}", ", ".join(ms), res, alpha))
        return rows, {test: res}
    if test == "anova":
        m = _measure_names(table, args, multi=False)[0]
        res = _multivariate.anova(table.measure(m), blocked=args.blocked)
        rows.append(_row(test, " / ".join(table.algorithms), m, res, alpha))
        return rows, {test: res}
    if test == "manova":
        ms = _measure_names(table, args, multi=True)
        sel = [table.measures.index(m) for m in ms]
        res = _multivariate.manova(table.values[:, :, sel], names=ms)
        rows.append(_row(test, " / ".join(table.algorithms), ", ".join(ms), res, alpha))
        return rows, {test: res}
    if test == "posthoc":
        ms = _measure_names(table, args, multi=bool(args.measures and len(args.measures) > 1))
        sel = [table.measures.index(m) for m in ms]
        x = table.values[:, :, sel[0]] if len(ms) == 1 else table.values[:, :, sel]
        res = _posthoc.posthoc(
            x,
            test="t" if len(ms) == 1 else "hotelling",
            correction=args.correction,
            alpha=alpha,
            names=table.algorithms,
        )
        adj = np.asarray(res.pvalue_adjusted)
        raw = np.asarray(res.pvalue)
        stat = np.asarray(res.statistic)
        L = len(table.algorithms)
        for i in range(L):
            for j in range(i + 1, L):
                rows.append(
                    {
                        "test": f"posthoc ({args.correction})",
                        "comparison": f"{table.algorithms[i]} vs {table.algorithms[j]}",
                        "measure": ", ".join(ms),
                        "statistic": float(stat[i, j]),
                        "df": None,
                        "pvalue": float(adj[i, j]),
                        "raw_pvalue": float(raw[i, j]),
                        "decision": "reject" if adj[i, j] <= alpha else "accept",
                    }
                )
        extra["posthoc_text"] = res.text()
        return rows, {test: res, **extra}
    if test == "swap":
        from jaxtests._tidy import PerInstance

        if not isinstance(data, PerInstance):
            raise BadInput(
                "--test swap needs a per-instance file (algorithm, fold, instance, y_true, score)."
            )
        a, b = _pair(table, args)
        ia, ib = data.algorithms.index(a), data.algorithms.index(b)
        pa, pb = data.scores[ia], data.scores[ib]
        measure = args.swap_measure
        if measure not in ("roc_auc", "auc"):
            pa, pb = np.where(pa > 0, 1.0, -1.0), np.where(pb > 0, 1.0, -1.0)
        res = _permutation.swap_test(
            data.y_true,
            pa,
            pb,
            measure=measure,
            alternative=args.alternative,
            n_resamples=args.n_resamples,
            key=key,
        )
        rows.append(_row(test, f"{a} vs {b}", measure, res, alpha))
        return rows, {test: res}
    raise BadInput(f"unknown test {test!r}")


def _cmd_compare(args):
    from jaxtests._report import jsonable, markdown_table, text_table
    from jaxtests._tidy import PerInstance, read_tidy

    data = read_tidy(args.file)
    table = _fold_measures(data, args) if isinstance(data, PerInstance) else data
    if not table.values.shape[1] >= 2:
        raise BadInput(f"{args.file}: need at least 2 folds, got {table.values.shape[1]}.")
    tests = args.test or (
        ["t"] if len(table.algorithms) == 2 or args.pair else ["anova", "posthoc"]
    )
    seed = args.seed
    rows, results = [], {}
    for t in tests:
        r, res = _run_compare_test(t, table, data, args, seed)
        rows += r
        results.update(res)
    columns = ["test", "comparison", "measure", "statistic", "df", "pvalue", "decision"]
    if args.json:
        payload = {
            "file": str(args.file),
            "algorithms": list(table.algorithms),
            "folds": list(table.folds),
            "alpha": args.alpha,
            "rows": rows,
            "results": {k: jsonable(v) for k, v in results.items()},
        }
        print(json.dumps(payload, indent=2))
        return 0
    render = markdown_table if args.markdown else text_table
    print(render(rows, columns))
    if "posthoc_text" in results:
        print()
        print(results["posthoc_text"])
    return 0


# -------------------------------------------------------------------- signflip


def _cmd_signflip(args):
    from jaxtests import _permutation
    from jaxtests._report import Progress, jsonable
    from jaxtests.datasets import load_csv

    with open(args.file, newline="") as fh:
        header = next(csv.reader(fh), None)
    if not header:
        raise BadInput(f"{args.file}: the file is empty (no header line).")
    header = [h.strip() for h in header]
    column = args.column or (header[0] if len(header) == 1 else None)
    if column is None:
        raise BadInput(f"{args.file}: several columns {header}; choose one with --column.")
    _, d = load_csv(args.file, label=column, features=[])
    method = "exact" if args.exact else "auto"
    with Progress("sign flips", disable=args.quiet) as bar:
        kwargs = {"progress": bar} if _accepts(_permutation.signflip_test, "progress") else {}
        res = _permutation.signflip_test(
            d,
            statistic=args.statistic,
            alternative=args.alternative,
            n_resamples=args.n_resamples,
            method=method,
            key=args.seed,
            **kwargs,
        )
    if args.json:
        print(
            json.dumps(
                {
                    "file": str(args.file),
                    "column": column,
                    "n": int(d.size),
                    "result": jsonable(res),
                },
                indent=2,
            )
        )
        return 0
    print(f"{args.file}: column {column!r}, m = {d.size} paired differences, mean {d.mean():.6g}")
    print(res)
    return 0


def _accepts(fn, name):
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------------- sanity


def _cmd_sanity(args):
    from jaxtests import models
    from jaxtests._report import Progress, jsonable
    from jaxtests._sanity import permutation_test_score
    from jaxtests.datasets import load_csv

    X, y = load_csv(args.file, label=args.label, features=args.features)
    builders = {
        "ridge": lambda: models.ridge_classifier(),
        "lda": lambda: models.lda(),
        "logistic": lambda: models.logistic(),
        "centroid": lambda: models.nearest_centroid(),
        "knn": lambda: models.knn(),
    }
    model = builders[args.model]()
    with Progress("label permutations", unit="perm", disable=args.quiet) as bar:
        res = permutation_test_score(
            model,
            X,
            y,
            cv=args.cv,
            n_permutations=args.n_permutations,
            scoring=args.scoring,
            key=args.seed,
            progress=bar,
        )
    if args.json:
        print(
            json.dumps(
                {"file": str(args.file), "model": args.model, "result": jsonable(res)}, indent=2
            )
        )
        return 0
    print(
        f"{args.file}: {X.shape[0]} instances, {X.shape[1]} features, model {args.model}, "
        f"{args.cv}-fold CV"
    )
    print(res)
    return 0


# ------------------------------------------------------------------- studies


def _save_plot(fig, out, name):
    import os

    import matplotlib.pyplot as plt

    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _cmd_power(args):
    from jaxtests import study

    params = {k: getattr(args, k) for k in ("df", "sigma") if getattr(args, k) is not None}
    gen = study.generator(args.generator, **params) if params else args.generator
    if args.loss_study:
        res = study.loss_study(
            tests=tuple(args.tests or ("t",)),
            powers=tuple(args.powers),
            n_experiments=args.n_experiments,
            m=args.m,
            effect=tuple(args.effect),
            alpha=args.alpha,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "loss_study", None
    elif args.calibration:
        res = study.calibration(
            tests=args.tests,
            generator=gen,
            n_experiments=args.n_experiments,
            m=args.m,
            alpha=args.alpha,
            alternative=args.alternative,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "calibration", study.plot_calibration
    else:
        res = study.power(
            tests=args.tests,
            generator=gen,
            n_experiments=args.n_experiments,
            m=args.m,
            effect=tuple(args.effect),
            alpha=args.alpha,
            alternative=args.alternative,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "power", study.plot_power
    if args.json:
        print(json.dumps({kind: res.to_dict()}, indent=2))
    else:
        print(res.table())
    if args.out and plot_fn is not None:
        _matplotlib_agg()
        path = _save_plot(plot_fn(res), args.out, f"{kind}.png")
        print(f"plot: {path}", file=sys.stderr)
    return 0


def _matplotlib_agg():
    import matplotlib

    matplotlib.use("Agg")


AGREEMENT_TASKS = {
    "error_hinge": "classification",
    "error_tpr_fpr": "classification",
    "f1_precision_recall": "classification",
    "square_epsilon": "regression",
}


def _agreement_models(task, quick):
    from jaxtests import models

    kernels = {
        "linear": ("linear", 1),
        "quadratic": ("poly", 2),
        "cubic": ("poly", 3),
        "gaussian": ("rbf", 2),
    }
    if task == "regression":
        make = models.svr
    else:
        make = models.svc
    out = {f"svm-{n}": make(kernel=k, degree=d) for n, (k, d) in kernels.items()}
    if quick:
        out = dict(list(out.items())[:3])
    return out


def _cmd_agreement(args):
    from jaxtests import _cv, datasets, study

    loaders = {
        "breast_cancer": datasets.load_breast_cancer,
        "pima": datasets.load_pima,
        "diabetes": datasets.load_diabetes,
    }
    if args.dataset not in loaders:
        raise BadInput(f"--dataset must be one of {sorted(loaders)}; got {args.dataset!r}.")
    task = AGREEMENT_TASKS[args.tests]
    X, y = loaders[args.dataset]()
    is_clf = args.dataset != "diabetes"
    if (task == "regression") == is_clf:
        want = "a regression" if task == "regression" else "a classification"
        raise BadInput(f"--tests {args.tests} needs {want} dataset; {args.dataset!r} is not.")
    X = (X - X.mean(0)) / X.std(0)
    if task == "regression":
        y = (y - y.mean()) / y.std()
    repeats = 2 if args.quick else args.repeats
    cv = _cv.cross_validate(
        _agreement_models(task, args.quick), X, y, cv=args.folds, repeats=repeats, key=args.seed
    )
    res = study.agreement(cv, args.tests, alpha=args.alpha, names=(args.dataset,))
    if args.json:
        print(json.dumps({"agreement": res.to_dict()}, indent=2))
    else:
        print(res.table())
    if args.out:
        _matplotlib_agg()
        path = _save_plot(study.plot_agreement(res), args.out, f"agreement_{args.tests}.png")
        print(f"plot: {path}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------------ main


def _parser():
    p = argparse.ArgumentParser(
        prog="jaxtests",
        description="Statistical tests for comparing learning algorithms (JAX).",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser("demo", help="the seeds' case studies on an embedded real dataset")
    d.add_argument(
        "--dataset", default="breast_cancer", help="embedded dataset (breast_cancer, pima)"
    )
    d.add_argument("--seed", type=int, default=0, help="seed of folds and resamples")
    d.add_argument(
        "--n-resamples", type=int, default=1_000_000, help="sign-flip draws per test (default 10^6)"
    )
    d.add_argument("--quick", action="store_true", help="fewer learners and resamples")
    d.add_argument("--out", default="jaxtests-demo", help="output folder for JSON and PNGs")
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.set_defaults(func=_cmd_demo)

    c = sub.add_parser("compare", help="test per-fold or per-instance results from a file")
    c.add_argument(
        "file",
        help="tidy CSV or JSON: algorithm,fold,<measures...> or "
        "algorithm,fold,instance,y_true,score",
    )
    c.add_argument(
        "--test",
        action="append",
        choices=TESTS,
        help="test(s) to run (repeatable); default t for two algorithms, "
        "anova and posthoc for more",
    )
    c.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two algorithms to compare")
    c.add_argument("--measures", nargs="+", help="measure column(s) to test")
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"))
    c.add_argument(
        "--correction",
        default="holm",
        choices=("holm", "bonferroni", "hochberg", "hommel", "bh", "by"),
    )
    c.add_argument("--n-resamples", type=int, default=100_000)
    c.add_argument("--seed", type=int, default=None, help="seed for permutation tests")
    c.add_argument("--n-train", type=int, help="training-set size (corrected-t)")
    c.add_argument("--n-test", type=int, help="test-set size (corrected-t)")
    c.add_argument("--blocked", action="store_true", help="ANOVA with folds as blocks")
    c.add_argument("--swap-measure", default="f1", help="measure of the swap test")
    c.add_argument("--epsilon", type=float, default=0.1, help="epsilon-insensitive loss tube")
    c.add_argument("--p", type=float, default=0.5, help="exponent of the |error|^p loss")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable output")
    fmt.add_argument("--markdown", action="store_true", help="markdown table for papers")
    c.set_defaults(func=_cmd_compare)

    s = sub.add_parser("sanity", help="label-permutation sanity check on a feature/label CSV")
    s.add_argument("file")
    s.add_argument("--label", required=True, help="label column")
    s.add_argument("--features", nargs="+", help="feature columns (default: all others)")
    s.add_argument(
        "--model", default="ridge", choices=("ridge", "lda", "logistic", "centroid", "knn")
    )
    s.add_argument("--cv", type=int, default=5)
    s.add_argument("--n-permutations", type=int, default=1000)
    s.add_argument("--scoring", default="accuracy")
    s.add_argument("--seed", type=int, default=None)
    s.add_argument("--json", action="store_true")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=_cmd_sanity)

    f = sub.add_parser("signflip", help="sign-flip permutation test on paired differences")
    f.add_argument("file", help="CSV with a header and a column of paired differences")
    f.add_argument("--column", help="the column (default: the only one)")
    f.add_argument("--statistic", default="mean", choices=("mean", "t"))
    f.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"))
    f.add_argument("--n-resamples", type=int, default=1_000_000)
    f.add_argument("--exact", action="store_true", help="enumerate all 2^m sign patterns")
    f.add_argument("--seed", type=int, default=None)
    f.add_argument("--json", action="store_true")
    f.add_argument("--quiet", action="store_true")
    f.set_defaults(func=_cmd_signflip)

    w = sub.add_parser("power", help="power, calibration or MacKay's loss study by simulation")
    w.add_argument(
        "--tests", nargs="+", help="t signflip_mean signflip_t wilcoxon sign hotelling t_bonferroni"
    )
    w.add_argument(
        "--generator",
        default="normal",
        choices=("normal", "t", "cauchy", "lognormal", "bernoulli", "mvnormal"),
    )
    w.add_argument("--df", type=float, help="degrees of freedom (generator t)")
    w.add_argument("--sigma", type=float, help="log-scale sigma (generator lognormal)")
    w.add_argument("--n-experiments", type=int, default=10_000)
    w.add_argument("--m", type=int, default=30, help="paired differences per experiment")
    w.add_argument("--effect", type=float, nargs="+", default=[0.0, 0.25, 0.5])
    w.add_argument("--alpha", type=float, default=0.05)
    w.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"))
    w.add_argument("--n-resamples", type=int, default=10_000)
    w.add_argument("--seed", type=int, default=None)
    mode = w.add_mutually_exclusive_group()
    mode.add_argument("--calibration", action="store_true", help="type-I error under H0")
    mode.add_argument(
        "--loss-study",
        action="store_true",
        help="MacKay's |error|^p study under Cauchy errors (seed 001)",
    )
    w.add_argument("--powers", type=float, nargs="+", default=[2.0, 1.0, 0.5, 0.1])
    w.add_argument("--json", action="store_true")
    w.add_argument("--out", help="folder for a PNG plot")
    w.set_defaults(func=_cmd_power)

    g = sub.add_parser("agreement", help="agreement of two tests over repeated CV (seeds 000/004)")
    g.add_argument(
        "--dataset",
        default="breast_cancer",
        help="breast_cancer, pima (classification) or diabetes (regression)",
    )
    g.add_argument("--tests", default="error_hinge", choices=tuple(AGREEMENT_TASKS))
    g.add_argument("--folds", type=int, default=10)
    g.add_argument("--repeats", type=int, default=10)
    g.add_argument("--alpha", type=float, default=0.05)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--quick", action="store_true", help="2 repetitions, 3 kernels")
    g.add_argument("--json", action="store_true")
    g.add_argument("--out", help="folder for a PNG heatmap")
    g.set_defaults(func=_cmd_agreement)
    return p


def _cmd_demo(args):
    from jaxtests._demo import run_demo

    return run_demo(args)


def main(argv=None):
    """Entry point of the ``jaxtests`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("jaxtests: interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, KeyError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, OSError) and exc.filename:
            msg = f"{exc.filename}: {exc.strerror}"
        print(f"jaxtests: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
