"""Calibration study: type-I error and p-value uniformity of paired tests under H0."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._results import result, static_field
from jaxtests._studies._common import StudyResult, _config_json, _fmt_rate, _setting
from jaxtests._studies._experiments import _simulate_study, _study_iv


@result
class CalibrationResult(StudyResult):
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

    _rate = "type_one_error"
    _study = "calibration"

    def qq(self, test):
        """``(uniform quantiles, sorted p-values)`` of one test for a QQ plot."""
        v.check_choice(test, "test", self.tests)
        p = np.sort(np.asarray(self.pvalues[self.tests.index(test)]))
        u = (np.arange(1, p.size + 1) - 0.5) / p.size
        return u, p

    def _title(self, confidence_level):
        return (
            f"Calibration under H0 {_setting(self)}; flagged when "
            f"P(Bin(n, alpha) >= k) < {self.flag_level:g}"
        )

    def _rows(self, r, lo, hi):
        header = ["test", "type-I error [CI]", "P(excess)", "KS dist", "max excess", "flag"]
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
        return header, rows

    def _labels(self):
        return {**_config_json(self), "flag_level": self.flag_level}

    def _extra(self):
        return {
            "excess_pvalue": self.excess_pvalue,
            "flagged": self.flagged,
            "ks_distance": self.ks_distance,
            "max_excess": self.max_excess,
        }


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
    plan = _study_iv(tests, generator, n_experiments, m, 0.0, alpha, alternative, n_resamples)
    flag_level = v.check_probability(flag_level, "flag_level")
    pvals, config = _simulate_study(plan, key)
    from scipy import stats

    n_experiments, alpha = plan.n_experiments, plan.alpha
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
