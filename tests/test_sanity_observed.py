"""The ridge stream scores the observed labels in its own program: as fold_scores does."""

import jax
import numpy as np

from jaxtests import _sanity_streams, models
from jaxtests._sanity import _permutation_test_score_iv
from jaxtests._sanity_scores import fold_scores

_fold_scores = jax.jit(fold_scores, static_argnames=("scoring", "classification"))
SCORING = ("accuracy", "f1", "mcc", "balanced_accuracy", "precision", "fpr")


def _plan(X, y, key):
    return _permutation_test_score_iv(
        models.ridge_classifier(), X, y, 5, 64, SCORING, key, "all", None, None, None
    )


def test_observed_scores_equal_fold_scores_and_need_no_block(monkeypatch):
    rng = np.random.default_rng(4)
    for n in (40, 61, 100):
        X = rng.normal(size=(n, 3))
        y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
        plan = _plan(X, y, n)
        obs, _ = _sanity_streams._builtin_scores(plan, None)
        # the reference: the host decisions scored by fold_scores (the scores before)
        counts = _sanity_streams._host_ridge_counts(plan)
        h = plan.model.hyper
        f = _sanity_streams.klearners.ridge_fold_decisions(
            X,
            np.asarray(y, float)[None],
            plan.train.astype(float),
            plan.index,
            h["alpha"],
            h["standardize"],
            xp=np,
        )
        want = _fold_scores(
            f,
            np.asarray(y, float)[plan.index][None],
            plan.valid,
            scoring=SCORING,
            classification=True,
        )
        assert np.asarray(want)[0].tobytes() == np.asarray(obs).tobytes()
        assert counts.sum() == n
        # a process of a distributed run that draws no block still scores the observed labels
        with monkeypatch.context() as m:
            m.setattr(_sanity_streams, "_mine", lambda items: items[:0])
            alone, null = _sanity_streams._builtin_scores(plan, None)
        assert null.shape == (0, len(SCORING))
        assert np.asarray(alone).tobytes() == np.asarray(obs).tobytes()
