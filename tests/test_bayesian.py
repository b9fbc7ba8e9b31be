"""bayesian.correlated_ttest against the Corani & Benavoli (2015) posterior via scipy.stats.t."""

import numpy as np
import pytest
from scipy import stats

from jaxtests import bayesian

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("rho", [0.0, 0.1, 1 / 3])
@pytest.mark.parametrize("rope", [0.0, 0.01, 0.05])
def test_posterior_is_the_correlated_student_t(rho, rope):
    a = RNG.normal(0.80, 0.03, (4, 10))
    b = RNG.normal(0.79, 0.03, (4, 10))
    r = bayesian.correlated_ttest(a, b, rope=rope, rho=rho)
    d = a - b
    n = d.shape[-1]
    # Corani & Benavoli (2015): t_{n-1}(mean, (1/n + rho/(1-rho)) s^2), s^2 with ddof 1.
    post = stats.t(
        n - 1, d.mean(axis=-1), np.sqrt((1 / n + rho / (1 - rho)) * d.var(axis=-1, ddof=1))
    )
    np.testing.assert_allclose(r.p_left, post.cdf(-rope), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(r.p_right, post.sf(rope), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(r.p_left + r.p_rope + r.p_right, 1.0, rtol=1e-12)
    assert r.df == n - 1 and r.p_left.shape == (4,)


def test_swapping_the_learners_swaps_left_and_right():
    a, b = RNG.normal(size=12), RNG.normal(size=12)
    r = bayesian.correlated_ttest(a, b, rope=0.1, rho=0.2)
    s = bayesian.correlated_ttest(b, a, rope=0.1, rho=0.2)
    np.testing.assert_allclose([r.p_left, r.p_rope, r.p_right], [s.p_right, s.p_rope, s.p_left])


def test_axis():
    a, b = RNG.normal(size=(10, 3)), RNG.normal(size=(10, 3))
    r = bayesian.correlated_ttest(a, b, rope=0.1, rho=0.1, axis=0)
    t = bayesian.correlated_ttest(a.T, b.T, rope=0.1, rho=0.1)
    np.testing.assert_allclose(r.p_left, t.p_left, rtol=1e-13)


def test_zero_variance_is_a_point_mass():
    a = [0.9, 0.8, 0.7]
    r = bayesian.correlated_ttest(a, np.subtract(a, 0.02), rope=0.01, rho=0.1)
    assert (float(r.p_left), float(r.p_rope), float(r.p_right)) == (0.0, 0.0, 1.0)
    r = bayesian.correlated_ttest(a, a, rope=0.01, rho=0.1)
    assert (float(r.p_left), float(r.p_rope), float(r.p_right)) == (0.0, 1.0, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(rope=-0.1, rho=0.1), "rope"),
        (dict(rope="a", rho=0.1), "rope"),
        (dict(rope=0.1, rho=1.0), "rho"),
        (dict(rope=0.1, rho=-0.2), "rho"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bayesian.correlated_ttest([0.1, 0.2, 0.3], [0.2, 0.2, 0.2], **kwargs)


def test_bad_data_is_named():
    with pytest.raises(ValueError, match="at least 2 folds"):
        bayesian.correlated_ttest([0.1], [0.2], rope=0.0, rho=0.1)
    with pytest.raises(ValueError, match="shape"):
        bayesian.correlated_ttest([0.1, 0.2], [0.2], rope=0.0, rho=0.1)
