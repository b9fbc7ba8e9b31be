"""The wild cluster bootstrap of a mean difference (restricted, WCR), Rademacher or Webb weights."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _clusters, _pvalues
from jaxtests._buckets import bucket, pad_axis
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests._ttests import _pair_iv
from jaxtests._validation import as_int_scalar, check_alternative, check_choice, is_concrete

__all__ = ["WildBootstrapResult", "wild_cluster_bootstrap"]

WEIGHTS = ("rademacher", "webb")
# Webb (2014)'s six points, each with probability 1/6: mean 0, variance 1
_WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
_ELEMENTS = 2**21  # weights per block of draws (16 MiB in float64)


@result
class WildBootstrapResult:
    """Result of :func:`wild_cluster_bootstrap`.

    Attributes
    ----------
    statistic : array
        The cluster-robust (CR1) t of the mean difference, as
        ``ttest_paired(a, b, cluster=...)``.
    pvalue : array
        The bootstrap p-value (see :func:`wild_cluster_bootstrap`).
    pvalue_interval : array, (..., 2)
        99% Clopper-Pearson interval of the p-value of infinitely many draws
        (Monte Carlo); ``(pvalue, pvalue)`` when enumerated.
    n_extreme : array
        Draws at least as extreme as the observed ``t``.
    mean_difference, standard_error : array
        The mean of ``a - b`` and its CR1 standard error.
    bootstrap_distribution : array or None
        The bootstrap ``t*`` of every draw, ``(..., n_resamples)``, when asked.
    n_clusters : int
    weights : str
        "rademacher" or "webb".
    method : str
        "exact" (all ``2^G`` Rademacher patterns) or "monte-carlo".
    alternative : str
    n_resamples : int
        Draws (``2^G`` when exact).
    seed : int, tuple or None
        Seed that repeats the draws (None when exact).
    """

    statistic: jax.Array
    pvalue: jax.Array
    pvalue_interval: jax.Array
    n_extreme: jax.Array
    mean_difference: jax.Array
    standard_error: jax.Array
    bootstrap_distribution: jax.Array | None = None
    n_clusters: int = static_field(default=0)
    weights: str = static_field(default="rademacher")
    method: str = static_field(default="monte-carlo")
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=0)
    seed: object = static_field(default=None)


def _t_star(w, sums, sizes, g):
    """CR1 ``t`` of the data ``w_g d_i``, ``w : (B, G)``, ``sums : (H, G)`` -> ``(H, B)``;
    ``g`` the live clusters (a shape bucket's padding has sums and sizes 0: nothing added).

    With ``S_g`` a cluster's sum and ``n_g`` its size: mean ``M = sum w_g S_g / N``,
    the cluster's residual sum ``w_g S_g - n_g M``, ``t = M / sqrt(G / (G - 1) sum
    (w_g S_g - n_g M)^2 / N^2)``.
    """
    xp = np if isinstance(w, np.ndarray) else jnp  # enumerated on the host, drawn in JAX
    n = sizes.sum()
    ws = w[None, :, :] * sums[:, None, :]  # (H, B, G)
    mean = ws.sum(-1) / n
    resid = ws - sizes[None, None, :] * mean[..., None]
    return mean / (xp.sqrt(g / (g - 1) * (resid**2).sum(-1)) / n)


@functools.partial(jax.jit, static_argnames=("weights", "draws", "want"))
def _block(key, block, sums, sizes, g, t_obs, tol, n_left, weights, draws, want):
    """Counts of one block of ``draws`` draws (those past ``n_left`` masked out)."""
    k = jax.random.fold_in(key, block)
    if weights == "rademacher":
        w = jax.random.rademacher(k, (draws, sums.shape[-1]), dtype=sums.dtype)
    else:
        w = jnp.asarray(_WEBB, sums.dtype)[jax.random.randint(k, (draws, sums.shape[-1]), 0, 6)]
    t = _t_star(w, sums, sizes, g)  # (H, draws)
    live = (jnp.arange(draws) < n_left)[None, :]
    t_obs = t_obs[:, None]
    tol = tol[:, None]
    ge = jnp.sum(live & (t >= t_obs - tol), axis=-1)
    le = jnp.sum(live & (t <= t_obs + tol), axis=-1)
    ab = jnp.sum(live & (jnp.abs(t) >= jnp.abs(t_obs) - tol), axis=-1)
    return ge, le, ab, (t if want else None)


def block_draws(g):
    """Draws per block for ``g`` clusters: a power of two in [64, 4096], about
    ``_ELEMENTS`` weights. It depends on ``g`` only, so a key's draws never depend on
    the batch."""
    return int(min(4096, max(64, 2 ** (_ELEMENTS // g).bit_length() // 2)))


def _monte_carlo(key, sums, sizes, t_obs, tol, weights, n_resamples, want):
    """Tail counts (and the ``t*`` when ``want``) of ``n_resamples`` draws, block by block;
    the hypotheses in chunks (a block's ``(H, draws, G)`` products stay near 32 MB).

    Clusters are padded to a shape bucket ``Gp`` (sums and sizes 0) and the hypotheses to
    a chunk of a bucket's size, so a new size inside a compiled bucket compiles nothing;
    block ``j`` draws a ``(block_draws(Gp), Gp)`` weight matrix from ``fold_in(key, j)``
    and uses its first ``G`` columns.
    """
    h, g = sums.shape
    gp = bucket(g)
    draws = block_draws(gp)
    rows = max(1, 4 * _ELEMENTS // (draws * gp))
    chunk = rows if h > rows else bucket(h)
    pad = -h % chunk
    sums = pad_axis(sums, gp)
    sizes = pad_axis(sizes, gp)
    padded = [np.pad(x, [(0, pad)] + [(0, 0)] * (x.ndim - 1)) for x in (sums, t_obs, tol)]
    ge = le = ab = np.zeros(h, np.int64)
    parts = []
    for j in range(-(-n_resamples // draws)):
        left = n_resamples - j * draws
        counts, ts = [], []
        for c in range(0, h + pad, chunk):
            s, t, tl = (jnp.asarray(x[c : c + chunk]) for x in padded)
            out = _block(key, j, s, jnp.asarray(sizes), float(g), t, tl, left, weights, draws, want)
            counts.append([np.asarray(x) for x in out[:3]])
            ts.append(out[3])
        c_ge, c_le, c_ab = (np.concatenate(x)[:h] for x in zip(*counts))
        ge, le, ab = ge + c_ge, le + c_le, ab + c_ab
        if want:
            parts.append(np.concatenate([np.asarray(t) for t in ts])[:h, : min(draws, left)])
    return ge, le, ab, (np.concatenate(parts, axis=-1) if want else None)


def _wild_iv(weights, n_resamples, return_distribution):
    check_choice(weights, "weights", WEIGHTS)
    n_resamples = as_int_scalar(n_resamples, "n_resamples", minimum=1)
    if n_resamples > 10**9:
        raise ValueError(f"`n_resamples`={n_resamples} exceeds 10^9 (hours of draws).")
    if not isinstance(return_distribution, bool | np.bool_):
        raise TypeError(
            f"`return_distribution` must be a bool, got {type(return_distribution).__name__}."
        )
    return n_resamples


@x64
def wild_cluster_bootstrap(
    a,
    b,
    *,
    cluster,
    weights="rademacher",
    n_resamples=9999,
    alternative="two-sided",
    key=None,
    axis=-1,
    return_distribution=False,
):
    """Wild cluster bootstrap test of a zero mean difference (restricted: WCR).

    Parameters
    ----------
    a, b : array_like, same shape ``(..., n, ...)``
        Per-instance scores or losses of models A and B, paired along ``axis``; other
        axes are batch axes, all drawn with the same weights.
    cluster : array_like, (n,)
        One cluster label per instance (integers or strings).
    weights : {"rademacher", "webb"}
        Each cluster's multiplier: ±1 with probability 1/2, or Webb's six-point
        distribution (better with fewer than about 12 clusters, where Rademacher
        has few distinct patterns).
    n_resamples : int
        Draws; Rademacher weights enumerate all ``2^G`` patterns instead when
        ``2^G <= n_resamples`` (as wildboottest does).
    alternative : {"two-sided", "less", "greater"}
        "two-sided" is symmetric, ``P(|t*| >= |t|)`` (wildboottest's "two-tailed",
        Roodman et al. 2019's default); "greater" ``P(t* >= t)``, "less" ``P(t* <= t)``.
    key : int, JAX key or None
        Randomness (recorded as ``seed``); unused when enumerated.
    axis : int
        The instance axis.
    return_distribution : bool
        Keep every draw's ``t*``.

    Returns
    -------
    WildBootstrapResult

    Notes
    -----
    The model is the intercept-only regression of ``d = a - b`` with cluster-robust
    (CR1) ``t = mean(d) / se``, ``se^2 = G / (G - 1) sum_g E_g^2 / N^2`` (``E_g``
    the cluster's sum of residuals), as ``ttest_paired(a, b, cluster=...)``. Under
    H0 the restricted fit is 0, so its residuals are ``d`` itself and a draw's data
    are ``d*_i = w_g d_i`` with one weight per cluster; ``t*`` is the same CR1 ``t``
    of ``d*`` (Cameron, Gelbach & Miller 2008; MacKinnon & Webb 2017). The
    p-value counts draws with ``t*`` at least as extreme as ``t`` (within the
    library's tie tolerance): ``b / 2^G`` when enumerated, ``(b + 1) / (B + 1)``
    for Monte Carlo draws (never 0). wildboottest counts strictly (``|t*| > |t|``)
    and divides by ``B``: on the same weights the ``t*`` are equal and the counts
    differ by the draws tied with ``t`` (with Rademacher weights, at least the
    pattern of all ones and its negation). With Rademacher weights and equal
    cluster sizes this is the cluster sign-flip test of :func:`signflip_test`.

    Draws come in blocks of a fixed size per ``G``; block ``j`` uses
    ``fold_in(key, j)``: the same key gives the same draws on any device and for
    any batch (``jaxtests._wild._monte_carlo`` has the layout).

    References
    ----------
    Cameron, A. C., Gelbach, J. B., & Miller, D. L. (2008). Bootstrap-based improvements
    for inference with clustered errors. Review of Economics and Statistics 90, 414-427.
    Webb, M. D. (2014). Reworking wild bootstrap based inference for clustered errors.
    Queen's Economics Department Working Paper 1315.
    Roodman, D., MacKinnon, J. G., Nielsen, M. O., & Webb, M. D. (2019). Fast and wild:
    bootstrap inference in Stata using boottest. The Stata Journal 19, 4-60.

    Examples
    --------
    >>> import numpy as np, jaxtests
    >>> a = [0.81, 0.82, 0.84, 0.78, 0.85, 0.86, 0.82, 0.83, 0.82, 0.81]
    >>> b = [0.80, 0.77, 0.70, 0.83, 0.80, 0.78, 0.75, 0.80, 0.78, 0.77]
    >>> passage = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    >>> r = jaxtests.wild_cluster_bootstrap(a, b, cluster=passage)  # 2^5 patterns
    >>> r.method, r.n_resamples, float(r.pvalue)
    ('exact', 32, 0.0625)
    """
    check_alternative(alternative)
    n_resamples = _wild_iv(weights, n_resamples, return_distribution)
    a, b = _pair_iv(a, b, axis, 2, "parametric")
    for arr, name in ((a, "a"), (b, "b")):
        if not is_concrete(arr):
            raise TypeError(f"`{name}` is traced: the wild bootstrap needs concrete arrays.")
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    groups = _clusters.cluster_iv(cluster, d.shape[-1])
    batch = d.shape[:-1]
    d = d.reshape(-1, d.shape[-1])
    mean, se, _ = _clusters.robust_se(d, groups, "CR1")
    sums = groups.sums(d)
    sizes = groups.sizes.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = mean / se
    g = groups.n_clusters
    # the tie rule of the permutation engine, on the scale of |t|
    tol = np.asarray(_pvalues.tie_tol(t_obs, np.abs(t_obs), xp=np), np.float64)
    tol = np.broadcast_to(np.nan_to_num(tol), t_obs.shape)
    exact = weights == "rademacher" and g < 63 and 2**g <= n_resamples
    if exact:
        patterns = 1 - 2 * ((np.arange(2**g)[:, None] >> np.arange(g)[::-1]) & 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = _t_star(patterns.astype(np.float64), sums, sizes, g)
        t_o, tl = t_obs[:, None], tol[:, None]
        ge, le = (t >= t_o - tl).sum(-1), (t <= t_o + tl).sum(-1)
        ab = (np.abs(t) >= np.abs(t_o) - tl).sum(-1)
        n_draws, seed, dist = 2**g, None, t
    else:
        typed_key, seed = resolve_key(key)
        ge, le, ab, dist = _monte_carlo(
            typed_key, sums, sizes, t_obs, tol, weights, n_resamples, bool(return_distribution)
        )
        n_draws = n_resamples
    if alternative == "two-sided":
        adj = 0 if exact else 1
        p = (ab + adj) / (n_draws + adj)
        count = ab
        interval = (p, p) if exact else _pvalues.clopper_pearson(ab, n_draws)
    else:
        p, count, interval = _pvalues.counts_to_pvalues(ge, le, n_draws, alternative, exact)
    p = np.where(np.isnan(t_obs), np.nan, p)
    shape = lambda x: np.asarray(x, np.float64).reshape(batch)[()]  # noqa: E731
    return WildBootstrapResult(
        statistic=shape(t_obs),
        pvalue=shape(p),
        pvalue_interval=np.stack(
            [np.broadcast_to(interval[0], p.shape), np.broadcast_to(interval[1], p.shape)], -1
        ).reshape((*batch, 2)),
        n_extreme=np.asarray(count, np.int64).reshape(batch)[()],
        mean_difference=shape(mean),
        standard_error=shape(se),
        bootstrap_distribution=None
        if not return_distribution
        else np.asarray(dist).reshape((*batch, n_draws)),
        n_clusters=g,
        weights=weights,
        method="exact" if exact else "monte-carlo",
        alternative=alternative,
        n_resamples=n_draws,
        seed=seed,
    )
