"""Cold start (issue 12): what a user pays before the first p-value, scipy vs jaxtests.

The analysis: on each of 8 data sets of m = 150 ... 10,000 instances (geometric), a paired
t test on 10 fold errors, a sign-flip test on the m per-instance differences and a two-sample
test on their halves, 9,999 resamples each (scipy's default). Each library runs it in its own
fresh process, import included: scipy; jaxtests with an empty compilation cache; jaxtests
again with the cache that run filled; jaxtests with the cache off. Then: a new size inside a
compiled bucket in a warm process (m = 1003 after m = 1000) and one in a new bucket
(m = 1200); ``import jaxtests`` and the first ``signflip_test`` of a fresh process with a warm
cache; and the compile time of the first call of each public test family, with the number of
XLA compilations beside every time (``jax.monitoring`` events). Caches live in temporary
directories, never in ``~/.cache``. ``--smoke`` runs a smaller version in about a minute.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
CACHE_HIT = "/jax/compilation_cache/cache_hits"
PROGRAM_LOADED = "/jaxtests/programs/loaded"  # jaxtests._aot.LOADED
B = 9_999  # scipy's default number of resamples
FAMILIES = (
    "signflip_test",
    "permutation_test",
    "ttest_paired",
    "ttest_corrected",
    "hotelling_t2",
    "anova",
    "swap_test",
    "mcnemar",
)
TARGETS = {"empty_cache_x": 3.0, "warm_cache_x": 20.0, "in_bucket_s": 0.050}
TARGETS |= {"import_s": 1.0, "first_signflip_s": 0.3}


# ---------------------------------------------------------------- workers (fresh processes)


class Compiles:
    """XLA compilations, their seconds and persistent-cache loads since the last ``take``."""

    def __init__(self):
        from jax import monitoring

        self.n = self.loaded = 0
        self.seconds = 0.0
        monitoring.register_event_duration_secs_listener(self._duration)
        monitoring.register_event_listener(self._event)

    def _duration(self, event, duration, **kwargs):
        if event == BACKEND_COMPILE:
            self.n += 1
            self.seconds += duration

    def _event(self, event, **kwargs):
        if event == CACHE_HIT:
            self.loaded += 1
        elif event == PROGRAM_LOADED:  # jaxtests' own stored executable: no compile event
            self.n += 1
            self.loaded += 1

    def take(self):
        # JAX reports a persistent-cache load as a backend compile too (one event around
        # both in pxla), so compilations are the events less the loads; the seconds are
        # compiling plus loading from JAX's cache (jaxtests' own stored programs are counted
        # as loads, their time is in the call's).
        out = {"compiles": self.n - self.loaded, "compile_s": self.seconds}
        out["cache_loads"] = self.loaded
        self.n = self.loaded = 0
        self.seconds = 0.0
        return out


def _data(m, seed):
    """Fold errors of two algorithms (10 each) and m per-instance loss differences."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = 0.20 + 0.02 * rng.standard_normal(10)
    b = a + 0.01 + 0.01 * rng.standard_normal(10)
    d = rng.normal(0.03, 1.0, m)
    return a, b, d


def _cache_in_force():
    import jax

    return jax.config.jax_compilation_cache_dir


def worker_analysis(lib, sizes):
    t0 = time.perf_counter()
    if lib == "scipy":
        import numpy as np
        from scipy import stats
    else:
        import numpy as np

        import jaxtests
    t_import = time.perf_counter() - t0
    counter = None if lib == "scipy" else Compiles()
    rows = []
    for i, m in enumerate(sizes):
        a, b, d = _data(m, i)
        x, y = d[: m // 2], d[m // 2 :]
        t1 = time.perf_counter()
        if lib == "scipy":
            p = [
                stats.ttest_rel(a, b).pvalue,
                stats.permutation_test(
                    (d,),
                    lambda v, axis: np.mean(v, axis=axis),
                    permutation_type="samples",
                    n_resamples=B,
                    vectorized=True,
                    random_state=i,
                ).pvalue,
                stats.permutation_test(
                    (x, y),
                    lambda u, v, axis: np.mean(u, axis=axis) - np.mean(v, axis=axis),
                    n_resamples=B,
                    vectorized=True,
                    random_state=i,
                ).pvalue,
            ]
        else:
            p = [
                jaxtests.ttest_paired(a, b).pvalue,
                jaxtests.signflip_test(d, n_resamples=B, key=i).pvalue,
                jaxtests.permutation_test(x, y, n_resamples=B, key=i).pvalue,
            ]
        p = [float(v) for v in p]  # blocks until ready
        row = {"m": int(m), "s": time.perf_counter() - t1, "pvalues": p}
        if counter is not None:
            row |= counter.take()
        rows.append(row)
    out = {"import_s": t_import, "rows": rows}
    if lib != "scipy":
        out["cache_dir"] = _cache_in_force()
    return out


def worker_import(m):
    t0 = time.perf_counter()
    import jaxtests

    t_import = time.perf_counter() - t0
    heavy = [k for k in ("scipy.stats", "matplotlib", "jaxtests.datasets") if k in sys.modules]
    counter = Compiles()
    _, _, d = _data(m, 0)
    t1 = time.perf_counter()
    float(jaxtests.signflip_test(d, n_resamples=10_000, key=0).pvalue)
    first = time.perf_counter() - t1
    return {
        "import_s": t_import,
        "first_signflip_s": first,
        "m": m,
        "loaded_at_import": heavy,
        "cache_dir": _cache_in_force(),
        **counter.take(),
    }


def worker_incremental(base, inside, outside):
    import numpy as np

    import jaxtests

    counter = Compiles()

    def both(m, seed):
        _, _, d = _data(m, seed)
        e = np.random.default_rng(seed + 1000).normal(0, 1, m)
        t1 = time.perf_counter()
        float(jaxtests.signflip_test(d, n_resamples=10_000, key=seed).pvalue)
        float(jaxtests.ttest_paired(d, e).pvalue)
        return {"m": m, "s": time.perf_counter() - t1, **counter.take()}

    rows = [both(base, 0) | {"what": "first call"}]
    rows += [both(m, i + 1) | {"what": "same bucket"} for i, m in enumerate(inside)]
    rows += [both(m, i + 10) | {"what": "new bucket"} for i, m in enumerate(outside)]
    rows.append(both(outside[-1], 99) | {"what": "new bucket, again"})
    return {"rows": rows, "cache_dir": _cache_in_force()}


def _family_call(name, n, seed):
    """One call of the public test ``name`` on data of size ``n`` (instances or folds)."""
    import numpy as np

    import jaxtests

    rng = np.random.default_rng(seed)
    if name == "signflip_test":
        return jaxtests.signflip_test(rng.normal(0.03, 1, 40 * n), n_resamples=B, key=seed)
    if name == "permutation_test":
        x, y = rng.normal(0, 1, 20 * n), rng.normal(0.05, 1, 20 * n)
        return jaxtests.permutation_test(x, y, n_resamples=B, key=seed)
    a = 0.2 + 0.02 * rng.standard_normal(n)
    b = a + 0.01 + 0.01 * rng.standard_normal(n)
    if name == "ttest_paired":
        return jaxtests.ttest_paired(a, b)
    if name == "ttest_corrected":
        return jaxtests.ttest_corrected(a, b, n_train=90, n_test=10)
    if name == "hotelling_t2":
        return jaxtests.hotelling_t2(rng.normal(0.8, 0.05, (n, 3)), rng.normal(0.79, 0.05, (n, 3)))
    if name == "anova":
        return jaxtests.anova(np.stack([a, b, a + 0.02 * rng.standard_normal(n)]))
    y = rng.integers(0, 2, 20 * n)
    pa = np.where(rng.random(20 * n) < 0.85, y, 1 - y)
    pb = np.where(rng.random(20 * n) < 0.80, y, 1 - y)
    if name == "swap_test":
        return jaxtests.swap_test(y, pa, pb, n_resamples=B, key=seed)
    if name == "mcnemar":
        return jaxtests.mcnemar(y, pa, pb)
    raise ValueError(name)


def worker_compile(families):
    import jax

    import jaxtests  # noqa: F401  (import outside the timings)

    counter = Compiles()
    rows = []
    # n = 10 folds (x20-40 instances), then 11: the same bucket (12 folds, 512/256 instances).
    for name in families:
        row = {"family": name}
        for tag, n, seed in (("first", 10, 0), ("warm", 10, 1), ("same_bucket", 11, 2)):
            t1 = time.perf_counter()
            jax.block_until_ready(_family_call(name, n, seed))
            row[tag] = {"s": time.perf_counter() - t1, **counter.take()}
        rows.append(row)
    return {"rows": rows, "cache_dir": _cache_in_force()}


WORKERS = {
    "analysis": lambda a: worker_analysis(a.lib, a.sizes),
    "import": lambda a: worker_import(a.sizes[0]),
    "incremental": lambda a: worker_incremental(a.sizes[0], a.sizes[1:2], a.sizes[2:]),
    "compile": lambda a: worker_compile(a.families),
}


# ---------------------------------------------------------------- driver


def spawn(worker, env, *, lib="jaxtests", sizes=(), families=()):
    """Run a worker in a fresh interpreter: (wall seconds including start-up, its JSON)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", worker, "--lib", lib]
    cmd += ["--sizes", *map(str, sizes)] if sizes else []
    cmd += ["--families", *families] if families else []
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"worker {worker} ({lib}) failed:\n{res.stderr[-4000:]}")
    return wall, json.loads(res.stdout.strip().splitlines()[-1])


def emit(record):
    print(json.dumps(record), flush=True)


def _mc_close(p, q, b=B):
    """Two Monte Carlo two-sided p-values of one test agree within 5 standard errors.

    A two-sided p is twice a one-sided estimate of p/2: variance p (2 - p) / b each.
    """
    pbar = (p + q) / 2
    return abs(p - q) <= 5 * (2 * pbar * (2 - pbar) / b) ** 0.5 + 2 / (b + 1)


def fmt_compiles(r):
    s = f"{r['compiles']} compiled"
    return s + (f", {r['cache_loads']} loaded" if r.get("cache_loads") else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="3 small data sets, about a minute")
    ap.add_argument("--keep", action="store_true", help="keep the temporary cache directories")
    ap.add_argument("--worker", choices=tuple(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--lib", default="jaxtests", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", type=int, nargs="*", default=(), help=argparse.SUPPRESS)
    ap.add_argument("--families", nargs="*", default=(), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker](args)))
        return

    import numpy as np

    smoke = args.smoke
    sizes = [int(v) for v in np.geomspace(150, 1000 if smoke else 10_000, 2 if smoke else 8)]
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}; python {sys.version.split()[0]}, jax {metadata.version('jax')}, "
        f"jaxlib {metadata.version('jaxlib')}, scipy {metadata.version('scipy')}, "
        f"numpy {metadata.version('numpy')}, JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')}"
    )
    print(f"analysis: m = {sizes}, {B} resamples per resampling test\n", flush=True)

    root = tempfile.mkdtemp(prefix="jaxtests-coldstart-")
    base = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    base["XDG_CACHE_HOME"] = os.path.join(root, "xdg")  # the default cache: never ~/.cache

    def env(cache):
        """The environment of a worker: cache None (off), or a directory under ``root``."""
        return base | {"JAXTESTS_CACHE_DIR": "" if cache is None else os.path.join(root, cache)}

    try:
        runs = {}
        plan = [
            ("scipy", "scipy", None),
            ("jaxtests, empty cache", "jaxtests", "analysis"),
            ("jaxtests, warm cache", "jaxtests", "analysis"),
            ("jaxtests, cache off", "jaxtests", None),
        ]
        for name, lib, cache in plan[:3] if smoke else plan:
            wall, out = spawn("analysis", env(cache), lib=lib, sizes=sizes)
            runs[name] = {"wall_s": wall, **out}
            emit({"phase": "analysis", "run": name, "wall_s": wall, **out})

        # Correctness first: the same tests give the same p-values (t exactly, Monte Carlo
        # within its error).
        for i, m in enumerate(sizes):
            ps = runs["scipy"]["rows"][i]["pvalues"]
            for name in [k for k in runs if k != "scipy"]:
                pj = runs[name]["rows"][i]["pvalues"]
                assert abs(ps[0] - pj[0]) <= 1e-9, (m, name, "ttest", ps[0], pj[0])
                assert _mc_close(ps[1], pj[1]), (m, name, "sign-flip", ps[1], pj[1])
                assert _mc_close(ps[2], pj[2]), (m, name, "two-sample", ps[2], pj[2])

        imports = []
        for _ in range(2 if smoke else 4):  # a run that fills the cache, then warm runs
            wall, out = spawn("import", env("import"), sizes=[1000])
            imports.append({"wall_s": wall, **out})
            emit({"phase": "import", "wall_s": wall, **out})
        wall, inc = spawn("incremental", env(None), sizes=[1000, 1003, 1200])
        emit({"phase": "incremental", **inc})
        per_process = [[f] for f in FAMILIES] if not smoke else [list(FAMILIES)]
        compile_rows = []
        for fams in per_process:
            _, out = spawn("compile", env(None), families=fams)
            compile_rows += out["rows"]
            emit({"phase": "compile", **out})
    finally:
        if args.keep:
            print(f"caches kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    # ------------------------------------------------------------ tables
    sp = runs["scipy"]["wall_s"]
    print("\n## The analysis, each run in a fresh process (import included)\n")
    names = list(runs)
    print("| m | " + " | ".join(names) + " |")
    print("| --- " * (len(names) + 1) + "|")
    for i, m in enumerate(sizes):
        cells = []
        for n in names:
            r = runs[n]["rows"][i]
            cells.append(f"{r['s']:.2f} s" + (f" ({fmt_compiles(r)})" if "compiles" in r else ""))
        print(f"| {m} | " + " | ".join(cells) + " |")
    print("| import | " + " | ".join(f"{runs[n]['import_s']:.2f} s" for n in names) + " |")
    tot = []
    for n in names:
        r = runs[n]
        c = sum(x.get("compiles", 0) for x in r["rows"])
        cs = sum(x.get("compile_s", 0) for x in r["rows"])
        lo = sum(x.get("cache_loads", 0) for x in r["rows"])
        extra = "" if n == "scipy" else f" ({c} compiled in {cs:.1f} s, {lo} loaded)"
        tot.append(f"**{r['wall_s']:.1f} s**{extra}")
    print("| total process | " + " | ".join(tot) + " |")
    print("| scipy / this | " + " | ".join(f"{sp / runs[n]['wall_s']:.2f}x" for n in names) + " |")
    print("\ncompile: XLA compilations and their seconds; loaded: programs read from the cache")
    for n in names[1:]:
        print(f"cache directory in force, {n}: {runs[n].get('cache_dir')}")

    print("\n## In one warm process (cache off): sign-flip (10^4 resamples) + paired t test\n")
    print("| m | what | time | compilations |")
    print("| --- | --- | --- | --- |")
    for r in inc["rows"]:
        print(
            f"| {r['m']} | {r['what']} | {1e3 * r['s']:.1f} ms | {r['compiles']} "
            f"({r['compile_s']:.2f} s compiling) |"
        )

    print("\n## import jaxtests and the first signflip_test (m = 1000, 10^4 resamples)\n")
    print("| process | import | first signflip_test | compilations | loaded at import |")
    print("| --- | --- | --- | --- | --- |")
    for i, r in enumerate(imports):
        what = "empty cache" if i == 0 else f"warm cache #{i}"
        print(
            f"| {what} | {r['import_s']:.2f} s | {r['first_signflip_s']:.3f} s | "
            f"{fmt_compiles(r)} | {', '.join(r['loaded_at_import']) or '-'} |"
        )

    how = "each family in its own fresh process" if not smoke else "all in one process"
    print(
        f"\n## Compile time per test (cache off, {how}; n = 10 folds, x40 instances for "
        "sign-flip, x20 per sample for two-sample, x20 for swap/mcnemar)\n"
    )
    print(
        "| test | first call | XLA compiling (programs) | same size, new data (compiled) "
        "| new size in the bucket, n = 11 (compiled) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for r in compile_rows:
        f, w, s = r["first"], r["warm"], r["same_bucket"]
        print(
            f"| {r['family']} | {f['s']:.2f} s | {f['compile_s']:.2f} s ({f['compiles']}) "
            f"| {1e3 * w['s']:.1f} ms ({w['compiles']}) | {1e3 * s['s']:.1f} ms "
            f"({s['compiles']}) |"
        )

    warm_imports = imports[1:]
    imp = sorted(r["import_s"] for r in warm_imports)[len(warm_imports) // 2]
    first = sorted(r["first_signflip_s"] for r in warm_imports)[len(warm_imports) // 2]
    inb = next(r["s"] for r in inc["rows"] if r["what"] == "same bucket")
    checks = [
        (
            "empty cache, scipy / jaxtests",
            sp / runs["jaxtests, empty cache"]["wall_s"],
            TARGETS["empty_cache_x"],
            ">=",
        ),
        (
            "warm cache, scipy / jaxtests",
            sp / runs["jaxtests, warm cache"]["wall_s"],
            TARGETS["warm_cache_x"],
            ">=",
        ),
        ("new size in a compiled bucket (s)", inb, TARGETS["in_bucket_s"], "<"),
        ("import jaxtests (s, median of warm runs)", imp, TARGETS["import_s"], "<"),
        ("first signflip_test, warm cache (s, median)", first, TARGETS["first_signflip_s"], "<"),
    ]
    print(f"\n## Targets (issue 12{'; --smoke: not the real workload' if smoke else ''})\n")
    print("| target | measured | goal | |")
    print("| --- | --- | --- | --- |")
    for what, v, goal, op in checks:
        ok = v >= goal if op == ">=" else v < goal
        print(f"| {what} | {v:.3g} | {op} {goal:g} | {'met' if ok else 'missed'} |")
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
