"""Every option of signflip_test, permutation_test and swap_test is honoured or refused.

Also the engine's limits (huge ``n_resamples`` / ``batch_size``), progress in
its three spellings, and bit-identical results whatever the host-level
chunking.
"""

import io
import itertools
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from tqdm import tqdm

from jaxtests import _engine as P
from jaxtests._permutation import permutation_test, signflip_test, swap_test
from jaxtests._progress import LongRunWarning, as_progress

D6 = [0.5, 1.2, 0.3, 0.9, -0.1, 0.7]
D30 = np.random.default_rng(0).normal(0.2, 1, 30)
X, Y = [2.0, 5.0, 1.0, 4.0], [6.0, 3.0, 7.0]
YT = [1, 1, 0, 0, 1, 0, 1, 0]
PA = [1, 1, 0, 1, 1, 0, 0, 0]
PB = [0, 1, 0, 1, 0, 0, 1, 1]
TERNARY = [1.0, 0.0, -1.0, 1.0, 1.0, 1.0]

CALLS = {
    "signflip": lambda **kw: signflip_test(D6, **kw),
    "permutation": lambda **kw: permutation_test(X, Y, **kw),
    "swap": lambda **kw: swap_test(YT, PA, PB, **kw),
}

# (option, bad value, exception, message) refused alike by all three tests.
COMMON = [
    ("key", "not a key", TypeError, "`key` must be an int seed or a JAX key"),
    ("key", -1, ValueError, r"`key` must be an int seed in \[0, 2\*\*63\)"),
    ("key", True, TypeError, "`key` must be an int seed or a JAX key, got a bool"),
    ("key", np.zeros(3), TypeError, "`key` must be an int seed or a JAX key"),
    ("alternative", "bigger", ValueError, "`alternative` must be one of"),
    ("alternative", None, ValueError, "`alternative` must be one of"),
    ("n_resamples", 1e5, TypeError, "`n_resamples` must be an int, got float"),
    ("n_resamples", True, TypeError, "`n_resamples` must be an int, got bool"),
    ("n_resamples", 0, ValueError, "`n_resamples` must be at least 1"),
    ("n_resamples", "1000", TypeError, "`n_resamples` must be an int"),
    ("method", "permutation", ValueError, "`method` must be one of"),
    ("method", "binomial", ValueError, "applies to sign-flip tests only|binomial"),
    ("batch_size", -5, ValueError, "`batch_size` must be at least 1"),
    ("batch_size", 0, ValueError, "`batch_size` must be at least 1"),
    ("batch_size", 2.5, TypeError, "`batch_size` must be an int"),
    ("batch_size", False, TypeError, "`batch_size` must be an int, got bool"),
    ("sequential", 0, ValueError, "`sequential` must be at least 1"),
    ("sequential", 5.0, TypeError, "`sequential` must be an int"),
    ("sequential", True, TypeError, "`sequential` must be an int, got bool"),
    ("return_null", 1, TypeError, "`return_null` must be a bool"),
    ("return_null", "yes", TypeError, "`return_null` must be a bool"),
    ("progress", 1, TypeError, "`progress` must be a callable"),
    ("progress", "bar", TypeError, "`progress` must be a callable"),
]


@pytest.mark.parametrize("test", sorted(CALLS))
@pytest.mark.parametrize(("option", "value", "exc", "match"), COMMON)
def test_every_common_option_is_checked_on_every_path(test, option, value, exc, match):
    # Small inputs: "auto" would pick the exact path, where `key` used to go unchecked.
    if test == "signflip" and option == "method" and value == "binomial":
        pytest.skip("binomial is a sign-flip method (see test_binomial_refuses_unused_options)")
    with pytest.raises(exc, match=match):
        CALLS[test](**{option: value})


@pytest.mark.parametrize("method", ["auto", "exact", "binomial", "monte-carlo"])
def test_bad_key_raises_whatever_the_method(method):
    # Issue 13.7: the exact path returned p = 0.0625 with key="not a key".
    d = TERNARY if method == "binomial" else D6
    with pytest.raises(TypeError, match="`key` must be an int seed or a JAX key, got str"):
        signflip_test(d, key="not a key", method=method)
    if method != "binomial":
        with pytest.raises(TypeError, match="`key` must be an int seed or a JAX key"):
            permutation_test(X, Y, key="not a key", method=method)
        with pytest.raises(TypeError, match="`key` must be an int seed or a JAX key"):
            swap_test(YT, PA, PB, key="not a key", method=method)


def test_sequential_and_correction_conflicts():
    for test in ("signflip", "permutation"):
        with pytest.raises(ValueError, match="`sequential` needs method='monte-carlo'"):
            CALLS[test](sequential=5, method="exact")
        with pytest.raises(ValueError, match="`sequential` cannot be combined"):
            CALLS[test](sequential=5, correction="maxT")
        with pytest.raises(ValueError, match="`correction` must be one of"):
            CALLS[test](correction="bonferroni")
    with pytest.raises(ValueError, match="`sequential` cannot be combined"):
        swap_test(YT, PA, PB, sequential=5, return_null=True)


def test_statistic_axis_and_measure_choices():
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        signflip_test(D6, statistic="median")
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        permutation_test(X, Y, statistic="mean")
    with pytest.raises(ValueError, match="`measure` must be one of"):
        swap_test(YT, PA, PB, measure="kappa")
    with pytest.raises(TypeError, match="`axis` must be an int"):
        signflip_test(D6, axis=0.0)
    with pytest.raises(ValueError, match="`axis`=3 is out of range"):
        permutation_test(X, Y, axis=3)
    with pytest.raises(ValueError, match="`axis` must be left at -1"):
        signflip_test(np.ones((6, 2)), statistic="hotelling", axis=0)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"n_resamples": 1000}, "`n_resamples`"),
        ({"batch_size": 4096}, "`batch_size`"),
        ({"correction": "maxT"}, "`correction`"),
        ({"return_null": True}, "`return_null`"),
    ],
)
def test_binomial_refuses_unused_options(kwargs, named):
    # The closed form has no rearrangements: these were silently ignored.
    with pytest.raises(ValueError, match=f"'binomial' is a closed form.*{named}"):
        signflip_test(TERNARY, method="binomial", **kwargs)
    # The defaults stay valid.
    r = signflip_test(TERNARY, method="binomial")
    assert r.method == "binomial" and r.n_resamples == 0


def test_exact_honours_an_explicit_n_resamples_as_a_cap():
    ref = signflip_test(D6, method="exact")  # default n_resamples: any enumeration size
    assert ref.n_resamples == 64
    same = signflip_test(D6, method="exact", n_resamples=64)
    assert float(same.pvalue) == float(ref.pvalue) == 0.0625
    with pytest.raises(
        ValueError, match=r"enumerates 64 rearrangements, more than `n_resamples`=63"
    ):
        signflip_test(D6, method="exact", n_resamples=63)
    # Zero differences are not enumerated: 4 nonzero -> 16 patterns.
    assert signflip_test([1.0, 0.0, 2.0, 0.0, -1.0, 3.0], method="exact", n_resamples=16).method
    with pytest.raises(ValueError, match="enumerates 16 rearrangements, more than"):
        signflip_test([1.0, 0.0, 2.0, 0.0, -1.0, 3.0], method="exact", n_resamples=15)
    # Generic statistics enumerate 2^m; splits C(7, 4) = 35; swaps 2^(differing outputs).
    with pytest.raises(ValueError, match="enumerates 64 rearrangements, more than"):
        signflip_test(D6, statistic=lambda d: jnp.median(d), method="exact", n_resamples=10)
    with pytest.raises(ValueError, match="enumerates 35 rearrangements, more than"):
        permutation_test(X, Y, method="exact", n_resamples=34)
    assert permutation_test(X, Y, method="exact", n_resamples=35).n_resamples == 35
    with pytest.raises(ValueError, match="enumerates more than `n_resamples`=10"):
        permutation_test(np.arange(40.0), np.arange(40.0), method="exact", n_resamples=10)
    with pytest.raises(ValueError, match="enumerates 16 rearrangements, more than"):
        swap_test(YT, PA, PB, method="exact", n_resamples=15)
    with pytest.raises(ValueError, match="enumerates 16 rearrangements, more than"):
        swap_test(YT, PA, PB, measure="auc", method="exact", n_resamples=8)
    assert swap_test(YT, PA, PB, method="exact", n_resamples=16).n_resamples == 16


def test_swap_beta_is_checked_and_only_for_f_beta():
    with pytest.raises(ValueError, match=r"`beta`=2\.0 applies to measure='f_beta' only"):
        swap_test(YT, PA, PB, measure="f1", beta=2.0)
    with pytest.raises(ValueError, match="applies to measure='f_beta' only"):
        swap_test(YT, PA, PB, measure="accuracy", beta=0.5)
    for bad in (np.inf, np.nan, -1.0, 0, True, "2", None):
        with pytest.raises(ValueError, match="`beta` must be a positive number"):
            swap_test(YT, PA, PB, measure="f_beta", beta=bad)
    a = swap_test(YT, PA, PB, measure="f_beta", beta=np.float32(2.0))
    b = swap_test(YT, PA, PB, measure="f_beta", beta=2)
    assert float(a.pvalue) == float(b.pvalue)
    swap_test(YT, PA, PB, measure="f1", beta=1.0)  # the default value stays valid


def test_callable_statistic_must_return_a_scalar():
    # Issue 18.6: a vector-valued statistic gave a JAX broadcasting error.
    with pytest.raises(ValueError, match=r"`statistic` must return a scalar.*\(30,\)"):
        signflip_test(D30, statistic=lambda d: d * 2)
    with pytest.raises(ValueError, match=r"`statistic` must return a scalar.*\(2,\)"):
        signflip_test(np.ones((3, 30)), statistic=lambda d: jnp.stack([d.mean(), d.std()]))
    with pytest.raises(ValueError, match="`statistic` must return a scalar"):
        permutation_test(X, Y, statistic=lambda a, b: a[:2] - b[:2])
    with pytest.raises(ValueError, match="`statistic` must return a scalar"):
        permutation_test(X, Y, statistic=lambda a, b: (a.mean(), b.mean()))
    with pytest.raises(ValueError, match="`measure` must return a scalar"):
        swap_test(YT, PA, PB, measure=lambda y, p: y == p)
    with pytest.raises(ValueError, match="`statistic` must return a real number"):
        signflip_test(D30, statistic=lambda d: jnp.mean(d).astype(jnp.complex128))
    ok = signflip_test(D30, statistic=lambda d: jnp.mean(d), n_resamples=999, key=1)
    assert 0 < float(ok.pvalue) <= 1


def test_huge_n_resamples_names_the_argument():
    # Issue 18.6: 2^53 asked XLA for 275 GB of block ids.
    with pytest.raises(ValueError, match="`n_resamples`=9007199254740992 is more than the engine"):
        signflip_test(D30, n_resamples=2**53, key=0, method="monte-carlo")
    with pytest.raises(ValueError, match="`n_resamples`"):
        permutation_test(np.arange(40.0), np.arange(40.0) + 1, n_resamples=2**53, key=0)
    with pytest.raises(ValueError, match=r"`return_null`=True with `n_resamples`=\d+ keeps"):
        signflip_test(D30, n_resamples=2**42, key=0, return_null=True, method="monte-carlo")


def test_batch_size_is_capped_at_the_work_and_at_memory():
    # Issue 18.6/18.13: batch_size=10**12 asked for 20 TB; 10**8 on 2,000 draws used 2.7 GB.
    d = np.random.default_rng(1).normal(0.1, 1, 50)
    ref = signflip_test(d, n_resamples=2000, key=0, return_null=True)
    big = signflip_test(d, n_resamples=2000, key=0, return_null=True, batch_size=10**12)
    np.testing.assert_array_equal(big.null_distribution, ref.null_distribution)
    assert int(big.n_extreme) == int(ref.n_extreme)
    h = np.random.default_rng(2).normal(0.1, 1, (20, 2))
    ref = signflip_test(h, statistic="hotelling", n_resamples=3000, key=0)
    big = signflip_test(h, statistic="hotelling", n_resamples=3000, key=0, batch_size=10**9)
    assert int(big.n_extreme) == int(ref.n_extreme)
    # The cap itself: at the work (blocks), and at about 256 MB per step.
    assert P._per_step(10**12, 1024, n_blocks=2) == 2
    assert P._per_step(10**12, 1024, n_blocks=10**6, block_bytes=2**20) == 256
    assert P._per_step(None, 1024, n_blocks=10**6, block_bytes=2**40) == 1


def _draws(**kw):
    r = signflip_test(np.random.default_rng(3).normal(0.05, 1, (2, 40)), key=7, **kw)
    return np.asarray(r.n_extreme), np.asarray(r.pvalue_adjusted), np.asarray(r.null_distribution)


@pytest.mark.parametrize("seconds", [1e-9, 1e9])
def test_time_sized_chunks_never_change_the_result(monkeypatch, seconds):
    # 1e-9 s: every chunk is one step (many host calls); 1e9 s: chunks grow 16x per call.
    base = _draws(n_resamples=300_001, correction="maxT", return_null=True)
    monkeypatch.setattr(P, "_CHUNK_SECONDS", seconds)
    for kw in ({}, {"batch_size": 3 * 65536}, {"progress": lambda done, total: None}):
        got = _draws(n_resamples=300_001, correction="maxT", return_null=True, **kw)
        for a, b in zip(base, got, strict=True):
            np.testing.assert_array_equal(a, b)
    # Sequential stopping and the generic (callable) evaluator too.
    d = np.random.default_rng(4).normal(0.0, 1, 30)
    monkeypatch.setattr(P, "_CHUNK_SECONDS", 0.5)
    s0 = signflip_test(d, sequential=20, n_resamples=40_000, key=2)
    g0 = signflip_test(d, statistic=lambda x: jnp.median(x), n_resamples=5000, key=2)
    monkeypatch.setattr(P, "_CHUNK_SECONDS", seconds)
    s1 = signflip_test(d, sequential=20, n_resamples=40_000, key=2, batch_size=8192)
    g1 = signflip_test(d, statistic=lambda x: jnp.median(x), n_resamples=5000, key=2)
    assert int(s0.n_draws) == int(s1.n_draws) and float(s0.pvalue) == float(s1.pvalue)
    assert int(g0.n_extreme) == int(g1.n_extreme)


def test_null_buffer_smaller_than_the_run(monkeypatch):
    # A chunk's null buffer holds fewer steps than the run: several buffers, same null.
    # (The run of test_time_sized_chunks_never_change_the_result: its program.)
    kw = dict(n_resamples=300_001, correction="maxT", return_null=True)
    ref = _draws(**kw)
    monkeypatch.setattr(P, "_NULL_BYTES", 1)
    monkeypatch.setattr(P, "_CHUNK_SECONDS", 1e9)
    got = _draws(**kw)
    for a, b in zip(ref, got, strict=True):
        np.testing.assert_array_equal(a, b)


def test_progress_reports_start_chunks_and_end():
    calls = []
    signflip_test(D30, n_resamples=300_000, key=1, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 300_000) and calls[-1] == (300_000, 300_000)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(calls))
    # Exact and Monte Carlo paths of the other tests report too.
    for fn in (
        lambda p: permutation_test(X, Y, progress=p),
        lambda p: permutation_test(D30[:15], D30[15:], n_resamples=5000, key=0, progress=p),
        lambda p: swap_test(YT, PA, PB, progress=p),
        lambda p: swap_test(YT, PA, PB, measure="auc", progress=p),
    ):
        seen = []
        fn(lambda done, total, seen=seen: seen.append((done, total)))
        assert seen[-1][0] == seen[-1][1] > 0


def test_progress_true_and_a_tqdm_bar_are_accepted(capsys):
    # Issue 17 (Progress): both were refused ("must be a callable").
    r = signflip_test(D30, n_resamples=200_000, key=3, progress=True)
    err = capsys.readouterr().err
    assert "200k/200k" in err  # tqdm.auto bar on stderr, created and closed by the call
    out = io.StringIO()
    bar = tqdm(file=out, desc="mine")  # no total: the engine sets it
    r2 = signflip_test(D30, n_resamples=200_000, key=3, progress=bar)
    assert bar.n == 200_000 and bar.total == 200_000
    bar.close()  # the caller's bar is left open for the caller
    assert int(r.n_extreme) == int(r2.n_extreme)
    bar = tqdm(total=10, file=io.StringIO())
    permutation_test(X, Y, progress=bar)  # 35 splits counted on a caller's bar
    assert bar.n == 35
    assert as_progress(None) is None and as_progress(False) is None


def test_permutation_test_score_shares_the_progress_spellings():
    from jaxtests import datasets, models
    from jaxtests._sanity import permutation_test_score

    Xb, yb = datasets.load_breast_cancer()
    bar = tqdm(file=io.StringIO())
    res = permutation_test_score(
        models.ridge_classifier(), Xb, yb, n_permutations=20, key=0, progress=bar
    )
    assert bar.n == 20 and bar.total == 20 and res.n_permutations == 20
    with pytest.raises(TypeError, match="`progress` must be a callable"):
        permutation_test_score(models.ridge_classifier(), Xb, yb, n_permutations=5, progress=1)


def test_long_run_warning_gives_an_estimate(monkeypatch):
    # Issue 18.13: weeks of work started silently. Force the threshold down.
    monkeypatch.setattr(P, "_LONG_RUN_SECONDS", 0.0)
    monkeypatch.setattr(P, "_ESTIMATE_FROM_SECONDS", 0.0)
    monkeypatch.setattr(P, "_CHUNK_SECONDS", 1e-9)  # one step per chunk: many chunks
    with pytest.warns(LongRunWarning, match=r"estimated to take about .* Ctrl-C") as rec:
        signflip_test(D30, n_resamples=600_000, key=0)
    assert len(rec) == 1 and rec[0].filename == __file__  # points at the caller's line


def test_short_runs_stay_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error", LongRunWarning)
        signflip_test(D30, n_resamples=100_000, key=0)
        permutation_test(X, Y)
