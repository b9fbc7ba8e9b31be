"""Where the test suite's time goes: a pytest plugin that records every XLA compilation.

The suite's time is mostly compilation (2026-11-26, 2-core VM: 1,490 of 2,730 worker-seconds
were backend compiles, plus ~290 s of tracing and lowering; another, slower run counted 3,627
compiles taking 1,720 s). This plugin records, for every test, its wall time and each
backend compile with the jitted function's name, so a change to the suite can be aimed at the
programs that cost most.

Usage (from the repository root)::

    PYTHONPATH=bench .venv/bin/pytest -p suite_compiles    # writes suite-profile/*.json
    .venv/bin/python bench/suite_compiles.py [suite-profile] [--top N]

``JAXTESTS_PROFILE_DIR`` moves the output folder. Each pytest-xdist worker writes its own
file; the summary reads them all: compile seconds and counts by function, then by test file
(wall, compile, trace and lowering seconds). Subprocesses started by tests are not seen
(their time shows as wall time without compiles).
"""

import argparse
import collections
import json
import os
import pathlib
import time

import pytest

_COMPILE = "/jax/core/compile/backend_compile_duration"
_TRACE = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
)
_current = {"test": None}
_tests = collections.defaultdict(lambda: {"wall": 0.0, "trace": 0.0, "compiles": []})


def _listen(event, duration, **kwargs):
    test = _current["test"]
    if test is None:
        return
    if event == _COMPILE:
        _tests[test]["compiles"].append([kwargs.get("fun_name", "?"), duration])
    elif event in _TRACE:
        _tests[test]["trace"] += duration


def pytest_configure(config):
    import jax

    jax.monitoring.register_event_duration_secs_listener(_listen)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current["test"] = item.nodeid
    start = time.perf_counter()
    yield
    _tests[item.nodeid]["wall"] += time.perf_counter() - start
    _current["test"] = None


def pytest_sessionfinish(session):
    out = pathlib.Path(os.environ.get("JAXTESTS_PROFILE_DIR", "suite-profile"))
    out.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (out / f"{worker}.json").write_text(json.dumps(_tests))


def _summary(folder, top):
    tests = {}
    for f in sorted(pathlib.Path(folder).glob("*.json")):
        tests.update(json.loads(f.read_text()))
    by_fun = collections.defaultdict(lambda: [0, 0.0])
    by_file = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for nodeid, rec in tests.items():
        row = by_file[nodeid.split("::")[0]]
        row[0] += rec["wall"]
        row[2] += rec["trace"]
        for fun, seconds in rec["compiles"]:
            by_fun[fun][0] += 1
            by_fun[fun][1] += seconds
            row[1] += seconds
    total = sum(s for _, s in by_fun.values())
    count = sum(n for n, _ in by_fun.values())
    print(f"{len(tests)} tests, {count} compiles, {total:.0f} s compiling")
    print(f"{'seconds':>9} {'count':>6} {'each':>6}  function")
    for fun, (n, s) in sorted(by_fun.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{s:9.1f} {n:6d} {s / n:6.2f}  {fun}")
    print(f"\n{'wall':>7} {'compile':>7} {'trace':>6}  file")
    for name, (wall, comp, trace) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{wall:7.1f} {comp:7.1f} {trace:6.1f}  {name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default="suite-profile")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    _summary(args.folder, args.top)
