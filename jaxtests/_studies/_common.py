"""Validation and reporting helpers shared by the studies."""

import math
import numbers

import numpy as np

from jaxtests import _validation as v
from jaxtests._intervals import clopper_pearson


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


def _rate_interval(res, confidence_level):
    """Clopper-Pearson interval of every rejection rate of a study result."""
    level = v.check_probability(confidence_level, "confidence_level")
    ci = clopper_pearson(res.n_rejections, res.n_experiments, confidence_level=level)
    return ci.confidence_interval


def _fmt_rate(rate, lo, hi):
    return f"{rate:.3f} [{lo:.3f}, {hi:.3f}]"


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
