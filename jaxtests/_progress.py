"""Progress reporting shared by the long-running functions: one contract, four spellings.

``progress`` may be None (the default: a bar only in an interactive session, once the
call has run for ``AUTO_DELAY`` seconds), False (silent), True (a :mod:`tqdm.auto` bar,
the notebook widget where one applies), a tqdm bar the caller owns (updated with the
work done, never closed here) or a callable ``progress(done, total)``.
:func:`as_progress` turns each into None or a :class:`Reporter`, which is a
``progress(done, total)`` callable with ``close()``.
"""

import contextlib
import contextvars
import os
import sys
import warnings

__all__ = [
    "AUTO_DELAY",
    "LongRunWarning",
    "Reporter",
    "as_progress",
    "no_auto_bar",
    "stderr_is_terminal",
]

# tqdm's ``delay``: a call shorter than this shows nothing, a longer one its bar (issue 28.9:
# a 14-s call showed no progress).
AUTO_DELAY = 3.0
_AUTO = contextvars.ContextVar("jaxtests_auto_bar", default=True)


@contextlib.contextmanager
def no_auto_bar():
    """No automatic bar inside (the command line draws its own, or none with ``--quiet``)."""
    token = _AUTO.set(False)
    try:
        yield
    finally:
        _AUTO.reset(token)


def stderr_is_terminal():
    """Whether stderr is a terminal (tqdm's convention for ``disable=None``): a bar redrawn
    with carriage returns is drawn there only, never into a file or a pipe (``2> log``)."""
    try:
        return bool(sys.stderr is not None and sys.stderr.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stderr
        return False


def interactive():
    """Whether ``progress=None`` shows a bar: stderr is a terminal, outside a pytest test
    and outside :func:`no_auto_bar`."""
    if not _AUTO.get() or "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return stderr_is_terminal()


class LongRunWarning(UserWarning):
    """A computation is estimated to run for minutes or more (Ctrl-C stops it)."""


class Reporter:
    """``progress(done, total)`` for the engines, whatever the user passed.

    ``done`` is the cumulative amount of work (draws, permutations), so
    reports may be repeated or skipped; a bar this object created itself is
    closed when ``done`` reaches ``total`` or by :meth:`close`.
    """

    def __init__(self, fn=None, bar=None, *, desc="resamples", unit="draws", delay=0.0):
        self._fn, self._bar, self._owned = fn, bar, False
        self._create = fn is None and bar is None
        self._desc, self._unit, self._delay = desc, unit, delay
        self._done = 0  # work reported so far by this run (a caller's bar gains it)

    def __call__(self, done, total):
        done, total = int(done), int(total)
        if self._fn is not None:
            self._fn(done, total)
            return
        if self._bar is None and self._create:
            from tqdm.auto import tqdm

            self._bar = tqdm(
                total=total, desc=self._desc, unit=self._unit, unit_scale=True, delay=self._delay
            )
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

    None gives a bar that shows once the call has run ``AUTO_DELAY`` seconds, in an
    interactive session only (:func:`interactive`), else None; False gives None; True a
    new :mod:`tqdm.auto` bar (created at the first report, with the total); a ``tqdm``
    instance is updated by the work done (its total is set when it has none); a callable
    is called as ``progress(done, total)``. Anything else (``1``, a string) is a TypeError.
    """
    if progress is None:
        return Reporter(desc=desc, unit=unit, delay=AUTO_DELAY) if interactive() else None
    if progress is False:
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
