"""One process of the two-process test (``tests/test_distributed.py``); not collected.

``python tests/distributed_worker.py ADDRESS N I`` joins a run of ``N``
processes and prints ``RESULT <json>``: the p-values of every resampling
path and the work this process did itself (:data:`jaxtests._distributed.WORK`);
without arguments, the same record of a one-process run.
"""

import json
import sys

import numpy as np


def run():
    import jax

    import jaxtests
    from jaxtests import _distributed, models

    rng = np.random.default_rng(0)
    d = rng.normal(0.3, 1.0, (3, 40))
    x, y = rng.normal(0, 1, 30), rng.normal(0.5, 1, 25)
    yt = rng.integers(0, 2, 60)
    pa = yt ^ (rng.random(60) < 0.2)
    pb = yt ^ (rng.random(60) < 0.35)
    scores = rng.normal(0, 1, (12, 4)) + np.array([0, 0.3, 0.6, 0.9])
    X = rng.normal(0, 1, (80, 3))
    lab = (X[:, 0] + rng.normal(0, 1, 80) > 0).astype(int)
    ridge = models.ridge_classifier()
    out, work = {}, {}

    def record(name, res, *fields):
        before = dict(_distributed.WORK)
        r = res()
        fields = ("pvalue", *fields) if hasattr(r, "pvalue") else fields
        out[name] = {f: np.asarray(getattr(r, f)).tolist() for f in fields}
        work[name] = {k: v - before.get(k, 0) for k, v in _distributed.WORK.items()}

    record(
        "signflip_maxT",
        lambda: jaxtests.signflip_test(
            d, statistic="t", n_resamples=100_000, key=1, correction="maxT"
        ),
        "pvalue_adjusted",
    )
    record("mitm", lambda: jaxtests.signflip_test(d[:, :28], method="exact"))
    record(
        "enumerate_null",
        lambda: jaxtests.signflip_test(d[0, :16], method="exact", return_null=True),
        "null_distribution",
    )
    record(
        "sequential",
        lambda: jaxtests.signflip_test(d, n_resamples=100_000, key=3, sequential=20),
        "n_draws",
    )
    record("twosample", lambda: jaxtests.permutation_test(x, y, n_resamples=300_000, key=4))
    record("swap", lambda: jaxtests.swap_test(yt, pa, pb, n_resamples=100_000, key=6))
    record(
        "within_block",
        lambda: jaxtests.friedman(scores, method="permutation", n_resamples=20_000, key=7),
    )
    record(
        "label_stream",
        lambda: jaxtests.permutation_test_score(
            ridge, X, lab, n_permutations=1500, key=8, batch_size=1024
        ),
        "permutation_scores",
    )
    # The bootstrap: 5 dispatches of 2,048 draws each, shared 3 + 2; a built-in paired
    # statistic, and a callable of two unpaired samples.
    record(
        "bootstrap",
        lambda: jaxtests.bootstrap_test(
            (yt, pa, pb), "accuracy_difference", n_resamples=9999, key=11, return_distribution=True
        ),
        "bootstrap_distribution",
        "confidence_interval",
    )
    record(
        "bootstrap_callable",
        lambda: jaxtests.bootstrap_test(
            (x, y),
            lambda u, v: jax.numpy.median(u) - jax.numpy.median(v),
            paired=False,
            n_resamples=9999,
            key=12,
            return_distribution=True,
        ),
        "bootstrap_distribution",
        "confidence_interval",
    )
    # The Bayesian signed-rank posterior on the host: 12 blocks of 600 samples, shared 6 + 6.
    record(
        "bayesian_signrank",
        lambda: jaxtests.bayesian.signrank(
            scores[:, 0],
            scores[:, 1],
            rope=0.1,
            n_samples=7000,
            key=13,
            batch_size=600,
            return_samples=True,
        ),
        "p_left",
        "p_rope",
        "p_right",
        "samples",
    )
    split = [(np.arange(40), np.arange(40, 80))]
    record(
        "label_sorted",
        lambda: jaxtests.permutation_test_score(
            ridge, X, lab, n_permutations=160, key=9, permute="train", cv=split, batch_size=64
        ),
        "permutation_scores",
    )
    seed = jaxtests.signflip_test(d[0], n_resamples=1000).seed  # drawn: must agree
    # A new n_resamples on the programs of two calls above (one process: a block size per
    # power of two below 2^17 draws, so it compiles; several: one block size above 4096).
    from jaxtests._monitoring import CompileCounter

    tiny = jaxtests.signflip_test(d[0], n_resamples=1000, key=10)  # the seed call's programs
    with CompileCounter() as counter:
        maxt = jaxtests.signflip_test(
            d, statistic="t", n_resamples=5_000, key=1, correction="maxT"
        )  # after 100,000
        fewer = jaxtests.permutation_test(x, y, n_resamples=5_000, key=4)  # after 300,000
    out["new_n"] = {
        "pvalue": [float(tiny.pvalue), *np.asarray(maxt.pvalue_adjusted).tolist()],
        "twosample": float(fewer.pvalue),
    }
    reuse = {"traces": counter.traces, "compiles": counter.compiles}
    refused = None
    if jax.process_count() > 1:  # issue 43.3: process 1 given other labels must not mix in
        other = lab.copy()
        other[0] ^= jax.process_index()
        try:
            jaxtests.permutation_test_score(ridge, X, other, n_permutations=99, key=8)
        except ValueError as exc:
            refused = str(exc)
    return {"results": out, "work": work, "seed": seed, "reuse": reuse, "refused": refused}


if __name__ == "__main__":
    import jax

    if sys.argv[1:]:  # else: the one-process reference
        address, n, i = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
        jax.distributed.initialize(coordinator_address=address, num_processes=n, process_id=i)
    record = run()
    record["process"] = jax.process_index()
    record["devices"] = [jax.device_count(), jax.local_device_count()]
    print("RESULT " + json.dumps(record), flush=True)
