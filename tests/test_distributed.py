"""One test over two processes: JAX's distributed runtime on 127.0.0.1 (issue 15).

Two local processes (one CPU device each) join a run with
``jax.distributed.initialize`` and call the same functions; every resampling
path must return, on both, the result of a one-process run with the same key,
bit for bit, while each process evaluated only its share of the draws
(:data:`jaxtests._distributed.WORK`, counted by the devices that drew them).
"""

import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).with_name("distributed_worker.py")
TIMEOUT = 300  # seconds for a whole run; both processes are killed past it


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(commands, timeout=TIMEOUT):
    """Run ``commands`` at once; their (stdout, stderr); all killed if one fails or hangs.

    Output goes to files, not pipes: a process blocked on a full pipe would
    hold the other one in a collective, and the run would hang.
    """
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)  # one CPU device per process
    with tempfile.TemporaryDirectory() as tmp:
        files = [
            (open(f"{tmp}/{i}.out", "w+"), open(f"{tmp}/{i}.err", "w+"))
            for i in range(len(commands))
        ]
        procs = [
            subprocess.Popen(c, env=env, stdout=o, stderr=e)
            for c, (o, e) in zip(commands, files, strict=True)
        ]
        try:
            deadline = time.monotonic() + timeout
            for p in procs:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        outs = []
        for o, e in files:
            o.seek(0), e.seek(0)
            outs.append((o.read(), e.read()))
            o.close(), e.close()
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    return outs


def _record(stdout):
    line = next(x for x in stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


@pytest.fixture(scope="module")
def runs():
    address = f"127.0.0.1:{_free_port()}"
    outs = _launch(
        [[sys.executable, str(WORKER), address, "2", str(i)] for i in range(2)]
        + [[sys.executable, str(WORKER)]]
    )
    return [_record(out) for out, _ in outs]


def test_every_path_is_bit_identical_to_one_process(runs):
    first, second, single = runs
    assert first["devices"] == second["devices"] == [2, 1]
    assert single["devices"] == [1, 1]
    assert first["results"] == single["results"]  # floats compared exactly
    assert second["results"] == single["results"]


def test_a_drawn_seed_is_shared(runs):
    first, second, _ = runs
    assert first["seed"] == second["seed"]


@pytest.mark.parametrize(
    "path, unit",
    [
        ("signflip_maxT", "draws"),
        ("enumerate_null", "draws"),
        ("twosample", "draws"),
        ("swap", "draws"),
        ("within_block", "draws"),
        ("label_stream", "labels"),
        ("label_sorted", "labels"),
    ],
)
def test_each_process_computes_only_its_share(runs, path, unit):
    first, second, single = runs
    a, b = first["work"][path][unit], second["work"][path][unit]
    total = single["work"][path][unit]
    assert total > 0
    assert a + b == total  # nothing computed twice
    assert 0 < a < total and 0 < b < total  # both took part


def test_sequential_stopping_shares_the_draws(runs):
    first, second, single = runs
    a, b = first["work"]["sequential"]["draws"], second["work"]["sequential"]["draws"]
    assert a > 0 and b > 0
    stop = np.asarray(single["results"]["sequential"]["n_draws"])
    assert stop.max() < 100_000  # the rule fired: the draws came from global counts
    assert first["results"]["sequential"] == single["results"]["sequential"]


def test_cli_two_processes(tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "d.csv"
    path.write_text("diff\n" + "\n".join(f"{v:.6f}" for v in rng.normal(0.2, 1, 50)) + "\n")
    cmd = [sys.executable, "-m", "jaxtests._cli", "signflip", str(path), "--seed", "3"]
    cmd += ["--n-resamples", "200000", "--json"]
    address = f"127.0.0.1:{_free_port()}"
    outs = _launch(
        [
            [*cmd, "--coordinator", address, "--num-processes", "2", "--process-id", str(i)]
            for i in range(2)
        ]
        + [cmd]
    )
    (first, _), (second, _), (single, _) = outs
    assert json.loads(first) == json.loads(single)  # stdout is the report alone
    assert second == ""  # process 1 computes, process 0 reports


def test_cli_refuses_a_process_id_out_of_range(tmp_path, capsys):
    from jaxtests._cli import main

    path = tmp_path / "d.csv"
    path.write_text("diff\n1\n2\n3\n")
    status = main(["signflip", str(path), "--num-processes", "2", "--process-id", "2"])
    assert status == 2
    assert "--process-id 2 is not below --num-processes 2" in capsys.readouterr().err


def test_meet_in_the_middle_shards_add_up_to_the_whole():
    # The kernel's parts (one per device of a sharded run) against brute-force enumeration.
    import jax
    from jaxtests.kernels import resampling as kresampling

    d = np.random.default_rng(3).normal(0, 1, 14)
    bits = (np.arange(2**14)[:, None] >> np.arange(14)) & 1
    p = bits @ d
    lo, hi = np.quantile(p, [0.1, 0.8])
    expected = (np.sum(p >= hi), np.sum(p <= lo))
    counts = jax.jit(kresampling.mitm_signflip_counts, static_argnames=("n_lo", "n_shards"))
    with jax.enable_x64(True):
        assert tuple(int(c) for c in counts(d, lo, hi, n_lo=3)) == expected
        for n_shards in (3, 4):  # 16 chunks: uneven and even parts
            parts = [counts(d, lo, hi, n_lo=3, shard=i, n_shards=n_shards) for i in range(n_shards)]
            assert tuple(int(sum(c)) for c in zip(*parts, strict=True)) == expected


@pytest.mark.parametrize("n_items", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("n_proc", [1, 2, 3, 8])
def test_shares_are_contiguous_balanced_and_cover_the_items(monkeypatch, n_items, n_proc):
    import jax

    from jaxtests import _distributed

    monkeypatch.setattr(jax, "process_count", lambda: n_proc)
    ranges = []
    for i in range(n_proc):
        monkeypatch.setattr(jax, "process_index", lambda i=i: i)
        ranges.append(_distributed.share(n_items))
    assert ranges[0][0] == 0 and ranges[-1][1] == n_items
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    sizes = [hi - lo for lo, hi in ranges]
    assert max(sizes) - min(sizes) <= 1


def test_a_new_number_of_resamples_compiles_nothing_on_two_processes(runs):
    # Sharded programs take blocks of one size whatever n_resamples (issue 29): 400,000
    # draws after 1,000, and 5,000 after 300,000, run the programs already compiled.
    first, second, single = runs
    for record in (first, second):
        assert record["reuse"] == {"traces": 0, "compiles": 0}
    assert single["reuse"]["compiles"] > 0  # one process: small runs take small blocks
    # and the block size never changes a result
    assert first["results"]["new_n"] == second["results"]["new_n"] == single["results"]["new_n"]
