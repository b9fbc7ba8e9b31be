"""Issue 28.9: quieter, truer output: a progress bar says it is preparing (or shows its
total) before the first report, the demo lists the post hoc pairs that differ instead of
every adjusted p-value, and a singular covariance is one line."""

import os
import subprocess
import sys
import time

from jaxtests._report import Progress


def test_progress_before_the_first_report(capsys):
    with Progress("draws", delay=0.1, interval=0.05):
        time.sleep(0.4)
        early = capsys.readouterr().err
    assert "draws: preparing (compiling)" in early and "?/s" not in early
    with Progress("perm", unit="perm", delay=0.1, interval=0.05, total=1000) as bar:
        time.sleep(0.4)
        early = capsys.readouterr().err
        bar(500, 1000)
        time.sleep(0.2)
    late = capsys.readouterr().err
    assert "0.00/1.00k" in early and "preparing" not in early
    assert "500/1.00k" in late


def test_quick_demo_lists_the_pairs_that_differ(tmp_path):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    res = subprocess.run(
        [sys.executable, "-m", "jaxtests._cli", "demo", "--quick", "--quiet", "--out", tmp_path],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout
    assert "p_adj = 1\n" not in out and ": p_adj = " not in out
    assert "post hoc t on error (Holm): " in out and " of 3 pairs differ at alpha = 0.05" in out
    assert "Ordering, best first (lower is better):" in out
    assert all(len(line) < 300 for line in out.splitlines())  # no paragraph-long lines
