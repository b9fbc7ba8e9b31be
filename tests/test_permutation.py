"""permutation_test: exact equals scipy, subset draws uniform, seed 003 worked example."""

import itertools
import math

import jax.numpy as jnp
import numpy as np
import pytest
from jaxtests.kernels import random as krandom
from jaxtests.kernels import resampling as kresampling
from scipy import stats

from jaxtests._permutation import permutation_test

X = np.array([0.3, 1.9, -0.4, 1.2, 0.8, 2.1, 0.0])
Y = np.array([1.4, 2.2, 2.9, 0.7, 1.8, 3.1])


def _scipy(x, y, alt):
    md = lambda a, b, axis: np.mean(a, axis) - np.mean(b, axis)  # noqa: E731
    return stats.permutation_test(
        (x, y),
        md,
        permutation_type="independent",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alt,
    ).pvalue


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_equals_scipy(alternative):
    r = permutation_test(X, Y, alternative=alternative)
    assert r.method == "exact" and r.n_resamples == math.comb(13, 7)
    np.testing.assert_allclose(r.pvalue, _scipy(X, Y, alternative), rtol=1e-10)


def test_exact_with_ties_equals_scipy_and_t_equals_mean():
    x = np.array([1.0, 2, 2, 3, 5])
    y = np.array([2.0, 3, 3, 4, 6, 6])
    for alt in ("two-sided", "greater"):
        np.testing.assert_allclose(
            permutation_test(x, y, alternative=alt).pvalue, _scipy(x, y, alt), rtol=1e-10
        )
    rt = permutation_test(x, y, statistic="t")
    np.testing.assert_allclose(rt.pvalue, permutation_test(x, y).pvalue, rtol=1e-12)
    np.testing.assert_allclose(rt.statistic, stats.ttest_ind(x, y).statistic, rtol=1e-12)


def test_seed003_worked_example():
    # Seed 003 (Hein, lecture 16): X = (2, 5), Y = (6), T = |mean X - mean Y| = 2.5. The slide
    # counts T > t over the 3 distinct splits and gets 1/3; we (and scipy) count T >= t: 2/3.
    def absdiff(a, b):
        return jnp.abs(jnp.mean(a) - jnp.mean(b))

    r = permutation_test([2.0, 5.0], [6.0], statistic=absdiff, alternative="greater")
    assert float(r.statistic) == 2.5
    np.testing.assert_allclose(r.pvalue, 2 / 3, rtol=1e-12)
    # The slide's strict count: splits with T > 2.5 are {5,6 | 2} (T = 3.5): 1 of 3.
    splits = [
        absdiff(jnp.array(a), jnp.array([v for v in (2.0, 5.0, 6.0) if v not in a]))
        for a in itertools.combinations((2.0, 5.0, 6.0), 2)
    ]
    assert np.mean(np.array(splits) > 2.5) == 1 / 3


def test_monte_carlo_within_interval_and_callable():
    exact = permutation_test(X, Y).pvalue
    r = permutation_test(X, Y, method="monte-carlo", n_resamples=20_000, key=5)
    lo, hi = np.asarray(r.pvalue_interval)
    assert lo <= exact <= hi  # 99% interval; fixed key
    rc = permutation_test(
        X,
        Y,
        statistic=lambda a, b: jnp.mean(a) - jnp.mean(b),
        method="monte-carlo",
        n_resamples=20_000,
        key=5,
    )
    assert abs(float(rc.pvalue) - float(exact)) < 0.02


def test_subset_correction_is_uniform_over_all_splits():
    # fix_subset_size: every one of the C(7, 3) = 35 subsets equally likely (chi-square).
    import jax

    with jax.enable_x64(True):
        n, n1, r = 7, 3, 8192
        counts = {}
        keys, local = krandom.draw_keys(jax.random.key(0), jnp.int64(0), 4 * r, 4)
        for i in range(4):
            s = slice(i * r, (i + 1) * r)
            k, c = keys[s], local[s]
            w = krandom.word_grid(k[:, 0], k[:, 1], c, 1)
            w = kresampling.fix_subset_size(w, n, n1, k[:, 2], k[:, 3], c)
            for v in np.asarray(w[0]):
                counts[int(v)] = counts.get(int(v), 0) + 1
    assert all(bin(k).count("1") == n1 and k < 2**n for k in counts)
    assert len(counts) == 35
    obs = np.array(list(counts.values()))
    assert stats.chisquare(obs).pvalue > 1e-3  # failure budget 0.1%


def test_batch_invariance_and_batched_equals_looped():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, (2, 160))
    y = rng.normal(0.5, 1, (2, 130))
    # 100,000 draws are 2 blocks of 65,536 (2 hypotheses share 2^17 lanes); batch_size
    # 131,072 evaluates both in one step instead of two.
    # Every draw must match, not only the counts: with n = 290 a draw's subset correction
    # runs in one of several hashed-bucket tiers, picked by its own need, never by the other
    # lanes of its evaluation chunk (which the batch size changes).
    kw = dict(n_resamples=100_000, key=9, correction="maxT", return_null=True)
    a = permutation_test(x, y, **kw)
    b = permutation_test(x, y, batch_size=131_072, **kw)
    np.testing.assert_array_equal(np.asarray(a.null_distribution), np.asarray(b.null_distribution))
    np.testing.assert_array_equal(a.n_extreme, b.n_extreme)
    np.testing.assert_array_equal(a.pvalue_adjusted, b.pvalue_adjusted)
    r0 = permutation_test(x[0], y[0], n_resamples=100_000, key=9)
    assert int(r0.n_extreme) == int(a.n_extreme[0])
    assert np.all(np.asarray(a.pvalue_adjusted) >= np.asarray(a.pvalue))


def test_many_hypotheses_beyond_the_capacity_see_the_single_runs_splits():
    # 80 hypotheses of 120 items exceed the capacity budget: the batch is padded to the
    # ladder, a hypothesis alone to the capacity; the splits (and their counts) are the same.
    rng = np.random.default_rng(6)
    x, y = rng.normal(0, 1, (80, 60)), rng.normal(0.3, 1, (80, 60))
    # 20,000 draws: a hypothesis alone runs the program of the single-hypothesis tests above
    a = permutation_test(x, y, n_resamples=20_000, key=13)
    for i in (0, 79):
        ri = permutation_test(x[i], y[i], n_resamples=20_000, key=13)
        assert int(ri.n_extreme) == int(a.n_extreme[i])


@pytest.mark.slow
def test_calibration_under_null():
    rng = np.random.default_rng(4)
    x = rng.exponential(1, (150, 12))
    y = rng.exponential(1, (150, 9))
    r = permutation_test(x, y, method="monte-carlo", n_resamples=199, key=1)
    assert np.mean(np.asarray(r.pvalue) <= 0.1) <= 0.1 + 3 * np.sqrt(0.09 / 150)


def test_validation_messages():
    with pytest.raises(ValueError, match="`y` contains NaN at index 0"):
        permutation_test(X, [np.nan, 1.0])
    with pytest.raises(ValueError, match="must agree on every axis"):
        permutation_test(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="same number of dimensions"):
        permutation_test(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="at least 1 observation each"):
        permutation_test([1.0], [2.0])
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        permutation_test(X, Y, statistic="median")
    with pytest.raises(ValueError, match="binomial' applies to sign-flip"):
        permutation_test(X, Y, method="binomial")
    with pytest.raises(ValueError, match="limit 2"):
        permutation_test(np.arange(40.0), np.arange(40.0), method="exact")


def _corrected_sums(n, n1, z, start, tiers, n_draws, seed):
    """Group-1 sums of the engine's Monte Carlo splits, straight from the kernels."""
    import jax

    with jax.enable_x64(True):
        n_words = -(-n // 32)
        keys, local = krandom.draw_keys(jax.random.key(seed), jnp.int64(0), n_draws, 6)
        zz = jnp.asarray(z)[None, :]
        if start is kresampling.SubsetStart.FAIR_BITS:
            z32 = jnp.pad(zz, ((0, 0), (0, 32 * n_words - n))).reshape(1, n_words, 32)
            mask = jnp.asarray(
                np.array([(1 << min(32, n - 32 * w)) - 1 for w in range(n_words)], np.uint32)
            )
            p, k = kresampling.bit_sums(
                keys[:, 0], keys[:, 1], local, z32.astype(jnp.float32), mask
            )
        else:
            empty = start is kresampling.SubsetStart.EMPTY
            p = jnp.zeros((1, n_draws)) if empty else jnp.full((1, n_draws), sum(z))
            k = jnp.full((n_draws,), 0 if empty else n, jnp.int32)
        c = k - n1
        corr = kresampling.subset_corrections(
            keys, local, jnp.abs(c), c > 0, zz, n=n, n_words=n_words, start=start, tiers=tiers
        )
        return np.asarray(jnp.where(c > 0, p - corr, p + corr)[0])


@pytest.mark.parametrize(
    "start, tiers",
    [
        (kresampling.SubsetStart.FAIR_BITS, ((13, 1),)),  # buckets are the positions
        (kresampling.SubsetStart.FAIR_BITS, ((1, 1),)),  # needs above 1 restart exact buckets
        (kresampling.SubsetStart.EMPTY, ((13, 1),)),
        (kresampling.SubsetStart.FULL, ((13, 1),)),
    ],
)
def test_bernoulli_bits_plus_corrections_give_uniform_splits(start, tiers):
    # Every one of the C(13, 4) = 715 splits equally likely: with z_i = 2^i the group-1 sum
    # names the split. Chi-square over all splits, 32,768 draws (failure budget 0.1% each).
    n, n1 = 13, 4
    s = _corrected_sums(n, n1, 2.0 ** np.arange(n), start, tiers, 2**15, seed=3)
    codes = s.astype(np.int64)
    assert np.all(s == codes) and all(bin(c).count("1") == n1 for c in np.unique(codes))
    counts = np.bincount(codes, minlength=2**n)[
        [sum(1 << i for i in c) for c in itertools.combinations(range(n), n1)]
    ]
    assert counts.sum() == 2**15 and np.all(counts > 0)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_hashed_buckets_still_give_uniform_splits():
    # n = 40 > 32 buckets of one row: accepted positions are told apart by a random hash of
    # the position. Remove 2 of 40 (n1 = 38): z is a Sidon set (all pair sums differ), so
    # the group-1 sum names the removed pair; chi-square over all 780 pairs (budget 0.1%).
    n, n1, p = 40, 38, 41
    z = np.array([2 * p * i + (i * i) % p for i in range(n)], float)  # Erdos-Turan Sidon set
    pair_sum = {z[a] + z[b]: (a, b) for a, b in itertools.combinations(range(n), 2)}
    assert len(pair_sum) == 780
    s = _corrected_sums(n, n1, z, kresampling.SubsetStart.FAIR_BITS, ((8, 1),), 2**15, seed=4)
    removed = z.sum() - s
    counts = {}
    for v in np.round(removed).astype(np.int64):
        counts[v] = counts.get(v, 0) + 1
    assert set(counts) == set(np.round(list(pair_sum)).astype(np.int64))
    assert stats.chisquare(np.array(list(counts.values()))).pvalue > 1e-3


def test_monte_carlo_unbalanced_splits_within_interval_of_exact():
    # n1 = 3 of 15: the engine starts from no item and adds 3 (see _subset_evaluator).
    from jaxtests.kernels import evaluators as kevaluators

    assert kevaluators.subset_evaluator(15, 3, 1, 1024)[0].start is kresampling.SubsetStart.EMPTY
    x = np.array([2.9, 3.8, 1.1])
    y = np.array([0.3, 1.9, -0.4, 1.2, 0.8, 2.1, 0.0, 1.4, 2.2, 0.7, 1.8, 3.1])
    exact = permutation_test(x, y, alternative="greater")
    assert exact.method == "exact"
    np.testing.assert_allclose(exact.pvalue, _scipy(x, y, "greater"), rtol=1e-10)
    r = permutation_test(
        x, y, method="monte-carlo", n_resamples=30_000, key=2, alternative="greater"
    )
    lo, hi = np.asarray(r.pvalue_interval)
    assert lo <= float(exact.pvalue) <= hi  # 99% interval, fixed key (budget 1%)


def test_split_count_is_capped_not_computed():
    # math.comb(10^6, 5 10^5) takes seconds; the engine only needs to know whether the
    # count is at most max(n_resamples, 2^30). Reference: math.comb.
    import math

    from jaxtests._twosample import _comb_at_most

    for n in range(0, 41):
        for k in range(0, n + 1):
            for cap in (1, 35, 10**6):
                c = math.comb(n, k)
                assert _comb_at_most(n, k, cap) == (c if c <= cap else None)
    assert _comb_at_most(10**6, 5 * 10**5, 2**30) is None


def test_callable_splits_of_evaluation_blocks_sharing_a_key_block_are_independent():
    # Issue 13, item 14: draws g and g + 1024 lie in two evaluation blocks of one
    # 4096-draw key block; their subset-size corrections must not share a stream.
    # z_i = 2^i, so the group-1 sum names the split. Independent 3-subsets of 20
    # overlap by n1^2 / n = 0.45 on average (sd 0.6 per pair, 3072 pairs: SE 0.011;
    # before the fix 1.01).
    n1, n2 = 3, 17
    z = 2.0 ** np.arange(n1 + n2)
    r = permutation_test(
        z[:n1],
        z[n1:],
        statistic=lambda a, b: jnp.sum(a),
        n_resamples=4096,
        method="monte-carlo",
        key=0,
        return_null=True,
    )
    code = np.asarray(r.null_distribution).astype(np.int64)
    bits = (code[:, None] >> np.arange(n1 + n2)) & 1
    assert np.all(bits.sum(axis=1) == n1)
    overlap = (bits[:-1024] & bits[1024:]).sum(axis=1)
    assert abs(overlap.mean() - n1 * n1 / (n1 + n2)) < 0.06


@pytest.mark.slow
def test_heavy_tailed_monte_carlo_counts_are_float64_counts():
    # Issue 13, item 12: one value 2^20 among small ones; the float32 rounding band of
    # the group sums covers much of the null. Exact p from numpy over all C(16, 8) =
    # 12870 splits (every sum exact: multiples of 2^-8).
    rng = np.random.default_rng(12)
    x = np.concatenate([[2.0**20], np.round(rng.normal(1.0, 1.0, 7) * 256) / 256])
    y = np.round(rng.normal(0.0, 1.0, 8) * 256) / 256
    z = np.concatenate([x, y])
    masks = np.zeros((math.comb(16, 8), 16), bool)
    for i, g in enumerate(itertools.combinations(range(16), 8)):
        masks[i, list(g)] = True
    null = (masks @ z) / 8 - (~masks @ z) / 8
    p_exact = np.mean(null >= x.mean() - y.mean())
    r = permutation_test(
        x, y, alternative="greater", method="monte-carlo", n_resamples=20_000, key=0
    )
    lo, hi = np.asarray(r.pvalue_interval)
    assert lo <= p_exact <= hi, (float(r.pvalue), p_exact)  # 99% interval, fixed key
    # The recheck depends on each lane's own values: any batch size, the same draws.
    a = permutation_test(x, y, n_resamples=140_000, key=3, return_null=True)
    b = permutation_test(x, y, n_resamples=140_000, key=3, return_null=True, batch_size=2**18)
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)


def test_within_block_draws_are_independent_and_uniform():
    # Issue 13, item 1: draw r of a 1024-draw block repeated draw r + 512. x[b, j] = j
    # and a statistic that reads each block's arrangement back (base-3 digits), so the
    # null names the arrangement: 3!^2 = 36 equally likely values.
    import jax

    from jaxtests._within_block import within_block_pvalue

    x = np.tile(np.arange(3.0), (2, 1))
    w = jnp.asarray(3.0 ** np.arange(6).reshape(2, 3))

    def code(a):
        return jnp.sum(a * w)

    with jax.enable_x64(True):
        r = within_block_pvalue(code, x, n_resamples=4096, key=0, return_null=True)
    null = np.asarray(r.null_distribution)
    # independent pairs are equal with probability 1/36 (1024 pairs: SE 0.005); before: 1
    assert np.mean(null[:512] == null[512:1024]) < 1 / 36 + 0.025
    values, counts = np.unique(null, return_counts=True)
    assert values.size == 36
    assert stats.chisquare(counts).pvalue > 1e-3  # failure budget 0.1%
