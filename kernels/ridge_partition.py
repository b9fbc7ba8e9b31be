"""The ridge classifier on k-fold splits for blocks of permuted binary label vectors.

:func:`ridge_partition` precomputes per-fold ridge systems once for folds whose
test sets partition the instances; :func:`ridge_partition_counts` gives each
fold's confusion counts for a block of label vectors (``labels``' packed
vectors, unpacked), products in the cheap order, float32 with a proven error
bound and a float64 recomputation of the label vectors whose decisions the
bound cannot settle. The fast path of ``permutation_test_score``. Pure; no
validation.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxtests.kernels import learners as klearners
from jaxtests.kernels.labels import label_slots, ranked_rows, running_count

__all__ = ["RidgePartition", "ridge_partition", "ridge_partition_counts"]

# True float32 products wherever a bound or an integer count assumes them: recent GPUs compute
# float32 dots in TF32 (10-bit mantissas) unless told otherwise.
_F32 = lax.Precision.HIGHEST


class RidgePartition(NamedTuple):
    """Per-fold ridge systems for folds whose test sets partition the instances.

    Fold ``k`` holds ``sizes[k]`` rows padded with zero rows to ``m =
    label_slots(sizes)``. ``XT : (K, 2 d + 1, m)`` float32: the rows (centred on
    the mean of all rows) split as ``x = hi + lo`` with ``hi`` on a grid coarse
    enough that any sum of at most ``m`` of them is exact in float32, then
    ``lo``, then a row of ones (zero on padding), transposed; ``err : (K,)``
    bounds the float32 error of the label sums that ``XT`` gives, carried to
    the decisions. ``xbar : (K, d)`` training means (training set ``k``: every
    row outside fold ``k``); ``M : (K, m, d)`` ``= 2 (X_k - xbar_k) A_k^-1``
    with ``A_k = Xc' Xc + alpha I`` over training set ``k``, so that a fold's
    test decisions are ``M_k T + ybar``; ``M32`` the same in float32 and
    ``norm1 : (K,)`` the largest L1 norm of its rows; ``n_train : (K,)``.
    """

    XT: jax.Array
    err: jax.Array
    xbar: jax.Array
    M: jax.Array
    M32: jax.Array
    norm1: jax.Array
    n_train: jax.Array


def ridge_partition(X, sizes, alpha, standardize=False, xp=jnp):
    """:class:`RidgePartition` for ``X : (n, d)`` in fold order with fold sizes ``sizes``.

    ``standardize``: ridge on features standardised on each training fold
    (:func:`_ridge_penalty`). ``xp``: ``jax.numpy``, or ``numpy`` for concrete ``X``
    on the host (nothing to compile; the arrays then are numpy's). Pure; no
    validation.
    """
    n, d = X.shape
    K, m = len(sizes), label_slots(sizes)
    X = X - xp.mean(X, axis=0)[None, :]
    fold = np.repeat(np.arange(K), sizes)
    offs = np.cumsum([0, *sizes])
    index = np.full((K, m), n)
    for k in range(K):
        index[k, : sizes[k]] = np.arange(offs[k], offs[k + 1])
    valid = xp.asarray(index < n)
    W = xp.asarray(fold[None, :] != np.arange(K)[:, None], X.dtype)  # (K, n)

    def one(w):
        xbar, sw = klearners._weighted_center(X, w, xp)
        Xc = X - xbar[None, :]
        A = (Xc * w[:, None]).T @ Xc + klearners._ridge_penalty(X, w, alpha, standardize, xp)
        return xbar, xp.linalg.inv(A), sw

    if xp is jnp:
        xbar, Ainv, n_train = jax.vmap(one)(W)
    else:
        xbar, Ainv, n_train = (xp.stack(v) for v in zip(*(one(w) for w in W), strict=True))
    Xp = xp.concatenate([X, xp.zeros((1, d), X.dtype)])[xp.asarray(index)]  # (K, m, d)
    # hi on the grid 2^(e - h), |x| <= 2^e: a sum of m such values is an integer
    # multiple of the grid below 2^24 grid steps, exact in float32
    h = 24 - int(m).bit_length()
    e = xp.ceil(xp.log2(xp.maximum(xp.max(xp.abs(Xp), axis=(0, 1)), 1e-300)))
    q = xp.exp2(e - h)[None, None, :]
    hi = xp.round(Xp / q) * q
    lo = (Xp - hi).astype(xp.float32)
    rest = Xp - hi - lo.astype(X.dtype)
    gamma = m * 2.0**-24 / (1 - m * 2.0**-24)
    # Higham's gamma_m for the float32 sum of lo, plus the part float32 lo drops
    e_sum = gamma * xp.sum(xp.abs(lo.astype(X.dtype)), axis=1) + xp.sum(xp.abs(rest), axis=1)
    e_T = xp.sum(e_sum, axis=0)[None, :] + e_sum  # (K, d): T_k = sum_all - S_k
    Xa = xp.concatenate([hi, lo.astype(X.dtype), valid[:, :, None].astype(X.dtype)], axis=-1)
    Xc = xp.where(valid[:, :, None], Xp - xbar[:, None, :], 0.0)
    M = 2 * xp.einsum("kmd,kde->kme", Xc, Ainv)
    err = 1.01 * xp.max(xp.abs(M) @ e_T[:, :, None], axis=(1, 2))
    # float32 M with a column for ybar: the product then adds the intercept too
    M32 = xp.concatenate([M, valid[:, :, None].astype(X.dtype)], axis=-1).astype(xp.float32)
    norm1 = xp.max(xp.sum(xp.abs(M32[:, :, :d].astype(X.dtype)), axis=-1), axis=-1)
    XT = xp.swapaxes(Xa, 1, 2).astype(xp.float32)
    return RidgePartition(XT, err, xbar, M, M32, norm1, n_train)


def ridge_partition_counts(part, positive, repair_rows=8):
    """Per-fold confusion counts of the ridge classifier for many permuted label vectors.

    ``positive : (K, m, R)`` float32 0/1 labels in fold-slot order (1 = +1,
    padding 0; ``m = label_slots(sizes)``, or fewer slots when the rest are
    padding in every fold); returns ``(tp,
    predicted_positive, positive)``, each ``(K, R)`` int32, on each fold's
    test set (prediction +1 iff the decision value is > 0, as scikit-learn's
    ``RidgeClassifier``). With 0/1 labels ``b`` and ``y = 2 b - 1``: ``Xc' W
    y = 2 (X_tr' b - xbar 1' b_tr)`` and ``ybar = 2 1' b_tr / n_tr - 1``, so
    one product ``[X_k 1]' b_k`` per fold (``d n`` operations per label vector
    in all) gives every fold's ``T = X_tr' b - xbar 1' b_tr`` and ``ybar``;
    the test decisions ``f = M_k T + ybar`` cost ``d n`` again. Both products
    are float32. The label sums are exact up to ``err_k`` (``x = hi + lo``,
    the ``hi`` sums exact, see :class:`RidgePartition`); the float32 decision
    differs from the float64 ``M_k T + ybar`` by at most ``(d + 4) u (|M_k|_1
    |T|_inf + |ybar|)`` with ``u = 2^-24`` (rounding of the inputs plus
    Higham's ``gamma_{d+1}`` for a dot product in any summation order), so its
    sign can differ from the sign of the decision of exact sums only when
    ``|f|`` is within that bound plus ``err_k``. A label vector with such a
    decision is recomputed with float64 decisions (``repair_rows`` vectors at
    a time): the counts are those of float64 arithmetic. Counts are summed by
    a float32 product with ones, exact for integers below ``2^24``. Pure; no
    validation.
    """
    dt = part.M.dtype
    d = part.M.shape[-1]
    mp, R = positive.shape[1:]
    if mp < part.M.shape[1]:  # trailing slots that are padding in every fold
        part = part._replace(XT=part.XT[:, :, :mp], M=part.M[:, :mp], M32=part.M32[:, :mp])
    S32 = jnp.einsum("kdm,kmr->kdr", part.XT, positive, precision=_F32)  # (K, 2 d + 1, R)
    S = S32[:, :d].astype(dt) + S32[:, d:-1].astype(dt)
    S1 = S32[:, -1].astype(dt)  # positives per test fold (exact integers)
    # sums over folds as explicit adds: XLA:CPU runs small float64 reductions slowly
    total, total1 = S[0], S1[0]
    for k in range(1, S.shape[0]):
        total, total1 = total + S[k], total1 + S1[k]
    T1 = total1[None, :] - S1  # positives per training set
    T = total[None] - S - part.xbar[:, :, None] * T1[:, None, :]
    c = 2 * T1 / part.n_train[:, None] - 1  # (K, R)
    Tc = jnp.concatenate([T, c[:, None, :]], axis=1).astype(jnp.float32)
    f = jnp.einsum("kmd,kdr->kmr", part.M32, Tc, precision=_F32)  # M_k T + ybar, float32
    # |T|_inf as a chain of maxima: XLA:CPU runs small float64 reductions slowly
    t_inf = jnp.abs(T[:, 0])
    for j in range(1, d):
        t_inf = jnp.maximum(t_inf, jnp.abs(T[:, j]))
    gamma = (d + 4) * 2.0**-24 * 1.01
    bound = gamma * (part.norm1[:, None] * t_inf + jnp.abs(c)) + part.err[:, None]
    # rounded up, and stored once: fused into its consumer, XLA would re-derive
    # it (a dozen float64 operations) for every decision (XLA drops barriers)
    bound = (bound * (1 + 2.0**-20)).astype(jnp.float32)
    bound = lax.cond(S1[0, 0] >= 0, lambda b: b, jnp.zeros_like, bound)
    # one float32 sum per fold: predicted positives + 1024 true positives
    # + 2^19 per decision within the bound (only its presence is used)
    one, big, zero = jnp.float32(1), jnp.float32(2.0**19), jnp.float32(0)
    code = jnp.where(f > zero, one + jnp.float32(1024) * positive, zero)
    code = code + jnp.where(jnp.abs(f) <= bound[:, None, :], big, zero)
    valid = part.XT[:, -1]  # (K, m) 1 on real slots
    tot = jnp.einsum("km,kmr->kr", valid, code, precision=_F32)
    unsure = jnp.any(tot >= 2.0**19, axis=0)  # (R,)
    tot = tot.astype(jnp.int32)
    tp, pp = tot // 1024, tot % 1024
    rank = running_count(unsure) - 1
    n_unsure = rank[-1] + 1

    def more(st):
        return st[0] * repair_rows < n_unsure

    def repair(st):
        i, tp, pp = st
        idx = ranked_rows(unsure, rank, i * repair_rows, repair_rows)
        take = jnp.minimum(idx, R - 1)
        f64 = jnp.einsum("kmd,kdr->kmr", part.M, T[:, :, take]) + c[:, take][:, None, :]
        p64 = (f64 > 0) & (valid[:, :, None] > 0)
        tp = tp.at[:, idx].set(
            jnp.sum(p64 & (positive[:, :, take] > 0), axis=1, dtype=jnp.int32), mode="drop"
        )
        pp = pp.at[:, idx].set(jnp.sum(p64, axis=1, dtype=jnp.int32), mode="drop")
        return i + 1, tp, pp

    _, tp, pp = lax.while_loop(more, repair, (jnp.zeros((), jnp.int32), tp, pp))
    return tp, pp, S1.astype(jnp.int32)
