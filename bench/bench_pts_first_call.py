"""Benchmark: permutation_test_score's first call (issue 37), and its warm speed.

The cold tour's call (ridge classifier, 100 x 5, labels ±1, 100 permutations, key 0)
in fresh processes with jaxtests' compilation cache off: the first call's time after
import (median of ``--runs``), its traces and XLA compiles, and the backend compile
seconds of each program (JAX's monitoring events), the first call's CPU seconds (XLA:CPU
compiles on two threads when it can: steadier than wall time under load) and the ridge
stream's kernels (``fused_computation`` in its optimised HLO); then, in one warm process, the
second call and larger warm runs (10^4 and 10^5 permutations of 100 x 5, 10^4 of
1000 x 20), each the best of three. Prints one JSON line per measure.
Run: python bench/bench_pts_first_call.py [--runs 3] [--smoke]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

_COLD = """
import json, os, time
import numpy as np
t0 = time.perf_counter()
import jax
import jaxtests as jt
from jaxtests import _sanity_streams as ss
from jaxtests._monitoring import CompileCounter
imported = time.perf_counter() - t0
# the ridge stream's program, its arguments kept: a spy on jaxtests._aot.call (the program
# itself must stay a jitted function, whose twin the quick compile tier makes)
from jaxtests import _aot
program, kept, real_call = ss._ridge_stream, [], _aot.call
def keep(fn, name, args, static=None, *rest, **kw):
    if fn is program:
        kept.append((args, static or {}))
    return real_call(fn, name, args, static, *rest, **kw)
_aot.call = keep
programs = []
def listen(event, duration, **kw):
    if event == "/jax/core/compile/backend_compile_duration":
        programs.append(round(duration, 3))
jax.monitoring.register_event_duration_secs_listener(listen)
rng = np.random.default_rng(0)
X = rng.normal(size=(100, 5))  # the cold tour's order: X, then the labels
y = np.where(rng.random(100) < 0.5, 1, -1); y[:2], y[2:4] = 1, -1
with CompileCounter() as c:
    t, c0 = time.perf_counter(), time.process_time()
    r = jt.permutation_test_score(jt.models.ridge_classifier(), X, y, n_permutations=100, key=0)
    first, first_cpu = time.perf_counter() - t, time.process_time() - c0
# the stream's kernels (its optimised HLO, from JAX's in-memory cache)
a, k = kept[0]
with jax.enable_x64(True):
    text = program.trace(*a, **k).lower().compile().as_text()
print(json.dumps(dict(import_s=round(imported, 3), first_s=round(first, 3), traces=c.traces,
                      compiles=c.compiles, compile_s=programs, pvalue=float(r.pvalue),
                      first_cpu_s=round(first_cpu, 3),
                      stream_kernels=text.count("fused_computation"),
                      stream_while_loops=text.count(" while("))))
"""

_WARM = """
import json, sys, time
import numpy as np
import jaxtests as jt
def best(f, k=3):
    f()
    ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return round(min(ts), 4)
rng = np.random.default_rng(0)
out = {}
for n, d, B in [tuple(map(int, w.split("x"))) for w in sys.argv[1:]]:
    X = rng.normal(size=(n, d)); y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
    call = lambda: jt.permutation_test_score(jt.models.ridge_classifier(), X, y,
                                             n_permutations=B, key=0)
    out[f"{n}x{d}, {B} perms"] = best(call)
print(json.dumps(out))
"""


def _run(code, *args):
    env = dict(os.environ, JAXTESTS_CACHE_DIR="off")
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3, help="fresh processes for the first call")
    ap.add_argument("--smoke", action="store_true", help="one cold run, a small warm one")
    args = ap.parse_args(argv)
    runs = [_run(_COLD) for _ in range(1 if args.smoke else args.runs)]
    for r in runs:
        print(json.dumps(dict(measure="first call", **r)))
    print(
        json.dumps(
            dict(
                measure="first call, median",
                first_s=statistics.median(r["first_s"] for r in runs),
                first_cpu_s=statistics.median(r["first_cpu_s"] for r in runs),
                load=round(os.getloadavg()[0], 1),
            )
        )
    )
    warm = ["100x5x100"] if args.smoke else ["100x5x100", "100x5x10000", "100x5x100000"]
    warm += [] if args.smoke else ["1000x20x10000"]
    print(json.dumps(dict(measure="warm, best of 3", **_run(_WARM, *warm))))


if __name__ == "__main__":
    main()
