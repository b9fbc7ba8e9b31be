"""jaxtests command line: the demo and tests on your own result files.

Exit status: 0 success, 2 bad input (one line on stderr naming the problem),
130 interrupted.
"""

import argparse
import math
import os
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


PAIRWISE = ("t", "5x2cv-t", "5x2cv-f", "corrected-t", "hotelling", "signflip", "swap")
UNIVARIATE = ("t", "5x2cv-t", "5x2cv-f", "corrected-t", "signflip", "anova")  # one per measure
RANDOM = ("signflip", "swap")
TWO_SIDED_ONLY = ("5x2cv-f", "hotelling", "anova", "manova", "posthoc")
POOLING = ("t", "hotelling", "anova", "manova", "posthoc", "signflip")  # folds as independent
SWAP_MEASURES = ("f1", "precision", "recall", "accuracy", "auc", "roc_auc")
# Why a per-fold measure computed from instances can be undefined (0/0).
UNDEFINED = {
    "tpr": "the fold has no positive instance",
    "recall": "the fold has no positive instance",
    "fpr": "the fold has no negative instance",
    "precision": "the algorithm predicts no positive in the fold",
    "f1": "the fold has no positive instance and the algorithm predicts none",
    "roc_auc": "the fold has instances of one class only",
}


class BadInput(ValueError):
    """A user error the CLI reports in one line with exit status 2."""


# --------------------------------------------------------------------- compare


def _task(data, path):
    """'classification' for labels in {-1, +1} or {0, 1}, else 'regression'.

    Two other values (say {1, 2}) are refused: they are labels coded differently, not a
    regression target.
    """
    v = np.unique(data.y_true)
    if np.all(np.isin(v, (-1, 1))) or np.all(np.isin(v, (0, 1))):
        return "classification"
    if v.size == 2:
        raise BadInput(
            f"{path}, column 'y_true': the two values {v[0]:g} and {v[1]:g} are not class "
            "labels; classification labels must be -1/+1 or 0/1 (+1 and 1 the positive class). "
            "Recode them (a regression target has more than two distinct values)."
        )
    return "regression"


def _losses_of(task, args):
    if task == "classification":
        return CLF_LOSSES
    return tuple(
        n
        for n, given in (
            ("square", True),
            ("absolute", True),
            ("epsilon_insensitive", args.epsilon is not None),
            ("power", args.p is not None),
        )
        if given
    )


def _instance_losses(data, name, args):
    """``(n_algorithms, n)`` per-instance losses ``name`` of every algorithm."""
    from jaxtests import losses

    y = np.broadcast_to(data.y_true, data.scores.shape)
    extra = {"epsilon_insensitive": (args.epsilon,), "power": (args.p,)}.get(name, ())
    return np.asarray(getattr(losses, name)(y, data.scores, *extra))


def _fold_measures(data, args, task):
    """Per-fold table from per-instance outputs: mean losses and count measures."""
    from jaxtests import measures
    from jaxtests._tidy import PerFold

    clf = task == "classification"
    loss_names = _losses_of(task, args)
    names = (*loss_names, *CLF_MEASURES) if clf else (*loss_names, "rmse")
    inst = [_instance_losses(data, n, args) for n in loss_names]
    L, k = len(data.algorithms), len(data.folds)
    out = np.empty((L, k, len(names)))
    for j in range(k):
        sel = data.fold_of == j
        yt, s = data.y_true[sel], data.scores[:, sel]
        yb = np.broadcast_to(yt, s.shape)
        col = [x[:, sel].mean(-1) for x in inst]
        if clf:
            pred = np.where(s > 0, 1.0, -1.0)
            c = measures.confusion_counts(yb, pred)
            for name in CLF_MEASURES[:-1]:
                col.append(np.asarray(getattr(measures, name)(c)))
            col.append(np.asarray(measures.roc_auc(yb, s)))
        else:
            col.append(np.asarray(measures.rmse(yb, s)))
        out[:, j, :] = np.stack(col, axis=-1)
    return PerFold(data.algorithms, data.folds, names, out, data.repetitions)


def _given_twice(values, option):
    for v in values or ():
        if list(values).count(v) > 1:
            raise BadInput(f"{option}: {v!r} is given twice.")


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
            hint = ""
            if m == "epsilon_insensitive":
                hint = " (it needs --epsilon, the half-width of the tube)"
            elif m == "power":
                hint = " (it needs --p, the exponent of |y - f|^p)"
            raise BadInput(
                f"--measures: {m!r} is not available{hint}; choose from {list(table.measures)}."
            )
    if multi and len(names) < 2:
        raise BadInput("a multivariate test needs at least two --measures.")
    _check_defined(table, names, args)
    return names


def _check_defined(table, names, args):
    """Refuse a NaN per-fold measure (derived from instances) naming fold, algorithm and why."""
    for m in names:
        x = table.measure(m)
        bad = np.argwhere(np.isnan(x))
        if bad.size:
            i, j = bad[0]
            why = UNDEFINED.get(m, "0/0")
            raise BadInput(
                f"{args.file}: {m} is undefined (0/0) for algorithm {table.algorithms[i]!r} in "
                f"fold {table.folds[j]!r}: {why}. Choose another measure, or folds with both "
                "classes."
            )


def _row(test, comparison, measure, res, alpha, notes=(), pvalue=None):
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
    if notes:
        row["notes"] = list(notes)
    return row


def _quiet_call(fn, *a, **kw):
    """``fn(*a, **kw)`` with its warnings returned as one-line notes, not printed."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fn(*a, **kw)
    return res, list(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))


def _resamples_used(res, args, what):
    if args.n_resamples is not None and res.method != "monte-carlo":
        why = {
            "exact": "every rearrangement is enumerated (exact p-value)",
            "binomial": "the differences take only the values -c, 0, +c, so the exact "
            "binomial (sign test) p-value is used",
        }.get(res.method, f"the method is {res.method!r}")
        raise BadInput(
            f"--n-resamples {args.n_resamples} is not used by {what}: {why}. Drop --n-resamples."
        )


def _check_5x2(table, test):
    reps = table.repetitions
    if reps is None:
        raise BadInput(
            f"--test {test} needs 5 repetitions of 2-fold cross-validation, and the file does "
            f"not say which repetition each of its {len(table.folds)} folds belongs to: add a "
            "'repetition' column (1..5, folds 1..2 within each)."
        )
    order = list(dict.fromkeys(reps))
    sizes = [reps.count(r) for r in order]
    if len(order) != 5 or any(n != 2 for n in sizes):
        raise BadInput(
            f"--test {test} needs 5 repetitions x 2 folds; the file has {len(order)} "
            f"repetition(s) with {sizes} folds."
        )
    return [table.folds.index(f) for r in order for f in table.folds if f.split("/")[0] == r]


def _signflip_data(table, data, args, a, b, m):
    """Differences the compare sign-flip test uses, and their description."""
    from jaxtests._tidy import PerInstance

    if not isinstance(data, PerInstance):
        x = table.measure(m)
        ia, ib = table.algorithms.index(a), table.algorithms.index(b)
        return x[ia] - x[ib], "per fold"
    L = _instance_losses(data, m, args)
    d = L[data.algorithms.index(a)] - L[data.algorithms.index(b)]
    if data.repetitions is not None:
        # As CVResult.instance_differences: each instance's mean over the repetitions it is
        # tested in (the repetitions reuse the instances; they are not independent draws).
        _, inv = np.unique(data.instances, return_inverse=True)
        d = np.bincount(inv, weights=d) / np.bincount(inv)
    return d, "per instance"


def _one_test(test, m, table, data, args, key, a, b, bar):
    """One univariate test of measure ``m``; returns (result, label)."""
    from jaxtests import _multivariate, _permutation, _ttests

    alt = args.alternative or "two-sided"
    x = table.measure(m)
    if test == "anova":
        return _multivariate.anova(x, blocked=args.blocked), test
    xa, xb = x[table.algorithms.index(a)], x[table.algorithms.index(b)]
    if test == "t":
        return _ttests.ttest_paired(xa, xb, alternative=alt), test
    if test in ("5x2cv-t", "5x2cv-f"):
        order = _check_5x2(table, test)
        xa, xb = xa[order].reshape(5, 2), xb[order].reshape(5, 2)
        if test == "5x2cv-t":
            return _ttests.ttest_5x2cv(xa, xb, alternative=alt), test
        return _ttests.ftest_5x2cv(xa, xb), test
    if test == "corrected-t":
        return _ttests.ttest_corrected(
            xa, xb, n_train=args.n_train, n_test=args.n_test, alternative=alt
        ), test
    d, unit = _signflip_data(table, data, args, a, b, m)
    res = _permutation.signflip_test(
        d,
        alternative=alt,
        n_resamples=args.n_resamples or 100_000,
        key=key,
        progress=bar,
    )
    what = f"the sign-flip test of the {d.size} {unit.replace(' ', '-')} differences"
    _resamples_used(res, args, what)
    return res, f"signflip ({unit}, {res.method})"


def _univariate(test, table, data, args, key, bar):
    """``test`` on each measure; several measures get p-values adjusted with --correction."""
    from jaxtests import adjust_pvalues

    alpha = args.alpha
    a, b = (None, None) if test == "anova" else _pair(table, args)
    comparison = " / ".join(table.algorithms) if test == "anova" else f"{a} vs {b}"
    ms = _measure_names(table, args, multi=False) if args.measures else None
    if ms is None:  # the first measure (per-instance files: the first per-instance loss)
        ms = [table.measures[0]]
        _check_defined(table, ms, args)
    rows, results = [], {}
    for m in ms:
        try:
            res, notes = _quiet_call(_one_test, test, m, table, data, args, key, a, b, bar)
        except BadInput:
            raise
        except ValueError as exc:
            raise BadInput(f"{args.file}: --test {test} on {m!r}: {exc}") from None
        res, label = res
        rows.append(_row(label, comparison, m, res, alpha, notes))
        results[m] = res
    if len(ms) > 1:
        corr = args.correction or "holm"
        raw = np.array([r["pvalue"] for r in rows])
        ok = np.isfinite(raw)
        adj = raw.copy()
        if ok.any():
            adj[ok] = np.asarray(adjust_pvalues(raw[ok], corr))
        for r, p in zip(rows, adj, strict=True):
            r["test"] = f"{r['test']} ({corr}, {len(ms)} measures)"
            r["raw_pvalue"], r["pvalue"] = r["pvalue"], float(p)
            if np.isfinite(p):
                r["decision"] = "reject" if p <= alpha else "accept"
        return rows, {test: results}
    return rows, {test: results[ms[0]]}


def _run_compare_test(test, table, data, args, key, bar):
    from jaxtests import _multivariate, _permutation, _posthoc

    alpha = args.alpha
    if test in UNIVARIATE:
        return _univariate(test, table, data, args, key, bar)
    rows, extra = [], {}
    idx = {a: i for i, a in enumerate(table.algorithms)}
    if test == "hotelling":
        a, b = _pair(table, args)
        ms = _measure_names(table, args, multi=True)
        sel = [table.measures.index(m) for m in ms]
        res, notes = _quiet_call(
            _multivariate.hotelling_t2,
            table.values[idx[a]][:, sel],
            table.values[idx[b]][:, sel],
            names=ms,
        )
        rows.append(_row(test, f"{a} vs {b}", ", ".join(ms), res, alpha, notes))
        return rows, {test: res}
    if test == "manova":
        ms = _measure_names(table, args, multi=True)
        sel = [table.measures.index(m) for m in ms]
        res, notes = _quiet_call(_multivariate.manova, table.values[:, :, sel], names=ms)
        rows.append(_row(test, " / ".join(table.algorithms), ", ".join(ms), res, alpha, notes))
        return rows, {test: res}
    if test == "posthoc":
        ms = _measure_names(table, args, multi=bool(args.measures and len(args.measures) > 1))
        sel = [table.measures.index(m) for m in ms]
        x = table.values[:, :, sel[0]] if len(ms) == 1 else table.values[:, :, sel]
        corr = args.correction or "holm"
        res, notes = _quiet_call(
            _posthoc.posthoc,
            x,
            test="t" if len(ms) == 1 else "hotelling",
            correction=corr,
            alpha=alpha,
            names=table.algorithms,
        )
        adj = np.asarray(res.pvalue_adjusted)
        raw = np.asarray(res.pvalue)
        stat = np.asarray(res.statistic)
        L = len(table.algorithms)
        for i in range(L):
            for j in range(i + 1, L):
                row = {
                    "test": f"posthoc ({corr})",
                    "comparison": f"{table.algorithms[i]} vs {table.algorithms[j]}",
                    "measure": ", ".join(ms),
                    "statistic": float(stat[i, j]),
                    "df": None,
                    "pvalue": float(adj[i, j]),
                    "raw_pvalue": float(raw[i, j]),
                    "decision": "reject" if adj[i, j] <= alpha else "accept",
                }
                if notes:
                    row["notes"] = notes
                rows.append(row)
        extra["posthoc_text"] = res.text()
        return rows, {test: res, **extra}
    if test == "swap":
        a, b = _pair(table, args)
        ia, ib = data.algorithms.index(a), data.algorithms.index(b)
        pa, pb = data.scores[ia], data.scores[ib]
        measure = {"roc_auc": "auc"}.get(args.swap_measure, args.swap_measure or "f1")
        if measure != "auc":
            pa, pb = np.where(pa > 0, 1.0, -1.0), np.where(pb > 0, 1.0, -1.0)
        try:
            res, notes = _quiet_call(
                _permutation.swap_test,
                data.y_true,
                pa,
                pb,
                measure=measure,
                alternative=args.alternative or "two-sided",
                n_resamples=args.n_resamples or 100_000,
                key=key,
                progress=bar,
            )
        except ValueError as exc:
            raise BadInput(f"{args.file}: --test swap on {measure!r}: {exc}") from None
        _resamples_used(res, args, f"the swap test of {data.y_true.size} instances")
        rows.append(_row(test, f"{a} vs {b}", measure, res, alpha, notes))
        return rows, {test: res}
    raise BadInput(f"unknown test {test!r}")


def _check_compare_options(args, tests, data, task):
    """Every option is used by a selected test or refused (issue 13: none silently ignored)."""
    from jaxtests._tidy import PerInstance

    per_instance = isinstance(data, PerInstance)
    _given_twice(args.test, "--test")
    _given_twice(args.measures, "--measures")
    if args.pair and args.pair[0] == args.pair[1]:
        raise BadInput(f"--pair: the two algorithms must differ, got {args.pair[0]!r} twice.")

    def unused(option, why):
        raise BadInput(f"{option} is not used by --test {' '.join(tests)}: {why}.")

    if args.pair and not any(t in PAIRWISE for t in tests):
        unused("--pair", "those tests compare all algorithms at once")
    if (args.n_train is not None or args.n_test is not None) and "corrected-t" not in tests:
        unused("--n-train/--n-test", "only --test corrected-t uses them")
    if "corrected-t" in tests and (args.n_train is None or args.n_test is None):
        raise BadInput("--test corrected-t needs --n-train and --n-test.")
    if args.blocked and "anova" not in tests:
        unused("--blocked", "only --test anova uses it")
    if args.swap_measure is not None and "swap" not in tests:
        unused("--swap-measure", "only --test swap uses it")
    if args.measures and all(t == "swap" for t in tests):
        unused("--measures", "the swap test's measure is --swap-measure")
    random = [t for t in tests if t in RANDOM]
    if args.n_resamples is not None and not random:
        unused("--n-resamples", "only the permutation tests signflip and swap draw resamples")
    if args.seed is not None and not random:
        unused("--seed", "only the permutation tests signflip and swap draw random numbers")
    if args.alternative not in (None, "two-sided"):
        fixed = [t for t in tests if t in TWO_SIDED_ONLY]
        if fixed:
            raise BadInput(
                f"--alternative {args.alternative}: --test {fixed[0]} has no one-sided version."
            )
    multi = bool(args.measures and len(args.measures) > 1)
    if args.correction is not None and "posthoc" not in tests:
        if not (multi and any(t in UNIVARIATE for t in tests)):
            unused(
                "--correction",
                "it adjusts the p-values of posthoc, or of a test run on several --measures",
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
    if not per_instance:
        if "swap" in tests:
            raise BadInput(
                "--test swap needs a per-instance file (algorithm, fold, instance, y_true, score)."
            )
        return
    if per_instance and data.repetitions is not None and "swap" in tests:
        raise BadInput(
            "--test swap needs each instance once; the file has repetitions (swap on one "
            "repetition's rows)."
        )
    if "swap" in tests and task != "classification":
        raise BadInput("--test swap compares classifiers; y_true is not -1/+1 or 0/1 labels.")
    if "signflip" in tests:
        allowed = _losses_of(task, args)
        for m in args.measures or ():
            if m not in allowed:
                raise BadInput(
                    f"--test signflip on a per-instance file tests per-instance loss differences; "
                    f"{m!r} is not a per-instance loss. Choose from {list(allowed)} (or "
                    "--test swap --swap-measure for f1, precision, recall, accuracy, auc)."
                )


def _check_pooling(args, tests, table, per_instance):
    reps = table.repetitions
    if reps is None or len(set(reps)) == 1 or args.pool_repetitions:
        return
    pooled = [t for t in tests if t in POOLING]
    if "signflip" in pooled and per_instance:
        pooled.remove("signflip")  # per-instance differences are averaged over repetitions
    if pooled:
        R = len(set(reps))
        raise BadInput(
            f"--test {pooled[0]} would pool the {len(reps)} folds of {R} repetitions as if "
            "they were independent, but the repetitions reuse the same instances, so its "
            "p-value is far too small. Use --test corrected-t (or 5x2cv-t/5x2cv-f for 5x2 "
            "cv), or pass --pool-repetitions to pool anyway."
        )


def _cmd_compare(args):
    from jaxtests._report import Progress, dumps, markdown_table, text_table
    from jaxtests._tidy import PerInstance, read_tidy

    data = read_tidy(args.file)
    per_instance = isinstance(data, PerInstance)
    task = _task(data, args.file) if per_instance else None
    tests = list(args.test or [])
    if not tests:
        tests = ["t"] if len(data.algorithms) == 2 or args.pair else ["anova", "posthoc"]
    _check_compare_options(args, tests, data, task)
    table = _fold_measures(data, args, task) if per_instance else data
    if not table.values.shape[1] >= 2:
        raise BadInput(f"{args.file}: need at least 2 folds, got {table.values.shape[1]}.")
    _check_pooling(args, tests, table, per_instance)
    rows, results = [], {}
    with Progress("resamples", disable=args.quiet) as bar:
        for t in tests:
            try:
                r, res = _run_compare_test(t, table, data, args, args.seed, bar)
            except BadInput:
                raise
            except ValueError as exc:
                raise BadInput(f"{args.file}: --test {t}: {exc}") from None
            rows += r
            results.update(res)
    notes = [f"{r['test']}, {r['measure']}: {n}" for r in rows for n in r.get("notes", ())]
    adjusted = sorted({r["test"] for r in rows if "measures)" in r["test"]})
    columns = ["test", "comparison", "measure", "statistic", "df", "pvalue", "decision"]
    if args.json:
        for r in rows:
            if not (np.isfinite(r["statistic"]) and np.isfinite(r["pvalue"])):
                r["reason"] = "; ".join(r.get("notes", ())) or "the statistic is undefined"
        payload = {
            "file": str(args.file),
            "algorithms": list(table.algorithms),
            "folds": list(table.folds),
            "alpha": args.alpha,
            "rows": rows,
            "results": results,
        }
        print(dumps(payload))
        return 0
    render = markdown_table if args.markdown else text_table
    print(render(rows, columns))
    for t in adjusted:
        print(f"{t}: p-values adjusted across the measures; raw p-values with --json.")
    if "posthoc_text" in results:
        print()
        print(results["posthoc_text"])
    for n in dict.fromkeys(notes):
        print(f"jaxtests: note: {n}", file=sys.stderr)
    return 0


# -------------------------------------------------------------------- signflip


def _pair_differences(path, header, column, pair):
    """``A - B`` of ``column`` on rows paired by their fold/instance ids, from a tidy file."""
    from jaxtests._tidy import _records
    from jaxtests.datasets._text import parse_number

    ids = [c for c in ("repetition", "fold", "instance") if c in header]
    if not ids:
        raise BadInput(
            f"{path}: --pair needs columns that pair the rows of the two algorithms "
            f"('fold' and/or 'instance'); the columns are {header}."
        )
    extra = [h for h in header if h not in (*ids, "algorithm", column)]
    _, rows = _records(path)
    vals = {}
    for line, r in rows:
        a = str(r.get("algorithm", "")).strip()
        key = tuple(str(r.get(c, "")).strip() for c in ids)
        if (a, key) in vals:
            raise BadInput(f"{path}, line {line}: duplicate row for algorithm {a!r}, {key}.")
        vals[(a, key)] = (line, r.get(column))
    algs = list(dict.fromkeys(a for a, _ in vals))
    for a in pair:
        if a not in algs:
            raise BadInput(f"--pair: algorithm {a!r} is not in {path} ({algs}).")
    ka = [k for a, k in vals if a == pair[0]]
    kb = {k for a, k in vals if a == pair[1]}
    if set(ka) != kb:
        diff = sorted(set(ka) ^ kb)[:3]
        raise BadInput(
            f"{path}: {pair[0]!r} and {pair[1]!r} are not on the same {'/'.join(ids)} "
            f"(e.g. {diff}); paired differences need both on every row."
        )
    num = {}
    for a in pair:
        for k in ka:
            line, raw = vals[(a, k)]
            num[(a, k)] = parse_number(path, line, column, raw)
    d = np.array([num[(pair[0], k)] - num[(pair[1], k)] for k in ka])
    return d, ids, extra


def _cmd_signflip(args):
    from jaxtests import _permutation
    from jaxtests._report import Progress, dumps, result_summary
    from jaxtests.datasets import load_csv
    from jaxtests.datasets._text import read_csv_rows

    if args.exact and args.n_resamples is not None:
        raise BadInput("--n-resamples is not used with --exact (all 2^m patterns are enumerated).")
    path = args.file
    tidy = str(path).lower().endswith((".json", ".json.gz"))
    if tidy:
        from jaxtests._tidy import _records

        header, _ = _records(path)
    else:
        header, _ = read_csv_rows(path)
    if "algorithm" in header:
        column = (
            args.column
            or (
                [h for h in header if h not in ("algorithm", "repetition", "fold", "instance")]
                + [None]
            )[0]
        )
        if column is None or column not in header:
            raise BadInput(f"{path}: --column {column!r} not found; columns are {header}.")
        if not args.pair:
            raise BadInput(
                f"{path}: column {column!r} holds the values of each algorithm, not paired "
                "differences; give --pair A B to test A - B on each fold/instance (or a file "
                "with one column of differences)."
            )
        if args.pair[0] == args.pair[1]:
            raise BadInput(f"--pair: the two algorithms must differ, got {args.pair[0]!r} twice.")
        d, ids, _ = _pair_differences(path, header, column, args.pair)
        what = f"{args.pair[0]} - {args.pair[1]} on {column!r} per {'/'.join(ids)}"
    else:
        if args.pair:
            raise BadInput(f"--pair is not used: {path} has no 'algorithm' column.")
        if tidy:
            raise BadInput(f"{path}: a JSON file needs 'algorithm' records and --pair A B.")
        column = args.column or (header[0] if len(header) == 1 else None)
        if column is None:
            raise BadInput(f"{path}: several columns {header}; choose one with --column.")
        _, d = load_csv(path, label=column, features=[])
        what = f"column {column!r}"
    if d.size < 2:
        raise BadInput(f"{path}: {what} has {d.size} difference(s); the test needs at least 2.")
    # --exact enumerates all patterns: no n_resamples (the engine refuses one below 2^m).
    kw = {"method": "exact"} if args.exact else {"n_resamples": args.n_resamples or 1_000_000}
    with Progress("sign flips", disable=args.quiet) as bar:
        res, notes = _quiet_call(
            _permutation.signflip_test,
            d,
            statistic=args.statistic,
            alternative=args.alternative,
            key=args.seed,
            progress=bar,
            **kw,
        )
    if not args.exact:
        _resamples_used(res, args, f"the test of the {d.size} differences in {path}")
    if args.json:
        out = {"file": str(path), "column": column, "n": int(d.size), "result": res}
        if args.pair:
            out["pair"] = list(args.pair)
        if notes:
            out["notes"] = notes
        print(dumps(out))
        return 0
    print(f"{path}: {what}, m = {d.size} paired differences, mean {d.mean():.6g}")
    print(result_summary(res, statistic=f"statistic ({args.statistic})", resamples="sign patterns"))
    for n in notes:
        print(f"jaxtests: note: {n}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------- sanity


def _cmd_sanity(args):
    from jaxtests import models
    from jaxtests._report import Progress, dumps, result_summary
    from jaxtests._sanity import permutation_test_score
    from jaxtests.datasets import load_csv

    if args.features and args.label in args.features:
        raise BadInput(
            f"--features includes the label column {args.label!r}; the model would be given "
            "the answer. Leave it out."
        )
    _given_twice(args.features, "--features")
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
        print(dumps({"file": str(args.file), "model": args.model, "result": res}))
        return 0
    print(
        f"{args.file}: {X.shape[0]} instances, {X.shape[1]} features, model {args.model}, "
        f"{args.cv}-fold CV"
    )
    print(
        result_summary(
            res,
            statistic=f"score ({res.scoring})",
            resamples="label permutations",
            method=f"monte-carlo label permutations ({res.permute})",
        )
    )
    return 0


# ------------------------------------------------------------------- studies


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


def _cmd_power(args):
    from jaxtests import study
    from jaxtests._report import dumps

    def unused(option, why):
        raise BadInput(f"{option} is not used {why}.")

    if args.loss_study:
        for opt, val in (
            ("--generator", args.generator),
            ("--df", args.df),
            ("--sigma", args.sigma),
        ):
            if val is not None:
                unused(opt, "by --loss-study (Cauchy errors, MacKay)")
        if args.alternative is not None:
            unused("--alternative", "by --loss-study")
        if args.out:
            unused("--out", "by --loss-study (it has no plot)")
    else:
        if args.powers is not None:
            unused("--powers", "without --loss-study")
        if args.calibration and args.effect is not None:
            unused("--effect", "by --calibration (it simulates under H0, effect 0)")
    generator = args.generator or "normal"
    if args.df is not None and generator != "t":
        unused("--df", f"by --generator {generator} (only t has degrees of freedom)")
    if args.sigma is not None and generator != "lognormal":
        unused("--sigma", f"by --generator {generator} (only lognormal has sigma)")
    params = {k: getattr(args, k) for k in ("df", "sigma") if getattr(args, k) is not None}
    gen = study.generator(generator, **params) if params else generator
    alternative = args.alternative or "two-sided"
    effect = tuple(args.effect) if args.effect is not None else (0.0, 0.25, 0.5)
    if args.loss_study:
        res = study.loss_study(
            tests=tuple(args.tests or ("t",)),
            powers=tuple(args.powers or (2.0, 1.0, 0.5, 0.1)),
            n_experiments=args.n_experiments,
            m=args.m,
            effect=effect,
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
            alternative=alternative,
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
            effect=effect,
            alpha=args.alpha,
            alternative=alternative,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "power", study.plot_power
    if args.json:
        print(dumps({kind: res.to_dict()}))
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
    if args.quick and args.repeats is not None:
        raise BadInput("--repeats is not used with --quick (2 repetitions); drop one of them.")
    repeats = 2 if args.quick else (args.repeats or 10)
    cv = _cv.cross_validate(
        _agreement_models(task, args.quick), X, y, cv=args.folds, repeats=repeats, key=args.seed
    )
    res = study.agreement(cv, args.tests, alpha=args.alpha, names=(args.dataset,))
    if args.json:
        from jaxtests._report import dumps

        print(dumps({"agreement": res.to_dict()}))
    else:
        print(res.table())
    if args.out:
        _matplotlib_agg()
        path = _save_plot(study.plot_agreement(res), args.out, f"agreement_{args.tests}.png")
        print(f"plot: {path}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------------ main


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors in one line (exit 2), like every other bad input."""

    def error(self, message):
        msg = " ".join(message.split())
        self.exit(2, f"jaxtests: error: {msg} (see '{self.prog} --help')\n")


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


def _parser():
    p = _Parser(
        prog="jaxtests",
        description="Statistical tests for comparing learning algorithms (JAX).",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser("demo", help="the seeds' case studies on an embedded real dataset")
    d.add_argument(
        "--dataset", default="breast_cancer", help="embedded dataset (breast_cancer, pima)"
    )
    d.add_argument("--seed", type=SEED, default=0, help="seed of folds and resamples")
    d.add_argument(
        "--n-resamples",
        type=POSITIVE_INT,
        default=None,
        help="sign-flip draws per test (default 10^6, 10^4 with --quick)",
    )
    d.add_argument(
        "--quick",
        action="store_true",
        help="a few seconds: 3 learners (linear and Gaussian SVM, LDA), 5 folds, 10^4 sign "
        "flips; skips the label-permutation sanity check and all but 2 figures",
    )
    d.add_argument(
        "--out",
        default="jaxtests-demo",
        help="output folder for JSON and PNGs (existing files are replaced, never through links)",
    )
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.set_defaults(func=_cmd_demo)

    c = sub.add_parser("compare", help="test per-fold or per-instance results from a file")
    c.add_argument(
        "file",
        help="tidy CSV or JSON: algorithm,fold,<measures...> or "
        "algorithm,fold,instance,y_true,score (optionally a repetition column)",
    )
    c.add_argument(
        "--test",
        action="append",
        choices=TESTS,
        help="test(s) to run (repeatable); default t for two algorithms, "
        "anova and posthoc for more",
    )
    c.add_argument("--pair", nargs=2, metavar=("A", "B"), help="the two algorithms to compare")
    c.add_argument(
        "--measures",
        nargs="+",
        help="measure column(s) to test; a univariate test runs on each, its p-values "
        "adjusted with --correction",
    )
    c.add_argument("--alpha", type=ALPHA, default=0.05, help="level in (0, 1)")
    c.add_argument(
        "--alternative",
        default=None,
        choices=("two-sided", "less", "greater"),
        help="default two-sided",
    )
    c.add_argument(
        "--correction",
        default=None,
        choices=("holm", "bonferroni", "hochberg", "hommel", "bh", "by"),
        help="multiple-comparison correction of posthoc and of several --measures (default holm)",
    )
    c.add_argument(
        "--n-resamples",
        type=POSITIVE_INT,
        default=None,
        help="Monte Carlo draws of signflip/swap (default 10^5); refused if the p-value is exact",
    )
    c.add_argument("--seed", type=SEED, default=None, help="seed for permutation tests")
    c.add_argument("--n-train", type=POSITIVE_INT, help="training-set size (corrected-t)")
    c.add_argument("--n-test", type=POSITIVE_INT, help="test-set size (corrected-t)")
    c.add_argument("--blocked", action="store_true", help="ANOVA with folds as blocks")
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
    c.add_argument("--quiet", action="store_true", help="no progress bar")
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
    s.add_argument("--cv", type=POSITIVE_INT, default=5)
    s.add_argument("--n-permutations", type=POSITIVE_INT, default=1000)
    s.add_argument("--scoring", default="accuracy")
    s.add_argument("--seed", type=SEED, default=None)
    s.add_argument("--json", action="store_true")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=_cmd_sanity)

    f = sub.add_parser("signflip", help="sign-flip permutation test on paired differences")
    f.add_argument(
        "file",
        help="CSV (or .csv.gz) with a column of paired differences, or a tidy file with "
        "an algorithm column and --pair A B",
    )
    f.add_argument("--column", help="the column (default: the only one)")
    f.add_argument(
        "--pair", nargs=2, metavar=("A", "B"), help="test A - B of --column in a tidy file"
    )
    f.add_argument("--statistic", default="mean", choices=("mean", "t"))
    f.add_argument("--alternative", default="two-sided", choices=("two-sided", "less", "greater"))
    f.add_argument(
        "--n-resamples",
        type=POSITIVE_INT,
        default=None,
        help="Monte Carlo draws (default 10^6); refused if the p-value is exact",
    )
    f.add_argument("--exact", action="store_true", help="enumerate all 2^m sign patterns")
    f.add_argument("--seed", type=SEED, default=None)
    f.add_argument("--json", action="store_true")
    f.add_argument("--quiet", action="store_true")
    f.set_defaults(func=_cmd_signflip)

    w = sub.add_parser("power", help="power, calibration or MacKay's loss study by simulation")
    w.add_argument(
        "--tests", nargs="+", help="t signflip_mean signflip_t wilcoxon sign hotelling t_bonferroni"
    )
    w.add_argument(
        "--generator",
        default=None,
        choices=("normal", "t", "cauchy", "lognormal", "bernoulli", "mvnormal"),
        help="default normal",
    )
    w.add_argument("--df", type=DF, help="degrees of freedom (generator t), > 2")
    w.add_argument("--sigma", type=POSITIVE, help="log-scale sigma (generator lognormal)")
    w.add_argument("--n-experiments", type=POSITIVE_INT, default=10_000)
    w.add_argument("--m", type=POSITIVE_INT, default=30, help="paired differences per experiment")
    w.add_argument("--effect", type=float, nargs="+", default=None, help="default 0 0.25 0.5")
    w.add_argument("--alpha", type=ALPHA, default=0.05)
    w.add_argument(
        "--alternative",
        default=None,
        choices=("two-sided", "less", "greater"),
        help="default two-sided",
    )
    w.add_argument("--n-resamples", type=POSITIVE_INT, default=10_000)
    w.add_argument("--seed", type=SEED, default=None)
    mode = w.add_mutually_exclusive_group()
    mode.add_argument("--calibration", action="store_true", help="type-I error under H0")
    mode.add_argument(
        "--loss-study",
        action="store_true",
        help="MacKay's |error|^p study under Cauchy errors ('More sensitive tests in DELVE')",
    )
    w.add_argument(
        "--powers", type=float, nargs="+", default=None, help="--loss-study: default 2 1 0.5 0.1"
    )
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
    g.add_argument("--folds", type=POSITIVE_INT, default=10)
    g.add_argument("--repeats", type=POSITIVE_INT, default=None, help="default 10")
    g.add_argument("--alpha", type=ALPHA, default=0.05)
    g.add_argument("--seed", type=SEED, default=0)
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
    import warnings

    args = _parser().parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        # Library warnings as one line each, without Python's source path and line.
        warnings.simplefilter("default")
        try:
            status = args.func(args)
        except KeyboardInterrupt:
            print("jaxtests: interrupted", file=sys.stderr)
            return 130
        except (ValueError, TypeError, OSError, KeyError) as exc:
            msg = " ".join(str(exc).split()) or type(exc).__name__
            if isinstance(exc, OSError) and exc.filename:
                msg = f"{exc.filename}: {exc.strerror}"
            print(f"jaxtests: error: {msg}", file=sys.stderr)
            return 2
        finally:
            shown = [w for w in caught if not issubclass(w.category, DeprecationWarning)]
            for m in dict.fromkeys(" ".join(str(w.message).split()) for w in shown):
                print(f"jaxtests: warning: {m}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
