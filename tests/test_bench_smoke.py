"""The GPU benchmark keeps working: its smoke run on this CPU (the dense evaluators against the
host's word evaluators, same keys, same p-values, or it exits non-zero)."""

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
