"""The label streams' row selection: equal to the nonzero, scatter and cumsum it replaces."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from jaxtests.kernels import labels as klabels

_select = jax.jit(
    lambda flag, rank, x, first, size: (
        klabels.ranked_rows(flag, rank, first, size),
        klabels.put_ranked_rows(x, x[:, :size] * 7 + 1, flag, rank, first),
    ),
    static_argnames="size",
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([32, 64, 96, 1024]), st.floats(0, 1), st.integers(0, 2**31 - 1))
def test_ranked_rows_equal_nonzero_and_scatter(R, p, seed):
    rng = np.random.default_rng(seed)
    flag = rng.random(R) < p
    rank = np.cumsum(flag, dtype=np.int32) - 1
    x = rng.integers(0, 2**20, (3, R)).astype(np.int32)
    size = 8
    for i in range(-(-R // size) + 1):
        # the reference: jnp.nonzero and a scatter, as the streams had them
        (want,) = jnp.nonzero(flag & (rank // size == i), size=size, fill_value=R)
        got, put = _select(flag, rank, x, np.int32(i * size), size=size)
        np.testing.assert_array_equal(got, want)
        scattered = jnp.asarray(x).at[:, want].set(x[:, :size] * 7 + 1, mode="drop")
        np.testing.assert_array_equal(put, scattered)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([1, 31, 32, 33, 64, 1000, 1024]), st.floats(0, 1), st.integers(0, 2**31 - 1))
def test_running_count_equals_cumsum(R, p, seed):
    flag = np.random.default_rng(seed).random(R) < p
    got = jax.jit(klabels.running_count)(flag)
    assert got.dtype == jnp.int32
    np.testing.assert_array_equal(got, np.cumsum(flag))
