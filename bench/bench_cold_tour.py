"""Cold tour (issue 37): every public function's first call, as a new user meets it.

For each call on small data, each in its own fresh process (interpreter start, import
and exit not counted, the import timed apart):

- **cold**: the first call with jaxtests' compilation cache off (a first session on a new
  machine), its XLA compilations, the second call, and a call at a new size inside the
  same shape bucket with the compilations it made (0 is the aim);
- **filled**: the first call in a later process, with a cache the same call filled before
  (a temporary folder, never ``~/.cache``);
- **peer**: the call a scipy / scikit-learn / statsmodels / pingouin / baycomp / autorank /
  scikit-posthocs user makes, in its own fresh process, its imports included (as a user
  pays them); "-" where the peer is not installed (``pip install -e ".[bench]"``).

Prints a markdown table (``bench/RESULTS.md`` keeps the figures of a full run).
``--smoke`` runs three calls, for the test suite; ``--only NAME ...`` picks calls.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"

# name: (jaxtests call of size n, default n, new n in the same bucket, peer, peer call of size n)
# Each call is Python source over `np`, `rng` (a seeded numpy Generator), `jt` (jaxtests)
# and `n`; peers import what they use inside their own source.
COMMON = """
import numpy as np
rng = np.random.default_rng(0)
def lab(n):
    y = np.where(rng.random(n) < 0.5, 1, -1); y[:2], y[2:4] = 1, -1
    return y
"""
CALLS = {
    "ttest_paired": (
        "jt.ttest_paired(rng.normal(.8, .02, n), rng.normal(.78, .02, n))",
        10,
        11,
        "scipy ttest_rel",
        "from scipy import stats; stats.ttest_rel(rng.normal(.8, .02, n), rng.normal(.78, .02, n))",
    ),
    "ttest_corrected": (
        "jt.ttest_corrected(rng.normal(.8, .02, n), rng.normal(.78, .02, n), "
        "n_train=90, n_test=10)",
        10,
        11,
        "-",
        None,
    ),
    "ttest_5x2cv": (
        "jt.ttest_5x2cv(rng.normal(.8, .02, (5, 2)), rng.normal(.78, .02, (5, 2)))",
        10,
        10,
        "-",
        None,
    ),
    "hotelling_t2": (
        "jt.hotelling_t2(rng.normal(size=(n, 2)), rng.normal(size=(n, 2)))",
        10,
        11,
        "pingouin multivariate_ttest",
        "import pingouin as pg; pg.multivariate_ttest(rng.normal(size=(n, 2)), "
        "rng.normal(size=(n, 2)), paired=True)",
    ),
    "anova": (
        "jt.anova(rng.normal(size=(3, n)))",
        10,
        11,
        "scipy f_oneway",
        "from scipy import stats; stats.f_oneway(*rng.normal(size=(3, n)))",
    ),
    "manova": (
        "jt.manova(rng.normal(size=(3, n, 2)))",
        10,
        11,
        "statsmodels MANOVA",
        "import pandas as pd; from statsmodels.multivariate.manova import MANOVA; "
        "x = rng.normal(size=(3 * n, 2)); g = np.repeat(np.arange(3), n); "
        "MANOVA(x, pd.get_dummies(g, drop_first=True).astype(float).assign(c=1.0)).mv_test()",
    ),
    "mcnemar": (
        "jt.mcnemar(lab(n), lab(n), lab(n))",
        500,
        501,
        "statsmodels mcnemar",
        "from statsmodels.stats.contingency_tables import mcnemar; "
        "mcnemar([[200, 60], [40, 200]], exact=True)",
    ),
    "cochran_q": (
        "jt.cochran_q(lab(n), lab(n), lab(n), lab(n))",
        500,
        501,
        "statsmodels cochrans_q",
        "from statsmodels.stats.contingency_tables import cochrans_q; "
        "cochrans_q(rng.integers(0, 2, (n, 3)))",
    ),
    "wilcoxon": (
        "jt.wilcoxon(rng.normal(size=n), rng.normal(size=n))",
        20,
        21,
        "scipy wilcoxon",
        "from scipy import stats; stats.wilcoxon(rng.normal(size=n), rng.normal(size=n))",
    ),
    "friedman + nemenyi": (
        "x = rng.normal(size=(n, 5)); jt.friedman(x); jt.nemenyi(x)",
        15,
        16,
        "scipy + scikit-posthocs",
        "from scipy import stats; import scikit_posthocs as sp; x = rng.normal(size=(n, 5)); "
        "stats.friedmanchisquare(*x.T); sp.posthoc_nemenyi_friedman(x)",
    ),
    "delong_test": (
        "jt.delong_test(lab(n), rng.normal(size=n), rng.normal(size=n))",
        1000,
        1001,
        "sklearn AUCs only",
        "from sklearn.metrics import roc_auc_score; y = lab(n); "
        "roc_auc_score(y, rng.normal(size=n)); roc_auc_score(y, rng.normal(size=n))",
    ),
    "bayesian.correlated_ttest": (
        "jt.bayesian.correlated_ttest(rng.normal(.8, .02, n), rng.normal(.78, .02, n), "
        "rho=0.1, rope=0.01)",
        10,
        11,
        "baycomp CorrelatedTTest",
        "import baycomp; baycomp.CorrelatedTTest.probs(rng.normal(.8, .02, n), "
        "rng.normal(.78, .02, n), rope=0.01, runs=1)",
    ),
    "bayesian.signrank": (
        "jt.bayesian.signrank(rng.normal(size=n), rng.normal(size=n), rope=0.01, key=0)",
        20,
        21,
        "baycomp SignedRankTest",
        "import baycomp; baycomp.SignedRankTest.probs(rng.normal(size=n), "
        "rng.normal(size=n), rope=0.01)",
    ),
    "signflip_test": (
        "jt.signflip_test(rng.normal(size=n), n_resamples=9999, key=0)",
        500,
        501,
        "scipy permutation_test",
        "from scipy import stats; stats.permutation_test((rng.normal(size=n),), np.mean, "
        "permutation_type='samples', n_resamples=9999, vectorized=True)",
    ),
    "permutation_test": (
        "jt.permutation_test(rng.normal(size=n), rng.normal(size=n), n_resamples=9999, key=0)",
        200,
        201,
        "scipy permutation_test",
        "from scipy import stats; stats.permutation_test((rng.normal(size=n), "
        "rng.normal(size=n)), lambda x, y, axis: x.mean(axis) - y.mean(axis), "
        "n_resamples=9999, vectorized=True)",
    ),
    "bootstrap mean difference": (
        "jt.bootstrap((rng.normal(size=n), rng.normal(size=n)), 'mean_difference', "
        "n_resamples=9999, key=0)",
        500,
        501,
        "scipy bootstrap",
        "from scipy import stats; stats.bootstrap((rng.normal(size=n), rng.normal(size=n)), "
        "lambda x, y, axis: x.mean(axis) - y.mean(axis), paired=True, n_resamples=9999)",
    ),
    "cross_validate (3 learners)": (
        "jt.cross_validate({'lda': jt.models.lda(), 'nc': jt.models.nearest_centroid(), "
        "'ridge': jt.models.ridge_classifier()}, rng.normal(size=(n, 5)), lab(n), cv=10, key=0)",
        400,
        401,
        "sklearn pipelines",
        "from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as L; "
        "from sklearn.neighbors import NearestCentroid as C; "
        "from sklearn.linear_model import RidgeClassifier as R; "
        "from sklearn.pipeline import make_pipeline; from sklearn.preprocessing import "
        "StandardScaler as S; from sklearn.model_selection import cross_val_predict; "
        "X, y = rng.normal(size=(n, 5)), lab(n); "
        "[cross_val_predict(make_pipeline(S(), m()), X, y, cv=10) for m in (L, C, R)]",
    ),
    "permutation_test_score (ridge, 100)": (
        "jt.permutation_test_score(jt.models.ridge_classifier(), rng.normal(size=(n, 5)), "
        "lab(n), n_permutations=100, key=0)",
        100,
        101,
        "sklearn permutation_test_score",
        "from sklearn.linear_model import RidgeClassifier; from sklearn.pipeline import "
        "make_pipeline; from sklearn.preprocessing import StandardScaler; "
        "from sklearn.model_selection import permutation_test_score; "
        "permutation_test_score(make_pipeline(StandardScaler(), RidgeClassifier()), "
        "rng.normal(size=(n, 5)), lab(n), n_permutations=100, cv=5)",
    ),
    "permutation_test_score (lda, 100)": (
        "jt.permutation_test_score(jt.models.lda(), rng.normal(size=(n, 5)), "
        "lab(n), n_permutations=100, key=0)",
        100,
        101,
        "sklearn permutation_test_score",
        "from sklearn.discriminant_analysis import LinearDiscriminantAnalysis; "
        "from sklearn.model_selection import permutation_test_score; "
        "permutation_test_score(LinearDiscriminantAnalysis(), "
        "rng.normal(size=(n, 5)), lab(n), n_permutations=100, cv=5)",
    ),
    "permutation_test_score (ridge regression, 100)": (
        "X = rng.normal(size=(n, 5)); "
        "jt.permutation_test_score(jt.models.ridge(), X, X[:, 0] + rng.normal(size=n), "
        "n_permutations=100, key=0, scoring='r2')",
        100,
        101,
        "sklearn permutation_test_score",
        "from sklearn.linear_model import Ridge; from sklearn.pipeline import make_pipeline; "
        "from sklearn.preprocessing import StandardScaler; "
        "from sklearn.model_selection import permutation_test_score; X = rng.normal(size=(n, 5)); "
        "permutation_test_score(make_pipeline(StandardScaler(), Ridge()), X, "
        "X[:, 0] + rng.normal(size=n), n_permutations=100, cv=5, scoring='r2')",
    ),
    "ScoreTable.report (15 x 4)": (
        "jt.read_scores({'dataset': [i for i in range(n) for j in range(4)], "
        "'learner': [f'l{j}' for i in range(n) for j in range(4)], "
        "'score': list(rng.random(4 * n))}).report()",
        15,
        16,
        "autorank",
        "import pandas as pd; from autorank import autorank; "
        "autorank(pd.DataFrame(rng.random((n, 4)), columns=list('abcd')), verbose=False)",
    ),
}
SMOKE = ("ttest_paired", "delong_test", "signflip_test")

WORKER = """
import json, sys, time
t0 = time.perf_counter()
import jaxtests as jt
from jax import monitoring
t_import = time.perf_counter() - t0
compiles = [0, 0.0]
def on_duration(event, duration, **kwargs):
    if event == %(event)r:
        compiles[0] += 1; compiles[1] += duration
monitoring.register_event_duration_secs_listener(on_duration)
%(common)s
def call(n):
    exec(%(code)r, {"np": np, "rng": rng, "jt": jt, "n": n, "lab": lab})
t = time.perf_counter(); call(%(n)d); first = time.perf_counter() - t
c_first = list(compiles)
t = time.perf_counter(); call(%(n)d); second = time.perf_counter() - t
c = compiles[0]
t = time.perf_counter(); call(%(new)d); new = time.perf_counter() - t
print(json.dumps(dict(import_s=t_import, first_s=first, first_compiles=c_first[0],
                      first_compile_s=c_first[1], second_s=second, new_s=new,
                      new_compiles=compiles[0] - c)))
"""

PEER = """
import json, time
t0 = time.perf_counter()
%(common)s
exec(%(code)r, {"np": np, "rng": rng, "n": %(n)d, "lab": lab})
print(json.dumps(dict(first_s=time.perf_counter() - t0)))
"""


def _run(source, env):
    res = subprocess.run(
        [sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=900
    )
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure(name, cache_root, peers=True):
    code, n, new, peer_name, peer = CALLS[name]
    src = WORKER % dict(event=BACKEND_COMPILE, common=COMMON, code=code, n=n, new=new)
    base = dict(os.environ)
    cold = _run(src, dict(base, JAXTESTS_CACHE_DIR="off"))
    row = dict(name=name, n=n, new=new, peer=peer_name, cold=cold)
    if cache_root is not None:
        folder = tempfile.mkdtemp(dir=cache_root)
        env = dict(base, JAXTESTS_CACHE_DIR=os.path.join(folder, "jax"))
        _run(src, env)  # fills the cache
        row["filled"] = _run(src, env)
    row["peer_s"] = None
    if peers and peer is not None:
        try:
            row["peer_s"] = _run(PEER % dict(common=COMMON, code=peer, n=n), base)["first_s"]
        except RuntimeError as exc:  # the peer is not installed
            if "ModuleNotFoundError" not in str(exc):
                raise
    return row


def table(rows):
    out = [
        "| call (n, new n) | import | first call, cache off (compiles) | with a filled cache "
        "| second call | new size (compiles) | peer first call | peer |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        c = r["cold"]
        filled = f"{r['filled']['first_s']:.3f} s" if "filled" in r else ""
        peer = "-" if r["peer_s"] is None else f"{r['peer_s']:.3f} s"
        out.append(
            f"| `{r['name']}` ({r['n']}, {r['new']}) | {c['import_s']:.2f} s "
            f"| {c['first_s']:.3f} s ({c['first_compiles']}, {c['first_compile_s']:.2f} s) "
            f"| {filled} | {c['second_s']:.4f} s | {c['new_s']:.4f} s ({c['new_compiles']}) "
            f"| {peer} | {r['peer']} |"
        )
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="three calls, cache off only")
    parser.add_argument("--only", nargs="+", choices=sorted(CALLS), help="these calls only")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    names = list(SMOKE) if args.smoke else (args.only or list(CALLS))
    root = None if args.smoke else tempfile.mkdtemp(prefix="jaxtests-cold-tour-")
    try:
        rows = [measure(name, root, peers=not args.smoke) for name in names]
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    # The aim of issue 37: a new size inside a bucket compiles nothing.
    bad = [r["name"] for r in rows if r["cold"]["new_compiles"]]
    if bad:
        print("new sizes that compiled:", ", ".join(bad))
    return 0


if __name__ == "__main__":
    sys.exit(main())
