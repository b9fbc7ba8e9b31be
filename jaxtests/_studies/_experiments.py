"""The tests of a study on one batch of simulated experiments, and the plan of a
power or calibration study (validated arguments, then the p-values of every test)."""

import dataclasses
import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from jaxtests import _validation as v
from jaxtests._random import resolve_key
from jaxtests._signflip import signflip_test
from jaxtests._studies._common import _vector
from jaxtests._studies.generators import Generator, _as_generator, _simulate
from jaxtests.kernels import study as kstudy

UNIVARIATE_TESTS = ("t", "signflip_mean", "signflip_t", "wilcoxon", "sign")
MULTIVARIATE_TESTS = ("hotelling", "t_bonferroni")
TESTS = UNIVARIATE_TESTS + MULTIVARIATE_TESTS
_SIGNFLIP = {"signflip_mean": "mean", "signflip_t": "t"}
# Experiments per call of the sign-flip engine: bounds memory at about
# 1024 x 8192 float64 statistics per block of draws, whatever n_experiments is.
_EXPERIMENT_BLOCK = 1024


@functools.partial(jax.jit, static_argnames=("name", "alternative"))
def _closed_form_pvalue(d, weights, *, name, alternative):
    """p-values ``(n,)`` of one non-resampling test; ``weights=None`` for 1-d data.

    One jitted function per test (not per tuple of tests), so studies that select
    different tests share compilations.
    """
    uni = d if weights is None else jnp.einsum("...mp,p->...m", d, weights)
    if name == "t":
        return kstudy.ttest_pvalue(uni, alternative)
    if name == "wilcoxon":
        return kstudy.wilcoxon_pvalue(uni, alternative)
    if name == "sign":
        return kstudy.sign_pvalue(uni, alternative)
    if name == "hotelling":
        return kstudy.hotelling_pvalue(d)
    q = d.shape[-1]  # "t_bonferroni": min p over the measures, times their number
    pk = kstudy.ttest_pvalue(jnp.swapaxes(d, -1, -2), alternative)
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


@dataclasses.dataclass(frozen=True)
class StudyPlan:
    """Validated arguments of a power or calibration study."""

    tests: tuple
    gen: Generator
    n_experiments: int
    m: int
    effects: tuple
    alpha: float
    alternative: str
    n_resamples: int


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
    return StudyPlan(tests, gen, n_experiments, m, effects, alpha, alternative, n_resamples)


def _simulate_study(plan, key):
    """p-values ``(n_tests, n_effects, n_experiments)`` and the configuration fields
    that :class:`PowerResult` and :class:`CalibrationResult` share."""
    typed_key, seed = resolve_key(key)
    gen = plan.gen
    # Common random numbers: the same noise (and sign draws) at every effect, so
    # power curves are smooth and differences between effects are not MC noise.
    data_key, perm_key = jax.random.fold_in(typed_key, 0), jax.random.fold_in(typed_key, 1)
    weights = jnp.asarray(gen.hyper["weights"]) if gen.multivariate else None
    pvals, methods = [], set()
    for e in plan.effects:
        d = _simulate(gen, data_key, e, plan.n_experiments, plan.m)
        p, used = _run_tests(d, plan.tests, weights, plan.alternative, plan.n_resamples, perm_key)
        pvals.append(p)
        methods |= used
    config = dict(
        tests=plan.tests,
        generator=repr(gen),
        n_experiments=plan.n_experiments,
        m=plan.m,
        alpha=plan.alpha,
        alternative=plan.alternative,
        n_resamples=plan.n_resamples,
        signflip_methods=tuple(sorted(methods)),
        seed=seed,
    )
    return np.stack(pvals, axis=1), config
