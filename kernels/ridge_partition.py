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

__all__ = [
    "RidgePartition",
    "ridge_partition",
    "ridge_partition_counts",
    "tf32_decision_bound",
    "tf32_decisions",
]

# True float32 products wherever a bound or an integer count assumes them: recent GPUs compute
# float32 dots in TF32 (10-bit mantissas) unless told otherwise.
_F32 = lax.Precision.HIGHEST

# Which dots of the ridge label stream may take TF32 (issue 41). TF32 model: each input
# rounded to 11 significant bits (round to nearest even, or truncated: relative error
# below 2^-10 either way), the products of two such inputs exact in float32, their sum
# accumulated in float32 in any order, each addition with a relative error below 2^-22
# (round-to-nearest gives 2^-24, truncation 2^-23; tensor cores' multi-term adders,
# which align to the largest exponent and truncate, lose at most (n + 1) 2^-23 of the
# largest of n + 1 terms: at most 2^-22 per term of a sum of products in blocks n >= 1,
# Fasi, Higham, Mikaitis & Pranesh 2021, "Numerical behavior of NVIDIA tensor cores").
# - The decision dot f = M32 . Tc (K = d + 1 terms per lane): with S = sum_k |m_k| |t_k|
#   and P = sum_k m_k t_k exactly, a TF32 result f_t has |f_t - P| <= (2 v + v^2 + (1 +
#   v)^2 gamma_K(2^-22)) S with v = 2^-10 (each product within (2 v + v^2) |m_k t_k|, the
#   float32 sum of K products within gamma_K(2^-22) of their sum, Higham 2002, 3.1), and a
#   true float32 result f_h has |f_h - P| <= gamma_K(2^-24) S; so |f_t - f_h| is within
#   their sum (:func:`tf32_decision_bound`). S comes from the same fast dot of |m| and |t|
#   (nonnegative terms: its result is at least (1 - v)^2 (1 - gamma_K(2^-22)) S). With E
#   that bound and b today's band (a lane with |f| <= b sends its label vector to the
#   float64 repair, which overwrites every count of that vector): a lane with |f_t| > b +
#   E is outside the band with f_h's sign; one with |f_t| < b - E is inside, as with f_h;
#   the others are recomputed with the true float32 dot. So every lane is in or out of
#   the band as with f_h, every lane out of it has f_h's sign: the counts of f_h.
# - The label sums [X_k 1]' b: exact only for inputs on the 2^(e - h) grid of
#   `ridge_partition`, up to 24 - bit_length(m) bits; TF32 keeps 11: HIGHEST.
# - The count dot valid . code (values up to 2^19 + 1025, 20 bits): HIGHEST.
# - Integer dots of kernels/labels.py (`cum`, `running_count`): TF32 would be exact only
#   while every input is an integer below 2^11 and every sum below 2^24; counts up to
#   32 w and R exceed 2^11: HIGHEST.
_TF32_INPUT = 2.0**-10  # relative rounding of an input to 11 significant bits (RNE or truncation)
_TF32_ADD = 2.0**-22  # relative error of one float32 addition of the accumulation
_RECHECK_SHARE = 32  # at most 1 / this of a block's lanes gathered for the recheck


def _gamma(k, u):
    """Higham's ``gamma_k = k u / (1 - k u)``."""
    return k * u / (1 - k * u)


def tf32_decision_bound(K):
    """``c`` with ``|f_t - f_h| <= c sum_k |m_k| |t_k|`` for a ``K``-term float32 dot.

    ``f_t`` a TF32 result (the model above :func:`tf32_decisions`), ``f_h`` a true
    float32 one (any summation order).
    """
    v = _TF32_INPUT
    return 2 * v + v * v + (1 + v) ** 2 * _gamma(K, _TF32_ADD) + _gamma(K, 2.0**-24)


def tf32_decisions(M32, Tc):
    """``(K, m, R)`` decisions ``M32 Tc`` in the platform's fast float32 (TF32 on NVIDIA GPUs).

    Within :func:`tf32_decision_bound` of the true float32 product. Pure; no validation.
    """
    return jnp.einsum("kmd,kdr->kmr", M32, Tc, precision=lax.Precision.DEFAULT)


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


def ridge_partition_counts(part, positive, repair_rows=8, decision_fn=None):
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
    a float32 product with ones, exact for integers below ``2^24``.

    ``decision_fn``: None, the decisions by a true float32 product; else a
    function ``(M32, Tc) -> f`` within :func:`tf32_decision_bound` of it
    (:func:`tf32_decisions`), whose lanes that could fall on the other side of
    the bound above, or of 0, are recomputed with the true float32 product
    (:func:`_rechecked`): every lane is within the bound or not, and outside it
    has the sign, as with the true float32 product, so the counts are its
    counts (and today's wherever the gathered products round as the full
    one). Pure; no validation.
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
    # Per decision: |f - (M_k T + ybar)| <= gamma_{d+4} (sum_j |m_j| |t_j| + |ybar|) + err_k
    # (the inputs' rounding to float32 and a (d + 1)-term dot in any order). The sum comes
    # from the same dot of |M32|, |Tc|, nonnegative terms, which is at least `lower` of it:
    # the bound of a column max (|M_k|_1 |T|_inf) overstated it a thousandfold on features of
    # unequal scales, so that every label vector of breast cancer had a decision within it and
    # was decided again in float64, 8 at a time (an H200, 2026-11-28: 12,544 steps of that
    # loop were 0.45 s of 10^5 permutations).
    n_terms = d + 1
    if decision_fn is None:
        f = jnp.einsum("kmd,kdr->kmr", part.M32, Tc, precision=_F32)  # M_k T + ybar, float32
        size = jnp.einsum("kmd,kdr->kmr", jnp.abs(part.M32), jnp.abs(Tc), precision=_F32)
        lower = 1 - _gamma(n_terms + 1, 2.0**-24)  # n_terms products and adds, rounded
    else:
        f = decision_fn(part.M32, Tc)
        size = decision_fn(jnp.abs(part.M32), jnp.abs(Tc))
        lower = (1 - _TF32_INPUT) ** 2 * (1 - _gamma(n_terms, _TF32_ADD))
    lower *= (1 - 2.0**-24) ** 2  # |M32| |Tc| against |M| |T|: both rounded to float32
    scale = jnp.float32(_gamma(d + 4, 2.0**-24) / lower * 1.01)  # 1.01: the float32 ops here
    err = (part.err * (1 + 2.0**-20)).astype(jnp.float32)  # rounded up
    bound = scale * size + err[:, None, None]  # (K, m, R)
    if decision_fn is not None:
        # a TF32 decision is within `near` of the true float32 one (the dot above, of
        # nonnegative terms, is at least (1 - 2^-10)^2 (1 - gamma) of sum |m_k| |t_k|): only
        # the lanes near the band's edge or near 0 can decide otherwise than f_h. A lane deep
        # inside the band is inside for f_h too (its sign is never read: its vector is
        # repaired), one far outside has f_h's sign (1%: float32 rounding of the edges)
        near = jnp.float32(tf32_decision_bound(n_terms) / lower * 1.01) * size
        a = jnp.abs(f)
        flag = (a <= bound * jnp.float32(1.01) + near) & (a >= bound * jnp.float32(0.99) - near)
        # padding lanes: their rows of M32 are zero, so f_t = f_h = 0 there
        f = _rechecked(part.M32, Tc, f, flag & (part.XT[:, -1][:, :, None] > 0))
    # one float32 sum per fold: predicted positives + 1024 true positives
    # + 2^19 per decision within the bound (only its presence is used)
    one, big, zero = jnp.float32(1), jnp.float32(2.0**19), jnp.float32(0)
    code = jnp.where(f > zero, one + jnp.float32(1024) * positive, zero)
    code = code + jnp.where(jnp.abs(f) <= bound, big, zero)
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


def _rechecked(M32, Tc, f, flag):
    """``f`` with its lanes ``flag`` replaced by true float32 products ``M32 Tc``.

    ``M32 : (K, m, d + 1)``, ``Tc : (K, d + 1, R)``, ``f, flag : (K, m, R)``. The
    lanes are gathered, up to ``1 / _RECHECK_SHARE`` of them (more, and the
    whole product is recomputed).
    """
    K, m, R = f.shape
    n = K * m * R
    cap = max(1, n // _RECHECK_SHARE)
    flag = flag.reshape(-1)

    def gathered(f):
        (idx,) = jnp.nonzero(flag, size=cap, fill_value=n)
        at = jnp.minimum(idx, n - 1)
        k, i, r = at // (m * R), at // R % m, at % R
        exact = jnp.einsum("ld,ld->l", M32[k, i], Tc[k, :, r], precision=_F32)
        return f.reshape(-1).at[idx].set(exact, mode="drop").reshape(K, m, R)

    def everything(f):
        full = jnp.einsum("kmd,kdr->kmr", M32, Tc, precision=_F32)
        return jnp.where(flag.reshape(K, m, R), full, f)

    n_flag = jnp.sum(flag, dtype=jnp.int32)
    return lax.cond(n_flag > cap, everything, gathered, f)
