"""Compile tiers (jaxtests._aot): a small call starts with a program compiled for compile speed,
the optimised one takes over after a few calls, and both give the same bits on every path.

The quick tier is XLA:CPU's loop emitters (``xla_cpu_use_fusion_emitters=False``), the same
HLO as the optimised program: the references are the optimised tier's results (whose own
independent references are in each test's module), compared bit for bit.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import python_json

import jaxtests
from jaxtests import _aot, models

RNG = np.random.default_rng(40)
X = RNG.normal(size=120)
Y = RNG.normal(0.2, 1.0, size=150)
D2 = RNG.normal(0.1, 1.0, size=(2, 60))
YL = (RNG.random(200) < 0.4).astype(int)
S1, S2 = YL + RNG.normal(size=200), YL + 1.3 * RNG.normal(size=200)
PA = np.where(RNG.random(200) < 0.85, YL, 1 - YL)
PB = np.where(RNG.random(200) < 0.80, YL, 1 - YL)
XR = RNG.normal(size=(100, 5))
YR = np.where(XR[:, 0] + RNG.normal(size=100) > 0, 1, -1)


def _median(x):
    return jnp.median(x)


def _median_difference(x, y):
    return jnp.median(x) - jnp.median(y)


# Every program that has a quick twin: the engine (fused sums, subset corrections, count
# changes, enumeration, max-T, nulls, sequential stopping, a user's statistic), the preps,
# the bootstrap's built-in programs (BCa's jackknife too), the ridge label stream, and
# another learner's label blocks and fits.
CALLS = {
    "signflip mean, null": lambda: jaxtests.signflip_test(
        X, n_resamples=2000, key=1, return_null=True
    ),
    "signflip t, max-T": lambda: jaxtests.signflip_test(
        D2, statistic="t", n_resamples=2000, key=2, correction="maxT"
    ),
    "signflip sequential": lambda: jaxtests.signflip_test(
        0.3 * X, n_resamples=20000, key=3, sequential=10
    ),
    "signflip exact max-T": lambda: jaxtests.signflip_test(
        D2[:, :12], method="exact", correction="maxT", return_null=True
    ),
    "two-sample t, null": lambda: jaxtests.permutation_test(
        X, Y, statistic="t", n_resamples=2000, key=4, return_null=True
    ),
    "two-sample small group": lambda: jaxtests.permutation_test(X[:9], Y, n_resamples=2000, key=5),
    "two-sample exact": lambda: jaxtests.permutation_test(X[:9], Y[:8], return_null=True),
    # a user's statistic: the engine's program kept for this process only (never on disk)
    "signflip callable": lambda: jaxtests.signflip_test(
        X[:60], statistic=_median, n_resamples=500, key=13, return_null=True
    ),
    "two-sample callable": lambda: jaxtests.permutation_test(
        X[:40], Y[:30], statistic=_median_difference, n_resamples=500, key=14
    ),
    "swap accuracy, null": lambda: jaxtests.swap_test(
        YL, PA, PB, measure="accuracy", n_resamples=2000, key=6, return_null=True
    ),
    "bootstrap BCa": lambda: jaxtests.bootstrap(
        (X, Y), "mean_difference", paired=False, key=7, n_resamples=1500, method="BCa"
    ),
    "bootstrap paired": lambda: jaxtests.bootstrap(
        (X, Y[:120]), "mean_difference", paired=True, key=8, n_resamples=1500
    ),
    # a user's statistic: always the loop emitters, unless the optimised tier is forced
    "bootstrap callable BCa": lambda: jaxtests.bootstrap(
        (X, Y), _median_difference, paired=False, key=16, n_resamples=600, method="BCa"
    ),
    "bootstrap AUC difference": lambda: jaxtests.bootstrap(
        (YL, S1, S2), "roc_auc_difference", paired=True, key=9, n_resamples=999
    ),
    "permutation_test_score ridge": lambda: jaxtests.permutation_test_score(
        models.ridge_classifier(), XR, YR, n_permutations=200, key=10
    ),
    "permutation_test_score lda": lambda: jaxtests.permutation_test_score(
        models.lda(), XR, YR, n_permutations=200, key=15, scoring=("accuracy", "roc_auc")
    ),
}


def _bits(result):
    """Every array of a result (a pytree), as bytes."""
    leaves = jax.tree_util.tree_leaves(result)
    return [np.asarray(a).tobytes() for a in leaves]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_both_tiers_give_the_same_bits(name, monkeypatch):
    twins = []
    make, loop = _aot._twin, _aot.loop_options
    monkeypatch.setattr(_aot, "_twin", lambda fn, *a: twins.append(fn.__name__) or make(fn, *a))
    monkeypatch.setattr(_aot, "loop_options", lambda: twins.append(loop()) or loop())
    with _aot.forced("quick"):
        quick = _bits(CALLS[name]())
    assert [t for t in twins if t]  # the call ran quick twins, or loop emitters
    with _aot.forced("optimized"):
        optimized = _bits(CALLS[name]())
    assert len(quick) >= 3 and quick == optimized


def test_the_tier_rule(tmp_path, monkeypatch):
    monkeypatch.delenv(_aot.COMPILE_ENV, raising=False)
    monkeypatch.setattr(_aot, "_quick_calls", {})
    monkeypatch.setattr(_aot, "_held", set())
    small, folder = 1000, None
    assert not _aot._quick("k", folder, None)  # no twin: always optimised
    assert not _aot._quick("k", folder, _aot.QUICK_WORK + 1)  # large work
    assert [_aot._quick("k", folder, small) for _ in range(_aot.PROMOTE_AFTER + 2)] == [True] * (
        _aot.PROMOTE_AFTER
    ) + [False] * 2
    with _aot.one_call():  # a public call's chunks: one decision, one count
        assert all(_aot._quick("chunked", folder, small) for _ in range(20))
    assert _aot._quick_calls["chunked"] == 1
    _aot._held.add("held")
    assert not _aot._quick("held", folder, small)  # compiled or loaded already
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        (tmp_path / "ondisk.jaxexec").write_bytes(b"")
        assert not _aot._quick("ondisk", fd, small)  # loading beats compiling
        assert _aot._quick("absent", fd, small)
    finally:
        os.close(fd)
    with _aot.forced("quick"):
        assert _aot._quick("held", folder, _aot.QUICK_WORK + 1)
        with _aot.forced("optimized"):
            assert not _aot._quick("absent2", folder, small)
    monkeypatch.setenv(_aot.COMPILE_ENV, " Optimized ")
    assert _aot.mode() == "optimized"
    monkeypatch.setenv(_aot.COMPILE_ENV, "fast")
    with pytest.raises(ValueError, match="JAXTESTS_COMPILE must be 'auto', 'optimized' or"):
        jaxtests.signflip_test(X[:50], n_resamples=99, key=0)
    with pytest.raises(ValueError, match="tier must be"):
        _aot.forced("auto").__enter__()


PROMOTION = """
import json, sys, numpy as np, jaxtests
from jaxtests import _aot
from jaxtests._monitoring import CompileCounter
rng = np.random.default_rng(0)
x, y = rng.normal(size=200), rng.normal(size=200)
rows = []
for i in range(int(sys.argv[1])):
    with CompileCounter() as c:
        r = jaxtests.permutation_test(x, y, n_resamples=9999, key=0)
    rows.append([c.compiles, c.programs, float(r.pvalue)])
print(json.dumps({"rows": rows, "twins": len(_aot._twins)}))
"""


def test_a_small_call_starts_quick_and_is_promoted_once(tmp_path):
    # No cache: the prep and the engine compile quick at the first call, nothing until the
    # (PROMOTE_AFTER + 1)-th, which compiles both optimised, and nothing after; same p-value.
    n = _aot.PROMOTE_AFTER + 2
    out = python_json(PROMOTION, n, env={"JAXTESTS_CACHE_DIR": "off", "JAXTESTS_COMPILE": "auto"})
    compiles = [row[0] for row in out["rows"]]
    assert compiles == [2] + [0] * (_aot.PROMOTE_AFTER - 1) + [2, 0]
    assert len({row[2] for row in out["rows"]}) == 1 and out["twins"] == 2
    # A cache filled by that run holds the optimised programs: a later process loads them.
    env = {
        "JAXTESTS_CACHE_DIR": str(tmp_path / "jax"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "JAXTESTS_COMPILE": "auto",
    }
    python_json(PROMOTION, n, env=env)
    later = python_json(PROMOTION, 1, env=env)
    assert later["rows"][0][:2] == [0, 2] and later["twins"] == 0  # two programs loaded
    assert later["rows"][0][2] == out["rows"][0][2]


@pytest.mark.parametrize(
    "name", ["signflip mean, null", "signflip callable", "bootstrap callable BCa"]
)
def test_a_jaxlib_without_loop_emitters_runs_the_optimised_programs(name, monkeypatch):
    # jax 0.11.2 (an H200's, 2026-11-28) answered "No such compile option:
    # 'xla_cpu_use_fusion_emitters'" to every quick twin: XLA:CPU retired its loop emitters.
    # An option this jaxlib does not know stands in for it; the call must still answer, with
    # the optimised tier's bits, and the quick tier stays off for the process.
    with _aot.forced("optimized"):
        optimized = _bits(CALLS[name]())
    monkeypatch.setattr(_aot, "QUICK_OPTIONS", {"xla_cpu_use_retired_emitters": False})
    monkeypatch.setattr(_aot, "_loop_emitters", [True])
    with _aot.forced("quick"):
        assert _aot.loop_options() == {"xla_cpu_use_retired_emitters": False}
        assert _bits(CALLS[name]()) == optimized
        assert _aot._loop_emitters == [False] and _aot.loop_options() == {}
        assert not _aot._may_be_quick(1)
        assert _bits(CALLS[name]()) == optimized
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        jax.jit(lambda: None, compiler_options=_aot.QUICK_OPTIONS).lower().compile()


def test_quick_or_passes_other_errors_on(monkeypatch):
    monkeypatch.setattr(_aot, "_loop_emitters", [True])

    def fails():
        raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: out of memory")

    with pytest.raises(jax.errors.JaxRuntimeError, match="RESOURCE_EXHAUSTED"):
        _aot.quick_or(fails, lambda: 1)
    assert _aot._loop_emitters == [True]
