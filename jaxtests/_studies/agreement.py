"""Agreement of two tests' accept/reject decisions over repeated cross-validation runs
and all pairs of algorithms (Yildiz & Alpaydin), with normality-rejection rates."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._report import jsonable, text_table
from jaxtests._results import result, static_field
from jaxtests.kernels import statistics as kstatistics
from jaxtests.kernels import study as kstudy

_RCOND_TOL = 1e-10  # as jaxtests._validation.RCOND_TOL: below this, a covariance is singular

PRESETS = {
    "error_hinge": ("zero_one", "hinge"),
    "square_epsilon": ("square", "epsilon_insensitive"),
    "error_tpr_fpr": ("error", ("tpr", "fpr")),
    "f1_precision_recall": ("f1", ("precision", "recall")),
}
_ALIASES = {"recall": "tpr"}  # CVResult names recall by its other name
_LOSS_NAMES = ("zero_one", "hinge", "square", "absolute", "epsilon_insensitive", "power")


def _label(spec):
    return spec if isinstance(spec, str) else "(" + ", ".join(spec) + ")"


@result
class AgreementResult:
    """Accept/reject agreement of two tests over repeated CV runs and algorithm pairs.

    Attributes
    ----------
    counts : int array, (2, 2)
        ``counts[i, j]``: comparisons where the first test accepts (``i = 0``) or
        rejects (``i = 1``) and the second accepts (``j = 0``) or rejects (``j = 1``).
    pair_counts : int array, (n_pairs, 2, 2)
        The same per pair of algorithms (labels in ``pairs``).
    pvalues : array, (n_comparisons, 2)
        p-values of the two tests (NaN where a test is undefined: zero variance or a
        singular covariance; such a decision counts as "accept").
    n_undefined : int array, (2,)
    normality_shapiro, normality_mardia : arrays, (n_models, 2)
        Fraction of runs whose fold values of each test's measure reject normality at
        ``alpha``: Shapiro-Wilk (univariate measures only, NaN otherwise) and Mardia's
        test (reject when the skewness or the kurtosis test rejects; univariate
        measures as ``p = 1``, as Yildiz & Alpaydin does).
    tests : tuple of str
        Labels of the two tests' measures.
    pairs, models, datasets : tuples of str
    alpha : float
    n_repeats, n_folds : tuples of int (one per dataset)
    """

    counts: jax.Array
    pair_counts: jax.Array
    pvalues: jax.Array
    n_undefined: jax.Array
    normality_shapiro: jax.Array
    normality_mardia: jax.Array
    tests: tuple = static_field(default=())
    pairs: tuple = static_field(default=())
    models: tuple = static_field(default=())
    datasets: tuple = static_field(default=())
    alpha: float = static_field(default=0.05)
    n_repeats: tuple = static_field(default=())
    n_folds: tuple = static_field(default=())

    @property
    def n_comparisons(self):
        """Number of (pair, run) comparisons tabulated."""
        return int(np.asarray(self.counts).sum())

    def percentages(self):
        """``counts`` as percentages of all comparisons, ``(2, 2)``."""
        return 100.0 * np.asarray(self.counts, dtype=np.float64) / max(self.n_comparisons, 1)

    def direction(self):
        """Which test rejects more often, with an exact McNemar p-value of the asymmetry.

        Returns a dict: ``first_only`` (first rejects, second accepts),
        ``second_only``, their McNemar p-value (two-sided binomial on the discordant
        pairs; indicative only, since runs on one dataset share data) and
        ``second_rejects_more``.
        """
        from scipy import stats

        c = np.asarray(self.counts)
        b, w = int(c[1, 0]), int(c[0, 1])
        p = float(stats.binomtest(w, b + w).pvalue) if b + w else 1.0
        return {
            "first_only": b,
            "second_only": w,
            "mcnemar_pvalue": p,
            "second_rejects_more": w > b,
        }

    def table(self):
        """The 2x2 table in percent (rows: first test; columns: second), as in the seeds."""
        pc = np.asarray(self.percentages())
        c = np.asarray(self.counts)
        t1, t2 = self.tests
        rows = [
            [
                f"{t1}: accept",
                f"{pc[0, 0]:.1f} ({c[0, 0]})",
                f"{pc[0, 1]:.1f} ({c[0, 1]})",
                f"{pc[0].sum():.1f}",
            ],
            [
                f"{t1}: reject",
                f"{pc[1, 0]:.1f} ({c[1, 0]})",
                f"{pc[1, 1]:.1f} ({c[1, 1]})",
                f"{pc[1].sum():.1f}",
            ],
            ["total", f"{pc[:, 0].sum():.1f}", f"{pc[:, 1].sum():.1f}", "100.0"],
        ]
        d = self.direction()
        undefined = np.asarray(self.n_undefined)
        out = [
            f"Agreement of tests on {t1} (rows) and {t2} (columns) at alpha={self.alpha:g}: "
            f"{self.n_comparisons} comparisons = {len(self.pairs)} pairs x runs over "
            f"{', '.join(self.datasets)}; percent (count)",
            text_table(rows, ["", f"{t2}: accept", f"{t2}: reject", "total"]),
            f"only {t1} rejects: {d['first_only']}; only {t2} rejects: {d['second_only']} "
            f"(McNemar p = {d['mcnemar_pvalue']:.3g}); undefined p-values: "
            f"{int(undefined[0])}, {int(undefined[1])}",
            "",
            f"Normality rejected (fraction of runs, alpha={self.alpha:g}): Shapiro-Wilk / Mardia",
        ]
        sw, md = np.asarray(self.normality_shapiro), np.asarray(self.normality_mardia)
        fmt = lambda x: "-" if np.isnan(x) else f"{x:.3f}"  # noqa: E731
        nrows = [
            [name] + [f"{fmt(sw[i, j])} / {fmt(md[i, j])}" for j in range(2)]
            for i, name in enumerate(self.models)
        ]
        out.append(text_table(nrows, ["model", t1, t2]))
        return "\n".join(out)

    def to_dict(self):
        """JSON-able dict."""
        return jsonable(
            {
                "study": "agreement",
                "tests": list(self.tests),
                "datasets": list(self.datasets),
                "alpha": self.alpha,
                "n_repeats": list(self.n_repeats),
                "n_folds": list(self.n_folds),
                "n_comparisons": self.n_comparisons,
                "counts": self.counts,
                "percentages": self.percentages(),
                "pairs": list(self.pairs),
                "pair_counts": self.pair_counts,
                "n_undefined": self.n_undefined,
                "direction": self.direction(),
                "models": list(self.models),
                "normality_shapiro": self.normality_shapiro,
                "normality_mardia": self.normality_mardia,
            }
        )


@jax.jit
def _fold_t_pvalues(d):
    return kstudy.ttest_pvalue(d, "two-sided")


@jax.jit
def _fold_hotelling_pvalues(d):
    p = kstudy.hotelling_pvalue(d)
    rcond = kstatistics.correlation_rcond(kstatistics.covariance(d), jnp.max(jnp.abs(d), axis=-2))
    return jnp.where(rcond > _RCOND_TOL, p, jnp.nan)


@jax.jit
def _mardia_pvalues(x):
    """min(skewness p, kurtosis p) of Mardia's tests per ``x : (..., n, p)``; NaN if singular."""
    n, q = x.shape[-2], x.shape[-1]
    mom = kstatistics.mardia_moments(x)
    skew_p = kstatistics.chi2_sf(n * mom.skewness / 6, q * (q + 1) * (q + 2) // 6)
    z = (mom.kurtosis - q * (q + 2)) / math.sqrt(8 * q * (q + 2) / n)
    kurt_p = 2 * kstatistics.norm_sf(jnp.abs(z))
    xc = x - jnp.mean(x, axis=-2, keepdims=True)
    rcond = kstatistics.correlation_rcond(kstatistics.covariance(x), jnp.max(jnp.abs(xc), axis=-2))
    return jnp.where(rcond > _RCOND_TOL, jnp.minimum(skew_p, kurt_p), jnp.nan)


def _spec_iv(spec, task, what):
    if isinstance(spec, str):
        if spec in ("zero_one", "hinge") and task != "classification":
            raise ValueError(f"`tests` {what} {spec!r} needs a classification CV result.")
        if spec in ("square", "epsilon_insensitive", "absolute") and task == "classification":
            raise ValueError(
                f"`tests` {what} {spec!r} is a regression loss; this CV result is "
                "a classification one."
            )
        return spec
    try:
        spec = tuple(spec)
    except TypeError:
        raise TypeError(f"`tests` {what} must be a measure name or a tuple of names.") from None
    if len(spec) < 2 or not all(isinstance(s, str) for s in spec):
        raise ValueError(
            f"`tests` {what} must be a measure name or a tuple of >= 2 names, got {spec!r}."
        )
    if task != "classification":
        raise ValueError(
            f"`tests` {what} {spec!r} (Hotelling on measures) needs a classification CV result."
        )
    return spec


def _fold_values(cv, name, spec, loss_kwargs):
    """``(R, K)`` fold values of a univariate spec, ``(R, K, p)`` of a tuple of measures."""
    if isinstance(spec, tuple):
        return np.stack(
            [np.asarray(cv.fold_scores(name, _ALIASES.get(s, s))) for s in spec], axis=-1
        )
    if spec in _LOSS_NAMES:
        # Yildiz & Alpaydin: x_ij is the total loss on validation fold j.
        kw = loss_kwargs.get(spec, {})
        return np.asarray(cv.fold_losses(name, spec, reduce="sum", **kw))
    return np.asarray(cv.fold_scores(name, spec))


def _shapiro_rate(x, alpha):
    """Fraction of rows of ``x : (..., R, K)`` where Shapiro-Wilk rejects; NaN rows skipped."""
    from scipy import stats

    rej = []
    for row in x.reshape(-1, x.shape[-1]):
        if np.ptp(row) == 0:
            continue
        rej.append(stats.shapiro(row).pvalue <= alpha)
    return float(np.mean(rej)) if rej else math.nan


@x64
def agreement(
    cv_result, tests="error_hinge", *, alpha=0.05, models=None, loss_kwargs=None, names=None
):
    """2x2 table of the decisions of two paired tests over CV runs and algorithm pairs.

    For every repetition of a ``k``-fold cross-validation and every pair of
    algorithms, each test compares the pair on its ``k`` fold values at level
    ``alpha``: a univariate measure with the paired t test (Yildiz & Alpaydin, eq. 5), a
    tuple of measures with the paired Hotelling T² (Yildiz & Alpaydin, eq. 1).

    Parameters
    ----------
    cv_result : CVResult or sequence of CVResult
        From :func:`jaxtests.cross_validate` with ``repeats`` runs; several
        results (datasets) are pooled, as the seeds pool their datasets.
    tests : str or pair of specs
        A preset: ``"error_hinge"`` (0/1 vs hinge loss, Yildiz & Alpaydin Table 2),
        ``"square_epsilon"`` (square vs epsilon-insensitive loss, Table 3),
        ``"error_tpr_fpr"`` (error vs Hotelling on (tpr, fpr), Yildiz & Alpaydin Table 1),
        ``"f1_precision_recall"`` (F1 vs Hotelling on (precision, recall), Table 2);
        or a pair whose items are a loss or measure name (losses are summed per
        fold, as Yildiz & Alpaydin's totals) or a tuple of measure names.
    alpha : float
    models : sequence of str or None
        Models to compare (default: all of each result).
    loss_kwargs : dict or None
        Keyword arguments per loss name, e.g. ``{"epsilon_insensitive": {"epsilon": 0.1}}``
        (the default epsilon is 0.1).
    names : sequence of str or None
        Dataset names for the report.

    Returns
    -------
    AgreementResult
        ``counts`` sum to ``n_pairs * repeats`` per dataset; ``table()`` prints the
        seeds' layout; ``direction()`` says which test rejects more often.

    Examples
    --------
    >>> from jaxtests import cross_validate, datasets, models, study
    >>> X, y = datasets.load_pima()
    >>> learners = {"lda": models.lda(), "centroid": models.nearest_centroid()}
    >>> cv = cross_validate(learners, X[:200], y[:200], cv=5, repeats=3, key=0)
    >>> res = study.agreement(cv, "error_hinge")  # 1 pair of models x 3 runs
    >>> res.tests, res.n_comparisons
    (('zero_one', 'hinge'), 3)
    >>> res.direction()["second_only"]  # runs where only the hinge-loss test rejects
    3
    """
    if isinstance(tests, str):
        v.check_choice(tests, "tests", tuple(PRESETS))
        tests = PRESETS[tests]
    try:
        tests = tuple(tests)
    except TypeError:
        raise TypeError("`tests` must be a preset name or a pair of measure specs.") from None
    if len(tests) != 2:
        raise ValueError(f"`tests` must name exactly two tests, got {len(tests)}.")
    alpha = v.check_probability(alpha, "alpha")
    try:
        cvs = [cv_result] if hasattr(cv_result, "fold_scores") else list(cv_result)
    except TypeError:
        cvs = []
    if not cvs or not all(hasattr(c, "fold_scores") for c in cvs):
        raise TypeError(
            "`cv_result` must be a CVResult (from cross_validate) or a sequence of them."
        )
    if names is None:
        names = tuple(f"dataset{i}" for i in range(len(cvs))) if len(cvs) > 1 else ("data",)
    names = v.as_names(names, len(cvs), "names")
    kw = {"epsilon_insensitive": {"epsilon": 0.1}}
    if loss_kwargs is not None:
        if not isinstance(loss_kwargs, dict):
            raise TypeError("`loss_kwargs` must be a dict: loss name -> keyword dict.")
        kw.update(loss_kwargs)
    specs = [_spec_iv(tests[0], cvs[0].task, "first"), _spec_iv(tests[1], cvs[0].task, "second")]
    for c in cvs[1:]:
        for i, s in enumerate(specs):
            _spec_iv(s, c.task, ("first", "second")[i])

    counts = np.zeros((2, 2), np.int64)
    pair_counts, pair_labels, pvals = [], [], []
    model_labels, shapiro, mardia_rates = [], [], []
    undefined = np.zeros(2, np.int64)
    n_rep, n_fold = [], []
    for c, ds in zip(cvs, names, strict=True):
        mlist = list(c.names) if models is None else list(models)
        for mname in mlist:
            if mname not in c.names:
                raise ValueError(
                    f"`models`: {mname!r} is not a model of dataset {ds!r}; "
                    f"models are {list(c.names)}."
                )
        if len(mlist) < 2:
            raise ValueError("`models` must name at least 2 models to compare.")
        r, k = (int(s) for s in c.index.shape[:2])
        for s in specs:
            if isinstance(s, tuple) and k <= len(s) + 1:
                raise ValueError(
                    f"Hotelling on {len(s)} measures needs more than {len(s) + 1} "
                    f"folds per run; dataset {ds!r} has {k}."
                )
        n_rep.append(r)
        n_fold.append(k)
        vals = [{mn: _fold_values(c, mn, s, kw) for mn in mlist} for s in specs]
        pairs = list(itertools.combinations(mlist, 2))
        ps = []
        for s, val in zip(specs, vals, strict=True):
            d = np.stack([val[a] - val[b] for a, b in pairs])  # (P, R, K[, p])
            if isinstance(s, tuple):
                ps.append(np.asarray(_fold_hotelling_pvalues(jnp.asarray(d))))
            else:
                ps.append(np.asarray(_fold_t_pvalues(jnp.asarray(d))))
        p = np.stack(ps, axis=-1)  # (P, R, 2)
        rej = (p <= alpha).astype(np.int64)  # NaN -> accept
        undefined += np.isnan(p).reshape(-1, 2).sum(0)
        pc = np.zeros((len(pairs), 2, 2), np.int64)
        np.add.at(
            pc, (np.repeat(np.arange(len(pairs)), r), rej[..., 0].ravel(), rej[..., 1].ravel()), 1
        )
        counts += pc.sum(0)
        pair_counts.append(pc)
        prefix = f"{ds}: " if len(cvs) > 1 else ""
        pair_labels += [f"{prefix}{a} vs {b}" for a, b in pairs]
        pvals.append(p.reshape(-1, 2))
        for mn in mlist:
            model_labels.append(f"{prefix}{mn}")
            sw, md = [], []
            for s, val in zip(specs, vals, strict=True):
                x = val[mn]
                xm = x if isinstance(s, tuple) else x[..., None]
                mp = np.asarray(_mardia_pvalues(jnp.asarray(xm)))
                md.append(
                    float(np.mean(mp[~np.isnan(mp)] <= alpha))
                    if np.any(~np.isnan(mp))
                    else math.nan
                )
                sw.append(math.nan if isinstance(s, tuple) else _shapiro_rate(x, alpha))
            shapiro.append(sw)
            mardia_rates.append(md)
    return AgreementResult(
        counts=jnp.asarray(counts),
        pair_counts=jnp.asarray(np.concatenate(pair_counts)),
        pvalues=jnp.asarray(np.concatenate(pvals)),
        n_undefined=jnp.asarray(undefined),
        normality_shapiro=jnp.asarray(np.array(shapiro)),
        normality_mardia=jnp.asarray(np.array(mardia_rates)),
        tests=(_label(specs[0]), _label(specs[1])),
        pairs=tuple(pair_labels),
        models=tuple(model_labels),
        datasets=tuple(names),
        alpha=alpha,
        n_repeats=tuple(n_rep),
        n_folds=tuple(n_fold),
    )
