"""Progress reporting shared by the long-running functions: one contract, three spellings.

``progress`` may be None or False (silent), True (a :mod:`tqdm.auto` bar, the
notebook widget where one applies), a tqdm bar the caller owns (updated with
the work done, never closed here) or a callable ``progress(done, total)``.
:func:`as_progress` turns each into None or a :class:`Reporter`, which is a
``progress(done, total)`` callable with ``close()``.
"""

import os
import sys
import warnings

__all__ = ["LongRunWarning", "Reporter", "as_progress"]


class LongRunWarning(UserWarning):
    """A computation is estimated to run for minutes or more (Ctrl-C stops it)."""


class Reporter:
    """``progress(done, total)`` for the engines, whatever the user passed.

    ``done`` is the cumulative amount of work (draws, permutations), so
    reports may be repeated or skipped; a bar this object created itself is
    closed when ``done`` reaches ``total`` or by :meth:`close`.
    """

    def __init__(self, fn=None, bar=None, *, desc="resamples", unit="draws"):
        self._fn, self._bar, self._owned = fn, bar, False
        self._create = fn is None and bar is None
        self._desc, self._unit = desc, unit
        self._done = 0  # work reported so far by this run (a caller's bar gains it)

    def __call__(self, done, total):
        done, total = int(done), int(total)
        if self._fn is not None:
            self._fn(done, total)
            return
        if self._bar is None and self._create:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=self._desc, unit=self._unit, unit_scale=True)
            self._owned, self._done = True, 0
        bar = self._bar
        if bar is None:
            return
        if bar.total is None:
            bar.total = total
            bar.refresh()
        if done > self._done:
            bar.update(done - self._done)
            self._done = done
        if self._owned and done >= total:
            self.close()

    def close(self):
        """Close a bar created here (a caller's bar stays open); idempotent."""
        if self._owned and self._bar is not None:
            self._bar.close()
        if self._owned:
            self._bar, self._create = None, False


def _is_tqdm(obj):
    try:
        from tqdm.std import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return False
    return isinstance(obj, tqdm)


def as_progress(progress, *, name="progress", desc="resamples", unit="draws"):
    """Validate ``progress`` and return None or a :class:`Reporter`.

    None and False give None; True a new :mod:`tqdm.auto` bar (created at the
    first report, with the total); a ``tqdm`` instance is updated by the work
    done (its total is set when it has none); a callable is called as
    ``progress(done, total)``. Anything else (``1``, a string) is a TypeError.
    """
    if progress is None or progress is False:
        return None
    if isinstance(progress, Reporter):
        return progress
    if progress is True:
        return Reporter(desc=desc, unit=unit)
    if _is_tqdm(progress):
        return Reporter(bar=progress)
    if callable(progress):
        return Reporter(fn=progress)
    raise TypeError(
        f"`{name}` must be a callable progress(done, total), True (a tqdm bar), "
        f"a tqdm instance or None, got {type(progress).__name__} {progress!r}."
    )


def _user_stacklevel():
    """``stacklevel`` of the first frame outside jaxtests (the user's call)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(2), 1  # the caller of warn_long_run is level 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def warn_long_run(seconds, what):
    """Warn, at the user's call, that ``what`` is estimated to take ``seconds``."""
    if seconds >= 86400:
        est = f"{seconds / 86400:.1f} days"
    elif seconds >= 3600:
        est = f"{seconds / 3600:.1f} hours"
    else:
        est = f"{seconds / 60:.0f} minutes"
    warnings.warn(
        f"{what} is estimated to take about {est} on this machine; Ctrl-C stops it "
        "within a second or so.",
        LongRunWarning,
        stacklevel=_user_stacklevel() + 1,
    )
