"""jaxtests.wilcoxon against scipy.stats.wilcoxon (1.17) and pingouin's rank-biserial r."""

import numpy as np
import pytest
from scipy import stats

import jaxtests

RNG = np.random.default_rng(2026)
ALTS = ("two-sided", "greater", "less")

# Paired scores with two zero differences and a tie (the docstring's example).
A = [0.763, 0.599, 0.954, 0.628, 0.882, 0.936, 0.661, 0.583, 0.775, 1.000]
B = [0.768, 0.591, 0.971, 0.661, 0.888, 0.931, 0.668, 0.583, 0.838, 1.000]


def test_worked_example_matches_scipy():
    r = jaxtests.wilcoxon(A, B)
    # scipy 1.17: stats.wilcoxon(A, B) -> statistic 6.5, pvalue 0.1171875 (its permutation
    # method: ties and zeros with n <= 13), the exact permutation p-value.
    assert (float(r.statistic), float(r.pvalue)) == (6.5, 0.1171875)
    assert (float(r.r_plus), float(r.r_minus), int(r.n)) == (6.5, 29.5, 8)
    assert r.method == "exact" and r.n_resamples == 2**8
    ref = stats.wilcoxon(A, B)
    assert float(r.pvalue) == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("n", [8, 20, 30])
@pytest.mark.parametrize("alternative", ALTS)
def test_exact_without_ties_is_scipys_exact(n, alternative):
    x = RNG.normal(0.3, 1, n)
    y = RNG.normal(0, 1, n)
    r = jaxtests.wilcoxon(x, y, alternative=alternative)
    ref = stats.wilcoxon(x, y, alternative=alternative, method="exact")
    assert r.method == "exact"
    assert float(r.statistic) == ref.statistic
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-12)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ALTS)
def test_exact_with_ties_and_zeros_is_scipys_permutation(zero_method, alternative):
    # Integer scores: ties and zeros. scipy enumerates all 2^12 patterns (n <= 13).
    x = RNG.integers(0, 6, 12).astype(float)
    y = RNG.integers(0, 6, 12).astype(float)
    x[:2] = y[:2]  # two zeros at least
    r = jaxtests.wilcoxon(x, y, zero_method=zero_method, alternative=alternative)
    ref = stats.wilcoxon(x, y, zero_method=zero_method, alternative=alternative)
    assert float(r.statistic) == pytest.approx(ref.statistic, abs=1e-12)
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-10)


def test_exact_with_ties_beyond_scipys_limit():
    # 18 pairs with ties: scipy's "auto" is the normal approximation; its
    # permutation_test with n_resamples >= 2^18 enumerates, as the engine does.
    x = RNG.integers(0, 5, 18).astype(float) + 0.5 * RNG.integers(0, 2, 18)
    y = RNG.integers(0, 5, 18).astype(float)
    d = x - y
    d = d[d != 0]

    def r_plus(d, axis):
        ranks = stats.rankdata(np.abs(d), axis=axis)
        return np.sum(np.where(d > 0, ranks, 0), axis=axis)

    ref = stats.permutation_test(
        (d,), r_plus, permutation_type="samples", n_resamples=2**20, vectorized=True
    )
    r = jaxtests.wilcoxon(x, y)
    assert r.method == "exact" and r.n_resamples == 2**d.size
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-12)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.parametrize("alternative", ALTS)
def test_approx_is_scipys_asymptotic(zero_method, correction, alternative):
    x = np.round(RNG.normal(0.2, 1, 70), 1)
    y = np.round(RNG.normal(0, 1, 70), 1)
    x[:3] = y[:3]
    r = jaxtests.wilcoxon(
        x,
        y,
        zero_method=zero_method,
        correction=correction,
        alternative=alternative,
        method="approx",
    )
    ref = stats.wilcoxon(
        x,
        y,
        zero_method=zero_method,
        correction=correction,
        alternative=alternative,
        method="asymptotic",
    )
    assert float(r.statistic) == pytest.approx(ref.statistic, abs=1e-12)
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-10)
    np.testing.assert_allclose(float(r.zstatistic), ref.zstatistic, rtol=1e-10)


def test_exact_beyond_scipys_auto_limit_is_scipys_exact():
    x, y = RNG.normal(0.15, 1, 120), RNG.normal(size=120)
    r = jaxtests.wilcoxon(x, y)
    ref = stats.wilcoxon(x, y, method="exact")  # scipy's exact recursion (its auto: approx)
    assert r.method == "exact"
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-12)


def test_auto_is_approx_beyond_1000_nonzero_differences():
    x, y = RNG.normal(size=1001), RNG.normal(size=1001)
    r = jaxtests.wilcoxon(x, y)
    ref = stats.wilcoxon(x, y)  # scipy: asymptotic beyond 50
    assert r.method == "approx"
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-10)
    with pytest.raises(ValueError, match="at most 1000 nonzero"):
        jaxtests.wilcoxon(x, y, method="exact")


def _exact_tails_python_ints(signed, r_plus):
    """P(R+ >= r), P(R+ <= r) of signed average ranks by a Python-int subset-sum recursion."""
    w = [round(2 * abs(v)) for v in signed if v != 0]
    counts = {0: 1}
    for a in w:
        new = dict(counts)
        for s, c in counts.items():
            new[s + a] = new.get(s + a, 0) + c
        counts = new
    total = 2 ** len(w)
    r2 = round(2 * r_plus)
    ge = sum(c for s, c in counts.items() if s >= r2)
    le = sum(c for s, c in counts.items() if s <= r2)
    return ge / total, le / total


@pytest.mark.parametrize("alternative", ALTS)
def test_exact_with_ties_beyond_62_differences_matches_integer_counts(alternative):
    # 90 pairs on a coarse grid: many ties and some zeros; counts reach 2^80 (float path).
    x = np.round(RNG.normal(0.25, 1, 90), 1)
    y = np.round(RNG.normal(0, 1, 90), 1)
    r = jaxtests.wilcoxon(x, y, method="exact", alternative=alternative)
    d = x - y
    ranks = stats.rankdata(np.abs(d[d != 0]))  # scipy's average ranks, zeros dropped
    signed = np.where(d[d != 0] > 0, ranks, -ranks)
    ge, le = _exact_tails_python_ints(signed, ranks[d[d != 0] > 0].sum())
    expected = {"greater": ge, "less": le, "two-sided": min(1.0, 2 * min(ge, le))}[alternative]
    np.testing.assert_allclose(float(r.pvalue), expected, rtol=1e-12)


def test_batches_along_any_axis():
    x = RNG.normal(0.2, 1, (3, 11))
    y = RNG.normal(0, 1, (3, 11))
    r = jaxtests.wilcoxon(x, y)
    rt = jaxtests.wilcoxon(x.T, y.T, axis=0)
    ref = stats.wilcoxon(x, y, axis=-1, method="exact")
    assert r.pvalue.shape == (3,)
    np.testing.assert_allclose(r.pvalue, ref.pvalue, rtol=1e-12)
    np.testing.assert_array_equal(r.pvalue, rt.pvalue)
    np.testing.assert_array_equal(r.statistic, ref.statistic)


def test_monte_carlo_permutation_agrees_with_exact_across_keys():
    x = RNG.normal(0.4, 1, 22)
    y = RNG.normal(0, 1, 22)
    exact = float(jaxtests.wilcoxon(x, y, method="exact").pvalue)
    ps = []
    for k in range(12):
        r = jaxtests.wilcoxon(x, y, method="permutation", n_resamples=4000, key=k)
        assert r.permutation_method == "monte-carlo" and r.seed == k
        ps.append(float(r.pvalue))
    # Each within 4 Monte Carlo standard errors; their mean within 4 of the mean's.
    se = np.sqrt(exact * (1 - exact) / 4000) + 1 / 4000
    assert max(abs(p - exact) for p in ps) < 4 * 2 * se  # two-sided doubles the error
    assert abs(np.mean(ps) - exact) < 4 * 2 * se / np.sqrt(len(ps))
    same = jaxtests.wilcoxon(x, y, method="permutation", n_resamples=4000, key=3)
    assert float(same.pvalue) == ps[3]


def test_permutation_enumerates_when_it_can():
    x, y = RNG.normal(size=10), RNG.normal(size=10)
    r = jaxtests.wilcoxon(x, y, method="permutation")
    assert r.permutation_method == "exact"
    assert float(r.pvalue) == float(jaxtests.wilcoxon(x, y, method="exact").pvalue)


def test_rank_biserial_matches_pingouin():
    pingouin = pytest.importorskip("pingouin")
    x = RNG.normal(0.3, 1, 25)
    y = RNG.normal(0, 1, 25)
    r = jaxtests.wilcoxon(x, y)
    ref = pingouin.wilcoxon(x, y)
    np.testing.assert_allclose(float(r.rank_biserial), float(ref["RBC"].iloc[0]), rtol=1e-12)


@pytest.mark.parametrize("alternative", ALTS)
@pytest.mark.parametrize("method", ["auto", "exact", "approx"])
def test_one_pair_is_scipys(method, alternative):
    # Issue 29: one pair raised an error naming `d`, an argument nobody passed. scipy 1.17
    # tests its sign: two-sided p = 1 (exact and auto), one-sided 1/2 or 1, and the normal
    # approximation 2 Phi(-1) = 0.3173 ("asymptotic").
    for x in ([0.9], [0.7]):
        r = jaxtests.wilcoxon(x, [0.8], method=method, alternative=alternative)
        scipy_method = "asymptotic" if method == "approx" else method
        ref = stats.wilcoxon(x, [0.8], method=scipy_method, alternative=alternative)
        assert float(r.statistic) == ref.statistic
        assert float(r.pvalue) == pytest.approx(ref.pvalue, rel=1e-12), (x, r.pvalue, ref.pvalue)
    perm = jaxtests.wilcoxon([0.9], [0.8], method="permutation", alternative=alternative)
    exact = jaxtests.wilcoxon([0.9], [0.8], method="exact", alternative=alternative)
    assert float(perm.pvalue) == float(exact.pvalue)


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize("alternative", ALTS)
def test_all_zero_differences_give_p_1_for_every_method(zero_method, alternative):
    # Issue 29: "approx" gave NaN where "exact" gave 1. scipy 1.17's "auto" gives 1 for every
    # zero_method and alternative (its "asymptotic" gives NaN, z = 0/0, and its "exact"
    # with ranked zeros other values); every method here gives 1.
    x = [1.0, 2.0, 3.0, 4.0]
    with np.errstate(invalid="ignore"):  # scipy divides 0 by 0 on the way
        ref = stats.wilcoxon(x, x, zero_method=zero_method, alternative=alternative)
    assert ref.pvalue == 1.0
    for method in ("auto", "exact", "approx", "permutation"):
        r = jaxtests.wilcoxon(x, x, zero_method=zero_method, alternative=alternative, method=method)
        assert float(r.pvalue) == 1.0, method
        assert np.isnan(float(r.rank_biserial)) != (zero_method == "zsplit")  # zsplit: 0
    r = jaxtests.wilcoxon(x, x, zero_method=zero_method, method="approx", correction=True)
    assert float(r.pvalue) == 1.0 and float(r.zstatistic) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(zero_method="none"), "zero_method"),
        (dict(method="asymp"), "method"),
        (dict(alternative="bigger"), "alternative"),
        (dict(correction=True, method="exact"), "correction"),
        (dict(correction=1), "correction"),
        (dict(n_resamples=100), "n_resamples"),
        (dict(key=0, method="exact"), "key"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        jaxtests.wilcoxon(A, B, **kwargs)


def test_bad_data_is_named():
    with pytest.raises(ValueError, match="NaN"):
        jaxtests.wilcoxon([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="shape"):
        jaxtests.wilcoxon([1.0, 2.0, 3.0], [1.0, 2.0])


def test_ranked_zeros_beyond_the_subset_sum_table_fall_back_to_approx():
    # 900 nonzero of 1,500 pairs: with "wilcox" the ranks run to 900 (exact); "pratt" ranks
    # them among all 1,500, whose subset-sum table is too large: "auto" is scipy's normal
    # approximation, "exact" a clear refusal (not the engine's meet-in-the-middle limit).
    x = RNG.normal(size=1500)
    y = x.copy()
    y[:900] = RNG.normal(size=900)
    assert jaxtests.wilcoxon(x, y).method == "exact"
    r = jaxtests.wilcoxon(x, y, zero_method="pratt")
    ref = stats.wilcoxon(x, y, zero_method="pratt", method="asymptotic")
    assert r.method == "approx"
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-10)
    with pytest.raises(ValueError, match="'pratt' or 'zsplit' rank the zeros"):
        jaxtests.wilcoxon(x, y, zero_method="pratt", method="exact")


@pytest.mark.parametrize("n", [1, 6, 25])
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_exact_on_the_host_equals_the_sign_flip_engine(n, zero_method):
    # The exact p-values now counted on the host (subset sums) against the sign-flip
    # engine's exact count of the same signed ranks (its jitted path), batched, with ties
    # and zeros, including a row of zeros only.
    from jaxtests._signflip import signflip_pvalue

    d = np.round(RNG.normal(size=(3, n)), 1)
    d[0] = 0.0
    for alternative in ALTS:
        r = jaxtests.wilcoxon(d, zero_method=zero_method, method="exact", alternative=alternative)
        signed = jaxtests._wilcoxon._signed_ranks(d, zero_method)[0]
        if n == 1:  # the engine needs two columns; a zero one changes no p-value
            signed = np.concatenate([signed, np.zeros_like(signed)], axis=-1)
        ref = signflip_pvalue(
            "mean", signed, alternative=alternative, method="exact", n_resamples=None
        )
        np.testing.assert_allclose(r.pvalue, ref.pvalue, rtol=1e-12, atol=0)
        np.testing.assert_allclose(r.pvalue_interval, ref.pvalue_interval, rtol=1e-12, atol=0)
        assert r.n_resamples == ref.n_resamples and r.permutation_method == "exact"
