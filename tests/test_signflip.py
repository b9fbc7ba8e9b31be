"""signflip_test: exact enumeration, binomial, Monte Carlo, maxT, sequential, validation."""

import itertools

import jax
import numpy as np
import pytest
from _helpers import sign_patterns, tail_pvalues
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from jaxtests._permutation import signflip_test
from jaxtests._posthoc import adjust_pvalues
from jaxtests._signflip import signflip_pvalue

D12 = np.array([0.8, -0.3, 1.1, 0.4, -0.9, 0.6, 1.5, -0.2, 0.7, 0.05, 0.9, -0.4])


def _enumerate(d, fn=np.mean):
    """All 2^m sign patterns in numpy; scipy's tolerance and two-sided convention."""
    signs = sign_patterns(d.shape[0])
    null = np.array([fn(s * d) for s in signs]) if fn is not np.mean else (signs * d).mean(1)
    return tail_pvalues(null, fn(d))


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_mean_matches_numpy_enumeration(alternative):
    r = signflip_test(D12, method="exact", alternative=alternative)
    assert r.method == "exact" and r.n_resamples == 2**12
    np.testing.assert_allclose(r.pvalue, _enumerate(D12)[alternative], rtol=1e-12)


def test_exact_t_equals_mean_and_enumeration():
    # t is increasing in the mean under sign flips (sum of squares invariant).
    from scipy.stats import ttest_1samp

    r_t = signflip_test(D12, statistic="t", method="exact")
    r_m = signflip_test(D12, method="exact")
    np.testing.assert_allclose(r_t.pvalue, r_m.pvalue, rtol=1e-12)
    np.testing.assert_allclose(r_t.statistic, ttest_1samp(D12, 0).statistic, rtol=1e-12)


def test_exact_callable_enumeration_and_small_docstring_case():
    fn = lambda x: np.median(x)  # noqa: E731
    import jax.numpy as jnp

    r = signflip_test(D12[:10], statistic=lambda x: jnp.median(x), method="exact")
    np.testing.assert_allclose(r.pvalue, _enumerate(D12[:10], fn)["two-sided"], rtol=1e-12)
    # All six differences positive: only the identity pattern (and its mirror) are as extreme.
    r = signflip_test([0.5, 1.2, 0.3, 0.9, 0.1, 0.7], method="exact")
    assert float(r.pvalue) == 2 / 64


def test_exact_mitm_m30_equals_enumeration_of_halves():
    # m = 30 by meeting in the middle vs a numpy meet-in-the-middle count on the same halves
    # (an independent O(2^15 log) computation with np.searchsorted).
    rng = np.random.default_rng(3)
    d = rng.normal(0.3, 1, 30)
    r = signflip_test(d, method="exact", alternative="greater")
    pats = ((np.arange(2**15)[:, None] >> np.arange(15)) & 1).astype(float)
    sa = np.sort(pats @ d[:15])
    sb = pats @ d[15:]
    thr = d.sum() * (1 - 1e-12)
    count = np.sum(2**15 - np.searchsorted(sa, thr - sb, side="left"))
    np.testing.assert_allclose(r.pvalue, count / 2**30, rtol=1e-12)


def test_lattice_counts_equal_meet_in_the_middle_counts():
    # Half-integer differences (average ranks with ties): the host subset-sum counts and
    # the engine's meet in the middle count the same 2^30 patterns; integer counts agree.
    from jaxtests._engine import mitm_counts
    from jaxtests._pvalues import lattice_counts, lattice_feasible

    rng = np.random.default_rng(11)
    d = rng.integers(-12, 13, size=(3, 30)) / 2.0
    lo = np.array([-4.0, 0.5, 3.25])
    hi = np.array([-3.5, 1.0, 7.0])
    assert lattice_feasible(d) and not lattice_feasible(d + 0.1)
    ge, le = lattice_counts(d, lo, hi)
    ge_m, le_m = (np.asarray(c) for c in mitm_counts(d, lo, hi))
    np.testing.assert_array_equal(ge, ge_m)
    np.testing.assert_array_equal(le, le_m)


def test_exact_integer_differences_beyond_meet_in_the_middle():
    # 80 integer differences (counts): exact by subset sums, checked against a Python-int
    # recursion of the sign-flipped sum (2^80 patterns: beyond int64, n_extreme -1).
    rng = np.random.default_rng(5)
    d = rng.integers(-3, 5, size=80).astype(float)
    r = signflip_test(d, method="exact", alternative="greater")
    counts = {0: 1}
    for a in d[d != 0]:
        new = {}
        for s_, c in counts.items():  # each difference adds +|a| or -|a|
            new[s_ + abs(a)] = new.get(s_ + abs(a), 0) + c
            new[s_ - abs(a)] = new.get(s_ - abs(a), 0) + c
        counts = new
    m = int(np.sum(d != 0))
    ge = sum(c for s_, c in counts.items() if s_ >= d.sum())
    assert r.method == "exact" and r.n_resamples == 2**m
    np.testing.assert_allclose(float(r.pvalue), ge / 2**m, rtol=1e-12)
    assert int(r.n_extreme) == (ge if ge < 2**63 else -1)
    with pytest.raises(ValueError, match="at most 48 nonzero"):
        signflip_test(d + 0.1, method="exact")


def test_binomial_equals_scipy_binomtest():
    d = np.array([1, -1, 0, 1, 1, 0, 1, -1, 1, 1, 1, 0, 1, 1] * 3, float)  # 0/1-loss diffs
    n_pos, n_nz = int((d > 0).sum()), int((d != 0).sum())
    for alt in ("two-sided", "less", "greater"):
        r = signflip_test(d, alternative=alt)
        assert r.method == "binomial"
        np.testing.assert_allclose(
            r.pvalue, stats.binomtest(n_pos, n_nz, 0.5, alternative=alt).pvalue, rtol=1e-10
        )
    # Exact enumeration agrees with the closed form (m_nonzero = 9 here).
    small = np.array([1, -1, 0, 1, 1, 0, 1, -1, 1, 1, 1], float) * 0.25
    rb = signflip_test(small, method="binomial")
    re = signflip_test(small, method="exact")
    np.testing.assert_allclose(rb.pvalue, re.pvalue, rtol=1e-12)


def test_monte_carlo_within_cp_interval_of_exact():
    # 99% interval; failure budget 1% for a fixed key (key 0 passes; over keys 0-39 the
    # one-sided z-scores of the Monte Carlo p had mean -0.2 and sd 1.05).
    exact = signflip_test(D12, method="exact").pvalue
    r = signflip_test(D12, method="monte-carlo", n_resamples=20_000, key=0)
    assert r.method == "monte-carlo"
    lo, hi = np.asarray(r.pvalue_interval)
    assert lo <= exact <= hi
    assert abs(float(r.pvalue) - float(exact)) < 4 * np.sqrt(exact * (1 - exact) / 20_000) * 2


def test_batch_size_invariance_and_batched_equals_looped():
    # 64 hypotheses share 2^17 lanes: blocks of 2048 draws, 10 blocks for 20,000 draws;
    # batch_size 6144 evaluates 3 blocks per step (straddling 4096-draw key blocks).
    d = np.random.default_rng(1).normal(0.2, 1, (64, 40))
    a = signflip_test(d, n_resamples=20_000, key=11)
    b = signflip_test(d, n_resamples=20_000, key=11, batch_size=6144)
    np.testing.assert_array_equal(a.n_extreme, b.n_extreme)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    for i in range(2):
        ri = signflip_test(d[i], n_resamples=20_000, key=11)
        assert int(ri.n_extreme) == int(a.n_extreme[i])
    c = signflip_test(d.T, n_resamples=20_000, key=11, axis=0)
    np.testing.assert_array_equal(a.pvalue, c.pvalue)


def test_many_hypotheses_beyond_the_capacity_see_the_single_runs_draws():
    # 80 x 16,384 values exceed the capacity budget: the batch is padded to the ladder
    # (64 instances), one hypothesis alone to the capacity; the draws are the same.
    from jaxtests._buckets import CAPACITY_ELEMENTS, CAPACITY_WORDS, capacity_words

    d = np.random.default_rng(4).normal(0.1, 1, (80, 50))
    assert 80 * 32 * CAPACITY_WORDS[0] > CAPACITY_ELEMENTS
    assert capacity_words(50, 80) < capacity_words(50) == CAPACITY_WORDS[0]
    a = signflip_test(d, n_resamples=3_000, key=12)
    for i in (0, 79):
        ri = signflip_test(d[i], n_resamples=3_000, key=12)
        assert int(ri.n_extreme) == int(a.n_extreme[i])


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.floats(-5, 5, allow_nan=False).filter(lambda x: abs(x) > 1e-3), min_size=40, max_size=40
    ),
    st.integers(0, 2**31 - 1),
)
def test_properties_bounds_symmetry(values, seed):
    d = np.array(values)
    n = 2_000
    r = signflip_test(d, n_resamples=n, key=seed, method="monte-carlo", alternative="greater")
    assert 1 / (n + 1) <= float(r.pvalue) <= 1
    neg = signflip_test(-d, n_resamples=n, key=seed, method="monte-carlo", alternative="less")
    # Flipping every sign maps each draw's statistic T to -T: the counts swap exactly.
    assert int(neg.n_extreme) == int(r.n_extreme)


def test_maxt_adjusted_at_least_raw_and_null():
    d = np.random.default_rng(2).normal(0.2, 1, (4, 30))
    r = signflip_test(d, correction="maxT", n_resamples=5_000, key=3, return_null=True)
    assert np.all(np.asarray(r.pvalue_adjusted) >= np.asarray(r.pvalue))
    assert r.null_distribution.shape == (4, 5_000)
    # The kept null reproduces the counts.
    t = np.asarray(r.statistic)[:, None]
    ge = np.sum(np.asarray(r.null_distribution) >= t - 1e-12, axis=1)
    le = np.sum(np.asarray(r.null_distribution) <= t + 1e-12, axis=1)
    np.testing.assert_array_equal(np.minimum(ge, le), r.n_extreme)


def test_sequential_stops_early_for_null_and_runs_for_signal():
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, 25)
    d0 = np.concatenate([x, -x * 0.99])  # observed mean near the null centre
    null = signflip_test(d0, sequential=20, n_resamples=50_000, key=1)
    assert int(null.n_draws) < 200 and null.n_resamples == int(null.n_draws)
    # Besag & Clifford (1991): p = h / L (two-sided: 2 h / L).
    np.testing.assert_allclose(null.pvalue, min(1.0, 2 * 20 / int(null.n_draws)))
    sig = signflip_test(rng.normal(1.5, 1, 50), sequential=20, n_resamples=20_000, key=1)
    assert int(sig.n_draws) == 20_000
    assert float(sig.pvalue) == 2 / 20_001  # two-sided: 2 (b + 1) / (B + 1)


def test_hotelling_rows_flipped_as_wholes():
    rng = np.random.default_rng(6)
    d = rng.normal(0, 1, (10, 2))
    r = signflip_test(d, statistic="hotelling", method="exact")

    def t2(x):
        m = x.mean(0)
        s = np.cov(x, rowvar=False)
        return x.shape[0] * m @ np.linalg.solve(s, m)

    signs = sign_patterns(10)
    null = np.array([t2(s[:, None] * d) for s in signs])
    obs = t2(d)
    np.testing.assert_allclose(r.statistic, obs, rtol=1e-10)
    np.testing.assert_allclose(r.pvalue, np.mean(null >= obs * (1 - 1e-12)), rtol=1e-12)


def test_internal_entry_for_parametric_wiring():
    import jaxtests._precision as prec

    r = prec.x64(signflip_pvalue)("t", D12, method="exact")
    np.testing.assert_allclose(r.pvalue, _enumerate(D12)["two-sided"], rtol=1e-12)


@pytest.mark.slow
def test_calibration_under_null():
    # 200 null data sets, B = 199: P(p <= 0.1) <= 0.1 + 3 SE (failure budget ~0.2%).
    rng = np.random.default_rng(8)
    d = rng.standard_t(3, (200, 25))
    r = signflip_test(d, n_resamples=199, key=2, method="monte-carlo")
    rate = np.mean(np.asarray(r.pvalue) <= 0.1)
    assert rate <= 0.1 + 3 * np.sqrt(0.09 / 200)
    rt = signflip_test(d, statistic="t", n_resamples=199, key=3, method="monte-carlo")
    assert np.mean(np.asarray(rt.pvalue) <= 0.1) <= 0.1 + 3 * np.sqrt(0.09 / 200)


def test_validation_messages():
    with pytest.raises(ValueError, match="`d` contains NaN at index 1"):
        signflip_test([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="at least 2 instances"):
        signflip_test([1.0])
    with pytest.raises(ValueError, match="`n_resamples` must be at least 1"):
        signflip_test(D12, n_resamples=0)
    with pytest.raises(TypeError, match="`n_resamples` must be an int"):
        signflip_test(D12, n_resamples=1.5)
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        signflip_test(D12, statistic="median")
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        signflip_test(D12, alternative="bigger")
    with pytest.raises(ValueError, match="`method` must be one of"):
        signflip_test(D12, method="fast")
    with pytest.raises(ValueError, match="`correction` must be one of"):
        signflip_test(D12, correction="holm")
    with pytest.raises(ValueError, match="needs differences taking only"):
        signflip_test(D12, method="binomial")
    with pytest.raises(ValueError, match="`sequential` needs method='monte-carlo'"):
        signflip_test(D12, sequential=5, method="exact")
    with pytest.raises(ValueError, match="`axis` must be left at -1"):
        signflip_test(np.ones((5, 2)), statistic="hotelling", axis=0)
    with pytest.raises(ValueError, match="`axis`=3 is out of range"):
        signflip_test(D12, axis=3)
    with pytest.raises(ValueError, match="supports at most 48"):
        signflip_test(np.arange(1.0, 51.0) + 0.1, method="exact")  # integers: subset sums
    with pytest.raises(TypeError, match="`return_null` must be a bool"):
        signflip_test(D12, return_null=1)
    with pytest.raises(TypeError, match="`key` must be an int seed or a JAX key"):
        signflip_test(D12, key="a", method="monte-carlo")


def test_jax_key_and_seed_recorded():
    # 20,000 draws: the block size (and program) of test_monte_carlo_within_cp_interval_of_exact
    r1 = signflip_test(D12, method="monte-carlo", n_resamples=20_000, key=jax.random.key(4))
    again = jax.random.wrap_key_data(np.array(r1.seed, np.uint32))
    r2 = signflip_test(D12, method="monte-carlo", n_resamples=20_000, key=again)
    assert r1.seed == r2.seed and int(r1.n_extreme) == int(r2.n_extreme)


def test_progress_callback_reports_chunks_and_keeps_result_bit_identical():
    d = np.random.default_rng(9).normal(0.1, 1, (2, 50))
    calls = []
    # Several blocks, one chunk each: 300,000 draws on a CPU (2^17 lanes shared by the 2
    # hypotheses); an accelerator's blocks are larger (2^19 draws), so three of them there.
    from jaxtests import _profile

    profile = _profile.current()
    n = max(300_000, 3 * profile.schedule.fused_draws(50, 2, 10**9, False, profile.platform))
    plain = signflip_test(d, n_resamples=n, key=4, correction="maxT")
    r = signflip_test(
        d,
        n_resamples=n,
        key=4,
        correction="maxT",
        progress=lambda done, total: calls.append((done, total)),
    )
    np.testing.assert_array_equal(r.n_extreme, plain.n_extreme)
    np.testing.assert_array_equal(r.pvalue_adjusted, plain.pvalue_adjusted)
    assert len(calls) >= 3 and calls[-1] == (n, n)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(calls))
    # Sequential stopping also reports (done jumps to the total once every test stopped).
    s = signflip_test(d[0] * 0.01, sequential=10, n_resamples=50_000, key=1)
    seq2 = []
    s2 = signflip_test(
        d[0] * 0.01,
        sequential=10,
        n_resamples=50_000,
        key=1,
        progress=lambda done, total: seq2.append(done),
    )
    assert seq2[-1] == 50_000 and int(s2.n_draws) == int(s.n_draws)
    with pytest.raises(TypeError, match="`progress` must be a callable"):
        signflip_test(d, progress=3)


def test_callable_mean_sees_the_same_sign_patterns_as_the_fused_mean():
    # The generic path materialises the same words as the fused float32 sums: the counts of a
    # user-supplied mean equal the built-in ones (no draw falls in the float32 tie band here).
    import jax.numpy as jnp

    d = np.random.default_rng(10).normal(0.3, 1, 45)
    a = signflip_test(d, n_resamples=3_000, key=8, method="monte-carlo")
    b = signflip_test(d, statistic=lambda x: jnp.mean(x), n_resamples=3_000, key=8)
    assert a.method == b.method == "monte-carlo"
    assert int(a.n_extreme) == int(b.n_extreme)


def test_bit_sums_equal_explicit_bits_within_the_stated_bound():
    # Kernel level: the fused float32 sums match float64 sums over the materialised words of the
    # same draws, within bit_sums_error_bound; the counts equal numpy popcounts.
    import jax.numpy as jnp
    from jaxtests.kernels import random as krandom
    from jaxtests.kernels import resampling as kresampling

    with jax.enable_x64(True):
        m, n_words, n_draws = 70, 3, 8192
        d = np.random.default_rng(11).normal(0, 3, (2, m))
        d32 = jnp.asarray(np.pad(d, ((0, 0), (0, 32 * n_words - m))).reshape(2, n_words, 32))
        keys, local = krandom.draw_keys(jax.random.key(5), jnp.int64(4096), n_draws)
        mask = jnp.asarray(np.array([2**32 - 1, 2**32 - 1, 2**6 - 1], np.uint32))
        p, cnt = kresampling.bit_sums(keys[:, 0], keys[:, 1], local, d32.astype(jnp.float32), mask)
        words = np.asarray(krandom.word_grid(keys[:, 0], keys[:, 1], local, n_words))
    bits = ((words.T[:, :, None] >> np.arange(32)) & 1).reshape(n_draws, -1)[:, :m]
    exact = bits.astype(float) @ d.T  # (draws, 2)
    bound = np.asarray(kresampling.bit_sums_error_bound(np.abs(d).sum(1), n_words))
    err = np.abs(np.asarray(p).T - exact)
    assert np.all(err <= bound) and err.max() > 0  # float32 rounding is real, and bounded
    np.testing.assert_array_equal(np.asarray(cnt), bits.sum(1))
    # Fair, independent bits: each bit's frequency within 5 binomial SE (failure budget ~1e-4).
    freq = bits.mean(0)
    assert np.all(np.abs(freq - 0.5) < 5 * 0.5 / np.sqrt(n_draws))
    corr = np.corrcoef(bits[:, :20].T)[np.triu_indices(20, 1)]
    assert np.all(np.abs(corr) < 5 / np.sqrt(n_draws))


@pytest.mark.slow
def test_heavy_tailed_monte_carlo_counts_are_float64_counts():
    # Issue 13, item 12 (MacKay's DELVE note: differences spanning orders of magnitude):
    # one |d_i| = 2^20 among values near 0.004; the float32 rounding band of the sums
    # (1.6e-6 sum|d|) covered most of the null (the case: p = 0.998, exact 0.126).
    rng = np.random.default_rng(13)
    small = np.round(rng.normal(0.004, 0.004, 15) * 2**12) / 2**12  # sums exact in float64
    small *= np.where(rng.random(15) < 0.3, -1.0, 1.0)
    d = np.concatenate([[2.0**20], small])
    # Exact p by numpy enumeration of the 2^15 patterns of the small values: T >= t needs
    # the large value's sign kept and the rest's sum at least the observed one, so the
    # two-sided p is 2 (1/2) P(rest >= observed rest).
    s = 1 - 2 * ((np.arange(2**15)[:, None] >> np.arange(15)) & 1)
    p_exact = np.mean(s @ small >= small.sum())
    assert 0.05 < p_exact < 0.5
    np.testing.assert_allclose(signflip_test(d, method="exact").pvalue, p_exact, rtol=1e-12)
    # 20,000 draws: the block size (and program) of the other single-hypothesis tests
    r = signflip_test(d, method="monte-carlo", n_resamples=20_000, key=0)
    lo, hi = np.asarray(r.pvalue_interval)
    assert lo <= p_exact <= hi, (float(r.pvalue), p_exact)  # 99% interval, fixed key
    rt = signflip_pvalue("t", d, n_resamples=20_000, key=0, method="monte-carlo")
    assert int(rt.n_extreme) == int(r.n_extreme)
    # The float64 recheck depends on each lane's own values: any batch size, the same draws.
    a = signflip_test(d, n_resamples=140_000, key=3, method="monte-carlo", return_null=True)
    b = signflip_test(
        d, n_resamples=140_000, key=3, method="monte-carlo", return_null=True, batch_size=2**18
    )
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)


def test_holm_cannot_reject_six_folds_where_max_t_can():
    # docs/user_guide/limits.md (issue 42.5): the smallest two-sided exact p-value of 6 folds
    # is 2/2^6, so Holm over two hypotheses gives at least 0.0625; max-T, whose all-positive
    # sign pattern is the most extreme for both hypotheses at once, gives 2/2^6.
    d = np.array([[0.02, 0.03, 0.01, 0.04, 0.02, 0.03], [0.05, 0.02, 0.03, 0.02, 0.04, 0.01]])
    r = signflip_test(d, correction="maxT", key=0)
    np.testing.assert_array_equal(r.pvalue, 2 / 2**6)  # exact enumeration of 64 patterns
    np.testing.assert_array_equal(adjust_pvalues(r.pvalue, "holm"), 4 / 2**6)
    np.testing.assert_array_equal(r.pvalue_adjusted, 2 / 2**6)


@pytest.mark.parametrize("statistic", ["mean", "t"])
def test_host_prep_of_the_counted_paths_is_the_jitted_ones(statistic):
    # Exact counts and the binomial closed form need no draws: their prep runs in numpy
    # (nothing compiled); the Monte Carlo paths' program computes the same from padding.
    from jaxtests import _signflip

    d = np.round(np.random.default_rng(5).normal(size=(3, 13)), 1)  # ties
    d[1] = 0.25 * np.sign(d[1])  # {-c, 0, c}
    d[2, :3] = 0.0
    observed, total, (lo, hi) = _signflip._linear_prep_host(d, statistic)
    dp = np.pad(d, ((0, 0), (0, 32 * 2 - 13)))
    ref = _signflip._signflip_linear_prep(dp, np.arange(64) < 13, statistic=statistic)
    for h, t in zip((observed, total, lo, hi), (ref[0], ref[4], *ref[5]), strict=True):
        np.testing.assert_allclose(h, np.asarray(t), rtol=1e-12, atol=0)
