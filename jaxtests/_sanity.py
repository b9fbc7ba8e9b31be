"""Label-permutation sanity check: Ojala & Garriga (2010) test 1 (Hein).

Cross-validate the model on the data, then on ``n_permutations`` copies of the
data with permuted labels; the p-value is the fraction of permuted runs that
score at least as well. Built-in learners train all permuted label vectors at
once (:mod:`jaxtests._sanity_streams`); scikit-learn estimators fall back to
joblib (:mod:`jaxtests._sanity_sklearn`). This module holds the public check: its
validation, its result and the p-values.
"""

import dataclasses
import numbers
import warnings

import jax
import numpy as np

from jaxtests import _distributed, _learners
from jaxtests._estimators import _normalise_models, is_builtin, model_task
from jaxtests._precision import x64
from jaxtests._progress import as_progress
from jaxtests._pvalues import CI_LEVEL, clopper_pearson, tie_tol
from jaxtests._random import resolve_key, split_key
from jaxtests._results import result, static_field
from jaxtests._sanity_sklearn import _sklearn_permutation_scores
from jaxtests._sanity_streams import _builtin_scores
from jaxtests._splitters import KFold, RandomSplits, make_splits, padded_test_index
from jaxtests._validation import (
    as_class_labels,
    as_float_array,
    as_int_scalar,
    as_label_array,
    check_choice,
)
from jaxtests.kernels import measures as kmeasures

__all__ = ["PermutationTestScoreResult", "permutation_test_score"]

# every measure of confusion counts in the table (jaxtests.kernels.measures.MEASURES), and
# the ROC area, which fold_scores computes from the decision values
_CLF_SCORES = (*kmeasures.measure_names("counts", aliases=True), "roc_auc", "auc")
_MULTICLASS_SCORES = kmeasures.measure_names("counts", multiclass=True, aliases=True)
_REG_SCORES = ("r2", "neg_mean_squared_error", "neg_mean_absolute_error")


@result
class PermutationTestScoreResult:
    """Result of :func:`permutation_test_score`.

    Attributes
    ----------
    statistic : float or (S,) array
        Cross-validated score on the original labels (mean over folds).
    pvalue : float or (S,) array
        ``(C + 1) / (n_permutations + 1)``, ``C`` = permuted scores ``>=`` the
        observed one (Ojala & Garriga 2010, eq. 1; Phipson & Smyth: never 0).
    permutation_scores : (n_permutations,) or (n_permutations, S) array
    pvalue_interval : (2,) or (S, 2) array
        99% Clopper–Pearson interval for the exact permutation p-value, given
        the Monte Carlo count.
    classes : tuple or None
        Multiclass: the sorted distinct labels (class ``i`` is ``classes[i]``).
    """

    statistic: jax.Array
    pvalue: jax.Array
    permutation_scores: jax.Array
    pvalue_interval: jax.Array
    scoring: object = static_field(default="accuracy")
    n_permutations: int = static_field(default=0)
    permute: str = static_field(default="all")
    seed: object = static_field(default=None)
    classes: tuple | None = static_field(default=None)

    @property
    def score(self):
        """Alias of ``statistic`` (scikit-learn's name)."""
        return self.statistic


def _pvalues(obs, perm):
    """p-values ``(C + 1) / (B + 1)`` ``(S,)`` and intervals ``(S, 2)`` of scores ``(S,), (B, S)``.

    ``C`` counts the permuted scores at least the observed one, ties within
    ``tie_tol(observed, 1)`` included: the scores are O(1) (accuracies, AUCs,
    r2), so round-off is relative to ``max(|score|, 1)``.
    """
    obs = np.asarray(obs, np.float64)
    perm = np.asarray(perm, np.float64)
    tol = tie_tol(obs, 1.0, xp=np)  # on the host: eager JAX ops compile one by one
    C = np.sum(perm >= obs[None] - tol[None], axis=0)
    B = perm.shape[0]
    lo, hi = clopper_pearson(C, B, CI_LEVEL)
    return (C + 1) / (B + 1), np.stack([lo, hi], axis=-1)


@dataclasses.dataclass(frozen=True, eq=False)
class _Plan:
    """A validated run of :func:`permutation_test_score` (``_permutation_test_score_iv``).

    Arrays are numpy. ``train, test : (F, n)`` are the folds of all repetitions
    (``F = R K``), ``index, valid : (F, m)`` their padded test indices;
    ``strata : (n,)`` the cells that permutations keep (groups, and folds when
    ``by_fold``); ``perms`` the explicit ``(B, n)`` permutations or None;
    ``key`` the permutation key.
    """

    model: object
    classification: bool
    classes: object  # multiclass: tuple of the sorted labels; None otherwise
    X: np.ndarray
    y: np.ndarray
    train: np.ndarray
    test: np.ndarray
    index: np.ndarray
    valid: np.ndarray
    scoring: tuple
    single: bool
    permute: str
    grouped: bool
    by_fold: bool
    strata: np.ndarray
    perms: object
    n_permutations: int
    batch_size: object
    key: jax.Array
    seed: object


def _permutation_test_score_iv(
    model, X, y, cv, n_permutations, scoring, key, permute, groups, permutations, batch_size
):
    """Validate the arguments of :func:`permutation_test_score`; return the :class:`_Plan`."""
    [(_, model)] = _normalise_models({"model": model})
    task = model_task(model, "`model`")
    classification = task == "classification"
    X = np.asarray(as_float_array(X, "X", ndim=2))
    classes = None
    if classification:
        y_in = y if isinstance(y, jax.Array | np.ndarray) else np.asarray(y)
        if y_in.ndim == 1:  # two classes: ±1 as before; three or more: indices 0..C-1
            y, classes = as_class_labels(y_in, "y")
        else:
            y = as_label_array(y, "y")
        y = np.asarray(y)
    else:
        y = np.asarray(as_float_array(y, "y", ndim=1))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"`y` must be 1-d with one entry per row of `X` ({X.shape[0]}), got shape {y.shape}."
        )
    single = isinstance(scoring, str)
    scoring = (scoring,) if single else tuple(scoring)
    if not scoring:
        raise ValueError("`scoring` is empty.")
    for s in scoring:
        if classes is not None and s in _CLF_SCORES and s not in _MULTICLASS_SCORES:
            raise ValueError(
                f"`scoring`={s!r} is binary only; `y` has {len(classes)} classes: use one of "
                f"{list(_MULTICLASS_SCORES)}."
            )
        check_choice(s, "scoring", _CLF_SCORES if classification else _REG_SCORES)
    check_choice(permute, "permute", ("all", "train"))
    n = y.shape[0]
    if groups is not None:
        g = np.asarray(groups)
        if g.shape != (n,):
            raise ValueError(f"`groups` must have shape ({n},), got {g.shape}.")
        if g.dtype.kind in "fc" and np.any(np.isnan(g)):
            raise ValueError(f"`groups` holds NaN at index {int(np.flatnonzero(np.isnan(g))[0])}.")
        strata = np.unique(g, return_inverse=True)[1].astype(np.int64)
    else:
        strata = np.zeros(n, np.int64)
    if permutations is not None:
        perms = np.asarray(permutations)
        if perms.ndim != 2 or perms.shape[1] != n or perms.dtype.kind not in "iu":
            raise ValueError(f"`permutations` must be an integer array of shape (B, {n}).")
        if not np.all(np.sort(perms, axis=1) == np.arange(n)):
            bad = int(np.flatnonzero(np.any(np.sort(perms, axis=1) != np.arange(n), axis=1))[0])
            raise ValueError(f"`permutations` row {bad} is not a permutation of 0..{n - 1}.")
        if permute != "all":
            raise ValueError("explicit `permutations` apply to all labels (`permute='all'`).")
        # with `groups` the null permutes within groups only (scikit-learn's
        # _shuffle): a row that moves a label across groups is another test
        moved = strata[perms] != strata[None, :]
        if np.any(moved):
            b, i = (int(v) for v in np.argwhere(moved)[0])
            raise ValueError(
                f"`permutations` row {b} moves instance {perms[b, i]} to {i}, across `groups`."
            )
        B = perms.shape[0]
    else:
        perms = None
        B = as_int_scalar(
            1000 if n_permutations is None else n_permutations, "n_permutations", minimum=1
        )
    if batch_size is not None:
        batch_size = as_int_scalar(batch_size, "batch_size", minimum=1)
    typed_key, seed = resolve_key(key)
    fold_key, perm_key = split_key(typed_key)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        cv = KFold(as_int_scalar(cv, "cv", minimum=2), stratified=classification)
    splits = make_splits(cv, y, fold_key, classification, X=X)
    if classification and np.all(y == y[0]):
        raise ValueError("`y` holds a single class; permutation gives nothing to test.")
    if permute == "train" and splits.shape[0] * splits.shape[1] > 1:
        warnings.warn(
            "permute='train' with several folds is anti-conservative (each fold is "
            "permuted on its own); use permute='all' for cross-validated scores.",
            RuntimeWarning,
            stacklevel=4,  # the caller of permutation_test_score (past the x64 wrapper)
        )
    # A split stratified on the labels makes the observed labels special (every
    # fold has the class ratio); the exact null keeps each fold's number of
    # positives. Several stratified repetitions have no such simple null.
    by_fold = False
    if (
        classification
        and permute == "all"
        and perms is None
        and isinstance(cv, KFold | RandomSplits)
        and cv.stratified
    ):
        if isinstance(cv, RandomSplits) or splits.shape[0] > 1:
            raise ValueError(
                "`cv`: label permutations cannot keep the stratification of several "
                "stratified repetitions or random splits; use one stratified k-fold, "
                "`stratified=False`, or explicit folds."
            )
        by_fold = True
        K = splits.shape[1]
        fold = np.argmax(splits.test[0], axis=0)
        strata = np.unique(strata * K + fold, return_inverse=True)[1].astype(np.int64)
    R, K = splits.shape
    train = splits.train.reshape(R * K, -1)
    test = splits.test.reshape(R * K, -1)
    index, valid = padded_test_index(test[None])
    return _Plan(
        model=model,
        classification=classification,
        classes=classes,
        X=X,
        y=y,
        train=train,
        test=test,
        index=index[0],
        valid=valid[0],
        scoring=scoring,
        single=single,
        permute=permute,
        grouped=groups is not None,
        by_fold=by_fold,
        strata=strata,
        perms=perms,
        n_permutations=B,
        batch_size=batch_size,
        key=perm_key,
        seed=seed,
    )


def _model_text(model):
    """``model`` as text every process writes alike (no object addresses)."""
    if is_builtin(model):
        return repr(model)
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    plain = (str, numbers.Number, bool, type(None))
    return f"{type(model).__qualname__}" + repr(
        sorted((k, v if isinstance(v, plain) else type(v).__qualname__) for k, v in params.items())
    )


@x64
def permutation_test_score(
    model,
    X,
    y,
    *,
    cv=5,
    n_permutations=None,
    scoring="accuracy",
    key=None,
    permute="all",
    groups=None,
    permutations=None,
    batch_size=None,
    n_jobs=None,
    progress=None,
):
    """Permutation test of a cross-validated score (Ojala & Garriga 2010, test 1; Hein).

    Parameters
    ----------
    model : jaxtests.models spec or scikit-learn estimator
    X : (n, d) array
    y : (n,) array
        ±1 or {0, 1} labels (binary classifiers), or any other two values (strings,
        {1, 2}: the later of the two sorted values is the positive class +1, as
        scikit-learn's ``LabelBinarizer``); three or more distinct labels
        (integers or strings) for multiclass, encoded as the indices of the
        sorted classes (the result's ``classes``); real targets (regressors).
    cv : int, splitter or iterable of (train, test) index arrays
        An int is a stratified (classifiers) k-fold shuffled with ``key``.
    n_permutations : int, optional
        Number of random permutations (default 1000); with ``permutations``,
        leave it out or give the number of rows.
    scoring : str or sequence of str
        Classifiers: ``accuracy``, ``balanced_accuracy``, ``error``,
        ``recall``/``tpr``, ``fpr``, ``specificity``, ``precision``, ``f1``,
        ``mcc`` (Matthews correlation, scikit-learn's ``matthews_corrcoef``),
        ``roc_auc``, ``precision_macro``, ``recall_macro``, ``f1_macro``
        (multiclass: ``accuracy``, ``error``, ``balanced_accuracy``, ``mcc`` and
        the three macro averages, scikit-learn's ``average="macro"`` with
        ``labels=None``: the mean over the classes true or predicted in the
        fold, 0 for a zero division; the binary ones are refused); regressors:
        ``r2``, ``neg_mean_squared_error``, ``neg_mean_absolute_error``.
        Several are computed in one pass. Each score is the mean over folds
        (as scikit-learn's).
    key : int, JAX key or None
        Seed of the folds and the permutations; recorded as ``seed``.
    permute : {"all", "train"}
        ``"all"`` permutes every label (scikit-learn's behaviour); ``"train"``
        permutes each fold's training labels only, test labels stay. ``"train"``
        is exact for one train/test split only: with several folds each fold
        gets its own permutation, which loses the coupling of the observed
        folds (a fold's training labels are the other folds' test labels), and
        the test is anti-conservative under the null (about 8% of p-values
        below 0.05 in 5-fold simulations; ``tests/test_sanity_calibration.py``).
        No single permutation keeps every fold's test labels, so use ``"all"``
        to test k-fold scores. When the
        folds are stratified on the labels (an int ``cv`` for a classifier, or
        ``KFold(stratified=True)``), ``"all"`` keeps each fold's number of
        positives: the split depends on the labels, and only permutations that
        keep it stratified give an exact null (with unrestricted permutations
        the observed labels, the only ones stratified, are favoured).
        Stratified splits with several repetitions are refused.
    groups : (n,) array, optional
        Permute only within groups (scikit-learn's ``groups``); with folds
        stratified on the labels and ``"all"``, within group x fold cells.
        Explicit ``permutations`` must keep every instance in its group.
    permutations : (B, n) int array, optional
        Explicit permutations (``y[permutations[b]]`` is the b-th label vector),
        e.g. to reproduce scikit-learn's draws.
    batch_size : int, optional
        Permutations per compiled call, built-in models only (memory and progress
        granularity only; rounded up to whole fits of the learner's label vectors
        where the permutations are made on the host): the permutations and the
        scores do not depend on it.
    n_jobs : int, optional
        joblib workers for scikit-learn estimators (refused for built-in models).
    progress : bool, tqdm bar, callable or None
        None (the default) shows a bar once the call has run 3 s, in an interactive
        session only (stderr a terminal; never under pytest); False none; True shows a
        :mod:`tqdm.auto` bar; a tqdm bar is advanced by the
        permutations done; a callable is called as ``progress(done, total)``
        after each compiled call / permutation.

    Returns
    -------
    PermutationTestScoreResult
        ``statistic`` (alias ``score``), ``pvalue``, ``permutation_scores``,
        ``pvalue_interval``, ``seed``.

    Notes
    -----
    With binary labels permuted over all instances (``permute="all"``, no
    ``groups``, no explicit ``permutations``) the permuted label vectors are
    drawn sort-free and exactly uniformly (see
    ``jaxtests.kernels.labels.draw_binary_labels``) in blocks of
    ``_sanity_streams.block_rows`` permutations, block ``j`` from ``fold_in(key, j)``.
    Other modes, and multiclass labels, draw one sort-based permutation per
    key ``fold_in(key, b)``: a permutation keeps the class counts (per fold
    with stratified folds). Multiclass fits are those of ``cross_validate``
    (native, multinomial logistic, one-vs-rest ridge, one-vs-one SVC).
    Every fit and score is in float64. A built-in model fits a chunk of label
    vectors on every fold at once; when a kernel machine's (or kNN's) ``n x n``
    matrices would need more than half of this machine's memory, a
    ``ValueError`` naming the model and the size is raised before any fit.
    Kernel machines (``svc``, ``svr``) run their SMO solves in host-level calls
    of about half a second (the same values as one call), so Ctrl-C stops a
    run within a second or so once its programs are compiled.

    References
    ----------
    Ojala, M. & Garriga, G. C. (2010). Permutation tests for studying classifier
    performance. JMLR 11, 1833–1863.

    Examples
    --------
    >>> from jaxtests import datasets, models
    >>> from jaxtests import permutation_test_score
    >>> X, y = datasets.load_breast_cancer()
    >>> res = permutation_test_score(models.ridge_classifier(), X, y, n_permutations=99, key=0)
    >>> float(res.pvalue)
    0.01
    """
    plan = _permutation_test_score_iv(
        model, X, y, cv, n_permutations, scoring, key, permute, groups, permutations, batch_size
    )
    # None, True (a tqdm.auto bar), a tqdm bar or progress(done, total); else TypeError
    progress = as_progress(progress, desc="label permutations", unit="perm")
    # options that the chosen path would not use are refused, not ignored
    if is_builtin(plan.model) and n_jobs is not None:
        raise ValueError(
            "`n_jobs` applies to scikit-learn estimators (joblib workers); built-in "
            "models run as compiled JAX programs: leave `n_jobs` as None."
        )
    if not is_builtin(plan.model) and batch_size is not None:
        raise ValueError(
            "`batch_size` applies to built-in models; scikit-learn estimators are "
            "refitted one permutation at a time (use `n_jobs`)."
        )
    B = plan.n_permutations
    if permutations is not None and n_permutations is not None and n_permutations != B:
        raise ValueError(
            f"`n_permutations` ({n_permutations}) disagrees with the {B} rows of "
            "`permutations`; give one of them."
        )
    # Every process of a distributed run must make the same call: each scores its share of
    # the permutations, and the shares of different labels would mix into a wrong p-value.
    _distributed.same_call(
        plan.X,
        plan.y,
        plan.train,
        plan.test,
        plan.strata,
        () if plan.perms is None else plan.perms,
        (plan.scoring, plan.permute, B, plan.batch_size, _model_text(plan.model)),
        jax.random.key_data(plan.key),
    )
    if is_builtin(plan.model):
        # Before any fit: a chunk of label vectors is fitted on every fold at once.
        chunk = _learners.learner(plan.model.kind).fit_chunk
        n_classes = 0 if plan.classes is None else len(plan.classes)
        n, n_folds = plan.X.shape[0], plan.train.shape[0]
        _learners.check_fit_memory(plan.model, "model", n, n_folds, chunk, n_classes)
        obs, null = _builtin_scores(plan, progress)
    else:
        obs, null = _sklearn_permutation_scores(plan, n_jobs, progress)
    pval, interval = _pvalues(obs, null)
    obs = np.asarray(obs, np.float64)
    null = np.asarray(null, np.float64)
    if plan.single:
        obs, pval, null, interval = obs[0], pval[0], null[:, 0], interval[0]
    return PermutationTestScoreResult(
        statistic=obs,
        pvalue=pval,
        permutation_scores=null,
        pvalue_interval=interval,
        scoring=plan.scoring[0] if plan.single else plan.scoring,
        n_permutations=plan.n_permutations,
        permute=plan.permute,
        seed=plan.seed,
        classes=plan.classes,
    )
