"""Same key, same counts: across 1 vs 4 (forced host) devices, with programs compiled or loaded."""

import json
import os
import subprocess
import sys

import numpy as np

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
"""


# The programs jaxtests loads from its cache, counted (jaxtests._aot's event).
COUNT_LOADED = r"""
import jax
loaded = []
jax.monitoring.register_event_listener(
    lambda event, **kw: loaded.append(event) if event == "/jaxtests/programs/loaded" else None
)
"""


def _run(n_dev, cache=""):
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n_dev}"
    env["JAX_PLATFORMS"] = "cpu"
    env["JAXTESTS_CACHE_DIR"] = cache
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    script = COUNT_LOADED + COMPUTE
    script += "\nimport json\nprint(json.dumps({**compute(), 'loaded': len(loaded)}))\n"
    out = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_one_and_four_devices_bit_identical(tmp_path):
    # The device count is fixed at start-up: 4 devices run in subprocesses, the 1-device
    # reference in this (one-device) test process. The first 4-device process stores its
    # sharded programs (keyed by the devices and processes they span), the second loads them.
    namespace = {}
    exec(COMPUTE, namespace)
    one = namespace["compute"]()
    cache = str(tmp_path / "jax")
    four, again = _run(4, cache), _run(4, cache)
    assert one["n"] == 1 and four["n"] == again["n"] == 4
    assert four["loaded"] == 0 and again["loaded"] >= 2  # both tests' draw programs, at least
    for k in ("a", "pa", "adj", "b", "pb"):
        np.testing.assert_array_equal(np.asarray(one[k]), np.asarray(four[k]))
        np.testing.assert_array_equal(np.asarray(one[k]), np.asarray(again[k]))
