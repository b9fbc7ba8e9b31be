"""Issue 39.5: every interval is one ``ConfidenceInterval(low, high)`` named tuple, an
attribute where scipy has one (``bootstrap``) and a method where scipy has one (its t tests),
with the numbers of the peers (pROC, scipy)."""

import numpy as np
import scipy.stats

import jaxtests
from jaxtests import ConfidenceInterval

# tests/test_delong.py's 30 instances (numpy default_rng(26), scores rounded to 0.1)
Y = [0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1]
A = [2.0, 0.8, -0.2, 0.0, -1.2, 0.0, 1.6, 1.9, 3.1, 1.4, 0.3, 0.1, -0.9, 0.3, 0.1, 0.7, -0.3,
     -1.2, 3.3, -1.9, 1.2, 1.0, 1.1, -0.4, -1.0, 3.5, 2.2, 1.2, 0.1, 1.1]  # fmt: skip
B = [-0.3, 0.9, 1.7, 0.8, -1.4, 0.8, -0.2, -0.3, 1.6, 1.8, 1.6, -0.2, 0.7, 0.7, 0.9, 0.5, -0.3,
     0.1, 2.3, -2.0, 0.5, 0.3, 1.4, 0.3, -0.4, 1.7, 2.5, 0.6, -0.8, 0.6]  # fmt: skip


def _is_interval(ci):
    return type(ci) is ConfidenceInterval and ci._fields == ("low", "high")


def test_every_interval_is_one_named_tuple_with_the_peers_numbers():
    # DeLong: attributes (the interval is fixed by the call's confidence_level)
    test = jaxtests.delong_test(Y, A, B)
    assert _is_interval(test.confidence_interval)
    # pROC 1.18.0: roc.test(..., method="delong", paired=TRUE)$conf.int
    proc = [-0.18549426270742192, 0.26882759604075518]
    np.testing.assert_allclose(test.confidence_interval, proc, rtol=1e-13)
    one = jaxtests.delong_interval(Y, B, confidence_level=0.9)
    assert _is_interval(one.confidence_interval)
    assert one.confidence_interval == (one.low, one.high)  # low/high stay
    # pROC 1.18.0: ci.auc(roc(y, b, direction="<"), method="delong", conf.level=0.9)
    proc = [0.51805185612490523, 0.84768888461583536]
    np.testing.assert_allclose(one.confidence_interval, proc, rtol=1e-13)
    # Clopper-Pearson: scipy.stats.binomtest(12, 100).proportion_ci("exact")
    cp = jaxtests.clopper_pearson(12, 100)
    ref = scipy.stats.binomtest(12, 100).proportion_ci(method="exact")
    assert _is_interval(cp.confidence_interval)
    np.testing.assert_allclose(cp.confidence_interval, (ref.low, ref.high), rtol=1e-8)
    # t tests: methods with a confidence_level, as scipy's TtestResult.confidence_interval
    a, b = np.asarray(A), np.asarray(B)
    t = jaxtests.ttest_paired(a, b)
    ref = scipy.stats.ttest_rel(a, b).confidence_interval(0.9)
    assert _is_interval(t.confidence_interval(0.9)) and _is_interval(t.effect_size_interval())
    np.testing.assert_allclose(t.confidence_interval(0.9), (ref.low, ref.high), rtol=1e-12)
    # bootstrap: an attribute, as scipy.stats.bootstrap's BootstrapResult
    boot = jaxtests.bootstrap((a,), "mean", n_resamples=50, key=0)
    assert _is_interval(boot.confidence_interval)
    assert _is_interval(jaxtests.bootstrap_test((a, b), n_resamples=50, key=0).confidence_interval)
