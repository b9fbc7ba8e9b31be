"""The benchmarks keep working: the GPU benchmark's smoke run on this CPU (the dense evaluators
against the host's word evaluators, same keys, same p-values, or it exits non-zero) and the
cold tour's (first calls in fresh processes)."""

import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "bench_gpu.py")


def test_bench_gpu_smoke_runs_and_agrees_with_the_host():
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("JAXTESTS_EVALUATORS", None)
    res = subprocess.run(
        [sys.executable, BENCH, "--smoke"], env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "signflip m=200 B=2000" in res.stdout and "cold start" in res.stdout


def test_bench_cold_tour_smoke_runs():
    # Issue 37: the cold tour (first calls in fresh processes, cache off) keeps working,
    # and a new size inside a bucket compiles nothing on its three calls.
    tour = os.path.join(os.path.dirname(BENCH), "bench_cold_tour.py")
    res = subprocess.run(
        [sys.executable, tour, "--smoke"], capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [line for line in res.stdout.splitlines() if line.startswith("| `")]
    assert len(lines) == 3 and "new sizes that compiled" not in res.stdout, res.stdout
    assert all(line.split("|")[6].strip().endswith("(0)") for line in lines), res.stdout


def test_bench_clusters_smoke_runs():
    # Issue 38: the clustered tests' benchmark keeps working; its CR1 t equals statsmodels'.
    bench = os.path.join(os.path.dirname(BENCH), "bench_clusters.py")
    res = subprocess.run(
        [sys.executable, bench, "--smoke"], capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    rows = [line for line in res.stdout.splitlines() if line.startswith("| ") and " s |" in line]
    assert len(rows) == 4 and "| paired t | 0." in res.stdout, res.stdout
    cr1 = next(line for line in rows if "CR1" in line)
    ours, theirs = cr1.split("(t ")[1].rstrip(") |").split(" vs ")
    assert float(ours) == float(theirs), cr1


def test_bench_many_models_smoke_runs_and_agrees_with_signflip_test():
    # Issue 38: compare_models' p-values equal signflip_test's on the pair differences (same
    # key) and the numpy loop's within Monte Carlo error, or the bench exits non-zero.
    bench = os.path.join(os.path.dirname(BENCH), "bench_many_models.py")
    res = subprocess.run(
        [sys.executable, bench, "--smoke"], capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "equal to signflip_test" in res.stdout and "| numpy loop" in res.stdout
