"""jaxtests.losses against scikit-learn, hand values from the seeds, and invariants."""

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from jaxtests import losses

RTOL = 1e-12
# XLA:CPU flushes subnormals to zero, so a decision value of 5e-324 counts as f = 0.
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def _labels(rng, shape):
    return rng.choice([-1.0, 1.0], size=shape)


def test_hinge_matches_sklearn(rng):
    y = _labels(rng, 300)
    f = rng.normal(size=300) * 2
    # scikit-learn hinge_loss is the mean of max(0, 1 - y f) over instances.
    np.testing.assert_allclose(np.mean(losses.hinge(y, f)), skm.hinge_loss(y, f), rtol=RTOL)


def test_zero_one_matches_sklearn(rng):
    y = _labels(rng, 300)
    f = rng.normal(size=300)
    pred = np.where(f > 0, 1.0, -1.0)
    np.testing.assert_allclose(
        np.mean(losses.zero_one(y, f)), skm.zero_one_loss(y, pred), rtol=RTOL
    )


def test_regression_losses_match_sklearn(rng):
    y = rng.normal(size=200)
    f = y + rng.standard_t(3, size=200)
    np.testing.assert_allclose(
        np.mean(losses.square(y, f)), skm.mean_squared_error(y, f), rtol=RTOL
    )
    np.testing.assert_allclose(
        np.mean(losses.absolute(y, f)), skm.mean_absolute_error(y, f), rtol=RTOL
    )
    np.testing.assert_allclose(losses.power(y, f, 2.0), losses.square(y, f), rtol=RTOL)
    np.testing.assert_allclose(losses.power(y, f, 1.0), losses.absolute(y, f), rtol=RTOL)


def test_hand_values_seed_000():
    # Seed 000 eqs. (2) and (4): hinge is 0 beyond the margin and 1 - yf inside it;
    # the epsilon-tube costs nothing, outside it the loss grows linearly.
    np.testing.assert_allclose(losses.hinge([1, 1, -1], [2.0, 0.25, 0.5]), [0.0, 0.75, 1.5])
    np.testing.assert_allclose(
        losses.epsilon_insensitive([0.0, 0.0, 0.0], [0.05, -0.5, 2.0], 0.1), [0.0, 0.4, 1.9]
    )
    # Seed 001: |error|^p with p = 1/2.
    np.testing.assert_allclose(losses.power([0.0, 0.0], [4.0, -9.0], 0.5), [2.0, 3.0])


def test_zero_one_at_f_zero_follows_sklearn_predict():
    # Issue 13.6: one rule for f = 0. Reference: scikit-learn's own predict from a
    # decision function that is exactly 0 (a linear classifier with zero weights:
    # LinearClassifierMixin.predict takes classes_[scores > 0], so f = 0 is -1).
    from sklearn.linear_model import RidgeClassifier

    from jaxtests import measures

    X = np.array([[0.0], [0.0], [0.5], [-0.5], [0.0], [2.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
    clf = RidgeClassifier().fit(np.r_[X, [[1.0]]], np.r_[y, 1.0])
    clf.coef_, clf.intercept_ = np.array([[1.0]]), np.array([0.0])
    f = clf.decision_function(X)
    assert np.sum(f == 0) == 3
    sk_loss = (clf.predict(X) != y).astype(float)  # [1, 0, 0, 0, 0, 1]
    np.testing.assert_array_equal(losses.zero_one(y, f), sk_loss)
    # the same rule in the confusion counts: mean 0/1 loss == error measure
    c = measures.confusion_counts(y, np.where(f > 0, 1, -1))
    np.testing.assert_allclose(measures.error(c), np.mean(sk_loss), rtol=RTOL)
    np.testing.assert_allclose(
        np.mean(losses.zero_one(y, f)), skm.zero_one_loss(y, clf.predict(X)), rtol=RTOL
    )


def test_label_column_does_not_broadcast(rng):
    # Issue 18.7: a (n, 1) label column against (n,) decisions broadcast to n x n.
    y = _labels(rng, 6)
    f = rng.normal(size=6)
    for fn in (losses.zero_one, losses.hinge, losses.square):
        with pytest.raises(ValueError, match=r"`y` and `f` must have the same number of inst"):
            fn(y[:, None], f)
        with pytest.raises(ValueError, match=r"shapes \(1, 6\) and \(6, 1\)"):
            fn(y[None, :], f[:, None])
    # shared labels for a batch of algorithms still broadcast over the batch axes
    assert losses.zero_one(y, np.stack([f, -f])).shape == (2, 6)


def test_zero_labels_read_as_negative():
    np.testing.assert_array_equal(losses.hinge([0, 1], [-1.0, 1.0]), [0.0, 0.0])
    np.testing.assert_array_equal(losses.zero_one([0, 1], [0.5, 0.0]), [1.0, 1.0])


def test_batch_shape_and_broadcast(rng):
    y = _labels(rng, (7,))
    f = rng.normal(size=(3, 4, 7))  # folds x algorithms x instances
    out = losses.hinge(y, f)
    assert out.shape == (3, 4, 7)
    assert out.dtype == jnp.float64
    np.testing.assert_allclose(out[2, 1], losses.hinge(y, f[2, 1]), rtol=0)


def test_jit_and_vmap(rng):
    y = _labels(rng, (5, 9))
    f = rng.normal(size=(5, 9))
    eager = losses.hinge(y, f)
    np.testing.assert_allclose(jax.jit(losses.hinge)(y, f), eager, rtol=RTOL)
    np.testing.assert_allclose(jax.vmap(losses.hinge)(y, f), eager, rtol=RTOL)
    g = jax.jit(lambda y, f: losses.epsilon_insensitive(y, f, 0.3))
    np.testing.assert_allclose(g(f, 2 * f), losses.epsilon_insensitive(f, 2 * f, 0.3), rtol=RTOL)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 12)), elements=finite),
    st.data(),
)
def test_properties(f, data):
    y = data.draw(hnp.arrays(np.float64, f.shape, elements=st.sampled_from([-1.0, 1.0])))
    for name in ("hinge", "zero_one", "square", "absolute"):
        out = np.asarray(getattr(losses, name)(y, f))
        assert (out >= 0).all(), name
        looped = np.stack([np.asarray(getattr(losses, name)(y[i], f[i])) for i in range(len(f))])
        np.testing.assert_array_equal(out, looped)  # batched == looped
    # 0/1 loss is the indicator of pred != y with scikit-learn's prediction from a
    # decision value (LinearClassifierMixin.predict: +1 iff f > 0, so f = 0 is -1),
    # its mean the error rate.
    pred = np.where(f > 0, 1.0, -1.0)
    np.testing.assert_allclose(
        np.mean(losses.zero_one(y, f), axis=-1), np.mean(pred != y, axis=-1), rtol=RTOL
    )
    # The hinge loss bounds the 0/1 loss from above.
    assert (np.asarray(losses.hinge(y, f)) >= np.asarray(losses.zero_one(y, f))).all()


def test_validation_messages():
    with pytest.raises(ValueError, match=r"`f` contains NaN at index 1"):
        losses.hinge([1, -1], [0.0, np.nan])
    with pytest.raises(ValueError, match=r"`y` contains inf at index 0"):
        losses.square([np.inf, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"`y` must hold binary labels"):
        losses.hinge([1, 2], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"broadcast-compatible"):
        losses.hinge([1, -1, 1], [0.0, 1.0])
    with pytest.raises(ValueError, match=r"`y` is empty"):
        losses.square([], [])
    with pytest.raises(TypeError, match=r"`f` must be an array of real numbers"):
        losses.square([1.0], ["a"])
    with pytest.raises(ValueError, match=r"`epsilon` must be finite and >= 0"):
        losses.epsilon_insensitive([1.0], [1.0], -0.1)
    with pytest.raises(ValueError, match=r"`p` must be finite and > 0"):
        losses.power([1.0], [1.0], 0)
    with pytest.raises(TypeError, match=r"`p` must be a real number"):
        losses.power([1.0], [1.0], "2")
