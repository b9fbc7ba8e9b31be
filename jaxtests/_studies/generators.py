"""Generators of simulated paired differences: :func:`generator`, :func:`from_data`,
and the jitted draws of one batch of experiments."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._studies._common import _real, _vector
from jaxtests.kernels import study as kstudy

GENERATORS = ("normal", "t", "cauchy", "lognormal", "bernoulli", "mvnormal")


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

    Examples
    --------
    >>> from jaxtests import study
    >>> study.generator("t", df=5)
    t(df=5)
    >>> study.generator("mvnormal", rho=0.3)
    mvnormal(rho=0.3, direction=(1, 1), weights=(-0.5, 0.5))
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

    Examples
    --------
    >>> from jaxtests import study
    >>> gen = study.from_data([0.2, -0.1, 0.4, 0.0, 0.3, -0.2])
    >>> gen
    data(n=6, centre=True, sd=0.236643)
    >>> abs(float(gen.pool.mean())) < 1e-12  # centred: the differences satisfy H0
    True
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


@functools.partial(jax.jit, static_argnames=("kind", "param", "n", "m"))
def _draw_noise(key, effect, *, kind, param, n, m):
    return effect + kstudy.noise(key, (n, m), kind, param, jnp.float64)


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _draw_ternary(key, effect, disagreement, *, n, m):
    return kstudy.ternary_differences(key, (n, m), disagreement, effect, jnp.float64)


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _draw_mv(key, mean, chol, *, n, m):
    return kstudy.mvnormal_differences(key, (n, m), mean, chol)


@functools.partial(jax.jit, static_argnames=("n", "m"))
def _draw_boot(key, pool, shift, *, n, m):
    return kstudy.bootstrap_differences(key, pool, (n, m)) + shift


def _simulate(gen, key, effect, n, m):
    """``(n, m)`` (or ``(n, m, p)``) differences of ``n`` experiments at one effect."""
    e = jnp.asarray(effect, jnp.float64)
    hp = gen.hyper
    if gen.kind in kstudy.NOISE_KINDS:
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
