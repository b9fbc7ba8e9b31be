"""Simulated power of the resampling tests (sign flip, paired bootstrap) on generated data sets."""

import math

import jax
import numpy as np

from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._random import resolve_key
from jaxtests._results import ConfidenceInterval, result, static_field
from jaxtests._studies._experiments import _closed_form_pvalue, _effects_iv, _signflip_pvalues
from jaxtests._studies.generators import _as_generator, _simulate

__all__ = ["SIMULATED_TESTS", "SimulatedPowerResult", "simulated_power"]

SIMULATED_TESTS = ("signflip", "bootstrap", "t", "wild")


@result
class SimulatedPowerResult:
    """Result of :func:`simulated_power`.

    Attributes
    ----------
    power : float
        Fraction of the simulated data sets on which the test rejected (``p <= alpha``;
        an undefined p-value counts as no rejection).
    standard_error : float
        Its Monte Carlo standard error, ``sqrt(power (1 - power) / n_datasets)``.
    n_rejections, n_datasets : int
    n : int
        Items per data set.
    effect : float
        The generator's location shift (Cohen's ``d_z`` for ``"normal"``).
    test, generator, alpha, alternative, n_resamples, seed
        The configuration; ``seed`` repeats the run.
    cluster_size : int or None
        Items per cluster of a clustered design (None: independent items).
    icc : float or None
        The intra-cluster correlation of the differences of a clustered design.
    """

    power: float
    standard_error: float
    n_rejections: int
    n_datasets: int
    n: int
    effect: float
    test: str = static_field(default="signflip")
    generator: str = static_field(default="normal()")
    alpha: float = static_field(default=0.05)
    alternative: str = static_field(default="two-sided")
    n_resamples: int = static_field(default=0)
    seed: object = static_field(default=None)
    cluster_size: int | None = static_field(default=None)
    icc: float | None = static_field(default=None)

    def confidence_interval(self, confidence_level=0.95):
        """Clopper-Pearson interval of the power (of its Monte Carlo estimate)."""
        from jaxtests._intervals import clopper_pearson

        level = v.check_probability(confidence_level, "confidence_level")
        ci = clopper_pearson(self.n_rejections, self.n_datasets, confidence_level=level)
        return ConfidenceInterval(float(ci.low), float(ci.high))


def _clustered_iv(n, cluster_size, icc, test, gen):
    """``(cluster_size, icc)`` of a clustered design, or ``(None, None)``."""
    if cluster_size is None and icc is None:
        if test == "wild":
            raise ValueError("`test`='wild' (the wild cluster bootstrap) needs `cluster_size`.")
        return None, None
    if cluster_size is None or icc is None:
        raise ValueError("a clustered design needs both `cluster_size` and `icc`.")
    cluster_size = v.as_int_scalar(cluster_size, "cluster_size", minimum=1)
    if n % cluster_size or n // cluster_size < 2:
        raise ValueError(
            f"`n`={n} must be a whole number (at least 2) of clusters of `cluster_size`="
            f"{cluster_size}."
        )
    if isinstance(icc, bool) or not isinstance(icc, int | float | np.integer | np.floating):
        raise TypeError(f"`icc` must be a real number, got {type(icc).__name__}.")
    if not 0 <= icc < 1:
        raise ValueError(f"`icc` must be in [0, 1), got {icc}.")
    if gen.kind != "normal":
        raise ValueError(
            "a clustered design simulates normal differences: `generator` must be 'normal', "
            f"got {gen!r}."
        )
    return cluster_size, float(icc)


def _simulated_power_iv(test, n, effect, generator, n_datasets, n_resamples, alpha, alternative):
    v.check_choice(test, "test", SIMULATED_TESTS)
    n = v.as_int_scalar(n, "n", minimum=2)
    gen = _as_generator(generator)
    if gen.multivariate:
        raise ValueError(
            "`generator` must draw one difference per item; a multivariate generator "
            "('mvnormal') has no single test here."
        )
    if not isinstance(effect, int | float | np.integer | np.floating) or isinstance(effect, bool):
        raise TypeError(f"`effect` must be a real number, got {type(effect).__name__}.")
    (effect,) = _effects_iv(float(effect), gen)
    n_datasets = v.as_int_scalar(n_datasets, "n_datasets", minimum=2)
    n_resamples = v.as_int_scalar(n_resamples, "n_resamples", minimum=1)
    alpha = v.check_probability(alpha, "alpha")
    v.check_alternative(alternative)
    return n, effect, gen, n_datasets, n_resamples, alpha


@x64
def simulated_power(
    test,
    n,
    effect,
    *,
    generator="normal",
    n_datasets=400,
    n_resamples=999,
    alpha=0.05,
    alternative="two-sided",
    key=None,
    cluster_size=None,
    icc=None,
):
    """Power of a resampling test on ``n`` items, estimated on simulated data sets.

    Parameters
    ----------
    test : {"signflip", "bootstrap", "t", "wild"}
        ``"signflip"``: :func:`jaxtests.signflip_test` (statistic ``"mean"``);
        ``"bootstrap"``: :func:`jaxtests.bootstrap_test` (``"mean_difference"``, the
        shifted bootstrap of Berg-Kirkpatrick et al. 2012); ``"t"``: the paired t test,
        for comparison with :func:`ttest_paired_power` on the same data sets;
        ``"wild"``: :func:`jaxtests.wild_cluster_bootstrap` (clustered designs only).
        With ``cluster_size`` each runs with ``cluster=`` (the t: CR1).
    n : int
        Items (per-item differences) per data set.
    effect : float
        Location shift of the differences, as in :func:`jaxtests.study.generator`:
        Cohen's ``d_z`` for ``"normal"``, the difference of error rates for
        ``"bernoulli"`` (0/1 losses).
    generator : str or Generator
        A name of :func:`jaxtests.study.generator` (default parameters) or a Generator
        from :func:`jaxtests.study.generator` / :func:`jaxtests.study.from_data`.
    n_datasets : int
        Simulated data sets; the Monte Carlo standard error of the power is at most
        ``0.5 / sqrt(n_datasets)``.
    n_resamples : int
        Sign flips or bootstrap resamples per data set (the sign flips are enumerated
        when ``2^n`` is smaller, as :func:`jaxtests.signflip_test` decides).
    alpha : float
        Level of the test.
    alternative : {"two-sided", "greater", "less"}
        As the test's.
    key : int, JAX key or None
        Seed of the data (``fold_in(key, 0)``) and of the resamples
        (``fold_in(key, 1)``); recorded in the result.
    cluster_size, icc : int and float, optional
        A clustered design: ``n / cluster_size`` clusters, the differences
        ``effect + sqrt(icc) u_g + sqrt(1 - icc) e_i`` with standard normal ``u_g``
        (one per cluster) and ``e_i`` (the ``"normal"`` generator only), so that
        ``effect`` stays Cohen's ``d_z`` and ``icc`` is the differences'
        intra-cluster correlation, as :func:`ttest_paired_power` takes them.

    Returns
    -------
    SimulatedPowerResult
        ``power``, ``standard_error``, ``n_rejections``, ``n_datasets``;
        ``confidence_interval()`` gives its Clopper-Pearson interval.

    Notes
    -----
    All data sets are one ``(n_datasets, n)`` array drawn in one jitted call. The
    sign-flip test runs on its rows as separate hypotheses in one engine call per 1,024
    data sets (the rows share the block's sign patterns, which leaves each row's
    p-value exact in distribution); :func:`jaxtests.bootstrap_test` takes the whole
    array as its batch and draws each row's resamples with the same key.

    Examples
    --------
    >>> from jaxtests import power
    >>> r = power.simulated_power("signflip", 30, 0.5, n_datasets=200, key=0)
    >>> round(r.power, 3), round(r.standard_error, 3)
    (0.79, 0.029)
    >>> round(power.ttest_paired_power(n=30, effect_size=0.5).power, 3)  # the t's power
    0.754
    """
    n, effect, gen, n_datasets, n_resamples, alpha = _simulated_power_iv(
        test, n, effect, generator, n_datasets, n_resamples, alpha, alternative
    )
    cluster_size, icc = _clustered_iv(n, cluster_size, icc, test, gen)
    typed_key, seed = resolve_key(key)
    data_key, test_key = jax.random.fold_in(typed_key, 0), jax.random.fold_in(typed_key, 1)
    if cluster_size is None:
        d = _simulate(gen, data_key, effect, n_datasets, n)
        p = _pvalues(test, d, None, alternative, n_resamples, test_key)
    else:
        labels = np.repeat(np.arange(n // cluster_size), cluster_size)
        k_items, k_clusters = jax.random.split(data_key)
        items = np.asarray(jax.random.normal(k_items, (n_datasets, n), dtype=np.float64))
        shared = np.asarray(
            jax.random.normal(k_clusters, (n_datasets, n // cluster_size), dtype=np.float64)
        )
        d = effect + math.sqrt(icc) * shared[:, labels] + math.sqrt(1 - icc) * items
        p = _pvalues(test, d, labels, alternative, n_resamples, test_key)
    k = int(np.sum(np.asarray(p) <= alpha))
    rate = k / n_datasets
    return SimulatedPowerResult(
        power=rate,
        standard_error=math.sqrt(rate * (1 - rate) / n_datasets),
        n_rejections=k,
        n_datasets=n_datasets,
        n=n,
        effect=effect,
        test=test,
        generator=repr(gen),
        alpha=alpha,
        alternative=alternative,
        n_resamples=n_resamples,
        seed=seed,
        cluster_size=cluster_size,
        icc=icc,
    )


def _pvalues(test, d, cluster, alternative, n_resamples, key):
    """The p-value of each row of ``d : (n_datasets, n)`` (``cluster``: its labels)."""
    if cluster is None:
        if test == "signflip":
            return _signflip_pvalues(d, "mean", alternative, n_resamples, key)[0]
        if test == "t":
            return _closed_form_pvalue(d, None, name="t", alternative=alternative)
    x = np.asarray(d)
    zero = np.zeros_like(x)
    if test == "signflip":
        from jaxtests._signflip import signflip_test

        return signflip_test(
            x, cluster=cluster, alternative=alternative, n_resamples=n_resamples, key=key
        ).pvalue
    if test == "t":
        from jaxtests._ttests import ttest_paired

        return ttest_paired(x, zero, cluster=cluster, alternative=alternative).pvalue
    if test == "wild":
        from jaxtests._wild import wild_cluster_bootstrap

        return wild_cluster_bootstrap(
            x, zero, cluster=cluster, alternative=alternative, n_resamples=n_resamples, key=key
        ).pvalue
    from jaxtests._bootstrap import bootstrap_test

    return bootstrap_test(
        (x, zero),
        "mean_difference",
        n_resamples=n_resamples,
        method="percentile",  # the p-value is the same for every interval method
        alternative=alternative,
        key=key,
        cluster=cluster,
    ).pvalue
