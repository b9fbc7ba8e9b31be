"""Many models on one benchmark: all pairs (or against a control) by sign flips, with
max-T or p-value adjustment, a compact letter display and bootstrap intervals of ranks."""

import functools
import string

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _clusters, _pvalues, _tails
from jaxtests import _validation as v
from jaxtests._posthoc import _ADJUST_ALIASES, _bron_kerbosch, _near_bits
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests.kernels import exceedance as kexceedance
from jaxtests.kernels import multitest as kmultitest
from jaxtests.kernels import pairs as kpairs
from jaxtests.kernels import random as krandom
from jaxtests.kernels import resampling as kresampling

__all__ = ["ModelComparison", "compare_models"]

EPS = kexceedance.EPS
CORRECTIONS = ("maxT", *kmultitest.ADJUSTMENTS, *_ADJUST_ALIASES)
METHODS = ("auto", "exact", "monte-carlo")
MAX_EXACT_ITEMS = 24  # 2^24 patterns: enumeration beyond that is Monte Carlo's job
_BLOCK_BYTES = 2**28  # about 256 MB of float64 signs (or bootstrap weights) per block:
# the product is a skinny GEMM, 4-6x faster at 256 draws than at 32 (m = 10^5, 2 cores)
# The bootstrap's key is fold_in(key, _BOOT_STREAM): the sign flips' key blocks are
# fold_in(key, g // 4096), which reach 2^32 - 1 only past 10^13 draws.
_BOOT_STREAM = 2**32 - 1


def _block_draws(per_draw, n_total):
    """Draws per block: a power of two (8 to 4096) using about :data:`_BLOCK_BYTES`, given
    each draw's bytes (its float64 signs or weights, and its pairs' or ranks' arrays)."""
    draws = max(8, min(4096, _BLOCK_BYTES // per_draw))
    draws = 1 << (draws.bit_length() - 1)
    return int(min(draws, 1 << max(3, (int(n_total) - 1).bit_length())))


@functools.partial(jax.jit, static_argnames=("draws", "exact"))
def _pair_counts(key, y, ia, ib, m, t_obs, tol, scale, n_blocks, n_total, *, draws, exact):
    """Tail and max-T counts of every pair over ``n_total`` sign patterns; ``(3, P)`` int64.

    Monte Carlo draw ``g`` reads the library's stream as :func:`jaxtests.signflip_test`
    does (key block ``g // 4096``, counter stride ``stride_words(n)``), so a pair sees
    the sign patterns that ``signflip_test`` of its differences sees with the same key.
    Exact: pattern ``g`` is the bits of ``g``.
    """
    n = y.shape[1]
    n_words = -(-n // 32)
    stride = krandom.stride_words(n)
    lane = jnp.arange(draws, dtype=jnp.int64)

    def body(b, counts):
        first = b.astype(jnp.int64) * draws
        if exact:
            words = kresampling.enumeration_words(first, draws, n_words)
        else:
            keys, local = krandom.draw_keys(key, first, draws)
            words = krandom.word_grid(keys[:, 0], keys[:, 1], local, n_words, stride)
        bits = kresampling.words_to_bits(words, n)
        t = kpairs.flipped_pair_means(bits, y, ia, ib, m)
        valid = first + lane < n_total
        ge, le = kexceedance.tail_counts(t, t_obs, tol, valid)
        mx = kexceedance.maxt_counts(t, t_obs, tol, scale, valid, "two-sided")
        return counts + jnp.stack([ge, le, mx])

    return jax.lax.fori_loop(0, n_blocks, body, jnp.zeros((3, ia.shape[0]), jnp.int64))


@functools.partial(jax.jit, static_argnames=("draws", "higher_is_better"))
def _rank_counts(key, sums, sizes, n_blocks, n_total, *, draws, higher_is_better):
    """Histogram ``(k, k)`` of each model's rank over bootstrap resamples of the columns.

    Resample ``g`` draws ``G`` columns with replacement from ``fold_in(key, g)`` (its own
    key: any block size gives the same resamples); a model's mean is its resampled sum
    over the resampled size (the pooled ratio of whole clusters).
    """
    k, g_cols = sums.shape
    lane = jnp.arange(draws, dtype=jnp.int64)

    def draw(g):
        return jax.random.randint(
            jax.random.fold_in(key, g.astype(jnp.uint32)), (g_cols,), 0, g_cols
        )

    def body(b, hist):
        g = b.astype(jnp.int64) * draws + lane
        idx = jax.vmap(draw)(g)
        w = jnp.zeros((draws, g_cols), sums.dtype).at[lane[:, None], idx].add(1.0)
        means = (w @ sums.T) / (w @ sizes)[:, None]
        return hist + kpairs.rank_histogram(means, g < n_total, higher_is_better)

    return jax.lax.fori_loop(0, n_blocks, body, jnp.zeros((k, k), jnp.int64))


def _pair_sq_norms(y, ia, ib):
    """``sum_i (y_a - y_b)^2`` of every pair from the Gram matrix of ``y``.

    ``y`` is centered per item across models, which keeps the Gram entries near the
    spread between models; a pair whose result lost more than half the digits to
    cancellation (nearly equal models) is recomputed from its differences.
    """
    gram = y @ y.T
    diag = np.diag(gram)
    sq = diag[ia] + diag[ib] - 2 * gram[ia, ib]
    bad = np.flatnonzero(sq <= 1e-8 * (diag[ia] + diag[ib]))
    for p in bad:
        sq[p] = np.sum((y[ia[p]] - y[ib[p]]) ** 2)
    return np.maximum(sq, 0.0)


def _letters(reject, means, higher_is_better):
    """Compact letter display: letter ``j`` for the ``j``-th maximal set of models with no
    significant pair, ``"a"`` for the set holding the best model; returns per-model strings
    and the sets (as index tuples), in letter order."""
    k = reject.shape[0]
    found = _bron_kerbosch(_near_bits(np.asarray(reject, bool)))
    rank = np.argsort(np.argsort(-means if higher_is_better else means, kind="stable"))
    found = sorted(found, key=lambda c: sorted(rank[i] for i in c))
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    if len(found) <= len(alphabet):
        labels = list(alphabet[: len(found)])
        sep = ""
    else:  # past 52 sets, numbered letters joined by dots
        labels = [f"{alphabet[j % 52]}{j // 52}" for j in range(len(found))]
        sep = "."
    per_model = [sep.join(lab for lab, c in zip(labels, found) if i in c) for i in range(k)]
    return tuple(per_model), tuple(tuple(int(i) for i in c) for c in found)


@result
class ModelComparison:
    """Result of :func:`compare_models`.

    Pair ``p`` compares models ``pairs[p, 0]`` and ``pairs[p, 1]``: ``statistic[p]``
    is the mean of their per-item differences (first minus second; against a
    control, each model minus the control), ``pvalue`` the sign-flip p-value,
    ``pvalue_adjusted`` after ``correction``, ``reject`` ``pvalue_adjusted <= alpha``.
    ``means`` are the models' means, ``rank`` their observed competition ranks
    (1 = best) and ``rank_interval`` ``(k, 2)`` the bootstrap percentile interval
    of each rank (None with ``n_bootstrap=0``). ``letters`` is the compact letter
    display (models that share a letter are not significantly different) and
    ``groups`` its sets of model indices, for all pairs only (None against a control).
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    reject: np.ndarray
    pairs: np.ndarray
    means: np.ndarray
    rank: np.ndarray
    rank_interval: np.ndarray | None
    names: tuple = static_field()
    letters: tuple | None = static_field()
    groups: tuple | None = static_field()
    control: int | None = static_field()
    correction: str = static_field()
    alpha: float = static_field()
    higher_is_better: bool = static_field()
    method: str = static_field()
    n_resamples: int = static_field()
    n_bootstrap: int = static_field()
    confidence_level: float = static_field()
    seed: object = static_field()
    n_clusters: int | None = static_field(default=None)

    def reject_matrix(self):
        """Symmetric ``(k, k)`` boolean matrix of the rejected pairs."""
        k = len(self.names)
        r = np.zeros((k, k), bool)
        a, b = np.asarray(self.pairs).T
        r[a, b] = r[b, a] = np.asarray(self.reject)
        return r

    def text(self):
        """One line per model, best first: mean, rank interval and letters."""
        order = np.argsort(-self.means if self.higher_is_better else self.means, kind="stable")
        width = max(len(s) for s in self.names)
        lines = []
        for i in order:
            line = f"{self.names[i]:<{width}}  {self.means[i]:>11.6g}  rank {self.rank[i]}"
            if self.rank_interval is not None:
                lo, hi = self.rank_interval[i]
                line += f" [{lo}, {hi}]"
            if self.letters is not None:
                line += f"  {self.letters[i]}"
            lines.append(line)
        return "\n".join(lines)


def _compare_models_iv(
    scores, names, control, cluster, correction, alpha, n_resamples, method,
    n_bootstrap, confidence_level, higher_is_better,
):  # fmt: skip
    x = np.asarray(v.as_float_array(scores, "scores", ndim=2), np.float64)
    k, m = x.shape
    if k < 2:
        raise ValueError(f"`scores` needs at least 2 models (rows), got shape {x.shape}.")
    if m < 2:
        raise ValueError(f"`scores` needs at least 2 items (columns), got shape {x.shape}.")
    names = v.as_names(names, k, "names") or tuple(str(i) for i in range(k))
    if control is not None:
        if isinstance(control, str):
            if control not in names:
                raise ValueError(f"`control` {control!r} is not one of `names`.")
            control = names.index(control)
        else:
            control = v.as_int_scalar(control, "control", minimum=0)
            if control >= k:
                raise ValueError(f"`control` must be a model index below {k}, got {control}.")
    v.check_choice(correction, "correction", CORRECTIONS)
    alpha = v.check_probability(alpha, "alpha")
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    v.check_choice(method, "method", METHODS)
    n_bootstrap = v.as_int_scalar(n_bootstrap, "n_bootstrap", minimum=0)
    confidence_level = v.check_probability(confidence_level, "confidence_level")
    if not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be True or False, got {type(higher_is_better).__name__}."
        )
    groups = None if cluster is None else _clusters.cluster_iv(cluster, m)
    n_cols = m if groups is None else groups.n_clusters
    if method == "exact" and n_cols > MAX_EXACT_ITEMS:
        unit = "items" if groups is None else "clusters"
        raise ValueError(
            f"`method`='exact' enumerates 2^{n_cols} sign patterns ({unit}); at most "
            f"2^{MAX_EXACT_ITEMS} are supported. Use 'monte-carlo'."
        )
    return x, names, control, groups, alpha, n_resamples, n_bootstrap, confidence_level


@x64
def compare_models(
    scores,
    *,
    names=None,
    control=None,
    cluster=None,
    correction="maxT",
    alpha=0.05,
    n_resamples=10_000,
    method="auto",
    n_bootstrap=1000,
    confidence_level=0.95,
    higher_is_better=True,
    key=None,
):
    """Compare ``k`` models on the same items: all pairs, or each against a control.

    Parameters
    ----------
    scores : array_like, (k, m)
        One row per model, one column per item: per-item scores (accuracy, 0/1
        correctness) or losses, on the same items for every model.
    names : sequence of str, optional
        The models' names (default ``"0"``, ``"1"``, ...).
    control : int or str, optional
        Compare every other model with this one (``k - 1`` pairs) instead of all
        ``k (k - 1) / 2`` pairs.
    cluster : array_like, (m,), optional
        One cluster label per item: the items of a cluster are flipped together and
        resampled whole (their sums stand for them, as in :func:`jaxtests.signflip_test`).
    correction : {"maxT", "holm", "bonferroni", "hochberg", "hommel", "fdr_bh", "fdr_by", "none"}
        "maxT": Westfall & Young's single-step max-T over the pairs from one set of
        sign patterns (family-wise, uses the pairs' dependence); otherwise
        :func:`jaxtests.adjust_pvalues` of the raw p-values ("fdr_bh": false
        discovery rate).
    alpha : float
        Level of the decisions ``reject = pvalue_adjusted <= alpha``.
    n_resamples : int
        Monte Carlo sign patterns; "auto" enumerates all ``2^m`` (``2^G``) instead when
        there are no more of them.
    method : {"auto", "exact", "monte-carlo"}
    n_bootstrap : int
        Bootstrap resamples of the items (clusters) for the rank intervals; 0 skips them.
    confidence_level : float
        Of the rank intervals.
    higher_is_better : bool
        True for scores (rank 1 = largest mean), False for losses (sklearn's
        ``greater_is_better``).
    key : int, JAX key or None
        Randomness of the sign patterns (the bootstrap uses ``fold_in(key, 2^32 - 1)``);
        recorded as ``seed``.

    Returns
    -------
    ModelComparison

    Notes
    -----
    Pair ``(a, b)``'s two-sided sign-flip test of ``d = x_a - x_b`` flips the sum
    ``sum_i s_i d_i = T_a(s) - T_b(s)``, ``T_a(s) = sum_i s_i x_ai``: one
    ``(draws, m) @ (m, k)`` product per block gives every pair, and memory does not
    grow with the draws (counts are accumulated per block). The Monte Carlo draws
    are those of :func:`jaxtests.signflip_test` with the same key, so a pair's raw
    p-value is ``signflip_test(x_a - x_b, method=r.method, key=key)``'s and the max-T
    adjusted ones are ``signflip_test(D, method=r.method, correction="maxT")``'s for
    the stacked pair differences ``D`` (its "auto" may pick the binomial closed form
    for 0/1 differences; equal up to draws within ``1e-13`` of a threshold: the tie bands
    here allow for the rounding of ``T_a`` and ``T_b``). Max-T standardises each
    pair by its null standard deviation ``sqrt(sum_i d_i^2) / m``, from the Gram
    matrix of the rows centred per item (pairs whose norm cancels are recomputed).
    Rank intervals are percentile intervals (inverse empirical CDF) of each
    model's competition rank ``1 + #(strictly better means)`` over bootstrap
    resamples of the items, or of whole clusters (means as pooled ratios).
    A model's letters come from the maximal sets of models with no significantly
    different pair (Piepho 2004's display; letter "a" holds the best model).

    References
    ----------
    Westfall, P. H. & Young, S. S. (1993). Resampling-Based Multiple Testing. Wiley.
    Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
    comparisons. J. Comput. Graph. Stat. 13(2), 456-466.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> acc = (rng.random((3, 400)) < np.array([[0.6], [0.62], [0.8]])).astype(float)
    >>> r = compare_models(acc, names=["a", "b", "c"], n_bootstrap=200, key=0)
    >>> r.letters  # "a" holds the best model
    ('b', 'b', 'a')
    """
    x, names, control, groups, alpha, n_resamples, n_bootstrap, level = _compare_models_iv(
        scores, names, control, cluster, correction, alpha, n_resamples, method,
        n_bootstrap, confidence_level, higher_is_better,
    )  # fmt: skip
    correction = _ADJUST_ALIASES.get(correction, correction)
    typed_key, seed = resolve_key(key)
    k, m = x.shape
    means = x.mean(axis=1)
    # Centred per item across models: pairs do not see a common shift, and the flipped
    # sums' rounding (and the Gram matrix's) scales with what is left, the models' spread.
    y = x - x.mean(axis=0)
    if groups is not None:
        y = groups.sums(y)
    n = y.shape[1]
    if control is None:
        ia, ib = (a.astype(np.int32) for a in np.triu_indices(k, 1))
    else:
        ib = np.full(k - 1, control, np.int32)
        ia = np.array([j for j in range(k) if j != control], np.int32)
    row_sum = y.sum(axis=1)
    abs_sum = np.abs(y).sum(axis=1)
    t_obs = (row_sum[ia] - row_sum[ib]) / m
    mag = (abs_sum[ia] + abs_sum[ib]) / m
    # scipy's tie tolerance plus the rounding of two float64 sums of n terms
    # (Higham 2002, gamma_n sum|y|), so that ties are never missed.
    tol = kexceedance.tie_tol(t_obs, mag, xp=np) + 4 * (n + 32) * EPS * mag
    sq = _pair_sq_norms(y, ia, ib)
    scale = np.where(sq > 0, np.sqrt(sq) / m, 1.0)  # a pair of equal models: every draw ties

    exact = method == "exact" or (method == "auto" and n <= MAX_EXACT_ITEMS and 2**n <= n_resamples)
    n_total = 2**n if exact else n_resamples
    draws = _block_draws(8 * n + 32 * len(ia), n_total)  # signs; pair means and tests
    ge, le, mx = np.asarray(
        _pair_counts(
            typed_key, y, ia, ib, np.float64(m), t_obs, tol, scale,
            np.int32(-(-n_total // draws)), np.int64(n_total), draws=draws, exact=exact,
        )
    )  # fmt: skip
    p, _, _ = _pvalues.counts_to_pvalues(ge, le, n_total, "two-sided", exact)
    if correction == "maxT":
        adj = 0 if exact else 1
        # Westfall & Young (1993) single-step max-T; never below the raw p-value.
        p_adj = np.maximum(p, (mx + adj) / (n_total + adj))
    else:
        p_adj = _tails.adjust(p, correction)
    reject = p_adj <= alpha

    better = (
        means[None, :] > means[:, None] if higher_is_better else means[None, :] < means[:, None]
    )
    rank = 1 + better.sum(axis=1)
    interval = None
    if n_bootstrap > 0:
        sums, sizes = (y, np.ones(n)) if groups is None else (y, groups.sizes.astype(np.float64))
        bdraws = _block_draws(12 * n + 24 * k * k, n_bootstrap)  # weights, indices; ranks
        hist = np.asarray(
            _rank_counts(
                jax.random.fold_in(typed_key, _BOOT_STREAM), sums, sizes,
                np.int32(-(-n_bootstrap // bdraws)), np.int64(n_bootstrap),
                draws=bdraws, higher_is_better=bool(higher_is_better),
            )
        )  # fmt: skip
        cum = np.cumsum(hist, axis=1)
        q = ((1 - level) / 2, (1 + level) / 2)
        # numpy's "inverted_cdf" quantile: the smallest rank whose count reaches q B.
        interval = np.stack([1 + np.argmax(cum >= qq * n_bootstrap, axis=1) for qq in q], axis=1)

    letters = sets = None
    if control is None:
        r = np.zeros((k, k), bool)
        r[ia, ib] = r[ib, ia] = reject
        letters, sets = _letters(r, means, higher_is_better)
    return ModelComparison(
        statistic=t_obs,
        pvalue=p,
        pvalue_adjusted=p_adj,
        reject=reject,
        pairs=np.stack([ia, ib], axis=1),
        means=means,
        rank=rank,
        rank_interval=interval,
        names=names,
        letters=letters,
        groups=sets,
        control=control,
        correction=correction,
        alpha=alpha,
        higher_is_better=bool(higher_is_better),
        method="exact" if exact else "monte-carlo",
        n_resamples=n_total,
        n_bootstrap=n_bootstrap,
        confidence_level=level,
        seed=seed,
        n_clusters=None if groups is None else groups.n_clusters,
    )
