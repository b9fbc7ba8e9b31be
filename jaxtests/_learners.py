"""The learner table: one row per built-in learner (``Model.kind``).

A row binds the public constructor, the decision function (fit on the
training rows, decision values at all rows; the kernels are in
``jaxtests.kernels.learners``), the multiclass class-score function (``None``
for regressors), the number of label vectors fitted per
``vmap`` in the label-permutation test, and the name of the CLI's
``sanity --model`` choice. Adding a learner means a kernel pair in
``kernels/learners.py``, a constructor in ``_models.py`` and one row here.
"""

import dataclasses
import functools
import os
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _models
from jaxtests._buckets import bucket, pad_axis
from jaxtests.kernels import learners as klearners


@dataclasses.dataclass(frozen=True)
class Learner:
    """One built-in learner.

    ``decision(params, X, y, w) -> (n,)`` fits on the rows with ``w > 0`` and
    returns decision values at all rows of ``X`` (pure jnp; ``params`` is
    ``Model.hyper``). ``scores(params, X, y, w, n_classes) -> (n, C)`` is
    the multiclass fit on class indices ``y`` in ``0 .. C - 1``: a score per
    class at all rows, the prediction its argmax (``None``: regressors).
    ``fit_chunk`` is the number of label vectors per vmapped fit in the
    label-permutation test; ``cli_name`` the CLI's ``--model`` choice
    (``None``: not offered). ``host``: ``decision`` also takes ``xp=numpy``
    and runs on the host for concrete data (:func:`host_fold_decisions`).
    """

    kind: str
    task: str
    make: Callable[..., _models.Model]
    decision: Callable
    fit_chunk: int = 64
    cli_name: str | None = None
    scores: Callable | None = None
    host: bool = False


def _scaled(p, X, w, xp=jnp):
    """``X`` standardised with the training rows' (``w > 0``) mean and scale when
    ``p["standardize"]`` (scikit-learn's ``StandardScaler`` fitted on the training
    fold only, applied to every row), else ``X``."""
    if not p.get("standardize", False):
        return X
    mean, scale = klearners.standardize_fit(X, w, xp)
    return (X - mean[None, :]) / scale[None, :]


def _ridge(p, X, y, w, xp=jnp):
    X = _scaled(p, X, w, xp)
    return klearners.linear_decision(klearners.ridge_fit(X, y, w, p["alpha"], xp), X)


def _lda(p, X, y, w, xp=jnp):
    X = _scaled(p, X, w, xp)
    return klearners.linear_decision(klearners.lda_fit(X, y, w, p["reg"], xp), X)


def _qda(p, X, y, w):
    X = _scaled(p, X, w)
    return klearners.qda_decision(klearners.qda_fit(X, y, w, p["reg_param"]), X)


def _centroid(p, X, y, w, xp=jnp):
    X = _scaled(p, X, w, xp)
    return klearners.linear_decision(klearners.nearest_centroid_fit(X, y, w, xp), X)


def _knn(p, X, y, w):
    X = _scaled(p, X, w)
    return klearners.knn_decision(klearners.knn_fit(X, y, w), X, p["k"])


def _logistic(p, X, y, w):
    X = _scaled(p, X, w)
    return klearners.linear_decision(klearners.logistic_fit(X, y, w, p["C"], p["n_iter"]), X)


def _kernel_inputs(p, X, w):
    """Kernel arguments and the (optionally standardised) features of a kernel machine.

    ``gamma="scale"`` is computed from the training rows (``w > 0``) of the features the
    machine sees, after standardisation (scikit-learn computes it in ``SVC.fit`` on the
    pipeline's scaled training fold): traced, one value per fold and label vector.
    """
    X = _scaled(p, X, w)
    gamma = p["gamma"]
    if gamma == "scale":
        gamma = klearners.gamma_scale(X, w)
    elif gamma == "auto":
        gamma = 1.0 / X.shape[1]
    kargs = (p["kernel"], p["degree"], gamma, p["coef0"], p["normalize"])
    return kargs, X


def _kernel_machine(fit):
    """Decision function of a kernel machine: optional standardisation, ``fit``, decision."""

    def decision(p, X, y, w):
        kargs, X = _kernel_inputs(p, X, w)
        return klearners.svm_decision(fit(p, X, y, w, kargs), X, *kargs)

    return decision


def _svc_fit(p, X, y, w, kargs):
    return klearners.svc_fit(X, y, w, p["C"], *kargs, p["tol"], p["max_iter"])


def _svr_fit(p, X, y, w, kargs):
    return klearners.svr_fit(X, y, w, p["C"], p["epsilon"], *kargs, p["tol"], p["max_iter"])


# ---- multiclass scores ``(n, C)`` on class indices ``y`` (see ``Learner.scores``)


def _ridge_ovr(p, X, y, w, C):
    X = _scaled(p, X, w)
    return klearners.linear_scores(klearners.ridge_ovr_fit(X, y, w, p["alpha"], C), X)


def _lda_mc(p, X, y, w, C):
    X = _scaled(p, X, w)
    return klearners.linear_scores(klearners.lda_multiclass_fit(X, y, w, p["reg"], C), X)


def _qda_mc(p, X, y, w, C):
    X = _scaled(p, X, w)
    return klearners.qda_scores(klearners.qda_multiclass_fit(X, y, w, p["reg_param"], C), X)


def _centroid_mc(p, X, y, w, C):
    X = _scaled(p, X, w)
    return klearners.linear_scores(klearners.nearest_centroid_multiclass_fit(X, y, w, C), X)


def _knn_mc(p, X, y, w, C):
    X = _scaled(p, X, w)
    return klearners.knn_votes(klearners.knn_fit(X, y, w), X, p["k"], C)


def _logistic_mc(p, X, y, w, C):
    X = _scaled(p, X, w)
    fit = klearners.logistic_multinomial_fit(X, y, w, p["C"], p["n_iter"], C)
    return klearners.linear_scores(fit, X)


def _svc_ovo(p, X, y, w, C):
    """LIBSVM's one-vs-one: a C-SVC per class pair on its two classes' rows, then votes."""
    kargs, X = _kernel_inputs(p, X, w)  # standardised on the whole training fold
    pairs = np.asarray(klearners.ovo_pairs(C))
    a = jnp.asarray(pairs[:, 0], y.dtype)
    b = jnp.asarray(pairs[:, 1], y.dtype)

    def pair(a, b):
        t = jnp.where(y == a, 1.0, -1.0).astype(X.dtype)
        wp = jnp.where((y == a) | (y == b), w, 0.0)
        return klearners.svm_decision(_svc_fit(p, X, t, wp, kargs), X, *kargs)

    return klearners.ovo_votes(jax.vmap(pair)(a, b), C)


_C, _R = "classification", "regression"

# Order: the CLI's ``sanity --model`` choices first, in the order it lists them.
LEARNERS = {
    row.kind: row
    for row in (
        Learner(
            "ridge_classifier",
            _C,
            _models.ridge_classifier,
            _ridge,
            1024,
            "ridge",
            _ridge_ovr,
            host=True,
        ),
        Learner("lda", _C, _models.lda, _lda, 64, "lda", _lda_mc, host=True),
        Learner("logistic", _C, _models.logistic, _logistic, 128, "logistic", _logistic_mc),
        Learner(
            "nearest_centroid",
            _C,
            _models.nearest_centroid,
            _centroid,
            64,
            "centroid",
            _centroid_mc,
            host=True,
        ),
        Learner("knn", _C, _models.knn, _knn, 64, "knn", _knn_mc),
        Learner("qda", _C, _models.qda, _qda, 64, "qda", _qda_mc),
        Learner("svc", _C, _models.svc, _kernel_machine(_svc_fit), 16, "svm", _svc_ovo),
        Learner("ridge", _R, _models.ridge, _ridge, 1024, host=True),
        Learner("svr", _R, _models.svr, _kernel_machine(_svr_fit), 16),
    )
}


# n x n float64 arrays a fit holds at once, (per fold, per fitted label vector): a kernel
# machine's kernel matrices (fit and decision) depend on the fold only, its Q = (y y') K
# (SVR: 2n x 2n) on the labels too; kNN's distances depend on the fold only. Other
# learners hold O(n d + d^2 + n C) values.
_SQUARE_ARRAYS = {"svc": (2, 1), "svr": (6, 4), "knn": (2, 0)}


def fit_bytes(model, n, n_folds, n_labels, n_classes=0):
    """Rough bytes of ``n_labels`` label vectors fitted on ``n_folds`` folds of ``n`` rows at once.

    Counts the ``n x n`` arrays only. A one-vs-one SVC of ``C >= 3`` classes fits
    its ``C (C - 1) / 2`` class pairs at once (vmapped), each with its own ``Q``.
    """
    per_fold, per_fit = _SQUARE_ARRAYS.get(model.kind, (0, 0))
    if model.kind == "svc" and n_classes >= 3:
        per_fit *= n_classes * (n_classes - 1) // 2
    return 8 * n * n * n_folds * (per_fold + n_labels * per_fit)


def check_fit_memory(model, name, n, n_folds, n_labels, n_classes=0):
    """Refuse fits of ``model`` held at once beyond half of this machine's memory.

    Checked before anything is allocated; the ``ValueError`` names the argument
    ``name``, the learner and the size.
    """
    need = fit_bytes(model, n, n_folds, n_labels, n_classes)
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        memory = 2**34
    if need <= memory // 2:
        return
    what = f"{model.kind!r}"
    if model.kind == "svc" and n_classes >= 3:
        pairs = n_classes * (n_classes - 1) // 2
        what += f" (one-vs-one over {n_classes} classes: {pairs:,} class pairs fitted together)"
    labels = f"{n_labels} label vectors on " if n_labels > 1 else ""
    fewer = " or classes, or a one-vs-rest learner (ridge_classifier, logistic, lda)"
    raise ValueError(
        f"`{name}`: {what} would hold about {need / 2**30:,.1f} GiB at once ({labels}"
        f"{n_folds} folds of {n} rows, with {n} x {n} matrices), more than half of this "
        f"machine's memory ({memory / 2**30:.3g} GiB). Use fewer rows"
        + (fewer if n_classes >= 3 else "")
        + "."
    )


def learner(kind):
    """The table row of ``kind`` (a ``Model.kind``)."""
    try:
        return LEARNERS[kind]
    except KeyError:
        raise ValueError(f"Unknown learner {kind!r}; expected one of {tuple(LEARNERS)}.") from None


def cli_models(task="classification"):
    """CLI ``--model`` choices of ``task``: ``cli_name -> zero-argument constructor``."""
    return {r.cli_name: r.make for r in LEARNERS.values() if r.task == task and r.cli_name}


def fit_decision(model, X, y, w):
    """Fit ``model`` with training weights ``w`` and return decision values at all of ``X``.

    ``X : (n, d)``, ``y, w : (n,)`` -> ``(n,)``. Pure given the static ``model``;
    vmap it over ``(y, w)``.
    """
    return learner(model.kind).decision(model.hyper, X, y, w)


def host_fold_decisions(model, X, y, W):
    """:func:`fold_decisions` of one label vector in numpy on the host, or None.

    ``X : (n, d)``, ``y : (n,)``, ``W : (F, n)`` numpy arrays -> ``(F, n)``,
    compiling nothing, for the closed-form learners (``Learner.host``); None for
    the others, and where numpy refuses a singular system (the jitted fit then
    gives JAX's values for it).
    """
    row = learner(model.kind)
    if not row.host:
        return None
    try:
        with np.errstate(all="ignore"):  # a one-class fold: inf/NaN, as JAX gives silently
            return np.stack([row.decision(model.hyper, X, y, w, xp=np) for w in W])
    except np.linalg.LinAlgError:
        return None


def pad_rows(X, y, W):
    """``X``, ``y`` and training weights ``W : (F, n)`` padded to the shape bucket of ``n``.

    The added rows are zeros with weight 0 in every fold: no fit uses them
    (the learners' sums weigh rows by ``w``, kNN masks ``w = 0``), so any ``n``
    inside a bucket reuses the compiled fits, with the same values to rounding
    (1e-15 relative); decisions at the added rows are never read. Not for the
    kernel machines: an SVR's working sets follow the rounding (its fits agree to
    ``tol`` only).
    """
    size = bucket(X.shape[0])
    return pad_axis(X, size, axis=0), pad_axis(y, size), pad_axis(W, size)


@functools.partial(jax.jit, static_argnames=("model",))
def fold_decisions(model, X, Y, W):
    """Decision values ``(B, F, n)`` for label vectors ``Y : (B, n)`` and folds ``W : (F, n)``."""
    per_fold = jax.vmap(lambda y, w: fit_decision(model, X, y, w), in_axes=(None, 0))
    return jax.vmap(per_fold, in_axes=(0, None))(Y, W)


@functools.partial(jax.jit, static_argnames=("model",))
def fold_decisions_per_fold_labels(model, X, Y, W):
    """As :func:`fold_decisions` with fold-specific labels ``Y : (B, F, n)``."""
    per_fold = jax.vmap(lambda y, w: fit_decision(model, X, y, w))
    return jax.vmap(per_fold, in_axes=(0, None))(Y, W)


def fit_predict(model, X, y, w, n_classes):
    """Fit ``model`` on class indices ``y`` (``0 .. C - 1``) with weights ``w``; predict all rows.

    ``X : (n, d)``, ``y, w : (n,)`` -> ``(n,)`` predicted class indices (as
    ``X``'s dtype): the argmax of the learner's class scores. Pure given the
    static ``model`` and ``n_classes``; vmap it over ``(y, w)``.
    """
    scores = learner(model.kind).scores(model.hyper, X, y, w, n_classes)
    return jnp.argmax(scores, axis=-1).astype(X.dtype)


@functools.partial(jax.jit, static_argnames=("model", "n_classes"))
def fold_predictions(model, X, Y, W, n_classes):
    """Predicted classes ``(B, F, n)`` for class vectors ``Y : (B, n)`` and folds ``W : (F, n)``."""
    per_fold = jax.vmap(lambda y, w: fit_predict(model, X, y, w, n_classes), in_axes=(None, 0))
    return jax.vmap(per_fold, in_axes=(0, None))(Y, W)


@functools.partial(jax.jit, static_argnames=("model", "n_classes"))
def fold_predictions_per_fold_labels(model, X, Y, W, n_classes):
    """As :func:`fold_predictions` with fold-specific class vectors ``Y : (B, F, n)``."""
    per_fold = jax.vmap(lambda y, w: fit_predict(model, X, y, w, n_classes))
    return jax.vmap(per_fold, in_axes=(0, None))(Y, W)


# ---- kernel machines in host-level calls of bounded time (Ctrl-C acts between calls)
#
# The SMO solve of a kernel machine is one ``lax.while_loop``; fitted inside one
# compiled call for a chunk of label vectors on every fold it can run for minutes, and
# Ctrl-C waits for it. :func:`kernel_outputs` runs the same computation in three
# programs: the dual problems and their initial states, SMO steps in calls sized to
# about ``_STEP_SECONDS`` (each lane's steps are those of the single loop, whatever
# the cut), and the solutions' outputs. The ``vmap`` nesting is that of
# :func:`fold_decisions`, so the values are those of one call.

KERNEL_MACHINES = ("svc", "svr")
_STEP_SECONDS = 0.5


class _Dual(NamedTuple):
    """One lane's dual problem: ``Q : (N, N)``, signs ``s`` and bounds ``ub : (N,)``."""

    Q: jax.Array
    s: jax.Array
    ub: jax.Array


def _dual(p, kind, X, y, w, kargs):
    if kind == "svc":
        Q, q, s, ub = klearners.svc_problem(X, y, w, p["C"], *kargs)
    else:
        Q, q, s, ub = klearners.svr_problem(X, y, w, p["C"], p["epsilon"], *kargs)
    return _Dual(Q, s, ub), klearners.smo_init(q, s, ub)


def _ovo_targets(y, w, a, b):
    # The class pair (a, b) as in _svc_ovo: +1 on class a, its two classes' rows only.
    return jnp.where(y == a, 1.0, -1.0).astype(w.dtype), jnp.where((y == a) | (y == b), w, 0.0)


def _lanes(fn, per_fold):
    """``fn(y, w, ...)`` vmapped over folds, then label vectors, as :func:`fold_decisions`."""
    inner = jax.vmap(fn, in_axes=(0 if per_fold else None, 0))
    return jax.vmap(inner, in_axes=(0, None))


def _pairs(n_classes, dtype):
    pairs = np.asarray(klearners.ovo_pairs(n_classes))
    return jnp.asarray(pairs[:, 0], dtype), jnp.asarray(pairs[:, 1], dtype)


@functools.partial(jax.jit, static_argnames=("model", "n_classes", "per_fold"))
def _kernel_prepare(model, X, Y, W, n_classes, per_fold):
    p, kind = model.hyper, model.kind

    def one(y, w):
        kargs, Xs = _kernel_inputs(p, X, w)
        if not n_classes:
            return _dual(p, kind, Xs, y, w, kargs)
        a, b = _pairs(n_classes, y.dtype)

        def pair(a, b):
            t, wp = _ovo_targets(y, w, a, b)
            return _dual(p, kind, Xs, t, wp, kargs)

        return jax.vmap(pair)(a, b)

    return _lanes(one, per_fold)(Y, W)


@functools.partial(jax.jit, static_argnames=("model", "n_lane_axes"))
def _kernel_steps(model, duals, states, n_steps, n_lane_axes):
    tol, max_iter = model.hyper["tol"], model.hyper["max_iter"]

    def one(d, st):
        return klearners.smo_steps(d.Q, d.s, d.ub, st, tol, max_iter, n_steps)

    for _ in range(n_lane_axes):
        one = jax.vmap(one)
    states = one(duals, states)
    return states, jnp.any(klearners.smo_running(states, tol, max_iter))


@functools.partial(jax.jit, static_argnames=("model", "n_classes", "per_fold"))
def _kernel_finish(model, X, Y, W, duals, states, n_classes, per_fold):
    p, kind = model.hyper, model.kind
    machine = klearners.svc_machine if kind == "svc" else klearners.svr_machine

    def decision(Xs, kargs, d, st):
        km = machine(Xs, d.s, *klearners.smo_finish(d.s, d.ub, st))
        return klearners.svm_decision(km, Xs, *kargs)

    def one(y, w, d, st):
        kargs, Xs = _kernel_inputs(p, X, w)
        if not n_classes:
            return decision(Xs, kargs, d, st)
        votes = klearners.ovo_votes(
            jax.vmap(lambda d, st: decision(Xs, kargs, d, st))(d, st), n_classes
        )
        return jnp.argmax(votes, axis=-1).astype(X.dtype)

    inner = jax.vmap(one, in_axes=(0 if per_fold else None, 0, 0, 0))
    return jax.vmap(inner, in_axes=(0, None, 0, 0))(Y, W, duals, states)


def kernel_outputs(model, X, Y, W, n_classes=0):
    """:func:`fold_decisions` (or :func:`fold_predictions` with ``n_classes``) of a kernel machine.

    ``Y : (B, n)``, or ``(B, F, n)`` per fold; ``W : (F, n)`` -> ``(B, F, n)``.
    The SMO steps run in host-level calls of about half a second, so Ctrl-C
    (``KeyboardInterrupt``) stops a long fit between them; the values are those
    of the single compiled call.
    """
    per_fold = Y.ndim == 3
    duals, states = _kernel_prepare(model, X, Y, W, n_classes=n_classes, per_fold=per_fold)
    axes = 3 if n_classes else 2
    n_steps = 64
    while True:
        t0 = time.perf_counter()
        states, running = _kernel_steps(model, duals, states, np.int32(n_steps), n_lane_axes=axes)
        if not bool(running):
            break
        per_step = max(time.perf_counter() - t0, 1e-6) / n_steps
        n_steps = int(min(max(_STEP_SECONDS / per_step, 16), 16 * n_steps, 2**30))
    return _kernel_finish(model, X, Y, W, duals, states, n_classes=n_classes, per_fold=per_fold)
