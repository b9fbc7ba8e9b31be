"""One warm call of a workload under JAX's profiler, its kernels' times as a Perfetto trace.

For a lease (``bash bench/gpu_lease.sh trace``): ``python bench/gpu_trace.py NAME OUT_DIR``
runs the workload once (compiling), then once more inside ``jax.profiler.trace`` and copies
the trace (``perfetto_trace.json.gz``: every kernel with its start and duration) to
``OUT_DIR/trace_NAME.json.gz``; :func:`summary` (``--summary FILE``, on any machine) prints
the kernels that took the most time, summed by name.
"""

import argparse
import collections
import glob
import gzip
import json
import os
import shutil
import sys
import tempfile


def _workloads():
    import numpy as np

    import jaxtests
    from jaxtests import datasets, models

    X, y = datasets.load_breast_cancer()
    d = np.random.default_rng(0).normal(0.01, 1.0, 10_000)
    return {
        "ridge": lambda: jaxtests.permutation_test_score(
            models.ridge_classifier(), X, y, n_permutations=10**5, key=3
        ),
        "signflip": lambda: jaxtests.signflip_test(d, n_resamples=10**7, key=1),
    }


def summary(path, top=25):
    """The ``top`` kernels (events on a GPU stream) by total time: ``[(name, ms, calls)]``."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    pids = {
        e["pid"]
        for e in events
        if e.get("ph") == "M" and "GPU" in str(e.get("args", {}).get("name", ""))
    }
    total, calls = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X" and (not pids or e.get("pid") in pids):
            total[e["name"][:90]] += e.get("dur", 0) / 1000
            calls[e["name"][:90]] += 1
    return [(name, round(ms, 3), calls[name]) for name, ms in total.most_common(top)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?")
    ap.add_argument("out", nargs="?", default=".")
    ap.add_argument("--summary", default="")
    args = ap.parse_args()
    if args.summary:
        for row in summary(args.summary):
            print(*row, sep="\t")
        return
    import jax

    os.environ.setdefault("JAXTESTS_COMPILE", "optimized")
    fn = _workloads()[args.name]
    jax.block_until_ready(fn())
    with tempfile.TemporaryDirectory() as tmp:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            jax.block_until_ready(fn())
        found = glob.glob(f"{tmp}/**/perfetto_trace.json.gz", recursive=True)
        if not found:
            sys.exit(f"no perfetto trace under {tmp}")
        dest = os.path.join(args.out, f"trace_{args.name}.json.gz")
        shutil.copy(found[0], dest)
    for row in summary(dest, top=12):
        print(*row, sep="\t")


if __name__ == "__main__":
    main()
