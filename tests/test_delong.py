"""delong_test and delong_interval against R's pROC 1.18.0 (R 4.2.2) literals and a direct
O(n^2) DeLong (1988) implementation written here."""

import numpy as np
import pytest

from jaxtests._delong import delong_interval, delong_test

# 30 instances with tied scores: numpy default_rng(26), labels 0/1, scores rounded to 0.1.
Y = [0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1]
A = [2.0, 0.8, -0.2, 0.0, -1.2, 0.0, 1.6, 1.9, 3.1, 1.4, 0.3, 0.1, -0.9, 0.3, 0.1, 0.7, -0.3,
     -1.2, 3.3, -1.9, 1.2, 1.0, 1.1, -0.4, -1.0, 3.5, 2.2, 1.2, 0.1, 1.1]  # fmt: skip
B = [-0.3, 0.9, 1.7, 0.8, -1.4, 0.8, -0.2, -0.3, 1.6, 1.8, 1.6, -0.2, 0.7, 0.7, 0.9, 0.5, -0.3,
     0.1, 2.3, -2.0, 0.5, 0.3, 1.4, 0.3, -0.4, 1.7, 2.5, 0.6, -0.8, 0.6]  # fmt: skip


def _delong_quadratic(y, scores):
    """DeLong, DeLong & Clarke-Pearson (1988) by its definition: the kernel psi over all
    positive-negative pairs (ties 1/2), components V10, V01 and their covariances."""
    y = np.asarray(y) > 0
    s = np.asarray(scores, float)
    x, z = s[:, y], s[:, ~y]
    psi = (x[:, :, None] > z[:, None, :]) + 0.5 * (x[:, :, None] == z[:, None, :])
    auc = psi.mean(axis=(1, 2))
    v10, v01 = psi.mean(axis=2), psi.mean(axis=1)
    return auc, np.cov(v10) / x.shape[1] + np.cov(v01) / z.shape[1]


def test_against_proc_roc_test():
    r = delong_test(Y, A, B)
    # pROC 1.18.0: roc.test(roc(y, a, direction="<"), roc(y, b, direction="<"),
    # method="delong", paired=TRUE)
    np.testing.assert_allclose(r.statistic, 0.35950357417325052, rtol=1e-13)
    np.testing.assert_allclose(r.pvalue, 0.71921840448611163, rtol=1e-13)
    np.testing.assert_allclose(r.auc_a, 0.72453703703703709, rtol=1e-14)
    np.testing.assert_allclose(r.auc_b, 0.68287037037037035, rtol=1e-14)
    np.testing.assert_allclose(r.confidence_interval.low, -0.18549426270742192, rtol=1e-13)
    np.testing.assert_allclose(r.confidence_interval.high, 0.26882759604075518, rtol=1e-13)
    # pROC: var(r1), var(r2), cov(r1, r2)
    np.testing.assert_allclose(
        r.covariance,
        [
            [0.0087810177849665869, 0.0026943133220366329],
            [0.0026943133220366329, 0.010040549375380528],
        ],
        rtol=1e-13,
    )
    g = delong_test(Y, A, B, alternative="greater")
    np.testing.assert_allclose(g.pvalue, 0.35960920224305581, rtol=1e-13)  # pROC, "greater"
    assert np.isinf(g.confidence_interval.high)
    le = delong_test(Y, A, B, alternative="less")
    np.testing.assert_allclose(le.pvalue, 1 - 0.35960920224305581, rtol=1e-13)


def test_interval_against_proc_ci_auc():
    r = delong_interval(Y, B, confidence_level=0.9)
    # pROC 1.18.0: ci.auc(roc(y, b, direction="<"), method="delong", conf.level=0.9)
    np.testing.assert_allclose(r.low, 0.51805185612490523, rtol=1e-13)
    np.testing.assert_allclose(r.auc, 0.68287037037037035, rtol=1e-14)
    np.testing.assert_allclose(r.high, 0.84768888461583536, rtol=1e-13)


@pytest.mark.parametrize("ties", [False, True])
def test_against_quadratic_definition(ties):
    rng = np.random.default_rng(5)
    n = 300
    y = np.where(rng.random(n) < 0.3, 1, -1)
    a = rng.normal(size=n) + (y > 0)
    b = 0.5 * a + rng.normal(size=n)
    if ties:
        a, b = np.round(a), np.round(b * 2) / 2
    auc, cov = _delong_quadratic(y, np.stack([a, b]))
    r = delong_test(y, a, b)
    np.testing.assert_allclose([r.auc_a, r.auc_b], auc, rtol=1e-14)
    np.testing.assert_allclose(r.covariance, cov, rtol=1e-11)
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    np.testing.assert_allclose(r.statistic, (auc[0] - auc[1]) / np.sqrt(var), rtol=1e-11)


def test_identical_scores_and_numpy_fields():
    r = delong_test(Y, A, A)
    assert r.statistic == 0 and r.pvalue == 1 and r.difference == 0
    for v in (r.statistic, r.pvalue, r.auc_a, r.standard_error, r.confidence_interval.low):
        assert isinstance(v, np.float64)
    r.to_json()
    # labels as ±1 or 0/1 give the same test; swapping A and B flips z
    np.testing.assert_allclose(
        delong_test(2 * np.array(Y) - 1, B, A).statistic,
        -delong_test(Y, A, B).statistic,
        rtol=1e-14,
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (([1, 1, 0, 0], [1, 2, 3], [1, 2, 3, 4]), {}, ValueError, "same shape"),
        (([1, 0, 0, 0], [1, 2, 3, 4], [1, 2, 3, 4]), {}, ValueError, "at least 2 positives"),
        (([1, 2, 0, 0], [1, 2, 3, 4], [1, 2, 3, 4]), {}, ValueError, "binary labels"),
        (([1, 1, 0, 0], [1, np.nan, 3, 4], [1, 2, 3, 4]), {}, ValueError, "`score_a` contains NaN"),
        (
            ([1, 1, 0, 0], [1, 2, 3, 4], [1, 2, 3, 4]),
            {"alternative": "x"},
            ValueError,
            "alternative",
        ),
        (
            ([1, 1, 0, 0], [1, 2, 3, 4], [1, 2, 3, 4]),
            {"confidence_level": 2},
            ValueError,
            "confidence_level",
        ),
        (([[1, 1, 0, 0]], [[1, 2, 3, 4]], [[1, 2, 3, 4]]), {}, ValueError, "1-dimensional"),
    ],
)
def test_validation_messages(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        delong_test(*args, **kwargs)


@pytest.mark.parametrize("ties", [False, True])
def test_host_placements_equal_the_jitted_kernel(ties):
    # delong_test computes on the host in numpy; the bootstrap jits
    # kernels.bootstrap.delong_placements on a shape bucket's padding (labels 0, NaN
    # scores). Both give the same AUCs and covariance.
    import jax
    from jaxtests.kernels import bootstrap as kboot

    from jaxtests._delong import _delong

    rng = np.random.default_rng(8)
    n = 200
    y = np.where(rng.random(n) < 0.35, 1.0, -1.0)
    s = rng.normal(size=(2, n)) + (y > 0)
    s = np.round(s, 1) if ties else s
    auc, cov = _delong(y, s)
    pad = 56
    yp = np.concatenate([y, np.zeros(pad)])
    sp = np.concatenate([s, np.full((2, pad), np.nan)], axis=1)
    a2, v10, v01 = (np.asarray(t) for t in jax.jit(kboot.delong_placements)(yp, sp))
    pos, neg = yp > 0, yp < 0
    d10 = np.where(pos, v10 - a2[:, None], 0)
    d01 = np.where(neg, v01 - a2[:, None], 0)
    ref = d10 @ d10.T / (pos.sum() - 1) / pos.sum() + d01 @ d01.T / (neg.sum() - 1) / neg.sum()
    np.testing.assert_allclose(auc, a2, rtol=1e-12)
    np.testing.assert_allclose(cov, ref, rtol=1e-12)
