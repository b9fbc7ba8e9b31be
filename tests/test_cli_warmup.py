"""``jaxtests warmup`` in-process: the plan runs, the summary line counts, bad input exits 2."""

import re

import jax
import numpy as np
import pytest

from jaxtests import _aot
from jaxtests._cli import main
from jaxtests._cli import warmup as _warmup

SUMMARY = re.compile(
    r"^jaxtests warmup: (\d+) calls up to (\d+) instances compiled (\d+) programs "
    r"\((\d+) loaded from the cache\) in [0-9.]+ s; cache: .+$"
)


def _summary(out):
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    m = SUMMARY.match(lines[0])
    assert m, lines[0]
    return [int(g) for g in m.groups()]


def test_warmup_runs_the_plan_and_counts_compilations(monkeypatch, capsys):
    asked = {}
    full_plan = _warmup.warmup_plan

    def small_plan(max_instances, **kw):
        asked["max_instances"] = max_instances
        real = full_plan(max_instances=max_instances, **kw)
        # A new jitted function compiles at least one program wherever the suite ran before.
        fresh = jax.jit(lambda x: x * 3 + 1)
        return [
            next(e for e in real if e[0].startswith("signflip_test")),
            next(e for e in real if e[0].startswith("bootstrap")),
            ("fresh", lambda: fresh(np.arange(5.0))),
            ("tier", lambda: asked.setdefault("tier", _aot.mode())),
        ]

    monkeypatch.setattr(_warmup, "warmup_plan", small_plan)
    assert main(["warmup", "--max-instances", "64", "--quiet"]) == 0
    out, err = capsys.readouterr()
    # the optimised tier (tests/test_compile_tiers.py): what later calls load runs fastest
    assert asked == {"max_instances": 64, "tier": "optimized"}
    calls, upto, compiled, loaded = _summary(out)
    assert (calls, upto) == (4, 64)
    assert compiled + loaded >= 1
    assert err == ""  # --quiet: no bar


def test_warmup_shows_a_bar_without_quiet(monkeypatch, capsys):
    monkeypatch.setattr(
        _warmup, "warmup_plan", lambda max_instances, **kw: [("noop", lambda: np.zeros(2))]
    )
    assert main(["warmup", "--max-instances", "64"]) == 0
    out, err = capsys.readouterr()
    assert _summary(out)[:2] == [1, 64]
    assert "warmup:" in err and "/1 [" in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-instances", "0"], "must be a positive integer"),
        (["--max-instances", "ten"], "'ten' is not a positive integer"),
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
    ],
)
def test_warmup_bad_option_exits_2_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["warmup", *argv])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and message in err


def test_warmup_error_in_a_call_exits_2_one_line(monkeypatch, capsys):
    def broken():
        raise ValueError("the cache directory\nis not writable")

    monkeypatch.setattr(_warmup, "warmup_plan", lambda max_instances, **kw: [("x", broken)])
    assert main(["warmup", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "jaxtests: error: the cache directory is not writable\n"


@pytest.mark.parametrize("family", ["words", "dense", "dense32"])
def test_warmup_warms_the_padding_of_the_backends_family(monkeypatch, family):
    # Issue 41: the plan's sign-flip sizes are the padded sizes of the family the calls will
    # use (before, the CPU family's capacities on every backend, so a GPU's dense programs
    # stayed cold); a size inside a warmed bucket then compiles nothing.
    from jaxtests import _profile, signflip_test
    from jaxtests._monitoring import CompileCounter

    monkeypatch.setenv(_profile.ENV, family)
    pad = _profile.SCHEDULES[family].pad_words
    plan = _warmup.warmup_plan(max_instances=300)
    sizes = {
        int(label.split("m=")[1].split()[0])
        for label, _ in plan
        if label.startswith("signflip_test")
    }
    assert {pad(m) for m in range(1, 301)} <= {pad(m) for m in sizes}
    assert len(sizes) == len({pad(m) for m in sizes})  # one call per program
    if family != "words":
        assert len(sizes) > 1  # the ladder's buckets, not one CPU capacity
    m = sorted(sizes)[len(sizes) // 2]
    warm = next(t for label, t in plan if label == f"signflip_test m={m} n_resamples=9999")
    jax.block_until_ready(warm())
    rng = np.random.default_rng(1)
    with CompileCounter() as counter:
        signflip_test(rng.normal(size=m - 5), n_resamples=9999, key=3)
    assert counter.compiles == 0
