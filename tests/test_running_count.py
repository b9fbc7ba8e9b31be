"""The label streams' running counts and row picks: equal to the cumsum and nonzero they replace."""

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


_ranked = jax.jit(klabels.ranked_rows, static_argnames="size")


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([32, 64, 1024]), st.floats(0, 1), st.integers(0, 2**31 - 1))
def test_ranked_rows_equal_nonzero(R, p, seed):
    flag = np.random.default_rng(seed).random(R) < p
    rank = np.cumsum(flag, dtype=np.int32) - 1
    size = 8
    for i in range(-(-R // size) + 1):
        # the reference: jnp.nonzero, as the streams had it
        (want,) = jnp.nonzero(flag & (rank // size == i), size=size, fill_value=R)
        np.testing.assert_array_equal(_ranked(flag, rank, np.int32(i * size), size=size), want)
