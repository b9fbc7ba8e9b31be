"""The label streams' running counts: equal to the cumsum they replace (fewer kernels)."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from jaxtests.kernels import labels as klabels


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1, 31, 32, 33, 64, 1000, 1024]), st.floats(0, 1), st.integers(0, 2**31 - 1))
def test_running_count_equals_cumsum(R, p, seed):
    flag = np.random.default_rng(seed).random(R) < p
    got = jax.jit(klabels.running_count)(flag)
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(got, np.cumsum(flag))
