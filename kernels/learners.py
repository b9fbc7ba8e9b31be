"""Built-in learners as pure fit/decision pairs that vmap over folds and label vectors.

Every learner is a pair ``<name>_fit(X, y, w, ...) -> params`` and
``<name>_decision(params, Z) -> f``. Shapes: ``X : (n, d)``, ``y : (n,)`` (±1
labels for classifiers), ``w : (n,)`` training weights, 0/1 in cross-validation:
instances with ``w = 0`` are left out of the fit, so every fold of a
cross-validation has the same static shapes and one ``vmap`` over ``(y, w)``
fits all folds (and all permuted label vectors) at once. ``Z : (m, d)``;
``f : (m,)`` is a decision value (positive = class +1) for classifiers and a
prediction for regressors. Hyper-parameters are plain numbers (static under
``jit``). Pure; no validation.

Multiclass fits (section "multiclass") take class indices ``y`` in ``0 .. C -
1`` with a static ``C`` and give class scores ``(m, C)`` whose argmax is the
prediction.

The label-permutation test's samplers and ridge fast path live beside them:
``jaxtests.kernels.labels`` (permuted binary label vectors) and
``jaxtests.kernels.ridge_partition``.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "KernelMachine",
    "LinearModel",
    "class_weights",
    "gamma_scale",
    "gram",
    "knn_decision",
    "knn_fit",
    "knn_votes",
    "lda_fit",
    "lda_multiclass_fit",
    "linear_decision",
    "linear_scores",
    "logistic_fit",
    "logistic_multinomial_fit",
    "nearest_centroid_fit",
    "nearest_centroid_multiclass_fit",
    "ovo_pairs",
    "ovo_votes",
    "qda_decision",
    "qda_fit",
    "qda_multiclass_fit",
    "qda_scores",
    "ridge_fit",
    "ridge_fold_decisions",
    "ridge_ovr_fit",
    "smo_finish",
    "smo_init",
    "smo_running",
    "smo_solve",
    "smo_steps",
    "standardize_fit",
    "svc_fit",
    "svc_machine",
    "svc_problem",
    "svm_decision",
    "svr_fit",
    "svr_machine",
    "svr_problem",
]


class LinearModel(NamedTuple):
    """``f(z) = z @ coef + intercept``."""

    coef: jax.Array
    intercept: jax.Array


def linear_decision(params, Z):
    """Decision values ``Z @ coef + intercept``; ``Z : (m, d)`` -> ``(m,)``."""
    return Z @ params.coef + params.intercept


def standardize_fit(X, w, xp=jnp):
    """Training-weighted mean and scale of each feature (scikit-learn's ``StandardScaler``).

    ``X : (n, d)``, ``w : (n,)`` -> ``(mean, scale)``, each ``(d,)``: the
    weighted mean and population standard deviation (``ddof = 0``) of the rows
    with ``w > 0``; a constant feature gets scale 1 (as ``StandardScaler``).
    Apply as ``(X - mean) / scale``. ``xp``: ``jax.numpy``, or ``numpy`` for
    concrete data on the host. Pure; no validation.
    """
    # elementwise products and axis-0 sums, not ``w @ X``: under vmap a matrix
    # product becomes a GEMM whose rounding can differ from the single fit's
    sw = xp.sum(w)
    mean = xp.sum(w[:, None] * X, axis=0) / sw
    var = xp.sum(w[:, None] * xp.square(X - mean[None, :]), axis=0) / sw
    # StandardScaler's constant-feature test (Chan, Golub & LeVeque's bound on
    # the rounding of the two-pass variance): such a feature keeps scale 1
    eps = xp.finfo(X.dtype).eps
    constant = var <= sw * eps * var + (sw * mean * eps) ** 2
    return mean, xp.where(constant, 1, xp.sqrt(xp.where(constant, 1, var)))


def _weighted_center(X, w, xp=jnp):
    sw = xp.sum(w)
    xbar = (w @ X) / sw
    return xbar, sw


# ---------------------------------------------------------------- ridge


def ridge_fit(X, y, w, alpha, xp=jnp):
    """Ridge regression with an unpenalised intercept (scikit-learn's ``Ridge``).

    Minimises ``sum_i w_i (y_i - b - x_i'beta)^2 + alpha |beta|^2``: centre X and y
    with the weighted training means, solve ``(Xc' W Xc + alpha I) beta = Xc' W yc``.
    With ±1 labels and the sign of ``f`` this is ``RidgeClassifier``. ``xp``: the
    array namespace (``numpy`` raises ``LinAlgError`` on a singular system).
    """
    xbar, sw = _weighted_center(X, w, xp)
    ybar = (w @ y) / sw
    Xc = X - xbar[None, :]
    A = (Xc * w[:, None]).T @ Xc + alpha * xp.eye(X.shape[1], dtype=X.dtype)
    beta = xp.linalg.solve(A, Xc.T @ (w * (y - ybar)))
    return LinearModel(beta, ybar - xbar @ beta)


def _ridge_penalty(X, w, alpha, standardize, xp=jnp):
    """The ``(d, d)`` penalty of a ridge fit on the raw features ``X`` (rows ``w > 0``).

    ``alpha I``; with ``standardize``, ``alpha diag(scale^2)`` with the training
    rows' :func:`standardize_fit` scale: ridge on standardised features with an
    unpenalised intercept, ``alpha |beta_s|^2`` with ``beta_s = scale * beta``,
    written in the raw coordinates (the same decision values, scikit-learn's
    ``make_pipeline(StandardScaler(), Ridge(alpha))``).
    """
    d = X.shape[1]
    if not standardize:
        return alpha * xp.eye(d, dtype=X.dtype)
    _, scale = standardize_fit(X, w, xp)
    return xp.diag(alpha * xp.square(scale).astype(X.dtype))


def ridge_fold_decisions(X, Y, train, test_index, alpha, standardize=False, xp=jnp):
    """Ridge decision values on each fold's test instances for many label vectors.

    The fit is linear in the labels, so the products are taken in the cheap
    order (about ``d n`` operations per label vector and fold instead of a
    ``(m, n)`` hat matrix): ``T = X_tr' y`` and ``1' y_tr`` for all label
    vectors at once, then ``beta = A^-1 (T - xbar 1'y)`` with the fold's
    centred ``(d, d)`` system ``A = Xc' W Xc + P`` solved once, and
    ``f = (x - xbar)' beta + ybar``; ``P = alpha I``, or with ``standardize``
    the fold's :func:`_ridge_penalty` (ridge on features standardised on the
    training fold). ``X : (n, d)``; ``Y : (B, n)`` or ``(B, K, n)`` (per-fold
    labels); ``train : (K, n)`` 0/1 weights; ``test_index : (K, m)`` ->
    ``(B, K, m)``. ``xp``: ``jax.numpy``, or ``numpy`` for concrete data on the host
    (raises ``LinAlgError`` on a singular system). Pure; no validation.
    """
    X = X - xp.mean(X, axis=0)[None, :]  # global centring: same fit, smaller sums

    def one_fold(w, idx, Yk):
        xbar, sw = _weighted_center(X, w, xp)
        Xc = X - xbar[None, :]
        A = (Xc * w[:, None]).T @ Xc + _ridge_penalty(X, w, alpha, standardize, xp)
        T1 = Yk @ w  # (B,) label sums over the training set
        T = Yk @ (X * w[:, None]) - T1[:, None] * xbar[None, :]  # (B, d) = Xc' W y
        beta = xp.linalg.solve(A, T.T)  # (d, B)
        return (X[idx] - xbar[None, :]) @ beta + (T1 / sw)[None, :]  # (m, B)

    if xp is not jnp:
        folds = range(train.shape[0])
        Ys = [Y if Y.ndim == 2 else Y[:, k] for k in folds]
        out = xp.stack([one_fold(train[k], test_index[k], Ys[k]) for k in folds])
    elif Y.ndim == 2:
        out = jax.vmap(lambda w, idx: one_fold(w, idx, Y))(train, test_index)
    else:
        out = jax.vmap(one_fold, in_axes=(0, 0, 1))(train, test_index, Y)
    return xp.transpose(out, (2, 0, 1))


# ---------------------------------------------------------------- discriminants


def _class_stats(X, y, w, xp=jnp):
    wp = w * (y > 0).astype(w.dtype)
    wn = w * (y <= 0).astype(w.dtype)
    n_p, n_n = xp.sum(wp), xp.sum(wn)
    mu_p = (wp @ X) / n_p
    mu_n = (wn @ X) / n_n
    return wp, wn, n_p, n_n, mu_p, mu_n


def lda_fit(X, y, w, reg, xp=jnp):
    """Binary linear discriminant (scikit-learn ``LinearDiscriminantAnalysis(solver="lsqr")``).

    Pooled covariance ``S = sum_c pi_c S_c`` with ``S_c`` the biased class
    covariance (scikit-learn's convention), plus ``reg * I``; the decision is the
    log posterior ratio ``(mu+ - mu-)' S^-1 (x - (mu+ + mu-)/2) + log(pi+/pi-)``.
    """
    wp, wn, n_p, n_n, mu_p, mu_n = _class_stats(X, y, w, xp)
    n = n_p + n_n
    Rp = (X - mu_p[None, :]) * wp[:, None]
    Rn = (X - mu_n[None, :]) * wn[:, None]
    S = (Rp.T @ (X - mu_p[None, :]) + Rn.T @ (X - mu_n[None, :])) / n
    S = S + reg * xp.eye(X.shape[1], dtype=X.dtype)
    coef = xp.linalg.solve(S, mu_p - mu_n)
    intercept = -0.5 * (mu_p + mu_n) @ coef + xp.log(n_p / n_n)
    return LinearModel(coef, intercept)


class QDAModel(NamedTuple):
    """Per-class means, Cholesky factors of the covariances and log-priors (+1 class first)."""

    means: jax.Array
    chol: jax.Array
    log_prior: jax.Array


def qda_fit(X, y, w, reg_param):
    """Binary quadratic discriminant (scikit-learn ``QuadraticDiscriminantAnalysis``).

    Class covariances are the biased (``1/n_c``) estimates, shrunk as
    ``(1 - reg_param) S_c + reg_param I``, the convention of scikit-learn's
    ``reg_param`` since 1.8 (its SVD solver divides by ``n_c``).
    """
    wp, wn, n_p, n_n, mu_p, mu_n = _class_stats(X, y, w)
    eye = jnp.eye(X.shape[1], dtype=X.dtype)

    def cov(wc, nc, mu):
        R = X - mu[None, :]
        S = (R * wc[:, None]).T @ R / nc
        return jnp.linalg.cholesky((1 - reg_param) * S + reg_param * eye)

    n = n_p + n_n
    return QDAModel(
        jnp.stack([mu_p, mu_n]),
        jnp.stack([cov(wp, n_p, mu_p), cov(wn, n_n, mu_n)]),
        jnp.log(jnp.stack([n_p / n, n_n / n])),
    )


def qda_decision(params, Z):
    """Log posterior ratio ``log p(+1 | z) - log p(-1 | z)``; ``Z : (m, d)`` -> ``(m,)``."""

    def score(mu, L, lp):
        r = jax.scipy.linalg.solve_triangular(L, (Z - mu[None, :]).T, lower=True)
        logdet = 2 * jnp.sum(jnp.log(jnp.diagonal(L)))
        return -0.5 * (jnp.sum(r * r, axis=0) + logdet) + lp

    s = jax.vmap(score)(params.means, params.chol, params.log_prior)
    return s[0] - s[1]


def nearest_centroid_fit(X, y, w, xp=jnp):
    """Nearest centroid: ``f(z) = |z - mu-|^2 - |z - mu+|^2`` (positive: closer to +1).

    The difference of squared distances is linear in ``z``.
    """
    _, _, _, _, mu_p, mu_n = _class_stats(X, y, w, xp)
    return LinearModel(2 * (mu_p - mu_n), mu_n @ mu_n - mu_p @ mu_p)


# ---------------------------------------------------------------- k-NN


class KNNModel(NamedTuple):
    """Training instances, labels and weights (0 = not in the training set)."""

    X: jax.Array
    y: jax.Array
    w: jax.Array


def knn_fit(X, y, w):
    """k-nearest neighbours keeps the training set (``w > 0``)."""
    return KNNModel(X, y, w)


def knn_decision(params, Z, k):
    """Mean label of the ``k`` nearest training instances (Euclidean); in ``[-1, 1]``.

    Equals ``2 p - 1`` with ``p`` scikit-learn's uniform-weight ``predict_proba``
    of class +1. Uses ``lax.top_k``, not a full sort.
    """
    return jnp.mean(params.y[_knn_neighbours(params, Z, k)], axis=-1)


def _knn_neighbours(params, Z, k):
    """Indices ``(m, k)`` of the ``k`` nearest training instances (``w > 0``) of each row."""
    d2 = (
        jnp.sum(Z * Z, axis=1)[:, None]
        - 2 * Z @ params.X.T
        + jnp.sum(params.X * params.X, axis=1)[None, :]
    )
    d2 = jnp.where(params.w[None, :] > 0, d2, jnp.inf)
    _, idx = lax.top_k(-d2, k)
    return idx


# ---------------------------------------------------------------- logistic


def logistic_fit(X, y, w, C, n_iter, tol=1e-10):
    """L2 logistic regression by Newton (IRLS) steps from zero, at most ``n_iter``.

    Minimises ``C sum_i w_i log(1 + exp(-y_i f_i)) + |beta|^2 / 2`` with an
    unpenalised intercept, scikit-learn's ``LogisticRegression(C=C)`` objective.
    The L2 term makes the objective strongly convex and undamped Newton from
    zero converges quadratically near the optimum. The loop stops once a step
    moves no coefficient by more than ``tol (1 + max|theta|)``: the next step
    would change the fit at round-off level only. Under ``vmap`` each member
    stops at its own step, so a fit does not depend on its batch. The Hessian
    ``Xa' diag(s) Xa`` is one product ``s @ O`` with the upper triangles of the
    row-wise outer products ``O = (x_i x_i')`` (``(n, D (D + 1) / 2)``, shared by
    all fits of a batch): a single large matrix product when vmapped over folds
    and label vectors. Newton systems are solved by Cholesky.
    """
    d = X.shape[1]
    D = d + 1
    Xa, O, sym = _augmented_products(X)
    pen = jnp.concatenate([jnp.ones(d, X.dtype), jnp.zeros(1, X.dtype)]) / C
    # intercept-only data (all w y equal) keeps H positive definite via pen on beta
    ridge = jnp.diag(pen) + 1e-12 * jnp.eye(D, dtype=X.dtype)

    def step(theta):
        f = Xa @ theta
        p = jax.nn.sigmoid(-y * f)  # derivative of the log-loss wrt -y f
        g = pen * theta - (w * y * p) @ Xa
        H = ((w * p * (1 - p)) @ O)[sym] + ridge
        return theta - jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(H), True), g)

    theta = _newton(step, jnp.zeros(D, X.dtype), n_iter, tol)
    return LinearModel(theta[:d], theta[d])


def _augmented_products(X):
    """``Xa = [X, 1]``, its products ``O[:, u] = Xa_r Xa_c`` over the upper triangle
    ``u = (r, c)`` and the ``(D, D)`` index ``sym`` of each ``(r, c)`` in ``u``: the
    Hessian ``sum_i s_i xa_i xa_i'`` of a logistic loss is ``(s @ O)[sym]``."""
    n, d = X.shape
    D = d + 1
    Xa = jnp.concatenate([X, jnp.ones((n, 1), X.dtype)], axis=1)
    rows, cols = np.triu_indices(D)
    O = Xa[:, rows] * Xa[:, cols]  # (n, D (D + 1) / 2)
    sym = np.zeros((D, D), np.int64)
    sym[rows, cols] = np.arange(rows.size)
    sym[cols, rows] = np.arange(rows.size)
    return Xa, O, sym


def _newton(step, theta0, n_iter, tol):
    """Iterate ``theta <- step(theta)`` until no coefficient moves by more than ``tol``
    relative to the largest, or ``n_iter`` steps."""

    def cond(st):
        _, moved, it = st
        return (it < n_iter) & (moved > 0)

    def body(st):
        theta, _, it = st
        new = step(theta)
        moved = jnp.max(jnp.abs(new - theta)) > tol * (1 + jnp.max(jnp.abs(new)))
        return new, moved.astype(theta.dtype), it + 1

    init = (theta0, jnp.ones((), theta0.dtype), jnp.zeros((), jnp.int32))
    theta, _, _ = lax.while_loop(cond, body, init)
    return theta


# ---------------------------------------------------------------- kernel machines


def gamma_scale(X, w):
    """scikit-learn's ``gamma="scale"``: ``1 / (d var)``, 1 where ``var = 0``.

    ``var`` is the population variance of all ``n_train * d`` entries of the training
    rows (``w > 0``, weighted by ``w``) of ``X : (n, d)``, as ``X.var()`` in
    scikit-learn's ``SVC.fit``; a scalar of ``X``'s dtype. Pure; no validation.
    """
    d = X.shape[1]
    wx = w[:, None]  # elementwise weights, not ``w @ X``: vmap-stable rounding
    sw = jnp.sum(w) * d
    mean = jnp.sum(wx * X) / sw
    var = jnp.sum(wx * jnp.square(X - mean)) / sw
    return jnp.where(var > 0, 1 / (d * jnp.where(var > 0, var, 1)), 1).astype(X.dtype)


def gram(A, B, kernel, degree, gamma, coef0, normalize):
    """Kernel matrix ``(m, p)`` between ``A : (m, d)`` and ``B : (p, d)``.

    ``kernel`` is ``"linear"`` (``a'b``), ``"poly"`` (``(gamma a'b + coef0)^degree``)
    or ``"rbf"`` (``exp(-gamma |a - b|^2)``); ``gamma`` may be traced (a scalar, e.g.
    :func:`gamma_scale` of a fold). With ``normalize`` the kernel is
    ``k(a, b) / sqrt(k(a, a) k(b, b))`` so that every kernel has unit diagonal
    and the discriminants have the same scale (Yildiz & Alpaydin, Section 3).
    """
    if kernel == "rbf":
        d2 = jnp.sum(A * A, axis=1)[:, None] - 2 * A @ B.T + jnp.sum(B * B, axis=1)[None, :]
        return jnp.exp(-gamma * jnp.maximum(d2, 0))  # already unit diagonal
    if kernel == "linear":
        K = A @ B.T
        ka, kb = jnp.sum(A * A, axis=1), jnp.sum(B * B, axis=1)
    else:  # poly
        K = (gamma * (A @ B.T) + coef0) ** degree
        ka = (gamma * jnp.sum(A * A, axis=1) + coef0) ** degree
        kb = (gamma * jnp.sum(B * B, axis=1) + coef0) ** degree
    if normalize:
        K = K / jnp.sqrt(ka[:, None] * kb[None, :])
    return K


class SMOState(NamedTuple):
    alpha: jax.Array
    grad: jax.Array
    gap: jax.Array
    it: jax.Array


def _violation(alpha, grad, s, ub, active):
    """LIBSVM's working-set quantities: ``-s G`` and the I_up / I_low masks."""
    v = -s * grad
    up = active & (((s > 0) & (alpha < ub)) | ((s < 0) & (alpha > 0)))
    low = active & (((s < 0) & (alpha < ub)) | ((s > 0) & (alpha > 0)))
    return v, up, low


def _gap(alpha, grad, s, ub, active):
    big = jnp.asarray(jnp.inf, grad.dtype)
    v, up, low = _violation(alpha, grad, s, ub, active)
    return jnp.max(jnp.where(up, v, -big)) - jnp.min(jnp.where(low, v, big))


def smo_init(p, s, ub):
    """The SMO state at ``alpha = 0`` (gradient ``p``); ``p, s, ub : (N,)``."""
    alpha0 = jnp.zeros_like(p)
    return SMOState(alpha0, p, _gap(alpha0, p, s, ub, ub > 0), jnp.zeros((), jnp.int32))


def smo_running(state, tol, max_iter):
    """Whether :func:`smo_steps` would take another step from ``state``."""
    return (state.gap > tol) & (state.it < max_iter)


def smo_steps(Q, s, ub, state, tol, max_iter, n_steps=None):
    """SMO steps from ``state`` until the KKT gap is below ``tol`` or ``max_iter`` steps.

    ``n_steps`` (traced), if given, also stops after that many more steps, so a
    long solve can run in host-level calls (Ctrl-C acts between them); a step
    never depends on where the calls were cut. See :func:`smo_solve`.
    """
    active = ub > 0
    big = jnp.asarray(jnp.inf, Q.dtype)

    def body(st):
        alpha, grad = st.alpha, st.grad
        v, up, low = _violation(alpha, grad, s, ub, active)
        i = jnp.argmax(jnp.where(up, v, -big))
        j = jnp.argmin(jnp.where(low, v, big))
        a = Q[i, i] + Q[j, j] - 2 * s[i] * s[j] * Q[i, j]
        a = jnp.maximum(a, 1e-12)
        t = (v[i] - v[j]) / a
        t_i = jnp.where(s[i] > 0, ub[i] - alpha[i], alpha[i])
        t_j = jnp.where(s[j] > 0, alpha[j], ub[j] - alpha[j])
        t = jnp.clip(jnp.minimum(t, jnp.minimum(t_i, t_j)), 0)
        di, dj = t * s[i], -t * s[j]
        alpha = alpha.at[i].add(di).at[j].add(dj)
        # clamp round-off at the box
        alpha = jnp.clip(alpha, 0, ub)
        grad = grad + di * Q[:, i] + dj * Q[:, j]
        return SMOState(alpha, grad, _gap(alpha, grad, s, ub, active), st.it + 1)

    if n_steps is None:
        return lax.while_loop(lambda st: smo_running(st, tol, max_iter), body, state)

    def cond(carry):
        st, k = carry
        return smo_running(st, tol, max_iter) & (k < n_steps)

    state, _ = lax.while_loop(cond, lambda c: (body(c[0]), c[1] + 1), (state, jnp.int32(0)))
    return state


def smo_finish(s, ub, state):
    """``(alpha, rho, gap, n_iter)`` of a final SMO state, with LIBSVM's ``rho``."""
    alpha, grad = state.alpha, state.grad
    active = ub > 0
    big = jnp.asarray(jnp.inf, grad.dtype)
    # LIBSVM's calculate_rho
    sg = s * grad
    free = active & (alpha > 0) & (alpha < ub)
    at_ub = active & (alpha >= ub)
    at_lb = active & (alpha <= 0)
    ub_set = (at_ub & (s < 0)) | (at_lb & (s > 0))
    lb_set = (at_ub & (s > 0)) | (at_lb & (s < 0))
    r_ub = jnp.min(jnp.where(ub_set, sg, big))
    r_lb = jnp.max(jnp.where(lb_set, sg, -big))
    n_free = jnp.sum(free, dtype=grad.dtype)
    rho = jnp.where(
        n_free > 0,
        jnp.sum(jnp.where(free, sg, 0)) / jnp.maximum(n_free, 1),
        (r_ub + r_lb) / 2,
    )
    return alpha, rho, state.gap, state.it


def smo_solve(Q, p, s, ub, tol, max_iter):
    """SMO for ``min a'Qa/2 + p'a`` s.t. ``s'a = 0``, ``0 <= a <= ub`` (LIBSVM's dual).

    ``Q : (N, N)`` with ``Q = (s s') * K``; ``p, s, ub : (N,)``; variables with
    ``ub = 0`` are fixed at zero (left-out instances). Each step takes LIBSVM's
    maximal violating pair (Keerthi et al. 2001, WSS1) and moves it along the
    feasible direction ``(s_i, -s_j)`` by the clipped exact line-search step;
    the ``lax.while_loop`` stops when the KKT gap ``max_up(-sG) - min_low(-sG)``
    falls below ``tol`` or after ``max_iter`` steps (batched under vmap, it runs
    until every member has stopped). Returns ``(alpha, rho, gap, n_iter)`` with
    LIBSVM's ``rho`` (mean of ``s G`` over free variables). The same as
    :func:`smo_init`, :func:`smo_steps` and :func:`smo_finish` in turn.
    """
    return smo_finish(s, ub, smo_steps(Q, s, ub, smo_init(p, s, ub), tol, max_iter))


class KernelMachine(NamedTuple):
    """``f(z) = sum_i coef_i k(x_i, z) + intercept`` over the training instances."""

    X: jax.Array
    coef: jax.Array
    intercept: jax.Array
    gap: jax.Array
    n_iter: jax.Array


def svc_problem(X, y, w, C, kernel, degree, gamma, coef0, normalize):
    """The C-SVC dual of :func:`svc_fit` as ``(Q, p, s, ub)`` for :func:`smo_solve`."""
    K = gram(X, X, kernel, degree, gamma, coef0, normalize)
    Q = (y[:, None] * y[None, :]) * K
    return Q, -jnp.ones_like(y), y, C * w


def svc_machine(X, s, alpha, rho, gap, it):
    """The :class:`KernelMachine` of a solved :func:`svc_problem` (``s`` its labels)."""
    return KernelMachine(X, alpha * s, -rho, gap, it)


def svc_fit(X, y, w, C, kernel, degree, gamma, coef0, normalize, tol, max_iter):
    """Support vector classifier on the hinge loss (LIBSVM's C-SVC dual, Yildiz & Alpaydin).

    ``min a'Qa/2 - 1'a`` with ``Q = (y y') * K``, ``y'a = 0``, ``0 <= a <= C w``.
    """
    Q, p, s, ub = svc_problem(X, y, w, C, kernel, degree, gamma, coef0, normalize)
    return svc_machine(X, s, *smo_solve(Q, p, s, ub, tol, max_iter))


def svr_problem(X, y, w, C, epsilon, kernel, degree, gamma, coef0, normalize):
    """The eps-SVR dual of :func:`svr_fit` as ``(Q, p, s, ub)`` (``2n`` variables)."""
    K = gram(X, X, kernel, degree, gamma, coef0, normalize)
    n = y.shape[0]
    s = jnp.concatenate([jnp.ones(n, y.dtype), -jnp.ones(n, y.dtype)])
    K2 = jnp.tile(K, (2, 2))
    Q = (s[:, None] * s[None, :]) * K2
    p = jnp.concatenate([epsilon - y, epsilon + y])
    ub = jnp.concatenate([C * w, C * w])
    return Q, p, s, ub


def svr_machine(X, s, alpha, rho, gap, it):
    """The :class:`KernelMachine` of a solved :func:`svr_problem`: ``coef = a - a*``."""
    n = X.shape[0]
    return KernelMachine(X, alpha[:n] - alpha[n:], -rho, gap, it)


def svr_fit(X, y, w, C, epsilon, kernel, degree, gamma, coef0, normalize, tol, max_iter):
    """Support vector regression on the epsilon-insensitive loss (LIBSVM's eps-SVR dual).

    Variables ``(a, a*)`` of size ``2n`` with signs ``s = (1, -1)``,
    ``p = (eps - y, eps + y)`` and ``Q = (s s') * [[K, K], [K, K]]``; the
    coefficients are ``a - a*`` (Yildiz & Alpaydin, eq. 4).
    """
    Q, p, s, ub = svr_problem(X, y, w, C, epsilon, kernel, degree, gamma, coef0, normalize)
    return svr_machine(X, s, *smo_solve(Q, p, s, ub, tol, max_iter))


def svm_decision(params, Z, kernel, degree, gamma, coef0, normalize):
    """Kernel-machine decision values ``(m,)`` at ``Z : (m, d)``."""
    return gram(Z, params.X, kernel, degree, gamma, coef0, normalize) @ params.coef + (
        params.intercept
    )


# ---------------------------------------------------------------- multiclass
#
# Multiclass fits take class indices ``y : (n,)`` in ``0 .. C - 1`` (float) and a
# static class count ``C``; the scores ``(m, C)`` predict the class with the
# largest score (``argmax``: the smallest index among exact ties, as numpy's and
# scikit-learn's ``argmax``).


def linear_scores(params, Z):
    """Class scores ``Z @ coef + intercept``; ``coef : (d, C)``, ``Z : (m, d)`` -> ``(m, C)``."""
    return Z @ params.coef + params.intercept[None, :]


def class_weights(y, w, n_classes):
    """Training weights of each class, ``(C, n)``: ``w`` where ``y == c``, else 0."""
    cls = jnp.arange(n_classes, dtype=y.dtype)[:, None]
    return jnp.where(y[None, :] == cls, w[None, :], 0.0).astype(w.dtype)


def _class_means(X, y, w, n_classes):
    W = class_weights(y, w, n_classes)
    nc = jnp.sum(W, axis=1)
    return W, nc, (W @ X) / nc[:, None]


def lda_multiclass_fit(X, y, w, reg, n_classes):
    """Linear discriminant for ``C`` classes (``LinearDiscriminantAnalysis(solver="lsqr")``).

    Pooled biased covariance ``S = sum_c pi_c S_c + reg I``; class scores
    ``mu_c' S^-1 z - mu_c' S^-1 mu_c / 2 + log pi_c`` as a :class:`LinearModel`
    with ``coef : (d, C)``, ``intercept : (C,)``.
    """
    _, nc, mu = _class_means(X, y, w, n_classes)
    R = X - mu[jnp.clip(y.astype(jnp.int32), 0, n_classes - 1)]  # from the own class mean
    S = ((R * w[:, None]).T @ R) / jnp.sum(nc) + reg * jnp.eye(X.shape[1], dtype=X.dtype)
    coef = jnp.linalg.solve(S, mu.T)  # (d, C)
    intercept = -0.5 * jnp.sum(mu * coef.T, axis=1) + jnp.log(nc / jnp.sum(nc))
    return LinearModel(coef, intercept)


def qda_multiclass_fit(X, y, w, reg_param, n_classes):
    """Quadratic discriminant for ``C`` classes (as :func:`qda_fit`, class ``c`` in row ``c``)."""
    W, nc, mu = _class_means(X, y, w, n_classes)
    eye = jnp.eye(X.shape[1], dtype=X.dtype)

    def chol(wc, n_c, m):
        R = X - m[None, :]
        S = (R * wc[:, None]).T @ R / n_c
        return jnp.linalg.cholesky((1 - reg_param) * S + reg_param * eye)

    return QDAModel(mu, jax.vmap(chol)(W, nc, mu), jnp.log(nc / jnp.sum(nc)))


def qda_scores(params, Z):
    """Log posterior (up to a shared constant) of each class, ``(m, C)``."""

    def score(mu, L, lp):
        r = jax.scipy.linalg.solve_triangular(L, (Z - mu[None, :]).T, lower=True)
        logdet = 2 * jnp.sum(jnp.log(jnp.diagonal(L)))
        return -0.5 * (jnp.sum(r * r, axis=0) + logdet) + lp

    return jax.vmap(score)(params.means, params.chol, params.log_prior).T


def nearest_centroid_multiclass_fit(X, y, w, n_classes):
    """Nearest of ``C`` centroids: scores ``2 mu_c' z - |mu_c|^2`` (``= |z|^2 - |z - mu_c|^2``)."""
    _, _, mu = _class_means(X, y, w, n_classes)
    return LinearModel(2 * mu.T, -jnp.sum(mu * mu, axis=1))


def knn_votes(params, Z, k, n_classes):
    """Votes ``(m, C)`` of the ``k`` nearest training instances (uniform weights).

    The argmax is the majority class, the smallest class index among tied
    counts (scikit-learn's ``KNeighborsClassifier.predict``, ``scipy.stats.mode``).
    """
    lab = params.y[_knn_neighbours(params, Z, k)]  # (m, k)
    cls = jnp.arange(n_classes, dtype=lab.dtype)
    return jnp.sum(lab[:, :, None] == cls[None, None, :], axis=1, dtype=Z.dtype)


def ridge_ovr_fit(X, y, w, alpha, n_classes):
    """One-vs-rest ridge on ±1 targets per class (scikit-learn's ``RidgeClassifier``).

    Column ``c`` of the targets is +1 on class ``c`` and -1 elsewhere; the
    fits share the training rows. ``coef : (d, C)``, ``intercept : (C,)``.
    """
    cls = jnp.arange(n_classes, dtype=y.dtype)
    T = jnp.where(y[None, :] == cls[:, None], 1.0, -1.0).astype(X.dtype)  # (C, n)
    fit = jax.vmap(lambda t: ridge_fit(X, t, w, alpha))(T)
    return LinearModel(fit.coef.T, fit.intercept)


def logistic_multinomial_fit(X, y, w, C, n_iter, n_classes, tol=1e-10):
    """Multinomial (softmax) L2 logistic regression by Newton steps from zero.

    Minimises ``C sum_i w_i (-log softmax(f_i)[y_i]) + sum_c |beta_c|^2 / 2``
    with unpenalised intercepts: scikit-learn's ``LogisticRegression(C=C)``
    for ``C >= 3`` classes (multinomial, its default since 1.5). The loss is
    unchanged by adding one constant to every intercept; a penalty
    ``(sum_c b_c)^2 / 2`` selects the representative with ``sum_c b_c = 0``
    (same coefficients, same predictions) and keeps the Hessian definite. The
    Hessian blocks ``sum_i w_i (p_ia [a = b] - p_ia p_ib) x_i x_i'`` come from
    the upper triangles of the row-wise outer products, as in
    :func:`logistic_fit`; the stopping rule is the same. Returns
    ``coef : (d, C)``, ``intercept : (C,)``.
    """
    d = X.shape[1]
    D = d + 1
    K = n_classes
    Xa, O, sym = _augmented_products(X)
    Y = (y[:, None] == jnp.arange(K, dtype=y.dtype)[None, :]).astype(X.dtype)  # (n, K)
    pen = jnp.concatenate([jnp.ones(d, X.dtype), jnp.zeros(1, X.dtype)]) / C
    is_b = np.zeros(D)
    is_b[d] = 1.0
    # penalty (sum_c b_c)^2 / 2 on the intercepts: Hessian 1 1' over the K intercepts
    tie = jnp.asarray(np.kron(np.ones((K, K)), np.outer(is_b, is_b)), X.dtype)
    ridge = jnp.diag(jnp.tile(pen, K)) + tie + 1e-12 * jnp.eye(K * D, dtype=X.dtype)
    eye = jnp.eye(K, dtype=X.dtype)

    def step(theta):  # theta : (K, D)
        P = jax.nn.softmax(Xa @ theta.T, axis=1)  # (n, K)
        b_sum = jnp.sum(theta[:, d])
        g = ((w[:, None] * (P - Y)).T @ Xa + pen[None, :] * theta).at[:, d].add(b_sum)
        S = w[:, None, None] * (P[:, :, None] * eye[None] - P[:, :, None] * P[:, None, :])
        H = jnp.einsum("iab,iu->abu", S, O)[:, :, sym]  # (K, K, D, D)
        H = jnp.transpose(H, (0, 2, 1, 3)).reshape(K * D, K * D) + ridge
        delta = jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(H), True), g.reshape(-1))
        return theta - delta.reshape(K, D)

    theta = _newton(step, jnp.zeros((K, D), X.dtype), n_iter, tol)
    return LinearModel(theta[:, :d].T, theta[:, d])


def ovo_pairs(n_classes):
    """The ``C (C - 1) / 2`` class pairs ``(a, b)``, ``a < b``, in LIBSVM's order."""
    return tuple((a, b) for a in range(n_classes) for b in range(a + 1, n_classes))


def ovo_votes(decisions, n_classes):
    """Votes ``(m, C)`` of the pairwise decisions ``(P, m)`` (LIBSVM's one-vs-one).

    Pair ``(a, b)`` votes ``a`` where its decision is ``> 0``, else ``b``; the
    argmax of the votes is the smallest class index among tied counts, as
    LIBSVM's ``svm_predict``.
    """
    pairs = np.asarray(ovo_pairs(n_classes)).reshape(-1, 2)
    to_a = np.eye(n_classes)[pairs[:, 0]]  # (P, C)
    to_b = np.eye(n_classes)[pairs[:, 1]]
    win = (decisions > 0).astype(decisions.dtype)  # (P, m)
    return win.T @ jnp.asarray(to_a, decisions.dtype) + (1 - win).T @ jnp.asarray(
        to_b, decisions.dtype
    )
