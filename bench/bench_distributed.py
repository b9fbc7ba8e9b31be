"""One test over two processes against one process, on this machine (issue 15).

Workloads of ``bench_permutation.py``: S (sign-flip mean, m = 10,000, B = 10^6), L (two-sample
mean difference, n1 = n2 = 5,000, B = 10^6), E (exact sign-flip by meeting in the middle,
m = 40), plus Q (sequential stopping, S's data at a smaller effect, h = 100, up to 10^7 draws).
Each runs in one process, then in two processes on 127.0.0.1 (``jax.distributed.initialize``,
one CPU device each). Every process reports the first call (compile + run, empty caches) and
the best of three warm calls; a two-process figure is the slower process's. p-values must agree
bit for bit. ``--smoke`` shrinks the sizes to run in seconds.

``--reuse`` measures a new ``n_resamples`` in a warm process instead (issue 29): S's data after a
warm-up of 2^14 draws, the first call of 2^22 draws (its compilations counted) and the best of
two more, in one process and in two.

Two layouts: free (each process may use every core: XLA:CPU already spreads one process's
blocks over both cores of this machine, so a second process has no core of its own) and pinned
(process i on core i only, ``os.sched_setaffinity``), which stands for hosts with a core each:
one pinned process against two is what an added host buys.

    python bench/bench_distributed.py [--smoke]
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def workloads(smoke):
    import numpy as np

    from jaxtests import permutation_test, signflip_test

    rng = np.random.default_rng(0)
    m, b = (1000, 20_000) if smoke else (10_000, 1_000_000)
    d = rng.normal(0.01, 1, m)
    x, y = rng.normal(0, 1, m // 2), rng.normal(0.02, 1, m // 2)
    e = rng.normal(0.2, 1, 24 if smoke else 40)
    q = rng.normal(0.03, 1, m)
    return {
        "S": lambda: signflip_test(d, n_resamples=b, key=1),
        "L": lambda: permutation_test(x, y, n_resamples=b, key=1),
        "E": lambda: signflip_test(e, method="exact"),
        "Q": lambda: signflip_test(q, n_resamples=10 * b, key=2, sequential=100),
    }


def worker(smoke):
    import numpy as np

    out = {}
    for name, fn in workloads(smoke).items():
        t0 = time.perf_counter()
        r = fn()
        p = float(np.asarray(r.pvalue))
        first = time.perf_counter() - t0
        warm = []
        for _ in range(3):
            t0 = time.perf_counter()
            float(np.asarray(fn().pvalue))
            warm.append(time.perf_counter() - t0)
        out[name] = {"first_s": first, "warm_s": min(warm), "pvalue": p}
    return out


def reuse_worker(smoke):
    import numpy as np

    from jaxtests import signflip_test
    from jaxtests._monitoring import CompileCounter

    d = np.random.default_rng(0).normal(0.01, 1, 1000 if smoke else 10_000)
    small, large = (2**10, 2**16) if smoke else (2**14, 2**22)
    float(np.asarray(signflip_test(d, n_resamples=small, key=1).pvalue))  # the warm-up
    with CompileCounter() as counter:
        t0 = time.perf_counter()
        p = float(np.asarray(signflip_test(d, n_resamples=large, key=1).pvalue))
        first = time.perf_counter() - t0
    warm = []
    for _ in range(2):
        t0 = time.perf_counter()
        float(np.asarray(signflip_test(d, n_resamples=large, key=1).pvalue))
        warm.append(time.perf_counter() - t0)
    record = {"first_s": first, "warm_s": min(warm), "pvalue": p, "compiles": counter.compiles}
    return {"N": record}


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(n, smoke, pin, timeout=900, reuse=False):
    """Run the workloads in ``n`` processes (process i on core i if ``pin``); their records."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAXTESTS_CACHE_DIR="")
    env.pop("XLA_FLAGS", None)
    address = f"127.0.0.1:{_port()}"
    cmd = [sys.executable, __file__, "--worker"] + (["--smoke"] if smoke else [])
    cmd += ["--reuse"] if reuse else []
    outs = []
    procs = []
    for i in range(n):
        f = tempfile.TemporaryFile("w+")  # a file, not a pipe: a full pipe would stall a peer
        extra = ["--address", address, "--n", str(n), "--i", str(i)] if n > 1 else []
        extra += ["--pin", str(i)] if pin else []
        procs.append(subprocess.Popen(cmd + extra, env=env, stdout=f, stderr=subprocess.DEVNULL))
        outs.append(f)
    try:
        for p in procs:
            p.wait(timeout=timeout)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    records = []
    for f in outs:
        f.seek(0)
        line = [x for x in f.read().splitlines() if x.startswith("RECORD ")]
        records.append(json.loads(line[-1][7:]) if line else None)
        f.close()
    if any(r is None for r in records):
        raise SystemExit(f"a worker of the {n}-process run failed")
    return records


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="a new n_resamples in a warm process")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--address", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--i", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--pin", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        if args.pin is not None:  # before JAX starts its thread pools
            os.sched_setaffinity(0, {args.pin % os.cpu_count()})
        import jax

        if args.n > 1:
            jax.distributed.initialize(args.address, num_processes=args.n, process_id=args.i)
        record = (reuse_worker if args.reuse else worker)(args.smoke)
        print("RECORD " + json.dumps(record), flush=True)
        return
    import jax

    info = {"jax": jax.__version__, "cpus": os.cpu_count(), "load1": round(os.getloadavg()[0], 2)}
    print(json.dumps(info))
    if args.reuse:
        one = launch(1, args.smoke, False, reuse=True)[0]["N"]
        two = [r["N"] for r in launch(2, args.smoke, False, reuse=True)]
        print(f"\n{'':12} {'new n first':>12} {'compiles':>9} {'warm':>8}  p-values equal")
        for name, rs in (("1 process", [one]), ("2 processes", two)):
            first = max(r["first_s"] for r in rs)
            warm = max(r["warm_s"] for r in rs)
            compiles = max(r["compiles"] for r in rs)
            same = all(r["pvalue"] == one["pvalue"] for r in rs)
            print(f"{name:12} {first:12.3f} {compiles:9d} {warm:8.3f}  {same}")
            print(json.dumps({"workload": "N", "processes": len(rs), **rs[0], **info}))
        return
    for pin in (False, True):
        one = launch(1, args.smoke, pin)[0]
        two = launch(2, args.smoke, pin)
        print(f"\n{'pinned: process i on core i' if pin else 'free: every process on every core'}")
        print(
            f"{'workload':8} {'1 proc warm':>12} {'2 proc warm':>12} {'speed-up':>9} "
            f"{'1 proc first':>13} {'2 proc first':>13}  p-values equal"
        )
        for name, r in one.items():
            w2 = max(t[name]["warm_s"] for t in two)
            f2 = max(t[name]["first_s"] for t in two)
            same = all(t[name]["pvalue"] == r["pvalue"] for t in two)
            print(
                f"{name:8} {r['warm_s']:12.3f} {w2:12.3f} {r['warm_s'] / w2:9.2f} "
                f"{r['first_s']:13.2f} {f2:13.2f}  {same}"
            )
            if not same:
                raise SystemExit(f"{name}: the two-process p-value differs from one process's")


if __name__ == "__main__":
    main()
