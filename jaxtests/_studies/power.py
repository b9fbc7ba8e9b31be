"""Power study: rejection rates of paired tests on simulated experiments."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests._precision import x64
from jaxtests._results import result, static_field
from jaxtests._studies._common import StudyResult, _config_json, _fmt_rate, _setting
from jaxtests._studies._experiments import _simulate_study, _study_iv


@result
class PowerResult(StudyResult):
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

    _study = "power"

    def _title(self, confidence_level):
        pct = int(confidence_level * 100)
        return f"Rejection rate {_setting(self)}, {pct}% Clopper-Pearson intervals"

    def _rows(self, r, lo, hi):
        header = ["test"] + [f"effect={e:g}" for e in self.effects]
        rows = [
            [t] + [_fmt_rate(r[i, j], lo[i, j], hi[i, j]) for j in range(len(self.effects))]
            for i, t in enumerate(self.tests)
        ]
        return header, rows

    def _labels(self):
        return {**_config_json(self), "effects": list(self.effects)}


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
        permutation test, :func:`jaxtests.signflip_test`), ``"wilcoxon"``
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
    plan = _study_iv(tests, generator, n_experiments, m, effect, alpha, alternative, n_resamples)
    if not isinstance(keep_pvalues, bool):
        raise TypeError(f"`keep_pvalues` must be a bool, got {type(keep_pvalues).__name__}.")
    pvals, config = _simulate_study(plan, key)
    k = np.sum(pvals <= plan.alpha, axis=-1)
    return PowerResult(
        rejection_rate=jnp.asarray(k / plan.n_experiments),
        n_rejections=jnp.asarray(k),
        pvalues=jnp.asarray(pvals) if keep_pvalues else None,
        effects=plan.effects,
        **config,
    )
