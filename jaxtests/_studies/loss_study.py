"""MacKay's loss study ("More sensitive tests in DELVE"): paired tests on ``|error|^p``
losses under Cauchy errors."""

import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests._studies._common import StudyResult, _fmt_rate, _vector
from jaxtests._studies._experiments import _run_tests, _tests_iv
from jaxtests._studies.generators import generator


@result
class LossStudyResult(StudyResult):
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

    _study = "loss_study"

    def _rows(self, r, lo, hi):
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
        return header, rows

    def _title(self, confidence_level):
        return (
            "MacKay, 'More sensitive tests in DELVE': Cauchy errors, B's errors scaled by "
            f"(1 + effect); rejection rate at alpha={self.alpha:g}, m={self.m}, "
            f"{self.n_experiments} experiments"
        )

    def _labels(self):
        return {
            "powers": list(self.powers),
            "tests": list(self.tests),
            "effects": list(self.effects),
            "n_experiments": self.n_experiments,
            "m": self.m,
            "alpha": self.alpha,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
        }

    def _extra(self):
        return {"loss_mean": self.loss_mean, "analytic_mean": self.analytic_mean}


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
