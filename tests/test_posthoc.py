"""p-value adjustment, cliques, ordering and pairwise post hoc tests."""

import numpy as np
import pytest
import scipy.stats
from _helpers import python
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from jaxtests._hotelling import hotelling_t2
from jaxtests._posthoc import adjust_pvalues, cliques, ordering, posthoc

P10 = [0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.001, 0.03, 0.2, 0.0005]

# R 4.2.2: p.adjust(p, method) for p = P10 (ties at 0.03 included)
R_ADJUSTED = {
    "bonferroni": [
        0.10000000000000001,
        0.20000000000000001,
        0.29999999999999999,
        0.40000000000000002,
        0.5,
        1,
        0.01,
        0.29999999999999999,
        1,
        0.0050000000000000001,
    ],
    "holm": [
        0.080000000000000002,
        0.14000000000000001,
        0.17999999999999999,
        0.17999999999999999,
        0.17999999999999999,
        0.5,
        0.0090000000000000011,
        0.17999999999999999,
        0.40000000000000002,
        0.0050000000000000001,
    ],
    "hochberg": [
        0.080000000000000002,
        0.14000000000000001,
        0.14999999999999999,
        0.15000000000000002,
        0.15000000000000002,
        0.5,
        0.0090000000000000011,
        0.14999999999999999,
        0.40000000000000002,
        0.0050000000000000001,
    ],
    "hommel": [
        0.069999999999999993,
        0.083333333333333329,
        0.10000000000000001,
        0.12,
        0.15000000000000002,
        0.5,
        0.0090000000000000011,
        0.10000000000000001,
        0.40000000000000002,
        0.0050000000000000001,
    ],
    "bh": [
        0.033333333333333333,
        0.050000000000000003,
        0.050000000000000003,
        0.057142857142857148,
        0.0625,
        0.5,
        0.0050000000000000001,
        0.050000000000000003,
        0.22222222222222224,
        0.0050000000000000001,
    ],  # R method "BH"
    "by": [
        0.097632275132275126,
        0.14644841269841269,
        0.14644841269841269,
        0.16736961451247165,
        0.18306051587301586,
        1,
        0.01464484126984127,
        0.14644841269841269,
        0.65088183421516754,
        0.01464484126984127,
    ],  # R method "BY"
}


@pytest.mark.parametrize("method", sorted(R_ADJUSTED))
def test_adjust_against_r(method):
    np.testing.assert_allclose(adjust_pvalues(P10, method), R_ADJUSTED[method], rtol=1e-10)


SM_NAMES = {
    "bonferroni": "bonferroni",
    "holm": "holm",
    "hochberg": "simes-hochberg",
    "hommel": "hommel",
    "bh": "fdr_bh",
    "by": "fdr_by",
}


@pytest.mark.parametrize("method", sorted(SM_NAMES))
def test_adjust_batched_against_statsmodels(rng, method):
    from statsmodels.stats.multitest import multipletests

    p = rng.uniform(size=(4, 3, 12)) ** 3
    p[0, 0, :4] = p[0, 0, 4:8]  # ties
    res = adjust_pvalues(np.moveaxis(p, -1, 1), method, axis=1)
    res = np.moveaxis(np.asarray(res), 1, -1)
    for idx in np.ndindex(4, 3):
        ref = multipletests(p[idx], method=SM_NAMES[method])[1]
        np.testing.assert_allclose(res[idx], ref, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("method", sorted(SM_NAMES))
def test_adjust_on_the_host_equals_the_traced_kernel(rng, method):
    # Concrete p-values are adjusted in numpy (nothing compiled), traced ones by the
    # jitted kernel (lax.cummax, fori_loop): the same numbers, batched, ties included.
    import jax
    from jaxtests.kernels import multitest

    p = rng.uniform(size=(4, 3, 12)) ** 3
    p[0, 0, :4] = p[0, 0, 4:8]
    traced = jax.jit(multitest.adjust, static_argnames="method")(p, method)
    np.testing.assert_allclose(multitest.adjust(p, method, xp=np), traced, rtol=1e-12, atol=0)


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, 7, elements=st.floats(0, 1)))
def test_adjust_properties(p):
    holm = np.asarray(adjust_pvalues(p, "holm"))
    bonf = np.asarray(adjust_pvalues(p, "bonferroni"))
    hoch = np.asarray(adjust_pvalues(p, "hochberg"))
    homm = np.asarray(adjust_pvalues(p, "hommel"))
    bh = np.asarray(adjust_pvalues(p, "bh"))
    tol = 1e-12
    assert np.all(p <= holm + tol) and np.all(holm <= 1)
    # Power ordering of the family-wise procedures: Bonferroni <= Holm <= Hochberg <= Hommel.
    assert np.all(hoch <= holm + tol) and np.all(holm <= bonf + tol)
    assert np.all(homm <= hoch + tol)
    assert np.all(bh <= hoch + tol)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(holm[order]) >= -tol)  # monotone in the raw p-values
    np.testing.assert_array_equal(adjust_pvalues(p, "none"), p)


def test_adjust_validation():
    with pytest.raises(ValueError, match=r"`p` must hold probabilities in \[0, 1\]; found 1.5"):
        adjust_pvalues([0.1, 1.5])
    with pytest.raises(ValueError, match="`method` must be one of"):
        adjust_pvalues([0.1, 0.2], "sidak")
    with pytest.raises(ValueError, match="`p` contains NaN at index 0"):
        adjust_pvalues([np.nan, 0.2])
    np.testing.assert_allclose(adjust_pvalues(P10, "fdr_bh"), R_ADJUSTED["bh"], rtol=1e-10)


# ----------------------------------------------------------------------------------------
# Cliques and ordering
# ----------------------------------------------------------------------------------------


def _reject(n, pairs):
    r = np.zeros((n, n), dtype=bool)
    for i, j in pairs:
        r[i, j] = r[j, i] = True
    return r


def test_cliques_seed004_example():
    # Seed 004 §3.5: cliques {c4.5, (lda, rf), qda, knn}: only lda and rf not different.
    names = ["c4.5", "lda", "rf", "qda", "knn"]
    rej = ~np.eye(5, dtype=bool)
    rej[1, 2] = rej[2, 1] = False
    got = cliques(rej, names)
    assert set(got) == {("lda", "rf"), ("c4.5",), ("qda",), ("knn",)}


def test_cliques_overlap_and_complete():
    # 0-1 and 1-2 not different but 0-2 different: two overlapping cliques.
    assert cliques(_reject(3, [(0, 2)])) == [(0, 1), (1, 2)]
    assert cliques(np.zeros((4, 4), dtype=bool)) == [(0, 1, 2, 3)]
    # Triangle plus a pendant: {0,1,2} and {2,3}.
    rej = _reject(4, [(0, 3), (1, 3)])
    assert cliques(rej) == [(0, 1, 2), (2, 3)]


def test_ordering_text_seed004_display():
    # Seed 004 §3.5 ordering on error: rf lda qda knn c4.5 with rf-lda underlined and
    # rf-qda significantly different.
    names = ["c4.5", "lda", "rf", "qda", "knn"]
    means = [0.30, 0.12, 0.10, 0.15, 0.20]
    rej = ~np.eye(5, dtype=bool)
    for i, j in [(1, 2), (1, 3)]:  # lda~rf, lda~qda not different
        rej[i, j] = rej[j, i] = False
    o = ordering(means, rej, names)
    assert o.labels == ("rf", "lda", "qda", "knn", "c4.5")
    assert o.groups == ((0, 1), (1, 2))
    lines = o.text().split("\n")
    assert lines[0] == "rf  lda  qda  knn  c4.5"
    assert lines[1] == "───────"
    assert lines[2] == "    ────────"
    desc = ordering(means, rej, names, descending=True)
    assert desc.labels[0] == "c4.5"


def test_clique_ordering_validation():
    with pytest.raises(ValueError, match="`reject` must be symmetric"):
        cliques(np.triu(np.ones((3, 3), dtype=bool), 1))
    with pytest.raises(TypeError, match="`reject` must be a boolean matrix"):
        cliques(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"`means` must have shape \(3,\)"):
        ordering([1.0, 2.0], np.zeros((3, 3), dtype=bool))


# ----------------------------------------------------------------------------------------
# posthoc
# ----------------------------------------------------------------------------------------


def test_posthoc_t_matches_pairwise_ttests(rng):
    from statsmodels.stats.multitest import multipletests

    x = rng.normal(size=(4, 10)) * 0.02 + np.array([0.10, 0.11, 0.15, 0.2])[:, None]
    res = posthoc(x, names=["rf", "lda", "qda", "knn"])
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    ref = [scipy.stats.ttest_rel(x[i], x[j]) for i, j in pairs]
    raw = np.array([r.pvalue for r in ref])
    holm = multipletests(raw, method="holm")[1]
    for (i, j), r, h in zip(pairs, ref, holm):
        np.testing.assert_allclose(res.statistic[i, j], r.statistic, rtol=1e-10)
        np.testing.assert_allclose(res.statistic[j, i], -r.statistic, rtol=1e-10)
        np.testing.assert_allclose(res.pvalue[i, j], r.pvalue, rtol=1e-10)
        np.testing.assert_allclose(res.pvalue_adjusted[j, i], h, rtol=1e-10)
        assert bool(res.reject[i, j]) == (h <= 0.05)
    assert not np.asarray(res.reject).diagonal().any()
    assert res.ordering.labels[0] == "rf"
    assert set(res.cliques) == set(cliques(np.asarray(res.reject), res.names))
    text = res.text()
    assert "rf vs lda" in text and "Cliques:" in text
    assert "Ordering, best first (lower is better):" in text


def test_posthoc_unpaired_and_corrections(rng):
    x = rng.normal(size=(4, 10)) + np.arange(4.0)[:, None]
    res = posthoc(x, paired=False, correction="bonferroni")
    ref = scipy.stats.ttest_ind(x[0], x[3])
    np.testing.assert_allclose(res.pvalue[0, 3], ref.pvalue, rtol=1e-10)
    np.testing.assert_allclose(res.pvalue_adjusted[0, 3], min(6 * ref.pvalue, 1), rtol=1e-10)
    none = posthoc(x, correction="none", alpha=0.2)
    np.testing.assert_array_equal(none.pvalue, none.pvalue_adjusted)
    assert none.alpha == 0.2


def test_posthoc_hotelling_matches_pairs(rng):
    x = rng.normal(size=(3, 10, 2)) * 0.03
    x[0] += np.array([0.05, -0.03])
    res = posthoc(x, test="hotelling", correction="hochberg", names=["a", "b", "c"])
    assert res.ordering is None and res.mean.shape == (3, 2)
    raw = []
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        ref = hotelling_t2(x[i], x[j])
        np.testing.assert_allclose(res.statistic[i, j], ref.statistic, rtol=1e-10)
        np.testing.assert_allclose(res.statistic[j, i], ref.statistic, rtol=1e-10)
        np.testing.assert_allclose(res.pvalue[i, j], ref.pvalue, rtol=1e-10)
        raw.append(float(ref.pvalue))
    adj = np.asarray(adjust_pvalues(raw, "hochberg"))
    np.testing.assert_allclose(
        [res.pvalue_adjusted[0, 1], res.pvalue_adjusted[0, 2], res.pvalue_adjusted[1, 2]],
        adj,
        rtol=1e-10,
    )
    unp = posthoc(x, test="hotelling", paired=False)
    ref = hotelling_t2(x[0], x[2], paired=False)
    np.testing.assert_allclose(unp.pvalue[0, 2], ref.pvalue, rtol=1e-10)


def test_posthoc_validation(rng):
    x = rng.normal(size=(3, 10))
    with pytest.raises(ValueError, match=r"`x` must have shape \(L, k\) for test='t'"):
        posthoc(x[..., None])
    with pytest.raises(ValueError, match=r"`x` must have shape \(L, k, p\)"):
        posthoc(x, test="hotelling")
    with pytest.raises(ValueError, match="`test` must be one of 't', 'hotelling'"):
        posthoc(x, test="wilcoxon")
    with pytest.raises(ValueError, match="`x` needs at least 2 algorithms"):
        posthoc(x[:1])
    with pytest.raises(ValueError, match="`x` needs at least 2 folds"):
        posthoc(x[:, :1])
    with pytest.raises(ValueError, match="`alpha` must lie in"):
        posthoc(x, alpha=0.0)
    with pytest.raises(ValueError, match="`names` must have 3 entries"):
        posthoc(x, names=["a", "b"])
    with pytest.raises(ValueError, match="`correction` must be one of"):
        posthoc(x, correction="tukey")
    x3 = rng.normal(size=(3, 10, 2))
    x3[..., 1] = 3 * x3[..., 0]
    with pytest.raises(ValueError, match=r"covariance of x\[a\] - x\[b\] is singular"):
        posthoc(x3, test="hotelling", names=["a", "b", "c"])
    with pytest.raises(ValueError, match="more folds than measures"):
        posthoc(rng.normal(size=(3, 2, 2)), test="hotelling")


def test_ordering_refuses_nan_means():
    # Issue 18.7: a NaN mean was sorted somewhere arbitrary.
    reject = np.zeros((3, 3), dtype=bool)
    with pytest.raises(ValueError, match="`means` contains NaN at index 1"):
        ordering([0.1, np.nan, 0.2], reject)
    with pytest.raises(ValueError, match="`means` contains inf at index 0"):
        ordering([np.inf, 0.1, 0.2], reject)
    with pytest.raises(TypeError, match="`means` must be an array of real numbers"):
        ordering(["a", "b", "c"], reject)


@pytest.mark.parametrize("scale", [1e-160, 1e200])
def test_posthoc_tiny_and_huge_scales(rng, scale):
    # Issue 18.14: exact power-of-two rescale; t is scale-invariant, means scaled back.
    x = rng.normal(size=(3, 8)) + np.array([0.0, 0.8, 1.6])[:, None]
    base, res = posthoc(x), posthoc(x * scale)
    np.testing.assert_allclose(res.statistic, base.statistic, rtol=1e-12)
    np.testing.assert_allclose(res.pvalue, base.pvalue, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(res.mean) / scale, base.mean, rtol=1e-12)
    assert res.cliques == base.cliques


def _brute_cliques(adj):
    """Maximal cliques by enumerating every subset (small graphs): the reference."""
    n = adj.shape[0]
    cl = [
        s
        for m in range(1, 1 << n)
        for s in [tuple(i for i in range(n) if m >> i & 1)]
        if all(adj[i, j] for i in s for j in s if i != j)
    ]
    sets = [set(c) for c in cl]
    return sorted(
        (c for c, s in zip(cl, sets) if not any(s < t for t in sets)), key=lambda c: (-len(c), c)
    )


def test_cliques_equal_an_enumeration_and_networkx_on_random_graphs():
    rng = np.random.default_rng(43)
    for n, density in [(1, 0.5), (2, 0.5), (6, 0.3), (9, 0.5), (11, 0.8), (12, 0.6)]:
        for _ in range(3):
            near = np.triu(rng.random((n, n)) < density, 1)
            near = near | near.T
            reject = ~near
            np.fill_diagonal(reject, False)
            assert cliques(reject) == _brute_cliques(near), (n, density)
    nx = pytest.importorskip("networkx")
    for n, density in [(40, 0.5), (60, 0.8), (200, 0.3)]:
        near = np.triu(rng.random((n, n)) < density, 1)
        near = near | near.T
        reject = ~near
        np.fill_diagonal(reject, False)
        ref = nx.find_cliques(nx.from_numpy_array(near.astype(int)))
        assert cliques(reject) == sorted(map(tuple, map(sorted, ref)), key=lambda c: (-len(c), c))


_MANY_CLIQUES = """
import time
import numpy as np
from jaxtests import cliques
r = np.zeros((1000, 1000), bool)
assert cliques(r) == [tuple(range(1000))]  # one clique of 1,000: RecursionError before
np.fill_diagonal(r := ~r, False)
assert cliques(r) == [(i,) for i in range(1000)]
g = np.arange(90) // 3  # Moon-Moser: 3^30 maximal cliques
start = time.monotonic()
try:
    cliques((g[:, None] == g[None, :]) & ~np.eye(90, dtype=bool))
except ValueError as exc:
    print(f"{time.monotonic() - start:.1f}", exc)
"""


def test_cliques_of_many_algorithms_end_or_are_refused_at_once():
    seconds, message = python(_MANY_CLIQUES, timeout=120).stdout.split(" ", 1)
    assert message.startswith("`reject`: the maximal cliques of these 90 algorithms are too many")
    assert "more than 5,000,000 steps of the search or 100,000 cliques" in message
    assert float(seconds) < 30  # a few seconds; 3^30 cliques would take years
