"""The joblib fallback of the sanity check: a scikit-learn estimator refitted per label vector."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _distributed
from jaxtests._estimators import sklearn_outputs, sklearn_predictions
from jaxtests._sanity_scores import fold_scores
from jaxtests._sanity_streams import _mine


def _sklearn_permutation_scores(plan, n_jobs, progress):
    """joblib fallback: refit a clone of the estimator per fold for each permuted label vector."""
    from joblib import Parallel, delayed

    y, train, index, valid, B = plan.y, plan.train, plan.index, plan.valid, plan.n_permutations
    K = train.shape[0]
    n_classes = 0 if plan.classes is None else len(plan.classes)

    def run(yy):
        # yy: (n,) for permute="all", (K, n) for "train"; joblib may call this in
        # another thread, where the caller's scoped x64 flag does not apply
        with jax.enable_x64(True):
            return _run(yy)

    def _run(yy):
        f = np.zeros(index.shape)
        for k in range(K):
            yk = yy if yy.ndim == 1 else yy[k]
            v = valid[k]
            if n_classes:
                f[k, v] = sklearn_predictions(
                    plan.model, plan.X, yk, train[k], index[k, v], n_classes
                )
            else:
                f[k, v] = sklearn_outputs(plan.model, plan.X, yk, train[k], index[k, v])
        yt = (yy[index] if yy.ndim == 1 else y[index])[None]
        return np.asarray(
            fold_scores(
                jnp.asarray(f[None]),
                jnp.asarray(yt),
                jnp.asarray(valid),
                plan.scoring,
                plan.classification,
                n_classes,
            )
        )[0]

    def labels(b):
        if plan.perms is not None:
            return y[plan.perms[b]]
        k = jax.random.fold_in(plan.key, b)
        if plan.permute == "train":
            out = np.empty((K, y.shape[0]))
            for j in range(K):
                out[j] = _permute_within(
                    jax.random.fold_in(k, j),
                    y,
                    np.where(train[j], plan.strata, -1 - np.arange(y.shape[0])),
                )
            return out
        return _permute_within(k, y, plan.strata)

    obs = run(y)
    results = []
    mine = _mine(range(B))
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(run)(labels(b)) for b in mine)
    for i, r in enumerate(gen, start=1):
        results.append(r)
        if progress is not None:
            progress(i, len(mine))
    _distributed.WORK["labels"] += len(results)
    return obs, _distributed.gather_rows(np.stack(results) if results else np.zeros((0, len(obs))))


def _permute_within(key, y, strata):
    """``y`` permuted uniformly within each stratum (numpy; fallback path)."""
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())
    out = y.copy()
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        out[idx] = y[rng.permutation(idx)]
    return out
