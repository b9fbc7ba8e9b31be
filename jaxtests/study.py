"""Power and calibration studies of the tests, and agreement tables on real runs.

* :func:`power` simulates many experiments at once and reports each test's
  rejection rate with a Clopper-Pearson interval, for one effect or a curve.
* :func:`calibration` does the same under H0 and compares the p-values with the
  uniform distribution (QQ data, Kolmogorov distance, a flag for tests whose
  type-I error exceeds ``alpha`` beyond Monte Carlo error).
* :func:`loss_study` is MacKay's experiment ("More sensitive tests in DELVE"): Cauchy errors, paired
  tests on the losses ``|error|^p`` for ``p`` in {2, 1, 0.5, 0.1}.
* :func:`agreement` tabulates the accept/reject decisions of two tests over
  repeated cross-validation runs and all pairs of algorithms (Yildiz & Alpaydin,
  "Statistical Tests using Hinge/epsilon-Sensitive Loss", Tables 2-3, and
  "Multivariate Comparison of Classification Algorithms", Tables 1-2), with
  normality-rejection rates (the former's Table 1).

Every result has ``table()`` (plain text) and ``to_dict()`` (JSON-able).
Figures: :func:`plot_power`, :func:`plot_calibration`, :func:`plot_agreement`
(matplotlib is imported only when they are called).
"""

import dataclasses
import functools
import itertools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._intervals import clopper_pearson
from jaxtests._permutation import signflip_test
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._report import jsonable
from jaxtests._results import result, static_field
from jaxtests.kernels import statistics as S
from jaxtests.kernels import study as K
from jaxtests.plot import _axes, _legend_outside

__all__ = [
    "AgreementResult",
    "CalibrationResult",
    "Generator",
    "LossStudyResult",
    "PowerResult",
    "agreement",
    "calibration",
    "from_data",
    "generator",
    "loss_study",
    "plot_agreement",
    "plot_calibration",
    "plot_power",
    "power",
]

UNIVARIATE_TESTS = ("t", "signflip_mean", "signflip_t", "wilcoxon", "sign")
MULTIVARIATE_TESTS = ("hotelling", "t_bonferroni")
TESTS = UNIVARIATE_TESTS + MULTIVARIATE_TESTS
GENERATORS = ("normal", "t", "cauchy", "lognormal", "bernoulli", "mvnormal")
_SIGNFLIP = {"signflip_mean": "mean", "signflip_t": "t"}
# Experiments per call of the sign-flip engine: bounds memory at about
# 1024 x 8192 float64 statistics per block of draws, whatever n_experiments is.
_EXPERIMENT_BLOCK = 1024
_RCOND_TOL = 1e-10  # as jaxtests._multivariate: below this, a covariance is singular


# ----------------------------------------------------------------------------------------
# Generators
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Generator:
    """How one simulated experiment's ``m`` paired differences are drawn.

    Build it with :func:`generator` or :func:`from_data`. ``kind`` is one of
    :data:`GENERATORS` or ``"data"``; ``params`` are its parameters as
    ``(name, value)`` pairs; ``pool`` holds the differences of ``"data"``.
    """

    kind: str
    params: tuple = ()
    pool: np.ndarray | None = None

    @property
    def multivariate(self):
        """True when experiments are ``(m, p)`` vectors of differences."""
        return self.kind == "mvnormal"

    @property
    def hyper(self):
        """Parameters as a dict."""
        return dict(self.params)

    def __repr__(self):
        args = ", ".join(f"{k}={_short(val)}" for k, val in self.params)
        return f"{self.kind}({args})"


def _short(val):
    if isinstance(val, float):
        return f"{val:g}"
    if isinstance(val, tuple):
        return "(" + ", ".join(_short(x) for x in val) + ")"
    return repr(val)


def _real(value, name, *, low=-math.inf, high=math.inf, low_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    x = float(value)
    ok = math.isfinite(x) and (x > low if low_open else x >= low) and x <= high
    if not ok:
        side = ">" if low_open else ">="
        raise ValueError(f"`{name}` must be finite, {side} {low:g} and <= {high:g}; got {value!r}.")
    return x


def _vector(value, name):
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a sequence of real numbers.") from None
    if a.ndim != 1 or a.size < 1 or not np.all(np.isfinite(a)):
        raise ValueError(f"`{name}` must be a non-empty 1-d sequence of finite numbers.")
    return tuple(float(x) for x in a)


def generator(kind, **params):
    """A generator of paired differences for :func:`power` and :func:`calibration`.

    Parameters
    ----------
    kind : {"normal", "t", "cauchy", "lognormal", "bernoulli", "mvnormal"}
        Distribution of one difference ``d_i = effect + noise_i``:

        - ``"normal"``: N(0, 1) noise, so ``effect`` is Cohen's ``d_z``.
        - ``"t"`` (``df=3``): Student t scaled to unit variance (``df > 2``).
        - ``"cauchy"``: standard Cauchy noise (no mean; symmetric).
        - ``"lognormal"`` (``sigma=1``): ``exp(sigma Z)`` centred on its mean and
          scaled to unit variance: the mean-zero null holds but the noise is
          skewed, so tests that assume symmetry (sign flips, Wilcoxon) are not
          calibrated for it.
        - ``"bernoulli"`` (``disagreement=0.2``): 0/1-loss differences in
          {-1, 0, +1}; the classifiers disagree on an instance with probability
          ``disagreement`` and ``effect`` is the difference of their error rates.
        - ``"mvnormal"`` (``rho=0.5``, ``direction=(1, 1)``, ``weights=(-0.5, 0.5)``):
          ``p``-variate normal differences with unit variances and equal
          correlations ``rho``, mean ``effect * direction / |direction|``. Univariate
          tests are applied to ``d @ weights``. The defaults model Yildiz & Alpaydin's
          case: differences of (tpr, fpr) after a threshold shift raise both,
          while the error of balanced classes, ``(fpr - tpr + 1) / 2``, is unchanged.
    **params
        The parameters named above.

    Returns
    -------
    Generator
    """
    v.check_choice(kind, "kind", GENERATORS)
    defaults = {
        "normal": {},
        "t": {"df": 3.0},
        "cauchy": {},
        "lognormal": {"sigma": 1.0},
        "bernoulli": {"disagreement": 0.2},
        "mvnormal": {"rho": 0.5, "direction": (1.0, 1.0), "weights": (-0.5, 0.5)},
    }[kind]
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise TypeError(
            f"generator {kind!r} has no parameter {unknown[0]!r}; its parameters are "
            f"{sorted(defaults) or 'none'}."
        )
    p = {**defaults, **params}
    if kind == "t":
        # Unit variance needs df > 2: the variance df / (df - 2) is infinite at df <= 2.
        p["df"] = _real(p["df"], "df", low=2.0, low_open=True)
    elif kind == "lognormal":
        p["sigma"] = _real(p["sigma"], "sigma", low=0.0, high=5.0, low_open=True)
    elif kind == "bernoulli":
        p["disagreement"] = _real(
            p["disagreement"], "disagreement", low=0.0, high=1.0, low_open=True
        )
    elif kind == "mvnormal":
        direction = _vector(p["direction"], "direction")
        weights = _vector(p["weights"], "weights")
        if len(weights) != len(direction):
            raise ValueError(
                f"`weights` has {len(weights)} entries but `direction` has {len(direction)}."
            )
        if not any(direction):
            raise ValueError("`direction` must not be the zero vector.")
        q = len(direction)
        p["rho"] = _real(p["rho"], "rho", low=-1.0 / max(q - 1, 1), high=1.0, low_open=True)
        if p["rho"] >= 1.0:
            raise ValueError(f"`rho` must be < 1 (a nonsingular covariance), got {p['rho']!r}.")
        p["direction"], p["weights"] = direction, weights
    return Generator(kind, tuple(p.items()))


def from_data(differences, *, centre=True):
    """Generator that resamples observed per-instance differences (bootstrap).

    Parameters
    ----------
    differences : array_like, (N,)
        Per-instance loss differences of two models on a real dataset, e.g.
        ``cv.instance_losses("a", "hinge") - cv.instance_losses("b", "hinge")``
        flattened with padding removed.
    centre : bool
        Subtract the mean first, so the resampled differences satisfy H0 (mean
        zero); ``effect`` then adds ``effect * sd`` (``sd`` of ``differences``).
        With ``centre=False`` the observed mean is kept (the alternative the data
        show) and ``effect * sd`` is added on top.

    Returns
    -------
    Generator
    """
    d = np.asarray(v.as_float_array(differences, "differences", ndim=1), dtype=np.float64)
    if d.size < 2 or np.all(d == d[0]):
        raise ValueError("`differences` needs at least 2 values that are not all equal.")
    if not isinstance(centre, bool):
        raise TypeError(f"`centre` must be a bool, got {type(centre).__name__}.")
    sd = float(np.std(d, ddof=1))
    pool = d - d.mean() if centre else d.copy()
    params = (("n", int(d.size)), ("centre", centre), ("sd", sd))
    return Generator("data", params, pool)


def _as_generator(gen):
    if isinstance(gen, Generator):
        return gen
    if isinstance(gen, str):
        return generator(v.check_choice(gen, "generator", GENERATORS))
    raise TypeError(
        "`generator` must be a name in "
        f"{GENERATORS} or a Generator from study.generator / study.from_data, got "
        f"{type(gen).__name__}."
    )


# ----------------------------------------------------------------------------------------
# Jitted simulation and tests
# ----------------------------------------------------------------------------------------


@functools.partial(jax.jit, static_argnames=("kind", "param", "n", "m"))
def _draw_noise(key, effect, *, kind, param, n, m):
    return effect + K.noise(key, (n, m), kind, param, jnp.float64)


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _draw_ternary(key, effect, disagreement, *, n, m):
    return K.ternary_differences(key, (n, m), disagreement, effect, jnp.float64)


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _draw_mv(key, mean, chol, *, n, m):
    return K.mvnormal_differences(key, (n, m), mean, chol)


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _draw_boot(key, pool, shift, *, n, m):
    return K.bootstrap_differences(key, pool, (n, m)) + shift


def _simulate(gen, key, effect, n, m):
    """``(n, m)`` (or ``(n, m, p)``) differences of ``n`` experiments at one effect."""
    e = jnp.asarray(effect, jnp.float64)
    hp = gen.hyper
    if gen.kind in K.NOISE_KINDS:
        param = {"t": hp.get("df"), "lognormal": hp.get("sigma")}.get(gen.kind, 0.0)
        return _draw_noise(key, e, kind=gen.kind, param=param, n=n, m=m)
    if gen.kind == "bernoulli":
        return _draw_ternary(key, e, jnp.asarray(hp["disagreement"], jnp.float64), n=n, m=m)
    if gen.kind == "mvnormal":
        direction = np.asarray(hp["direction"])
        q = direction.size
        cov = np.full((q, q), hp["rho"]) + (1 - hp["rho"]) * np.eye(q)
        mean = jnp.asarray(direction / np.linalg.norm(direction)) * e
        return _draw_mv(key, mean, jnp.asarray(np.linalg.cholesky(cov)), n=n, m=m)
    shift = e * hp["sd"]
    return _draw_boot(key, jnp.asarray(gen.pool), shift, n=n, m=m)


@functools.partial(jax.jit, static_argnames=("name", "alternative"))
def _closed_form_pvalue(d, weights, *, name, alternative):
    """p-values ``(n,)`` of one non-resampling test; ``weights=None`` for 1-d data.

    One jitted function per test (not per tuple of tests), so studies that select
    different tests share compilations.
    """
    uni = d if weights is None else jnp.einsum("...mp,p->...m", d, weights)
    if name == "t":
        return K.ttest_pvalue(uni, alternative)
    if name == "wilcoxon":
        return K.wilcoxon_pvalue(uni, alternative)
    if name == "sign":
        return K.sign_pvalue(uni, alternative)
    if name == "hotelling":
        return K.hotelling_pvalue(d)
    q = d.shape[-1]  # "t_bonferroni": min p over the measures, times their number
    pk = K.ttest_pvalue(jnp.swapaxes(d, -1, -2), alternative)
    return jnp.minimum(1, q * jnp.min(pk, axis=-1))


@jax.jit
def _project(d, weights):
    return jnp.einsum("...mp,p->...m", d, weights)


def _signflip_pvalues(uni, statistic, alternative, n_resamples, key):
    """Sign-flip p-values of the rows of ``uni : (n, m)``, in blocks of experiments.

    Every block is one call of the permutation engine on a ``(block, m)`` array (its
    rows are separate hypotheses sharing the block's sign patterns), with the key
    ``fold_in(key, block)``; the last block is padded with zero rows so every call
    has the same shape (one compilation).
    """
    n, m = uni.shape
    block = min(_EXPERIMENT_BLOCK, n)
    n_blocks = -(-n // block)
    pad = n_blocks * block - n
    if pad:
        uni = jnp.concatenate([uni, jnp.zeros((pad, m), uni.dtype)])
    out, methods = [], set()
    for b in range(n_blocks):
        res = signflip_test(
            uni[b * block : (b + 1) * block],
            statistic=statistic,
            alternative=alternative,
            n_resamples=n_resamples,
            key=jax.random.fold_in(key, b),
        )
        out.append(np.asarray(res.pvalue))
        methods.add(res.method)
    return np.concatenate(out)[:n], methods


def _run_tests(d, tests, weights, alternative, n_resamples, key):
    """p-values ``(n_tests, n)`` of every test on one batch of experiments, and engine methods."""
    p = np.empty((len(tests), d.shape[0]))
    uni = d if weights is None else _project(d, weights)
    methods = set()
    for i, name in enumerate(tests):
        if name in _SIGNFLIP:
            # Both statistics share the key: their draws, and p-values, coincide.
            p[i], used = _signflip_pvalues(uni, _SIGNFLIP[name], alternative, n_resamples, key)
            methods |= used
        else:
            p[i] = np.asarray(_closed_form_pvalue(d, weights, name=name, alternative=alternative))
    return p, methods


# ----------------------------------------------------------------------------------------
# Intervals and formatting
# ----------------------------------------------------------------------------------------


def _rate_interval(res, confidence_level):
    """Clopper-Pearson interval of every rejection rate of a study result."""
    level = v.check_probability(confidence_level, "confidence_level")
    ci = clopper_pearson(res.n_rejections, res.n_experiments, confidence_level=level)
    return ci.low, ci.high


def _fmt_rate(rate, lo, hi):
    return f"{rate:.3f} [{lo:.3f}, {hi:.3f}]"


def _grid(header, rows):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), "  ".join("-" * w for w in widths), *map(line, rows)])


# ----------------------------------------------------------------------------------------
# power
# ----------------------------------------------------------------------------------------


@result
class PowerResult:
    """Rejection rates of several tests on simulated experiments.

    Attributes
    ----------
    rejection_rate : array, (n_tests, n_effects)
        Fraction of experiments with ``p <= alpha`` (an undefined p counts as no
        rejection).
    n_rejections : int array, (n_tests, n_effects)
    pvalues : array, (n_tests, n_effects, n_experiments) or None
        Kept when ``keep_pvalues=True``.
    tests, effects : tuples
        Row and column labels.
    generator : str
        Description of the generator.
    n_experiments, m, alpha, alternative, n_resamples, seed
        The study's configuration; ``signflip_methods`` the engine methods used.
    """

    rejection_rate: jax.Array
    n_rejections: jax.Array
    pvalues: jax.Array | None = None
    tests: tuple = static_field(default=())
    effects: tuple = static_field(default=())
    generator: str = static_field(default="")
    n_experiments: int = static_field(default=0)
    m: int = static_field(default=0)
    alpha: float = static_field(default=0.05)
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=0)
    signflip_methods: tuple = static_field(default=())
    seed: object = static_field(default=None)

    def confidence_interval(self, confidence_level=0.95):
        """Clopper-Pearson interval ``(low, high)`` of every rejection rate."""
        return _rate_interval(self, confidence_level)

    def table(self, confidence_level=0.95):
        """Text table: tests by effects, ``rate [low, high]``."""
        lo, hi = (np.asarray(a) for a in self.confidence_interval(confidence_level))
        r = np.asarray(self.rejection_rate)
        header = ["test"] + [f"effect={e:g}" for e in self.effects]
        rows = [
            [t] + [_fmt_rate(r[i, j], lo[i, j], hi[i, j]) for j in range(len(self.effects))]
            for i, t in enumerate(self.tests)
        ]
        title = (
            f"Rejection rate at alpha={self.alpha:g} ({self.alternative}), generator "
            f"{self.generator}, m={self.m}, {self.n_experiments} experiments, "
            f"{int(confidence_level * 100)}% Clopper-Pearson intervals"
        )
        return title + "\n" + _grid(header, rows)

    def to_dict(self, confidence_level=0.95):
        """JSON-able dict of the configuration, rates, counts and intervals."""
        lo, hi = self.confidence_interval(confidence_level)
        return jsonable(
            {
                "study": "power",
                "generator": self.generator,
                "tests": list(self.tests),
                "effects": list(self.effects),
                **_config_json(self),
                "rejection_rate": self.rejection_rate,
                "n_rejections": self.n_rejections,
                "confidence_level": confidence_level,
                "ci_low": lo,
                "ci_high": hi,
            }
        )


def _default_tests(gen):
    if gen.multivariate:
        return ("hotelling", "t_bonferroni", "t", "signflip_t", "wilcoxon", "sign")
    return UNIVARIATE_TESTS


def _tests_iv(tests, gen):
    if tests is None:
        return _default_tests(gen)
    if isinstance(tests, str):
        tests = (tests,)
    try:
        tests = tuple(tests)
    except TypeError:
        raise TypeError(f"`tests` must be a sequence of test names from {TESTS}.") from None
    if not tests:
        raise ValueError("`tests` is empty.")
    for t in tests:
        v.check_choice(t, "tests", TESTS)
    if len(set(tests)) != len(tests):
        raise ValueError(f"`tests` has duplicates: {list(tests)}.")
    if not gen.multivariate:
        bad = [t for t in tests if t in MULTIVARIATE_TESTS]
        if bad:
            raise ValueError(
                f"`tests` {bad[0]!r} needs a multivariate generator (kind='mvnormal')."
            )
    return tests


def _effects_iv(effect, gen):
    if isinstance(effect, bool) or effect is None:
        raise TypeError("`effect` must be a real number or a sequence of them.")
    scalar = isinstance(effect, numbers.Real)
    eff = _vector([effect] if scalar else effect, "effect")
    if gen.kind == "bernoulli":
        q = gen.hyper["disagreement"]
        bad = [e for e in eff if abs(e) > q]
        if bad:
            raise ValueError(
                f"`effect`={bad[0]:g} is impossible for a bernoulli generator with "
                f"disagreement={q:g}: the error rates can differ by at most the disagreement."
            )
    return eff


def _study_iv(tests, gen, n_experiments, m, effect, alpha, alternative, n_resamples):
    gen = _as_generator(gen)
    tests = _tests_iv(tests, gen)
    n_experiments = v.as_int_scalar(n_experiments, "n_experiments", minimum=2)
    m = v.as_int_scalar(m, "m", minimum=3)
    if gen.multivariate:
        q = len(gen.hyper["direction"])
        if m <= q + 1:
            raise ValueError(
                f"`m`={m} is too small for Hotelling's T² on {q} measures: use m > {q + 1}."
            )
    effects = _effects_iv(effect, gen)
    alpha = v.check_probability(alpha, "alpha")
    v.check_alternative(alternative)
    if "hotelling" in tests and alternative != "two-sided":
        raise ValueError("`alternative` must be 'two-sided' with 'hotelling' (T² has no sign).")
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    return tests, gen, n_experiments, m, effects, alpha, n_resamples


def _simulate_study(tests, gen, n_experiments, m, effects, alpha, alternative, n_resamples, key):
    """p-values ``(n_tests, n_effects, n_experiments)`` and the configuration fields
    that :class:`PowerResult` and :class:`CalibrationResult` share."""
    typed_key, seed = resolve_key(key)
    # Common random numbers: the same noise (and sign draws) at every effect, so
    # power curves are smooth and differences between effects are not MC noise.
    data_key, perm_key = jax.random.fold_in(typed_key, 0), jax.random.fold_in(typed_key, 1)
    weights = jnp.asarray(gen.hyper["weights"]) if gen.multivariate else None
    pvals, methods = [], set()
    for e in effects:
        d = _simulate(gen, data_key, e, n_experiments, m)
        p, used = _run_tests(d, tests, weights, alternative, n_resamples, perm_key)
        pvals.append(p)
        methods |= used
    config = dict(
        tests=tests,
        generator=repr(gen),
        n_experiments=n_experiments,
        m=m,
        alpha=alpha,
        alternative=alternative,
        n_resamples=n_resamples,
        signflip_methods=tuple(sorted(methods)),
        seed=seed,
    )
    return np.stack(pvals, axis=1), config


def _config_json(res):
    """The configuration entries of ``to_dict`` shared by power and calibration results."""
    return {
        "n_experiments": res.n_experiments,
        "m": res.m,
        "alpha": res.alpha,
        "alternative": res.alternative,
        "n_resamples": res.n_resamples,
        "signflip_methods": list(res.signflip_methods),
        "seed": res.seed,
    }


@x64
def power(
    tests=None,
    generator="normal",
    *,
    n_experiments=10_000,
    m=30,
    effect=0.5,
    alpha=0.05,
    alternative="two-sided",
    n_resamples=10_000,
    key=None,
    keep_pvalues=False,
):
    """Rejection rate of paired tests on simulated experiments, with binomial intervals.

    Parameters
    ----------
    tests : sequence of str or None
        From ``"t"`` (paired t), ``"signflip_mean"``, ``"signflip_t"`` (sign-flip
        permutation test, :func:`jaxtests._permutation.signflip_test`), ``"wilcoxon"``
        (signed rank), ``"sign"``, and for multivariate generators ``"hotelling"``
        and ``"t_bonferroni"`` (a t test per measure, Bonferroni). None: all that apply.
    generator : str or Generator
        A name of :func:`generator` (default parameters) or a Generator from
        :func:`generator` / :func:`from_data`.
    n_experiments : int
        Simulated experiments per effect.
    m : int
        Paired differences per experiment (test instances or folds).
    effect : float or sequence of float
        Location shift of the differences (see :func:`generator`); a sequence
        gives a power curve.
    alpha : float
        Level of every test.
    alternative : {"two-sided", "less", "greater"}
    n_resamples : int
        Sign-flip draws per experiment (exact enumeration when ``2^m`` is smaller;
        the closed-form binomial for {-c, 0, c} data, as the engine decides).
    key : int, JAX key or None
        Seed of the data and of the sign flips; recorded in the result.
    keep_pvalues : bool
        Keep every p-value in the result.

    Returns
    -------
    PowerResult

    Notes
    -----
    All experiments of an effect are one ``(n_experiments, m)`` array: the closed-form
    tests run on it in one jitted call, the sign-flip test in blocks of 1024
    experiments (one engine call each, bounded memory). The same noise is used at
    every effect (common random numbers). The interval of a rate ``k / n`` is
    Clopper-Pearson's (``PowerResult.confidence_interval``).

    References
    ----------
    Yildiz, O. T., & Alpaydin, E., "Statistical Tests using Hinge/epsilon-Sensitive
    Loss" (paired t on fold losses). MacKay, D. J. C., "More sensitive tests in DELVE"
    (heavy-tailed losses). Hein, M., "Performance Measures and Statistical Tests II",
    lecture 16, Saarland University, 2013 (sign-flip test). Yildiz, O. T., & Alpaydin,
    E., "Multivariate Comparison of Classification Algorithms" (Hotelling's T²).

    Examples
    --------
    >>> from jaxtests import study
    >>> res = study.power(["t", "sign"], "normal", n_experiments=2000, m=20, effect=0.5,
    ...                   key=0)
    >>> bool(res.rejection_rate[0, 0] > res.rejection_rate[1, 0])
    True
    """
    tests, gen, n_experiments, m, effects, alpha, n_resamples = _study_iv(
        tests, generator, n_experiments, m, effect, alpha, alternative, n_resamples
    )
    if not isinstance(keep_pvalues, bool):
        raise TypeError(f"`keep_pvalues` must be a bool, got {type(keep_pvalues).__name__}.")
    pvals, config = _simulate_study(
        tests, gen, n_experiments, m, effects, alpha, alternative, n_resamples, key
    )
    k = np.sum(pvals <= alpha, axis=-1)
    return PowerResult(
        rejection_rate=jnp.asarray(k / n_experiments),
        n_rejections=jnp.asarray(k),
        pvalues=jnp.asarray(pvals) if keep_pvalues else None,
        effects=effects,
        **config,
    )


# ----------------------------------------------------------------------------------------
# calibration
# ----------------------------------------------------------------------------------------


@result
class CalibrationResult:
    """Type-I error of several tests under H0 and their p-value distributions.

    Attributes
    ----------
    type_one_error : array, (n_tests,)
        Fraction of null experiments with ``p <= alpha``.
    n_rejections : int array, (n_tests,)
    excess_pvalue : array, (n_tests,)
        One-sided binomial p-value of ``H: rate <= alpha`` given the rejections,
        ``P(Bin(n, alpha) >= k)``.
    flagged : bool array, (n_tests,)
        ``excess_pvalue < flag_level``: the type-I error exceeds ``alpha`` beyond
        Monte Carlo error.
    ks_distance : array, (n_tests,)
        ``sup_u |F_n(u) - u|``: Kolmogorov distance of the p-values from uniform.
    max_excess : array, (n_tests,)
        ``sup_u (F_n(u) - u)``: the largest anti-conservative departure.
    pvalues : array, (n_tests, n_experiments)
    """

    type_one_error: jax.Array
    n_rejections: jax.Array
    excess_pvalue: jax.Array
    flagged: jax.Array
    ks_distance: jax.Array
    max_excess: jax.Array
    pvalues: jax.Array
    tests: tuple = static_field(default=())
    generator: str = static_field(default="")
    n_experiments: int = static_field(default=0)
    m: int = static_field(default=0)
    alpha: float = static_field(default=0.05)
    flag_level: float = static_field(default=0.001)
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=0)
    signflip_methods: tuple = static_field(default=())
    seed: object = static_field(default=None)

    def confidence_interval(self, confidence_level=0.95):
        """Clopper-Pearson interval ``(low, high)`` of every type-I error rate."""
        return _rate_interval(self, confidence_level)

    def qq(self, test):
        """``(uniform quantiles, sorted p-values)`` of one test for a QQ plot."""
        v.check_choice(test, "test", self.tests)
        p = np.sort(np.asarray(self.pvalues[self.tests.index(test)]))
        u = (np.arange(1, p.size + 1) - 0.5) / p.size
        return u, p

    def table(self, confidence_level=0.95):
        """Text table: type-I error with interval, KS distance, flag."""
        lo, hi = (np.asarray(a) for a in self.confidence_interval(confidence_level))
        r = np.asarray(self.type_one_error)
        rows = [
            [
                t,
                _fmt_rate(r[i], lo[i], hi[i]),
                f"{float(self.excess_pvalue[i]):.3g}",
                f"{float(self.ks_distance[i]):.4f}",
                f"{float(self.max_excess[i]):.4f}",
                "EXCEEDS ALPHA" if bool(self.flagged[i]) else "ok",
            ]
            for i, t in enumerate(self.tests)
        ]
        header = ["test", "type-I error [CI]", "P(excess)", "KS dist", "max excess", "flag"]
        title = (
            f"Calibration under H0 at alpha={self.alpha:g} ({self.alternative}), generator "
            f"{self.generator}, m={self.m}, {self.n_experiments} experiments; flagged when "
            f"P(Bin(n, alpha) >= k) < {self.flag_level:g}"
        )
        return title + "\n" + _grid(header, rows)

    def to_dict(self, confidence_level=0.95):
        """JSON-able dict (without the raw p-values)."""
        lo, hi = self.confidence_interval(confidence_level)
        return jsonable(
            {
                "study": "calibration",
                "generator": self.generator,
                "tests": list(self.tests),
                **_config_json(self),
                "flag_level": self.flag_level,
                "type_one_error": self.type_one_error,
                "n_rejections": self.n_rejections,
                "ci_low": lo,
                "ci_high": hi,
                "excess_pvalue": self.excess_pvalue,
                "flagged": self.flagged,
                "ks_distance": self.ks_distance,
                "max_excess": self.max_excess,
            }
        )


def _uniform_distances(p):
    """Kolmogorov distance and largest ``F_n(u) - u`` of each row of ``p`` from U(0, 1)."""
    n = p.shape[-1]
    s = np.sort(np.where(np.isnan(p), 1.0, p), axis=-1)
    i = np.arange(1, n + 1)
    above = np.max(i / n - s, axis=-1)  # F_n jumps to i/n at s_i
    below = np.max(s - (i - 1) / n, axis=-1)
    return np.maximum(above, below), np.maximum(above, 0.0)


@x64
def calibration(
    tests=None,
    generator="normal",
    *,
    n_experiments=10_000,
    m=30,
    alpha=0.05,
    alternative="two-sided",
    n_resamples=10_000,
    flag_level=0.001,
    key=None,
):
    """Type-I error and p-value uniformity of paired tests under H0.

    Parameters are those of :func:`power` (at ``effect=0``), plus ``flag_level``:
    a test is flagged when ``P(Bin(n_experiments, alpha) >= k) < flag_level``,
    the one-sided binomial bound on Monte Carlo error.

    Returns
    -------
    CalibrationResult
        Type-I errors, the flag, distances of the p-values from uniform, the
        p-values (``qq(test)`` gives QQ-plot data).

    Notes
    -----
    Sign-flip tests and the Wilcoxon test assume differences symmetric about 0;
    the sign test assumes median 0. Under the ``"lognormal"`` generator only the
    mean is 0, so they are expected to be flagged: that is the point of the check.
    Discrete tests (sign test, Bernoulli data) have atoms in their p-values and a
    positive Kolmogorov distance even when they are conservative.

    Examples
    --------
    >>> from jaxtests import study
    >>> cal = study.calibration(["t"], "normal", n_experiments=2000, m=10, key=1)
    >>> bool(cal.flagged[0])
    False
    """
    tests, gen, n_experiments, m, _, alpha, n_resamples = _study_iv(
        tests, generator, n_experiments, m, 0.0, alpha, alternative, n_resamples
    )
    flag_level = v.check_probability(flag_level, "flag_level")
    pvals, config = _simulate_study(
        tests, gen, n_experiments, m, (0.0,), alpha, alternative, n_resamples, key
    )
    from scipy import stats

    p = pvals[:, 0]
    k = np.sum(p <= alpha, axis=-1)
    excess = stats.binom.sf(k - 1, n_experiments, alpha)
    ks, mx = _uniform_distances(p)
    return CalibrationResult(
        type_one_error=jnp.asarray(k / n_experiments),
        n_rejections=jnp.asarray(k),
        excess_pvalue=jnp.asarray(excess),
        flagged=jnp.asarray(excess < flag_level),
        ks_distance=jnp.asarray(ks),
        max_excess=jnp.asarray(mx),
        pvalues=jnp.asarray(p),
        flag_level=flag_level,
        **config,
    )


# ----------------------------------------------------------------------------------------
# loss_study (MacKay, MacKay)
# ----------------------------------------------------------------------------------------


@result
class LossStudyResult:
    """Power of paired tests on the losses ``|error|^p`` under Cauchy errors (MacKay).

    Attributes
    ----------
    rejection_rate, n_rejections : arrays, (n_powers, n_tests, n_effects)
    loss_mean : array, (n_powers,)
        Mean of the simulated losses ``|e_A|^p`` (all ``n_experiments * m`` draws).
    analytic_mean : array, (n_powers,)
        ``E|e|^p = 1 / cos(p pi / 2)`` for standard Cauchy ``e`` and ``p < 1``
        (``sqrt(2)`` at ``p = 1/2``, MacKay), ``inf`` for ``p >= 1``.
    """

    rejection_rate: jax.Array
    n_rejections: jax.Array
    loss_mean: jax.Array
    analytic_mean: jax.Array
    powers: tuple = static_field(default=())
    tests: tuple = static_field(default=())
    effects: tuple = static_field(default=())
    n_experiments: int = static_field(default=0)
    m: int = static_field(default=0)
    alpha: float = static_field(default=0.05)
    n_resamples: int = static_field(default=0)
    seed: object = static_field(default=None)

    def confidence_interval(self, confidence_level=0.95):
        """Clopper-Pearson interval ``(low, high)`` of every rejection rate."""
        return _rate_interval(self, confidence_level)

    def table(self, confidence_level=0.95):
        """Text table: one row per (p, test), effects as columns."""
        lo, hi = (np.asarray(a) for a in self.confidence_interval(confidence_level))
        r = np.asarray(self.rejection_rate)
        header = ["loss", "test", "mean |e|^p (sim / exact)"] + [
            f"scale ratio={1 + e:g}" for e in self.effects
        ]
        rows = []
        for a, p in enumerate(self.powers):
            exact = float(self.analytic_mean[a])
            mean = (
                f"{float(self.loss_mean[a]):.4g} / {exact:.4g}"
                if math.isfinite(exact)
                else (f"{float(self.loss_mean[a]):.4g} / inf")
            )
            for i, t in enumerate(self.tests):
                rows.append(
                    [f"|e|^{p:g}", t, mean]
                    + [
                        _fmt_rate(r[a, i, j], lo[a, i, j], hi[a, i, j])
                        for j in range(len(self.effects))
                    ]
                )
        title = (
            "MacKay, 'More sensitive tests in DELVE': Cauchy errors, B's errors scaled by "
            f"(1 + effect); rejection rate at alpha={self.alpha:g}, m={self.m}, "
            f"{self.n_experiments} experiments"
        )
        return title + "\n" + _grid(header, rows)

    def to_dict(self, confidence_level=0.95):
        """JSON-able dict."""
        lo, hi = self.confidence_interval(confidence_level)
        return jsonable(
            {
                "study": "loss_study",
                "powers": list(self.powers),
                "tests": list(self.tests),
                "effects": list(self.effects),
                "n_experiments": self.n_experiments,
                "m": self.m,
                "alpha": self.alpha,
                "n_resamples": self.n_resamples,
                "seed": self.seed,
                "rejection_rate": self.rejection_rate,
                "n_rejections": self.n_rejections,
                "ci_low": lo,
                "ci_high": hi,
                "loss_mean": self.loss_mean,
                "analytic_mean": self.analytic_mean,
            }
        )


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _cauchy_pair(key, *, n, m):
    ka, kb = jax.random.split(key)
    return jax.random.cauchy(ka, (n, m), jnp.float64), jax.random.cauchy(kb, (n, m), jnp.float64)


@jax.jit
def _power_losses(ea, eb, scale, p):
    la = jnp.abs(ea) ** p
    return la - jnp.abs(scale * eb) ** p, jnp.mean(la)


@x64
def loss_study(
    tests=("t",),
    *,
    powers=(2.0, 1.0, 0.5, 0.1),
    n_experiments=10_000,
    m=30,
    effect=(0.0, 0.5, 1.0),
    alpha=0.05,
    n_resamples=10_000,
    key=None,
):
    """MacKay's experiment (MacKay): tests on ``|error|^p`` losses under Cauchy errors.

    Method A's errors on ``m`` test cases are standard Cauchy, method B's are
    ``(1 + effect)`` times standard Cauchy (B is worse); each experiment tests
    the paired differences ``|e_A|^p - |e_B|^p``. For ``p >= 1`` the losses have
    no finite mean and a few huge values dominate the variance, so the t test
    loses power; smaller ``p`` makes the losses bell-shaped.

    Parameters
    ----------
    tests : sequence of str
        Univariate tests of :func:`power` (default: the paired t test).
    powers : sequence of float
        Exponents ``p > 0`` of the loss.
    n_experiments, m, alpha, n_resamples, key
        As in :func:`power`.
    effect : float or sequence of float
        ``B``'s error scale is ``1 + effect`` (``effect > -1``); 0 is H0.

    Returns
    -------
    LossStudyResult

    References
    ----------
    MacKay (1997), "More sensitive tests in DELVE" (MacKay): ``E|e|^{1/2} =
    sqrt(2)`` for Cauchy errors.

    Examples
    --------
    >>> from jaxtests import study
    >>> r = study.loss_study(n_experiments=500, m=30, effect=1.0, key=0)
    >>> bool(r.rejection_rate[3, 0, 0] > r.rejection_rate[0, 0, 0])
    True
    """
    gen = generator("cauchy")
    tests = _tests_iv(tests, gen)
    pw = _vector(powers, "powers")
    if any(p <= 0 for p in pw):
        raise ValueError(f"`powers` must be positive, got {list(pw)}.")
    n_experiments = v.as_int_scalar(n_experiments, "n_experiments", minimum=2)
    m = v.as_int_scalar(m, "m", minimum=3)
    if isinstance(effect, bool) or effect is None:
        raise TypeError("`effect` must be a real number or a sequence of them.")
    effects = _vector([effect] if isinstance(effect, numbers.Real) else effect, "effect")
    if any(e <= -1 for e in effects):
        raise ValueError(
            f"`effect` must be > -1 (B's error scale is 1 + effect), got {list(effects)}."
        )
    alpha = v.check_probability(alpha, "alpha")
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    typed_key, seed = resolve_key(key)
    ea, eb = _cauchy_pair(jax.random.fold_in(typed_key, 0), n=n_experiments, m=m)
    perm_key = jax.random.fold_in(typed_key, 1)
    k = np.zeros((len(pw), len(tests), len(effects)), np.int64)
    means = np.zeros(len(pw))
    for a, p in enumerate(pw):
        for j, e in enumerate(effects):
            d, mean = _power_losses(ea, eb, jnp.asarray(1.0 + e), jnp.asarray(p))
            pv, _ = _run_tests(d, tests, None, "two-sided", n_resamples, perm_key)
            k[a, :, j] = np.sum(pv <= alpha, axis=-1)
            means[a] = float(mean)
    exact = np.array([1 / math.cos(p * math.pi / 2) if p < 1 else math.inf for p in pw])
    return LossStudyResult(
        rejection_rate=jnp.asarray(k / n_experiments),
        n_rejections=jnp.asarray(k),
        loss_mean=jnp.asarray(means),
        analytic_mean=jnp.asarray(exact),
        powers=pw,
        tests=tests,
        effects=effects,
        n_experiments=n_experiments,
        m=m,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
    )


# ----------------------------------------------------------------------------------------
# agreement (Yildiz & Alpaydin Tables 1-3, Yildiz & Alpaydin Tables 1-2)
# ----------------------------------------------------------------------------------------

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
        return jnp.asarray(100.0 * np.asarray(self.counts) / max(self.n_comparisons, 1))

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
            _grid(["", f"{t2}: accept", f"{t2}: reject", "total"], rows),
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
        out.append(_grid(["model", t1, t2], nrows))
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
    return K.ttest_pvalue(d, "two-sided")


@jax.jit
def _fold_hotelling_pvalues(d):
    p = K.hotelling_pvalue(d)
    rcond = S.correlation_rcond(S.covariance(d), jnp.max(jnp.abs(d), axis=-2))
    return jnp.where(rcond > _RCOND_TOL, p, jnp.nan)


@jax.jit
def _mardia_pvalues(x):
    """min(skewness p, kurtosis p) of Mardia's tests per ``x : (..., n, p)``; NaN if singular."""
    n, q = x.shape[-2], x.shape[-1]
    mom = S.mardia_moments(x)
    skew_p = S.chi2_sf(n * mom.skewness / 6, q * (q + 1) * (q + 2) // 6)
    z = (mom.kurtosis - q * (q + 2)) / math.sqrt(8 * q * (q + 2) / n)
    kurt_p = 2 * S.norm_sf(jnp.abs(z))
    xc = x - jnp.mean(x, axis=-2, keepdims=True)
    rcond = S.correlation_rcond(S.covariance(x), jnp.max(jnp.abs(xc), axis=-2))
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
        From :func:`jaxtests._cv.cross_validate` with ``repeats`` runs; several
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


# ----------------------------------------------------------------------------------------
# Figures (matplotlib imported lazily)
# ----------------------------------------------------------------------------------------


def plot_power(res, *, ax=None, title=None, confidence_level=0.95):
    """Power curves (rejection rate against effect) with Clopper-Pearson bars; a Figure."""
    if not isinstance(res, PowerResult):
        raise TypeError(f"`res` must be a PowerResult, got {type(res).__name__}.")
    fig, ax = _axes(ax)
    lo, hi = (np.asarray(a) for a in res.confidence_interval(confidence_level))
    r = np.asarray(res.rejection_rate)
    x = np.asarray(res.effects)
    for i, t in enumerate(res.tests):
        ax.errorbar(x, r[i], yerr=[r[i] - lo[i], hi[i] - r[i]], marker="o", capsize=3, label=t)
    ax.axhline(res.alpha, color="grey", linestyle=":", label=f"alpha = {res.alpha:g}")
    ax.set_xlabel("effect")
    ax.set_ylabel("rejection rate")
    ax.set_ylim(0, 1.02)
    _legend_outside(ax, fontsize="small")
    ax.set_title(title or f"Power: {res.generator}, m = {res.m}")
    return fig


def plot_calibration(res, *, ax=None, title=None):
    """QQ plot of each test's null p-values against U(0, 1); a Figure."""
    if not isinstance(res, CalibrationResult):
        raise TypeError(f"`res` must be a CalibrationResult, got {type(res).__name__}.")
    fig, ax = _axes(ax, figsize=(5.0, 5.0))
    for t in res.tests:
        u, p = res.qq(t)
        ax.plot(u, p, label=t, linewidth=1.2)
    ax.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=0.8, label="uniform")
    ax.axvline(res.alpha, color="grey", linestyle=":")
    ax.set_xlabel("uniform quantile")
    ax.set_ylabel("p-value quantile")
    _legend_outside(ax, fontsize="small")
    ax.set_title(title or f"p-value QQ plot under H0: {res.generator}, m = {res.m}")
    return fig


def plot_agreement(res, *, ax=None, title=None):
    """Heatmap of the 2x2 agreement table in percent; a Figure."""
    if not isinstance(res, AgreementResult):
        raise TypeError(f"`res` must be an AgreementResult, got {type(res).__name__}.")
    fig, ax = _axes(ax, figsize=(4.5, 4.0))
    pc = np.asarray(res.percentages())
    im = ax.imshow(pc, cmap="Blues", vmin=0, vmax=100)
    for i in range(2):
        for j in range(2):
            ax.text(
                j,
                i,
                f"{pc[i, j]:.1f}%",
                ha="center",
                va="center",
                color="white" if pc[i, j] > 50 else "black",
            )
    ax.set_xticks([0, 1], ["accept", "reject"])
    ax.set_yticks([0, 1], ["accept", "reject"])
    ax.set_xlabel(f"test on {res.tests[1]}")
    ax.set_ylabel(f"test on {res.tests[0]}")
    fig.colorbar(im, ax=ax, label="percent of comparisons")
    ax.set_title(title or f"Agreement: {res.tests[0]} vs {res.tests[1]}")
    return fig
