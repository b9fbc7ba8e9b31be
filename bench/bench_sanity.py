"""Benchmark: permutation_test_score (label-permutation sanity check) vs scikit-learn.

Workload (issue 5): ridge classifier, n = 1000, d = 20, 5-fold, 1000 permutations,
beside scikit-learn's permutation_test_score with RidgeClassifier (n_jobs=2) and
LogisticRegression (timed on fewer permutations and scaled); then 10^6
permutations of the ridge case (target < 5 s, peak memory < 1 GiB).
Run: python bench/bench_sanity.py [--smoke]
"""

import argparse
import json
import platform
import resource
import time

import jax
import numpy as np

from jaxtests import models
from jaxtests._sanity import permutation_test_score


def _time(fn, repeat=1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        jax.block_until_ready(out.permutation_scores)
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, runs in seconds")
    args = ap.parse_args()
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.model_selection import StratifiedKFold
    from sklearn.model_selection import permutation_test_score as sk_pts

    n, d, k = (200, 5, 5) if args.smoke else (1000, 20, 5)
    B = 50 if args.smoke else 1000
    B_sk = 10 if args.smoke else 100  # scikit-learn is timed on fewer permutations and scaled
    sk_jobs = 1 if args.smoke else 2  # process-pool start-up alone takes seconds
    big = 20_000 if args.smoke else 1_000_000
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + rng.standard_normal(n) > 0, 1, -1)
    folds = list(StratifiedKFold(k).split(X, y))
    info = {
        "device": str(jax.devices()[0]),
        "jax": jax.__version__,
        "cpu": platform.processor() or platform.machine(),
        "n": n,
        "d": d,
        "folds": k,
    }

    # correctness first: same folds and permutations as scikit-learn
    rs = np.random.RandomState(0)
    perms = np.stack([rs.permutation(n) for _ in range(B_sk)])
    ours = permutation_test_score(models.ridge_classifier(), X, y, cv=folds, permutations=perms)
    s, ps, _ = sk_pts(RidgeClassifier(), X, y, cv=folds, n_permutations=B_sk, random_state=0)
    err = float(np.max(np.abs(np.asarray(ours.permutation_scores) - ps)))
    assert err < 1e-8 and abs(float(ours.statistic) - s) < 1e-8, err
    print(f"correctness: max |ours - sklearn| over {B_sk} permutations = {err:.2e}")

    rows = []

    def run_ours(model, nperm, bs=None):
        def fn():
            return permutation_test_score(
                model, X, y, cv=folds, n_permutations=nperm, key=1, batch_size=bs
            )

        t0 = time.perf_counter()
        fn()
        first = time.perf_counter() - t0  # includes compilation
        t, out = _time(fn, repeat=2)
        return first, t, out

    def run_sk(est, nperm, n_jobs):
        t0 = time.perf_counter()
        sk_pts(est, X, y, cv=folds, n_permutations=nperm, random_state=0, n_jobs=n_jobs)
        return time.perf_counter() - t0

    for name, model, est, nj in (
        ("ridge", models.ridge_classifier(), RidgeClassifier(), sk_jobs),
        ("logistic", models.logistic(), LogisticRegression(), sk_jobs),
    ):
        first, t, _ = run_ours(model, B)
        t_sk = run_sk(est, B_sk, nj) * (B / B_sk)
        row = dict(
            info,
            workload=f"permutation_test_score {name}",
            n_permutations=B,
            jaxtests_s=t,
            jaxtests_first_call_s=first,
            sklearn_s_scaled=t_sk,
            sklearn_timed_permutations=B_sk,
            sklearn_n_jobs=nj,
            speedup=t_sk / t,
            jaxtests_perm_per_s=B / t,
            sklearn_perm_per_s=B / t_sk,
        )
        rows.append(row)
        print(
            f"{name:9s} jaxtests {t:8.3f} s ({B / t:10.0f} perm/s; first call {first:.2f} s)"
            f" | sklearn {t_sk:8.2f} s ({B / t_sk:6.1f} perm/s) | speedup {t_sk / t:8.1f}x"
        )

    first, t, out = run_ours(models.ridge_classifier(), big)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    row = dict(
        info,
        workload="permutation_test_score ridge",
        n_permutations=big,
        jaxtests_s=t,
        jaxtests_first_call_s=first,
        perm_per_s=big / t,
        peak_rss_gib=rss,
        pvalue=float(out.pvalue),
    )
    rows.append(row)
    print(
        f"ridge {big} permutations: {t:.2f} s ({big / t:.0f} perm/s), peak RSS {rss:.2f} GiB "
        "(whole process, includes scikit-learn runs)"
    )
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
