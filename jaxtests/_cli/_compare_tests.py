"""The tests of ``compare``: one table, test name -> how it runs and which options it takes."""

import argparse
import dataclasses
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from jaxtests import (
    adjust_pvalues,
    anova,
    bootstrap_test,
    cochran_q,
    delong_test,
    ftest_5x2cv,
    hotelling_t2,
    manova,
    mcnemar,
    posthoc,
    signflip_test,
    swap_test,
    ttest_5x2cv,
    ttest_corrected,
    ttest_paired,
    wild_cluster_bootstrap,
)
from jaxtests._anova import AnovaResult
from jaxtests._bootstrap import DIFFERENCE_MEASURES, BootstrapTestResult
from jaxtests._cli import _compare_clusters
from jaxtests._cli._common import (
    BadInput,
    _bayes_row,
    _quiet_call,
    _resamples_used,
    _row,
    all_names,
    bad_input,
)
from jaxtests._cli._compare_data import (
    _check_5x2,
    _check_defined,
    _measure_names,
    _pair,
    _signflip_data,
)
from jaxtests._direction import higher_is_better as direction_of
from jaxtests._report import Numbers, estimate_text
from jaxtests._tidy import ItemTable
from jaxtests._ttests import TtestResult

# --test bootstrap's measures of the pooled instances, beside the per-instance losses: the
# library's "<measure>_difference" statistics
BOOTSTRAP_MEASURES = DIFFERENCE_MEASURES


class Inputs(NamedTuple):
    """What every test of ``compare`` reads."""

    table: object  # PerFold: per-fold measures (from instances for a per-instance file)
    data: object  # the file as read: PerFold or PerInstance
    args: argparse.Namespace
    bar: object  # progress bar of the permutation tests


@dataclasses.dataclass(frozen=True)
class Test:
    """How ``compare`` runs one ``--test``, and which options and files it takes.

    ``per_measure(inputs, measure, a, b) -> (result, label)`` runs on each ``--measures``
    (p-values adjusted with ``--correction`` across several); otherwise
    ``run(inputs) -> (rows, results)`` runs once.
    """

    pairwise: bool  # compares two algorithms (--pair)
    per_measure: Callable | None = None
    run: Callable | None = None
    random: bool = False  # draws resamples (--n-resamples, --seed)
    two_sided_only: bool = False  # no --alternative less/greater
    pooling: bool = False  # takes the folds as independent (refused over repetitions)


def _alternative(args):
    return args.alternative or "two-sided"


def _pair_values(inp, m, a, b):
    x = inp.table.measure(m)
    return x[inp.table.algorithms.index(a)], x[inp.table.algorithms.index(b)]


def _pair_values_5x2(inp, m, a, b, test):
    order = _check_5x2(inp.table, test)
    xa, xb = _pair_values(inp, m, a, b)
    return xa[order].reshape(5, 2), xb[order].reshape(5, 2)


# ------------------------------------------------------------ one test per measure


def _t(inp, m, a, b):
    args = inp.args
    cluster = _compare_clusters.labels(inp.data)
    if cluster is None and not isinstance(inp.data, ItemTable):
        xa, xb = _pair_values(inp, m, a, b)
        return ttest_paired(xa, xb, alternative=_alternative(args)), "t"
    # per-item means, or clustered instances: the t of their differences
    d, unit = _signflip_data(inp.table, inp.data, args, a, b, m)
    se = args.cluster_se or "CR1"
    res = ttest_paired(
        d, np.zeros_like(d), alternative=_alternative(args), cluster=cluster, cluster_se=se
    )
    return res, f"t ({unit}, clustered {se})" if cluster is not None else f"t ({unit})"


def _wild(inp, m, a, b):
    """The wild cluster bootstrap of the mean per-instance (or per-item) difference."""
    args = inp.args
    d, unit = _signflip_data(inp.table, inp.data, args, a, b, m)
    res = wild_cluster_bootstrap(
        d,
        np.zeros_like(d),
        cluster=_compare_clusters.labels(inp.data),
        alternative=_alternative(args),
        n_resamples=args.n_resamples or 9999,
        key=args.seed,
    )
    return res, f"wild cluster bootstrap ({unit}, {res.method})"


def _t_5x2cv(inp, m, a, b):
    xa, xb = _pair_values_5x2(inp, m, a, b, "5x2cv-t")
    return ttest_5x2cv(xa, xb, alternative=_alternative(inp.args)), "5x2cv-t"


def _f_5x2cv(inp, m, a, b):
    xa, xb = _pair_values_5x2(inp, m, a, b, "5x2cv-f")
    return ftest_5x2cv(xa, xb), "5x2cv-f"


def _corrected_t(inp, m, a, b):
    xa, xb = _pair_values(inp, m, a, b)
    args = inp.args
    res = ttest_corrected(
        xa, xb, n_train=args.n_train, n_test=args.n_test, alternative=_alternative(args)
    )
    return res, "corrected-t"


def _anova(inp, m, a, b):
    # Every algorithm ran on the same folds: folds are blocks (a randomized complete block
    # design, Yildiz & Alpaydin 2011), as the paired rows beside it; --one-way pools them.
    one_way = getattr(inp.args, "one_way", False)
    res = anova(inp.table.measure(m), blocked=not one_way)
    return res, "anova (one-way)" if one_way else "anova (folds as blocks)"


def _signflip(inp, m, a, b):
    args = inp.args
    d, unit = _signflip_data(inp.table, inp.data, args, a, b, m)
    res = signflip_test(
        d,
        alternative=_alternative(args),
        n_resamples=args.n_resamples or 100_000,
        key=args.seed,
        progress=inp.bar,
        cluster=_compare_clusters.labels(inp.data),
    )
    what = f"the sign-flip test of the {d.size} {unit.replace(' ', '-')} differences"
    note = _resamples_used(res, args, what)
    if note:  # a note on the row (this runs inside _quiet_call, which collects warnings)
        warnings.warn(note, stacklevel=1)
    if res.n_clusters is not None:
        unit += ", clustered"
    return res, f"signflip ({unit}, {res.method})"


def _bootstrap(inp, m, a, b):
    """The paired bootstrap test (shifted null) of the mean per-instance loss difference,
    or of the difference of a measure of the pooled instances (``roc_auc``, ``accuracy``...:
    the library's ``"<measure>_difference"`` statistics)."""
    args = inp.args
    if m in BOOTSTRAP_MEASURES:
        data = inp.data
        if m == "roc_auc" and len(data.folds) > 1:
            raise BadInput(
                f"--test bootstrap --measures roc_auc ranks the scores of one model; the file "
                f"has {len(data.folds)} folds, each scored by its own model (an AUC over "
                "pooled folds mixes their scales). Test one fold's rows, or use --test swap "
                "--swap-measure auc (the mean per-fold AUC)."
            )
        ia, ib = data.algorithms.index(a), data.algorithms.index(b)
        y = np.where(data.y_true > 0, 1, -1)
        sa, sb = data.scores[ia], data.scores[ib]
        if m != "roc_auc":  # measures of the predictions: score > 0 is the positive class
            sa, sb = np.where(sa > 0, 1, -1), np.where(sb > 0, 1, -1)
        samples, statistic, label = (y, sa, sb), f"{m}_difference", f"bootstrap ({m}, BCa)"
    else:
        d, unit = _signflip_data(inp.table, inp.data, args, a, b, m)
        samples, statistic = (d, np.zeros_like(d)), "mean_difference"
        label = f"bootstrap ({unit}, BCa)"
    cluster = _compare_clusters.labels(inp.data)
    res = bootstrap_test(
        samples,
        statistic,
        alternative=_alternative(args),
        n_resamples=args.n_resamples or 9999,
        confidence_level=1 - args.alpha,
        key=args.seed,
        cluster=cluster,
    )
    if cluster is not None:
        label = label.replace(", BCa)", ", clustered, BCa)")
    return res, label


def _per_unit_difference(mean, interval, confidence_level, unit):
    """The fields of a mean per-instance loss (or per-item score) difference A - B."""
    what = "loss" if unit == "instance" else "score"
    return {
        "difference": estimate_text(mean, interval),
        "difference_of": f"mean per-{unit} {what} difference A - B",
        "confidence_level": confidence_level,
        "mean_difference": float(mean),
        "mean_difference_interval": [float(interval.low), float(interval.high)],
    }


def _effect_fields(res, confidence_level, measure=None, unit="instance"):
    """Effect sizes of a row: text cells ``difference`` and ``effect`` for the table
    (those the test has), and the numbers for ``--json``.

    Paired t tests: the mean difference ``a - b`` and Cohen's ``d_z``, each with its
    ``confidence_level`` interval (``1 - alpha``, so that a two-sided interval
    excludes 0 exactly when the unadjusted test rejects). ANOVA: eta² and, blocked,
    partial eta² (one-way they are equal).
    """
    if isinstance(res, TtestResult) and (res.n_clusters is not None or unit == "item"):
        # the t of per-instance (clustered) or per-item differences; d_z has no
        # interval for clustered differences
        diff = res.confidence_interval(confidence_level)
        return _per_unit_difference(res.mean_difference, diff, confidence_level, unit)
    if isinstance(res, TtestResult):
        diff = res.confidence_interval(confidence_level)
        dz = res.effect_size_interval(confidence_level)
        return {
            "difference": estimate_text(res.mean_difference, diff),
            "difference_of": "mean of A - B over the folds",
            "effect": estimate_text(res.effect_size, dz, label="d_z "),
            "confidence_level": confidence_level,
            "mean_difference": float(res.mean_difference),
            "mean_difference_interval": [float(diff.low), float(diff.high)],
            "effect_size": float(res.effect_size),
            "effect_size_interval": [float(dz.low), float(dz.high)],
        }
    if isinstance(res, BootstrapTestResult):
        ci = res.confidence_interval
        if measure not in BOOTSTRAP_MEASURES:  # a per-instance loss, or per-item score
            fields = _per_unit_difference(res.statistic, ci, confidence_level, unit)
            return {**fields, "seed": res.seed}
        word = "AUC" if measure == "roc_auc" else measure
        return {
            "difference": estimate_text(res.statistic, ci),
            "difference_of": f"{word} of A - {word} of B",
            "confidence_level": confidence_level,
            f"{measure}_difference": float(res.statistic),
            f"{measure}_difference_interval": [float(ci.low), float(ci.high)],
            "seed": res.seed,
        }
    if isinstance(res, AnovaResult):
        eta = estimate_text(res.eta_squared, label="eta² ")
        if res.blocked:
            eta = Numbers("eta² {}, partial eta² {}", (res.eta_squared, res.partial_eta_squared))
        return {
            "effect": eta,
            "eta_squared": float(res.eta_squared),
            "partial_eta_squared": float(res.partial_eta_squared),
        }
    return {}


def _per_measure(test, spec, inp):
    """``test`` on each measure; several measures get p-values adjusted with --correction."""
    table, args = inp.table, inp.args
    alpha = args.alpha
    a, b = _pair(table, args) if spec.pairwise else (None, None)
    comparison = f"{a} vs {b}" if spec.pairwise else all_names(table.algorithms)
    ms = _measure_names(table, args, multi=False) if args.measures else None
    if ms is None:  # the first measure (per-instance files: the first per-instance loss)
        ms = [table.measures[0]]
        _check_defined(table, ms, args)
    rows, results = [], {}
    for m in ms:
        with bad_input(f"{args.file}: --test {test} on {m!r}"):
            res, notes = _quiet_call(spec.per_measure, inp, m, a, b)
        res, label = res
        effect = _effect_fields(res, 1 - alpha, m, _compare_clusters.unit(inp.data))
        rows.append(_row(label, comparison, m, res, alpha, notes) | effect)
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


# ------------------------------------------------------------- one test of all measures


def _hotelling(inp):
    table, args = inp.table, inp.args
    a, b = _pair(table, args)
    ms = _measure_names(table, args, multi=True)
    sel = [table.measures.index(m) for m in ms]
    ia, ib = table.algorithms.index(a), table.algorithms.index(b)
    res, notes = _quiet_call(
        hotelling_t2, table.values[ia][:, sel], table.values[ib][:, sel], names=ms
    )
    row = _row("hotelling", f"{a} vs {b}", ", ".join(ms), res, args.alpha, notes)
    return [row], {"hotelling": res}


def _manova(inp):
    table, args = inp.table, inp.args
    ms = _measure_names(table, args, multi=True)
    sel = [table.measures.index(m) for m in ms]
    res, notes = _quiet_call(manova, table.values[:, :, sel], names=ms)
    comparison = all_names(table.algorithms)
    return [_row("manova", comparison, ", ".join(ms), res, args.alpha, notes)], {"manova": res}


def _posthoc(inp):
    table, args = inp.table, inp.args
    alpha = args.alpha
    ms = _measure_names(table, args, multi=bool(args.measures and len(args.measures) > 1))
    sel = [table.measures.index(m) for m in ms]
    x = table.values[:, :, sel[0]] if len(ms) == 1 else table.values[:, :, sel]
    corr = args.correction or "holm"
    # the ordering's direction: the flag, else the measure's (error: lower, accuracy: higher)
    way = direction_of(ms[0], False) if len(ms) == 1 else False
    if getattr(args, "lower_is_better", False) or getattr(args, "higher_is_better", False):
        way = bool(args.higher_is_better)
    res, notes = _quiet_call(
        posthoc,
        x,
        test="t" if len(ms) == 1 else "hotelling",
        correction=corr,
        alpha=alpha,
        names=table.algorithms,
        higher_is_better=way,
    )
    adj = np.asarray(res.pvalue_adjusted)
    raw = np.asarray(res.pvalue)
    stat = np.asarray(res.statistic)
    L = len(table.algorithms)
    rows = []
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
    # the pairs are the table's rows: after it, only the cliques and the ordering
    return rows, {"posthoc": res, "posthoc_text": res.text(pairs=False)}


def _swap(inp):
    data, args = inp.data, inp.args
    a, b = _pair(inp.table, args)
    ia, ib = data.algorithms.index(a), data.algorithms.index(b)
    pa, pb = data.scores[ia], data.scores[ib]
    measure = {"roc_auc": "auc"}.get(args.swap_measure, args.swap_measure or "f1")
    label, folds = measure, None
    if measure != "auc":
        pa, pb = np.where(pa > 0, 1.0, -1.0), np.where(pb > 0, 1.0, -1.0)
    elif len(data.folds) > 1:
        # Each fold's scores come from its own models: the AUC of each fold, averaged
        # (an AUC over pooled folds mixes their scales and rejects too often under H0).
        label, folds = "auc (mean per fold)", data.fold_of
    with bad_input(f"{args.file}: --test swap on {measure!r}"):
        res, notes = _quiet_call(
            swap_test,
            data.y_true,
            pa,
            pb,
            measure=measure,
            alternative=_alternative(args),
            n_resamples=args.n_resamples or 100_000,
            key=args.seed,
            progress=inp.bar,
            folds=folds,
        )
    note = _resamples_used(res, args, f"the swap test of {data.y_true.size} instances")
    notes = [*notes, note] if note else notes
    return [_row("swap", f"{a} vs {b}", label, res, args.alpha, notes)], {"swap": res}


def _mcnemar(inp):
    """McNemar's test on the per-instance predictions (score > 0: the positive class)."""
    data, args = inp.data, inp.args
    a, b = _pair(inp.table, args)
    ia, ib = data.algorithms.index(a), data.algorithms.index(b)
    pa, pb = (np.where(data.scores[i] > 0, 1, -1) for i in (ia, ib))
    y = np.where(data.y_true > 0, 1, -1)
    cluster = _compare_clusters.labels(data)
    res, notes = _quiet_call(mcnemar, y, pa, pb, cluster=cluster)
    what = f"0/1 error ({int(res.n01)} right by {a} only, {int(res.n10)} by {b} only)"
    label = "mcnemar (exact)" if cluster is None else "mcnemar (clustered, chi2)"
    return [_row(label, f"{a} vs {b}", what, res, args.alpha, notes)], {"mcnemar": res}


def _one_set(inp, test):
    """The per-instance file's targets and scores, each instance once, in one fold."""
    data = inp.data
    if len(data.folds) > 1 and test == "delong":
        raise BadInput(
            f"--test delong ranks the scores of one model; the file has {len(data.folds)} folds, "
            "each scored by its own model (an AUC over pooled folds mixes their scales). Test "
            "one fold's rows, or use --test swap --swap-measure auc (the mean per-fold AUC)."
        )
    return data


def _delong(inp):
    args = inp.args
    data = _one_set(inp, "delong")
    a, b = _pair(inp.table, args)
    ia, ib = data.algorithms.index(a), data.algorithms.index(b)
    level = 1 - args.alpha
    res = delong_test(
        data.y_true,
        data.scores[ia],
        data.scores[ib],
        alternative=_alternative(args),
        confidence_level=level,
    )
    ci = res.confidence_interval
    row = _row("delong", f"{a} vs {b}", "auc", res, args.alpha) | {
        "difference": estimate_text(res.difference, ci),
        "difference_of": "AUC of A - AUC of B",
        "confidence_level": level,
        "auc_a": float(res.auc_a),
        "auc_b": float(res.auc_b),
        "auc_difference_interval": [float(ci.low), float(ci.high)],
    }
    return [row], {"delong": res}


def _cochran(inp):
    args = inp.args
    data = inp.data
    corr = args.correction or "holm"
    preds = [np.where(s > 0, 1, -1) for s in data.scores]
    y = np.where(data.y_true > 0, 1, -1)
    res = cochran_q(y, *preds, correction=corr, names=list(data.algorithms))
    rows = [_row("cochran q (chi2)", all_names(data.algorithms), "accuracy", res, args.alpha)]
    L = len(data.algorithms)
    for i in range(L):
        for j in range(i + 1, L):
            p = float(res.pairwise_pvalue_adjusted[i, j])
            rows.append(
                {
                    "test": f"mcnemar ({corr})",
                    "comparison": f"{data.algorithms[i]} vs {data.algorithms[j]}",
                    "measure": "accuracy",
                    "statistic": None,
                    "df": None,
                    "pvalue": p,
                    "raw_pvalue": float(res.pairwise_pvalue[i, j]),
                    "decision": "reject" if p <= args.alpha else "accept",
                }
            )
    return rows, {"cochran": res}


def _bayes_t(inp):
    """Corani & Benavoli's correlated Bayesian t on each measure: three probabilities."""
    from jaxtests.bayesian import correlated_ttest

    table, args = inp.table, inp.args
    a, b = _pair(table, args)
    ms = _measure_names(table, args, multi=False) if args.measures else [table.measures[0]]
    _check_defined(table, ms, args)
    rho = args.n_test / (args.n_train + args.n_test)  # Nadeau & Bengio's correlation
    rows, results, texts = [], {}, []
    for m in ms:
        xa, xb = _pair_values(inp, m, a, b)
        res, notes = _quiet_call(correlated_ttest, xa, xb, rope=args.rope, rho=rho)
        # Whether lower or higher is better depends on the measure: the words say which.
        # baycomp's orientation: left is the first learner higher.
        regions = (f"{a} higher", "equivalent", f"{a} lower")
        row = _bayes_row("bayes-t", f"{a} vs {b}", m, res, regions, float(res.df), notes)
        probs = {k: row[k] for k in ("p_left", "p_rope", "p_right")}
        rows.append(row)
        results[m] = res
        texts.append(
            f"bayes-t on {m}, rope {args.rope:g}, rho {rho:.4g}: "
            f"P({a} - {b} > {args.rope:g}) = {probs['p_left']:.4f}, "
            f"P(|{a} - {b}| <= {args.rope:g}) = {probs['p_rope']:.4f}, "
            f"P({a} - {b} < -{args.rope:g}) = {probs['p_right']:.4f}"
        )
    result = results[ms[0]] if len(ms) == 1 else results
    return rows, {"bayes-t": result, "bayes_text": "\n".join(texts)}


# In the order of --test's choices.
TESTS = {
    "t": Test(pairwise=True, per_measure=_t, pooling=True),
    "5x2cv-t": Test(pairwise=True, per_measure=_t_5x2cv),
    "5x2cv-f": Test(pairwise=True, per_measure=_f_5x2cv, two_sided_only=True),
    "corrected-t": Test(pairwise=True, per_measure=_corrected_t),
    "hotelling": Test(pairwise=True, run=_hotelling, two_sided_only=True, pooling=True),
    "anova": Test(pairwise=False, per_measure=_anova, two_sided_only=True, pooling=True),
    "manova": Test(pairwise=False, run=_manova, two_sided_only=True, pooling=True),
    "posthoc": Test(pairwise=False, run=_posthoc, two_sided_only=True, pooling=True),
    "signflip": Test(pairwise=True, per_measure=_signflip, random=True, pooling=True),
    "swap": Test(pairwise=True, run=_swap, random=True),
    "mcnemar": Test(pairwise=True, run=_mcnemar, two_sided_only=True),
    "bootstrap": Test(pairwise=True, per_measure=_bootstrap, random=True),
    "delong": Test(pairwise=True, run=_delong),
    "cochran": Test(pairwise=False, run=_cochran, two_sided_only=True),
    "bayes-t": Test(pairwise=True, run=_bayes_t, two_sided_only=True),
    "wild": Test(pairwise=True, per_measure=_wild, random=True),
}


def run_test(test, inp):
    """Rows of the result table and results (by test name) of ``--test test``."""
    spec = TESTS[test]
    if spec.per_measure is not None:
        return _per_measure(test, spec, inp)
    return spec.run(inp)
