"""friedman and nemenyi against scipy.stats.friedmanchisquare, brute force and Demšar's Table 5."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import jaxtests

RNG = np.random.default_rng(7)
SCORES = [
    [0.81, 0.79, 0.70],
    [0.92, 0.90, 0.85],
    [0.66, 0.69, 0.60],
    [0.75, 0.71, 0.72],
    [0.88, 0.84, 0.80],
]


@pytest.mark.parametrize(("n", "k"), [(5, 3), (14, 4), (30, 6)])
def test_chi2_is_scipys_friedmanchisquare_with_ties(n, k):
    scores = np.round(RNG.normal(size=(n, k)) + np.arange(k) * 0.3, 1)  # ties
    r = jaxtests.friedman(scores)
    ref = stats.friedmanchisquare(*scores.T)
    np.testing.assert_allclose(float(r.statistic), ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(float(r.pvalue), ref.pvalue, rtol=1e-10)
    assert r.df == (k - 1, (k - 1) * (n - 1))


def test_leading_axes_are_independent_tables():
    scores = np.round(RNG.normal(size=(3, 2, 12, 4)) + np.arange(4) * 0.3, 1)  # ties
    with pytest.warns(RuntimeWarning, match="exact"):  # 12 data sets of 4: exact p-values
        r = jaxtests.friedman(scores, method="f")
    ref = stats.friedmanchisquare(*np.moveaxis(scores, -1, 0), axis=-1)  # scipy, batched
    np.testing.assert_allclose(r.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(r.chi2_pvalue, ref.pvalue, rtol=1e-10)
    assert r.average_ranks.shape == (3, 2, 4) and r.pvalue.shape == (3, 2)
    with pytest.warns(RuntimeWarning, match="exact"):
        one = jaxtests.friedman(scores[1, 0], method="f")
    assert r.permutation_method == one.permutation_method == "exact"
    np.testing.assert_allclose(r.f_pvalue[1, 0], float(one.f_pvalue), rtol=1e-14)
    np.testing.assert_allclose(r.pvalue[1, 0], float(one.pvalue), rtol=1e-14)
    with pytest.raises(ValueError, match="one \\(N, k\\) table"):
        jaxtests.friedman(scores, method="permutation", n_resamples=99, key=0)


def test_iman_davenport_f():
    # 14 data sets of 4 learners (Demšar's example size): the F approximation holds its
    # level from N = 13 for k = 4 (issue 42.1), so method "f" is the F p-value, unwarned.
    scores = np.round(RNG.normal(size=(14, 4)) + np.arange(4) * 0.2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = jaxtests.friedman(scores, method="f")
    n, k = 14, 4
    chi2 = stats.friedmanchisquare(*scores.T).statistic  # scipy
    np.testing.assert_allclose(float(r.statistic), chi2, rtol=1e-12)
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    np.testing.assert_allclose(float(r.f_statistic), f, rtol=1e-12)
    np.testing.assert_allclose(float(r.pvalue), stats.f.sf(f, k - 1, (k - 1) * (n - 1)), rtol=1e-10)
    assert float(r.pvalue) == float(r.f_pvalue) and r.permutation_method is None
    assert float(r.chi2_pvalue) == float(jaxtests.friedman(scores).pvalue)


def test_f_with_few_data_sets_warns_and_gives_the_exact_pvalue():
    with pytest.warns(RuntimeWarning, match=r"N = 5 data sets are too few.*method='exact'"):
        r = jaxtests.friedman(SCORES, method="f")
    chi2, n, k = 6.4, 5, 3  # scipy 1.17: friedmanchisquare -> 6.4 on these scores
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    f_ref = stats.f.sf(f, k - 1, (k - 1) * (n - 1))  # scipy's F distribution
    np.testing.assert_allclose(float(r.f_pvalue), f_ref, rtol=1e-10)
    exact = _brute_force_pvalue(SCORES)  # all 6^5 arrangements
    assert float(r.pvalue) == pytest.approx(exact, rel=1e-12) and r.permutation_method == "exact"
    assert float(jaxtests.friedman(SCORES, method="exact").pvalue) == float(r.pvalue)


def test_average_ranks_and_direction():
    r = jaxtests.friedman(SCORES)
    np.testing.assert_allclose(r.average_ranks, [1.2, 2.0, 2.8])
    low = jaxtests.friedman(SCORES, higher_is_better=False)
    np.testing.assert_allclose(low.average_ranks, [2.8, 2.0, 1.2])
    assert float(low.statistic) == float(r.statistic)


def _brute_force_pvalue(scores):
    """Exact within-row permutation p-value of sum_j R_j^2 (all (k!)^N arrangements)."""
    ranks = stats.rankdata(np.asarray(scores), axis=1)
    n, k = ranks.shape
    perms = np.array(list(itertools.permutations(range(k))))
    obs = np.sum(ranks.sum(axis=0) ** 2)
    count = total = 0
    for choice in itertools.product(range(len(perms)), repeat=n):
        sums = sum(ranks[i, perms[c]] for i, c in enumerate(choice))
        total += 1
        count += np.sum(sums**2) >= obs - 1e-9
    return count / total


def test_permutation_agrees_with_brute_force_across_keys():
    scores = np.array(SCORES[:4])
    exact = _brute_force_pvalue(scores)  # 6^4 = 1296 arrangements
    ps = []
    for k in range(8):
        r = jaxtests.friedman(scores, method="permutation", n_resamples=5000, key=k)
        assert r.permutation_method == "monte-carlo" and r.seed == k
        ps.append(float(r.pvalue))
    se = np.sqrt(exact * (1 - exact) / 5000) + 1 / 5000
    assert max(abs(p - exact) for p in ps) < 4.5 * se
    assert abs(np.mean(ps) - exact) < 4.5 * se / np.sqrt(len(ps))


# Demšar (2006), Table 5(a): critical values q_alpha of the two-tailed Nemenyi test.
DEMSAR_Q = {
    0.05: [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164],
    0.10: [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920],
}


@pytest.mark.parametrize("alpha", sorted(DEMSAR_Q))
def test_q_alpha_is_demsars_table(alpha):
    for k, q in zip(range(2, 11), DEMSAR_Q[alpha]):
        scores = RNG.normal(size=(6, k))
        r = jaxtests.nemenyi(scores, alpha=alpha)
        assert float(r.q_alpha) == pytest.approx(q, abs=1.5e-3)
        n = 6
        assert float(r.critical_difference) == pytest.approx(
            float(r.q_alpha) * np.sqrt(k * (k + 1) / (6 * n)), rel=1e-12
        )


def test_nemenyi_pvalues_agree_with_the_critical_difference():
    scores = RNG.normal(size=(20, 5)) + np.array([0.0, 0.2, 0.5, 0.9, 1.0])
    r = jaxtests.nemenyi(scores, alpha=0.05)
    p = np.asarray(r.pvalues)
    np.testing.assert_allclose(p, p.T)
    np.testing.assert_array_equal(np.diag(p), 1.0)
    diff = np.abs(r.average_ranks[:, None] - r.average_ranks[None, :])
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_array_equal((p < 0.05)[off], (diff > float(r.critical_difference))[off])


def test_nemenyi_groups():
    r = jaxtests.nemenyi(SCORES, names=["svm", "lda", "knn"])
    # average ranks 1.2, 2.0, 2.8 with CD = 1.482: svm and knn differ (1.6), the rest not
    assert r.groups == (("svm", "lda"), ("lda", "knn"))
    assert "critical difference 1.482" in r.text()
    far = [[3.0, 2.0, 1.0]] * 12  # ranks 1, 2, 3 in every data set: CD = 0.957
    assert jaxtests.nemenyi(far, names="abc").groups == (("a",), ("b",), ("c",))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: jaxtests.friedman(SCORES, method="exakt"), "method"),
        (lambda: jaxtests.friedman(RNG.normal(size=(4, 7)), method="exact"), "'permutation'"),
        (lambda: jaxtests.friedman(SCORES, n_resamples=10), "n_resamples"),
        (lambda: jaxtests.friedman([[1.0, 2.0]]), "2 data sets"),
        (lambda: jaxtests.friedman([[1.0], [2.0]]), "2 learners"),
        (lambda: jaxtests.friedman([1.0, 2.0]), "at least 2 dimension"),
        (lambda: jaxtests.friedman([[1.0, np.nan], [2.0, 1.0]]), "NaN"),
        (lambda: jaxtests.nemenyi(SCORES, alpha=1.5), "alpha"),
        (lambda: jaxtests.nemenyi(SCORES, names=["a"]), "names"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def _null_tables(n, k):
    """All ``(k!)^N`` rank tables of ``N`` data sets and ``k`` learners: under H0 with
    continuous scores each data set ranks the learners by a uniform random permutation, so
    these equally likely tables are the whole null distribution (brute-force enumeration)."""
    perms = np.array(list(itertools.permutations(range(1, k + 1))), float)
    return perms[np.array(list(itertools.product(range(len(perms)), repeat=n)))]


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_f_method_holds_its_level_with_few_data_sets(n, k):
    # Issue 29: the Iman-Davenport F rejected 24.9% of null tables at N = 3, k = 2 (p = 0
    # where every data set ranks alike) and 19.4% at N = 3, k = 3. The tables are
    # enumerated, so the rejection rate is exact: no Monte Carlo margin.
    tables = _null_tables(n, k)
    with pytest.warns(RuntimeWarning, match="Iman-Davenport F approximation"):
        r = jaxtests.friedman(tables, method="f")
    assert r.pvalue.shape == (len(tables),)
    assert np.mean(r.pvalue <= 0.05) <= 0.05


def test_f_method_holds_its_level_with_ties():
    # Null tables with ties (scores 0, 1, 2 drawn alike for every learner; fixed seed):
    # 2,000 tables, so a 3-standard-error Monte Carlo margin (binomial, p = 0.05).
    scores = np.random.default_rng(29).integers(0, 3, size=(2000, 4, 3)).astype(float)
    with pytest.warns(RuntimeWarning, match="too few"):
        r = jaxtests.friedman(scores, method="f")
    margin = 3 * np.sqrt(0.05 * 0.95 / 2000)
    assert np.mean(r.pvalue <= 0.05) <= 0.05 + margin


def _rank_sum_null(n, k):
    """The null of the rank sums of ``N`` data sets of ``k`` learners without ties, by brute
    force over the rank-sum lattice (independent of jaxtests' sorted-state counting): a
    dense convolution over ``(R_1, ..., R_{k-1})`` (``R_k`` follows), every data set in all
    ``k!`` orders. Returns, for every reachable rank-sum vector, its number of the
    ``(k!)^N`` tables, one table that reaches it ``(N, k)``, and ``S = sum_j R_j^2``."""
    perms = np.array(list(itertools.permutations(range(1, k + 1))))
    grid = (n * k + 1,) * (k - 1)
    count = np.zeros(grid)
    count[(0,) * (k - 1)] = 1
    witness = np.zeros((*grid, 0), int)  # the orders (indices into perms) of a table
    for _ in range(n):
        new, new_w = np.zeros(grid), np.zeros((*grid, witness.shape[-1] + 1), int)
        for i, p in enumerate(perms):
            src = tuple(slice(0, g - d) for g, d in zip(grid, p[:-1]))
            dst = tuple(slice(d, g) for g, d in zip(grid, p[:-1]))
            first = (new[dst] == 0) & (count[src] > 0)
            new[dst] += count[src]
            new_w[dst][first] = np.concatenate(
                [witness[src][first], np.full((int(first.sum()), 1), i)], axis=1
            )
        count, witness = new, new_w
    cells = np.nonzero(count)
    sums = np.stack(cells, axis=-1)
    sums = np.concatenate([sums, n * k * (k + 1) // 2 - sums.sum(-1, keepdims=True)], axis=-1)
    return count[cells], perms[witness[cells]].astype(float), np.sum(sums**2, axis=-1)


# Exact sizes (%) of the F and chi-square approximations at alpha = 0.05 on the Friedman
# null: issue 42.1's figures, recomputed by bench/friedman_level.py --exact.
ISSUE_42_SIZES = {(2, 8): (7.031, 7.031), (2, 11): (6.543, 6.543), (4, 8): (5.809, 4.204),
                  (3, 9): (5.695, 5.695), (3, 12): (5.801, 5.801)}  # fmt: skip


@pytest.mark.parametrize(("k", "n"), sorted(ISSUE_42_SIZES))
def test_f_method_holds_its_level_from_8_data_sets(k, n):
    # Issue 42.1: from 8 data sets method "f" was the plain F approximation, whose size
    # exceeds alpha (7.03% at k = 2, N = 8; 5.81% at k = 4, N = 8). One table per reachable
    # rank-sum vector, weighted by its number of tables: the level is exact.
    count, tables, s = _rank_sum_null(n, k)
    weight = count / math.factorial(k) ** n
    assert weight.sum() == pytest.approx(1.0, rel=1e-12)
    with pytest.warns(RuntimeWarning, match="Iman-Davenport F approximation"):
        r = jaxtests.friedman(tables, method="f")
    # the approximations' sizes are the issue's and the docstring's
    f_size, chi2_size = ISSUE_42_SIZES[k, n]
    assert 100 * weight[r.f_pvalue <= 0.05].sum() == pytest.approx(f_size, abs=6e-4)
    assert 100 * weight[r.chi2_pvalue <= 0.05].sum() == pytest.approx(chi2_size, abs=6e-4)
    # method "f" now reports the exact p-value P(S >= s), and holds its level
    tail = np.array([weight[s >= x].sum() for x in s])
    np.testing.assert_allclose(r.pvalue, tail, rtol=1e-12)
    assert r.permutation_method == "exact"
    for alpha in (0.05, 0.01):
        assert weight[r.pvalue <= alpha].sum() <= alpha


def test_f_method_warns_with_the_measured_size_where_it_cannot_count():
    # Issue 42.1: 7 learners hold the F's level from 9 data sets; at 6 the exact count is
    # too long (7!^5 arrangements), so the F p-value, with its measured size.
    scores = RNG.normal(size=(6, 7))
    with pytest.warns(RuntimeWarning, match=r"from N = 9 .*6\.9% at alpha = 0\.05.*too long"):
        r = jaxtests.friedman(scores, method="f")
    assert float(r.pvalue) == float(r.f_pvalue) and r.permutation_method is None
    assert jaxtests._friedman.f_min_datasets(3)[0] == 39  # the rule's table, as documented


def test_tables_that_rank_alike_get_the_exact_pvalue_not_zero():
    # Issue 29: every data set ranks alike, so F_F is infinite, and method="f" gave p = 0.
    issue = [[0.9, 0.8], [0.7, 0.6], [0.95, 0.9]]
    with pytest.warns(RuntimeWarning, match="Iman-Davenport F"):
        r = jaxtests.friedman(issue, method="f")
    assert np.isinf(float(r.f_statistic))
    assert float(r.pvalue) == float(r.f_pvalue) == _brute_force_pvalue(issue) == 0.25
    with pytest.warns(RuntimeWarning, match="Iman-Davenport F"):
        assert float(jaxtests.friedman([[1.0, 2.0], [3.0, 4.0]], method="f").pvalue) == 0.5
    # Closed form (k! / prod t!)^(1 - N), checked by brute force on 3 data sets ...
    tied = np.tile([0.9, 0.9, 0.7], (8, 1))  # 3 distinct orders of (1.5, 1.5, 3)
    assert _brute_force_pvalue(tied[:3]) == pytest.approx(3.0**-2, rel=1e-12)
    assert float(jaxtests.friedman(tied[:3], method="exact").pvalue) == pytest.approx(3.0**-2)
    # ... and in f_pvalue wherever method="f" reports the exact p-value (3 learners: below
    # 39 data sets), which is the same number, and from 39 data sets on, unwarned.
    with pytest.warns(RuntimeWarning, match="N = 8 data sets are too few"):
        r = jaxtests.friedman(np.stack([tied, np.tile([0.9, 0.8, 0.7], (8, 1))]), method="f")
    np.testing.assert_allclose(r.pvalue, [3.0**-7, 6.0**-7], rtol=1e-12)
    np.testing.assert_allclose(r.f_pvalue, r.pvalue, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = jaxtests.friedman(np.tile([0.9, 0.8, 0.7], (39, 1)), method="f")
    assert float(r.pvalue) == float(r.f_pvalue) == pytest.approx(6.0**-38, rel=1e-12)
    # Every score tied: chi2_F is 0/0 (NaN, as scipy's friedmanchisquare); exact p = 1.
    with pytest.warns(RuntimeWarning, match="too few"):
        r = jaxtests.friedman(np.ones((8, 3)), method="f")
    assert np.isnan(float(r.statistic)) and float(r.pvalue) == 1.0


def test_exact_agrees_with_brute_force_with_ties():
    scores = np.round(RNG.normal(size=(4, 3)), 0)  # ties within data sets
    exact = _brute_force_pvalue(scores)
    r = jaxtests.friedman(scores, method="exact")
    assert float(r.pvalue) == pytest.approx(exact, rel=1e-12) and r.permutation_method == "exact"
    assert float(r.statistic) == pytest.approx(stats.friedmanchisquare(*scores.T).statistic)
    with warnings.catch_warnings():  # method "chi2" does not warn about F
        warnings.simplefilter("error")
        jaxtests.friedman(scores)


def test_studentized_range_of_infinite_df_equals_scipys():
    # Issue 37: Nemenyi's quantile and tail without scipy.stats (0.3-0.5 s to import).
    # References: scipy.stats.studentized_range(k, df=inf); for k = 2 the range of two
    # normals is |N(0, 2)|: P(R > q) = erfc(q / 2) exactly.
    from scipy import special, stats

    from jaxtests._studentized import range_isf, range_sf

    q = np.array([0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0])
    np.testing.assert_allclose(range_sf(q, 2), special.erfc(q / 2), rtol=1e-13)
    for k in (3, 5, 10, 20, 50):
        ref = stats.studentized_range.sf(q[:6], k, np.inf)  # scipy's far tail loses digits
        np.testing.assert_allclose(range_sf(q[:6], k), ref, rtol=1e-12)
        for alpha in (0.1, 0.05, 0.01):
            ppf = stats.studentized_range.ppf(1 - alpha, k, np.inf)
            np.testing.assert_allclose(range_isf(alpha, k), ppf, rtol=1e-13)


def test_nemenyi_loads_no_scipy_stats():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, jaxtests; "
        "r = jaxtests.nemenyi(np.random.default_rng(0).normal(size=(12, 4))); "
        "print('scipy.stats' in sys.modules, r.groups is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(("k", "n"), [(3, 38), (4, 12), (5, 10)])
def test_exact_null_has_friedmans_moments(k, n):
    # Issue 42.1 extends the exact p-value to these sizes (k = 5 at N = 10 was past the old
    # enumeration's limit). Closed form (Friedman 1937; Kendall's W): under H0 without ties
    # E[chi2_F] = k - 1 and Var[chi2_F] = 2 (k - 1)(N - 1) / N.
    from jaxtests._friedman_exact import null_distribution

    row = tuple(range(2, 2 * k + 1, 2))  # doubled ranks 2, 4, ..., 2k
    values, tails, total = null_distribution((row,) * n)
    prob = -np.diff(np.append(tails, 0.0)) / total
    chi2 = 12 / (n * k * (k + 1)) * values / 4 - 3 * n * (k + 1)
    mean = np.sum(prob * chi2)
    assert mean == pytest.approx(k - 1, rel=1e-10)
    assert np.sum(prob * (chi2 - mean) ** 2) == pytest.approx(2 * (k - 1) * (n - 1) / n, rel=1e-10)


def test_exact_null_mean_with_ties():
    # With ties, each learner's rank sum R_j adds one uniformly placed entry of every row:
    # E[S] = k (sum_i v_i + (sum_i m_i)^2), v_i and m_i the population variance and mean of
    # row i (a closed form of the within-row permutation null).
    from jaxtests._friedman_exact import null_distribution

    rows = ((3, 3, 6, 8, 10), (2, 4, 8, 8, 8), (3, 3, 7, 7, 10), (2, 4, 6, 8, 10)) * 2
    values, tails, total = null_distribution(rows)
    prob = -np.diff(np.append(tails, 0.0)) / total
    r = np.array(rows, float)
    closed = 5 * (np.sum(r.var(axis=1)) + np.sum(r.mean(axis=1)) ** 2)
    assert np.sum(prob * values) == pytest.approx(closed, rel=1e-12)


def _tied_tables(n_tables, n, k, seed):
    return np.random.default_rng(seed).integers(0, 3, size=(n_tables, n, k)).astype(float)


def test_exact_batch_counts_shared_data_sets_once(monkeypatch):
    # Issue 42.3: a batch of tied tables was enumerated table by table. Now each distinct
    # multiset of data sets is counted once and tables share the counts of their common
    # data sets: fewer counting steps than one table at a time, the same p-values.
    from jaxtests import _friedman_exact as fe

    steps = []
    step = fe._step
    monkeypatch.setattr(fe, "_step", lambda *a: steps.append(1) or step(*a))
    scores = _tied_tables(200, 5, 4, seed=42)
    fe._NULLS.clear()
    batch = jaxtests.friedman(scores, method="exact")
    batched = len(steps)
    looped = []
    for table in scores:
        fe._NULLS.clear()
        looped.append(float(jaxtests.friedman(table, method="exact").pvalue))
    assert batched < (len(steps) - batched) / 3
    np.testing.assert_array_equal(batch.pvalue, looped)


def test_exact_batch_compiles_one_program():
    # Issue 42.3: the exact p-values of a batch are counted on the host; the batch compiles
    # the ranking program once, and another batch of that shape compiles nothing.
    from jaxtests._monitoring import CompileCounter

    with CompileCounter() as first:
        jaxtests.friedman(_tied_tables(200, 5, 4, seed=1), method="exact")
    with CompileCounter() as second:
        jaxtests.friedman(_tied_tables(200, 5, 4, seed=2), method="exact")
    assert first.compiles <= 1 and (second.traces, second.compiles) == (0, 0)


@pytest.mark.parametrize("n", [1, 4, 64, 65, 300])
def test_average_ranks_on_the_host_equal_the_jitted_kernel_and_rankdata(n):
    # Both kernels against scipy.stats.rankdata(method="average") with many ties, batched,
    # and with a shape bucket's mask (the jitted kernel ranks the kept entries only).
    import jax
    from jaxtests.kernels import statistics as kstatistics

    x = np.floor(RNG.normal(size=(2, 3, n)) * 2)
    ranks, ties = kstatistics.average_ranks(x, xp=np)
    np.testing.assert_array_equal(ranks, stats.rankdata(x, axis=-1))
    _, counts = zip(*(np.unique(row, return_counts=True) for row in x.reshape(-1, n)))
    ref = np.array([np.sum(c**3 - c) for c in counts], float).reshape(2, 3)
    np.testing.assert_array_equal(ties, ref)
    where = np.arange(n) < max(n - 3, 1)
    host = kstatistics.average_ranks(x, where, xp=np)
    traced = jax.jit(kstatistics.average_ranks)(x, where)
    np.testing.assert_allclose(host[0][..., where], np.asarray(traced[0])[..., where], rtol=1e-12)
    np.testing.assert_allclose(host[1], traced[1], rtol=1e-12)
    np.testing.assert_array_equal(host[0][..., where], stats.rankdata(x[..., where], axis=-1))
