"""Benchmark: permutation_test_score (label-permutation sanity check) vs scikit-learn.

Workload (issue 5): ridge classifier, n = 1000, d = 20, 5-fold, 1000 permutations,
beside scikit-learn's permutation_test_score with RidgeClassifier (n_jobs=2) and
LogisticRegression (timed on fewer permutations and scaled); then 10^6
permutations of the ridge case in a fresh process (target < 5 s, peak memory
< 1 GiB). Both libraries get the same explicit folds, so every label is permuted.
Run: python bench/bench_sanity.py [--smoke]
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import jax
import numpy as np

from jaxtests import models, permutation_test_score

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")


def _data(n, d, k):
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + rng.standard_normal(n) > 0, 1, -1)
    return X, y, list(StratifiedKFold(k).split(X, y))


def _run_ours(model, X, y, folds, nperm, repeat=2):
    def fn():
        r = permutation_test_score(model, X, y, cv=folds, n_permutations=nperm, key=1)
        jax.block_until_ready(r.permutation_scores)
        return r

    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0  # includes compilation
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return first, best, out


def big(n, d, k, nperm):
    """The 10^6-permutation run, alone in this process (for its peak memory)."""
    X, y, folds = _data(n, d, k)
    first, t, out = _run_ours(models.ridge_classifier(), X, y, folds, nperm, repeat=1)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    return dict(first=first, t=t, rss=rss, pvalue=float(out.pvalue))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, runs in seconds")
    ap.add_argument("--big", nargs=4, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.big:
        print(json.dumps(big(*args.big)))
        return
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.model_selection import permutation_test_score as sk_pts
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def scaled(model):  # jaxtests' learners standardise on each training fold by default
        return make_pipeline(StandardScaler(), model)

    n, d, k = (200, 5, 5) if args.smoke else (1000, 20, 5)
    B = 50 if args.smoke else 1000
    B_sk = 10 if args.smoke else 100  # scikit-learn is timed on fewer permutations and scaled
    sk_jobs = 1 if args.smoke else 2  # process-pool start-up alone takes seconds
    n_big = 1_000 if args.smoke else 1_000_000
    X, y, folds = _data(n, d, k)
    load = os.getloadavg()[0]
    info = {
        "device": str(jax.devices()[0]),
        "jax": jax.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_avg_1min": load,
        "n": n,
        "d": d,
        "folds": k,
    }

    # correctness first: same folds and permutations as scikit-learn
    rs = np.random.RandomState(0)
    perms = np.stack([rs.permutation(n) for _ in range(B_sk)])
    ours = permutation_test_score(models.ridge_classifier(), X, y, cv=folds, permutations=perms)
    s, ps, _ = sk_pts(
        scaled(RidgeClassifier()), X, y, cv=folds, n_permutations=B_sk, random_state=0
    )
    err = float(np.max(np.abs(np.asarray(ours.permutation_scores) - ps)))
    assert err < 1e-8 and abs(float(ours.statistic) - s) < 1e-8, err
    print(f"correctness: max |ours - sklearn| over {B_sk} permutations = {err:.2e}")
    print(f"machine: {os.cpu_count()} cores, 1-min load average {load:.2f} (shared)")

    rows = []
    for name, model, est in (
        ("ridge", models.ridge_classifier(), scaled(RidgeClassifier())),
        ("logistic", models.logistic(), scaled(LogisticRegression())),
    ):
        first, t, _ = _run_ours(model, X, y, folds, B)
        t0 = time.perf_counter()
        sk_pts(est, X, y, cv=folds, n_permutations=B_sk, random_state=0, n_jobs=sk_jobs)
        t_sk = (time.perf_counter() - t0) * (B / B_sk)
        rows.append(
            dict(
                info,
                workload=f"permutation_test_score {name}",
                n_permutations=B,
                jaxtests_s=t,
                jaxtests_first_call_s=first,
                sklearn_s_scaled=t_sk,
                sklearn_timed_permutations=B_sk,
                sklearn_n_jobs=sk_jobs,
                speedup=t_sk / t,
                jaxtests_perm_per_s=B / t,
                sklearn_perm_per_s=B / t_sk,
            )
        )
        print(
            f"{name:9s} jaxtests {t:8.3f} s ({B / t:10.0f} perm/s; first call {first:.2f} s)"
            f" | sklearn {t_sk:8.2f} s ({B / t_sk:6.1f} perm/s) | speedup {t_sk / t:8.1f}x"
        )

    if args.smoke:  # in this process (its peak memory includes the runs above)
        res = big(n, d, k, n_big)
    else:  # a fresh process: compilation and peak memory of this run alone
        out = subprocess.run(
            [sys.executable, __file__, "--big", str(n), str(d), str(k), str(n_big)],
            capture_output=True,
            text=True,
            check=True,
        )
        res = json.loads(out.stdout.strip().splitlines()[-1])
    rows.append(
        dict(
            info,
            workload="permutation_test_score ridge",
            n_permutations=n_big,
            jaxtests_s=res["t"],
            jaxtests_first_call_s=res["first"],
            perm_per_s=n_big / res["t"],
            peak_rss_gib=res["rss"],
            pvalue=res["pvalue"],
        )
    )
    print(
        f"ridge {n_big} permutations: {res['t']:.2f} s ({n_big / res['t']:.0f} perm/s; first "
        f"call with compilation {res['first']:.2f} s), peak RSS {res['rss']:.2f} GiB"
    )
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
