"""Bayesian comparison of two learners (Benavoli, Corani, Demšar & Zaffalon, JMLR 2017)."""

import numbers

import jax
import numpy as np

from jaxtests import _validation as v
from jaxtests._precision import x64
from jaxtests._results import result, static_field

__all__ = ["BayesianResult", "correlated_ttest"]


@result
class BayesianResult:
    """Posterior probabilities that ``a - b`` lies left of, inside or right of the rope.

    Attributes
    ----------
    p_left, p_rope, p_right : arrays of the batch shape
        ``P(mu < -rope)``, ``P(-rope <= mu <= rope)``, ``P(mu > rope)`` for the mean
        difference ``mu`` of ``a - b``; they sum to 1.
    mean, scale : arrays
        Location and scale of the Student-t posterior of ``mu``.
    df : int
        Its degrees of freedom (``n - 1``).
    rope, rho : float
    """

    p_left: jax.Array
    p_rope: jax.Array
    p_right: jax.Array
    mean: jax.Array
    scale: jax.Array
    df: int = static_field()
    rope: float = static_field()
    rho: float = static_field()


@x64
def correlated_ttest(a, b, *, rope, rho, axis=-1):
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
    mass at ``dbar``. baycomp orders the other way: for scores ``(x, y)`` its "left"
    (the first learner better) is ``p_right`` here with ``a, b = x, y``.

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
    >>> r = correlated_ttest(a, b, rope=0.01, rho=1 / 10)
    >>> round(float(r.p_left), 4), round(float(r.p_rope), 4), round(float(r.p_right), 4)
    (0.0002, 0.0795, 0.9203)
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
    return BayesianResult(
        p_left=lo,
        p_rope=hi - lo,
        p_right=1 - hi,
        mean=mean,
        scale=scale,
        df=df,
        rope=float(rope),
        rho=float(rho),
    )
