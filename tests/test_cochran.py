"""cochran_q against statsmodels 0.15 ``cochrans_q`` and mlxtend 0.25 ``cochrans_q``; its exact
permutation p-value against brute-force enumeration; Monte Carlo within its interval;
pairwise McNemar with the adjustment."""

import itertools

import numpy as np
import pytest
from mlxtend.evaluate import cochrans_q as mlxtend_cochrans_q
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q

from jaxtests._cochran import cochran_q
from jaxtests._mcnemar import mcnemar
from jaxtests._posthoc import adjust_pvalues


@pytest.fixture(scope="module")
def three():
    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 2, n)
    preds = [np.where(rng.random(n) < acc, y, 1 - y) for acc in (0.85, 0.7, 0.6)]
    return y, preds


def test_against_statsmodels_and_mlxtend(three):
    y, preds = three
    r = cochran_q(y, *preds)
    x = np.stack([p == y for p in preds], axis=1).astype(int)
    sm = sm_cochrans_q(x)
    np.testing.assert_allclose(r.statistic, sm.statistic, rtol=1e-14)  # statsmodels
    np.testing.assert_allclose(r.pvalue, sm.pvalue, rtol=1e-12)  # statsmodels
    q, p = mlxtend_cochrans_q(y, *preds)
    np.testing.assert_allclose([r.statistic, r.pvalue], [q, p], rtol=1e-12)  # mlxtend
    assert r.df == sm.df == 2 and r.method == "chi2"
    np.testing.assert_allclose(r.accuracy, x.mean(axis=0))


def test_correctness_matrix_as_statsmodels_takes_it(three):
    # Issue 39.6: cochran_q(correct=x) takes statsmodels' (n, k) correctness matrix.
    y, preds = three
    x = np.stack([p == y for p in preds], axis=1).astype(int)
    r = cochran_q(correct=x)
    sm = sm_cochrans_q(x)
    np.testing.assert_allclose(r.statistic, sm.statistic, rtol=1e-14)  # statsmodels
    np.testing.assert_allclose(r.pvalue, sm.pvalue, rtol=1e-12)  # statsmodels
    ref = cochran_q(y, *preds)  # the same correctness from labels and predictions
    np.testing.assert_array_equal(r.pairwise_pvalue, ref.pairwise_pvalue)
    np.testing.assert_array_equal(r.accuracy, x.mean(axis=0))
    np.testing.assert_array_equal(cochran_q(correct=x.astype(bool)).statistic, r.statistic)


def test_text_and_no_pvalue_interval_without_draws(three):
    # Issue 39.7: a chi-square p showed a pvalue_interval (p, p), and there was no text().
    import re

    from _helpers import printed
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    y, preds = three
    r = cochran_q(y, *preds, names=["a", "b", "c"])
    assert r.pvalue_interval is None and "pvalue_interval" not in repr(r)
    assert cochran_q(y, *preds, method="exact").pvalue_interval is None
    assert cochran_q(
        y, *preds, method="monte-carlo", n_resamples=99, key=0
    ).pvalue_interval.shape == (2,)
    x = np.stack([p == y for p in preds], axis=1).astype(int)
    sm = sm_cochrans_q(x)
    text = r.text()
    q, p = re.search(r"Q = (\S+), p = (\S+) \(chi-square, df = 2\)", text).groups()
    assert printed(q, sm.statistic) and printed(p, sm.pvalue), text  # statsmodels
    for line, acc in zip(text.splitlines()[1:4], x.mean(axis=0), strict=True):
        assert printed(line.split()[-1], acc), line
    a, c = x[:, 0].astype(bool), x[:, 2].astype(bool)
    table = [[np.sum(a & c), np.sum(a & ~c)], [np.sum(~a & c), np.sum(~a & ~c)]]
    row = next(line for line in text.splitlines() if line.strip().startswith("a vs c"))
    assert printed(row.split()[5], sm_mcnemar(table, exact=True).pvalue), row  # statsmodels


def test_pairwise_mcnemar_adjusted(three):
    y, preds = three
    r = cochran_q(y, *preds, correction="bonferroni", pairwise_method="midp")
    pairs = list(itertools.combinations(range(3), 2))
    raw = [float(mcnemar(y, preds[a], preds[b], method="midp").pvalue) for a, b in pairs]
    adj = np.asarray(adjust_pvalues(raw, "bonferroni"))
    for (a, b), p, q in zip(pairs, raw, adj):
        assert r.pairwise_pvalue[a, b] == r.pairwise_pvalue[b, a] == p
        assert r.pairwise_pvalue_adjusted[a, b] == q
    assert np.all(np.diag(r.pairwise_pvalue) == 1)


def test_exact_against_brute_force():
    """Every within-instance arrangement of the correctness rows, enumerated."""
    rng = np.random.default_rng(3)
    n = 9
    y = rng.integers(0, 2, n)
    preds = [np.where(rng.random(n) < acc, y, 1 - y) for acc in (0.8, 0.5, 0.4)]
    x = np.stack([p == y for p in preds], axis=1).astype(int)
    obs = np.sum(x.sum(axis=0) ** 2)
    rows = [sorted(set(itertools.permutations(row))) for row in x.tolist()]
    hits = total = 0
    for arrangement in itertools.product(*rows):
        total += 1
        hits += np.sum(np.sum(arrangement, axis=0) ** 2) >= obs
    r = cochran_q(y, *preds, method="exact")
    np.testing.assert_allclose(r.pvalue, hits / total, rtol=1e-12)
    assert r.method == "exact" and r.seed is None
    assert cochran_q(y, *preds, method="permutation").method == "exact"


def test_monte_carlo_within_its_interval_of_the_exact(three):
    y, preds = three
    exact = cochran_q(y, *preds, method="exact")
    mc = cochran_q(y, *preds, method="monte-carlo", n_resamples=4000, key=1)
    assert mc.method == "monte-carlo" and mc.n_resamples == 4000 and mc.seed == 1
    # the 99% interval covers the exact p (a 1% failure budget for this fixed key)
    assert mc.pvalue_interval[0] <= exact.pvalue <= mc.pvalue_interval[1]
    again = cochran_q(y, *preds, method="monte-carlo", n_resamples=4000, key=1)
    assert again.pvalue == mc.pvalue


def test_monte_carlo_calibration_across_keys(three):
    """80 keys x 1,000 draws: the mean p near the exact one (4 binomial standard errors of
    the mean) and the spread of the p-values the binomial one (ratio in [0.5, 1.7]: duplicated
    or correlated draws would show near 2)."""
    y, preds = three
    exact = float(cochran_q(y, *preds, method="exact").pvalue)
    b = 1000
    ps = np.array(
        [
            float(cochran_q(y, *preds, method="monte-carlo", n_resamples=b, key=k).pvalue)
            for k in range(80)
        ]
    )
    var = exact * (1 - exact) / b
    assert abs(ps.mean() - exact) < 4 * np.sqrt(var / 80) + 1 / b
    assert 0.5 < ps.var(ddof=1) / var < 1.7


def test_degenerate_all_agree():
    y = np.array([1, 0, 1, 1, 0])
    r = cochran_q(y, y, y, method="exact")
    assert r.statistic == 0 and r.pvalue == 1 and r.pvalue_chi2 == 1


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (([1, 0, 1], [1, 0, 1]), {}, ValueError, "at least 2 classifiers"),
        (([1, 0, 1], [1, 0, 1], [1, 0]), {}, ValueError, "same shape"),
        (([1, 0, 1], [1, 0, 1], [1, 0.5, 1]), {}, ValueError, "class labels"),
        (([1, 0, 1], [1, 0, 1], [1, 0, 1]), {"method": "x"}, ValueError, "`method`"),
        (([1, 0, 1], [1, 0, 1], [1, 0, 1]), {"correction": "x"}, ValueError, "`correction`"),
        (
            ([1, 0, 1], [1, 0, 1], [1, 0, 1]),
            {"pairwise_method": "x"},
            ValueError,
            "pairwise_method",
        ),
        (([1, 0, 1], [1, 0, 1], [1, 0, 1]), {"n_resamples": 10}, ValueError, "not used"),
        (
            ([1, 0, 1], [1, 0, 1], [1, 0, 1]),
            {"method": "exact", "n_resamples": 10},
            ValueError,
            "not used",
        ),
        (([1, 0, 1], [1, 0, 1], [1, 0, 1]), {"names": ["a"]}, ValueError, "names"),
        # issue 39.6: statsmodels' (n, k) matrix passed as y_true said "got 0" classifiers
        (([[1, 0], [0, 1], [1, 1]],), {}, ValueError, r"shape \(3, 2\).*cochran_q\(correct=x\)"),
        ((), {}, TypeError, "needs `y_true` and `predictions`, or `correct=`"),
        (([1, 0],), {"correct": [[1, 0], [0, 1]]}, ValueError, "either `correct`"),
        ((), {"correct": [[1, 0], [0, 2]]}, ValueError, "`correct` must hold 0/1"),
        ((), {"correct": [[1], [0]]}, ValueError, "`correct` needs at least 2 classifiers"),
        ((), {"correct": [1, 0, 1]}, ValueError, r"`correct` must have shape \(n_instances"),
        ((), {"correct": [["a", "b"]]}, TypeError, "`correct` must be a 0/1 or boolean"),
    ],
)
def test_validation_messages(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        cochran_q(*args, **kwargs)
