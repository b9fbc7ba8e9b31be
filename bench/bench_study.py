"""Benchmark of jaxtests.study.power: the sign-flip power study as one batched job.

Workload (issue 7): 10,000 simulated experiments of m = 30 paired differences, each
tested by the sign-flip permutation test with 10,000 draws (10^8 draws x m), in
blocks of 1024 experiments per engine call (bounded memory). The peer is a scipy
loop of the same study, ``scipy.stats.permutation_test(permutation_type="samples",
vectorized=True)`` per experiment, timed on a few experiments and scaled. The
closed-form tests (t, Wilcoxon, sign) are timed against scipy's vectorised calls.

    python bench/bench_study.py            # full workload
    python bench/bench_study.py --smoke    # seconds
"""

import argparse
import json
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from jaxtests import study
from jaxtests._studies.generators import _simulate

# Warm figures are the optimised programs that a loop of calls reaches after its eighth call
# (jaxtests._aot's compile tiers); first calls as a user meets them: bench_cold_tour.py.
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")


def _mean_stat(x, axis):
    return np.mean(x, axis=axis)


def _check_correctness():
    """Exact sign-flip, t, Wilcoxon and sign p-values equal scipy's on a small study."""
    n, m, seed = 20, 10, 3
    res = study.power(
        ["t", "signflip_mean", "wilcoxon", "sign"],
        "normal",
        n_experiments=n,
        m=m,
        effect=0.5,
        key=seed,
        keep_pvalues=True,
    )
    with jax.enable_x64(True):
        d = np.asarray(
            _simulate(
                study.generator("normal"), jax.random.fold_in(jax.random.key(seed), 0), 0.5, n, m
            )
        )
    p = np.asarray(res.pvalues[:, 0])
    ref = np.array(
        [
            stats.ttest_1samp(d, 0.0, axis=-1).pvalue,
            [
                stats.permutation_test(
                    (r,),
                    _mean_stat,
                    permutation_type="samples",
                    n_resamples=np.inf,
                    vectorized=True,
                ).pvalue
                for r in d
            ],
            stats.wilcoxon(d, axis=-1).pvalue,
            [stats.binomtest(int((r > 0).sum()), m).pvalue for r in d],
        ]
    )
    err = float(np.max(np.abs(p - ref) / ref))
    assert err < 1e-9, err
    return err


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    n_exp, n_res, m = (600, 1000, 30) if args.smoke else (10_000, 10_000, 30)
    n_scipy = 3 if args.smoke else 20
    device = jax.devices()[0].device_kind
    meta = {
        "device": device,
        "jax": jax.__version__,
        "python": platform.python_version(),
        "cpu_count": __import__("os").cpu_count(),
        "smoke": args.smoke,
    }

    err = _check_correctness()
    print(f"correctness: max relative p-value error vs scipy (exact) = {err:.2e}")

    # Compile (one engine call on a full block of 1024 experiments, same n_resamples).
    t_compile, _ = _time(
        lambda: study.power(
            ["signflip_mean"],
            "normal",
            n_experiments=min(1024, n_exp),
            m=m,
            effect=0.3,
            n_resamples=n_res,
            key=1,
        )
    )
    # Warm run of the full study.
    t_jax, res = _time(
        lambda: study.power(
            ["signflip_mean"],
            "normal",
            n_experiments=n_exp,
            m=m,
            effect=0.3,
            n_resamples=n_res,
            key=2,
        )
    )
    draws = n_exp * n_res
    rate_jax = draws / t_jax

    rng = np.random.default_rng(0)
    d = rng.standard_normal((n_scipy, m)) + 0.3

    def scipy_loop():
        return [
            stats.permutation_test(
                (row,),
                _mean_stat,
                permutation_type="samples",
                vectorized=True,
                n_resamples=n_res,
                random_state=rng,
            ).pvalue
            for row in d
        ]

    t_scipy_small, _ = _time(scipy_loop)
    t_scipy = t_scipy_small * n_exp / n_scipy
    rate_scipy = n_scipy * n_res / t_scipy_small
    print(f"sign-flip power study: {n_exp} experiments x {n_res} draws x m={m}")
    print(
        f"  jaxtests: {t_jax:.2f} s warm (first block compile+run {t_compile:.2f} s), "
        f"{rate_jax:.3g} draws x instances/s; rejection rate "
        f"{float(res.rejection_rate[0, 0]):.3f}, engine method {res.signflip_methods}"
    )
    print(
        f"  scipy loop: {t_scipy_small:.2f} s for {n_scipy} experiments -> {t_scipy:.1f} s "
        f"scaled, {rate_scipy:.3g} draws/s"
    )
    print(f"  speed-up jaxtests / scipy: {t_scipy / t_jax:.1f}x")
    print(
        json.dumps(
            {
                "bench": "study_power_signflip",
                **meta,
                "n_experiments": n_exp,
                "n_resamples": n_res,
                "m": m,
                "jaxtests_s": round(t_jax, 3),
                "compile_block_s": round(t_compile, 3),
                "scipy_scaled_s": round(t_scipy, 2),
                "jaxtests_rate": rate_jax,
                "scipy_rate": rate_scipy,
                "ratio": t_scipy / t_jax,
            }
        )
    )

    # Closed-form tests on the same number of experiments.
    tests = ["t", "wilcoxon", "sign"]
    study.power(tests, "normal", n_experiments=n_exp, m=m, effect=0.3, key=3)  # compile
    t_cf, _ = _time(
        lambda: study.power(tests, "normal", n_experiments=n_exp, m=m, effect=0.3, key=4)
    )
    dd = rng.standard_normal((n_exp, m)) + 0.3

    def scipy_closed():
        stats.ttest_1samp(dd, 0.0, axis=-1)
        stats.wilcoxon(dd, axis=-1)
        pos = (dd > 0).sum(-1)
        return [stats.binomtest(int(k), m).pvalue for k in pos]

    t_cf_scipy, _ = _time(scipy_closed)
    print(
        f"closed-form t + Wilcoxon + sign on {n_exp} experiments: jaxtests {t_cf:.3f} s, "
        f"scipy {t_cf_scipy:.3f} s, ratio {t_cf_scipy / t_cf:.1f}x"
    )
    print(
        json.dumps(
            {
                "bench": "study_power_closed_form",
                **meta,
                "n_experiments": n_exp,
                "m": m,
                "jaxtests_s": round(t_cf, 4),
                "scipy_s": round(t_cf_scipy, 4),
                "ratio": t_cf_scipy / t_cf,
            }
        )
    )
    jnp.zeros(1).block_until_ready()


if __name__ == "__main__":
    main()
