"""``jaxtests demo``: the seeds' case studies in miniature on an embedded dataset.

1. Kernel machines (linear, quadratic, cubic, Gaussian; normalised kernels as
   in Yildiz & Alpaydin, "Statistical Tests using Hinge/epsilon-Sensitive Loss")
   and other learners under 10-fold cross-validation, all on the same folds.
2. Yildiz & Alpaydin (hinge loss): paired t on 0/1 error beside paired t on hinge
   loss, all pairs of kernel machines.
3. Yildiz & Alpaydin, "Multivariate Comparison of Classification Algorithms":
   paired t on error beside Hotelling's T² on (tpr, fpr).
4. The same: ANOVA on error and MANOVA on (tpr, fpr), post hoc cliques and the
   ordering display, the learned measure M1.
5. Hein, "Performance Measures and Statistical Tests II": sign-flip permutation
   tests (10^6 draws) on per-instance hinge loss differences, exact test on
   per-fold differences.
6. Hein: the label-permutation sanity check of cross-validation.

Prints a report on stdout, what it is doing on stderr, writes ``demo.json`` (every
number) and PNG plots to ``--out`` and lists them. ``--quick`` runs sections 1-5 on 3
learners (linear and Gaussian SVMs, LDA), 5 folds and 10^4 sign flips, skips the
sanity check, and draws the per-fold differences and the ordering plot only.
"""

import itertools
import json
import os
import re
import sys
import time

import numpy as np

from jaxtests._report import Progress, jsonable, prepare_out, replace_file, text_table

# Every file the demo writes to --out (checked for links, and announced if replaced, first).
OUTPUTS = (
    "demo.json",
    "folds_error_hinge.png",
    "tpr_fpr_scatter.png",
    "signflip_null.png",
    "ordering_error.png",
    "learned_measure_m1.png",
    "sanity_null.png",
)
# The figures --quick draws (the others need the full set of learners or resamples).
QUICK_PLOTS = ("folds_error_hinge.png", "ordering_error.png")

# Short citations of the source documents (seeds) for headings and plot titles.
HINGE = "Yildiz & Alpaydin, hinge loss"
MULTI = "Yildiz & Alpaydin 2011"
HEIN = "Hein, Performance Measures and Statistical Tests II"

KERNELS = {
    "svm-linear": {"kernel": "linear"},
    "svm-quadratic": {"kernel": "poly", "degree": 2},
    "svm-cubic": {"kernel": "poly", "degree": 3},
    "svm-gaussian": {"kernel": "rbf"},
}


QUICK_KERNELS = ("svm-linear", "svm-gaussian")


def _learners(quick):
    from jaxtests import models
    from jaxtests._models import NORMALIZED_KERNELS

    kernels = {k: KERNELS[k] for k in QUICK_KERNELS} if quick else KERNELS
    out = {name: models.svc(C=1.0, **{**NORMALIZED_KERNELS, **kw}) for name, kw in kernels.items()}
    out["lda"] = models.lda(reg=1e-3)
    if not quick:
        out["logistic"] = models.logistic()
        out["knn"] = models.knn(k=5)
        out["qda"] = models.qda(reg_param=0.05)
        out["centroid"] = models.nearest_centroid()
    return out


def _p(res):
    return float(np.asarray(res.pvalue))


def _posthoc_summary(ph, names, alpha, what):
    """The pairs that differ, then the cliques and the ordering: not one line of p_adj
    per pair (36 for nine learners; every p_adj is in demo.json)."""
    padj, rej = np.asarray(ph.pvalue_adjusted), np.asarray(ph.reject)
    pairs = list(itertools.combinations(range(len(names)), 2))
    differ = [f"{names[i]} vs {names[j]} (p_adj = {padj[i, j]:.3g})" for i, j in pairs if rej[i, j]]
    head = (
        f"   {what}: {len(differ)} of {len(pairs)} pairs differ at alpha = {alpha}"
        + (": " + ", ".join(differ) if differ else "")
        + " (every p_adj in demo.json)"
    )
    pair_line = re.compile(r"^  .+ vs .+: p_adj = ")
    kept = [line for line in ph.text().split("\n")[1:] if not pair_line.match(line)]
    return "\n   ".join([head, *kept])


def _agreement(table, first, second):
    """A 2x2 table of decisions (rows: ``first`` accepts/rejects; columns: ``second``),
    indented under its section."""
    rows = [
        [f"{first} {word}", int(table[i, 0]), int(table[i, 1])]
        for i, word in enumerate(("accepts", "rejects"))
    ]
    text = text_table(rows, ["pairs", f"{second} accepts", f"{second} rejects"])
    return "\n".join("   " + line.rstrip() for line in text.splitlines())


def _clause(exc):
    """An error's first sentence as a clause inside a line: up to its first colon (the rest
    is advice), first letter lower case (not of an acronym or a code name)."""
    head = str(exc).split(":")[0].strip()
    if len(head) > 1 and head[0].isupper() and not head[1].isupper():
        head = head[0].lower() + head[1:]
    return head


def _decision(p, alpha):
    return "reject" if p <= alpha else "accept"


def _step(msg, quiet=False):
    """One line on stderr saying what the demo does next (the report goes to stdout)."""
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def run_demo(args):
    """Run the demo; returns the exit status."""
    _step("jaxtests demo: loading JAX and the dataset...", args.quiet)
    from jaxtests import _cache

    _cache.ensure()  # before the first compilation: the demo's own programs are cached too
    from jaxtests import (
        anova,
        cross_validate,
        datasets,
        manova,
        permutation_test_score,
        posthoc,
        signflip_test,
        ttest_paired,
    )

    t0 = time.perf_counter()
    alpha = 0.05
    loaders = {"breast_cancer": datasets.load_breast_cancer, "pima": datasets.load_pima}
    if args.dataset not in loaders:
        raise ValueError(f"--dataset must be one of {sorted(loaders)}; got {args.dataset!r}.")
    n_resamples = args.n_resamples
    if n_resamples is None:  # --quick lowers the default only, never a given value
        n_resamples = 10_000 if args.quick else 1_000_000
    if n_resamples < 1:
        raise ValueError(f"--n-resamples must be at least 1, got {n_resamples}.")
    prepare_out(args.out, OUTPUTS)
    # Raw features: every learner standardises them on each training fold itself (a
    # scaler fitted on all rows before cross-validation would leak the test folds).
    X, y = loaders[args.dataset]()
    report = {
        "dataset": args.dataset,
        "n": int(X.shape[0]),
        "d": int(X.shape[1]),
        "seed": args.seed,
        "alpha": alpha,
        "n_resamples": n_resamples,
    }
    say = print
    say(
        f"jaxtests demo: {args.dataset} ({X.shape[0]} instances, {X.shape[1]} features, "
        f"{int((y > 0).sum())} positive), seed {args.seed}"
    )

    # 1. Paired k-fold cross-validation.
    learners = _learners(args.quick)
    k = 5 if args.quick else 10
    report["folds"] = k
    _step(f"cross-validating {len(learners)} learners on {args.dataset} ({k} folds)...", args.quiet)
    with Progress(
        "cross-validation (compiling and fitting)", disable=args.quiet, elapsed_only=True
    ):
        cv = cross_validate(learners, X, y, cv=k, key=args.seed)
    names = list(cv.names)
    rows = []
    per_fold = {}
    for n in names:
        err = np.asarray(cv.fold_scores(n, "error")).ravel()
        hin = np.asarray(cv.fold_losses(n, "hinge")).ravel()
        tpr = np.asarray(cv.fold_scores(n, "tpr")).ravel()
        fpr = np.asarray(cv.fold_scores(n, "fpr")).ravel()
        auc = np.asarray(cv.fold_scores(n, "roc_auc")).ravel()
        per_fold[n] = {"error": err, "hinge": hin, "tpr": tpr, "fpr": fpr, "roc_auc": auc}
        rows.append(
            {
                "learner": n,
                "error": err.mean(),
                "hinge": hin.mean(),
                "tpr": tpr.mean(),
                "fpr": fpr.mean(),
                "AUC": auc.mean(),
            }
        )
    report["learners"] = {n: {k: v.tolist() for k, v in d.items()} for n, d in per_fold.items()}
    say(
        f"\n1. Stratified {k}-fold cross-validation, identical folds, features standardised "
        "on each training fold (means over folds)"
    )
    say(text_table(rows, ["learner", "error", "hinge", "tpr", "fpr", "AUC"]))

    # 2. Yildiz & Alpaydin: t on 0/1 error vs t on hinge loss, pairs of kernel machines.
    kernels = [n for n in KERNELS if n in learners]
    _step("paired t tests on 0/1 error and hinge loss...", args.quiet)
    say(f"\n2. Paired t on 0/1 error vs on hinge loss ({HINGE}), kernel machines")
    rows, agree, disagree = [], np.zeros((2, 2), int), []
    for a, b in itertools.combinations(kernels, 2):
        te = cv.ttest_paired(a, b, loss="zero_one")
        th = cv.ttest_paired(a, b, loss="hinge")
        de, dh = _p(te) <= alpha, _p(th) <= alpha
        agree[int(de), int(dh)] += 1
        if dh and not de:
            disagree.append((a, b))
        rows.append(
            {
                "pair": f"{a} vs {b}",
                "t (error)": float(te.statistic),
                "p (error)": _p(te),
                "t (hinge)": float(th.statistic),
                "p (hinge)": _p(th),
                "error": _decision(_p(te), alpha),
                "hinge": _decision(_p(th), alpha),
            }
        )
    report["error_vs_hinge"] = {"pairs": rows, "table": agree.tolist()}
    say(text_table(rows, list(rows[0])))
    say("   agreement of the decisions, pairs of kernel machines:")
    say(_agreement(agree, "error", "hinge"))

    # 3. Yildiz & Alpaydin 2011: univariate error vs Hotelling's T² on (tpr, fpr).
    _step("paired t on error and Hotelling's T² on (tpr, fpr), all pairs...", args.quiet)
    say(f"\n3. Paired t on error vs Hotelling's T² on (tpr, fpr) ({MULTI})")
    rows, agree = [], np.zeros((2, 2), int)
    for a, b in itertools.combinations(names, 2):
        te = cv.ttest_paired(a, b, loss="zero_one")
        try:
            th = cv.hotelling_t2(a, b, measures=("tpr", "fpr"))
            ph, stat = _p(th), float(th.statistic)
        except ValueError as exc:  # e.g. identical predictions: singular covariance
            ph, stat = float("nan"), float("nan")
            # one line: the first sentence of the message (the rest is advice)
            say(f"   {a} vs {b}: Hotelling not defined ({_clause(exc)})")
        de, dh = _p(te) <= alpha, ph <= alpha
        if np.isfinite(ph):
            agree[int(de), int(dh)] += 1
        rows.append(
            {
                "pair": f"{a} vs {b}",
                "p (error)": _p(te),
                "T2": stat,
                "p (T2)": ph,
                "univariate": _decision(_p(te), alpha),
                "multivariate": _decision(ph, alpha) if np.isfinite(ph) else "-",
            }
        )
    report["univariate_vs_multivariate"] = {"pairs": rows, "table": agree.tolist()}
    say(text_table(rows, list(rows[0])))
    say("   agreement of the decisions, all pairs (Hotelling defined):")
    say(_agreement(agree, "t", "T²"))

    # 4. ANOVA / MANOVA, post hoc cliques and ordering, learned measure.
    _step("ANOVA, MANOVA and post hoc tests...", args.quiet)
    say(f"\n4. ANOVA on error, MANOVA on (tpr, fpr), post hoc analysis ({MULTI})")
    err = np.stack([per_fold[n]["error"] for n in names])
    tf = np.stack([np.stack([per_fold[n]["tpr"], per_fold[n]["fpr"]], -1) for n in names])
    an = anova(err, blocked=True)
    ma = manova(tf, names=("tpr", "fpr"))
    say(f"   ANOVA (folds as blocks) on error: F = {float(an.statistic):.4g}, p = {_p(an):.4g}")
    say(
        f"   MANOVA on (tpr, fpr): Wilks' Lambda = {float(ma.statistic):.4g}, "
        f"F = {float(ma.f_statistic):.4g}, p = {_p(ma):.4g}; Pillai p = "
        f"{float(ma.pillai_pvalue):.4g}, Roy p = {float(ma.roy_pvalue):.4g}"
    )
    w = np.asarray(ma.eigenvectors)[:, 0]
    say(
        f"   learned measure M1 = {w[0]:+.3f} tpr {w[1]:+.3f} fpr "
        f"({100 * float(np.asarray(ma.share)[0]):.0f}% of the eigenvalue sum)"
    )
    ph_err = posthoc(err, test="t", correction="holm", alpha=alpha, names=names)
    say(_posthoc_summary(ph_err, names, alpha, "post hoc t on error (Holm)"))
    report["anova"] = jsonable(an)
    report["manova"] = jsonable(ma)
    report["posthoc_error"] = jsonable(ph_err)
    try:
        ph_mv = posthoc(tf, test="hotelling", correction="holm", alpha=alpha, names=names)
        say(_posthoc_summary(ph_mv, names, alpha, "post hoc Hotelling on (tpr, fpr) (Holm)"))
        report["posthoc_tpr_fpr"] = jsonable(ph_mv)
    except ValueError as exc:  # two learners with identical (tpr, fpr) on every fold
        say(f"   post hoc Hotelling on (tpr, fpr) not defined: {_clause(exc)}")
        report["posthoc_tpr_fpr"] = {"error": str(exc)}

    # 5. Sign-flip permutation tests (Hein): a pair the error test cannot separate but
    # the hinge test can (Yildiz & Alpaydin's point), else the two best kernel machines.
    best = (
        disagree[0] if disagree else sorted(kernels, key=lambda n: per_fold[n]["hinge"].mean())[:2]
    )
    a, b = best
    _step(f"sign-flip permutation test, {n_resamples} draws: {a} vs {b}...", args.quiet)
    say(f"\n5. Sign-flip permutation tests ({HEIN}): {a} vs {b}")
    la = np.asarray(cv.instance_losses(a, "hinge"))
    lb = np.asarray(cv.instance_losses(b, "hinge"))
    valid = np.asarray(cv.valid)
    d_inst = (la - lb)[valid]
    with Progress("sign flips", disable=args.quiet, total=n_resamples) as bar:
        kw = {"progress": bar} if _accepts(signflip_test, "progress") else {}
        sf = signflip_test(
            d_inst, statistic="mean", n_resamples=n_resamples, key=args.seed, return_null=True, **kw
        )
    d_fold = per_fold[a]["hinge"] - per_fold[b]["hinge"]
    sf_exact = signflip_test(d_fold, statistic="t", method="exact")
    tt_inst = ttest_paired(la[valid], lb[valid])
    say(
        f"   per-instance hinge differences (m = {d_inst.size}), {sf.method}, "
        f"{sf.n_resamples} draws: p = {_p(sf):.4g}, 99% interval "
        f"[{float(np.asarray(sf.pvalue_interval[0])):.3g}, "
        f"{float(np.asarray(sf.pvalue_interval[1])):.3g}]"
    )
    say(
        f"   paired t on the same differences: t = {float(tt_inst.statistic):.4g}, "
        f"p = {_p(tt_inst):.4g}"
    )
    say(
        f"   per-fold differences (k = {k}), exact over 2^{k} sign patterns: p = {_p(sf_exact):.4g}"
    )
    report["signflip_instances"] = jsonable(
        {k: v for k, v in vars_of(sf).items() if k != "null_distribution"}
    )
    report["signflip_folds_exact"] = jsonable(sf_exact)
    report["ttest_instances"] = jsonable(tt_inst)

    # 6. Label-permutation sanity check (Hein).
    from jaxtests import models

    sc = None
    if args.quick:
        say(f"\n6. Label-permutation sanity check ({HEIN}): skipped with --quick")
        report["sanity"] = None
    else:
        n_perm, k_sanity = 1000, 5
        _step(f"label-permutation sanity check, {n_perm} permutations...", args.quiet)
        say(
            f"\n6. Label-permutation sanity check ({HEIN}): ridge classifier, {k_sanity}-fold CV, "
            f"{n_perm} permutations"
        )
        with Progress("label permutations", unit="perm", disable=args.quiet, total=n_perm) as bar:
            sc = permutation_test_score(
                models.ridge_classifier(),
                X,
                y,
                cv=k_sanity,
                n_permutations=n_perm,
                key=args.seed,
                progress=bar,
            )
        scores = np.asarray(sc.permutation_scores)
        say(
            f"   accuracy {float(sc.statistic):.4f}; permuted labels: mean {scores.mean():.4f}, "
            f"max {scores.max():.4f}; p = {_p(sc):.4g} (cannot be below 1/{n_perm + 1})"
        )
        report["sanity"] = jsonable(
            {k: v for k, v in vars_of(sc).items() if k != "permutation_scores"}
        )
        report["sanity"]["permutation_scores_summary"] = {
            "mean": float(scores.mean()),
            "sd": float(scores.std()),
            "max": float(scores.max()),
        }

    # Plots and JSON.
    _step("drawing the figures...", args.quiet)
    pngs = _plots(args.out, names, per_fold, best, ph_err, ma, tf, sf, sc, X.shape[0], args.quick)
    report["elapsed_s"] = time.perf_counter() - t0
    path = os.path.join(args.out, "demo.json")

    def write_json(tmp):
        with open(tmp, "w") as fh:
            fh.write(json.dumps(jsonable(report), indent=2, allow_nan=False))

    replace_file(path, write_json)
    say(f"\nWrote in {report['elapsed_s']:.1f} s:")
    for p in [path, *pngs]:
        say(f"   {os.path.abspath(p)}")
    return 0


def vars_of(res):
    """Fields of a result dataclass as a dict."""
    import dataclasses

    return {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}


def _accepts(fn, name):
    import inspect

    return name in inspect.signature(fn).parameters


def _plots(out, names, per_fold, best, ph_err, ma, tf, sf, sc, n_instances, quick=False):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("   (matplotlib not installed: no plots; pip install matplotlib)")
        return []
    from jaxtests import plot

    files = []

    def save(fig, name):
        assert name in OUTPUTS, name
        p = os.path.join(out, name)
        try:
            replace_file(p, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
        finally:
            plt.close(fig)
        files.append(p)

    a, b = best
    # The paired t tests of section 2 test the per-fold differences: they are drawn, not the
    # two algorithms' values side by side (which hides the pairing).
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 6.5), layout="constrained")
    plot.fold_differences(
        {a: per_fold[a]["error"], b: per_fold[b]["error"]},
        measure="0/1 error",
        ax=axes[0],
        title="0/1 error, per-fold differences",
    )
    plot.fold_differences(
        {a: per_fold[a]["hinge"], b: per_fold[b]["hinge"]},
        measure="hinge loss",
        ax=axes[1],
        title="Hinge loss, per-fold differences",
    )
    fig.suptitle(f"{a} vs {b}: what the paired t tests test ({HINGE})")
    save(fig, "folds_error_hinge.png")
    save(
        plot.ordering(
            ph_err,
            measure="error",
            title=f"Ordering by mean error ({MULTI})\n"
            "bars: not significantly different (Holm post hoc t)",
        ),
        "ordering_error.png",
    )
    if quick:
        return files
    pts = {n: np.stack([per_fold[n]["fpr"], per_fold[n]["tpr"]], -1) for n in names}
    save(
        plot.scatter_gaussian(
            pts,
            labels=("fpr", "tpr"),
            title=f"(fpr, tpr) per fold with Gaussian contours ({MULTI})",
        ),
        "tpr_fpr_scatter.png",
    )
    if sf.null_distribution is not None:
        save(
            plot.null_distribution(
                sf,
                statistic="mean hinge difference",
                title=f"Sign-flip null distribution, {sf.n_resamples} draws\n({HEIN})",
            ),
            "signflip_null.png",
        )
    save(
        plot.projection(tf, ma, names, title=f"Projection on the learned measure M1 ({MULTI})"),
        "learned_measure_m1.png",
    )
    save(
        plot.null_distribution(
            sc,
            statistic="CV accuracy with permuted labels",
            title=f"Label-permutation sanity check\n({HEIN})",
            lattice=1 / n_instances,  # accuracies of n test instances: multiples of 1 / n
        ),
        "sanity_null.png",
    )
    return files
