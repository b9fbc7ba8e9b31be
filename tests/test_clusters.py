"""Clustered instances (issue 38): cluster-robust paired t, cluster sign flips, clustered McNemar.

References: statsmodels' cluster-robust OLS on an intercept-only model (CR1); the general
matrices of Bell & McCaffrey (2002) / Pustejovsky & Tipton (2018), worked in numpy below
(CR2 and its Satterthwaite df, clubSandwich's ``coef_test(vcov="CR2")``); full enumeration
of the 2^G cluster sign patterns; statsmodels' McNemar (one instance per cluster) and
Durkalski et al. (2003) worked by hand.
"""

import itertools

import numpy as np
import pytest
import scipy.stats as st
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import jaxtests


def _design(seed, g, max_size=5, icc=0.5):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, g)
    labels = np.repeat(rng.permutation(g), sizes)  # clusters in any order of labels
    n = len(labels)
    shift = np.sqrt(icc) * rng.normal(size=g)[labels]
    a = shift + np.sqrt(1 - icc) * rng.normal(size=n) + 0.2
    b = rng.normal(size=n)
    perm = rng.permutation(n)  # instances of a cluster need not be adjacent
    return a[perm], b[perm], labels[perm]


def _cr2_reference(d, g):
    # Bell & McCaffrey (2002); Pustejovsky & Tipton (2018), eq. 4 and the Satterthwaite df
    # of their section 3 with working model Phi = I, in general matrix form with X = 1.
    n = len(d)
    X = np.ones((n, 1))
    M = np.linalg.inv(X.T @ X)
    H = X @ M @ X.T
    e = d - H @ d
    eye = np.eye(n)
    meat, rows = 0.0, []
    for c in np.unique(g):
        idx = np.flatnonzero(g == c)
        w, V = np.linalg.eigh(eye[np.ix_(idx, idx)] - H[np.ix_(idx, idx)])
        A = V @ np.diag(w**-0.5) @ V.T
        meat += float((M @ X[idx].T @ A @ e[idx])[0]) ** 2
        rows.append(((eye - H)[idx].T @ A @ X[idx] @ M)[:, 0])
    P = np.array(rows)
    omega = P @ P.T
    return np.sqrt(meat), np.trace(omega) ** 2 / (omega**2).sum()


@pytest.mark.parametrize("seed, g", [(0, 7), (1, 12), (2, 30), (3, 3)])
def test_cr1_equals_statsmodels_cluster_robust_ols(seed, g):
    a, b, labels = _design(seed, g)
    d = a - b
    fit = sm.OLS(d, np.ones((len(d), 1))).fit(
        cov_type="cluster", cov_kwds={"groups": labels}, use_t=True
    )
    for alternative in ("two-sided", "greater", "less"):
        r = jaxtests.ttest_paired(a, b, cluster=labels, alternative=alternative)
        assert r.df == g - 1 == fit.df_resid_inference
        np.testing.assert_allclose(r.statistic, fit.tvalues[0], rtol=1e-12)
        np.testing.assert_allclose(r.standard_error, fit.bse[0], rtol=1e-12)
        p = fit.pvalues[0]
        if alternative != "two-sided":  # statsmodels' one-sided p from its t
            p = st.t.sf(fit.tvalues[0] * (1 if alternative == "greater" else -1), g - 1)
        np.testing.assert_allclose(r.pvalue, p, rtol=1e-10)
    ci = jaxtests.ttest_paired(a, b, cluster=labels).confidence_interval(0.9)
    np.testing.assert_allclose([ci.low, ci.high], fit.conf_int(alpha=0.1)[0], rtol=1e-10)
    assert r.n_clusters == g and r.cluster_se == "CR1"


@pytest.mark.parametrize("seed, g", [(0, 7), (4, 12), (5, 3)])
def test_cr2_equals_the_bell_mccaffrey_matrices(seed, g):
    a, b, labels = _design(seed, g, max_size=8)
    se, df = _cr2_reference(a - b, labels)
    r = jaxtests.ttest_paired(a, b, cluster=labels, cluster_se="CR2")
    np.testing.assert_allclose(r.standard_error, se, rtol=1e-12)
    np.testing.assert_allclose(r.df, df, rtol=1e-12)
    np.testing.assert_allclose(r.pvalue, 2 * st.t.sf(abs(np.mean(a - b) / se), df), rtol=1e-10)


def test_cr2_equal_sizes_have_g_minus_one_df_and_a_batch_matches_one_by_one():
    rng = np.random.default_rng(7)
    labels = np.repeat(np.arange(6), 4)
    a, b = rng.normal(size=(3, 24)), rng.normal(size=(3, 24))
    r = jaxtests.ttest_paired(a, b, cluster=labels, cluster_se="CR2")
    np.testing.assert_allclose(r.df, 5, rtol=1e-12)
    for i in range(3):
        one = jaxtests.ttest_paired(a[i], b[i], cluster=labels, cluster_se="CR2")
        np.testing.assert_allclose(r.statistic[i], one.statistic, rtol=1e-14)
        np.testing.assert_allclose(r.pvalue[i], one.pvalue, rtol=1e-14)
    # along another axis: the batch transposed
    rt = jaxtests.ttest_paired(a.T, b.T, axis=0, cluster=labels, cluster_se="CR2")
    np.testing.assert_allclose(rt.statistic, r.statistic, rtol=1e-14)


def test_one_instance_per_cluster_is_the_paired_t():
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=15), rng.normal(size=15)
    plain = jaxtests.ttest_paired(a, b)
    r = jaxtests.ttest_paired(a, b, cluster=np.arange(15))
    assert r.df == plain.df == 14
    np.testing.assert_allclose(r.statistic, plain.statistic, rtol=1e-13)
    np.testing.assert_allclose(r.pvalue, plain.pvalue, rtol=1e-12)
    np.testing.assert_allclose(r.effect_size, plain.effect_size, rtol=1e-13)
    with pytest.raises(ValueError, match="clustered"):
        r.effect_size_interval()


def test_constant_differences_give_scipys_infinite_t_with_a_warning():
    a = np.arange(12.0) / 10 + 0.3
    labels = np.repeat(np.arange(4), 3)
    with pytest.warns(RuntimeWarning, match="zero variance"):
        r = jaxtests.ttest_paired(a, a - 0.3, cluster=labels)
    assert r.standard_error == 0 and np.isinf(r.statistic) and r.pvalue == 0


def _enumerated(d, labels, alternative):
    sums = np.array([d[labels == c].sum() for c in np.unique(labels)])
    t = np.array([np.dot(s, sums) for s in itertools.product([-1, 1], repeat=len(sums))])
    obs, tol = sums.sum(), 1e-9 * np.abs(sums).sum()
    ge, le = (t >= obs - tol).mean(), (t <= obs + tol).mean()
    return {"greater": ge, "less": le, "two-sided": min(1.0, 2 * min(ge, le))}[alternative]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_cluster_signflip_exact_equals_enumeration(alternative):
    a, b, labels = _design(11, 9, max_size=4)
    d = a - b
    r = jaxtests.signflip_test(d, cluster=labels, alternative=alternative)
    assert r.method == "exact" and r.n_resamples == 2**9 and r.n_clusters == 9
    assert r.pvalue == _enumerated(d, labels, alternative)
    np.testing.assert_allclose(r.statistic, d.mean(), rtol=1e-14)
    rt = jaxtests.signflip_test(d, cluster=labels, statistic="t", alternative=alternative)
    assert rt.pvalue == r.pvalue  # the t of the clusters' sums orders patterns as the mean
    sums = np.array([d[labels == c].sum() for c in np.unique(labels)])
    np.testing.assert_allclose(rt.statistic, st.ttest_1samp(sums, 0).statistic, rtol=1e-12)


def test_cluster_signflip_labels_names_order_and_monte_carlo():
    a, b, labels = _design(12, 40, max_size=3)
    d = a - b
    base = jaxtests.signflip_test(d, cluster=labels, n_resamples=999, key=5)
    assert base.method == "monte-carlo" and base.n_clusters == 40
    named = jaxtests.signflip_test(d, cluster=[f"p{x}" for x in labels], n_resamples=999, key=5)
    # string labels sort differently from integers: the clusters' order changes, so the
    # draws do; the same order (zero-padded names) gives the same draws
    padded = jaxtests.signflip_test(
        d, cluster=[f"p{x:03d}" for x in labels], n_resamples=999, key=5
    )
    assert padded.pvalue == base.pvalue
    assert abs(named.pvalue - base.pvalue) < 0.1
    sums = np.array([d[labels == c].sum() for c in np.unique(labels)])
    on_sums = jaxtests.signflip_test(sums, n_resamples=999, key=5)
    assert on_sums.pvalue == base.pvalue  # the engine runs on the clusters' sums
    # a batch of hypotheses shares the cluster labels and the draws
    both = jaxtests.signflip_test(np.stack([d, -d]), cluster=labels, n_resamples=999, key=5)
    assert both.pvalue[0] == base.pvalue
    # one instance per cluster is the unclustered test
    plain = jaxtests.signflip_test(d, n_resamples=999, key=5)
    single = jaxtests.signflip_test(d, cluster=np.arange(len(d)), n_resamples=999, key=5)
    assert single.pvalue == plain.pvalue


def test_ttest_paired_permutation_with_clusters_is_the_cluster_signflip():
    a, b, labels = _design(13, 8)
    r = jaxtests.ttest_paired(a, b, cluster=labels, method="permutation")
    s = jaxtests.signflip_test(a - b, cluster=labels)
    assert r.pvalue == s.pvalue and r.permutation_method == "exact" and r.n_clusters == 8


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"cluster": np.arange(5)}, ValueError, "has 5 labels for 12"),
        ({"cluster": np.zeros(12)}, ValueError, "at least 2 are needed"),
        ({"cluster": np.arange(12) + 0.5}, ValueError, "non-integer float labels"),
        ({"cluster": np.r_[np.arange(11), np.nan]}, ValueError, "NaN"),
        ({"cluster": np.arange(12).reshape(3, 4)}, ValueError, "1-dimensional"),
        ({"cluster": [None] * 6 + ["a"] * 6}, ValueError, "missing labels"),
        ({"cluster": np.arange(12) % 3, "cluster_se": "CR3"}, ValueError, "`cluster_se`"),
    ],
)
def test_bad_clusters_are_refused_by_name(kwargs, error, words):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=12), rng.normal(size=12)
    with pytest.raises(error, match=words):
        jaxtests.ttest_paired(a, b, **kwargs)
    if "cluster_se" not in kwargs:
        with pytest.raises(error, match=words):
            jaxtests.signflip_test(a - b, **kwargs)


def test_signflip_cluster_refuses_hotelling_and_callables():
    d = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(ValueError, match="`cluster` applies to statistic 'mean' or 't'"):
        jaxtests.signflip_test(d, statistic="hotelling", cluster=np.arange(12) % 3)
    with pytest.raises(ValueError, match="got a callable"):
        jaxtests.signflip_test(d[:, 0], statistic=lambda x: x.mean(), cluster=np.arange(12) % 3)


def test_clustered_mcnemar_worked_by_hand_and_against_statsmodels():
    # Four passages; per passage b_g - c_g (A alone right minus B alone right):
    # passage 0: A right on 3, B on 1 of the same 3 -> 2; passage 1: B alone right twice
    # -> -2; passage 2: one each -> 0; passage 3: A alone right once -> 1.
    # Durkalski: (2 - 2 + 0 + 1)^2 / (4 + 4 + 0 + 1) = 1/9.
    y = np.ones(12, dtype=int)
    pa = np.array([1, 1, 1, -1, -1, 1, 1, -1, 1, 1, -1, -1])
    pb = np.array([1, -1, -1, 1, 1, 1, -1, 1, 1, -1, -1, -1])
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    r = jaxtests.mcnemar(y, pa, pb, cluster=labels)
    np.testing.assert_allclose(r.statistic, 1 / 9, rtol=1e-14)
    np.testing.assert_allclose(r.pvalue, st.chi2.sf(1 / 9, 1), rtol=1e-12)
    assert (r.n01, r.n10, r.method, r.correction, r.n_clusters) == (4, 3, "chi2", False, 4)
    # One instance per cluster: McNemar's chi-square without continuity correction.
    rng = np.random.default_rng(3)
    y, pa, pb = (rng.choice([-1, 1], 60) for _ in range(3))
    single = jaxtests.mcnemar(y, pa, pb, cluster=np.arange(60))
    table = [[0, int(single.n01)], [int(single.n10), 0]]
    ref = sm_mcnemar(table, exact=False, correction=False)
    np.testing.assert_allclose(single.statistic, ref.statistic, rtol=1e-13)
    np.testing.assert_allclose(single.pvalue, ref.pvalue, rtol=1e-12)
    # a batch along leading axes, and no discordant pair at all
    batch = jaxtests.mcnemar(
        np.stack([y, y]), np.stack([pa, y]), np.stack([pb, y]), cluster=np.arange(60)
    )
    np.testing.assert_allclose(batch.statistic, [ref.statistic, 0.0], rtol=1e-13)
    np.testing.assert_allclose(batch.pvalue, [ref.pvalue, 1.0], rtol=1e-12)
    with pytest.raises(ValueError, match="Durkalski"):
        jaxtests.mcnemar(y, pa, pb, cluster=np.arange(60), method="exact")
    with pytest.raises(ValueError, match="Durkalski"):
        jaxtests.mcnemar(y, pa, pb, cluster=np.arange(60), correction=True)
    assert jaxtests.mcnemar(y, pa, pb).method == "exact"  # None: the unclustered default


def test_cluster_bootstrap_is_scipys_bootstrap_of_the_clusters_sums():
    # scipy.stats.bootstrap on the clusters' (sum, size) pairs with the pooled ratio: the
    # same resampling scheme (different draws: intervals agree within Monte Carlo error);
    # BCa's jackknife acceleration is deterministic (leave one cluster out), to 1e-12.
    a, b, labels = _design(21, 12)
    d = a - b
    groups = np.unique(labels)
    sums = np.array([d[labels == c].sum() for c in groups])
    sizes = np.array([(labels == c).sum() for c in groups], float)
    with pytest.warns(RuntimeWarning, match="resamples 12 clusters: with fewer than 20"):
        r = jaxtests.bootstrap((a, b), "mean_difference", cluster=labels, n_resamples=20000, key=1)
    ref = st.bootstrap(
        (sums, sizes),
        lambda s, n, axis=-1: s.sum(axis) / n.sum(axis),
        paired=True,
        n_resamples=20000,
        rng=0,
    )
    assert r.n_clusters == 12
    np.testing.assert_allclose(r.statistic, d.mean(), rtol=1e-13)
    np.testing.assert_allclose(r.standard_error, ref.standard_error, rtol=0.03)
    ci, rci = r.confidence_interval, ref.confidence_interval
    assert abs(ci.low - rci.low) < 0.1 * ref.standard_error
    assert abs(ci.high - rci.high) < 0.1 * ref.standard_error
    loo = (sums.sum() - sums) / (sizes.sum() - sizes)
    u = (len(sums) - 1) * (loo.mean() - loo)
    np.testing.assert_allclose(r.acceleration, (u**3).sum() / 6 / (u**2).sum() ** 1.5, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:the cluster bootstrap resamples")
def test_cluster_bootstrap_resamples_whole_clusters():
    # Three clusters: every resampled mean is the pooled mean of a multiset of 3 clusters.
    x = np.array([0.0, 1.0, 10.0, 12.0, 13.0, 100.0])
    labels = np.array([0, 0, 1, 1, 1, 2])
    r = jaxtests.bootstrap(
        (x,), "mean", cluster=labels, n_resamples=500, key=3, return_distribution=True
    )
    sums, sizes = np.array([1.0, 35.0, 100.0]), np.array([2.0, 3.0, 1.0])
    support = {
        round(float(np.dot(c, sums) / np.dot(c, sizes)), 9)
        for c in itertools.product(range(4), repeat=3)
        if sum(c) == 3
    }
    seen = {round(float(v), 9) for v in r.bootstrap_distribution}
    assert seen <= support and len(seen) > 5
    # one instance per cluster draws the unclustered bootstrap's resamples
    y = np.random.default_rng(4).normal(size=30)
    kw = {"n_resamples": 300, "key": 9, "return_distribution": True}
    plain = jaxtests.bootstrap((y,), "mean", **kw)
    single = jaxtests.bootstrap((y,), "mean", cluster=np.arange(30), **kw)
    np.testing.assert_allclose(
        single.bootstrap_distribution, plain.bootstrap_distribution, rtol=1e-12
    )


@pytest.mark.filterwarnings("ignore:the cluster bootstrap resamples")
def test_cluster_bootstrap_of_measures_and_what_it_refuses():
    from sklearn.metrics import accuracy_score, f1_score

    rng = np.random.default_rng(5)
    labels = np.repeat(np.arange(15), 4)
    y = rng.choice([-1, 1], 60)
    sa, sb = rng.normal(size=60) + 0.8 * y, rng.normal(size=60)
    r = jaxtests.bootstrap((y, sa), "f1", cluster=labels, n_resamples=200, key=0)
    np.testing.assert_allclose(r.statistic, f1_score(y, np.where(sa > 0, 1, -1)), rtol=1e-13)
    t = jaxtests.bootstrap_test(
        (y, sa, sb), "accuracy_difference", cluster=labels, n_resamples=200, key=0
    )
    acc = accuracy_score(y, np.where(sa > 0, 1, -1)) - accuracy_score(y, np.where(sb > 0, 1, -1))
    np.testing.assert_allclose(t.statistic, acc, rtol=1e-13)
    assert t.n_clusters == 15 and 0 < t.pvalue <= 1
    with pytest.raises(ValueError, match="'roc_auc' is not one"):
        jaxtests.bootstrap((y, sa), "roc_auc", cluster=labels)
    with pytest.raises(ValueError, match="a callable is not one"):
        jaxtests.bootstrap((sa,), lambda x: x.mean(), cluster=labels)
    with pytest.raises(ValueError, match="needs `paired=True`"):
        jaxtests.bootstrap((sa, sb), "mean_difference", paired=False, cluster=labels)
    with pytest.raises(ValueError, match="has 3 labels for 60"):
        jaxtests.bootstrap((sa,), "mean", cluster=[1, 2, 3])


@pytest.mark.slow
def test_clustered_tests_hold_their_level_where_naive_ones_do_not():
    # H0 with intra-cluster correlation 0.3, 40 clusters of 10 instances, 2,000 data sets:
    # the clustered tests reject at 5% within Monte Carlo error (3 standard errors,
    # 0.0146; CR1 with G - 1 df is known to be slightly liberal at G = 40: allowed up to
    # 0.07), the naive per-instance tests at about 30% (design effect 1 + 9 * 0.3 = 3.7).
    rng = np.random.default_rng(2026)
    n_sets, g, size, icc = 2000, 40, 10, 0.3
    labels = np.repeat(np.arange(g), size)
    d = np.sqrt(icc) * rng.normal(size=(n_sets, g))[:, labels]
    d = d + np.sqrt(1 - icc) * rng.normal(size=(n_sets, g * size))
    zero = np.zeros_like(d)
    rates = {
        "naive t": (jaxtests.ttest_paired(d, zero).pvalue < 0.05).mean(),
        "CR1": (jaxtests.ttest_paired(d, zero, cluster=labels).pvalue < 0.05).mean(),
        "CR2": (
            jaxtests.ttest_paired(d, zero, cluster=labels, cluster_se="CR2").pvalue < 0.05
        ).mean(),
        "naive sign flip": (jaxtests.signflip_test(d, n_resamples=999, key=1).pvalue < 0.05).mean(),
        "cluster sign flip": (
            jaxtests.signflip_test(d, cluster=labels, n_resamples=999, key=1).pvalue < 0.05
        ).mean(),
    }
    rates["wild cluster bootstrap"] = (
        jaxtests.wild_cluster_bootstrap(d, zero, cluster=labels, n_resamples=999, key=1).pvalue
        < 0.05
    ).mean()
    # the bootstrap test, 400 of the data sets (its resamples run test by test)
    some = (d[:400], zero[:400])
    kw = {"n_resamples": 999, "key": 1, "method": "percentile"}
    rates["cluster bootstrap"] = (
        jaxtests.bootstrap_test(some, cluster=labels, **kw).pvalue < 0.05
    ).mean()
    rates["naive bootstrap"] = (jaxtests.bootstrap_test(some, **kw).pvalue < 0.05).mean()
    assert 0.05 - 3 * 0.0109 <= rates["cluster bootstrap"] <= 0.08, rates
    assert rates["naive bootstrap"] > 0.2, rates
    for name in ("CR1", "CR2", "cluster sign flip", "wild cluster bootstrap"):
        assert 0.05 - 0.0146 <= rates[name] <= 0.07, rates
    for name in ("naive t", "naive sign flip"):
        assert rates[name] > 0.2, rates
    # McNemar: A and B exchangeable, a cluster leaning towards one of them.
    lean = rng.normal(0, 1.0, size=(n_sets, g))[:, labels]
    base = rng.normal(0.5, 1.0, size=(n_sets, g))[:, labels]
    right_a = rng.random(d.shape) < 1 / (1 + np.exp(-(base + lean)))
    right_b = rng.random(d.shape) < 1 / (1 + np.exp(-(base - lean)))
    y = np.ones(d.shape, dtype=int)
    pa, pb = np.where(right_a, 1, -1), np.where(right_b, 1, -1)
    clustered = (jaxtests.mcnemar(y, pa, pb, cluster=labels).pvalue < 0.05).mean()
    naive = (jaxtests.mcnemar(y, pa, pb, method="chi2", correction=False).pvalue < 0.05).mean()
    assert 0.05 - 0.0146 <= clustered <= 0.07 and naive > 0.2, (clustered, naive)


def _wildboottest(d, labels, weights, n_draws):
    # wildboottest's WCR11 with its own classes: X = 1, R = 1, the null imposed
    from wildboottest.wildboottest import WildboottestCL

    boot = WildboottestCL(
        X=np.ones((len(d), 1)), Y=d, cluster=labels, R=np.array([1.0]), B=n_draws, seed=1
    )
    boot.get_scores(bootstrap_type="11", impose_null=True)
    boot.get_weights(weights_type=weights)
    boot.get_numer()
    boot.get_denom()
    boot.get_tboot()
    boot.get_vcov()
    boot.get_tstat()
    boot.get_pvalue()
    return float(boot.t_stat), np.asarray(boot.t_boot), float(boot.pvalue)


def test_wild_cluster_bootstrap_enumerated_equals_wildboottest():
    a, b, labels = _design(31, 8)
    d = a - b
    r = jaxtests.wild_cluster_bootstrap(a, b, cluster=labels, return_distribution=True)
    t, t_boot, p_wbt = _wildboottest(d, labels, "rademacher", 9999)  # 2^8 < B: enumerated
    assert r.method == "exact" and r.n_resamples == 256 and r.seed is None
    np.testing.assert_allclose(r.statistic, t, rtol=1e-12)
    np.testing.assert_allclose(
        r.statistic, jaxtests.ttest_paired(a, b, cluster=labels).statistic, rtol=1e-13
    )
    np.testing.assert_allclose(np.sort(r.bootstrap_distribution), np.sort(t_boot), atol=1e-12)
    # wildboottest counts |t*| > |t| strictly, so the ties (the pattern of ones and its
    # negation, here) count or not as rounding falls; here they count at least as extreme
    strict = np.mean(np.abs(t_boot) > abs(t) * (1 + 1e-9))
    assert r.pvalue == np.mean(np.abs(t_boot) >= abs(t) * (1 - 1e-9)) == strict + 2 / 256
    assert strict <= p_wbt <= r.pvalue
    greater = jaxtests.wild_cluster_bootstrap(a, b, cluster=labels, alternative="greater")
    assert greater.pvalue == np.mean(t_boot >= t * (1 - 1e-9))


@pytest.mark.parametrize("weights", ["rademacher", "webb"])
def test_wild_cluster_bootstrap_draws_give_wildboottests_t_on_the_same_weights(weights):
    import jax

    from jaxtests._buckets import bucket
    from jaxtests._wild import _WEBB, block_draws

    a, b, labels = _design(32, 20)
    d = a - b
    n_draws = 5000
    r = jaxtests.wild_cluster_bootstrap(
        a, b, cluster=labels, weights=weights, n_resamples=n_draws, key=7, return_distribution=True
    )
    # the documented draws: block j of block_draws(Gp) draws of Gp = bucket(20) = 24
    # weights from fold_in(key, j), the first 20 columns used
    gp = bucket(20)
    draws = block_draws(gp)
    with jax.enable_x64(True):
        blocks = []
        for j in range(-(-n_draws // draws)):
            k = jax.random.fold_in(jax.random.key(7), j)
            if weights == "rademacher":
                w = jax.random.rademacher(k, (draws, gp), dtype=jax.numpy.float64)
            else:
                w = jax.numpy.asarray(_WEBB)[jax.random.randint(k, (draws, gp), 0, 6)]
            blocks.append(np.asarray(w)[:, :20])
    w = np.concatenate(blocks)[:n_draws]
    t, t_boot, p_wbt = _wildboottest(d, labels, lambda n, rng: w.T.ravel(), n_draws)
    np.testing.assert_allclose(r.bootstrap_distribution, t_boot, atol=1e-12)
    count = int(np.sum(np.abs(t_boot) >= abs(t) * (1 - 1e-9)))
    assert r.n_extreme == count and r.pvalue == (count + 1) / (n_draws + 1)
    assert abs(p_wbt - count / n_draws) <= 2 / n_draws
    lo, hi = r.pvalue_interval
    assert lo <= r.pvalue <= hi


def test_wild_rademacher_with_equal_clusters_is_the_cluster_signflip_and_batches():
    rng = np.random.default_rng(33)
    labels = np.repeat(np.arange(9), 3)
    a, b = rng.normal(0.4, 1, (3, 27)), rng.normal(size=(3, 27))
    r = jaxtests.wild_cluster_bootstrap(a, b, cluster=labels)
    s = jaxtests.signflip_test(a - b, cluster=labels)
    np.testing.assert_array_equal(r.pvalue, s.pvalue)
    mc = jaxtests.wild_cluster_bootstrap(
        a, b, cluster=labels, weights="webb", n_resamples=300, key=2
    )
    for i in range(3):
        one = jaxtests.wild_cluster_bootstrap(
            a[i], b[i], cluster=labels, weights="webb", n_resamples=300, key=2
        )
        assert one.pvalue == mc.pvalue[i] and one.seed == 2
    with pytest.raises(ValueError, match="`weights`"):
        jaxtests.wild_cluster_bootstrap(a, b, cluster=labels, weights="mammen")
    with pytest.raises(ValueError, match="has 5 labels for 27"):
        jaxtests.wild_cluster_bootstrap(a, b, cluster=[1, 2, 3, 4, 5])
    with pytest.raises(TypeError, match="cluster"):
        jaxtests.wild_cluster_bootstrap(a, b)


def test_make_benchmark_is_the_documented_generator():
    from jaxtests import datasets

    b = datasets.make_benchmark((0.0, 0.5), n_clusters=30, cluster_size=3, n_samples=4, seed=5)
    assert b.correct.shape == (2, 90, 4) and b.models == ("model-0", "model-1")
    assert set(np.unique(b.correct)) <= {0.0, 1.0}
    np.testing.assert_array_equal(b.cluster, np.repeat(np.arange(30), 3))
    again = datasets.make_benchmark((0.0, 0.5), n_clusters=30, cluster_size=3, n_samples=4, seed=5)
    np.testing.assert_array_equal(again.correct, b.correct)
    # the expected accuracy by quadrature against the model simulated directly in numpy:
    # E sigmoid(a + v - b) with v - b ~ N(0, 1 + 1 + 0.25), 10^6 draws (SE < 5e-4)
    z = np.random.default_rng(0).normal(size=10**6) * np.sqrt(2.25)
    for a, acc in zip((0.0, 0.5), b.accuracy):
        assert abs(acc - np.mean(1 / (1 + np.exp(-(a + z))))) < 2e-3
    np.testing.assert_allclose(b.accuracy[0], 0.5, atol=1e-12)  # symmetric at ability 0
    big = datasets.make_benchmark((0.7,), n_clusters=20000, cluster_size=5, seed=1)
    assert abs(big.correct.mean() - big.accuracy[0]) < 4 * 0.0025  # clustered SE about 0.0025
    for kwargs, words in [
        ({"abilities": ()}, "`abilities`"),
        ({"n_clusters": 1}, "`n_clusters`"),
        ({"cluster_size": 0}, "`cluster_size`"),
        ({"interaction_sd": -1.0}, "`interaction_sd`"),
        ({"n_samples": 0}, "`n_samples`"),
    ]:
        with pytest.raises(ValueError, match=words):
            datasets.make_benchmark(**kwargs)
