"""compare_models: k models on the same items (issue 38, "many models on one benchmark").

References: signflip_test of each pair's differences (exact enumeration and the same
Monte Carlo draws), its max-T over the stacked differences, statsmodels' multipletests,
a hand-worked letter display, and the rank intervals recomputed in numpy from the
same bootstrap indices.
"""

import jax
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

import jaxtests
from jaxtests import _many_models as mm

RNG = np.random.default_rng(38)
# 4 models, 10 items: 2^10 patterns, enumerated
X4 = RNG.normal(size=(4, 10)) + np.array([[0.0], [0.3], [1.0], [1.3]])
# 4 models, 60 items in 8 clusters
X60 = RNG.normal(size=(4, 60)) + np.array([[0.0], [0.1], [0.5], [0.6]])
C60 = np.repeat(np.arange(8), [5, 9, 7, 8, 6, 10, 7, 8])


def _pair_d(x, r):
    ia, ib = np.asarray(r.pairs).T
    return x[ia] - x[ib]


def test_exact_pvalues_equal_signflip_on_each_pair_and_maxt_on_the_stack():
    r = jaxtests.compare_models(X4, n_bootstrap=0)
    assert r.method == "exact" and r.n_resamples == 2**10 and len(r.pairs) == 6
    d = _pair_d(X4, r)
    np.testing.assert_allclose(r.statistic, d.mean(axis=1), rtol=0, atol=1e-14)
    for p, dp in zip(r.pvalue, d):
        assert p == jaxtests.signflip_test(dp, method="exact").pvalue
    ref = jaxtests.signflip_test(d, method="exact", correction="maxT")
    np.testing.assert_array_equal(r.pvalue, ref.pvalue)
    np.testing.assert_array_equal(r.pvalue_adjusted, ref.pvalue_adjusted)
    np.testing.assert_array_equal(r.reject, r.pvalue_adjusted <= 0.05)


def test_monte_carlo_draws_are_signflip_tests_with_the_same_key(monkeypatch):
    kw = dict(n_resamples=500, method="monte-carlo")
    r = jaxtests.compare_models(X60, n_bootstrap=50, key=5, **kw)
    ref = jaxtests.signflip_test(_pair_d(X60, r), key=5, correction="maxT", **kw)
    np.testing.assert_array_equal(r.pvalue, ref.pvalue)
    np.testing.assert_array_equal(r.pvalue_adjusted, ref.pvalue_adjusted)
    assert r.seed == 5 and r.method == "monte-carlo"
    # blocks of 8 draws instead of 512: the same draws, the same counts and resamples
    monkeypatch.setattr(mm, "_BLOCK_BYTES", 8 * 8 * 60)  # 8 draws a block
    assert mm._block_draws(8 * 60, 500) == 8
    r8 = jaxtests.compare_models(X60, n_bootstrap=50, key=5, **kw)
    np.testing.assert_array_equal(r8.pvalue_adjusted, r.pvalue_adjusted)
    np.testing.assert_array_equal(r8.rank_interval, r.rank_interval)


def test_clusters_flip_together_as_signflip_test_does():
    r = jaxtests.compare_models(X60, cluster=C60, n_bootstrap=0)
    assert r.method == "exact" and r.n_resamples == 2**8 and r.n_clusters == 8
    d = _pair_d(X60, r)
    for p, dp in zip(r.pvalue, d):
        assert p == jaxtests.signflip_test(dp, cluster=C60, method="exact").pvalue
    ref = jaxtests.signflip_test(d, cluster=C60, method="exact", correction="maxT")
    np.testing.assert_array_equal(r.pvalue_adjusted, ref.pvalue_adjusted)
    # Monte Carlo: the draws over the 8 clusters' sums, as signflip_test's
    kw = dict(n_resamples=200, method="monte-carlo", key=2)
    r = jaxtests.compare_models(X60, cluster=C60, n_bootstrap=0, **kw)
    ref = jaxtests.signflip_test(d, cluster=C60, correction="maxT", **kw)
    np.testing.assert_array_equal(r.pvalue, ref.pvalue)
    np.testing.assert_array_equal(r.pvalue_adjusted, ref.pvalue_adjusted)


def test_pair_norms_survive_nearly_equal_models():
    # the Gram route loses every digit for a pair 1e-9 apart; it is recomputed directly
    y = RNG.normal(size=(3, 1000)) * 1e3
    y[1] = y[0] + 1e-9 * RNG.normal(size=1000)
    ia, ib = np.array([0, 0, 1]), np.array([1, 2, 2])
    direct = [np.sum((y[a] - y[b]) ** 2) for a, b in zip(ia, ib)]
    np.testing.assert_allclose(mm._pair_sq_norms(y, ia, ib), direct, rtol=1e-10)


def test_control_compares_each_model_with_it():
    names = ["w", "x", "y", "z"]
    full = jaxtests.compare_models(X4, names=names, correction="none", n_bootstrap=0)
    r = jaxtests.compare_models(X4, names=names, control="y", correction="none", n_bootstrap=0)
    assert r.control == 2 and r.letters is None and r.groups is None
    np.testing.assert_array_equal(r.pairs, [[0, 2], [1, 2], [3, 2]])
    np.testing.assert_allclose(r.statistic, X4[[0, 1, 3]].mean(1) - X4[2].mean(), atol=1e-14)
    lookup = {frozenset(p): q for p, q in zip(full.pairs.tolist(), full.pvalue)}
    assert [lookup[frozenset(p)] for p in r.pairs.tolist()] == r.pvalue.tolist()
    assert r.reject_matrix()[2].tolist() == [r.reject[0], r.reject[1], False, r.reject[2]]


@pytest.mark.parametrize("method", ["fdr_bh", "holm", "bonferroni"])
def test_adjusted_pvalues_are_statsmodels_multipletests(method):
    r = jaxtests.compare_models(X4, correction=method, n_bootstrap=0)
    ref = multipletests(r.pvalue, alpha=0.05, method=method)
    np.testing.assert_allclose(r.pvalue_adjusted, ref[1], rtol=1e-12)
    np.testing.assert_array_equal(r.reject, ref[0])
    assert r.correction == {"fdr_bh": "bh"}.get(method, method)


def test_letter_display_hand_worked():
    # A > B > C > D; significant: A-C, A-D, B-D. Not different: A-B, B-C, C-D, so the
    # maximal sets are {A, B}, {B, C}, {C, D}: letters a, ab, bc, c (multcompView's).
    reject = np.zeros((4, 4), bool)
    for i, j in [(0, 2), (0, 3), (1, 3)]:
        reject[i, j] = reject[j, i] = True
    letters, groups = mm._letters(reject, np.array([4.0, 3.0, 2.0, 1.0]), True)
    assert letters == ("a", "ab", "bc", "c") and groups == ((0, 1), (1, 2), (2, 3))
    # losses: D is best, so "a" is {C, D}
    letters, _ = mm._letters(reject, np.array([4.0, 3.0, 2.0, 1.0]), False)
    assert letters == ("c", "bc", "ab", "a")


def test_letters_share_a_letter_exactly_when_not_rejected():
    rng = np.random.default_rng(1)
    for _ in range(20):
        k = 7
        upper = np.triu(rng.random((k, k)) < 0.4, 1)
        reject = upper | upper.T
        letters, _ = mm._letters(reject, rng.normal(size=k), True)
        for i in range(k):
            for j in range(i + 1, k):
                assert bool(set(letters[i]) & set(letters[j])) == (not reject[i, j])


def _numpy_rank_interval(x, key, n_boot, level, higher, cluster=None):
    # the same bootstrap indices (fold_in(fold_in(key, 2^32 - 1), g)), everything else numpy
    y = x if cluster is None else np.stack([np.bincount(cluster, row) for row in x])
    sizes = np.ones(x.shape[1]) if cluster is None else np.bincount(cluster).astype(float)
    g_cols = y.shape[1]
    with jax.enable_x64(True):
        bkey = jax.random.fold_in(jax.random.key(key), 2**32 - 1)
        idx = np.stack(
            [
                np.asarray(jax.random.randint(jax.random.fold_in(bkey, g), (g_cols,), 0, g_cols))
                for g in range(n_boot)
            ]
        )
    ranks = []
    for row in idx:
        means = y[:, row].sum(1) / sizes[row].sum()
        s = means if higher else -means
        ranks.append([1 + np.sum(s > s[a]) for a in range(len(s))])
    q = ((1 - level) / 2, (1 + level) / 2)
    return np.quantile(np.array(ranks), q, axis=0, method="inverted_cdf").T.astype(int)


@pytest.mark.parametrize("clustered", [False, True])
def test_rank_intervals_are_numpy_percentiles_of_the_same_resamples(clustered):
    cluster = C60 if clustered else None
    kw = dict(n_bootstrap=60, confidence_level=0.9, higher_is_better=False, key=3)
    r = jaxtests.compare_models(X60, cluster=cluster, **kw)
    ref = _numpy_rank_interval(X60, 3, 60, 0.9, False, cluster)
    np.testing.assert_array_equal(r.rank_interval, ref)
    means = X60.mean(1)
    np.testing.assert_array_equal(r.rank, 1 + (means[None, :] < means[:, None]).sum(1))
    assert np.all((r.rank_interval[:, 0] <= r.rank) & (r.rank <= r.rank_interval[:, 1]))


def test_rank_intervals_cover_the_true_ranks_in_a_small_simulation():
    # 4 models whose true means are 0.05 apart (per-item sd 1, shared item effects), 300
    # items: ranks are uncertain between neighbours. Each true rank should lie in its
    # 95% interval in most data sets (97.5% here, mean width 2.1); the observed rank
    # alone covers 52%. Failure budget: >= 80% of 4 x 40 at a coverage near 95% fails
    # with probability below 1e-6.
    rng = np.random.default_rng(7)
    true_mu = np.array([0.0, 0.05, 0.10, 0.15])
    true_rank = np.array([4, 3, 2, 1])
    hits, widths = 0, []
    for s in range(40):
        x = true_mu[:, None] + rng.normal(size=(1, 300)) + rng.normal(size=(4, 300))
        r = jaxtests.compare_models(x, n_resamples=100, n_bootstrap=200, key=s)
        lo, hi = r.rank_interval.T
        hits += int(np.sum((lo <= true_rank) & (true_rank <= hi)))
        widths.append(np.mean(hi - lo))
    assert hits >= 0.8 * 160, hits
    assert 0 < np.mean(widths) < 3  # informative: neither points nor the whole range


def test_letters_and_ranks_on_separated_models():
    # the docstring's example: two models at 0.60/0.62 accuracy, one at 0.80
    rng = np.random.default_rng(0)
    acc = (rng.random((3, 400)) < np.array([[0.6], [0.62], [0.8]])).astype(float)
    r = jaxtests.compare_models(acc, names=["a", "b", "c"], n_bootstrap=200, key=0)
    assert r.letters == ("b", "b", "a")  # "a": the set holding the best model
    assert r.rank[2] == 1 and r.rank_interval[2].tolist() == [1, 1]
    assert "rank 1 [1, 1]" in r.text().splitlines()[0]


def test_equal_models_never_reject():
    x = np.vstack([X4[0], X4[0], X4[0] + 0.0])
    r = jaxtests.compare_models(x, n_bootstrap=0)
    np.testing.assert_array_equal(r.pvalue, 1.0)
    np.testing.assert_array_equal(r.pvalue_adjusted, 1.0)
    assert r.letters == ("a", "a", "a")


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(scores=np.ones(5)), ValueError, "`scores` must be 2-dimensional"),
        (dict(scores=np.ones((1, 5))), ValueError, "`scores` needs at least 2 models"),
        (dict(scores=np.ones((3, 1))), ValueError, "`scores` needs at least 2 items"),
        (dict(scores=[[1, np.nan], [0, 1]]), ValueError, "`scores` contains NaN"),
        (dict(scores=[["a", "b"], ["c", "d"]]), TypeError, "`scores` must be an array"),
        (dict(names=["a", "b"]), ValueError, "`names` must have 4 entries"),
        (dict(control="q", names=list("wxyz")), ValueError, "`control` 'q' is not one"),
        (dict(control=4), ValueError, "`control` must be a model index below 4"),
        (dict(control=1.0), TypeError, "`control` must be an int"),
        (dict(correction="tukey"), ValueError, "`correction` must be one of"),
        (dict(alpha=1.5), ValueError, "`alpha` must lie in"),
        (dict(n_resamples=0), ValueError, "`n_resamples` must be at least 1"),
        (dict(method="binomial"), ValueError, "`method` must be one of"),
        (dict(n_bootstrap=-1), ValueError, "`n_bootstrap` must be at least 0"),
        (dict(confidence_level=95), ValueError, "`confidence_level` must lie in"),
        (dict(higher_is_better="yes"), TypeError, "`higher_is_better` must be True or False"),
        (dict(cluster=[0] * 9), ValueError, "`cluster` has 9 labels for 10 instances"),
        (dict(scores=np.ones((2, 30)), method="exact"), ValueError, "`method`='exact'"),
        (dict(key=-1), ValueError, "`key` must be an int seed"),
    ],
)
def test_errors_name_the_argument(kwargs, exc, match):
    kwargs = {"scores": X4, **kwargs}
    with pytest.raises(exc, match=match):
        jaxtests.compare_models(**kwargs)
