"""permutation_test: exact equals scipy, subset draws uniform, seed 003 worked example."""

import itertools
import math

import jax.numpy as jnp
import numpy as np
import pytest
from jaxtests.kernels import resampling as kr
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
        seeds = kr.block_seeds(jax.random.key(0), jnp.arange(4))
        counts = {}
        for s in seeds:
            w = kr.fix_subset_size(kr.random_words(s, 1, r), n, n1, s ^ jnp.uint64(99))
            for v in np.asarray(w[0]):
                counts[int(v)] = counts.get(int(v), 0) + 1
    assert all(bin(k).count("1") == n1 and k < 2**n for k in counts)
    assert len(counts) == 35
    obs = np.array(list(counts.values()))
    assert stats.chisquare(obs).pvalue > 1e-3  # failure budget 0.1%


def test_batch_invariance_and_batched_equals_looped():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 1, (2, 30))
    y = rng.normal(0.5, 1, (2, 25))
    a = permutation_test(x, y, n_resamples=20_000, key=9)
    b = permutation_test(x, y, n_resamples=20_000, key=9, batch_size=16_384)
    np.testing.assert_array_equal(a.n_extreme, b.n_extreme)
    r0 = permutation_test(x[0], y[0], n_resamples=20_000, key=9)
    assert int(r0.n_extreme) == int(a.n_extreme[0])
    m = permutation_test(x, y, n_resamples=20_000, key=9, correction="maxT")
    assert np.all(np.asarray(m.pvalue_adjusted) >= np.asarray(m.pvalue))


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
