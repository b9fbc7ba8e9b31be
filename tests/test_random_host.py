"""Keys on the host: numpy threefry equals jax.random word for word, and compiles nothing.

The label streams and the k-fold shuffles derive their keys and uniforms on the host
(``jaxtests._random``) so that a first call compiles no key program; these tests are
the proof that the words are JAX's own (its partitionable threefry, the default).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxtests import _random, _sanity_streams
from jaxtests._monitoring import CompileCounter
from jaxtests._splitters import _uniform_draw, _uniforms

SEEDS = st.integers(0, 2**63 - 1)


def _words(seed):
    return _random.key_words(_random._seed_key(seed))


pytestmark = pytest.mark.skipif(
    not _random.host_threefry(), reason="host keys need JAX's partitionable threefry"
)


@settings(max_examples=25, deadline=None)  # jax.random compiles on the first example
@given(SEEDS, st.integers(0, 2**32 - 1))
def test_fold_in_equals_jax(seed, data):
    key = _random._seed_key(seed)
    want = jax.random.key_data(jax.random.fold_in(key, data))
    np.testing.assert_array_equal(_random.fold_in_words(_words(seed), data), want)


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.integers(1, 9))
def test_split_and_bits_equal_jax(seed, n):
    key = _random._seed_key(seed)
    want = jax.random.key_data(jax.random.split(key, n))
    np.testing.assert_array_equal(_random.split_words(_words(seed), n), want)
    np.testing.assert_array_equal(
        _random.bits32_words(_words(seed), n), jax.random.bits(key, (n,), jnp.uint32)
    )


@settings(max_examples=25, deadline=None)
@given(SEEDS, st.integers(0, 40))
def test_uniforms_equal_jax_bit_for_bit(seed, r):
    # the k-fold shuffle's uniforms (float64 from 64 random bits), against the jitted draw
    key = _random._seed_key(seed)
    n = 37
    want = np.asarray(_uniform_draw(key, np.int32(r), n))
    got = _uniforms(key, r, n)
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_label_block_words_equal_the_program():
    key = _random._seed_key(2**40 + 3)
    blocks = np.arange(5, 12, dtype=np.int32)
    want = np.asarray(_sanity_streams._label_block_words(key, blocks))
    got = _sanity_streams._block_words(key, 5, 7, 9)
    np.testing.assert_array_equal(got[:7], want)
    np.testing.assert_array_equal(got[7:], 0)  # blocks past n_blocks: zero words


@pytest.mark.parametrize("mode", ["all", "train"])
def test_sort_based_permutations_equal_the_program(mode):
    # permutation_test_score's sort-based path (regression, groups, permute="train",
    # multiclass): permutations start .. start + count - 1 within strata (test instances
    # fixed in "train" mode), drawn on the host, are jax.random's, index for index
    rng = np.random.default_rng(4)
    n, K = 37, 4
    y, strata = rng.normal(size=n), rng.integers(0, 3, n)
    train = (rng.random((K, n)) < 0.7).astype(np.float64)
    key = _random._seed_key(2**40 + 9)
    with jax.enable_x64(True):
        want = np.asarray(
            _sanity_streams._permute_labels(
                key, np.arange(5, 14, dtype=np.int32), y, train, strata, mode=mode
            )
        )
        with CompileCounter() as counter:
            got = _sanity_streams._sorted_labels(key, y, train, strata, mode=mode, start=5, count=9)
    assert (counter.traces, counter.compiles) == (0, 0)
    np.testing.assert_array_equal(got, want)
    # each row a permutation within the strata (in "train" mode, of each fold's training
    # rows, its test rows in place), and not the identity
    rows = want.reshape(9, -1, n)
    moving = train > 0 if mode == "train" else np.ones((1, n), bool)
    for row in rows:
        for r, keep in zip(row, moving, strict=True):
            np.testing.assert_array_equal(r[~keep], y[~keep])
            for g in range(3):
                sel = keep & (strata == g)
                np.testing.assert_array_equal(np.sort(r[sel]), np.sort(y[sel]))
    assert not np.any(np.all(rows == y, axis=-1))


def test_host_keys_compile_nothing():
    key = _random._seed_key(11)
    with CompileCounter() as counter:
        a, b = _random.split_key(key)
        _uniforms(b, 0, 100)
        _sanity_streams._block_words(a, 0, 3, 16)
    assert (counter.traces, counter.compiles) == (0, 0)
    want = jax.random.split(key)
    for got, w in zip((a, b), want, strict=True):
        np.testing.assert_array_equal(jax.random.key_data(got), jax.random.key_data(w))


def test_other_key_kinds_take_jax_random():
    # Host words exist only for threefry keys: an rbg key's words are not threefry's, so the
    # label streams and k-fold shuffles must draw its keys with jax.random (as before).
    rbg = jax.random.key(3, impl="rbg")
    assert _random.host_words(rbg) is None and _random.key_words(rbg) is None
    got = [jax.random.key_data(k) for k in _random.split_key(rbg, 3)]
    np.testing.assert_array_equal(got, jax.random.key_data(jax.random.split(rbg, 3)))
    assert _random.host_words(_random._seed_key(3)) is not None


def test_sort_based_permutations_of_other_key_kinds_take_jax_random():
    # an rbg key's permutations come from the program (jax.random's own draws for that key)
    rng = np.random.default_rng(5)
    y, strata = rng.normal(size=20), np.zeros(20, np.int64)
    train = np.ones((1, 20))
    rbg = jax.random.key(3, impl="rbg")
    with jax.enable_x64(True):
        got = _sanity_streams._sorted_labels(rbg, y, train, strata, mode="all", start=2, count=3)
        want = _sanity_streams._permute_labels(
            rbg, np.arange(2, 5, dtype=np.int32), y, train, strata, mode="all"
        )
    np.testing.assert_array_equal(got, np.asarray(want))
    np.testing.assert_array_equal(np.sort(got, axis=-1), np.broadcast_to(np.sort(y), (3, 20)))


def test_tied_sort_keys_are_ordered_as_a_stable_sort():
    # jnp.argsort is stable; the host's quicksort re-sorts the rows holding equal keys
    keys = np.random.default_rng(0).integers(0, 5, (3, 300)).astype(np.float64)
    keys[1] = np.random.default_rng(1).random(300)  # a row without ties
    want = np.argsort(keys, axis=-1, kind="stable")
    assert np.any(np.argsort(keys, axis=-1) != want)  # a quicksort alone differs here
    np.testing.assert_array_equal(_sanity_streams._stable_order(keys), want)
