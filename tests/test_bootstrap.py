"""bootstrap and bootstrap_test against scipy.stats.bootstrap (scipy 1.17): the BCa jackknife
acceleration to 1e-12 (scipy's private ``_bca_interval``), intervals within Monte Carlo error,
the fused AUC/measure statistics against callables on the same resamples, the sorted-layout AUC
kernel against an all-pairs count, batch invariance, degenerate data and every validation
message."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from jaxtests.kernels import bootstrap as kboot
from jaxtests.kernels import measures as kmeasures
from scipy.stats._resampling import _bca_interval

from jaxtests import _bootstrap_draws
from jaxtests._bootstrap import bootstrap, bootstrap_test
from jaxtests._bootstrap_draws import _auc_dtype, _auc_layout

N_MC = 4000  # resamples of the interval comparisons

# A program per statistic and data shape: the tests share the data sizes of the interval
# comparisons (a sample of 40, unpaired samples of 25 and 15, clf_data's 80 instances), of
# the degenerate cases (10 observations) and of the paired bootstrap tests (30 pairs).


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def _np_auc(y, s, axis=-1):
    """Vectorised Mann-Whitney AUC (ties 1/2) along ``axis``, for scipy's bootstrap."""
    r = scipy.stats.rankdata(s, axis=axis)
    pos = y > 0
    n_pos = pos.sum(axis=axis)
    n_neg = y.shape[axis] - n_pos
    return ((r * pos).sum(axis=axis) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _auc_diff_jnp(y, a, b):
    """The AUC difference as a callable statistic (one function object: compiled once)."""
    return kmeasures.roc_auc(y, a) - kmeasures.roc_auc(y, b)


def _scipy_accel(data, statistic, paired):
    """scipy's BCa acceleration (the third output of ``_bca_interval``)."""
    fn = statistic
    if paired:  # scipy's paired=True: the indices of the pairs as one sample
        samples = data

        def fn(i, axis=-1):
            return statistic(*[d[..., i] for d in samples], axis=axis)

        data = (np.arange(data[0].shape[-1]),)
    theta_b = np.array([-1e300, 1e300])  # only z0 reads it (here 0), not the acceleration
    return float(_bca_interval(data, fn, -1, 0.025, theta_b, None, np)[2])


@pytest.fixture(scope="module")
def clf_data():
    rng = np.random.default_rng(7)
    n = 80
    y = np.where(rng.random(n) < 0.4, 1, -1)
    a = np.round(rng.normal(size=n) + 0.9 * (y > 0), 1)  # rounded: tied scores
    b = np.round(rng.normal(size=n) + 0.5 * (y > 0) + 0.3 * a, 1)
    return y, a, b


# ----------------------------------------------------------------------------------------
# BCa acceleration: equal to scipy's to 1e-12
# ----------------------------------------------------------------------------------------


def test_acceleration_mean_equals_scipy():
    x = np.random.default_rng(0).exponential(size=40)
    r = bootstrap((x,), "mean", n_resamples=50, key=0)
    np.testing.assert_allclose(r.acceleration, _scipy_accel((x,), _mean, False), rtol=1e-12)


def test_acceleration_unpaired_difference_equals_scipy():
    rng = np.random.default_rng(1)
    a, b = rng.exponential(size=25), rng.gamma(2.0, size=15)

    def diff(a, b, axis=-1):
        return a.mean(axis) - b.mean(axis)

    r = bootstrap((a, b), "mean_difference", paired=False, n_resamples=50, key=0)
    np.testing.assert_allclose(r.acceleration, _scipy_accel((a, b), diff, False), rtol=1e-12)


def test_acceleration_paired_auc_difference_equals_scipy(clf_data):
    y, a, b = clf_data

    def diff(y, a, b, axis=-1):
        return _np_auc(y, a, axis) - _np_auc(y, b, axis)

    r = bootstrap((y, a, b), "roc_auc_difference", n_resamples=50, key=0)
    np.testing.assert_allclose(r.acceleration, _scipy_accel((y, a, b), diff, True), rtol=1e-12)
    # the callable path's jackknife (leave-one-out by gathering) agrees too
    r2 = bootstrap((y, a, b), _auc_diff_jnp, n_resamples=50, key=0)
    np.testing.assert_allclose(r2.acceleration, r.acceleration, rtol=1e-12)


def test_acceleration_accuracy_difference_equals_scipy(clf_data):
    y, a, b = clf_data

    def diff(y, a, b, axis=-1):
        return np.mean((a > 0) == (y > 0), axis=axis) - np.mean((b > 0) == (y > 0), axis=axis)

    r = bootstrap((y, a, b), "accuracy_difference", n_resamples=50, key=0)
    np.testing.assert_allclose(r.acceleration, _scipy_accel((y, a, b), diff, True), rtol=1e-12)


# ----------------------------------------------------------------------------------------
# Intervals within Monte Carlo error of scipy's
# ----------------------------------------------------------------------------------------

# 2.5% quantile of B = 4000 resamples: sd ~ 0.027 se each, 0.04 se for the difference of two
# independent runs; 0.2 se is 5 sd (failure budget ~1e-6 per endpoint, 24 endpoints).
TOL_SE = 0.2


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_intervals_match_scipy(method, clf_data):
    rng = np.random.default_rng(3)
    x = rng.lognormal(size=40)
    y, a, b = clf_data
    cases = [
        ((x,), "mean", _mean, True),
        ((x[:25], x[25:] * 2), "mean_difference", lambda a, b, axis=-1: _mean(a) - _mean(b), False),
        ((y, a), "roc_auc", _np_auc, True),
        (
            (y, a, b),
            "roc_auc_difference",
            lambda y, a, b, axis=-1: _np_auc(y, a, axis) - _np_auc(y, b, axis),
            True,
        ),
    ]
    for data, name, fn, paired in cases:
        r = bootstrap(data, name, paired=paired, method=method, n_resamples=N_MC, key=1)
        s = scipy.stats.bootstrap(
            data, fn, paired=paired, method=method, n_resamples=N_MC, rng=2, batch=1000
        )
        se = float(s.standard_error)
        assert abs(r.confidence_interval.low - s.confidence_interval.low) < TOL_SE * se, name
        assert abs(r.confidence_interval.high - s.confidence_interval.high) < TOL_SE * se, name
        # standard error of a standard error: about se / sqrt(2 B) = 0.011 se
        assert abs(r.standard_error - se) < 0.08 * se, name


def test_one_sided_intervals_open_as_scipy():
    x = np.arange(10.0)
    lo = bootstrap((x,), "mean", alternative="greater", n_resamples=200, key=0)
    hi = bootstrap((x,), "mean", alternative="less", n_resamples=200, key=0)
    assert np.isinf(lo.confidence_interval.high) and lo.confidence_interval.low < 4.5
    assert np.isinf(hi.confidence_interval.low) and hi.confidence_interval.high > 4.5


def test_bca_counts_resamples_tied_up_to_rounding_as_ties():
    # Issue 42.2: z0 counted resamples tied with theta-hat by exact float equality, but a
    # resampled mean equal to the observed one in exact arithmetic (the same total in
    # another order) lands an ulp to either side. Values in tenths and n = 40: every
    # resampled sum is an exact number of tenths, so rint(400 t*) is the mean in exact
    # arithmetic (resampled means differ by at least 1/400, far above any rounding).
    from scipy import special

    x = np.random.default_rng(1).integers(0, 10, size=40) / 10
    r = bootstrap((x,), "mean", n_resamples=999, key=1, return_distribution=True)
    dist, theta = np.asarray(r.bootstrap_distribution), float(r.statistic)
    exact, exact_theta = np.rint(400 * dist), np.rint(400 * theta)
    ties = int(np.sum(exact == exact_theta))
    assert ties >= 20 and np.sum(dist == theta) < ties  # ties that a float comparison misses
    # z0 of the exact-arithmetic comparison (Efron & Tibshirani 14.3, ties counted half)
    below, at_most = np.sum(exact < exact_theta), np.sum(exact <= exact_theta)
    assert float(r.bias_correction) == special.ndtri((below + at_most) / (2 * dist.size))


def test_coverage_of_the_mean():
    """95% intervals of a normal mean (n = 30) cover it in 200 data sets: 0.95 +- 3 sd."""
    rng = np.random.default_rng(11)
    hits = {"percentile": 0, "BCa": 0}
    for i in range(200):
        x = rng.normal(size=30)
        for m in hits:
            ci = bootstrap((x,), "mean", method=m, n_resamples=999, key=i).confidence_interval
            hits[m] += ci.low <= 0 <= ci.high
    # binomial sd sqrt(.95 .05 / 200) = 0.015; the bootstrap of n = 30 undercovers slightly
    for m, h in hits.items():
        assert 0.95 - 0.06 <= h / 200 <= 0.95 + 0.045, (m, h)


def test_coverage_of_a_zero_auc_difference():
    """Exchangeable scores (true AUC difference 0), n = 100, 150 data sets: the BCa and DeLong
    95% intervals cover 0 at about the nominal rate (binomial sd 0.018; bounds ~3 sd)."""
    from jaxtests._delong import delong_test

    rng = np.random.default_rng(12)
    boot = delong = 0
    for i in range(150):
        y = np.where(rng.random(100) < 0.5, 1, -1)
        z = rng.normal(size=100) + 0.8 * y  # shared signal: correlated scores
        a, b = z + rng.normal(size=100), z + rng.normal(size=100)
        ci = bootstrap((y, a, b), "roc_auc_difference", n_resamples=999, key=i)
        boot += ci.confidence_interval.low <= 0 <= ci.confidence_interval.high
        d = delong_test(y, a, b).confidence_interval
        delong += d.low <= 0 <= d.high
    assert 0.89 <= boot / 150 <= 1.0, boot
    assert 0.89 <= delong / 150 <= 1.0, delong


# ----------------------------------------------------------------------------------------
# Fused statistics, draws, batches
# ----------------------------------------------------------------------------------------


def _np_weighted_auc(y, s, c):
    """Mann-Whitney AUC of instances weighted by counts ``c``, ties 1/2: all pairs, O(n^2)."""
    pos, neg = y > 0, y <= 0
    diff = s[pos][:, None] - s[neg][None, :]
    w = c[pos][:, None] * c[neg][None, :]
    wins = np.sum(w * ((diff > 0) + 0.5 * (diff == 0)))
    den = c[pos].sum() * c[neg].sum()
    return wins / den if den > 0 else np.nan


@pytest.mark.parametrize("n", [2, 7, 64, 65, 300, 5000])
def test_layout_auc_equals_all_pairs(n):
    """The sorted-layout AUC of resample counts (running vectors over 64 rows, recursive
    column totals beyond 4096 instances, tie groups) against the all-pairs count."""
    rng = np.random.default_rng(n)
    y = np.where(rng.random(n) < 0.4, 1, -1)
    y[:2] = (1, -1)
    for s in (rng.normal(size=n), np.round(rng.normal(size=n), 1), np.zeros(n)):
        lay = _auc_layout(y, s)
        for c in (rng.multinomial(n, np.full(n, 1 / n)), np.ones(n, int), (y > 0) * 2):
            cj = jnp.asarray(np.r_[c, 0].astype(np.int32))
            dtype = _auc_dtype(n)
            got = float(kboot.auc_finish(*kboot.auc_parts(cj, lay, dtype), int(c.sum()), dtype))
            np.testing.assert_allclose(got, _np_weighted_auc(y, s, c), rtol=1e-14, equal_nan=True)


def test_ordered_pairs_equals_a_running_sum():
    rng = np.random.default_rng(1)
    for n, k in ((40, 8), (4096, 64), (70_000, 64)):
        p, q = rng.integers(0, 3, size=(2, n))
        want = int(np.sum(p * (np.cumsum(q) - q)))
        m = -(-n // k)
        lay = [jnp.asarray(np.pad(x, (0, k * m - n)).reshape(m, k).T) for x in (p, q)]
        assert int(kboot.ordered_pairs(*lay, jnp.int64)) == want


def test_fused_auc_equals_callable_on_the_same_resamples(clf_data):
    """The counts path and the gather path read the same draws: the same AUCs to rounding."""
    y, a, b = clf_data
    fused = bootstrap(
        (y, a, b), "roc_auc_difference", n_resamples=300, key=5, return_distribution=True
    )
    called = bootstrap((y, a, b), _auc_diff_jnp, n_resamples=300, key=5, return_distribution=True)
    np.testing.assert_allclose(
        fused.bootstrap_distribution, called.bootstrap_distribution, rtol=0, atol=1e-14
    )


@pytest.mark.parametrize("name", ["precision", "f1"])  # 0/0 and a composite; one path for all
def test_fused_measures_equal_callables(name, clf_data):
    y, a, _ = clf_data

    def fn(y, s):
        c = kmeasures.confusion_counts(y, s)
        return getattr(kmeasures, name if name != "f1" else "f_beta")(c)

    kw = dict(n_resamples=64, key=2, return_distribution=True, method="percentile")
    fused = bootstrap((y, a), name, **kw).bootstrap_distribution
    called = bootstrap((y, a), fn, **kw).bootstrap_distribution
    np.testing.assert_allclose(fused, called, rtol=1e-14, equal_nan=True)


def test_same_key_same_result_for_any_batch_size_and_threads(clf_data, monkeypatch):
    y, a, b = clf_data
    runs = []
    for bs, threads in ((None, 2), (1, 1), (1, 3), (300, 2)):
        monkeypatch.setattr(_bootstrap_draws, "host_threads", lambda stat, samples, t=threads: t)
        runs.append(
            bootstrap(
                (y, a, b),
                "roc_auc_difference",
                n_resamples=700,
                key=9,
                batch_size=bs,
                return_distribution=True,
            )
        )
    for r in runs[1:]:
        np.testing.assert_array_equal(r.bootstrap_distribution, runs[0].bootstrap_distribution)
        assert r.confidence_interval == runs[0].confidence_interval
    other = bootstrap((y, a, b), "roc_auc_difference", n_resamples=700, key=10)
    assert other.confidence_interval != runs[0].confidence_interval


def test_threads_compute_in_float64_when_the_callers_jax_is_float32(clf_data, monkeypatch):
    # The suite runs with x64 on; a user's process has it off, and a worker thread does not
    # inherit the scoped float64 of the calling thread (a float32 trace gave NaN AUCs).
    y, a, b = clf_data
    kw = dict(n_resamples=700, key=9, batch_size=1, return_distribution=True)
    monkeypatch.setattr(_bootstrap_draws, "host_threads", lambda stat, samples: 1)
    one = bootstrap((y, a, b), "roc_auc_difference", **kw).bootstrap_distribution
    monkeypatch.setattr(_bootstrap_draws, "host_threads", lambda stat, samples: 2)
    jax.config.update("jax_enable_x64", False)
    try:
        two = bootstrap((y, a, b), "roc_auc_difference", **kw).bootstrap_distribution
    finally:
        jax.config.update("jax_enable_x64", True)
    np.testing.assert_array_equal(two, one)


def test_host_threads_only_for_built_in_statistics_and_capped_by_the_environment(monkeypatch):
    x = (jnp.arange(4.0),)
    cores = lambda pid: {0, 1, 2}  # noqa: E731
    monkeypatch.setattr(_bootstrap_draws.os, "sched_getaffinity", cores, raising=False)
    monkeypatch.delenv("JAXTESTS_HOST_THREADS", raising=False)
    assert _bootstrap_draws.host_threads("mean", x) == 3
    assert _bootstrap_draws.host_threads(jnp.mean, x) == 1  # a callable may be any program
    monkeypatch.setenv("JAXTESTS_HOST_THREADS", "2")
    assert _bootstrap_draws.host_threads("mean", x) == 2
    monkeypatch.setenv("JAXTESTS_HOST_THREADS", "0")
    with pytest.raises(ValueError, match="JAXTESTS_HOST_THREADS='0'"):
        _bootstrap_draws.host_threads("mean", x)


def test_an_error_in_a_threaded_dispatch_is_raised_and_stops_the_rest(monkeypatch):
    real = _bootstrap_draws.resample_blocks
    calls = []

    def failing(key, first, *args):
        calls.append(int(first))
        if len(calls) == 3:
            raise FloatingPointError("dispatch 3")
        return real(key, first, *args)

    monkeypatch.setattr(_bootstrap_draws, "host_threads", lambda stat, samples: 2)
    monkeypatch.setattr(_bootstrap_draws, "resample_blocks", failing)
    x = np.arange(10.0)
    with pytest.raises(FloatingPointError, match="dispatch 3"):
        bootstrap((x,), "mean", n_resamples=10_000, batch_size=1, key=0, method="percentile")
    # 40 dispatches of 256 draws; at most four are queued at a time
    assert len(calls) < 10


def test_progress_reports_the_batch_and_changes_no_bit(monkeypatch):
    # The engine's loop (issue 40): chunks of dispatches, a report after each; one dispatch
    # per chunk here (256 draws of 20 observations, batch_size 256), two tests in a batch.
    from jaxtests import _engine

    x = np.random.default_rng(4).normal(size=(2, 20))
    kw = dict(n_resamples=600, key=0, batch_size=256, return_distribution=True)
    monkeypatch.setattr(_bootstrap_draws, "host_threads", lambda stat, samples: 2)
    one = bootstrap((x,), "mean", **kw)
    seen = []
    monkeypatch.setattr(_engine, "_CHUNK_SECONDS", 1e-9)
    r = bootstrap((x,), "mean", **kw, progress=lambda done, total: seen.append((done, total)))
    np.testing.assert_array_equal(r.bootstrap_distribution, one.bootstrap_distribution)
    assert seen == [(t + done, 1200) for t in (0, 600) for done in (0, 256, 512, 600)]


def test_an_interrupt_between_chunks_stops_the_bootstrap(monkeypatch):
    # Ctrl-C is seen between chunks (as KeyboardInterrupt from a progress report here);
    # the threads' pool is shut down and the next call runs.
    x = np.arange(10.0)
    monkeypatch.setattr(_bootstrap_draws, "host_threads", lambda stat, samples: 2)
    reports = []

    def interrupt(done, total):
        reports.append(done)
        if len(reports) == 2:
            raise KeyboardInterrupt

    kw = dict(n_resamples=10_000, batch_size=1, key=0, method="percentile")
    with pytest.raises(KeyboardInterrupt):
        bootstrap((x,), "mean", **kw, progress=interrupt)
    assert reports == [0, 256]  # the first chunk: one dispatch
    assert bootstrap((x,), "mean", **kw, progress=False).n_resamples == 10_000


def test_batched_data_equals_looped():
    x = np.random.default_rng(4).normal(size=(3, 20))
    r = bootstrap((x,), "mean", n_resamples=300, key=0)
    assert r.confidence_interval.low.shape == (3,)
    for i in range(3):
        ri = bootstrap((x[i],), "mean", n_resamples=300, key=0)
        assert r.confidence_interval.low[i] == ri.confidence_interval.low
        assert r.standard_error[i] == ri.standard_error
    rt = bootstrap((x.T,), "mean", n_resamples=300, key=0, axis=0)
    np.testing.assert_array_equal(rt.confidence_interval.high, r.confidence_interval.high)


def test_results_are_numpy_float64():
    r = bootstrap((np.arange(10.0),), "mean", n_resamples=20, key=0, return_distribution=True)
    for v in (r.confidence_interval.low, r.standard_error, r.statistic, r.acceleration):
        assert isinstance(v, np.float64)
    assert isinstance(r.bootstrap_distribution, np.ndarray)
    assert r.bootstrap_distribution.dtype == np.float64
    assert r.seed == 0
    r.to_json()


# ----------------------------------------------------------------------------------------
# The paired bootstrap test
# ----------------------------------------------------------------------------------------


def test_bootstrap_test_counts_the_shifted_distribution(clf_data):
    y, a, b = clf_data
    r = bootstrap_test(
        (y, a, b), "roc_auc_difference", n_resamples=999, key=3, return_distribution=True
    )
    d, t = r.bootstrap_distribution, float(r.statistic)
    # Berg-Kirkpatrick et al. (2012): the shifted distribution d* - t as the null
    ge, le = np.sum(d - t >= t), np.sum(d - t <= t)
    expected = min(1.0, 2 * min((ge + 1) / 1000, (le + 1) / 1000))
    np.testing.assert_allclose(r.pvalue, expected, rtol=1e-15)
    g = bootstrap_test(
        (y, a, b), "roc_auc_difference", n_resamples=999, key=3, alternative="greater"
    )
    np.testing.assert_allclose(g.pvalue, (ge + 1) / 1000, rtol=1e-15)
    ci = bootstrap((y, a, b), "roc_auc_difference", n_resamples=999, key=3).confidence_interval
    assert r.confidence_interval == ci


def test_bootstrap_test_identical_systems():
    a = np.random.default_rng(0).normal(size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # BCa of a constant distribution
        r = bootstrap_test((a, a), n_resamples=199, key=0)
    assert r.statistic == 0 and r.pvalue == 1.0


def test_bootstrap_test_clear_difference():
    rng = np.random.default_rng(0)
    # paired, 30 as above: a mean difference near 2, se ~0.26; no resample reaches twice it
    a, b = rng.normal(2.0, 1, 30), rng.normal(0.0, 1, 30)
    r = bootstrap_test((a, b), n_resamples=1999, key=0, alternative="greater")
    assert r.pvalue == 1 / 2000 and r.n_extreme == 0


# ----------------------------------------------------------------------------------------
# Degenerate data and validation
# ----------------------------------------------------------------------------------------


def test_means_near_the_float64_limit_scale_exactly():
    # Issue 43.3: values near 1e308 summed to inf and BCa blamed "constant data". A mean is
    # homogeneous of degree 1, so the run on x 2^1020 is the run on x scaled by 2^1020,
    # bit for bit (powers of two are exact); the small run is checked against scipy above.
    x = np.random.default_rng(5).uniform(0.5, 1.5, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no "cannot be calculated"
        big = bootstrap((x * 2.0**1020,), "mean", n_resamples=99, key=0)
        pair = bootstrap((x * 2.0**1020, -x * 2.0**1019), "mean_difference", n_resamples=99, key=0)
    small = bootstrap((x,), "mean", n_resamples=99, key=0)
    small_pair = bootstrap((x, -x / 2), "mean_difference", n_resamples=99, key=0)
    for b, s in ((big, small), (pair, small_pair)):
        ci, ref = b.confidence_interval, s.confidence_interval
        assert (ci.low, ci.high) == (ref.low * 2.0**1020, ref.high * 2.0**1020)
        assert b.statistic == s.statistic * 2.0**1020
        assert b.standard_error == s.standard_error * 2.0**1020
        assert b.acceleration == s.acceleration and b.bias_correction == s.bias_correction


def test_a_statistic_past_the_float64_range_says_so_not_constant():
    x = np.random.default_rng(5).uniform(0.5, 1.5, 10) * 1e308
    with pytest.warns(RuntimeWarning, match="overflowed to \\+-inf on 100 of 100") as seen:
        bootstrap((x,), lambda v, axis=-1: jnp.sum(v, axis=axis), n_resamples=99, key=0)
    assert not any("constant" in str(w.message) for w in seen)


def test_bca_blames_constant_data_only_when_it_is():
    # max with its top value twice: every leave-one-out max is 9 (a = 0/0), the resamples vary
    x = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 9])
    with pytest.warns(RuntimeWarning, match="jackknife acceleration is 0/0") as seen:
        r = bootstrap((x,), lambda v, axis=-1: jnp.max(v, axis=axis), n_resamples=99, key=0)
    assert np.isnan(r.confidence_interval.low)
    assert not any("constant" in str(w.message) for w in seen)
    with pytest.warns(RuntimeWarning, match="every resample gives the same statistic"):
        bootstrap((np.full(10, 3.0),), "mean", n_resamples=99, key=0)


def test_constant_data_bca_is_nan_with_a_warning_as_scipy():
    x = np.full(10, 3.0)
    with pytest.warns(RuntimeWarning, match="BCa confidence interval cannot be calculated"):
        r = bootstrap((x,), "mean", n_resamples=99, key=0)
    assert np.isnan(r.confidence_interval.low) and np.isnan(r.confidence_interval.high)
    p = bootstrap((x,), "mean", method="percentile", n_resamples=99, key=0)
    assert p.confidence_interval == (3.0, 3.0) and p.standard_error == 0


def test_undefined_statistic_on_resamples_warns():
    y = np.array([1, -1, -1, -1, -1, -1])
    s = np.arange(6.0)
    with pytest.warns(RuntimeWarning, match="undefined"):
        r = bootstrap((y, s), "roc_auc", method="percentile", n_resamples=200, key=0)
    assert np.isnan(r.confidence_interval.low)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(data=np.arange(5.0)), TypeError, "`data` must be a sequence"),
        (dict(data=()), ValueError, "at least one sample"),
        (dict(data=([1.0],)), ValueError, "at least 2"),
        (dict(data=([1.0, np.nan],)), ValueError, "NaN at index 1"),
        (dict(data=(["a", "b"],)), TypeError, "real numbers"),
        (dict(statistic="median"), ValueError, "`statistic` must be one of"),
        (dict(statistic=3), TypeError, "`statistic` must be a callable"),
        (dict(statistic="mean_difference"), ValueError, "takes 2 sample"),
        (
            dict(data=([1, -1, 1], [0.1, 0.2, 0.3]), statistic="roc_auc", paired=False),
            ValueError,
            "needs `paired=True`",
        ),
        (dict(data=([1, 2, 1], [0.1, 0.2, 0.3]), statistic="roc_auc"), ValueError, "binary"),
        (
            dict(data=([1.0, 2.0], [1.0, 2.0, 3.0]), statistic="mean_difference"),
            ValueError,
            "same number of observations",
        ),
        (dict(n_resamples=0), ValueError, "`n_resamples` must be at least 1"),
        (dict(n_resamples=10**9), ValueError, "exceeds"),
        (dict(n_resamples=10.0), TypeError, "`n_resamples` must be an int"),
        (dict(confidence_level=1.5), ValueError, "`confidence_level`"),
        (dict(method="bootstrap-t"), ValueError, "`method`"),
        (dict(alternative="bigger"), ValueError, "`alternative`"),
        (dict(batch_size=0), ValueError, "`batch_size`"),
        (dict(key=-1), ValueError, "`key`"),
        (dict(axis=2), ValueError, "`axis`"),
        (dict(paired="yes"), TypeError, "`paired` must be a bool"),
        (dict(return_distribution=1), TypeError, "`return_distribution`"),
        (dict(progress="yes"), TypeError, "`progress` must be a callable"),
    ],
)
def test_validation_messages(kwargs, error, match):
    args = dict(data=(np.arange(5.0),), statistic="mean", n_resamples=10, key=0)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        bootstrap(args.pop("data"), args.pop("statistic"), **args)


def test_bootstrap_test_refuses_a_non_difference():
    with pytest.raises(ValueError, match="not a difference"):
        bootstrap_test((np.arange(5.0),), "mean", n_resamples=10, key=0)


def test_callable_must_be_traceable():
    with pytest.raises(Exception):  # noqa: B017 - jax's own tracer error, not ours
        bootstrap((np.arange(5.0),), lambda x: float(np.mean(x)), n_resamples=10, key=0)
    # a jnp statistic is fine
    r = bootstrap((np.arange(5.0),), lambda x: jnp.median(x), n_resamples=20, key=0)
    assert np.isfinite(r.standard_error)


def test_a_batch_past_the_resample_limit_is_refused_at_once():
    # Issue 43.4: 4 tests of 10^8 resamples each failed only after 215 s. In a subprocess:
    # before, this ran for minutes.
    import subprocess
    import sys

    code = (
        "import numpy as np, jaxtests\n"
        "try:\n"
        "    jaxtests.bootstrap((np.ones((4, 5)),), 'mean', n_resamples=10**8, key=0)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith(
        "`data` holds a batch of 4 tests of `n_resamples`=100,000,000: 400,000,000 resamples in "
        "all, more than 100,000,000"
    ), out


def test_fresh_callables_leave_nothing_behind():
    # Issue 43.5: a new lambda per call grew the process by 7.6 MB a call without limit (jit
    # kept every static callable's programs). Now a bounded table holds the last few; the
    # older callables, and their programs, are freed. 12 calls: 4 past the bound.
    import gc
    import weakref

    x = np.random.default_rng(0).normal(size=10)
    refs = []
    for k in range(_bootstrap_draws.MAX_CALLABLE_PROGRAMS + 4):
        f = eval(f"lambda v, axis=-1: jnp.mean(v, axis=axis) + {k}")  # a new callable each
        r = bootstrap((x,), f, n_resamples=9, key=0, method="percentile")
        assert r.statistic == pytest.approx(np.mean(x) + k, rel=1e-15)
        refs.append(weakref.ref(f))
        del f
    gc.collect()
    assert len(_bootstrap_draws._CALLABLE_PROGRAMS) == _bootstrap_draws.MAX_CALLABLE_PROGRAMS
    assert [r() is None for r in refs] == [True] * 4 + [False] * 8


def test_normal_cdf_and_quantile_match_scipy_special():
    # BCa's ndtr/ndtri come from the standard library (no scipy.special import on a
    # bootstrap's first call); the reference is scipy.special, over the range BCa reaches.
    import scipy.special

    from jaxtests._bootstrap import _ndtr, _ndtri

    x = np.concatenate([np.linspace(-8, 8, 4001), [-1.0, -0.7071067811865476, 0.0, 1e-300]])
    got = np.array([_ndtr(v) for v in x])
    np.testing.assert_allclose(got, scipy.special.ndtr(x), rtol=5e-15, atol=0)
    assert [_ndtr(v) for v in (-np.inf, np.inf)] == [0.0, 1.0] and np.isnan(_ndtr(np.nan))
    p = np.concatenate([np.linspace(1e-6, 1 - 1e-6, 4001), 10.0 ** -np.arange(1, 300, 7)])
    got = np.array([_ndtri(v) for v in p])
    np.testing.assert_allclose(got, scipy.special.ndtri(p), rtol=5e-15, atol=1e-15)
    edge = [_ndtri(v) for v in (0.0, 1.0, np.float64(0.0), np.nan, -0.5, 1.5)]
    np.testing.assert_array_equal(edge, scipy.special.ndtri([0.0, 1.0, 0.0, np.nan, -0.5, 1.5]))
