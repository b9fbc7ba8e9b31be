"""The engine on an accelerator, side by side with hand-written kernels and the host's CPU.

Run on whatever accelerator JAX sees (a GPU), in one process: jaxtests on the device (first
call and best warm call), a hand-written dense JAX kernel in float32 and float64 (per block of
8,192 draws: ``jax.random.bits`` words unpacked with shifts, ``where(bit, d, -d).sum``, ``|T| >=
|t|`` counted; XLA fuses it into one kernel per block) and its "tree" variant (each word's terms
by a float32 tree, word sums in float64: the first "dense32" family's arithmetic) and its
"bytes" and "nibbles" variants (a float64 table lookup per 8 or 4 instances), torch
(``where`` and matmul variants) when it is installed, jaxtests with each accelerator family
forced (``--families``, default "dense,dense32": same key, so the p-value must not change), and
jaxtests on the host CPU (``JAX_PLATFORMS=cpu``, a subprocess).
Workloads: sign-flip mean at m = 10^4 (10^6, 10^7, 10^8 draws), m = 10^5 and 10^6 (10^5
draws), 1000 hypotheses x m = 1000, a callable median; two-sample 5,000 + 5,000 (10^6, 10^7);
exact sign flips at m = 40 and 48; permutation_test_score (ridge, logistic); a permutation
ANOVA; a swap test of AUC; and the cold start (a first call in a fresh process, cache off and
on). Correctness first: the device's p-values must equal the host's (same key, same counts).

``--smoke`` runs one tiny workload of each kind in seconds (CI runs it); on a CPU it runs the
"device" side with the dense evaluators (``JAXTESTS_EVALUATORS=dense``) against the host's
default ones, so the two families are compared too. ``--only A,B`` runs the workloads whose
name contains A or B (``=NAME``: is NAME). Prints one JSON line per row and a table; record the
figures in bench/RESULTS.md with the device's name.
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxtests
from jaxtests import datasets, models

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")

BLOCK = 8192


def timed(fn, repeat=2, slow=10.0):
    """(first call, best warm call) of ``fn`` in seconds, each blocked until ready.

    A first call over ``slow`` seconds is timed once more at most (a lease is short).
    """
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    best = np.inf
    for _ in range(min(repeat, 1) if first > slow else repeat):
        t0 = time.perf_counter()
        out = jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return first, best, out


def _hand_block(key, d, t_obs, block):
    m = d.shape[-1]
    words = jax.random.bits(key, (block, -(-m // 32)), jnp.uint32)
    bits = (words[:, :, None] >> jnp.arange(32, dtype=jnp.uint32)) & 1
    bits = bits.reshape(block, -1)[:, :m]
    t = jnp.sum(jnp.where(bits == 1, d, -d), axis=1)
    return jnp.sum(jnp.abs(t) >= jnp.abs(t_obs), dtype=jnp.int32)


def _hand_block_tree(key, d, t_obs, block):
    # The first "dense32" family's arithmetic in the hand kernel's blocks: each word's 32 terms
    # by a five-level float32 tree of elementwise adds, the word sums in float64 (on an H200 it
    # ran 3x slower than the flat float32 reduction, whose bound is gamma_{32 W}, not gamma_6).
    n_words = -(-d.shape[-1] // 32)
    dw = jnp.pad(d, (0, 32 * n_words - d.shape[-1])).reshape(n_words, 32)
    words = jax.random.bits(key, (block, n_words), jnp.uint32)
    bits = (words[:, :, None] >> jnp.arange(32, dtype=jnp.uint32)) & 1
    x = jnp.where(bits == 1, dw, -dw)  # (block, W, 32)
    while x.shape[-1] > 1:
        x = x[..., : x.shape[-1] // 2] + x[..., x.shape[-1] // 2 :]
    t = jnp.sum(x[..., 0].astype(jnp.float64), axis=1)
    return jnp.sum(jnp.abs(t) >= jnp.abs(t_obs), dtype=jnp.int32)


def _hand_block_tables(key, d, t_obs, block, nb):
    # A table per group of nb instances (2^nb sums of its selected values, float64, added in
    # bit order): one gather and one add per nb instances instead of nb selects and adds (the
    # words family's byte tables, in the dense shape). The sums' bound is within the dense
    # family's gamma_{32 W} (gamma_{32 W / nb + nb - 1}): an idea for the dense sums to measure.
    n_words = -(-d.shape[-1] // 32)
    per = 32 // nb
    dw = jnp.pad(d, (0, 32 * n_words - d.shape[-1])).reshape(n_words * per, 1, nb)
    v = jnp.arange(2**nb, dtype=jnp.uint32)
    vb = ((v[:, None] >> jnp.arange(nb, dtype=jnp.uint32)) & 1) == 1  # (2^nb, nb)
    terms = jnp.where(vb[None], dw, -dw)
    table = terms[..., 0]
    for k in range(1, nb):
        table = table + terms[..., k]
    table = table.reshape(-1)  # (groups 2^nb,)
    words = jax.random.bits(key, (block, n_words), jnp.uint32)
    pieces = (words[:, :, None] >> (jnp.arange(per, dtype=jnp.uint32) * nb)) & (2**nb - 1)
    idx = pieces.reshape(block, -1).astype(jnp.int32) + jnp.arange(n_words * per) * 2**nb
    t = jnp.sum(jnp.take(table, idx, mode="clip"), axis=1)
    return jnp.sum(jnp.abs(t) >= jnp.abs(t_obs), dtype=jnp.int32)


def hand_dense(d, n_draws, dtype, tree=False, tables=0):
    """The hand-written dense kernel: ``n_draws`` sign flips of ``d`` in ``dtype``; a count.

    ``tree``: each word's terms by a float32 tree, word sums in float64 (``dtype`` float32).
    ``tables``: a table lookup per ``tables`` instances (8: bytes, 4: nibbles).
    """
    d = jnp.asarray(d, dtype)
    block = min(BLOCK, n_draws)
    n_blocks = max(1, n_draws // block)
    one_block = _hand_block_tree if tree else _hand_block
    if tables:
        one_block = functools.partial(_hand_block_tables, nb=tables)

    @jax.jit
    def run(key, d):
        t_obs = jnp.sum(d)

        def body(i, acc):
            return acc + one_block(jax.random.fold_in(key, i), d, t_obs, block)

        return lax.fori_loop(0, n_blocks, body, jnp.int32(0))

    return lambda: run(jax.random.key(0), d)


def torch_variants(d, n_draws):
    """``{name: thunk}`` of torch sign-flip kernels on the device, or {} without torch."""
    try:
        import torch
    except ImportError:
        return {}
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dt = torch.tensor(np.asarray(d, np.float32), device=dev)
    block = max(1, min(BLOCK, 2**27 // dt.numel()))  # int8 draws of a block: 128 MiB at most
    n_blocks = max(1, n_draws // block)

    def sync(x):
        if dev == "cuda":
            torch.cuda.synchronize()
        return x

    def where():
        g = torch.Generator(device=dev).manual_seed(0)
        count = 0
        for _ in range(n_blocks):
            bits = torch.randint(
                0, 2, (block, dt.numel()), generator=g, device=dev, dtype=torch.int8
            )
            bits = bits.bool()
            t = torch.where(bits, dt, -dt).sum(1)
            count += int((t.abs() >= dt.sum().abs()).sum())
        return sync(count)

    def matmul():
        g = torch.Generator(device=dev).manual_seed(0)
        count = 0
        for _ in range(n_blocks):
            s = torch.randint(0, 2, (block, dt.numel()), generator=g, device=dev, dtype=torch.int8)
            s = s.float() * 2 - 1
            t = s @ dt
            count += int((t.abs() >= dt.sum().abs()).sum())
        return sync(count)

    return {"torch-where f32": where, "torch-matmul f32": matmul}


def workloads(smoke):
    """``[(name, thunk, d_or_None, n_draws)]``; a thunk returns a result with ``pvalue``.

    ``d`` (plain sign flips of one hypothesis) is what the hand-written kernels run on.
    """
    rng = np.random.default_rng(0)
    out = []

    def signflip(m, n, h=1):
        d = rng.normal(0.01, 1.0, (h, m) if h > 1 else m)
        name = f"signflip {h} hypotheses x m={m} B={n}" if h > 1 else f"signflip m={m} B={n}"
        fn = lambda: jaxtests.signflip_test(d, n_resamples=n, key=1)  # noqa: E731
        out.append((name, fn, d if h == 1 else None, n))

    def twosample(k, n):
        x, y = rng.normal(0.01, 1, k), rng.normal(0, 1, k)
        fn = lambda: jaxtests.permutation_test(x, y, n_resamples=n, key=2)  # noqa: E731
        out.append((f"two-sample {k}+{k} B={n}", fn, None, n))

    def exact(m):
        d = rng.normal(0.2, 1, m)
        out.append((f"exact m={m}", lambda: jaxtests.signflip_test(d, method="exact"), None, 2**m))

    if smoke:  # one of each kind, seconds on a CPU
        signflip(200, 2000)
        signflip(50, 1000, h=4)
        twosample(100, 2000)
        exact(20)
        return out
    for m, n in ((10_000, 10**6), (10_000, 10**7), (10_000, 10**8)):
        signflip(m, n)
    signflip(100_000, 10**5)
    signflip(1_000_000, 10**5)
    signflip(1000, 10**5, h=1000)
    d = rng.normal(0.01, 1.0, 10_000)
    out.append(
        (
            "signflip median m=10000 B=1000000",
            lambda: jaxtests.signflip_test(d, statistic=jnp.median, n_resamples=10**6, key=1),
            None,
            10**6,
        )
    )
    twosample(5000, 10**6)
    twosample(5000, 10**7)
    exact(40)
    exact(48)
    X, yb = datasets.load_breast_cancer()
    for name, model, n in (
        ("ridge", models.ridge_classifier(), 10**5),
        ("logistic", models.logistic(), 1000),
    ):
        out.append(
            (
                f"permutation_test_score {name} n=569 B={n}",
                lambda model=model, n=n: jaxtests.permutation_test_score(
                    model, X, yb, n_permutations=n, key=3
                ),
                None,
                n,
            )
        )
    folds = rng.normal(0, 1, (5, 30)) + np.arange(5)[:, None] * 0.05
    out.append(
        (
            "anova permutation 5x30 B=100000",
            lambda: jaxtests.anova(folds, method="permutation", n_resamples=10**5, key=4),
            None,
            10**5,
        )
    )
    yt = rng.integers(0, 2, 5000)
    sa, sb = yt + rng.normal(0, 1.0, 5000), yt + rng.normal(0, 1.1, 5000)
    out.append(
        (
            "swap AUC n=5000 B=100000",
            lambda: jaxtests.swap_test(yt, sa, sb, measure="auc", n_resamples=10**5, key=5),
            None,
            10**5,
        )
    )
    return out


def _pvalue(r):
    p = getattr(r, "pvalue", r)
    return np.asarray(p).ravel().tolist()


def _selected(name, only):
    """``--only``: comma-separated parts, each contained in the name (``=NAME``: equal to it)."""
    parts = [p for p in only.split(",") if p]
    return not parts or any(name == p[1:] if p[:1] == "=" else p in name for p in parts)


def run_jaxtests(smoke, only, budget=np.inf, log=None, last=()):
    """One row per workload; none is started after ``budget`` seconds (the rest are skipped).

    ``last`` names workloads run after all others (the host CPU's slowest). Each row is
    printed (and appended to ``log``) as soon as it is measured.
    """
    rows, t_start = [], time.perf_counter()
    todo = [w for w in workloads(smoke) if _selected(w[0], only)]
    todo.sort(key=lambda w: any(x in w[0] for x in last))
    for name, fn, _, n in todo:
        if time.perf_counter() - t_start > budget:
            print(f"skipped (over the budget of {budget} s): {name}", file=sys.stderr, flush=True)
            continue
        first, best, r = timed(fn, repeat=1 if n >= 10**8 else 2)
        row = {"workload": name, "first_s": first, "warm_s": best, "pvalue": _pvalue(r)}
        rows.append(row)
        print(f"  {name:44} first {first:8.3f} s  warm {best:8.4f} s", file=sys.stderr, flush=True)
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(row) + "\n")
    return rows


def cold_start(smoke):
    """First call in a fresh process (cache off; then an empty and a filled cache)."""
    m = 300 if smoke else 10_000
    code = (
        "import time, numpy as np; t0 = time.perf_counter(); import jaxtests; "
        f"d = np.random.default_rng(0).normal(size={m}); "
        "jaxtests.signflip_test(d, n_resamples=10**4, key=0); "
        "print(time.perf_counter() - t0)"
    )
    out = {}
    caches = (("off", ""),) if smoke else (("off", ""), ("empty", "c"), ("filled", "c"))
    with tempfile.TemporaryDirectory() as tmp:
        for label, cache in caches:
            cache = os.path.join(tmp, cache) if cache else ""
            env = dict(os.environ, JAXTESTS_CACHE_DIR=cache, XDG_CONFIG_HOME=tmp + "/cfg")
            res = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            out[label] = float(res.stdout.strip().splitlines()[-1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds, on any backend")
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    ap.add_argument("--budget", type=float, default=np.inf, help="start no workload after S s")
    ap.add_argument("--host-budget", type=float, default=np.inf, help="the same for the host CPU")
    ap.add_argument("--no-host", action="store_true", help="skip jaxtests on the host CPU")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold starts")
    ap.add_argument("--no-others", action="store_true", help="skip the hand kernels and torch")
    ap.add_argument("--no-torch", action="store_true", help="skip torch")
    ap.add_argument(
        "--families",
        default="dense,dense32",
        help="evaluator families also timed beside the hand kernels (comma-separated; '' none)",
    )
    ap.add_argument("--log", default="", help="append every measured row to this JSON-lines file")
    ap.add_argument("--host", action="store_true", help=argparse.SUPPRESS)  # the CPU child
    args = ap.parse_args()
    if args.host:
        rows = run_jaxtests(args.smoke, args.only, args.budget, args.log, last=("median",))
        print(json.dumps(rows))
        return
    device = jax.devices()[0]
    if args.smoke and device.platform == "cpu":
        os.environ["JAXTESTS_EVALUATORS"] = "dense"  # the accelerator family, on this CPU
    from jaxtests import _profile

    meta = {
        "device": device.device_kind,
        "platform": device.platform,
        "jax": jax.__version__,
        "family": _profile.current().family.name,
    }
    print(json.dumps(meta), flush=True)
    rows = run_jaxtests(args.smoke, args.only, args.budget, args.log)
    # The hand-written kernels, torch and each accelerator family on the same workloads
    # (plain sign flips only).
    hand, mismatched = {}, []
    for name, _, d, n in workloads(args.smoke):
        if d is None or args.no_others or not _selected(name, args.only):
            continue
        variants = {}
        with jax.enable_x64(True):
            for label, dtype in (("hand f32", jnp.float32), ("hand f64", jnp.float64)):
                variants[label] = timed(hand_dense(d, n, dtype))[1]
            variants["hand f32 tree"] = timed(hand_dense(d, n, jnp.float32, tree=True))[1]
            for label, nb in (("hand f64 bytes", 8), ("hand f64 nibbles", 4)):
                variants[label] = timed(hand_dense(d, n, jnp.float64, tables=nb))[1]
        # jaxtests with each accelerator family forced: same key, so the same p-value.
        main_p = next((r["pvalue"] for r in rows if r["workload"] == name), None)
        before = os.environ.get("JAXTESTS_EVALUATORS")
        for fam in [f for f in args.families.split(",") if f]:
            os.environ["JAXTESTS_EVALUATORS"] = fam
            fn = lambda d=d, n=n: jaxtests.signflip_test(d, n_resamples=n, key=1)  # noqa: E731
            _, best, res = timed(fn, repeat=1 if n >= 10**8 else 2)
            variants[f"jaxtests {fam}"] = best
            if main_p is not None and _pvalue(res) != main_p:
                mismatched.append(f"{name} ({fam})")
        os.environ.pop("JAXTESTS_EVALUATORS", None)
        if before is not None:
            os.environ["JAXTESTS_EVALUATORS"] = before
        for label, thunk in ({} if args.no_torch else torch_variants(d, n)).items():
            variants[label] = timed(thunk)[1]
        hand[name] = variants
        print(f"  {name:44} {variants}", file=sys.stderr, flush=True)
        if args.log:
            with open(args.log, "a") as f:
                f.write(json.dumps({"workload": name, **variants}) + "\n")
    # jaxtests on the host CPU, same workloads and keys: p-values must agree bit for bit.
    env = {k: v for k, v in os.environ.items() if k != "JAXTESTS_EVALUATORS"}
    env["JAX_PLATFORMS"] = "cpu"
    cmd = [sys.executable, __file__, "--host", *(["--smoke"] if args.smoke else [])]
    cmd += ["--only", args.only] if args.only else []
    cmd += ["--budget", str(args.host_budget)]
    cmd += ["--log", args.log + ".host"] if args.log else []
    host = []
    if not args.no_host:
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
        host = json.loads(out.split("\n")[-2])
    host = {r["workload"]: r for r in host}
    print(f"{'workload':44} {'device':>9} {'first':>8} {'host CPU':>9}  others")
    same = not mismatched
    if mismatched:
        print(f"a forced family changed a p-value: {mismatched}", file=sys.stderr)
    for r in rows:
        h = host.get(r["workload"], {})
        same &= not h or h.get("pvalue") == r["pvalue"]
        others = hand.get(r["workload"], {})
        r.update(
            host_warm_s=h.get("warm_s"), same_as_host=h.get("pvalue", r["pvalue"]) == r["pvalue"]
        )
        r.update({k.replace(" ", "_") + "_s": v for k, v in others.items()})
        text = "  ".join(f"{k} {v:.4f}s ({v / r['warm_s']:.2f}x)" for k, v in others.items())
        host_s = f"{h['warm_s']:.4f}" if h else "-"
        print(
            f"{r['workload']:44} {r['warm_s']:9.4f} {r['first_s']:8.2f} {host_s:>9}  {text}",
            flush=True,
        )
        print(json.dumps({**meta, **r}))
    if args.no_cold:
        return _exit(same, rows)
    cold = cold_start(args.smoke)
    print(json.dumps({**meta, "cold_start_s": cold}))
    print(f"cold start (import + first signflip_test): {cold}")
    _exit(same, rows)


def _exit(same, rows):
    if not same:
        bad = [r["workload"] for r in rows if not r["same_as_host"]] or "(a forced family)"
        print(f"p-values differ between the device and the host CPU: {bad}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
