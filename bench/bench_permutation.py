"""Benchmark of the permutation engine: workloads S, L, E vs scipy, mlxtend and two baselines.

S: sign-flip mean, m = 10,000, B = 10^6.  L: two-sample mean difference, n1 = n2 = 5,000,
B = 10^6.  E: exact sign-flip p of the mean at m = 30, 40, 48.  Peers run at a B they can
finish and are scaled linearly. ``--smoke`` shrinks everything to run in seconds.
"""

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtests._permutation import permutation_test, signflip_test


def timed(fn, repeat=2):
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return first - best, best  # (compile estimate, run)


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
    """Hand-written JAX baseline: where(bits, d, -d).sum() over one block of 1024 draws."""
    bits = jax.random.bits(key, (1024, d.shape[0]), jnp.uint8) & 1
    return jnp.sum(jnp.where(bits == 1, d, -d), axis=1)


def jax_where(d, n_draws, key):
    def body(i, acc):
        s = jax_where_block(jax.random.fold_in(key, i), d)
        return acc + jnp.sum(s >= jnp.sum(d))

    return lax.fori_loop(0, max(1, n_draws // 1024), body, jnp.int32(0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    smoke = args.smoke
    info = {"device": str(jax.devices()[0]), "jax": jax.__version__}
    rng = np.random.default_rng(0)
    m = 1000 if smoke else 10_000
    big_b = 20_000 if smoke else 1_000_000
    rows = []

    class _Rows(list):
        def append(self, r):  # print as measured, so a long run still reports
            print(json.dumps({**info, **r}), flush=True)
            super().append(r)

    rows = _Rows()

    # Correctness first: exact small case against numpy enumeration.
    d_small = rng.normal(0.3, 1, 10)
    pats = ((np.arange(1024)[:, None] >> np.arange(10)) & 1) * 2 - 1
    t = (pats * d_small).mean(1)
    ref = min(
        1, 2 * min(np.mean(t >= d_small.mean() - 1e-12), np.mean(t <= d_small.mean() + 1e-12))
    )
    assert abs(float(signflip_test(d_small, method="exact").pvalue) - ref) < 1e-12

    # Ceilings: random bits and float throughput of this machine.
    n = 2**24
    k = jax.random.key(0)
    _, tb = timed(lambda: jax.random.bits(k, (n,), jnp.uint32))
    x = jnp.ones(n, jnp.float32)
    _, tf = timed(lambda: jax.jit(lambda v: v * 1.5 + 2.0)(x))
    rows.append(
        {"workload": "ceiling", "threefry_Gbit_s": 32 * n / tb / 1e9, "float_Gop_s": n / tf / 1e9}
    )

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
    comp, run = timed(lambda: jax_where(jnp.asarray(d), big_b, jax.random.key(2)))
    rows.append({"workload": "S", "impl": "jax-where", "s": run, "Gflip_s": m * big_b / run / 1e9})
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

    # L
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

    s = {r["impl"]: r for r in rows if r.get("workload") == "S"}
    ours = s["jaxtests"]["s"]
    print(
        f"S ratios: vs jax-where x{s['jax-where']['s'] / ours:.2f}, vs numpy-lut "
        f"x{s['numpy-lut']['s_scaled'] / ours:.1f}, vs scipy x{s['scipy']['s_scaled'] / ours:.0f}"
    )


if __name__ == "__main__":
    main()
