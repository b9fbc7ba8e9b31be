"""What ``compare`` tests: the per-fold table of a file, its pair of algorithms and measures."""

import numpy as np

from jaxtests import losses, measures
from jaxtests._cli._common import BadInput
from jaxtests._measures import binary_measures
from jaxtests._tidy import ItemTable, PerFold, PerInstance
from jaxtests.kernels import measures as kmeasures

CLF_LOSSES = ("zero_one", "hinge")
REG_LOSSES = ("square", "absolute", "epsilon_insensitive", "power")
# the per-fold measures of per-instance classifier outputs: every measure of confusion
# counts in the table (jaxtests.kernels.measures.MEASURES), then the ROC area
COUNT_MEASURES = kmeasures.measure_names("counts")
CLF_MEASURES = (*COUNT_MEASURES, "roc_auc")
# Why a per-fold measure computed from instances can be undefined (0/0).
UNDEFINED = {
    "tpr": "the fold has no positive instance",
    "recall": "the fold has no positive instance",
    "fpr": "the fold has no negative instance",
    "specificity": "the fold has no negative instance",
    "precision": "the algorithm predicts no positive in the fold",
    "f1": "the fold has no positive instance and the algorithm predicts none",
    "roc_auc": "the fold has instances of one class only",
}


def _task(data, path):
    """'classification' for labels in {-1, +1} or {0, 1}, else 'regression'.

    Two other values (say {1, 2}) are refused: they are labels coded differently, not a
    regression target; so are integer values predicted exactly from their own set
    (multiclass labels).
    """
    v = np.unique(data.y_true)
    if np.all(np.isin(v, (-1, 1))) or np.all(np.isin(v, (0, 1))):
        return "classification"
    if v.size == 2:
        raise BadInput(
            f"{path}, column 'y_true': the two values {v[0]:g} and {v[1]:g} are not class "
            "labels; classification labels must be -1/+1 or 0/1 (+1 and 1 the positive class). "
            "Recode them (a regression target has more than two distinct values)."
        )
    if np.all(v == np.round(v)) and np.all(np.isin(data.scores, v)):
        # Integer targets predicted exactly from their own set: class labels, not a
        # regression; square losses of class indices would answer another question.
        raise BadInput(
            f"{path}: 'y_true' holds {v.size} integer values and every score is one of them: "
            "these look like multiclass labels and predictions, which the per-instance layout "
            "does not take (it takes -1/+1 or 0/1 labels with decision values, or regression "
            "targets). Write per-fold measures instead (algorithm, fold, accuracy, ...), e.g. "
            "from jaxtests.cross_validate(...).fold_scores."
        )
    return "regression"


def _losses_of(task, args):
    if task == "classification":
        return CLF_LOSSES
    # The epsilon-insensitive and power losses need their parameter (--epsilon, --p).
    param = {"epsilon_insensitive": args.epsilon, "power": args.p}
    return tuple(n for n in REG_LOSSES if param.get(n, n) is not None)


def _instance_losses(data, name, args):
    """``(n_algorithms, n)`` per-instance losses ``name`` of every algorithm."""
    y = np.broadcast_to(data.y_true, data.scores.shape)
    extra = {"epsilon_insensitive": (args.epsilon,), "power": (args.p,)}.get(name, ())
    return np.asarray(getattr(losses, name)(y, data.scores, *extra))


def _fold_measures(data, args, task):
    """Per-fold table from per-instance outputs: mean losses and count measures."""
    clf = task == "classification"
    loss_names = _losses_of(task, args)
    names = (*loss_names, *CLF_MEASURES) if clf else (*loss_names, "rmse")
    inst = [_instance_losses(data, n, args) for n in loss_names]
    L, k = len(data.algorithms), len(data.folds)
    out = np.empty((L, k, len(names)))
    for j in range(k):
        sel = data.fold_of == j
        yt, s = data.y_true[sel], data.scores[:, sel]
        yb = np.broadcast_to(yt, s.shape)
        col = [x[:, sel].mean(-1) for x in inst]
        if clf:
            pred = np.where(s > 0, 1.0, -1.0)
            col += list(np.moveaxis(np.asarray(binary_measures(yb, pred, COUNT_MEASURES)), -1, 0))
            col.append(np.asarray(measures.roc_auc(yb, s)))
        else:
            col.append(np.asarray(measures.rmse(yb, s)))
        out[:, j, :] = np.stack(col, axis=-1)
    return PerFold(data.algorithms, data.folds, names, out, data.repetitions)


def _pair(table, args):
    algs = table.algorithms
    if args.pair:
        for a in args.pair:
            if a not in algs:
                raise BadInput(f"--pair: algorithm {a!r} is not in the file ({list(algs)}).")
        return args.pair
    if len(algs) > 2:
        raise BadInput(
            f"the file has {len(algs)} algorithms; choose two with --pair A B, or use "
            "--test anova/posthoc/manova."
        )
    return list(algs)


def _measure_names(table, args, *, multi):
    if args.measures:
        names = args.measures
    elif multi:
        pref = [m for m in ("tpr", "fpr") if m in table.measures]
        names = pref if len(pref) == 2 else list(table.measures)
    else:
        names = [table.measures[0]]
    for m in names:
        if m not in table.measures:
            hint = ""
            if m == "epsilon_insensitive":
                hint = " (it needs --epsilon, the half-width of the tube)"
            elif m == "power":
                hint = " (it needs --p, the exponent of |y - f|^p)"
            raise BadInput(
                f"--measures: {m!r} is not available{hint}; choose from {list(table.measures)}."
            )
    if multi and len(names) < 2:
        raise BadInput("a multivariate test needs at least two --measures.")
    _check_defined(table, names, args)
    return names


def _check_defined(table, names, args):
    """Refuse a NaN per-fold measure (derived from instances) naming fold, algorithm and why."""
    for m in names:
        x = table.measure(m)
        bad = np.argwhere(np.isnan(x))
        if bad.size:
            i, j = bad[0]
            why = UNDEFINED.get(m, "0/0")
            raise BadInput(
                f"{args.file}: {m} is undefined (0/0) for algorithm {table.algorithms[i]!r} in "
                f"fold {table.folds[j]!r}: {why}. Choose another measure, or folds with both "
                "classes."
            )


def _check_5x2(table, test):
    reps = table.repetitions
    if reps is None:
        raise BadInput(
            f"--test {test} needs 5 repetitions of 2-fold cross-validation, and the file does "
            f"not say which repetition each of its {len(table.folds)} folds belongs to: add a "
            "'repetition' column (1..5, folds 1..2 within each)."
        )
    order = list(dict.fromkeys(reps))
    sizes = [reps.count(r) for r in order]
    if len(order) != 5 or any(n != 2 for n in sizes):
        raise BadInput(
            f"--test {test} needs 5 repetitions x 2 folds; the file has {len(order)} "
            f"repetition(s) with {sizes} folds."
        )
    return [table.folds.index(f) for r in order for f in table.folds if f.split("/")[0] == r]


def _signflip_data(table, data, args, a, b, m):
    """Differences the compare sign-flip test uses, and their description."""
    if isinstance(data, ItemTable):  # each item's mean over its samples
        x = data.samples.mean(axis=-1)
        return x[data.models.index(a)] - x[data.models.index(b)], "per item"
    if not isinstance(data, PerInstance):
        x = table.measure(m)
        ia, ib = table.algorithms.index(a), table.algorithms.index(b)
        return x[ia] - x[ib], "per fold"
    L = _instance_losses(data, m, args)
    d = L[data.algorithms.index(a)] - L[data.algorithms.index(b)]
    if data.repetitions is not None:
        # As CVResult.instance_differences: each instance's mean over the repetitions it is
        # tested in (the repetitions reuse the instances; they are not independent draws).
        _, inv = np.unique(data.instances, return_inverse=True)
        d = np.bincount(inv, weights=d) / np.bincount(inv)
    return d, "per instance"
