"""Cochran's Q test of equal accuracy of k classifiers on the same instances, with pairwise
McNemar tests.

The permutation null exchanges the correctness of the k classifiers within each
instance (a randomized complete block design with instances as blocks): enumerated
exactly over the column sums when their table is small, drawn by the within-block
engine otherwise.
"""

import functools
import itertools
import math

import jax
import numpy as np

from jaxtests import _tails
from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._results import result, static_field
from jaxtests.kernels import bootstrap as kboot

__all__ = ["CochranQResult", "cochran_q"]

METHODS = ("chi2", "permutation", "exact", "monte-carlo")
EXACT_CELLS = 2**22  # column-sum table of the exact enumeration
EXACT_WORK = 2**28  # cell updates of the enumeration (about a second in numpy)


@result
class CochranQResult:
    """Result of :func:`cochran_q`.

    Attributes
    ----------
    statistic : float
        Cochran's Q.
    pvalue : float
        Of ``method``: chi-square with ``df = k - 1``, or the permutation p-value.
    pvalue_chi2 : float
        The chi-square p-value (always).
    df : int
    pairwise_pvalue, pairwise_pvalue_adjusted : (k, k) arrays
        McNemar p-values of every pair (``pairwise_method``), raw and adjusted by
        ``correction`` over the ``k (k - 1) / 2`` pairs; 1 on the diagonal.
    accuracy : (k,) array
        Fraction of instances each classifier gets right.
    pvalue_interval : (2,) array or None
        99% Clopper-Pearson interval of a Monte Carlo p-value; None for the chi-square
        and exact p-values (nothing drawn).
    method : str
        ``"chi2"``, ``"exact"`` or ``"monte-carlo"``.
    n_resamples, seed, correction, pairwise_method, names
    """

    statistic: jax.Array
    pvalue: jax.Array
    pvalue_chi2: jax.Array
    pairwise_pvalue: jax.Array
    pairwise_pvalue_adjusted: jax.Array
    accuracy: jax.Array
    pvalue_interval: jax.Array | None = None
    df: int = static_field(default=1)
    method: str = static_field(default="chi2")
    n_resamples: int = static_field(default=0)
    seed: object = static_field(default=None)
    correction: str = static_field(default="holm")
    pairwise_method: str = static_field(default="exact")
    names: tuple | None = static_field(default=None)

    def text(self):
        """Q with its p-value, each classifier's accuracy and the pairwise McNemar tests,
        most significant first."""
        k = len(self.accuracy)
        names = self.names or tuple(f"classifier {i}" for i in range(k))
        if self.method == "chi2":
            how = f"chi-square, df = {self.df}"
        elif self.method == "exact":
            how = f"exact permutation; chi-square p = {float(self.pvalue_chi2):.4g}"
        else:
            low, high = (float(v) for v in self.pvalue_interval)
            how = (
                f"Monte Carlo, {self.n_resamples} draws, seed {self.seed}, 99% interval "
                f"[{low:.3g}, {high:.3g}]; chi-square p = {float(self.pvalue_chi2):.4g}"
            )
        lines = [
            f"Cochran's Q test of equal accuracy, {k} classifiers: Q = "
            f"{float(self.statistic):.4g}, p = {float(self.pvalue):.4g} ({how})"
        ]
        width = max(len(n) for n in names)
        lines += [f"  {n:<{width}}  accuracy {float(a):.4f}" for n, a in zip(names, self.accuracy)]
        pairs = list(itertools.combinations(range(k), 2))
        raw = np.asarray(self.pairwise_pvalue)
        adj = np.asarray(self.pairwise_pvalue_adjusted)
        pairs.sort(key=lambda ij: raw[ij])
        lines.append(
            f"Pairwise McNemar tests ({self.pairwise_method}), {self.correction}-adjusted:"
        )
        label = [f"{names[i]} vs {names[j]}" for i, j in pairs]
        width = max(len(t) for t in label)
        lines += [
            f"  {t:<{width}}  p = {raw[i, j]:.4g}  adjusted {adj[i, j]:.4g}"
            for t, (i, j) in zip(label, pairs)
        ]
        return "\n".join(lines)


def _correctness_iv(correct):
    """Labels and predictions that reproduce a correctness matrix ``(n, k)``: every label
    +1, classifier ``j`` predicting +1 where it is right (the pairwise McNemar tests read
    only the agreement with the labels)."""
    x = np.asarray(correct)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"`correct` must be a 0/1 or boolean array, got dtype {x.dtype}.")
    if x.ndim != 2:
        raise ValueError(
            f"`correct` must have shape (n_instances, n_classifiers), got {tuple(x.shape)}."
        )
    if x.shape[1] < 2:
        raise ValueError(f"`correct` needs at least 2 classifiers (columns), got {x.shape[1]}.")
    if x.shape[0] < 1:
        raise ValueError("`correct` has no instances (rows).")
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("`correct` must hold 0/1 (or False/True): 1 where a classifier is right.")
    x = x.astype(bool)
    y = np.ones(x.shape[0], np.int64)
    return [y, *(np.where(x[:, j], 1, -1) for j in range(x.shape[1]))], x


def _correct_iv(y_true, predictions):
    from jaxtests._mcnemar import _is_binary, _labels_iv

    if len(predictions) < 2:
        shape = np.shape(y_true)
        if not predictions and len(shape) == 2:  # statsmodels' cochrans_q(x) habit
            raise ValueError(
                f"`y_true` has shape {shape} and no `predictions` follow: for a correctness "
                "matrix (n_instances, n_classifiers), 1 where a classifier is right, as "
                "statsmodels' cochrans_q takes, pass cochran_q(correct=x); otherwise pass "
                "cochran_q(y_true, pred_a, pred_b, ...)."
            )
        raise ValueError(f"`predictions` needs at least 2 classifiers, got {len(predictions)}.")
    names = ["y_true", *(f"predictions[{i}]" for i in range(len(predictions)))]
    arrays = [_labels_iv(x, name) for x, name in zip((y_true, *predictions), names)]
    for a, name in zip(arrays, names):
        if a.ndim != 1:
            raise ValueError(f"`{name}` must be 1-dimensional, got shape {tuple(a.shape)}.")
        v.check_same_shape(arrays[0], a, "y_true", name)
    arrays = [np.asarray(a) for a in arrays]
    if all(_is_binary(a) for a in arrays):  # {0, 1} read as {-1, +1}, each array its own
        arrays = [np.asarray(v.as_label_array(a, n)) for a, n in zip(arrays, names)]
    return [np.asarray(a) for a in arrays], np.stack([a == arrays[0] for a in arrays[1:]], axis=1)


def _exact_feasible(m, k, n_mixed_rows):
    cells = (m + 1) ** k
    return cells <= EXACT_CELLS and cells * n_mixed_rows * math.comb(k, k // 2) <= EXACT_WORK


def _exact_tail(x):
    """``P(sum_j C_j^2 >= observed)`` over within-row exchanges of binary ``x : (m, k)``.

    The column sums' distribution, one row at a time: a row with ``r`` ones puts
    them on each of the ``C(k, r)`` column subsets with equal probability.
    """
    m, k = x.shape
    dist = np.zeros((m + 1,) * k)
    dist[(0,) * k] = 1.0
    for r in x.sum(axis=1).astype(int):
        new = np.zeros_like(dist)
        subsets = list(itertools.combinations(range(k), r))
        for sub in subsets:
            dst = tuple(slice(1, None) if j in sub else slice(None) for j in range(k))
            src = tuple(slice(None, -1) if j in sub else slice(None) for j in range(k))
            new[dst] += dist[src]
        dist = new / len(subsets)
    grids = np.meshgrid(*([np.arange(m + 1)] * k), indexing="ij")
    sq = sum(g**2 for g in grids)
    obs = int(np.sum(x.sum(axis=0) ** 2))
    return float(min(1.0, dist[sq >= obs].sum()))


@x64
def cochran_q(
    y_true=None,
    *predictions,
    correct=None,
    method="chi2",
    n_resamples=None,
    key=None,
    correction="holm",
    pairwise_method="exact",
    names=None,
):
    """Cochran's Q test of equal accuracy of k classifiers on the same instances.

    Parameters
    ----------
    y_true : array_like, (n,)
        True labels (binary ±1/0-1 or integer classes).
    *predictions : array_like, (n,) each
        Predicted labels of the k >= 2 classifiers (binary arrays may use {-1, +1} or
        {0, 1}, each its own, as :func:`mcnemar`).
    correct : array_like, (n, k), optional
        Instead of ``y_true`` and ``predictions``: the correctness matrix, 1 (or True)
        where classifier ``j`` is right on instance ``i``, as statsmodels'
        ``cochrans_q(x)`` and mlxtend's tables take it.
    method : {"chi2", "permutation", "exact", "monte-carlo"}
        The p-value in ``pvalue``: chi-square with ``k - 1`` df (mlxtend's and
        statsmodels' ``cochrans_q``), or the permutation null of exchanging the k
        classifiers' correctness within each instance: ``"exact"`` enumeration,
        ``"monte-carlo"`` draws, ``"permutation"`` exact when the enumeration is small
        (column-sum table of at most 2^22 cells), else Monte Carlo.
    n_resamples : int, optional
        Monte Carlo draws (default 100,000); refused where no draws are made.
    key : int or JAX key, optional
        Seed of the draws.
    correction : str, default "holm"
        :func:`adjust_pvalues` method for the pairwise McNemar p-values.
    pairwise_method : {"exact", "midp", "chi2"}
        :func:`mcnemar`'s method for each pair.
    names : sequence of str, optional
        Classifier names (recorded in the result).

    Returns
    -------
    CochranQResult

    Notes
    -----
    With ``x_ij = 1`` when classifier ``j`` is right on instance ``i``, column sums
    ``C_j``, row sums ``R_i`` and ``N = sum C_j``:
    ``Q = (k - 1)(k sum C_j^2 - N^2) / (k N - sum R_i^2)``, 0 when every instance is
    right for all or none. The permutation p-value is ``P(Q* >= Q)``: exact
    (``count / N``) or Monte Carlo (``(b + 1) / (B + 1)``).

    References
    ----------
    Cochran, W. G. (1950), The comparison of percentages in matched samples,
    Biometrika 37, 256-266. Raschka, S. (2018), Model evaluation, model selection, and
    algorithm selection in machine learning, arXiv:1811.12808.

    Examples
    --------
    >>> import jaxtests
    >>> y = [1, 1, 1, 1, 1, -1, -1, -1, -1, -1]
    >>> a = [1, 1, 1, 1, 1, -1, -1, -1, -1, -1]
    >>> b = [1, 1, -1, 1, 1, -1, 1, -1, -1, -1]
    >>> c = [-1, 1, -1, -1, 1, 1, 1, -1, -1, 1]
    >>> r = jaxtests.cochran_q(y, a, b, c)
    >>> round(float(r.statistic), 4), r.df
    (9.3333, 2)

    The same from the correctness matrix (statsmodels' ``cochrans_q`` input):

    >>> import numpy as np
    >>> x = np.stack([np.equal(p, y) for p in (a, b, c)], axis=1).astype(int)
    >>> round(float(jaxtests.cochran_q(correct=x).statistic), 4)
    9.3333
    """
    from jaxtests._mcnemar import MCNEMAR_METHODS, mcnemar
    from jaxtests._permutation_methods import N_RESAMPLES
    from jaxtests._posthoc import adjust_pvalues

    v.check_choice(method, "method", METHODS)
    v.check_choice(pairwise_method, "pairwise_method", MCNEMAR_METHODS)
    from jaxtests._posthoc import _ADJUST_ALIASES
    from jaxtests.kernels.multitest import ADJUSTMENTS

    if not isinstance(correction, str):
        raise TypeError(f"`correction` must be a str, got {type(correction).__name__}.")
    v.check_choice(_ADJUST_ALIASES.get(correction, correction), "correction", ADJUSTMENTS)
    if n_resamples is not None:
        n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    if correct is not None:
        if y_true is not None or predictions:
            raise ValueError(
                "pass either `correct` (a correctness matrix) or `y_true` and `predictions`, "
                "not both."
            )
        arrays, x = _correctness_iv(correct)
    elif y_true is None:
        raise TypeError("cochran_q needs `y_true` and `predictions`, or `correct=`.")
    else:
        arrays, x = _correct_iv(y_true, predictions)
    k = x.shape[1]
    names = v.as_names(names, k) if names is not None else None
    if names is not None and len(names) != k:
        raise ValueError(f"`names` must hold {k} names, got {len(names)}.")
    xf = x.astype(np.float64)
    q = float(kboot.cochran_q(xf, np))  # numpy on the host: nothing compiled
    df = k - 1
    p_chi2 = float(_tails.chi2_sf(q, df))
    mixed = xf[(xf.sum(axis=1) > 0) & (xf.sum(axis=1) < k)]
    m = mixed.shape[0]
    seed = None
    used = 0
    interval = None
    if method == "permutation":
        method = "exact" if _exact_feasible(m, k, m) else "monte-carlo"
    if method == "exact":
        if not _exact_feasible(m, k, m):
            raise ValueError(
                f"`method`='exact' would enumerate a column-sum table of {(m + 1) ** k:,} "
                f"cells ({m} instances that the classifiers disagree on, k = {k}): use "
                "method='monte-carlo' or 'permutation'."
            )
        if n_resamples is not None:
            raise ValueError(
                f"`n_resamples`={n_resamples} is not used by method='exact' (no random draws)."
            )
        p = _exact_tail(mixed) if m > 0 else 1.0
    elif method == "monte-carlo":
        used = N_RESAMPLES if n_resamples is None else n_resamples
        if m < 2:  # nothing or one row to exchange: every arrangement gives the same Q
            from jaxtests._random import resolve_key

            _, seed = resolve_key(key)
            p, interval = 1.0, (1.0, 1.0)
        else:
            from jaxtests._within_block import within_block_pvalue

            res = within_block_pvalue(
                kboot.cochran_q, mixed, alternative="greater", n_resamples=used, key=key
            )
            p = float(res.pvalue)
            interval = tuple(float(t) for t in np.asarray(res.pvalue_interval).reshape(-1))
            seed = res.seed
    else:
        if n_resamples is not None or key is not None:
            raise ValueError(
                "`n_resamples` and `key` are not used by method='chi2': pass "
                "method='permutation' to draw."
            )
        p = p_chi2
    # Pairwise McNemar tests, adjusted over the k (k - 1) / 2 pairs
    pairs = list(itertools.combinations(range(k), 2))
    raw = np.array(
        [
            float(mcnemar(arrays[0], arrays[1 + a], arrays[1 + b], method=pairwise_method).pvalue)
            for a, b in pairs
        ]
    )
    adj = np.asarray(adjust_pvalues(raw, correction))
    p_raw, p_adj = np.ones((k, k)), np.ones((k, k))
    for (a, b), r, s in zip(pairs, raw, adj):
        p_raw[a, b] = p_raw[b, a] = r
        p_adj[a, b] = p_adj[b, a] = s
    return CochranQResult(
        statistic=np.float64(q),
        pvalue=np.float64(p),
        pvalue_chi2=np.float64(p_chi2),
        pvalue_interval=None if interval is None else np.asarray(interval, np.float64),
        pairwise_pvalue=p_raw,
        pairwise_pvalue_adjusted=p_adj,
        accuracy=xf.mean(axis=0),
        df=df,
        method=method,
        n_resamples=used,
        seed=seed,
        correction=correction,
        pairwise_method=pairwise_method,
        names=names,
    )


del functools
