"""Every evaluator family ("words" for CPUs, "dense" for accelerators, "dense32" its float32
twin) on every Monte Carlo path: the same key gives the same counts and p-values, and those are
the values jaxtests gave before the families existed.

The literals were printed by jaxtests at commit 01e246f (the last one with a single family), with
the data below: a regression reference, not an independent one (each path has its own
independent references in its test module). ``JAXTESTS_EVALUATORS`` picks the family per call,
so all run here on the CPU; the programs the dense families build for CUDA are checked by
lowering them (no GPU needed), and the float32 family's error bound against exact sums.
"""

import math
import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jaxtests.kernels import evaluators as kevaluators
from jaxtests.kernels import families as kfamilies
from jaxtests.kernels import random as krandom
from jaxtests.kernels import resampling as kresampling

import jaxtests
from jaxtests import _engine, _profile, _signflip
from jaxtests._buckets import pad_axis

FAMILIES = ("words", "dense", "dense32")


def _median(v):
    return jnp.median(v)


def _exact30():
    rng = np.random.default_rng(3)
    d = rng.normal(0.2, 1, (2, 30))
    d[:, :3] = np.round(d[:, :3])  # a few ties
    return d


def _data():
    rng = np.random.default_rng(12345)
    return {
        "d": rng.normal(0.1, 1.0, 200),
        "dh": rng.normal(0.15, 1.0, (3, 300)),
        "ties": rng.integers(-2, 3, 150).astype(float) + 0.25 * (rng.random(150) < 0.3),
        "big": rng.normal(0.02, 1.0, 20000),
        "x": rng.normal(0.2, 1, 100),
        "y": rng.normal(0, 1, 100),
        "xs": rng.normal(0.5, 1, 10),
        "ys": rng.normal(0, 1, 300),
        "xi": rng.integers(0, 4, 60).astype(float),
        "yi": rng.integers(0, 4, 70).astype(float),
        "yt": rng.integers(0, 2, 300),
        "ua": rng.random(300),
        "ub": rng.random(300),
        "dx": rng.normal(0.3, 1, (2, 12)),
        "d30": _exact30(),
        "folds": rng.normal(0, 1, (3, 8)) + np.array([[0.0], [0.3], [0.5]]),
    }


D = _data()
YT = D["yt"]
PA = np.where(D["ua"] < 0.85, YT, 1 - YT)
PB = np.where(D["ub"] < 0.80, YT, 1 - YT)

# name -> (call, [p-values from jaxtests at commit 01e246f])
CASES = {
    "signflip_mean": (
        lambda: jaxtests.signflip_test(D["d"], n_resamples=2000, key=1),
        [0.13793103448275862],
    ),
    "signflip_t_maxT": (
        lambda: jaxtests.signflip_test(
            D["dh"], statistic="t", n_resamples=3000, key=2, correction="maxT"
        ),
        [
            *(0.0433188937020993, 0.004665111629456847, 0.0006664445184938354),
            *(0.09896701099633455, 0.009663445518160613, 0.0013328890369876708),
        ],
    ),
    "signflip_ties": (
        lambda: jaxtests.signflip_test(
            D["ties"], n_resamples=4000, key=3, method="monte-carlo", alternative="greater"
        ),
        [0.7530617345663584],
    ),
    "signflip_sequential": (
        lambda: jaxtests.signflip_test(D["d"] * 0.3, n_resamples=20000, key=4, sequential=10),
        [0.10309278350515463],
    ),
    "signflip_second_stride": (  # 20,000 instances: the 8,192-word stride
        lambda: jaxtests.signflip_test(D["big"], n_resamples=1500, key=5),
        [0.0013324450366422385],
    ),
    "twosample_bernoulli": (
        lambda: jaxtests.permutation_test(D["x"], D["y"], n_resamples=3000, key=6),
        [0.6797734088637121],
    ),
    "twosample_small_group": (
        lambda: jaxtests.permutation_test(D["xs"], D["ys"], n_resamples=3000, key=7, statistic="t"),
        [0.06731089636787738],
    ),
    "swap_accuracy": (
        lambda: jaxtests.swap_test(YT, PA, PB, measure="accuracy", n_resamples=3000, key=9),
        [0.001999333555481506],
    ),
    "signflip_exact_maxT": (
        lambda: jaxtests.signflip_test(D["dx"], method="exact", correction="maxT"),
        [0.7900390625, 0.2529296875, 0.9501953125, 0.46044921875],
    ),
    "signflip_exact_meet_in_the_middle": (
        lambda: jaxtests.signflip_test(D["d30"], method="exact"),
        [0.19309931434690952, 0.5797232091426849],
    ),
    "anova_permutation": (
        lambda: jaxtests.anova(
            D["folds"], blocked=True, method="permutation", n_resamples=999, key=10
        ),
        [0.482],
    ),
    "signflip_callable": (
        lambda: jaxtests.signflip_test(D["d"][:60], statistic=_median, n_resamples=500, key=11),
        [0.12375249500998003],
    ),
}


def _pvalues(r):
    out = list(np.ravel(np.asarray(r.pvalue)))
    adjusted = getattr(r, "pvalue_adjusted", None)
    if adjusted is not None:
        out += list(np.ravel(np.asarray(adjusted)))
    return [float(p) for p in out]


# Each family in the quick compile tier, and the CPU's family in the optimised one too
# (jaxtests._aot: the same bits; tests/test_compile_tiers.py compares more paths).
@pytest.fixture(params=[*(f"{f} quick" for f in FAMILIES), "words optimized"])
def family(request, monkeypatch):
    family, tier = request.param.split()
    monkeypatch.setenv("JAXTESTS_EVALUATORS", family)
    monkeypatch.setenv("JAXTESTS_COMPILE", tier)
    return family


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_path_gives_the_recorded_pvalues(family, name):
    call, expected = CASES[name]
    assert _pvalues(call()) == expected


@pytest.mark.parametrize(
    "name",
    [
        *("signflip_t_maxT", "twosample_bernoulli", "swap_accuracy", "anova_permutation"),
        *("signflip_callable", "signflip_exact_meet_in_the_middle"),
    ],
)
@pytest.mark.parametrize("fam", ["dense", "dense32"])
def test_the_accelerator_profile_gives_the_recorded_pvalues(monkeypatch, name, fam):
    # A GPU's block sizes (larger dense and materialised blocks, 64 matches per exact step),
    # run on this CPU: block sizes never change a draw, so the recorded p-values hold.
    family = kfamilies.FAMILIES[fam]
    monkeypatch.setattr(_profile, "current", lambda: _profile.Profile(family, "gpu"))
    call, expected = CASES[name]
    assert _pvalues(call()) == expected


def test_families_agree_past_the_strides_edges(monkeypatch):
    # 16,385 and 262,145 instances: one past each fixed stride (16,384 is covered by the
    # recorded cases' first stride), tie-heavy integers, a sign-flip and a two-sample test.
    rng = np.random.default_rng(7)
    got = {}
    for fam in FAMILIES:
        monkeypatch.setenv("JAXTESTS_EVALUATORS", fam)
        row = []
        for m in (16_385, 262_145):
            d = rng.integers(-3, 4, m).astype(float)
            s = jaxtests.signflip_test(d, n_resamples=64, key=m, alternative="greater")
            row += [int(s.n_extreme), float(s.pvalue)]
        x, y = d[:16_385] + 0.01, d[16_385:32_000]
        t = jaxtests.permutation_test(x, y, n_resamples=64, key=1)
        got[fam] = [*row, int(t.n_extreme), float(t.pvalue)]
        rng = np.random.default_rng(7)  # the same data for the other families
    assert got["words"] == got["dense"] == got["dense32"]


def test_float32_chunks_and_gathered_rechecks_give_the_words_counts(monkeypatch):
    # 2^15 draws: dense32 blocks of 16 chunks. Six values +-1: 31% of the sign-flip draws
    # (C(6,3) / 2^6) tie the observed 0, so more than one recheck pass of 8,192 lanes per
    # block; a fair-bit two-sample test (the family's sums with a count mask) on ties too.
    d = np.array([1.0, -1.0] * 3)
    x, y = np.array([0.0, 1.0, 0.0, 2.0]), np.array([1.0, 0.0, 1.0, 2.0])
    got = {}
    for fam in ("words", "dense32"):
        monkeypatch.setenv("JAXTESTS_EVALUATORS", fam)
        kw = dict(n_resamples=2**15, method="monte-carlo", alternative="greater")
        s = jaxtests.signflip_test(d, key=8, **kw)
        t = jaxtests.permutation_test(x, y, key=9, **kw)
        got[fam] = [int(s.n_extreme), int(t.n_extreme)]
    assert got["dense32"] == got["words"]
    # Exact: P(T >= 0) = 42 / 64 for the sign flips; 2^15 draws within 5 binomial sd of it.
    assert abs(got["words"][0] / 2**15 - 42 / 64) < 5 * np.sqrt(42 / 64 * 22 / 64 / 2**15)


def test_null_distributions_agree_within_the_rounding_bound(monkeypatch):
    # Counts are arbitrated by one ordered float64 sum; the null values themselves are each
    # family's fast sums (float32 words, float64 dense), within the words' bound of each other.
    nulls = {}
    for fam in FAMILIES:
        monkeypatch.setenv("JAXTESTS_EVALUATORS", fam)
        r = jaxtests.signflip_test(D["d"], n_resamples=500, key=12, return_null=True)
        nulls[fam] = np.asarray(r.null_distribution)
    bound = 2e-6 * np.sum(np.abs(D["d"])) / D["d"].size  # float32_err's order for m = 200
    np.testing.assert_allclose(nulls["words"], nulls["dense"], rtol=0, atol=bound)
    np.testing.assert_allclose(nulls["dense32"], nulls["dense"], rtol=0, atol=bound)


def test_the_variable_chooses_the_family_and_is_checked(monkeypatch):
    monkeypatch.delenv("JAXTESTS_EVALUATORS", raising=False)
    default = "words" if jax.devices()[0].platform == "cpu" else "dense"
    assert _profile.current().family.name == default  # the backend's default
    assert kfamilies.for_platform("cpu") is kfamilies.WORDS
    assert kfamilies.for_platform("gpu") is kfamilies.for_platform("tpu") is kfamilies.DENSE
    monkeypatch.setenv("JAXTESTS_EVALUATORS", " Dense ")
    assert _profile.current().family is kfamilies.DENSE
    monkeypatch.setenv("JAXTESTS_EVALUATORS", "DENSE32")
    assert _profile.current().family is kfamilies.DENSE32
    monkeypatch.setenv("JAXTESTS_EVALUATORS", "gpu")
    with pytest.raises(ValueError, match="JAXTESTS_EVALUATORS must be 'dense', 'dense32', 'words'"):
        jaxtests.signflip_test(D["d"], n_resamples=99, key=0)


# -- the programs the dense family builds for a GPU, lowered on this CPU


def _counts_program(m, platform="cuda", family="dense"):
    """``_run_counts`` of a dense sign-flip mean over ``m`` instances, lowered for ``platform``."""
    prof = _profile.Profile(kfamilies.FAMILIES[family], "gpu")
    d2 = np.random.default_rng(0).normal(size=(1, m))
    dp = pad_axis(d2, 32 * prof.schedule.pad_words(m))
    where = np.arange(dp.shape[-1]) < m
    with jax.enable_x64(True):
        out = _signflip._signflip_linear_prep(dp, where, statistic="mean", family=prof.family)
        _, mean_obs, tol, sd, _, _, sums = out
        data = sums
        draws = prof.schedule.fused_draws(m, 1, 10**8, False, prof.platform)
        ev = kevaluators.FusedEval(draws, stride=krandom.stride_words(m), family=prof.family)
        key = jax.random.key(0)
        args = (key, data, mean_obs, tol, sd, np.int32(0), np.int32(1), np.int64(10**8))
        static = dict(
            evaluator=ev,
            draws=draws,
            per_step=1,
            null_steps=0,
            n_dev=1,
            alternative="two-sided",
            maxt=False,
        )
        program = _engine._run_counts.trace(*args, **static)
        block = jax.jit(lambda k, d: ev.approx(k, jnp.zeros((1,), jnp.int32), d)[0]).trace(
            key, data
        )
        lower = dict(lowering_platforms=(platform,))
        return program.lower(**lower).as_text(), block.lower(**lower).as_text(), draws


def _loop_bounds(text):
    """The constant each ``stablehlo.while`` of ``text`` compares its counter with (or None)."""
    out = []
    for part in text.split("stablehlo.while")[1:]:
        cond = part.split("} do {")[0]
        found = re.findall(r"constant dense<(\d+)> : tensor<i(?:32|64)>", cond)
        out.append(int(found[0]) if len(found) == 1 and "compare LT" in cond else None)
    return out


@pytest.mark.parametrize("fam", ["dense", "dense32"])
def test_dense_programs_for_cuda_have_no_loop_over_the_data(fam):
    small, small_block, draws_small = _counts_program(100, family=fam)
    large, large_block, draws_large = _counts_program(100_000, family=fam)
    chunks = getattr(kfamilies.FAMILIES[fam], "chunks", 1)
    # A block's sums: generated, unpacked and reduced without any loop over the words; the
    # float32 family sums its chunks one after the other (a loop of a fixed trip count).
    assert (
        _loop_bounds(small_block) == _loop_bounds(large_block) == ([chunks] if chunks > 1 else [])
    )
    # The whole program: the loop over steps and the float64 recheck of unsure lanes (its
    # passes and their ordered sums), the same loops at every size.
    n_loops = 3 + (chunks > 1)
    assert small.count("stablehlo.while") == large.count("stablehlo.while") == n_loops
    # Accelerator blocks of one hypothesis: about 2^27 word-lanes (2^19 draws at most) per chunk.
    assert draws_small == chunks * 2**19
    assert draws_large * 3072 <= chunks * 2**27 < 2 * draws_large * 3072
    # No products in the sums, so no dot whose precision (TF32 on a GPU) could loosen the bound.
    assert "dot_general" not in small_block and "dot_general" not in large_block
    if fam == "dense32":
        # A byte of a word selects a float32 table entry (a gather; the tables' float64 sums in
        # bit order, rounded once: the bound's gamma_2), the entries reduced in float64 only,
        # and no float32 add anywhere in the block.
        for block in (small_block, large_block):
            assert "stablehlo.gather" in block
            assert not [ln for ln in block.splitlines() if "stablehlo.add" in ln and "f32>" in ln]
            reduces = [ln for ln in block.splitlines() if "stablehlo.reduce(" in ln]
            assert reduces and all("xf64>" in ln for ln in reduces)


def test_float32_dense_sums_are_within_their_bound_on_adversarial_data():
    # Exact sums (math.fsum of the selected float64 values, bits read from the same words in
    # numpy) against dense_sums32 and the family's bound on |t - t_ordered|: large values that
    # cancel, others spread over 2^-20..2^21 (float32 rounds each), many lanes. The errors are
    # nonzero (the data exercise the rounding) and every lane is inside the bound.
    rng = np.random.default_rng(41)
    m, n_lanes = 700, 2048
    n_words = -(-m // 32)
    d = rng.choice([-1.0, 1.0], m) * np.ldexp(1 + rng.random(m), rng.integers(-20, 21, m))
    d[::5], d[2::5] = 2.0**24 + 1, -(2.0**24)  # cancel in any sum that selects both
    dp = np.zeros((1, 32 * n_words))
    dp[0, :m] = d
    with jax.enable_x64(True):
        keys, local = krandom.draw_keys(jax.random.key(5), jnp.int64(0), n_lanes)
        a, c = np.array([2.0 / m]), np.array([-np.sum(d) / m])
        fam = kfamilies.DENSE32
        sums = kfamilies.layout(fam, jnp.asarray(dp), a, c, n_words)
        p32 = jax.jit(lambda k, l, s: fam.sums(k, l, s))(keys, local, sums.terms)
        p64 = kresampling.bit_sums_ordered(keys[:, 0], keys[:, 1], local, sums.terms.exact)
        w = np.asarray(krandom.word_grid(keys[:, 0], keys[:, 1], local, n_words, None))
        bound_p = float(kresampling.dense_sums32_error_bound(np.sum(np.abs(d)), n_words))
    shifts = np.arange(32, dtype=np.uint32)[None, :, None]
    bits = ((w[:, None, :] >> shifts) & 1).reshape(32 * n_words, n_lanes).astype(bool)
    exact = np.array([math.fsum(dp[0, bits[:, k]]) for k in range(n_lanes)])
    err = np.abs(np.asarray(p32)[0] - exact)
    assert np.all(err <= bound_p) and np.mean(err > 0) > 0.9
    t32 = a * np.asarray(p32)[0] + c
    t64 = a * np.asarray(p64)[0] + c
    assert np.all(np.abs(t32 - t64) <= float(sums.err_bound[0]))


DOT_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import jaxtests
    from jaxtests import datasets, models

    X, y = datasets.load_breast_cancer()
    X, y = X[:150], y[:150]
    jaxtests.permutation_test_score(models.ridge_classifier(), X, y, n_permutations=200, key=0)
    jaxtests.permutation_test_score(models.lda(), X, y, n_permutations=20, key=0)
    jaxtests.signflip_test(np.arange(30.0) - 10, n_resamples=999, key=0)
    jaxtests.permutation_test(np.arange(30.0), np.arange(20.0) + 3, n_resamples=999, key=0)
    """
)


def test_float32_products_name_their_precision(tmp_path):
    # A GPU computes float32 dots in TF32 unless told otherwise; every bound and integer count
    # that assumes float32 must ask for it. JAX dumps each program it lowers.
    env = dict(os.environ, JAX_DUMP_IR_TO=str(tmp_path), JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", DOT_SCRIPT], env=env, check=True, timeout=600)
    dots = []
    for name in os.listdir(tmp_path):
        with open(tmp_path / name) as f:
            dots += [line for line in f if "stablehlo.dot_general" in line]
    low = [line for line in dots if ("xf32>" in line or "xf16>" in line or "xbf16>" in line)]
    assert low, "the float32 label streams were not exercised"
    assert [line for line in low if "precision = [HIGHEST, HIGHEST]" not in line] == []


# -- a third family: one class of sums plus one schedule entry, nothing else


class _Ordered(kfamilies.Family):
    """Test family: the recheck's own ordered float64 sums (slow, exact to the bit)."""

    name = "ordered"
    float32 = False
    err_bound = staticmethod(kfamilies.float64_err)

    def sums(self, keys, local, terms, stride=None, count_mask=None):
        d = terms.exact.astype(jnp.float64)
        p = kresampling.bit_sums_ordered(keys[:, 0], keys[:, 1], local, d, terms.live_words, stride)
        if count_mask is None:
            return p
        w = krandom.word_grid(keys[:, 0], keys[:, 1], local, d.shape[1], stride)  # (W, L)
        ones = jax.lax.population_count(w & count_mask[: d.shape[1], None])
        return p, jnp.sum(ones, axis=0, dtype=jnp.int32)


@pytest.mark.parametrize(
    "name",
    [
        *("signflip_mean", "signflip_t_maxT", "signflip_second_stride", "twosample_bernoulli"),
        *("twosample_small_group", "swap_accuracy"),
    ],
)
def test_a_new_family_is_one_class_and_one_schedule(monkeypatch, name):
    # The planner, the evaluators and the engine are unchanged: registering the sums and
    # their schedule is all a family (a Pallas kernel, say) needs, and the counts are the
    # recorded ones since every family is banded against the same ordered sums.
    monkeypatch.setitem(kfamilies.FAMILIES, "ordered", _Ordered())
    monkeypatch.setitem(_profile.SCHEDULES, "ordered", _profile.SCHEDULES["dense"])
    monkeypatch.setenv("JAXTESTS_EVALUATORS", "ordered")
    call, expected = CASES[name]
    assert _pvalues(call()) == expected


def test_every_family_has_sums_and_a_schedule():
    assert set(kfamilies.FAMILIES) == set(_profile.SCHEDULES) == set(_profile.FAMILIES)


def test_every_evaluator_and_family_declares_what_the_engine_asks():
    # The engine and exceedance.evaluate read declared attributes, never probe: every
    # evaluator class is an Evaluator, the banded ones (those whose sums are rechecked) have
    # approx, exact and a registered family's type, and every family is a Family.
    evaluators = [
        v for v in vars(kevaluators).values() if isinstance(v, type) and v.__name__.endswith("Eval")
    ]
    assert len(evaluators) >= 10
    assert all(issubclass(v, kevaluators.Evaluator) for v in evaluators)
    banded = [v for v in evaluators if v.banded is not False]  # True, or a property of the data
    assert {v.__name__ for v in banded} == {"FusedEval", "SubsetEval"}
    assert all(callable(v.approx) and callable(v.exact) for v in banded)
    assert {v.__name__ for v in evaluators if v.materialised} == {
        *("SignFlippedEval", "SplitEval", "SwappedEval", "WithinBlockEval", "GenericEval"),
    }
    assert all(isinstance(f, kfamilies.Family) for f in kfamilies.FAMILIES.values())


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_block_keys_are_the_bits_of_jax_random_fold_in(impl):
    # Threefry keys take the straight-line hash (krandom.threefry2x32), other kinds jax.random's
    # own path; both must give jax.random's bits of fold_in, vmapped over the blocks (the key
    # words of every Monte Carlo draw of the library), word for word.
    ids = jnp.asarray([0, 1, 2, 4095, 2**20 + 3, 2**31 - 1, 2**32 - 1], jnp.int64)
    for seed in (0, 7, 2**31 + 5):
        key = jax.random.key(seed, impl=impl)
        for n_keys in (2, 6):
            got = jax.jit(krandom.block_keys, static_argnums=2)(key, ids, n_keys)
            ref = jax.vmap(
                lambda b: jax.random.bits(jax.random.fold_in(key, b), (n_keys,), jnp.uint32)  # noqa: B023
            )(ids)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
