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
TIMEOUT = 540  # seconds for a whole run (2 loaded cores: 280 s seen); all killed past it


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_all(commands, timeout=TIMEOUT):
    """Run ``commands`` at once; each one's ``(status, stdout, stderr, seconds)``.

    Output goes to files, not pipes: a process blocked on a full pipe would
    hold the other one in a collective, and the run would hang. A process
    still running after ``timeout`` s is killed (status -9).
    """
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)  # one CPU device per process
    with tempfile.TemporaryDirectory() as tmp:
        files = [
            (open(f"{tmp}/{i}.out", "w+"), open(f"{tmp}/{i}.err", "w+"))
            for i in range(len(commands))
        ]
        start = time.monotonic()
        procs = [
            subprocess.Popen(c, env=env, stdout=o, stderr=e)
            for c, (o, e) in zip(commands, files, strict=True)
        ]
        seconds = [None] * len(procs)
        try:
            while None in seconds and time.monotonic() - start < timeout:
                for k, p in enumerate(procs):
                    if seconds[k] is None and p.poll() is not None:
                        seconds[k] = time.monotonic() - start
                time.sleep(0.05)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        outs = []
        for p, t, (o, e) in zip(procs, seconds, files, strict=True):
            o.seek(0), e.seek(0)
            outs.append((p.returncode, o.read(), e.read(), t))
            o.close(), e.close()
    return outs


def _launch(commands, timeout=TIMEOUT):
    """Run ``commands`` at once; their (stdout, stderr); all must succeed."""
    outs = _run_all(commands, timeout)
    for status, _, err, _ in outs:
        assert status == 0, err[-3000:]
    return [(out, err) for _, out, err, _ in outs]


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


def test_processes_given_different_labels_are_refused(runs):
    # Issue 43.3: process 1's labels differed in one entry; process 0 returned p = 0.4201
    # instead of 0.4079, exit 0. Now every process raises the same error before any fit.
    first, second, single = runs
    assert single["refused"] is None
    assert first["refused"] == second["refused"]
    assert "were given different calls" in first["refused"]
    assert "process(es) [1] differ from process 0" in first["refused"]


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
        ("bootstrap", "resamples"),
        ("bootstrap_callable", "resamples"),
        ("bayesian_signrank", "samples"),
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
    # Sharded programs take blocks of one size whatever n_resamples above 4096 (issue
    # 29): 5,000 draws after 100,000 (max-T) and after 300,000 (two-sample) compile nothing.
    first, second, single = runs
    for record in (first, second):
        assert record["reuse"] == {"traces": 0, "compiles": 0}
    assert single["reuse"]["compiles"] > 0  # one process: small runs take small blocks
    # and the block size never changes a result
    assert first["results"]["new_n"] == second["results"]["new_n"] == single["results"]["new_n"]


# ---- runs that cannot start, or lose a process: one line, exit status 2 (issue 29) ----

ERROR = "jaxtests: error: could not start the distributed run: "


def _signflip_cli(path, *extra):
    return [sys.executable, "-m", "jaxtests._cli", "signflip", str(path), "--seed", "3", *extra]


def _cluster(address, n, i, timeout):
    return [
        "--coordinator",
        address,
        "--num-processes",
        str(n),
        "--process-id",
        str(i),
        "--join-timeout",
        str(timeout),
    ]


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """Every refusal scenario at once (processes in parallel): name -> [(status, out, err, s)].

    A scenario whose processes all arrive uses a long timeout: its refusal must
    come from the check, as soon as the peers meet, not from a timeout.
    """
    tmp = tmp_path_factory.mktemp("refused")
    rng = np.random.default_rng(1)
    same, other = tmp / "d.csv", tmp / "e.csv"
    same.write_text("diff\n" + "\n".join(f"{v:.6f}" for v in rng.normal(0.2, 1, 30)) + "\n")
    other.write_text("diff\n" + "\n".join(f"{v:.6f}" for v in rng.normal(0.2, 1, 30)) + "\n")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()  # never accepts: another program's port
    busy = f"127.0.0.1:{taken.getsockname()[1]}"
    names = ("alone", "count", "id", "data", "root", "token")
    addr = {name: f"127.0.0.1:{_free_port()}" for name in names}
    tokens = []
    for k, secret in enumerate(("s3cret", "guess")):
        tokens.append(tmp / f"{k}.token")
        tokens[-1].write_text(secret)
        tokens[-1].chmod(0o600)
    scenarios = {
        "missing peer": [_signflip_cli(same, *_cluster(addr["alone"], 2, 0, 5))],
        "missing process 0": [_signflip_cli(same, *_cluster(addr["root"], 2, 1, 5))],
        "port taken": [_signflip_cli(same, *_cluster(busy, 2, i, 5)) for i in range(2)],
        "process counts differ": [
            _signflip_cli(same, *_cluster(addr["count"], n, i, 120)) for n, i in ((2, 0), (3, 1))
        ],
        "same process id": [
            _signflip_cli(same, *_cluster(addr["id"], 2, 0, 120)) for _ in range(2)
        ],
        "different data": [
            _signflip_cli(path, *_cluster(addr["data"], 2, i, 120))
            for i, path in enumerate((same, other))
        ],
        "wrong token": [
            _signflip_cli(same, *_cluster(addr["token"], 2, i, 5), "--token-file", str(tokens[i]))
            for i in range(2)
        ],
    }
    commands = [c for cs in scenarios.values() for c in cs]
    try:
        outs = iter(_run_all(commands, timeout=150))
    finally:
        taken.close()
    return {name: [next(outs) for _ in cs] for name, cs in scenarios.items()}


@pytest.mark.parametrize(
    "scenario, words",
    [
        ("missing peer", "only 1 of 2 processes joined within 5 s (missing: process 1)"),
        ("missing process 0", "no process 0 answered at 127.0.0.1:"),
        ("port taken", None),  # process 0 and process 1 say different things: below
        (
            "process counts differ",
            "process 1 was started with --num-processes 3, process 0 with --num-processes 2",
        ),
        ("same process id", "two processes were started with --process-id 0"),
        ("different data", "process 1 reads different data than process 0"),
        ("wrong token", None),  # below
    ],
)
def test_a_run_that_cannot_start_says_why_in_one_line(refused, scenario, words):
    for k, (status, out, err, seconds) in enumerate(refused[scenario]):
        lines = err.strip().splitlines()
        assert status == 2, err[-3000:]  # not a SIGABRT (-6), SIGSEGV (-11) or a hang (-9)
        assert len(lines) == 1 and lines[0].startswith(ERROR), err[-3000:]
        assert out == ""
        if scenario == "port taken":
            words = "is already in use" if k == 0 else "did not answer as a jaxtests process 0"
        if scenario == "wrong token":  # process 0 waits on for the real process 1
            words = (
                "only 1 of 2 processes joined within 5 s (missing: process 1); start each with "
                "the same --coordinator and --num-processes, or raise --join-timeout (1 "
                "connection(s) refused for a wrong or missing token)"
                if k == 0
                else "process 0 refused this process: wrong or missing token; give every process"
            )
        assert words in lines[0]
        # Before: 306 s, then SIGABRT. Now the timeout (5 s) plus starting Python, under load.
        assert seconds < 60


def test_a_process_that_dies_stops_the_others(tmp_path):
    # A peer killed in the middle of a run: process 0 stops at once with one line, exit
    # status 2 (JAX's heartbeat would abort it with a C++ trace after 100 s).
    path = tmp_path / "d.csv"
    d = np.random.default_rng(2).normal(0.1, 1, 45)
    path.write_text("diff\n" + "\n".join(f"{v:.6f}" for v in d) + "\n")
    address = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    cmd = _signflip_cli(path, "--n-resamples", str(10**12), "--quiet")
    with tempfile.TemporaryFile("w+") as err0:
        procs = [
            subprocess.Popen(
                cmd + _cluster(address, 2, i, 30),
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err0 if i == 0 else subprocess.DEVNULL,
            )
            for i in range(2)
        ]
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # until JAX's collectives connected them
                err0.seek(0)
                if "Gloo" in err0.read() or procs[0].poll() is not None:
                    break
                time.sleep(0.2)
            procs[1].kill()
            killed = time.monotonic()
            status = procs[0].wait(timeout=30)
            seconds = time.monotonic() - killed
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        err0.seek(0)
        err = err0.read()
        lines = [x for x in err.splitlines() if not x.startswith("[Gloo]")]
    assert status == 2, err[-3000:]
    assert lines == ["jaxtests: error: process 1 stopped before the end of the run"]
    assert seconds < 10


def test_the_coordinator_listens_on_the_address_given(monkeypatch):
    # --coordinator 127.0.0.1:P: this machine only (JAX's default binds every interface).
    import jax

    from jaxtests import _distributed, _rendezvous

    seen = {}
    monkeypatch.setattr(jax.distributed, "initialize", lambda **kw: seen.update(kw))
    monkeypatch.setattr(jax.config, "update", lambda *a: None)  # gloo: not for this process
    for host, bind in (("127.0.0.1", "127.0.0.1"), ("[::1]", "[::1]"), ("localhost", "[::]")):
        port = _free_port()
        try:
            link = _distributed.initialize(f"{host}:{port}", 1, 0, timeout=5, token=b"t")
        except _rendezvous.JoinError as exc:  # no IPv6 on this machine
            assert host == "[::1]", exc
            continue
        link.leave(0)
        assert seen["coordinator_bind_address"] == f"{bind}:{port}"
        assert seen["initialization_timeout"] == 5
    assert _rendezvous.bind_host("10.1.2.3") == "10.1.2.3"
    assert _rendezvous.bind_host("node-7.cluster") == ""  # a name: every interface


def test_every_refusal_names_its_reason():
    from jaxtests._rendezvous import Hello

    ours = Hello("jaxtests 1 with jax 2", 3, 0, {"--seed": "3", "--n-resamples": "10"}, "ab")
    same = {"version": ours.version, "num_processes": 3, "process_id": 1}
    cases = [
        ({"version": "jaxtests 0 with jax 2"}, "process 1 runs jaxtests 0 with jax 2, process 0"),
        ({"process_id": 0}, "two processes were started with --process-id 0"),
        ({"num_processes": 2}, "process 1 was started with --num-processes 2, process 0 with"),
        ({"process_id": 2}, "two processes were started with --process-id 2"),
        ({"options": {"--seed": "4", "--n-resamples": "10"}}, "(different --seed)"),
        ({"options": {"--seed": "3"}}, "(different --n-resamples)"),
        ({"data": "cd"}, "process 1 reads different data than process 0"),
    ]
    for change, words in cases:
        fields = {**same, "options": ours.options, "data": ours.data, **change}
        problem = Hello(**fields).problem(ours, taken={2: None})
        assert problem is not None and words in problem, (change, problem)
    assert Hello(**same, options=ours.options, data="ab").problem(ours, taken={2: None}) is None


def test_the_call_digest_reads_the_data_not_its_path(tmp_path):
    from jaxtests._cli import _parser
    from jaxtests._cli._cluster import _call

    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text("diff\n1\n2\n")
    b.write_text("diff\n1\n2\n")
    c.write_text("diff\n1\n3\n")

    def call(path, *extra):
        return _call(_parser().parse_args(["signflip", str(path), "--seed", "1", *extra]))

    local = ("--process-id", "1", "--num-processes", "2", "--join-timeout", "9", "--quiet")
    assert call(a) == call(b, *local)  # same bytes elsewhere; options of this process only
    assert call(a)[1] != call(c)[1]
    assert call(a)[0] != call(a, "--n-resamples", "5")[0]
    assert call(tmp_path / "missing.csv")[1].startswith("unreadable")


def test_the_process_count_and_id_come_from_the_environment(monkeypatch):
    from jaxtests import _distributed
    from jaxtests._rendezvous import JoinError

    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", "127.0.0.1:1234")
    monkeypatch.setenv("JAX_NUM_PROCESSES", "4")
    monkeypatch.setenv("JAX_PROCESS_ID", "3")
    assert _distributed._detect(None, None, None, 5)[:3] == ("127.0.0.1:1234", 4, 3)
    assert _distributed._detect(None, 8, 5, 5)[:3] == ("127.0.0.1:1234", 8, 5)  # options win
    monkeypatch.setenv("JAX_PROCESS_ID", "three")
    with pytest.raises(JoinError, match="JAX_PROCESS_ID='three' is not a non-negative integer"):
        _distributed._detect(None, None, None, 5)
    monkeypatch.setenv("JAX_PROCESS_ID", "4")
    with pytest.raises(JoinError, match="process id 4 is not below the process count 4"):
        _distributed._detect(None, None, None, 5)


def test_distributed_without_a_cluster_says_so(tmp_path, monkeypatch, capsys):
    from jaxtests._cli import main

    for name in ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"):
        monkeypatch.delenv(name, raising=False)
    for name in ("SLURM_JOB_ID", "OMPI_MCA_orte_hnp_uri", "KUBERNETES_SERVICE_HOST"):
        monkeypatch.delenv(name, raising=False)  # the clusters JAX detects
    path = tmp_path / "d.csv"
    path.write_text("diff\n1\n2\n3\n")
    assert main(["signflip", str(path), "--distributed", "--join-timeout", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{ERROR}no cluster found (SLURM, Open MPI, ...): give --coordinator")


def test_library_runs_refuse_processes_given_different_calls(monkeypatch):
    # Without the CLI's rendezvous, the engine compares a digest of each process's call:
    # here process 1 of 3 (simulated) digested other data.
    from jax.experimental import multihost_utils

    from jaxtests import _distributed

    seen = {}

    def allgather(mine):
        seen["mine"] = np.asarray(mine)
        other = np.asarray(mine) ^ np.uint32(1)
        return np.stack([mine, other, mine])

    monkeypatch.setattr(_distributed, "active", lambda: True)
    monkeypatch.setattr(multihost_utils, "process_allgather", allgather)
    with pytest.raises(ValueError, match=r"different calls .* process\(es\) \[1\] differ"):
        _distributed.same_call({"d": np.arange(3.0)}, ("opts", 5))
    first = seen["mine"].copy()
    monkeypatch.setattr(multihost_utils, "process_allgather", lambda m: np.stack([m, m]))
    _distributed.same_call({"d": np.arange(3.0)}, ("opts", 5))  # the same everywhere: runs
    _distributed.same_call({"d": np.arange(3.0) + 1}, ("opts", 5))
    monkeypatch.setattr(multihost_utils, "process_allgather", allgather)
    with pytest.raises(ValueError):
        _distributed.same_call({"d": np.arange(3.0)}, ("opts", 6))
    assert not np.array_equal(seen["mine"], first)  # the options are part of the digest


# --- the token (issue 43.2): in-process, the rendezvous alone (no JAX runtime) --------------


def _hello(i, data="ab"):
    from jaxtests._rendezvous import Hello

    return Hello("jaxtests 9.9 (source c0ffee) with jax 2", 2, i, {"--seed": "3"}, data)


def _meet_soon(port, hello, token, timeout=30):
    """``meet`` in a thread; a dict that gets its ``link`` or ``error`` (and ``seconds``)."""
    import threading

    from jaxtests import _rendezvous

    out = {}

    def run():
        start = time.monotonic()
        try:
            out["link"] = _rendezvous.meet("127.0.0.1", port, hello, timeout, token)
        except _rendezvous.JoinError as exc:
            out["error"] = str(exc)
        out["seconds"] = time.monotonic() - start

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    out["thread"] = thread
    return out


def _connect(port):
    deadline = time.monotonic() + 20
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            assert time.monotonic() < deadline, "process 0 never listened"
            time.sleep(0.05)


def _close(out):
    for conn in out.get("link").conns.values() if "link" in out else ():
        conn.close()


def test_a_client_without_the_token_learns_nothing_and_stops_nothing():
    # Before: any client's hello was checked at once; a wrong version, id or count refused the
    # whole run, and the refusal named process 0's versions and source digest.
    port = _free_port()
    root = _meet_soon(port, _hello(0), b"s3cret")
    stray = _connect(port)
    first = stray.makefile("rb").readline()
    assert set(json.loads(first)) == {"kind", "protocol", "challenge"}  # nothing of the run
    stray.sendall(json.dumps({"kind": "jaxtests-join", **_hello(0).__dict__}).encode() + b"\n")
    refusal = stray.makefile("rb").readline().decode()
    assert "wrong or missing token" in refusal and "9.9" not in refusal and "c0ffee" not in refusal
    stray.close()
    silent = _connect(port)  # says nothing: must hold up no one
    wrong = _meet_soon(port, _hello(1), b"guess")
    wrong["thread"].join(30)
    assert wrong["error"].startswith("process 0 refused this process: wrong or missing token")
    start = time.monotonic()
    peer = _meet_soon(port, _hello(1), b"s3cret")
    peer["thread"].join(30), root["thread"].join(30)
    silent.close()
    assert "link" in root and "link" in peer, (root, peer)
    assert time.monotonic() - start < 4  # not after the silent client's 5 s
    _close(root), _close(peer)


def test_a_peer_tells_nothing_to_a_process_0_without_the_token():
    # A program posing as process 0 must not learn the versions, options or data digest.
    with socket.socket() as fake:
        fake.bind(("127.0.0.1", 0))
        fake.listen()
        peer = _meet_soon(fake.getsockname()[1], _hello(1, data="d1g35t"), b"s3cret", timeout=5)
        conn, _ = fake.accept()
        with conn:
            challenge = {"kind": "jaxtests-join", "protocol": 2, "challenge": "ab" * 32}
            conn.sendall(json.dumps(challenge).encode() + b"\n")
            reader = conn.makefile("rb")
            assert set(json.loads(reader.readline())) == {"kind", "protocol", "challenge", "proof"}
            conn.sendall(json.dumps({"kind": "jaxtests-join", "proof": "00" * 32}).encode() + b"\n")
            peer["thread"].join(30)
            rest = reader.read()  # until the peer closed
    assert rest == b""
    assert peer["error"].startswith("the process 0 at 127.0.0.1:")
    assert "did not prove that it knows this run's token" in peer["error"]


def test_a_coordinator_other_machines_reach_needs_a_token():
    from jaxtests._rendezvous import JoinError, meet

    for host, i in (("10.1.2.3", 0), ("node-7.cluster", 1), ("0.0.0.0", 0)):
        start = time.monotonic()
        with pytest.raises(JoinError, match=r"can be reached from other machines.*--token-file"):
            meet(host, _free_port(), _hello(i), 30)
        assert time.monotonic() - start < 1  # at once, not after a timeout
    with pytest.raises(JoinError, match="the token is empty"):
        meet("127.0.0.1", _free_port(), _hello(0), 30, b"")


def test_the_token_file_must_be_the_users_alone(tmp_path, monkeypatch):
    from jaxtests._cli._cluster import read_token
    from jaxtests._cli._common import BadInput

    path = tmp_path / "run.token"
    path.write_text("  s3cret\n")
    path.chmod(0o600)
    assert read_token(str(path)) == b"s3cret"
    path.chmod(0o644)
    with pytest.raises(BadInput, match=r"others may read or change it \(mode 0644.*chmod 600"):
        read_token(str(path))
    path.chmod(0o600)
    link = tmp_path / "link.token"
    link.symlink_to(path)
    with pytest.raises(BadInput, match=r"cannot open it .*not a link"):
        read_token(str(link))
    empty = tmp_path / "empty.token"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(BadInput, match="the file is empty"):
        read_token(str(empty))
    monkeypatch.setenv("JAXTESTS_TOKEN", "fr0m-env")
    assert read_token(None) == b"fr0m-env"
    monkeypatch.delenv("JAXTESTS_TOKEN")
    assert read_token(None) is None


def test_cli_refuses_a_reachable_coordinator_without_a_token(tmp_path, monkeypatch, capsys):
    from jaxtests._cli import main

    monkeypatch.delenv("JAXTESTS_TOKEN", raising=False)
    path = tmp_path / "d.csv"
    path.write_text("diff\n1\n2\n3\n")
    cluster = _cluster(f"localhost:{_free_port()}", 2, 1, 30)
    assert main(["signflip", str(path), *cluster]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(ERROR + "--coordinator localhost:")
    assert "JAXTESTS_TOKEN" in err[0]


def test_cli_join_timeout_range(tmp_path, capsys):
    from jaxtests._cli import main

    path = tmp_path / "d.csv"
    path.write_text("diff\n1\n2\n3\n")
    for bad in ("1e10", "0", "inf", "-5"):
        with pytest.raises(SystemExit) as exc:
            main(["signflip", str(path), *_cluster("127.0.0.1:5", 2, 1, bad)])
        assert exc.value.code == 2
        err = capsys.readouterr().err.splitlines()
        assert (
            len(err) == 1 and "--join-timeout: must be a number of seconds in (0, 86400]" in err[0]
        )


def test_permutation_test_score_compares_the_calls_of_every_process(monkeypatch):
    # The same check without a second process: process 1 (simulated) digested other labels.
    from jax.experimental import multihost_utils

    import jaxtests
    from jaxtests import _distributed, models

    monkeypatch.setattr(_distributed, "active", lambda: True)
    monkeypatch.setattr(
        multihost_utils, "process_allgather", lambda m: np.stack([m, np.asarray(m) ^ 1])
    )
    rng = np.random.default_rng(0)
    X, y = rng.normal(0, 1, (20, 2)), rng.integers(0, 2, 20)
    with pytest.raises(ValueError, match=r"different calls .* process\(es\) \[1\] differ"):
        jaxtests.permutation_test_score(models.ridge_classifier(), X, y, n_permutations=9, key=0)


def test_the_bootstrap_compares_the_calls_of_every_process(monkeypatch):
    # Process 1 (simulated) digested other data: refused before any resample is drawn.
    from jax.experimental import multihost_utils

    import jaxtests
    from jaxtests import _bootstrap_draws, _distributed

    monkeypatch.setattr(_distributed, "active", lambda: True)
    monkeypatch.setattr(
        multihost_utils, "process_allgather", lambda m: np.stack([m, np.asarray(m) ^ 1])
    )
    monkeypatch.setattr(_bootstrap_draws, "resample_blocks", None)  # never reached
    x = np.arange(10.0)
    with pytest.raises(ValueError, match=r"different calls .* process\(es\) \[1\] differ"):
        jaxtests.bootstrap((x,), "mean", n_resamples=300, key=0, method="percentile")


def test_the_bayesian_sampler_compares_the_calls_of_every_process(monkeypatch):
    # Process 1 (simulated) digested other differences: refused before any sample is drawn.
    from jax.experimental import multihost_utils

    from jaxtests import _distributed, _signrank_draws, bayesian

    monkeypatch.setattr(_distributed, "active", lambda: True)
    monkeypatch.setattr(
        multihost_utils, "process_allgather", lambda m: np.stack([m, np.asarray(m) ^ 1])
    )
    monkeypatch.setattr(_signrank_draws, "dirichlet_weights", None)  # never reached
    a = np.linspace(0.7, 0.9, 10)
    with pytest.raises(ValueError, match=r"different calls .* process\(es\) \[1\] differ"):
        bayesian.signrank(a, a + 0.01, rope=0.01, key=0)
