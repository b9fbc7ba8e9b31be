"""Compiled programs on disk (jaxtests._aot): a second process neither traces nor compiles them."""

import os
import textwrap

from _helpers import python_json

SCRIPT = textwrap.dedent(
    """
    import json
    import jax
    import numpy as np
    import jaxtests

    traced = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, d, **kw: traced.append(kw.get("fun_name"))
        if event == "/jax/core/compile/jaxpr_trace_duration" else None
    )
    rng = np.random.default_rng(5)
    d = rng.normal(0.2, 1, size=(2, 300))
    out = []
    for st in ("mean", "t"):
        r = jaxtests.signflip_test(d, statistic=st, n_resamples=3000, key=7, correction="maxT")
        out.append(np.asarray(r.pvalue).tolist() + np.asarray(r.statistic).tolist())
    r = jaxtests.permutation_test(d[0, :100], d[1], n_resamples=3000, key=8)
    out.append([float(r.pvalue), float(r.statistic)])
    # A user statistic has no stable name: it takes the plain path, with the same answer.
    r = jaxtests.signflip_test(d[0, :40], statistic=lambda x: x.mean(), n_resamples=500, key=9)
    out.append([float(r.pvalue)])
    print(json.dumps({"out": out, "traced": traced}))
    """
)


def _run(tmp_path, cache, script=SCRIPT, tier="auto"):
    env = {
        "JAX_PLATFORMS": "cpu",
        "XDG_CACHE_HOME": tmp_path / "xdg",
        "JAXTESTS_CACHE_DIR": cache,
        "JAXTESTS_COMPILE": tier,
    }
    return python_json(script, env=env, drop=("JAX_COMPILATION_CACHE_DIR",), timeout=600)


def test_stored_programs_give_the_same_results_skip_tracing_and_are_rebuilt(tmp_path):
    cache = str(tmp_path / "jax")
    off = _run(tmp_path, "")
    first = _run(tmp_path, cache)
    second = _run(tmp_path, cache)
    # Bit-identical results: no cache, exporting, and loading the exported programs.
    assert off["out"] == first["out"] == second["out"]
    programs = os.listdir(cache + "-programs")
    assert programs and all(p.endswith(".jaxexec") for p in programs)
    # The engine's program is traced when exported, never in a later process.
    assert "_run_counts" in first["traced"]
    assert "_run_counts" in off["traced"]
    assert second["traced"].count("_run_counts") == 1  # the user statistic's plain program
    assert "_signflip_linear_prep" not in second["traced"]
    assert "_twosample_prep" not in second["traced"]
    # A corrupt program file is rebuilt, with the same results.
    folder = cache + "-programs"
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(b"not a program")
    assert _run(tmp_path, cache)["out"] == off["out"]
    sizes = [os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)]
    assert min(sizes) > len(b"not a program")


PRIME = textwrap.dedent(
    """
    import json
    import numpy as np
    import jaxtests
    from jaxtests import _signflip

    # The preparation program through plain jit: JAX's persistent cache now holds it.
    dp = np.zeros((1, 32 * 512))
    dp[0, :300] = np.random.default_rng(5).normal(0.2, 1, size=(2, 300))[0]
    where = np.arange(32 * 512) < 300
    jaxtests.signflip_test([1.0, 2.0, -0.5], key=0)  # sets the cache folder
    _signflip._signflip_linear_prep(dp, where, statistic="mean")
    print(json.dumps({}))
    """
)


def test_a_program_in_jaxs_cache_is_stored_from_a_fresh_compile(tmp_path):
    # An executable JAX loaded from its own cache serializes without its kernels (a later
    # process failed with "Function ... not found"): jaxtests compiles its stored copy anew.
    cache = str(tmp_path / "jax")
    _run(tmp_path, cache, PRIME)
    # (the optimised tier: PRIME's plain jit put that program, not its quick twin, in JAX's cache)
    first = _run(tmp_path, cache, tier="optimized")  # stores the preparation program
    second = _run(tmp_path, cache, tier="optimized")  # loads and runs it: no tracing
    assert first["out"] == second["out"]
    assert "_signflip_linear_prep" in first["traced"]
    assert "_signflip_linear_prep" not in second["traced"]


LEARNER = textwrap.dedent(
    """
    import json
    import numpy as np
    import jaxtests

    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 4))
    y = np.where(X[:, 0] + rng.normal(size=80) > 0, 1, -1)
    r = jaxtests.permutation_test_score(jaxtests.models.lda(), X, y, n_permutations=64, key=3)
    print(json.dumps({"out": [float(r.score), np.asarray(r.permutation_scores).tolist()],
                      "traced": []}))
    """
)


def test_a_program_with_a_custom_call_is_not_stored(tmp_path):
    # LDA's fits call LAPACK (custom calls): a later process that loaded their stored
    # executable crashed (a segmentation fault); they are left to JAX's own cache.
    cache = str(tmp_path / "jax")
    first = _run(tmp_path, cache, LEARNER)
    second = _run(tmp_path, cache, LEARNER)  # exits 0, with the same scores
    assert first["out"] == second["out"]
    stored = os.listdir(cache + "-programs")
    assert len(stored) == 1  # the label blocks' program; the fits' are not kept


def test_a_call_like_an_earlier_one_takes_its_key_from_the_memo():
    # The key's text and digest are computed once per kind of call; a changed setting, shape
    # or static argument is another key, and the memo's keys are the computed ones.
    import jax
    import numpy as np

    from jaxtests import _aot

    args, static = (np.zeros((3, 4)), np.int32(2)), {"mode": "a", "size": 3}
    first = _aot._key("t.f", args, static, None)
    assert _aot._key("t.f", args, dict(static), None) == first
    memo = next(k for k, v in _aot._keys.items() if v == first)
    _aot._keys[memo] = "from the memo"
    assert _aot._key("t.f", (np.ones((3, 4)), np.int32(5)), static, None) == "from the memo"
    _aot._keys.clear()
    assert _aot._key("t.f", args, static, None) == first  # computed again, the same
    others = {
        _aot._key("t.f", (np.zeros((3, 5)), np.int32(2)), static, None),
        _aot._key("t.f", args, {"mode": "b", "size": 3}, None),
        _aot._key("t.f", args, static, {"xla_cpu_use_fusion_emitters": False}),
        _aot._key("t.g", args, static, None),
    }
    with jax.enable_x64(not jax.config.jax_enable_x64):
        others.add(_aot._key("t.f", args, static, None))
    assert len(others) == 5 and first not in others
