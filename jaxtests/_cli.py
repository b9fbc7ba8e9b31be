"""Command line interface: ``jaxtests demo``."""

import argparse
import sys

import numpy as np

__all__ = ["main"]


def _demo(args):
    from scipy import stats

    from jaxtests import datasets, losses, measures

    X, y = datasets.load_breast_cancer()
    X = (X - X.mean(0)) / X.std(0)
    rng = np.random.default_rng(args.seed)
    folds = np.empty(len(y), int)
    for label in (-1.0, 1.0):  # stratified 10-fold assignment
        idx = rng.permutation(np.flatnonzero(y == label))
        folds[idx] = np.arange(idx.size) % 10
    scores = {"ridge": [], "centroid": []}
    ys = []
    for k in range(10):
        tr, te = folds != k, folds == k
        A = np.c_[X[tr], np.ones(tr.sum())]
        w = np.linalg.solve(A.T @ A + np.diag(np.r_[np.ones(X.shape[1]), 0.0]), A.T @ y[tr])
        scores["ridge"].append(np.c_[X[te], np.ones(te.sum())] @ w)
        mp, mn = X[tr][y[tr] > 0].mean(0), X[tr][y[tr] < 0].mean(0)
        d = ((X[te] - mn) ** 2).sum(1) - ((X[te] - mp) ** 2).sum(1)
        scores["centroid"].append(d / np.abs(d).max())
        ys.append(y[te])
    print("Wisconsin breast cancer, 569 x 30, stratified 10-fold CV")
    per_fold = {}
    for name, fs in scores.items():
        err = [float(np.asarray(losses.zero_one(t, f)).mean()) for t, f in zip(ys, fs)]
        hin = [float(np.asarray(losses.hinge(t, f)).mean()) for t, f in zip(ys, fs)]
        auc = [float(measures.roc_auc(t, f)) for t, f in zip(ys, fs)]
        per_fold[name] = (np.array(err), np.array(hin))
        print(
            f"  {name:9s} error {np.mean(err):.4f}  hinge {np.mean(hin):.4f}"
            f"  AUC {np.mean(auc):.4f}"
        )
    for i, loss in enumerate(("0/1 error", "hinge")):
        t = stats.ttest_rel(per_fold["ridge"][i], per_fold["centroid"][i])
        print(f"  paired t on {loss:9s}: t = {t.statistic:+.3f}, p = {t.pvalue:.4g}")
    return 0


def main(argv=None):
    """Entry point of the ``jaxtests`` command."""
    parser = argparse.ArgumentParser(prog="jaxtests", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compare learners on an embedded real dataset")
    demo.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return {"demo": _demo}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
