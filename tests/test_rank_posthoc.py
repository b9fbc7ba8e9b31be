"""Post hoc step procedures on Friedman's average ranks (issue 16): control and all pairs."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from jaxtests import friedman_posthoc
from jaxtests._rank_posthoc import (
    MAX_SHAFFER,
    _bergmann,
    _shaffer,
    exhaustive_sets,
    shaffer_counts,
)

SCORES = np.random.default_rng(7).normal(0, 1, (14, 5)) + np.arange(5) * 0.35


def _z_p(scores):
    # Independent: Demšar (2006) section 3.2.2 from scipy's ranks and normal tail.
    ranks = stats.rankdata(-np.asarray(scores), axis=1)
    n, k = ranks.shape
    avg = ranks.mean(0)
    return avg, np.sqrt(k * (k + 1) / (6 * n))


def test_control_holm_against_statsmodels():
    avg, se = _z_p(SCORES)
    z = (avg[1:] - avg[0]) / se
    p = 2 * stats.norm.sf(np.abs(z))
    r = friedman_posthoc(SCORES, control=0)
    assert r.comparisons == tuple((str(i), "0") for i in range(1, 5))
    np.testing.assert_allclose(r.statistic, z, rtol=1e-12)
    np.testing.assert_allclose(r.pvalue, p, rtol=1e-10)
    for method in ("holm", "bonferroni", "hochberg", "hommel"):
        ref = multipletests(p, method={"hochberg": "simes-hochberg"}.get(method, method))[1]
        got = friedman_posthoc(SCORES, control=0, method=method).pvalue_adjusted
        np.testing.assert_allclose(got, ref, rtol=1e-10, err_msg=method)


def test_all_pairs_holm_against_statsmodels_and_names():
    avg, se = _z_p(SCORES)
    pairs = list(itertools.combinations(range(5), 2))
    p = np.array([2 * stats.norm.sf(abs(avg[i] - avg[j]) / se) for i, j in pairs])
    names = ["a", "b", "c", "d", "e"]
    r = friedman_posthoc(SCORES, names=names)
    assert r.comparisons == tuple((names[i], names[j]) for i, j in pairs)
    np.testing.assert_allclose(r.pvalue_adjusted, multipletests(p, method="holm")[1], rtol=1e-10)
    np.testing.assert_array_equal(r.reject, r.pvalue_adjusted <= 0.05)
    assert "rejected" in r.text() or not np.any(r.reject)


def test_shaffer_counts_are_shaffers():
    # Shaffer (1986): possible numbers of true pairwise hypotheses among k means.
    assert sorted(shaffer_counts(3)) == [0, 1, 3]
    assert sorted(shaffer_counts(4)) == [0, 1, 2, 3, 6]
    assert sorted(shaffer_counts(5)) == [0, 1, 2, 3, 4, 6, 10]
    # García & Herrera (2008): t_j for k = 4 (m = 6) is 6, 3, 3, 3, 2, 1
    p = np.array([0.001, 0.002, 0.003, 0.004, 0.005, 0.006])
    np.testing.assert_allclose(_shaffer(p, 4), np.maximum.accumulate(p * [6, 3, 3, 3, 2, 1]))


def test_shaffer_counts_without_recursion_and_capped():
    # Issue 29: the recursive S(k) raised RecursionError at k = 1,000. The bit-set build
    # agrees with Shaffer's (1986) recursion, brute force, and reaches k = 500 in about
    # 0.5 s; beyond, a ValueError. At k = 500: all C(k, 2) true, or one learner apart from
    # the rest (C(k - 1, 2) = C(k, 2) - 499 true), and nothing in between.

    def brute(k):
        if k <= 1:
            return {0}
        return {math.comb(j, 2) + x for j in range(1, k + 1) for x in brute(k - j)}

    for k in range(12):
        assert shaffer_counts(k) == brute(k), k
    s = shaffer_counts(MAX_SHAFFER)
    m = math.comb(MAX_SHAFFER, 2)
    assert max(s) == m and m - MAX_SHAFFER + 1 in s
    assert not any(m - MAX_SHAFFER + 1 < x < m for x in s)
    x = np.random.default_rng(0).normal(size=(4, MAX_SHAFFER + 1))
    with pytest.raises(ValueError, match=r"at most 500 learners, got 501\. Use 'holm'"):
        friedman_posthoc(x, method="shaffer")


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_exhaustive_sets_are_the_partitions(k):
    bell = [1, 1, 2, 5, 15, 52, 203][k]
    sets = exhaustive_sets(k)
    assert len(sets) == len(set(sets)) == bell - 1  # every partition but the singletons
    assert max(len(s) for s in sets) == math.comb(k, 2)


def _bergmann_rejects(p, k, alpha):
    # Bergmann & Hommel (1988) as García & Herrera state it: reject H_i unless i lies in an
    # exhaustive set I none of whose hypotheses Bonferroni rejects at alpha / |I|.
    keep = set()
    for s in exhaustive_sets(k):
        if min(p[list(s)]) > alpha / len(s):
            keep |= set(s)
    return np.array([i not in keep for i in range(len(p))])


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(3, 5),
    seed=st.integers(0, 2**31 - 1),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
)
def test_bergmann_rejections_and_ordering(k, seed, alpha):
    m = math.comb(k, 2)
    p = np.random.default_rng(seed).uniform(0, 0.2, m) ** 2
    bh = _bergmann(p, k)
    np.testing.assert_array_equal(bh <= alpha, _bergmann_rejects(p, k, alpha))
    holm = multipletests(p, method="holm")[1]
    sh = _shaffer(p, k)
    assert np.all(bh <= sh + 1e-15) and np.all(sh <= holm + 1e-15)  # power order
    if k == 3:
        np.testing.assert_allclose(bh, sh)  # the same procedure for three learners


def test_bad_input():
    with pytest.raises(ValueError, match="`control`='x' is not one of the names"):
        friedman_posthoc(SCORES, control="x")
    with pytest.raises(ValueError, match="`control`=7"):
        friedman_posthoc(SCORES, control=7)
    with pytest.raises(TypeError, match="`control` must be"):
        friedman_posthoc(SCORES, control=1.5)
    with pytest.raises(ValueError, match="method"):
        friedman_posthoc(SCORES, control=0, method="shaffer")
    with pytest.raises(ValueError, match="at most 9 learners"):
        friedman_posthoc(np.random.default_rng(0).normal(size=(5, 10)), method="bergmann")
    with pytest.raises(ValueError, match="`names` must be 5 distinct"):
        friedman_posthoc(SCORES, names=["a", "a", "b", "c", "d"])
