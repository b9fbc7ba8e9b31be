"""Clopper-Pearson and Hoeffding intervals against R, scipy and seed 003's numbers."""

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxtests._intervals import clopper_pearson, hoeffding_interval, hoeffding_sample_size


def test_seed003_hoeffding_numbers():
    # Seed 003: "for m = 1000 and delta = 0.05, |R(f) - R_m(f)| <= 0.0429".
    res = hoeffding_interval(0.1, 1000)
    assert round(float(res.epsilon), 4) == 0.0429
    np.testing.assert_allclose(res.epsilon, np.sqrt(np.log(2 / 0.05) / 2000), rtol=1e-14)
    np.testing.assert_allclose([res.low, res.high], [0.1 - res.epsilon, 0.1 + res.epsilon])
    # Seed 003: "for delta = 0.05 and epsilon = 0.01, m > 18444".
    m = hoeffding_sample_size(0.01)
    assert m == 18445 and isinstance(m, int)
    assert float(hoeffding_interval(0.5, m).epsilon) <= 0.01
    assert float(hoeffding_interval(0.5, m - 1).epsilon) > 0.01


def test_hoeffding_batched_and_clipped():
    err = np.array([0.0, 0.02, 0.5, 1.0])
    res = hoeffding_interval(err, np.array([100, 1000, 1000, 50]), confidence_level=0.9)
    eps = np.sqrt(np.log(2 / 0.1) / (2 * np.array([100, 1000, 1000, 50])))
    np.testing.assert_allclose(res.epsilon, eps, rtol=1e-14)
    np.testing.assert_allclose(res.low, np.maximum(err - eps, 0), rtol=1e-14)
    np.testing.assert_allclose(res.high, np.minimum(err + eps, 1), rtol=1e-14)
    np.testing.assert_array_equal(hoeffding_sample_size([0.05, 0.01]), [738, 18445])


# R 4.2.2: binom.test(k, n)$conf.int
R_CP = [
    (0, 100, 0.0, 0.036216692645176463),
    (1, 100, 0.00025314603297742075, 0.054459385392080617),
    (12, 100, 0.063568902561159296, 0.2002356836199688),
    (100, 100, 0.96378330735482354, 1.0),
    (3, 1000000, 6.1867255019063901e-07, 8.7672477881452194e-06),
    (429, 1000, 0.39807201178637791, 0.46034718333894575),
]


def test_clopper_pearson_against_r():
    k, n, low, high = (np.array(c) for c in zip(*R_CP))
    res = clopper_pearson(k, n)
    # n = 10^6: jax's betainc(3, 999998, x) is accurate to ~1e-9 relative (its continued
    # fraction with a huge b), so that row gets rtol 1e-8; all others 1e-10.
    rtol = np.where(n > 10**5, 1e-8, 1e-10)
    assert np.all(np.abs(np.asarray(res.low) - low) <= rtol * low)
    assert np.all(np.abs(np.asarray(res.high) - high) <= rtol * high)
    np.testing.assert_allclose(res.estimate, k / n, rtol=1e-15)
    # R 4.2.2: binom.test(7, 40, conf.level=0.9)$conf.int
    r90 = clopper_pearson(7, 40, confidence_level=0.9)
    np.testing.assert_allclose(
        [r90.low, r90.high], [0.085132504585981608, 0.30370566700341461], rtol=1e-10
    )


def test_clopper_pearson_against_scipy(rng):
    n = rng.integers(1, 500, size=(3, 4))
    k = rng.integers(0, n + 1)
    res = clopper_pearson(k, n, confidence_level=0.99)
    # Beta quantiles (seed 003's definition) from scipy's Boost-based beta.ppf.
    low = np.where(k > 0, scipy.stats.beta.ppf(0.005, np.maximum(k, 1), n - k + 1), 0.0)
    high = np.where(k < n, scipy.stats.beta.isf(0.005, k + 1, np.maximum(n - k, 1)), 1.0)
    np.testing.assert_allclose(res.low, low, rtol=1e-10)
    np.testing.assert_allclose(res.high, high, rtol=1e-10)
    # scipy's binomtest(...).proportion_ci("exact") solves with a looser root finder.
    i = (1, 2)
    ref = scipy.stats.binomtest(int(k[i]), int(n[i])).proportion_ci(0.99, method="exact")
    np.testing.assert_allclose([res.low[i], res.high[i]], [ref.low, ref.high], rtol=1e-7)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 2000), st.floats(0, 1))
def test_interval_properties(n, frac):
    k = round(frac * n)
    cp = clopper_pearson(k, n)
    assert 0.0 <= float(cp.low) <= k / n <= float(cp.high) <= 1.0
    # Mirror symmetry: errors k of n vs correct n - k of n.
    mirror = clopper_pearson(n - k, n)
    np.testing.assert_allclose(1 - float(mirror.high), float(cp.low), atol=1e-13)
    # Seed 003: Hoeffding is distribution-free, never narrower here than Clopper-Pearson
    # for moderate n; check the containment of the central point only.
    hf = hoeffding_interval(k / n, n)
    assert float(hf.low) <= k / n <= float(hf.high)


def test_hoeffding_wider_than_clopper_pearson_at_small_error():
    # Seed 003, "Is it much worse than Clopper-Pearson?": at n = 1000 and small errors the
    # exact interval is much tighter.
    cp = clopper_pearson(10, 1000)
    hf = hoeffding_interval(0.01, 1000)
    assert float(cp.high - cp.low) < 0.5 * float(hf.high - hf.low)


def test_interval_validation():
    with pytest.raises(ValueError, match="`k` must not exceed `n`"):
        clopper_pearson(5, 4)
    with pytest.raises(ValueError, match="`n` must be at least 1"):
        clopper_pearson(0, 0)
    with pytest.raises(ValueError, match="`k` must be non-negative"):
        clopper_pearson(-1, 10)
    with pytest.raises(TypeError, match="`k` must hold whole numbers"):
        clopper_pearson(1.5, 10)
    with pytest.raises(ValueError, match="`confidence_level` must lie in"):
        clopper_pearson(1, 10, confidence_level=1.0)
    with pytest.raises(ValueError, match="`error` must lie in"):
        hoeffding_interval(1.2, 10)
    with pytest.raises(TypeError, match="`m` must hold integers"):
        hoeffding_interval(0.1, 10.0)
    with pytest.raises(ValueError, match="`m` must be at least 1"):
        hoeffding_interval(0.1, 0)
    with pytest.raises(ValueError, match="`epsilon` must lie in"):
        hoeffding_sample_size(0.0)
    with pytest.raises(ValueError, match="`error` contains NaN"):
        hoeffding_interval(np.nan, 10)


def test_hoeffding_sample_size_beyond_int64():
    # Issue 18.7: 4e-10 gave -9223372036854775808 (int64 overflow). A scalar gives the
    # exact Python int of ceil(log(2/delta) / (2 eps^2)) (seed 003's bound).
    m = hoeffding_sample_size(4e-10)
    assert isinstance(m, int)
    assert m == math.ceil(math.log(2 / (1 - 0.95)) / (2 * 4e-10**2)) > 2**63
    with pytest.raises(ValueError, match=r"`epsilon` is too small.*int64"):
        hoeffding_sample_size([0.1, 4e-10])
    with pytest.raises(ValueError, match="`epsilon` is too small"):
        hoeffding_sample_size(1e-200)  # the size overflows a float
    np.testing.assert_array_equal(hoeffding_sample_size([0.01, 0.1]), [18445, 185])
