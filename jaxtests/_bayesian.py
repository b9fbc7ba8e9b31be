"""Bayesian comparison of two learners (Benavoli, Corani, Demšar & Zaffalon, JMLR 2017)."""

import numbers

import jax
import numpy as np

from jaxtests import _distributed, _engine
from jaxtests import _signrank_draws as draws
from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._progress import as_progress
from jaxtests._random import resolve_key
from jaxtests._results import result, static_field
from jaxtests.kernels import statistics as kstatistics

__all__ = ["BayesianResult", "SignRankResult", "correlated_ttest", "signrank"]


class _Orientation:
    """``p_a_better``, ``p_b_better`` from ``p_left``, ``p_right`` and ``higher_is_better``."""

    @property
    def p_a_better(self):
        """``P(a better)``: ``p_left`` when higher is better, else ``p_right``."""
        return self.p_left if self.higher_is_better else self.p_right

    @property
    def p_b_better(self):
        """``P(b better)``: ``p_right`` when higher is better, else ``p_left``."""
        return self.p_right if self.higher_is_better else self.p_left


@result
class BayesianResult(_Orientation):
    """Posterior probabilities of the mean difference ``mu`` of ``a - b`` against the rope.

    Oriented as baycomp's ``two_on_single(a, b)`` for the same argument order: "left"
    is the first learner ``a`` higher (baycomp's difference is ``b - a``).

    Attributes
    ----------
    p_left, p_rope, p_right : arrays of the batch shape
        ``P(mu > rope)`` (``a`` higher), ``P(-rope <= mu <= rope)``, ``P(mu < -rope)``
        (``b`` higher), as baycomp's ``(p_left, p_rope, p_right)``; they sum to 1.
    mean, scale : arrays
        Location and scale of the Student-t posterior of ``mu`` (of ``a - b``).
    df : int
        Its degrees of freedom (``n - 1``).
    rope, rho : float
    higher_is_better : bool
        Whether a higher score is better; sets :attr:`p_a_better` and :attr:`p_b_better`.
    """

    p_left: jax.Array
    p_rope: jax.Array
    p_right: jax.Array
    mean: jax.Array
    scale: jax.Array
    df: int = static_field()
    rope: float = static_field()
    rho: float = static_field()
    higher_is_better: bool = static_field(default=True)


@x64
def correlated_ttest(a, b, *, rope, rho, axis=-1, higher_is_better=True):
    """Correlated Bayesian t-test of two learners on one data set (cross-validation).

    Parameters
    ----------
    a, b : array_like
        Scores of the two learners on the same ``n`` folds (or repeated cross-validation
        runs) along ``axis``; other axes are independent comparisons.
    rope : float
        Half-width of the region of practical equivalence ``[-rope, rope]`` of the mean
        difference (``rope >= 0``, in the scores' units, e.g. 0.01 accuracy).
    rho : float
        Correlation between the differences of two folds, ``n_test / n_total`` as in
        Nadeau & Bengio (``1 / k`` for k-fold cross-validation); ``0 <= rho < 1``.
    axis : int
        Axis of the folds.
    higher_is_better : bool, default True
        Whether a higher score is better (accuracy; False for errors and losses): names
        the probabilities ``p_a_better`` and ``p_b_better`` of the result. ``p_left``
        and ``p_right`` do not depend on it.

    Returns
    -------
    BayesianResult

    Notes
    -----
    With ``d = a - b``, mean ``dbar`` and sample variance ``s^2`` (ddof 1), the
    posterior of the mean difference under the correlated model and the matching
    noninformative prior is Student's t with ``n - 1`` degrees of freedom, location
    ``dbar`` and scale ``sqrt((1 / n + rho / (1 - rho)) s^2)`` (Corani & Benavoli
    2015; Benavoli et al. 2017, section 3). Zero variance makes the posterior a point
    mass at ``dbar``. Orientation as baycomp's ``two_on_single(x, y, rope)`` (its
    ``CorrelatedTTest``, difference ``y - x``) with ``a, b = x, y``: ``p_left`` is
    ``P(mu > rope)``, ``a`` higher (before issue 28 it was ``P(mu < -rope)``).

    References
    ----------
    Corani, G., & Benavoli, A. (2015). A Bayesian approach for comparing cross-validated
    algorithms on multiple data sets. Machine Learning 100.
    Benavoli, A., Corani, G., Demšar, J., & Zaffalon, M. (2017). Time for a change: a
    tutorial for comparing multiple classifiers through Bayesian analysis. JMLR 18.
    Nadeau, C., & Bengio, Y. (2003). Inference for the generalization error. Machine
    Learning 52.

    Examples
    --------
    >>> a = [0.81, 0.84, 0.79, 0.83, 0.80, 0.85, 0.82, 0.80, 0.78, 0.84]
    >>> b = [0.80, 0.81, 0.79, 0.80, 0.78, 0.83, 0.80, 0.80, 0.76, 0.81]
    >>> r = correlated_ttest(a, b, rope=0.01, rho=1 / 10)  # baycomp 1.0.3: the same
    >>> round(float(r.p_left), 4), round(float(r.p_rope), 4), round(float(r.p_right), 4)
    (0.9203, 0.0795, 0.0002)
    >>> round(float(r.p_a_better), 4)  # accuracies: higher is better
    0.9203
    """
    from scipy import special

    if isinstance(rope, bool) or not isinstance(rope, numbers.Real):
        raise TypeError(f"`rope` must be a number, got {type(rope).__name__}.")
    if not np.isfinite(rope) or rope < 0:
        raise ValueError(f"`rope` must be a finite number >= 0, got {rope!r}.")
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real):
        raise TypeError(f"`rho` must be a number, got {type(rho).__name__}.")
    if not 0 <= rho < 1:
        raise ValueError(f"`rho` must lie in [0, 1), got {rho!r}.")
    _check_direction(higher_is_better)
    av = np.asarray(v.as_float_array(a, "a", min_ndim=1))
    bv = np.asarray(v.as_float_array(b, "b", min_ndim=1))
    v.check_same_shape(av, bv, "a", "b")
    axis = v.normalize_axis(axis, av.ndim)
    d = np.moveaxis(av - bv, axis, -1)
    n = d.shape[-1]
    if n < 2:
        raise ValueError(f"`a` and `b` need at least 2 folds along `axis`, got {n}.")
    mean = d.mean(axis=-1)
    var = d.var(axis=-1, ddof=1)
    scale = np.sqrt((1 / n + rho / (1 - rho)) * var)
    df = n - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(scale > 0, special.stdtr(df, (-rope - mean) / scale), 0.0)
        hi = np.where(scale > 0, special.stdtr(df, (rope - mean) / scale), 0.0)
    # A point mass at the mean where the differences do not vary.
    point = scale == 0
    lo = np.where(point, (mean < -rope).astype(float), lo)
    hi = np.where(point, (mean <= rope).astype(float), hi)
    # baycomp's orientation: left is a - b above the rope (its y - x below -rope)
    return BayesianResult(
        p_left=1 - hi,
        p_rope=hi - lo,
        p_right=lo,
        mean=mean,
        scale=scale,
        df=df,
        rope=float(rope),
        rho=float(rho),
        higher_is_better=bool(higher_is_better),
    )


def _check_direction(higher_is_better):
    if not isinstance(higher_is_better, bool | np.bool_):
        raise TypeError(
            f"`higher_is_better` must be a bool, got {type(higher_is_better).__name__}."
        )


PRIOR_PLACES = ("rope", "left", "right")
# The prior's pseudo-observation: at 0 (baycomp's only choice), or at -inf / +inf.
_PSEUDO_OBSERVATION = {"rope": 0.0, "left": -np.inf, "right": np.inf}
# Samples per block on the host: about 2^15 (data sets + 1) x samples values per array (256 KiB
# of float64, a few such arrays at once), at most 1024 samples and at least 1. Measured at 20
# data sets (2 cores, loaded; fresh arrays cost page faults): 50,000 samples in blocks of 1024
# took 0.13 s, of 512 0.20 s, of 2048 or 4096 0.18 s.
_MAX_BLOCK = 1024
_BLOCK_ELEMENTS = 2**15


@result
class SignRankResult(_Orientation):
    """Posterior of the Bayesian signed-rank test of ``a`` against ``b`` over data sets.

    Oriented as baycomp's ``two_on_multiple(a, b)`` for the same argument order: "left"
    is the first learner ``a`` higher.

    Attributes
    ----------
    p_left, p_rope, p_right : float
        Fractions of posterior samples in which the probability that the difference
        ``a - b`` on a new data set lies above ``rope`` (``a`` higher), within
        ``[-rope, rope]``, or below ``-rope`` (``b`` higher) is the largest of the three
        (a sample whose largest is shared counts equally for each); they sum to 1.
    samples : (n_samples, 3) array or None
        The posterior samples ``(left, rope, right)``, each row a probability vector,
        when asked for with ``return_samples=True``.
    rope, prior_strength : float
    prior_place : str
        ``"rope"``, ``"left"`` or ``"right"``.
    n_samples, n_datasets : int
    seed : int, tuple or None
        Reproduces the samples: ``key=seed``.
    higher_is_better : bool
        Whether a higher score is better; sets :attr:`p_a_better` and :attr:`p_b_better`.
    """

    p_left: jax.Array
    p_rope: jax.Array
    p_right: jax.Array
    samples: jax.Array
    rope: float = static_field()
    prior_strength: float = static_field()
    prior_place: str = static_field()
    n_samples: int = static_field()
    n_datasets: int = static_field()
    seed: object = static_field(default=None)
    higher_is_better: bool = static_field(default=True)


def _real_option(value, name, *, minimum=0.0):
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a number, got {type(value).__name__}.")
    if not np.isfinite(value) or value < minimum:
        raise ValueError(f"`{name}` must be a finite number >= {minimum:g}, got {value!r}.")
    return float(value)


# Data sets times posterior samples signrank draws at most: each costs about 0.15 us on a CPU
# core (numpy on the host, any number of data sets), so the limit is about a minute.
MAX_SIGNRANK_WORK = 500_000_000
MAX_SIGNRANK_SETS = 2**19 - 1  # with the pseudo-observation, 2 x 2^19 x 4096 = 2^32 counters


def _signrank_iv(a, b, rope, n_samples, prior_strength, prior_place, batch_size):
    """Validate :func:`signrank`'s arguments; return ``d = b - a`` (numpy; baycomp's
    ``y - x`` for ``x, y = a, b``, so "left", below ``-rope``, is ``a`` higher) and options."""
    rope = _real_option(rope, "rope")
    n_samples = v.as_int_scalar(n_samples, "n_samples", minimum=1)
    if n_samples > 2**31:
        raise ValueError(f"`n_samples` must be at most 2**31, got {n_samples}.")
    prior_strength = _real_option(prior_strength, "prior_strength")
    if not isinstance(prior_place, str):
        raise TypeError(f"`prior_place` must be a str, got {type(prior_place).__name__}.")
    v.check_choice(prior_place, "prior_place", PRIOR_PLACES)
    if batch_size is not None:
        batch_size = v.as_int_scalar(batch_size, "batch_size", minimum=1)
    av = np.asarray(v.as_float_array(a, "a", ndim=1))
    bv = np.asarray(v.as_float_array(b, "b", ndim=1))
    v.check_same_shape(av, bv, "a", "b")
    if av.shape[0] < 2:
        raise ValueError(f"`a` and `b` need at least 2 data sets, got {av.shape[0]}.")
    n = av.shape[0]
    if n > MAX_SIGNRANK_SETS:
        # the random stream's counters: 2 words per data set and 4096 samples per key block
        raise ValueError(
            f"`a` and `b` may hold at most {MAX_SIGNRANK_SETS:,} data sets, got {n:,}."
        )
    if n * n_samples > MAX_SIGNRANK_WORK:
        # refused at once: 100,000 data sets at the default 50,000 samples ran for 10 minutes
        # and more without a word
        raise ValueError(
            f"`n_samples`={n_samples:,} posterior samples over {n:,} data sets is more work "
            f"than signrank does ({n:,} x {n_samples:,} > {MAX_SIGNRANK_WORK:.0e}, about a "
            f"minute on a CPU core); use n_samples <= {max(1, MAX_SIGNRANK_WORK // n):,} "
            "(the Monte Carlo error of a probability is at most 0.5 / sqrt(n_samples))."
        )
    return bv - av, rope, n_samples, prior_strength, prior_place, batch_size


def _signrank_samples(
    key, d, rope, n_samples, prior_strength, prior_place, batch_size, return_samples, progress
):
    """Posterior samples in blocks: ``(shares, samples)``, the ``(3,)`` sums of the winners'
    shares (sixths) and the ``(n_samples, 3)`` samples or None (numpy).

    On the host (:mod:`jaxtests._signrank_draws`), nothing compiled, in the engine's loop
    (:func:`jaxtests._engine.run_chunks`): chunks of blocks sized by time, progress and
    Ctrl-C between chunks. Memory is one block's (and the samples when asked for). In a
    distributed run each process draws a contiguous share of the blocks
    (:func:`jaxtests._distributed.share`); the integer shares are summed and the samples
    gathered in order, so every process returns the one-process result bit for bit, and
    ``WORK["samples"]`` counts a process's own.
    """
    z = np.concatenate([[_PSEUDO_OBSERVATION[prior_place]], d])
    m = z.shape[0]
    pairs = kstatistics.signrank_pairs(z, rope, xp=np)  # the data's part, once
    if batch_size is None:
        block = min(_MAX_BLOCK, max(1, _BLOCK_ELEMENTS // m))
    else:  # a caller's batch_size beyond the samples would only allocate
        block = min(batch_size, n_samples)
    n_steps = -(-n_samples // block)
    # Every process must run the same call: shares of different data would add up silently.
    _distributed.same_call(
        z, (rope, n_samples, prior_strength, block, return_samples), jax.random.key_data(key)
    )
    lo, hi = _distributed.share(n_steps)  # this process's blocks (all of them with one)
    offset = lo * block  # this process's first sample
    n_local = max(0, min(n_samples, hi * block) - offset)
    samples = np.empty((n_local, 3)) if return_samples else None
    shares = np.zeros(3, np.int64)

    def run(first, n_run):
        nonlocal shares
        for step in range(lo + first, min(lo + first + n_run, hi)):
            start = step * block
            count = min(block, n_samples - start)
            w = draws.dirichlet_weights(key, m, prior_strength, start, count)
            s = draws.posterior(z, w, rope, pairs)
            shares = shares + np.sum(draws.winner_shares(s), axis=0)
            if return_samples:
                samples[start - offset : start - offset + count] = s
            del w, s  # one block's arrays at a time: the next block's are not allocated beside

    what = f"This signed-rank posterior ({n_samples:,} samples)"
    # Every process runs as many chunks (their sizes are agreed collectively), its blocks past
    # its share skipped; progress counts the whole run.
    span = -(-n_steps // jax.process_count())
    _engine.run_chunks(run, span, n_samples, block * jax.process_count(), progress, what)
    _distributed.WORK["samples"] += n_local
    if _distributed.active():  # the processes' shares summed, their samples in order
        shares = np.sum(_distributed.gather_rows(shares[None, :]), axis=0)
        if return_samples:
            samples = _distributed.gather_rows(samples)
    return shares, samples


@x64
def signrank(
    a,
    b,
    *,
    rope,
    n_samples=50_000,
    prior_strength=0.5,
    prior_place="rope",
    key=None,
    batch_size=None,
    return_samples=False,
    higher_is_better=True,
    progress=None,
):
    """Bayesian signed-rank test of two learners over data sets.

    Parameters
    ----------
    a, b : array_like, shape (n,)
        Scores of the two learners on the same ``n >= 2`` data sets (e.g. the mean
        cross-validated accuracy on each), higher or lower better alike.
    rope : float
        Half-width of the region of practical equivalence ``[-rope, rope]`` of the
        difference ``a - b`` (``rope >= 0``, in the scores' units, e.g. 0.01 accuracy).
    n_samples : int
        Number of posterior samples; the data sets times ``n_samples`` may be at most
        ``MAX_SIGNRANK_WORK`` (5e8, about a minute; refused at once above it).
    prior_strength : float
        Weight ``s >= 0`` of the Dirichlet process prior's pseudo-observation (baycomp's
        ``prior``; 0 drops it).
    prior_place : {"rope", "left", "right"}
        Where the pseudo-observation sits: at 0 (baycomp, the paper's default), or on
        the side of ``p_left`` (a prior for ``a`` higher) or of ``p_right`` (``b``
        higher).
    key : int, jax.random key or None
        Seed of the Dirichlet draws; None draws a fresh seed (recorded in the result).
    batch_size : int, optional
        Posterior samples per block (memory); the samples do not depend on it.
    return_samples : bool
        Keep the ``(n_samples, 3)`` posterior samples in the result (``samples``), e.g.
        for :func:`jaxtests.plot.simplex`; 24 bytes per sample. Without them memory does
        not grow with ``n_samples``.
    higher_is_better : bool, default True
        Whether a higher score is better (False for errors and losses): names the
        probabilities ``p_a_better`` and ``p_b_better`` of the result; ``p_left`` and
        ``p_right`` do not depend on it.
    progress : None, bool, tqdm or callable, optional
        Progress of the samples, as the permutation tests': None shows a bar in an
        interactive session once the call has run a few seconds, False nothing, True a
        tqdm bar, a tqdm instance is updated, a callable is called ``progress(done,
        total)`` in samples. Ctrl-C stops the call within about a second.

    Returns
    -------
    SignRankResult
        ``p_left`` (``a`` higher), ``p_rope``, ``p_right`` (``b`` higher) as baycomp's,
        ``p_a_better``, ``p_b_better``, and the samples when asked for.

    Notes
    -----
    With ``d = b - a`` on ``n`` data sets (baycomp's ``y - x``) and a Dirichlet process
    prior of strength ``s`` centred on a pseudo-observation ``z0`` (``prior_place``), each posterior
    sample draws weights ``w ~ Dirichlet(s, 1, ..., 1)`` of ``(z0, d_1, ..., d_n)`` and
    computes ``theta_l = sum w_i w_j [(z_i + z_j) / 2 < -rope]``, ``theta_r`` likewise
    for ``> rope`` and ``theta_e = 1 - theta_l - theta_r`` over all pairs, ``i == j``
    included (Benavoli et al. 2014, 2017); a pair exactly on ``±rope`` counts half on
    each side. ``theta`` is the probability that the difference on a new data set lies
    left of, inside or right of the rope; ``p_left``, ``p_rope``, ``p_right`` are the
    fractions of samples in which each of the three is the largest (baycomp's
    ``Posterior.probs``), a sample whose largest is shared counting ``1/2`` (or ``1/3``)
    for each: baycomp gives such a tie to the first, so for ``a == b`` and ``rope = 0``
    (every sample ``(1/2, 0, 1/2)``) it says "b better" with probability 1, either way
    round; here ``p_left = p_right = 1/2``, as in Benavoli et al.'s tutorial code
    (``BayesianSignedRank.R``). With ``rope = 0``, ``theta_e = 0`` and ``p_rope = 0``.

    Orientation: as baycomp's ``two_on_multiple(x, y)`` (``SignedRankTest``, difference
    ``y - x``) with ``a, b = x, y``: ``p_left`` is the probability that ``a`` is higher
    (better for scores such as accuracy: ``p_a_better``), ``p_right`` that ``b`` is
    (before issue 28 the two were the other way round). Swapping ``a`` and ``b`` with
    the same key swaps ``p_left`` and ``p_right`` exactly (``prior_place`` "left" and
    "right" swap too).

    Sample ``g`` reads the library's random stream (:mod:`jaxtests.kernels.random`,
    key words of ``fold_in(key, g // 4096)``), so the samples are identical for any
    ``batch_size`` and chunking. The Dirichlet weights are normalised Gamma draws:
    ``-log U`` for the data sets, Marsaglia & Tsang's (2000) sampler for the
    pseudo-observation. (Before issue 40 sample ``i`` used ``fold_in(key, i)`` and
    ``jax.random``: the same key gives other samples, and probabilities within Monte
    Carlo error of the old ones.) The samples are drawn on the host in numpy
    (:mod:`jaxtests._signrank_draws`; threefry's key words too), so no call compiles
    anything, in blocks whose winners are counted as they come: memory is one block's
    (a few MiB) for any ``n_samples`` unless ``return_samples``. Each sample sums over
    the sorted differences with suffix sums of the weights (``O(n)`` per sample once
    sorted, :func:`jaxtests.kernels.statistics.signrank_posterior_sorted`), the same
    sums as over all ``(n + 1)^2`` pairs up to rounding. (Until issue 37 a compiled
    program drew them, over the pairs up to 767 data sets: the same random words, the
    samples equal up to rounding, about 1e-15.)

    References
    ----------
    Benavoli, A., Corani, G., Mangili, F., Zaffalon, M., & Ruggeri, F. (2014). A Bayesian
    Wilcoxon signed-rank test based on the Dirichlet process. ICML.
    Benavoli, A., Corani, G., Demšar, J., & Zaffalon, M. (2017). Time for a change: a
    tutorial for comparing multiple classifiers through Bayesian analysis. JMLR 18.
    baycomp (Demšar, Benavoli, Corani), ``baycomp/multiple.py``, ``SignedRankTest``.

    Examples
    --------
    >>> a = [0.91, 0.83, 0.75, 0.88, 0.69, 0.94, 0.80, 0.86, 0.77, 0.90]
    >>> b = [0.89, 0.80, 0.76, 0.84, 0.66, 0.93, 0.78, 0.83, 0.77, 0.86]
    >>> r = signrank(a, b, rope=0.02, key=0)  # a higher: p_left, as baycomp's
    >>> round(float(r.p_left), 3), round(float(r.p_rope), 3), round(float(r.p_right), 3)
    (0.604, 0.396, 0.0)
    >>> signrank(a, b, rope=0.02, key=0, n_samples=1000, return_samples=True).samples.shape
    (1000, 3)
    """
    d, rope, n_samples, prior_strength, prior_place, batch_size = _signrank_iv(
        a, b, rope, n_samples, prior_strength, prior_place, batch_size
    )
    if not isinstance(return_samples, bool | np.bool_):
        raise TypeError(f"`return_samples` must be a bool, got {type(return_samples).__name__}.")
    _check_direction(higher_is_better)
    progress = as_progress(progress, desc="posterior samples", unit="samples")
    typed_key, seed = resolve_key(key)
    shares, samples = _signrank_samples(
        typed_key,
        d,
        rope,
        n_samples,
        prior_strength,
        prior_place,
        batch_size,
        return_samples,
        progress,
    )
    # baycomp's Posterior.probs, the winner of each sample, with ties split evenly.
    p_left, p_rope, p_right = shares / (6 * n_samples)
    return SignRankResult(
        p_left=np.float64(p_left),
        p_rope=np.float64(p_rope),
        p_right=np.float64(p_right),
        samples=samples,
        rope=rope,
        prior_strength=prior_strength,
        prior_place=prior_place,
        n_samples=n_samples,
        n_datasets=d.shape[0],
        seed=seed,
        higher_is_better=bool(higher_is_better),
    )
