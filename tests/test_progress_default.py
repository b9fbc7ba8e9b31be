"""Issue 28.9: the Python API showed no progress for a 14-s call. ``progress=None`` (the
default) now draws a bar past a few seconds in an interactive session only: stderr a
terminal (tqdm's ``disable=None`` convention), never under pytest or the command line."""

import io
import sys
import time

from jaxtests import _progress
from jaxtests._progress import Reporter, as_progress, no_auto_bar


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _terminal(monkeypatch):
    """An interactive session: stderr a terminal, no test running (in the test's body:
    pytest sets both again at the start of each call)."""
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    return err


def test_default_bar_in_an_interactive_session_only(monkeypatch):
    _terminal(monkeypatch)
    rep = as_progress(None)
    assert isinstance(rep, Reporter) and rep._delay == _progress.AUTO_DELAY == 3.0
    assert as_progress(False) is None  # an explicit choice wins
    assert isinstance(as_progress(True), Reporter)
    with no_auto_bar():  # the command line draws its own bar, or none with --quiet
        assert as_progress(None) is None
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "t.py::t (call)")
    assert as_progress(None) is None
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # not a terminal: a log, a pipe
    assert as_progress(None) is None


def test_default_bar_shows_only_past_its_delay(monkeypatch):
    terminal = _terminal(monkeypatch)
    rep = as_progress(None)
    rep(0, 100)
    rep(100, 100)  # a quick call: nothing drawn
    assert terminal.getvalue() == ""
    monkeypatch.setattr(_progress, "AUTO_DELAY", 0.05)
    rep = as_progress(None)
    rep(0, 100)
    time.sleep(0.2)
    rep(50, 100)
    rep(100, 100)
    assert "100/100" in terminal.getvalue()


def test_suite_runs_silent():
    assert as_progress(None) is None  # under pytest, whatever stderr is
