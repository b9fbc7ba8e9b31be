"""Same key, same counts: across 1 vs 4 (forced host) devices, with programs compiled or loaded.

One harness for every device-identity case: the 1-device reference runs in this process, the
4-device runs in two subprocesses (the first compiles and stores its sharded programs, the
second loads them), each computing every case once.
"""

import jax
import numpy as np
import pytest
from _helpers import python_json

COMPUTE = r"""
def compute():
    import jax
    import numpy as np

    from jaxtests import permutation_test, signflip_test

    rng = np.random.default_rng(0)
    d = rng.normal(0.1, 1, (2, 300))
    a = signflip_test(d, n_resamples=70_000, key=5, correction="maxT")
    b = permutation_test(d[0, :150], d[1, :140], n_resamples=40_000, key=6)
    return {"n": jax.local_device_count(), "a": np.asarray(a.n_extreme).tolist(),
            "pa": np.asarray(a.pvalue).tolist(),
            "adj": np.asarray(a.pvalue_adjusted).tolist(),
            "b": int(b.n_extreme), "pb": float(b.pvalue)}


def bootstrap_cases():
    # The bootstrap's dispatches spread over the devices, each writing its own slice: built-in
    # and callable statistics, paired and unpaired (6 dispatches of 256 draws each), and the
    # devices that ran them.
    import collections

    import jax.numpy as jnp
    import numpy as np

    from jaxtests import _bootstrap_draws, bootstrap

    rng = np.random.default_rng(4)
    y = np.where(rng.random(60) < 0.4, 1, -1)
    a, b = rng.normal(size=60) + (y > 0), rng.normal(size=60)
    used, real = collections.Counter(), _bootstrap_draws.resample_blocks

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        used[out.devices().pop().id] += 1
        return out

    def median_difference(u, v):
        return jnp.median(u) - jnp.median(v)

    cases = [
        ((y, a, b), "roc_auc_difference", True),
        ((a, b[:45]), "mean_difference", False),
        ((a, b), median_difference, True),
        ((a, b[:45]), median_difference, False),
    ]
    _bootstrap_draws.resample_blocks = spy
    n_loaded = len(globals().get("loaded", ()))  # jaxtests' stored programs loaded so far
    try:
        dists = [
            bootstrap(data, stat, paired=paired, n_resamples=1300, batch_size=1, key=11,
                      method="percentile", return_distribution=True).bootstrap_distribution
            for data, stat, paired in cases
        ]
    finally:
        _bootstrap_draws.resample_blocks = real
    n_loaded = len(globals().get("loaded", ())) - n_loaded
    return {"dists": [d.tolist() for d in dists], "devices": sorted(used), "loaded": n_loaded}


def ptscore_cases():
    # The ridge label stream's calls spread over the devices (one block per call here,
    # batch_size=1), and another learner's label blocks (5 blocks of 1,024): the permutation
    # scores, the observed scores and the devices used.
    import numpy as np

    from jaxtests import _sanity_streams, models, permutation_test_score

    rng = np.random.default_rng(6)
    X = rng.normal(size=(90, 4))
    y = np.where(X[:, 0] + rng.normal(size=90) > 0, 1, -1)
    used, real = set(), _sanity_streams._ridge_binary_stream
    fits, sorted_on, real_fits = set(), set(), _sanity_streams._data_scores
    fitted_on = [fits]  # the devices of the fits of the call running

    def spy(part, *args, **kwargs):
        used.add(part.XT.devices().pop().id)
        return real(part, *args, **kwargs)

    def spy_fits(fit, data, Y):
        fitted_on[0].add(data.X.devices().pop().id)
        return real_fits(fit, data, Y)

    _sanity_streams._ridge_binary_stream = spy
    _sanity_streams._data_scores = spy_fits
    try:
        r = permutation_test_score(models.ridge_classifier(), X, y, n_permutations=4100,
                                   key=5, batch_size=1)
        s = permutation_test_score(models.lda(), X, y, n_permutations=4100, key=6)
        fitted_on[0] = sorted_on
        # the sort-based path (a regression), 64 permutations a call (its fits' width)
        t = permutation_test_score(models.ridge(), X, X[:, 0] + y, n_permutations=256, key=7,
                                   scoring="r2", batch_size=64)
    finally:
        _sanity_streams._ridge_binary_stream = real
        _sanity_streams._data_scores = real_fits
    return {"scores": np.asarray(r.permutation_scores).tolist(), "score": float(r.score),
            "devices": sorted(used), "lda": np.asarray(s.permutation_scores).tolist(),
            "lda_score": float(s.score), "lda_devices": sorted(fits),
            "sorted": np.asarray(t.permutation_scores).tolist(), "sorted_score": float(t.score),
            "sorted_devices": sorted(sorted_on)}


def null_buffers():
    # Each device fills its own part of a chunk's null buffer; the host stitches the parts.
    # Two buffer sizes: one buffer per chunk, or one step per buffer.
    import numpy as np

    from jaxtests import _engine
    from jaxtests import permutation_test, signflip_test

    d = np.random.default_rng(3).normal(0.05, 1, (2, 40))
    out, before = {}, _engine._NULL_BYTES
    try:
        for null_bytes in (2**26, 1):
            _engine._NULL_BYTES = null_bytes
            r = signflip_test(d, key=7, n_resamples=300_001, correction="maxT", return_null=True)
            s = permutation_test(d[0, :20], d[1], key=8, n_resamples=20_001,
                                 statistic=lambda a, b: a.mean() - b.mean(), return_null=True)
            out[str(null_bytes)] = [np.asarray(r.null_distribution).tolist(),
                                    np.asarray(r.pvalue_adjusted).tolist(),
                                    np.asarray(s.null_distribution).tolist()]
    finally:
        _engine._NULL_BYTES = before
    return out
"""


# The programs jaxtests loads from its cache, counted (jaxtests._aot's event).
COUNT_LOADED = r"""
import jax
loaded = []
jax.monitoring.register_event_listener(
    lambda event, **kw: loaded.append(event) if event == "/jaxtests/programs/loaded" else None
)
"""


def _run(n_dev, cache, *, buffers):
    env = {
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={n_dev}",
        "JAX_PLATFORMS": "cpu",
        "JAXTESTS_CACHE_DIR": cache,
    }
    script = COUNT_LOADED + COMPUTE + "\nimport json\nout = {**compute(), 'loaded': len(loaded)}\n"
    script += "out['bootstrap'] = bootstrap_cases()\n"
    script += "out['ptscore'] = ptscore_cases()\n"
    if buffers:  # after compute(): `loaded` counts the compute() programs only
        script += "out['buffers'] = null_buffers()\n"
    script += "print(json.dumps(out))\n"
    return python_json(script, env=env, drop=("JAX_COMPILATION_CACHE_DIR",), timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    # The device count is fixed at start-up: 4 devices run in subprocesses, the 1-device
    # reference in this (one-device) test process.
    cache = str(tmp_path_factory.mktemp("reproducibility") / "jax")
    if jax.default_backend() == "cpu":
        namespace = {}
        exec(COMPUTE, namespace)
        one = {
            **namespace["compute"](),
            "buffers": namespace["null_buffers"](),
            "bootstrap": namespace["bootstrap_cases"](),
            "ptscore": namespace["ptscore_cases"](),
        }
    else:  # the 4 devices are CPUs: so is the reference (a GPU's reductions round otherwise)
        one = _run(1, str(tmp_path_factory.mktemp("one") / "jax"), buffers=True)
        one.pop("loaded")
    four = _run(4, cache, buffers=True)
    again = _run(4, cache, buffers=False)
    return one, four, again


def test_one_and_four_devices_bit_identical(runs):
    # The first 4-device process stores its sharded programs (keyed by the devices and
    # processes they span), the second loads them.
    one, four, again = runs
    assert one["n"] == 1 and four["n"] == again["n"] == 4
    assert four["loaded"] == 0 and again["loaded"] >= 2  # both tests' draw programs, at least
    for k in ("a", "pa", "adj", "b", "pb"):
        np.testing.assert_array_equal(np.asarray(one[k]), np.asarray(four[k]))
        np.testing.assert_array_equal(np.asarray(one[k]), np.asarray(again[k]))


def test_null_and_counts_identical_on_four_devices(runs):
    one, four, _ = runs
    assert one["buffers"].keys() == four["buffers"].keys() == {"1", str(2**26)}
    for size in one["buffers"]:
        for a, b in zip(one["buffers"][size], four["buffers"][size], strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for a, b in zip(one["buffers"]["1"], one["buffers"][str(2**26)], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_bootstrap_on_four_devices_is_bit_identical(runs):
    # Issue 40: the bootstrap's dispatches run on every device (the samples copied to each);
    # the second 4-device process loads every device's programs from jaxtests' cache (two
    # built-in statistics' blocks on 4 devices, and their observed values).
    one, four, again = runs
    assert one["bootstrap"]["devices"] == [0]
    assert four["bootstrap"]["devices"] == again["bootstrap"]["devices"] == [0, 1, 2, 3]
    assert four["bootstrap"]["loaded"] == 0 and again["bootstrap"]["loaded"] >= 2 * 4
    for run in (four, again):
        for a, b in zip(one["bootstrap"]["dists"], run["bootstrap"]["dists"], strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_label_streams_on_four_devices_are_bit_identical(runs):
    # Issue 40: permutation_test_score's ridge stream deals its calls out over the devices,
    # another learner its label blocks, the sort-based path its calls.
    one, four, again = runs
    for devices in ("devices", "lda_devices", "sorted_devices"):
        assert one["ptscore"][devices] == [0]
        assert four["ptscore"][devices] == again["ptscore"][devices] == [0, 1, 2, 3]
    for run in (four, again):
        for score, scores in (
            ("score", "scores"),
            ("lda_score", "lda"),
            ("sorted_score", "sorted"),
        ):
            assert run["ptscore"][score] == one["ptscore"][score]
            np.testing.assert_array_equal(one["ptscore"][scores], run["ptscore"][scores])
