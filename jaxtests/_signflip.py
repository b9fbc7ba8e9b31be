"""Sign-flip (paired randomization) tests of zero-centred differences."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _aot, _clusters, _planner, _pvalues
from jaxtests import _validation as v
from jaxtests._engine import (
    MAX_MITM,
    check_enumerable,
    choose_method,
    closed_form,
    vmapped,
)
from jaxtests._precision import x64
from jaxtests._resampling import Requested, check_exact_cap, check_statistic, common_iv, wrap
from jaxtests.kernels import exceedance as kexceedance
from jaxtests.kernels import families as kfamilies
from jaxtests.kernels import statistics as kstatistics

__all__ = ["signflip_test"]

EPS = _pvalues.EPS

_SIGNFLIP_STATS = ("mean", "t", "hotelling")


def _signflip_iv(d, statistic, axis, opts):
    """Validate :func:`signflip_test`'s data and statistic; returns canonical ``d``.

    ``d`` has instances last (``(..., p, m)`` for Hotelling's T²).
    """
    if not callable(statistic):
        v.check_choice(statistic, "statistic", _SIGNFLIP_STATS)
    d = v.as_float_array(d, "d", min_ndim=2 if statistic == "hotelling" else 1)
    if statistic == "hotelling":
        if axis != -1:
            raise ValueError(
                "`axis` must be left at -1 for statistic='hotelling': `d` is "
                "(..., m, p) with instances on axis -2 and measures last."
            )
        v.check_covariance(d, "d")  # as hotelling_t2: no T² of a singular covariance
        d = np.moveaxis(np.asarray(d), -2, -1)  # instances last for the shared reshaping below
    else:
        axis = v.normalize_axis(axis, d.ndim)
        # numpy: the host path runs no eager jnp operation (each would compile per shape).
        d = np.moveaxis(np.asarray(d), axis, -1)
    m = d.shape[-1]
    if m < 2:
        raise ValueError(f"`d` needs at least 2 instances along the instance axis, got {m}.")
    if opts.method == "binomial" and statistic not in ("mean", "t"):
        raise ValueError("`method`='binomial' applies to statistic 'mean' or 't' only.")
    _signflip_options_iv(d, statistic, opts)
    return d


def _signflip_options_iv(d, statistic, opts):
    """Refuse options the chosen method would not use; check a callable's output shape.

    ``d`` is canonical (instances last). A given ``n_resamples`` with "exact"
    is the most patterns enumerated; "binomial" has no rearrangements at all.
    """
    m = d.shape[-1]
    method, n_resamples, explicit_n = opts.method, opts.n_resamples, opts.explicit_n
    if callable(statistic):
        check_statistic(statistic, [(m,)], "statistic", f"one hypothesis' ({m},) differences")
    if method == "binomial":
        given = [
            f"`{name}`"
            for name, on in (
                ("n_resamples", explicit_n),
                ("batch_size", opts.batch_size is not None),
                ("correction", opts.correction is not None),
                ("return_null", opts.return_null),
            )
            if on
        ]
        if given:
            raise ValueError(
                f"`method`='binomial' is a closed form without rearrangements: "
                f"{', '.join(given)} would be ignored. Leave it out, or use method='exact' "
                "or 'monte-carlo'."
            )
    if method == "exact":
        if statistic in ("mean", "t"):  # zero differences are left out of the enumeration
            nz = int(np.sum(np.any(np.asarray(d).reshape(-1, m) != 0, axis=0)))
            check_exact_cap(2 ** max(nz, 1), n_resamples, explicit_n)
        else:
            check_exact_cap(2**m, n_resamples, explicit_n)


def _ternary(d2):
    """(is {-c, 0, +c} for every hypothesis, n_pos, n_nonzero) from ``d2 : (H, m)``."""
    a = np.abs(np.asarray(d2))
    c = a.max(axis=1, keepdims=True)
    ok = bool(np.all((a == 0) | (a == c)))
    pos = np.sum(np.asarray(d2) > 0, axis=1)
    nz = np.sum(a > 0, axis=1)
    return ok, pos, nz


@functools.partial(jax.jit, static_argnames=("statistic", "family"))
def _signflip_linear_prep(dp, where, statistic, family=kfamilies.WORDS):
    """Everything "mean"/"t" needs from ``dp : (H, 32 W)``, zero-padded (:mod:`jaxtests._profile`).

    One program per padding: the observed statistic (the shared kernel, padding
    masked by ``where``), the mean and its tie band, the null sd, and the
    Monte Carlo sums laid out for ``family`` (:func:`jaxtests.kernels.families.layout`:
    padded zeros add nothing to a sum; the draw loops run over the live words).
    """
    m = kstatistics.count(dp, where)
    stat = kstatistics.mean if statistic == "mean" else kstatistics.t_statistic
    observed = stat(dp, where)
    total = jnp.sum(dp, axis=-1)
    mean_obs = total / m
    abs_sum = jnp.sum(jnp.abs(dp), axis=-1)
    # scipy's relative tie tolerance, plus a bound on the rounding of the
    # table sums (Wilkinson: gamma_n sum |d|), so ties are never missed.
    tol = kexceedance.tie_tol(mean_obs, abs_sum / m) + 4 * (m + 32) * EPS * abs_sum / m
    sd = jnp.sqrt(jnp.sum(dp * dp, axis=-1)) / m  # exact null sd of the mean
    live = (jnp.sum(where, dtype=jnp.int32) + 31) // 32  # words the draw loops run over
    a = 2.0 / jnp.broadcast_to(m, total.shape)
    c = -total / m
    sums = kfamilies.layout(family, dp, a, c, live)
    return observed, mean_obs, tol, sd, total, kexceedance.tie_band(mean_obs, tol), sums


def _linear_prep_host(d2, statistic):
    """:func:`_signflip_linear_prep`'s observed statistic, sum and the mean's tie band, in
    numpy for concrete ``d2 : (H, m)`` (the same operations, unpadded)."""
    m = d2.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if statistic == "mean":
            observed = np.mean(d2, axis=-1)
        else:
            observed = kstatistics.t_statistic(d2, xp=np)
    total = np.sum(d2, axis=-1)
    mean_obs = total / m
    abs_sum = np.sum(np.abs(d2), axis=-1)
    tol = kexceedance.tie_tol(mean_obs, abs_sum / m, xp=np) + 4 * (m + 32) * EPS * abs_sum / m
    return observed, total, kexceedance.tie_band(mean_obs, tol, xp=np)


def _t_from_mean(mean, m, q):
    """t statistic of sign-flipped data from its mean (sum of squares ``q`` is invariant)."""
    var = (q[..., None] - m * mean * mean) / (m - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean * np.sqrt(m) / np.sqrt(var)


def _signflip(d, statistic, opts):
    """Plan, drive and wrap on canonical ``d`` (instances last; hotelling: ``(..., p, m)``)."""
    if statistic == "hotelling":
        batch_shape = d.shape[:-2]
        d2 = jnp.moveaxis(d, -1, -2).reshape((-1, *d.shape[-1:], *d.shape[-2:-1]))  # (H, m, p)
        stat_fn = kstatistics.hotelling_t2
    else:
        batch_shape = d.shape[:-1]
        d2 = d.reshape(-1, d.shape[-1])
        stat_fn = statistic
    if statistic in ("mean", "t"):
        observed, res, null_map = _linear(d2, statistic, opts)
    else:
        observed = vmapped(stat_fn)(d2) if statistic not in _SIGNFLIP_STATS else stat_fn(d2)
        res, null_map = _generic(d2, statistic, stat_fn, observed, opts), None
    return wrap(observed, batch_shape, res, opts.alternative, opts.correction, null_map)


def _linear(d2, statistic, opts):
    """Mean and t: binomial closed form, meet in the middle, byte tables or fused sums.

    Zero differences never change a sign-flipped sum: they are left out of
    the rearrangements (``2^m_eff`` patterns). Returns the observed statistic,
    the engine's result on the mean's scale and the map of its null to the
    statistic's. ``d2 : (H, m)`` numpy.
    """
    planner = _planner.Planner()
    m = d2.shape[1]
    nz_cols = np.flatnonzero(np.any(d2 != 0, axis=0))
    m_eff = int(nz_cols.size)
    method = opts.method
    ok, pos, nz = _ternary(d2)
    if method == "auto":
        ternary = opts.correction is None and not opts.return_null and ok
        method = "binomial" if ternary else choose_method("auto", 2**m_eff, opts.n_resamples)
    if method == "binomial" or (
        method == "exact" and opts.correction is None and not opts.return_null
    ):
        # Closed form or counted: no draws, so the prep runs in numpy (nothing compiled:
        # the signed-rank test's first call, scipy's way).
        observed, total, (t_lo, t_hi) = _linear_prep_host(d2, statistic)
    else:
        # Padded as the family's programs are (a capacity for "words": one program for
        # every m up to it, the draw loops stopping at m's words).
        dp = planner.pad(d2)
        where = np.arange(dp.shape[-1]) < m
        observed, mean_obs, tol, sd, total, (t_lo, t_hi), sums = _aot.call(
            _signflip_linear_prep,
            "signflip._signflip_linear_prep",
            (dp, where),
            {"statistic": statistic, "family": planner.family},
            work=dp.size,
        )
    if method == "binomial":
        if not ok:
            raise ValueError(
                "`method`='binomial' needs differences taking only the values "
                "{-c, 0, +c} in each hypothesis (e.g. 0/1-loss differences)."
            )
        p = _pvalues.sign_test(pos, nz, opts.alternative)
        return observed, closed_form(p, pos, "binomial"), None
    exact = method == "exact"
    keep = nz_cols if m_eff > 0 else np.array([0])
    dk = d2[:, keep]
    mk = dk.shape[1]
    null_map = None
    if statistic == "t" and opts.return_null:  # the sum of squares is sign-invariant
        q = np.sum(d2 * d2, axis=-1)
        null_map = lambda t: _t_from_mean(t, m, q)  # noqa: E731
    counted = exact and opts.correction is None and not opts.return_null
    if exact and not counted and m_eff > MAX_MITM:
        raise ValueError(
            f"`method`='exact' supports at most {MAX_MITM} nonzero instances "
            f"for statistic {statistic!r}; got {m_eff}. Use 'monte-carlo'."
        )
    if counted:
        # Count P = sum of kept-sign d: T = (2 P - D) / m.
        t_lo, t_hi, total = np.asarray(t_lo), np.asarray(t_hi), np.asarray(total)
        # P <= le_at counts as T <= t (the band's upper edge), P >= ge_at as T >= t.
        le_at, ge_at = (m * t_hi + total) / 2, (m * t_lo + total) / 2
        ge, le = planner.count_signs(dk, le_at, ge_at, statistic)
        p, cnt, interval = _pvalues.counts_to_pvalues(ge, le, 2**mk, opts.alternative, True)
        if opts.progress is not None:
            opts.progress(2**mk, 2**mk)
        return observed, closed_form(p, cnt, "exact", 2**mk, interval), null_map
    if exact:
        check_enumerable(2**mk, f"2^{mk} sign patterns with `correction` or `return_null`")
        # Zero differences never change a sum: the 2^mk patterns of the others.
        stat, n_total = _planner.SignSums(sums, mk, dk), 2**mk
    else:
        # Zero differences stay in: they add nothing to a Monte Carlo sum, and the
        # padding's program serves every size up to it.
        stat, n_total = _planner.SignSums(sums, m), opts.n_resamples
    res = planner.run(stat, mean_obs, tol, opts, exact=exact, n_total=n_total, scale=sd)
    return observed, res, null_map


def _generic(d2, statistic, stat_fn, observed, opts):
    """Hotelling's T² and user callables: sign patterns materialised per block."""
    m = d2.shape[1]
    if statistic == "hotelling" and opts.alternative == "less":
        raise ValueError(
            "`alternative`='less' is meaningless for Hotelling's T² (large values "
            "are evidence in every direction); use 'two-sided' or 'greater'."
        )
    exact, n_total = _planner.draws(opts, 2**m, lambda: f"2^{m} sign patterns for this statistic")
    obs = np.asarray(observed)
    # Size of the statistic's values: its value on the rearrangement that makes
    # each instance's first entry non-negative (|d| for 1-d instances). On the host: an
    # eager jnp operation compiles a program per shape (the same bits either way).
    d2 = np.asarray(d2)
    first = d2.reshape((*d2.shape[:2], -1))[:, :, 0]
    flip = np.where(first < 0, -1.0, 1.0).reshape(first.shape + (1,) * (d2.ndim - 2))
    tol = kexceedance.tie_tol(obs, np.asarray(vmapped(stat_fn)(d2 * flip)), xp=np)
    tail = "greater" if statistic == "hotelling" else None
    stat = _planner.SignFlipped(stat_fn, d2)
    return _planner.Planner().run(stat, obs, tol, opts, exact=exact, n_total=n_total, tail=tail)


@x64
def signflip_test(
    d,
    *,
    statistic="mean",
    alternative="two-sided",
    n_resamples=None,
    method="auto",
    key=None,
    axis=-1,
    batch_size=None,
    correction=None,
    sequential=None,
    return_null=False,
    progress=None,
    cluster=None,
):
    """Paired randomization (sign-flip) test of zero-centred differences.

    Under H0 each difference ``d_i`` (per-instance loss difference of two
    models, or per-fold difference) is symmetric about 0, so its sign is a
    fair coin (Hein: ``T(pi) = sum_i pi_i W_i``, ``pi in {-1, 1}^m``).

    Parameters
    ----------
    d : array_like, (..., m) or (..., m, p) for ``statistic="hotelling"``
        Differences; instances along ``axis``. Every other axis is a separate
        hypothesis; all hypotheses share the same sign patterns.
    statistic : {"mean", "t", "hotelling"} or callable
        "t" is the one-sample t; under sign flips it is increasing in the mean
        (the sum of squares is invariant), so it gives the mean's p-value.
        "hotelling" flips whole rows of ``(m, p)`` differences. A callable maps
        one hypothesis' ``(m,)`` (or ``(m, p)``) array to a scalar and is vmapped.
    alternative : {"two-sided", "less", "greater"}
        scipy's conventions: "greater" is ``P(T >= t)``, "less" ``P(T <= t)``,
        "two-sided" ``min(1, 2 min(P(T >= t), P(T <= t)))``. Hotelling's T² is
        direction-free: "two-sided" and "greater" both give ``P(T² >= t²)``.
    n_resamples : int, optional
        The most rearrangements evaluated (default 100,000): the Monte Carlo
        draws, and the largest number of patterns "auto" enumerates. With
        "exact", a given ``n_resamples`` below the number of patterns is an
        error (leave it out to enumerate them all); "binomial" refuses it.
    method : {"auto", "exact", "monte-carlo", "binomial"}
        "auto" picks "binomial" when every hypothesis' differences take only
        the values {-c, 0, +c} (closed form, equals ``scipy.stats.binomtest``),
        "exact" when ``2^m <= n_resamples`` (``m`` counts nonzero differences),
        else "monte-carlo". Exact "mean"/"t" count by meeting in the middle
        (``m <= 48``), or, when every ``2 d`` is an integer (ranks, counts), by
        subset sums on the host (``m <= 1000``, ``m sum|2 d| <= 2^30``); other
        statistics enumerate (``2^m <= 2^30``).
    key : int, JAX key or None
        Randomness; the seed is recorded in the result. Checked on every path;
        exact and binomial results use none (``seed`` None).
    axis : int
        Instance axis (leave at -1 for "hotelling").
    batch_size : int or None
        Draws evaluated per step; changes speed and memory, never the result.
        Capped at the work (``n_resamples`` in whole blocks) and at about
        256 MB of intermediates per step. The meet-in-the-middle count of exact
        "mean"/"t" has no steps; "binomial" refuses it.
    correction : {None, "maxT"}
        Westfall-Young single-step max-T adjusted p-values across hypotheses,
        for "mean" on the scale of each hypothesis' null standard deviation.
    sequential : int or None
        Besag-Clifford stopping after ``sequential`` extreme values.
    return_null : bool
        Keep the statistic of every rearrangement.
    progress : bool, tqdm bar, callable or None
        None (the default) shows a bar once the call has run 3 s, in an interactive
        session only (stderr a terminal, as tqdm's ``disable=None``; never under pytest);
        False none; True shows a :mod:`tqdm.auto` bar; a tqdm bar is advanced by the draws
        done; a callable is called as ``progress(done, total)`` from the host,
        at the start and after each chunk of draws (the first within a few
        seconds, then about every 0.5 s); the result does not depend on it.
        The binomial closed form makes no report.
    cluster : array_like, (m,), optional
        One cluster label per instance (integers or strings), shared by every
        hypothesis: the differences of a cluster are flipped together, i.e. the
        test runs on the clusters' sums ``D_g`` with ``G`` clusters in place of
        ``m`` instances (exact over ``2^G`` patterns when they fit
        ``n_resamples``). Valid when each cluster's summed difference is
        symmetric about 0 under H0, whatever the dependence inside a cluster.
        "mean" stays the instances' mean (``sum D_g / m``); "t" becomes the
        one-sample t of the ``D_g`` (the same p-value as the mean's).
        "hotelling" and callables are refused.

    Returns
    -------
    PermutationTestResult

    Notes
    -----
    Exact p-values are ``b / N`` over all ``N = 2^m`` patterns; Monte Carlo
    ones are ``(b + 1) / (B + 1)`` (never 0). A statistic counts as at least as
    extreme when it is within ``100 eps max(|t|, s)`` of the observed ``t``
    (scipy's tolerance, with ``s`` the size of the statistic's values so that
    ties at ``t = 0`` are kept: ``mean|d|`` for "mean", the statistic of a
    fixed rearrangement for callables) plus a bound on the float64 rounding of
    the resampled sums. The seed's slide counts ``T > t``; here ``T >= t``
    (scipy's). That bound follows ``sum|d|``: where the differences span about
    13 orders of magnitude or more (``1e12`` beside ``1``), distinct statistics
    closer than it count as ties and the p-value is larger than scipy's
    (conservative, never smaller).

    Non-finite statistics (e.g. a callable dividing by a spread that is 0 for
    some patterns): an infinite observed ``t`` is tied exactly, so a
    rearrangement giving ``+inf`` counts as at least as extreme as an observed
    ``+inf`` (likewise ``-inf``). scipy 1.17's ``permutation_test`` compares
    with ``t - 100 eps |t|``, which is NaN there, and misses these ties. A
    rearrangement whose statistic is NaN counts in ``N`` (or ``B``) but is
    never at least as extreme, in either tail, as in
    ``scipy.stats.permutation_test``; ``correction="maxT"`` leaves it out of
    the maximum over hypotheses. A NaN observed statistic gives NaN
    ``pvalue``, ``pvalue_interval`` and ``pvalue_adjusted`` (and
    ``n_extreme = 0``), as scipy's parametric tests do; scipy's
    ``permutation_test`` instead reports its smallest p-value there (0 exact,
    ``1 / (B + 1)`` Monte Carlo) because NaN compares False. The built-in "t"
    is compared through the mean, so all-zero differences (t = 0/0 for every
    pattern, all of which give the same data) get the mean's p = 1, as
    :func:`jaxtests.anova` does for F = 0/0.

    Monte Carlo sign patterns are counter-based random words (two keyed rounds
    of an integer hash, keyed per block of draws by ``fold_in(key, block)``,
    see :mod:`jaxtests.kernels.resampling`), generated inside the loop that
    consumes them: for "mean"/"t" each draw's ``P = sum_{s_i = +1} d_i`` is
    accumulated by masked float32 adds (words of 32 instances summed in
    float32 in groups of 16, group sums in float64), and ``T = (2 P - D) / m``.
    The absolute error of ``P`` is at most ``(26 u + (m / 512 + 2) 2^-53)
    sum|d|`` with ``u = 2^-24`` (Higham 2002, eq. 3.4), about ``1.6e-6 sum|d|``.
    A draw whose ``T`` is within that bound of a threshold is recomputed in
    float64 (one instance at a time), so the counts are those of float64
    sums; with ordinary data that is a few draws per 2^17 (for m = 10^4 normal
    data the band is about 5e-4 null standard deviations wide), with one
    dominant ``|d_i|`` it can be most of them. Exact enumeration uses float64
    byte tables and meeting in the middle. A key's draws depend on ``m`` only
    through its capacity (one compiled program serves every ``m`` up to
    16,384, then 262,144; :func:`jaxtests._buckets.capacity_words`), so each
    hypothesis of a batch sees the draws it would see alone.

    Long runs: draws run in host-level chunks of about 0.5 s, so Ctrl-C
    (``KeyboardInterrupt``) stops a run within about a second and progress is
    reported throughout; a run estimated beyond a few minutes emits a
    :class:`jaxtests._progress.LongRunWarning` with the estimate. Chunks are
    whole blocks of draws, so the result never depends on them.

    References
    ----------
    Hein, M., "Performance Measures and Statistical Tests II", lecture 16, Saarland
    University, 2013.
    Besag & Clifford (1991), Biometrika 78.
    Westfall & Young (1993). Phipson & Smyth (2010), SAGMB 9.

    Examples
    --------
    >>> r = signflip_test([0.5, 1.2, 0.3, 0.9, -0.1, 0.7], method="exact")
    >>> float(r.pvalue)
    0.0625
    """
    opts = common_iv(
        Requested(
            alternative=alternative,
            n_resamples=n_resamples,
            method=method,
            batch_size=batch_size,
            correction=correction,
            sequential=sequential,
            return_null=return_null,
            key=key,
            progress=progress,
        )
    )
    d = _signflip_iv(d, statistic, axis, opts)
    groups = None
    if cluster is not None:
        if statistic not in ("mean", "t"):
            raise ValueError(
                "`cluster` applies to statistic 'mean' or 't' (the clusters' sums are flipped); "
                f"got {'a callable' if callable(statistic) else repr(statistic)}."
            )
        groups = _clusters.cluster_iv(cluster, d.shape[-1])
        m = d.shape[-1]
        d = groups.sums(d)
        _signflip_options_iv(d, statistic, opts)  # the counts that matter now are G's
    # Exact power-of-two rescale of tiny/huge d (XLA:CPU flushes subnormals, float32
    # sums overflow); p is invariant, the mean is scaled back. Callables: unknown scaling.
    factor, d = v.rescale_pow2(d, dtype=np.float32) if statistic in _SIGNFLIP_STATS else (1, d)
    res = _signflip(d, statistic, opts)
    if factor != 1 and statistic == "mean":
        res = dataclasses.replace(
            res,
            statistic=v.scale_back(res.statistic, factor),
            null_distribution=v.scale_back(res.null_distribution, factor),
        )
    if groups is not None:
        g = groups.n_clusters
        if statistic == "mean":  # the engine's mean is over clusters: sum D_g / G
            res = dataclasses.replace(
                res,
                statistic=np.asarray(res.statistic) * (g / m),
                null_distribution=None
                if res.null_distribution is None
                else np.asarray(res.null_distribution) * (g / m),
            )
        res = dataclasses.replace(res, n_clusters=g)
    return res


def signflip_pvalue(
    statistic_fn,
    d,
    *,
    alternative="two-sided",
    n_resamples=100_000,
    method="auto",
    key=None,
    batch_size=None,
    correction=None,
    sequential=None,
    return_null=False,
):
    """Sign-flip p-value for the parametric tests (``method="permutation"``).

    ``d : (..., m)`` canonical float64 differences with instances last, or
    ``(..., m, p)`` for ``statistic_fn="hotelling"``; ``statistic_fn`` is
    "mean", "t", "hotelling" or a callable as in :func:`signflip_test`.
    Returns a :class:`PermutationTestResult`. Call under ``jaxtests._precision.x64``.
    """
    opts = common_iv(
        Requested(
            alternative=alternative,
            n_resamples=n_resamples,
            method=method,
            batch_size=batch_size,
            correction=correction,
            sequential=sequential,
            return_null=return_null,
            key=key,
        )
    )
    # Validated by the calling test already: only the instances moved last for T².
    d = np.moveaxis(d, -2, -1) if statistic_fn == "hotelling" else np.asarray(d)
    _signflip_options_iv(d, statistic_fn, opts)
    return _signflip(d, statistic_fn, opts)
