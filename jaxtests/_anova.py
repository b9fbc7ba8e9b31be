"""ANOVA and MANOVA: do ``L`` algorithms have the same expected performance?

Statistic kernels come from :mod:`jaxtests.kernels.statistics`; every input may carry
leading batch dimensions. Singular covariance matrices are detected on the host after
the jitted call and reported as a ``ValueError`` (never a silent pseudo-inverse).
"""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _permutation_methods as PM
from jaxtests import _tails
from jaxtests._precision import x64
from jaxtests._results import PermutationFields, result, static_field
from jaxtests._validation import as_float_array, as_names, is_concrete, rescale_pow2, scale_back
from jaxtests._validation import check_rcond as _check_rcond
from jaxtests.kernels import statistics as kstatistics

__all__ = ["AnovaResult", "ManovaResult", "anova", "manova"]

# ----------------------------------------------------------------------------------------
# ANOVA
# ----------------------------------------------------------------------------------------


@result
class AnovaResult(PermutationFields):
    """Result of :func:`anova`.

    Attributes
    ----------
    statistic, pvalue : arrays
        F and its upper-tail p-value.
    df : tuple of int
        ``(L - 1, L (k - 1))`` one-way, ``(L - 1, (L - 1)(k - 1))`` blocked.
    ss_effect : array
        Between-algorithm sum of squares.
    ss_error : array
        Within (one-way) or residual (blocked) sum of squares.
    ss_block : array or None
        Between-fold sum of squares (blocked only).
    eta_squared : array
        ``ss_effect / SS_total``: the share of all variation that lies between the
        algorithms (``SS_total`` includes ``ss_block`` when blocked).
    partial_eta_squared : array
        ``ss_effect / (ss_effect + ss_error)``; equal to ``eta_squared`` one-way, larger
        when blocked (the fold variation is left out). Also ``F df1 / (F df1 + df2)``.
    method : str
        "parametric" (F distribution) or "permutation" (algorithm labels permuted
        within each fold).
    pvalue_interval, n_resamples, seed, permutation_method
        ``method="permutation"`` only (:class:`~jaxtests._results.PermutationFields`).
    """

    statistic: jax.Array
    pvalue: jax.Array
    df: tuple = static_field()
    ss_effect: jax.Array
    ss_error: jax.Array
    ss_block: jax.Array | None
    eta_squared: jax.Array
    partial_eta_squared: jax.Array
    blocked: bool = static_field()
    method: str = static_field()


def _oneway_statistics(x, where, xp=jnp):
    # ``where`` keeps observations of a shape bucket; None under the caller's jit and on
    # the host (xp=numpy for concrete data: nothing compiled).
    ss = kstatistics.anova_sums(x, where, xp)
    f = kstatistics.anova_f(x, where, xp)
    # 0/0 (constant data) is NaN, as F; no within variation gives 1, as F = inf.
    eta2 = ss.between / (ss.between + ss.within)
    return f, ss.between, ss.within, eta2, eta2


def _blocked_statistics(x, where, xp=jnp):
    ss = kstatistics.blocked_anova_sums(x, where, xp)
    f = kstatistics.blocked_anova_f(x, where, xp)
    # No algorithm effect is 0, as F = 0 (statsmodels' AnovaRM), also over zero sums.
    none = ss.treatment == 0
    eta2 = xp.where(none, 0.0, ss.treatment / (ss.treatment + ss.block + ss.error))
    partial = xp.where(none, 0.0, ss.treatment / (ss.treatment + ss.error))
    return f, ss.treatment, ss.error, ss.block, eta2, partial


_anova_oneway = jax.jit(_oneway_statistics)
_anova_blocked = jax.jit(_blocked_statistics)


def _statistics(host, traced, x):
    """The statistics in numpy for concrete ``x`` (nothing compiled), else jitted."""
    if is_concrete(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return host(np.asarray(x), None, xp=np)
    return traced(x, None)


def _ranked_f(f):
    # F = inf (zero error variance) ties exactly in the engine. F = 0/0 (no variation
    # between algorithms within any fold: every permutation gives the same data) would
    # give p = NaN there; rank it as 0, so that all draws tie and p = 1.
    return jnp.where(jnp.isnan(f), jnp.zeros_like(f), f)


def _oneway_f_by_fold(xb):
    """One-way F of fold-major ``xb : (k, L)``, ranked for the permutation engine."""
    return _ranked_f(kstatistics.anova_f(xb.T))


def _blocked_f_by_fold(xb):
    """Blocked F of fold-major ``xb : (k, L)``, ranked for the permutation engine."""
    return _ranked_f(kstatistics.blocked_anova_f(xb.T))


def _groups_iv(x, name, ndim):
    x = as_float_array(x, name, min_ndim=ndim)
    n_groups, k = x.shape[-ndim], x.shape[-ndim + 1]
    if n_groups < 2:
        raise ValueError(f"`{name}` needs at least 2 algorithms (axis {-ndim}), got {n_groups}.")
    if k < 2:
        raise ValueError(f"`{name}` needs at least 2 folds (axis {-ndim + 1}), got {k}.")
    return x


@x64
def anova(x, *, blocked=False, method="parametric", n_resamples=PM.N_RESAMPLES, key=None):
    """ANOVA F test that ``L`` algorithms have the same expected performance.

    Parameters
    ----------
    x : array_like, shape ``(..., L, k)``
        Performance of ``L`` algorithms on ``k`` folds; leading axes are batch axes.
    blocked : bool
        False: one-way ANOVA (Yildiz & Alpaydin, univariate case of section 2.2). True: randomized
        block (repeated-measures) ANOVA with folds as blocks, which removes the
        fold-to-fold variation shared by all algorithms (statsmodels' ``AnovaRM``).
    method : {"parametric", "permutation"}
        Reference distribution of F: the F distribution, or the permutation
        distribution of the same F when the ``L`` algorithm labels are permuted
        independently within each fold (the folds are blocks shared by all algorithms;
        Monte Carlo). The tests of a batch share their draws and run one after the
        other; concrete arrays only (no ``jit``).
    n_resamples : int
        Permutation only: Monte Carlo draws.
    key : int, JAX key or None
        Permutation only: randomness of the draws, recorded as ``seed``.

    Returns
    -------
    AnovaResult

    Notes
    -----
    One-way: ``F = (SSB / (L - 1)) / (SSW / (L (k - 1)))``. Blocked:
    ``F = (SS_alg / (L - 1)) / (SS_res / ((L - 1)(k - 1)))`` with
    ``SS_res = SS_total - SS_alg - SS_folds``. Effect sizes: ``eta_squared =
    SS_alg / SS_total`` and ``partial_eta_squared = SS_alg / (SS_alg + SS_res)``
    (pingouin's ``"n2"`` and ``"np2"``); one-way they are the same number.

    Degenerate data. A sum of squares at or below the rounding floor
    ``L k (64 eps max|x|)^2`` is reported as exactly 0 (it is rounding residue, and
    F would be a ratio of two residues). One-way, as :func:`scipy.stats.f_oneway`:
    identical algorithms give F = 0 (p = 1), constant folds with different algorithm
    means F = inf (p = 0), constant data NaN. Blocked, as statsmodels' ``AnovaRM``:
    no algorithm effect gives F = 0 (p = 1), also when the residual is 0 (identical
    algorithms, constant data); an effect with zero residual gives F = inf (p = 0).
    Zero error variance comes with a ``RuntimeWarning``. The effect sizes follow F:
    1 where F = inf (partial; ``eta_squared`` is below 1 when blocked and the folds
    differ), 0 where F = 0, NaN where F is NaN.

    The permutation p-value is ``(b + 1) / (B + 1)`` with ``b`` the draws whose F is at
    least the observed one (Phipson & Smyth 2010). Permutations within folds leave
    ``SS_total`` and ``SS_folds`` unchanged, so both F's are increasing in ``SS_alg``
    and the one-way and blocked tests give the same permutation p-value for the same
    key; the blocked F is the randomized-block test of Good (2005), ch. 8.

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification Algorithms".
    Montgomery, D. C. (2009). Design and Analysis of Experiments, ch. 3-4.
    Good, P. (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses.

    Examples
    --------
    >>> import jaxtests
    >>> x = [[0.80, 0.82, 0.79, 0.81, 0.83],   # 3 algorithms x 5 folds
    ...      [0.75, 0.78, 0.74, 0.77, 0.76],
    ...      [0.80, 0.81, 0.78, 0.80, 0.82]]
    >>> r = jaxtests.anova(x)
    >>> round(float(r.statistic), 4), round(float(r.pvalue), 6), r.df
    (15.0278, 0.00054, (2, 12))
    >>> round(float(r.eta_squared), 4)  # one-way: eta^2 = partial eta^2
    0.7147
    >>> r = jaxtests.anova(x, blocked=True)  # folds as blocks
    >>> round(float(r.statistic), 4), r.df
    (63.6471, (2, 8))
    >>> round(float(r.eta_squared), 4), round(float(r.partial_eta_squared), 4)
    (0.7147, 0.9409)
    """
    if not isinstance(blocked, bool | np.bool_):
        raise TypeError(f"`blocked` must be a bool, got {type(blocked).__name__}.")
    x = _groups_iv(x, "x", 2)
    n_resamples, typed_key, seed = PM.permutation_iv(method, n_resamples, key, (x, "x"))
    factor, x = rescale_pow2(x)  # exact; F and p are scale-invariant
    n_groups, k = x.shape[-2], x.shape[-1]
    if blocked:
        f, sse, ssr, ssb, eta2, partial = _statistics(_blocked_statistics, _anova_blocked, x)
        df = (n_groups - 1, (n_groups - 1) * (k - 1))
    else:
        f, sse, ssr, eta2, partial = _statistics(_oneway_statistics, _anova_oneway, x)
        ssb = None
        df = (n_groups - 1, n_groups * (k - 1))
    p = _tails.f_sf(f, *df) if method == "parametric" else None
    if is_concrete(ssr) and np.any(np.asarray(ssr) == 0):
        inf_p = "p = 0" if method == "parametric" else "ranked above every finite F"
        if blocked:
            same = "0 (p = 1, as statsmodels' AnovaRM)"
        elif method == "parametric":
            same = "NaN (p = NaN, as scipy's f_oneway)"
        else:
            same = "NaN (p = 1: all permutations tie)"
        warnings.warn(
            f"`x` has zero error variance in some tests: F is inf ({inf_p}) where the "
            f"algorithm means differ and {same} where they do not.",
            RuntimeWarning,
            stacklevel=2,
        )
    fields = {}
    if method == "permutation":
        perm = PM.within_blocks(
            _blocked_f_by_fold if blocked else _oneway_f_by_fold,
            jnp.swapaxes(x, -1, -2),
            2,
            n_resamples=n_resamples,
            key=typed_key,
            seed=seed,
        )
        p = perm.pvalue
        fields = PM.result_fields(perm)
    return AnovaResult(
        statistic=f,
        pvalue=p,
        df=df,
        ss_effect=scale_back(sse, factor, 2),
        ss_error=scale_back(ssr, factor, 2),
        ss_block=scale_back(ssb, factor, 2),
        eta_squared=eta2,
        partial_eta_squared=partial,
        blocked=bool(blocked),
        method=method,
        **fields,
    )


# ----------------------------------------------------------------------------------------
# MANOVA
# ----------------------------------------------------------------------------------------


def _manova_dfs(p, q, v):
    """F approximations of the four statistics as statsmodels' ``multivariate_stats``."""
    s = min(p, q)
    m = (abs(p - q) - 1) / 2
    n = (v - p - 1) / 2
    # Wilks: Rao's F, exact when min(p, q) <= 2.
    t = math.sqrt((p * p * q * q - 4) / (p * p + q * q - 5)) if p * p + q * q - 5 > 0 else 1.0
    wilks = (p * q, (v - (p - q + 1) / 2) * t - (p * q - 2) / 2, t)
    pillai = (s * (2 * m + s + 1), s * (2 * n + s + 1))
    if n > 0:
        # McKeon (1974); statsmodels and SAS use it when n > 0.
        b = math.inf if n == 1 else (p + 2 * n) * (q + 2 * n) / 2 / (2 * n + 1) / (n - 1)
        df2 = 4 + (p * q + 2) / (b - 1)
        hl = (p * q, df2, (df2 - 2) / 2 / n)
    else:
        hl = (s * (2 * m + s + 1), s * (s * n + 1), float(s))
    r = max(p, q)
    roy = (r, v - r + q)
    return wilks, pillai, hl, roy


@result
class ManovaResult(PermutationFields):
    """Result of :func:`manova`.

    ``statistic``/``pvalue``/``f_statistic``/``df`` are Wilks' Lambda with its F
    (exact when ``wilks_exact``, Rao's otherwise). ``bartlett_*`` is the chi-square
    approximation of Yildiz & Alpaydin's footnote 3. ``pillai*``, ``hotelling_lawley*`` and
    ``roy*`` are the other three statistics with statsmodels' F approximations (Roy's F
    is an upper bound, so its p-value is a lower bound). ``eigenvalues`` ``(..., s)``,
    ``eigenvectors`` ``(..., p, s)`` (columns, unit norm) and ``share`` ``(..., s)`` are
    the learned performance measures: the eigen-decomposition of ``E^-1 H``, with
    ``s = min(p, L - 1)``. ``h`` and ``e`` are the between and within scatter matrices.
    With ``method="permutation"``, ``pvalue`` is the permutation p-value of Wilks'
    Lambda (with the fields of :class:`~jaxtests._results.PermutationFields`);
    every other p-value stays parametric.
    """

    statistic: jax.Array
    pvalue: jax.Array
    f_statistic: jax.Array
    df: tuple = static_field()
    wilks_exact: bool = static_field()
    bartlett_statistic: jax.Array
    bartlett_pvalue: jax.Array
    bartlett_df: int = static_field()
    pillai: jax.Array
    pillai_f: jax.Array
    pillai_pvalue: jax.Array
    pillai_df: tuple = static_field()
    hotelling_lawley: jax.Array
    hotelling_lawley_f: jax.Array
    hotelling_lawley_pvalue: jax.Array
    hotelling_lawley_df: tuple = static_field()
    roy: jax.Array
    roy_f: jax.Array
    roy_pvalue: jax.Array
    roy_df: tuple = static_field()
    eigenvalues: jax.Array
    eigenvectors: jax.Array
    share: jax.Array
    h: jax.Array
    e: jax.Array
    names: tuple | None = static_field()
    method: str = static_field()

    def learned_measures(self, digits=3):
        """The eigenvectors as text, ``M1: -0.379·tp + 0.733·fp ...`` (unbatched only)."""
        vec = np.asarray(self.eigenvectors)
        if vec.ndim != 2:
            raise ValueError("`learned_measures` needs an unbatched result (eigenvectors (p, s)).")
        lam = np.asarray(self.eigenvalues)
        share = np.asarray(self.share)
        names = self.names or tuple(f"x{i + 1}" for i in range(vec.shape[0]))
        lines = []
        for j in range(vec.shape[1]):
            terms = " ".join(
                f"{'-' if c < 0 else '+'} {abs(c):.{digits}f}·{nm}"
                for c, nm in zip(vec[:, j], names)
            )
            terms = terms[2:] if terms.startswith("+ ") else "-" + terms[2:]
            lines.append(f"M{j + 1}: {terms}   (eigenvalue {lam[j]:.4g}, share {share[j]:.1%})")
        return "\n".join(lines)

    def table(self):
        """The four statistics as text, laid out like statsmodels' ``mv_test`` (unbatched)."""
        rows = [
            ("Wilks' lambda", self.statistic, self.df, self.f_statistic, self.pvalue),
            ("Pillai's trace", self.pillai, self.pillai_df, self.pillai_f, self.pillai_pvalue),
            (
                "Hotelling-Lawley trace",
                self.hotelling_lawley,
                self.hotelling_lawley_df,
                self.hotelling_lawley_f,
                self.hotelling_lawley_pvalue,
            ),
            ("Roy's greatest root", self.roy, self.roy_df, self.roy_f, self.roy_pvalue),
        ]
        out = [f"{'':24}{'Value':>10}{'Num DF':>9}{'Den DF':>10}{'F Value':>10}{'Pr > F':>10}"]
        for name, v, df, f, p in rows:
            if np.ndim(v):
                raise ValueError("`table` needs an unbatched result.")
            out.append(
                f"{name:24}{float(v):10.4f}{df[0]:9.4g}{df[1]:10.4g}{float(f):10.4f}"
                f"{float(p):10.4g}"
            )
        return "\n".join(out)


def _manova_statistics(x, xp=jnp):
    n_groups, k, p = x.shape[-3], x.shape[-2], x.shape[-1]
    q, v = n_groups - 1, n_groups * (k - 1)
    h, e = kstatistics.manova_he(x, xp)
    lam, vec = kstatistics.manova_eigen(h, e, xp)
    s = min(p, q)
    lam, vec = lam[..., :s], vec[..., :s]
    (w1, w2, t), (p1, p2), (h1, h2, hc), (r1, r2) = _manova_dfs(p, q, v)
    wilks = xp.exp(xp.linalg.slogdet(e)[1] - xp.linalg.slogdet(e + h)[1])
    lt = wilks ** (1 / t)
    wf = (1 - lt) / lt * w2 / w1
    pillai = xp.sum(lam / (1 + lam), axis=-1)
    pf = p2 / p1 * pillai / (s - pillai)
    hl = xp.sum(lam, axis=-1)
    hf = h2 / h1 * hl / hc
    roy = lam[..., 0]
    rf = r2 / r1 * roy
    bart = -(v - (p - q + 1) / 2) * xp.log(wilks)
    share = lam / xp.sum(lam, axis=-1, keepdims=True)
    # the measures' size, not their spread within the groups: a measure constant within
    # every group has no spread, and E's rounding residue (4.6e-32 for a measure of ones)
    # then passed for variation
    scale = xp.max(xp.abs(x), axis=(-3, -2))
    rcond = kstatistics.correlation_rcond(e, scale, xp)
    # the tails are the host's (jaxtests._tails), after this program
    return dict(
        statistic=wilks,
        f_statistic=wf,
        bartlett_statistic=bart,
        pillai=pillai,
        pillai_f=pf,
        hotelling_lawley=hl,
        hotelling_lawley_f=hf,
        roy=roy,
        roy_f=rf,
        eigenvalues=lam,
        eigenvectors=vec,
        share=share,
        h=h,
        e=e,
    ), rcond


_manova_jitted = jax.jit(_manova_statistics)


def _manova(x):
    """MANOVA's statistics in numpy for concrete ``x`` (nothing compiled), else jitted.

    A Cholesky factor numpy refuses (``E`` not positive definite) takes the jitted path,
    whose NaNs the conditioning check reports.
    """
    if is_concrete(x):
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                return _manova_statistics(np.asarray(x), np)
        except np.linalg.LinAlgError:
            pass
    return _manova_jitted(x)


def _neg_wilks_by_fold(xb):
    """``-Lambda`` of fold-major ``xb : (k, L, p)``: larger is more extreme."""
    return -kstatistics.wilks_lambda(jnp.swapaxes(xb, 0, 1))


@x64
def manova(x, *, names=None, method="parametric", n_resamples=PM.N_RESAMPLES, key=None):
    """One-way MANOVA: do ``L`` algorithms have the same expected performance vector?

    Parameters
    ----------
    x : array_like, shape ``(..., L, k, p)``
        ``p`` performance measures of ``L`` algorithms on ``k`` folds (Yildiz & Alpaydin, §2.2);
        leading axes are batch axes.
    names : sequence of str, optional
        Names of the ``p`` measures, used by ``learned_measures()``.
    method : {"parametric", "permutation"}
        Reference distribution of Wilks' Lambda: Rao's F, or its permutation
        distribution when the ``L`` algorithm labels are permuted independently within
        each fold (folds as blocks; Monte Carlo). Only ``pvalue`` changes: Bartlett's,
        Pillai's, Hotelling-Lawley's and Roy's p-values stay parametric. The tests of a
        batch share their draws; concrete arrays only (no ``jit``).
    n_resamples : int
        Permutation only: Monte Carlo draws.
    key : int, JAX key or None
        Permutation only: randomness of the draws, recorded as ``seed``.

    Returns
    -------
    ManovaResult
        Wilks' Lambda (``statistic``) with its F and p-value, Bartlett's chi-square,
        Pillai, Hotelling-Lawley and Roy with their F approximations, and the
        eigen-decomposition of ``E^-1 H`` as learned measures.

    Raises
    ------
    ValueError
        If ``E`` is singular: fewer error degrees of freedom ``L (k - 1)`` than measures,
        a constant measure, or collinear measures.

    Notes
    -----
    ``H = k sum_i (xbar_i - xbar)(xbar_i - xbar)'``, ``E = sum_ij (x_ij - xbar_i)(...)'``,
    ``Lambda = |E| / |E + H|``. With ``q = L - 1``, ``v = L (k - 1)``, Rao's F uses
    ``t = sqrt((p²q² - 4)/(p² + q² - 5))`` (1 if the denominator is not positive) and is
    exact when ``min(p, q) <= 2``. Bartlett: ``-(v - (p - q + 1)/2) log Lambda ~
    chi²(p q)`` (Yildiz & Alpaydin, footnote 3). The other F approximations are those of
    statsmodels' ``MANOVA.mv_test``.

    Small Lambda is evidence against H0, so the permutation p-value is
    ``P(Lambda* <= Lambda)``: the engine counts draws of ``-Lambda`` (the same Wilks
    kernel) at least the observed one, ``(b + 1) / (B + 1)``. Permutations within
    folds leave ``E + H`` unchanged, so this is also the p-value of ``|E|``.

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Multivariate Comparison of Classification Algorithms".
    Rencher (1995), ch. 6; Rao, C. R. (1951); McKeon, J. J. (1974), Biometrika 61.
    Good, P. (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, ch. 9.

    Examples
    --------
    >>> import jaxtests
    >>> x = [[[0.80, 0.10], [0.82, 0.12], [0.79, 0.09], [0.81, 0.11], [0.83, 0.10]],
    ...      [[0.75, 0.08], [0.78, 0.07], [0.74, 0.09], [0.77, 0.06], [0.76, 0.08]],
    ...      [[0.80, 0.15], [0.81, 0.13], [0.78, 0.16], [0.80, 0.14], [0.82, 0.15]]]
    >>> r = jaxtests.manova(x, names=["tpr", "fpr"])  # 3 algorithms, 5 folds, 2 measures
    >>> round(float(r.statistic), 4), r.df, bool(r.pvalue < 0.001)
    (0.0403, (4, 22.0), True)
    """
    x = _groups_iv(x, "x", 3)
    n_resamples, typed_key, seed = PM.permutation_iv(method, n_resamples, key, (x, "x"))
    n_groups, k, p = x.shape[-3], x.shape[-2], x.shape[-1]
    names = as_names(names, p, "names")
    v = n_groups * (k - 1)
    if v < p:
        raise ValueError(
            f"`x` has L={n_groups} algorithms and k={k} folds for p={p} measures: the within "
            f"scatter E has L (k - 1) = {v} degrees of freedom < p and is singular. Use more "
            "folds or fewer measures."
        )
    factor, x = rescale_pow2(x)  # exact; the statistics and p-values are scale-invariant
    out, rcond = _manova(x)
    out["h"], out["e"] = scale_back(out["h"], factor, 2), scale_back(out["e"], factor, 2)
    _check_rcond(
        rcond, "The within-algorithm scatter matrix E of `x`", names, "Drop a redundant measure."
    )
    (w1, w2, _), pdf, (h1, h2, _), rdf = _manova_dfs(p, n_groups - 1, v)
    out["pvalue"] = _tails.f_sf(out["f_statistic"], w1, w2)
    out["bartlett_pvalue"] = _tails.chi2_sf(out["bartlett_statistic"], p * (n_groups - 1))
    out["pillai_pvalue"] = _tails.f_sf(out["pillai_f"], *pdf)
    out["hotelling_lawley_pvalue"] = _tails.f_sf(out["hotelling_lawley_f"], h1, h2)
    out["roy_pvalue"] = _tails.f_sf(out["roy_f"], *rdf)
    if method == "permutation":
        perm = PM.within_blocks(
            _neg_wilks_by_fold,
            jnp.swapaxes(x, -3, -2),
            3,
            n_resamples=n_resamples,
            key=typed_key,
            seed=seed,
        )
        out["pvalue"] = perm.pvalue
        out.update(PM.result_fields(perm))
    return ManovaResult(
        **out,
        df=(w1, w2),
        wilks_exact=min(p, n_groups - 1) <= 2,
        bartlett_df=p * (n_groups - 1),
        pillai_df=pdf,
        hotelling_lawley_df=(h1, h2),
        roy_df=rdf,
        names=names,
        method=method,
    )
