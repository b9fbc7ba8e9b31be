"""Validation and reporting helpers shared by the studies."""

import math
import numbers

import numpy as np

from jaxtests import _validation as v
from jaxtests._intervals import clopper_pearson
from jaxtests._report import jsonable, text_table


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


def _fmt_rate(rate, lo, hi):
    return f"{rate:.3f} [{lo:.3f}, {hi:.3f}]"


class StudyResult:
    """Base of the rate studies' results: rates of ``n_rejections`` in ``n_experiments``.

    A study names the field of its rates (``_rate``) and itself (``_study``, the
    ``"study"`` entry of :meth:`to_dict`), and gives the parts that differ: the table's
    ``_title(confidence_level)`` and ``_rows(rate, low, high) -> (header, rows)``, and its
    JSON entries before the rates (``_labels()``) and after their intervals (``_extra()``).
    """

    _rate = "rejection_rate"
    _study = ""

    def confidence_interval(self, confidence_level=0.95):
        """Clopper-Pearson interval ``(low, high)`` of every rate."""
        level = v.check_probability(confidence_level, "confidence_level")
        ci = clopper_pearson(self.n_rejections, self.n_experiments, confidence_level=level)
        return ci.confidence_interval

    def table(self, confidence_level=0.95):
        """Text table of the rates with their Clopper-Pearson intervals, under a title."""
        lo, hi = (np.asarray(a) for a in self.confidence_interval(confidence_level))
        header, rows = self._rows(np.asarray(getattr(self, self._rate)), lo, hi)
        return self._title(confidence_level) + "\n" + text_table(rows, header)

    def to_dict(self, confidence_level=0.95):
        """JSON-able dict of the configuration, rates, counts and intervals (no p-values)."""
        lo, hi = self.confidence_interval(confidence_level)
        return jsonable(
            {
                "study": self._study,
                **self._labels(),
                self._rate: getattr(self, self._rate),
                "n_rejections": self.n_rejections,
                "confidence_level": confidence_level,
                "ci_low": lo,
                "ci_high": hi,
                **self._extra(),
            }
        )

    def _extra(self):
        return {}


def _setting(res):
    """The configuration in a power or calibration table's title."""
    return (
        f"at alpha={res.alpha:g} ({res.alternative}), generator {res.generator}, m={res.m}, "
        f"{res.n_experiments} experiments"
    )


def _config_json(res):
    """The labels and configuration entries of ``to_dict`` shared by power and calibration."""
    return {
        "generator": res.generator,
        "tests": list(res.tests),
        "n_experiments": res.n_experiments,
        "m": res.m,
        "alpha": res.alpha,
        "alternative": res.alternative,
        "n_resamples": res.n_resamples,
        "signflip_methods": list(res.signflip_methods),
        "seed": res.seed,
    }
