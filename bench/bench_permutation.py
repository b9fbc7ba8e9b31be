"""Benchmark of the permutation engine: workloads S, L, E vs scipy, mlxtend and two baselines.

S: sign-flip mean, m = 10,000, B = 10^6.  L: two-sample mean difference, n1 = n2 = 5,000,
B = 10^6.  E: exact sign-flip p of the mean at m = 30, 40, 48. Peers run at a B they can
finish and are scaled linearly. The machine's ceilings are measured first: random words per
second of the counter-based generator, masked float32 adds per second without the generator,
plain float32 throughput and a float32 matmul. ``--smoke`` shrinks everything to run in
seconds; ``--memory`` adds peak-RSS runs at B = 10^8 (S) and 10^7 (L) in subprocesses
(minutes).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import random as krandom
from jaxtests.kernels import resampling as kresampling

from jaxtests._permutation import permutation_test, signflip_test

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")

OPTS = {"xla_cpu_prefer_vector_width": 512}


def timed(fn, repeat=2):
    """(compile estimate, best warm run) of ``fn``, every call blocked until ready."""
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return max(first - best, 0.0), best


def numpy_lut(d, n_draws, rng):
    """Hand-written numpy baseline: byte lookup tables of partial sums."""
    m = d.size - d.size % 8
    pat = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)
    tab = d[:m].reshape(-1, 8) @ pat.T  # (m/8, 256)
    total = d.sum()
    count = 0
    for _ in range(max(1, n_draws // 1024)):
        by = rng.integers(0, 256, (1024, m // 8), dtype=np.uint8)
        p = tab[np.arange(m // 8), by].sum(1)
        count += np.sum(2 * p - total >= total)
    return count


@jax.jit
def jax_where_block(key, d):
    """Hand-written JAX baseline: where(bits, d, -d).sum() over one block of 1024 draws.

    Bits come from ``jax.random.bits`` words (threefry) unpacked with shifts.
    """
    m = d.shape[0]
    words = jax.random.bits(key, (1024, -(-m // 32)), jnp.uint32)
    bits = (words[:, :, None] >> jnp.arange(32, dtype=jnp.uint32)) & 1
    bits = bits.reshape(1024, -1)[:, :m]
    return jnp.sum(jnp.where(bits == 1, d, -d), axis=1)


def jax_where(d, n_draws, key):
    def body(i, acc):
        s = jax_where_block(jax.random.fold_in(key, i), d)
        return acc + jnp.sum(s >= jnp.sum(d))

    return lax.fori_loop(0, max(1, n_draws // 1024), body, jnp.int32(0))


def ceilings(n_words, lanes):
    """Throughput probes on the engine's own loop shape: (n_words, lanes) words per call."""
    r = jnp.arange(lanes, dtype=jnp.uint32)
    k0, k1 = jnp.full((lanes,), 7, jnp.uint32), jnp.full((lanes,), 9, jnp.uint32)
    d = jnp.asarray(np.random.default_rng(0).normal(size=(1, n_words, 32)), jnp.float32)

    @jax.jit
    def words_only(k0, k1):  # generator alone, consumed by an XOR (nearly free)
        def body(j, acc):
            return acc ^ krandom.keyed_words(k0, k1, r * jnp.uint32(n_words) + j.astype(jnp.uint32))

        return lax.fori_loop(0, n_words, body, jnp.zeros((lanes,), jnp.uint32))

    words_only = jax.jit(words_only.__wrapped__, compiler_options=OPTS)
    fixed = krandom.hash32(r)  # one word per lane, reused: the sums without the generator

    def adds_only(d):
        def body(j, acc):
            dj = lax.dynamic_index_in_dim(d, j, axis=1, keepdims=False)
            return acc + kresampling._word_sum(fixed ^ j.astype(jnp.uint32), dj)

        return lax.fori_loop(0, n_words, body, jnp.zeros((1, lanes), jnp.float32))

    adds_only = jax.jit(adds_only, compiler_options=OPTS)
    fused = jax.jit(lambda k0, k1, d: kresampling.bit_sums(k0, k1, r, d), compiler_options=OPTS)
    x = jnp.ones(2**16, jnp.float32)  # in cache: 200 dependent FMAs per element

    def fma(v):
        return lax.fori_loop(0, 200, lambda i, v: v * 1.0001 + 0.5, v, unroll=8)

    fma = jax.jit(fma, compiler_options=OPTS)
    a = jnp.ones((2048, 2048), jnp.float32)
    mm = jax.jit(lambda a: a @ a)
    key = jax.random.key(0)
    threefry = jax.jit(lambda k: jax.random.bits(k, (n_words * lanes,), jnp.uint32))
    _, t_w = timed(lambda: words_only(k0, k1), 3)
    _, t_a = timed(lambda: adds_only(d), 3)
    _, t_f = timed(lambda: fused(k0, k1, d), 3)
    _, t_fma = timed(lambda: fma(x), 3)
    _, t_mm = timed(lambda: mm(a), 3)
    _, t_tf = timed(lambda: threefry(key), 3)
    flips = 32 * n_words * lanes
    return {
        "workload": "ceiling",
        "keyed_words_Gword_s": n_words * lanes / t_w / 1e9,
        "keyed_words_Gbit_s": flips / t_w / 1e9,
        "threefry_Gbit_s": flips / t_tf / 1e9,
        "masked_adds_no_rng_Gflip_s": flips / t_a / 1e9,
        "bit_sums_fused_Gflip_s": flips / t_f / 1e9,
        "f32_fma_Gflop_s": 2 * 200 * x.size / t_fma / 1e9,
        "f32_matmul_GFLOP_s": 2 * 2048**3 / t_mm / 1e9,
        "lanes": lanes,
        "n_words": n_words,
    }


MEMORY_SCRIPT = r"""
import json, sys, time
import numpy as np
from jaxtests._permutation import permutation_test, signflip_test
what, B = sys.argv[1], int(float(sys.argv[2]))
rng = np.random.default_rng(0)
t0 = time.perf_counter()
if what == "S":
    r = signflip_test(rng.normal(0.01, 1, 10_000), n_resamples=B, key=1)
else:
    r = permutation_test(rng.normal(0, 1, 5000), rng.normal(0.02, 1, 5000), n_resamples=B, key=1)
p = float(r.pvalue)
t = time.perf_counter() - t0
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"workload": "memory " + what, "B": B, "s_incl_compile": t, "pvalue": p,
                  "peak_rss_MiB": peak / 1024}))
"""


def memory_run(what, b):
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, what, str(b)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--memory", action="store_true", help="peak RSS at B = 1e8 (S), 1e7 (L)")
    args = ap.parse_args()
    smoke = args.smoke
    info = {
        "device": str(jax.devices()[0]),
        "jax": jax.__version__,
        "cpus": os.cpu_count(),
        "load1": round(os.getloadavg()[0], 2),
    }
    rng = np.random.default_rng(0)
    m = 1000 if smoke else 10_000
    big_b = 20_000 if smoke else 1_000_000

    class _Rows(list):
        def append(self, r):  # print as measured, so a long run still reports
            print(json.dumps({**info, **r}), flush=True)
            super().append(r)

    rows = _Rows()

    # Correctness first: exact small cases against numpy enumeration.
    d_small = rng.normal(0.3, 1, 10)
    pats = ((np.arange(1024)[:, None] >> np.arange(10)) & 1) * 2 - 1
    t = (pats * d_small).mean(1)
    ref = min(
        1, 2 * min(np.mean(t >= d_small.mean() - 1e-12), np.mean(t <= d_small.mean() + 1e-12))
    )
    assert abs(float(signflip_test(d_small, method="exact").pvalue) - ref) < 1e-12
    xs_small, ys_small = rng.normal(0, 1, 7), rng.normal(0.8, 1, 6)
    ex = permutation_test(xs_small, ys_small, method="exact")
    mc = permutation_test(xs_small, ys_small, method="monte-carlo", n_resamples=20_000, key=3)
    lo, hi = np.asarray(mc.pvalue_interval)
    assert lo <= float(ex.pvalue) <= hi, "Monte Carlo L outside its 99% interval of the exact p"

    if not smoke:
        with jax.enable_x64(True):  # as the engine runs (float64 group sums)
            rows.append(ceilings(313, 2**17))

    # S
    d = rng.normal(0.01, 1, m)
    comp, run = timed(lambda: signflip_test(d, n_resamples=big_b, key=1).pvalue)
    rows.append(
        {
            "workload": "S",
            "impl": "jaxtests",
            "m": m,
            "B": big_b,
            "s": run,
            "compile_s": comp,
            "Gflip_s": m * big_b / run / 1e9,
        }
    )
    b_np = 4096 if smoke else 16_384
    t0 = time.perf_counter()
    numpy_lut(d, b_np, rng)
    t_np = (time.perf_counter() - t0) * big_b / b_np
    rows.append(
        {"workload": "S", "impl": "numpy-lut", "s_scaled": t_np, "Gflip_s": m * big_b / t_np / 1e9}
    )
    b_jw = 20_000 if smoke else 100_000
    comp, run = timed(lambda: jax_where(jnp.asarray(d), b_jw, jax.random.key(2)), 1)
    t_jw = run * big_b / b_jw
    rows.append(
        {"workload": "S", "impl": "jax-where", "s": t_jw, "Gflip_s": m * big_b / t_jw / 1e9}
    )
    from scipy import stats

    b_sp = 200 if smoke else 2000
    t0 = time.perf_counter()
    stats.permutation_test(
        (d,),
        lambda v, axis: np.mean(v, axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=b_sp,
        batch=100,
        random_state=0,
    )
    t_sp = (time.perf_counter() - t0) * big_b / b_sp
    rows.append(
        {"workload": "S", "impl": "scipy", "s_scaled": t_sp, "Gflip_s": m * big_b / t_sp / 1e9}
    )

    # L, with the fused pass alone (fair bits, no size correction) as its floor.
    n1 = m // 2
    xs, ys = rng.normal(0, 1, n1), rng.normal(0.02, 1, n1)
    comp, run = timed(lambda: permutation_test(xs, ys, n_resamples=big_b, key=1).pvalue, 1)
    rows.append(
        {
            "workload": "L",
            "impl": "jaxtests",
            "n1": n1,
            "B": big_b,
            "s": run,
            "compile_s": comp,
            "Gelem_s": 2 * n1 * big_b / run / 1e9,
        }
    )
    if not smoke:
        _, run_s = timed(
            lambda: signflip_test(np.concatenate([xs, ys]), n_resamples=big_b, key=1).pvalue, 1
        )
        rows.append({"workload": "L", "impl": "jaxtests fused pass only (= S on n)", "s": run_s})
        rows.append(
            {"workload": "L", "impl": "jaxtests size corrections (L - pass)", "s": run - run_s}
        )
    t0 = time.perf_counter()
    stats.permutation_test(
        (xs, ys),
        lambda a, b, axis: a.mean(axis) - b.mean(axis),
        vectorized=True,
        n_resamples=b_sp,
        batch=100,
        random_state=0,
    )
    t_sp = (time.perf_counter() - t0) * big_b / b_sp
    rows.append({"workload": "L", "impl": "scipy", "s_scaled": t_sp})
    try:
        from mlxtend.evaluate import permutation_test as mlx

        b_ml = 100 if smoke else 500
        t0 = time.perf_counter()
        mlx(xs, ys, method="approximate", num_rounds=b_ml, seed=0)
        rows.append(
            {
                "workload": "L",
                "impl": "mlxtend",
                "s_scaled": (time.perf_counter() - t0) * big_b / b_ml,
            }
        )
    except ImportError:
        pass

    # E
    for me in (20, 30) if smoke else (30, 40, 48):
        de = rng.normal(0.2, 1, me)
        comp, run = timed(lambda de=de: signflip_test(de, method="exact").pvalue, 1)
        rows.append({"workload": "E", "impl": "jaxtests", "m": me, "s": run, "compile_s": comp})

    if args.memory:
        rows.append({**memory_run("S", 1e6), "note": "reference, same process layout"})
        rows.append(memory_run("S", 1e8))
        rows.append(memory_run("L", 1e6))
        rows.append(memory_run("L", 1e7))

    s = {r["impl"]: r for r in rows if r.get("workload") == "S"}
    ours = s["jaxtests"]["s"]
    print(
        f"S ratios: vs jax-where x{s['jax-where']['s'] / ours:.2f}, vs numpy-lut "
        f"x{s['numpy-lut']['s_scaled'] / ours:.1f}, vs scipy x{s['scipy']['s_scaled'] / ours:.0f}"
    )
    el = {r["impl"]: r for r in rows if r.get("workload") == "L"}
    print(f"L ratios: vs scipy x{el['scipy']['s_scaled'] / el['jaxtests']['s']:.0f}", end="")
    if "mlxtend" in el:
        print(f", vs mlxtend x{el['mlxtend']['s_scaled'] / el['jaxtests']['s']:.0f}", end="")
    print()


if __name__ == "__main__":
    main()
