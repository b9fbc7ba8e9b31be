"""Cross-validated scores of label vectors: the observed labels and every permuted vector alike."""

import jax.numpy as jnp

from jaxtests.kernels import measures as kmeasures


def count_scores(tp, fn, fp, tn, scoring):
    """Mean over folds of count-based scores; counts ``(B, K)`` float -> ``(B, S)``.

    Pure; the observed score and every permuted score are computed by this
    function, from confusion counts (the rows of
    :data:`jaxtests.kernels.measures.MEASURES`, a ratio's 0/0 scored 0), so
    equal counts give equal scores.
    """
    c = kmeasures.ConfusionCounts(tp, fn, fp, tn)
    out = [jnp.mean(kmeasures.measure(s).of_binary(c, 0.0), axis=-1) for s in scoring]
    return jnp.stack(out, axis=-1)


def matrix_scores(cm, scoring):
    """Mean over folds of confusion-matrix scores; ``cm : (B, K, C, C)`` -> ``(B, S)``.

    Pure; rows are the true class; the multiclass rows of
    :data:`jaxtests.kernels.measures.MEASURES` (scikit-learn's definitions).
    """
    c = kmeasures.class_counts(cm)
    out = [jnp.mean(kmeasures.measure(s).classes(c, 0.0, -1), axis=-1) for s in scoring]
    return jnp.stack(out, axis=-1)


def fold_scores(f, yt, valid, scoring, classification, n_classes=0):
    """Mean over folds of each score; ``f, yt : (B, K, m)``, ``valid : (K, m)`` -> ``(B, S)``.

    Pure; binary classification scores other than ``roc_auc`` go through
    :func:`count_scores`. ``n_classes > 0``: ``f`` and ``yt`` are class indices
    and the scores come from per-fold ``C x C`` confusion matrices
    (:func:`matrix_scores`).
    """
    v = valid[None]
    cnt = jnp.sum(valid, axis=-1).astype(f.dtype)[None]
    out = []
    if n_classes:
        cls = jnp.arange(n_classes, dtype=f.dtype).reshape(1, 1, 1, n_classes)
        T = ((yt[..., None] == cls) & v[..., None]).astype(f.dtype)
        P = (f[..., None] == cls).astype(f.dtype)
        return matrix_scores(jnp.einsum("bkmi,bkmj->bkij", T, P), scoring)
    if classification:
        t, p = yt > 0, f > 0
        tp = jnp.sum(v & t & p, -1, dtype=f.dtype)
        fn = jnp.sum(v & t & ~p, -1, dtype=f.dtype)
        fp = jnp.sum(v & ~t & p, -1, dtype=f.dtype)
        tn = jnp.sum(v & ~t & ~p, -1, dtype=f.dtype)
        for s in scoring:
            if kmeasures.measure(s).source == "counts":
                out.append(count_scores(tp, fn, fp, tn, (s,))[..., 0])
                continue
            # Mann-Whitney with ties 1/2, masked pairwise
            pos = v & t
            neg = v & ~t
            gt = (f[..., :, None] > f[..., None, :]).astype(f.dtype)
            eq = (f[..., :, None] == f[..., None, :]).astype(f.dtype)
            pair = (pos[..., :, None] & neg[..., None, :]).astype(f.dtype)
            val = jnp.sum(pair * (gt + 0.5 * eq), axis=(-2, -1)) / jnp.sum(pair, (-2, -1))
            out.append(jnp.mean(val, axis=-1))
    else:
        r = jnp.where(v, yt - f, 0.0)
        for s in scoring:
            if s == "neg_mean_squared_error":
                val = -jnp.sum(r * r, -1) / cnt
            elif s == "neg_mean_absolute_error":
                val = -jnp.sum(jnp.abs(r), -1) / cnt
            else:  # r2 on the test fold, as sklearn's r2_score
                ybar = jnp.sum(jnp.where(v, yt, 0.0), -1, keepdims=True) / cnt[..., None]
                sst = jnp.sum(jnp.where(v, (yt - ybar) ** 2, 0.0), -1)
                val = 1 - jnp.sum(r * r, -1) / sst
            out.append(jnp.mean(val, axis=-1))
    return jnp.stack(out, axis=-1)
