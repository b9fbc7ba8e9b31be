"""Report helpers for the CLI: JSON-able conversion, text and markdown tables, progress."""

import dataclasses
import json
import math
import os
import sys
import tempfile
import threading
import time

import numpy as np

__all__ = [
    "Progress",
    "dumps",
    "estimate_text",
    "jsonable",
    "markdown_table",
    "prepare_out",
    "replace_file",
    "result_summary",
    "text_table",
]


def jsonable(obj):
    """Convert results, arrays and containers to JSON-able Python (NaN/inf -> None)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            out[f.name] = jsonable(getattr(obj, f.name))
        return out
    if hasattr(obj, "_asdict"):  # NamedTuple
        return {k: jsonable(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [jsonable(v) for v in obj]
    if isinstance(obj, str | bool) or obj is None:
        return obj
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        v = float(obj)
        return v if math.isfinite(v) else None
    if hasattr(obj, "__array__"):
        a = np.asarray(obj)
        if a.dtype.kind == "b":
            return a.tolist()
        if a.dtype.kind in "iu":
            return a.tolist()
        if a.dtype.kind == "f":
            return jsonable(a.tolist()) if a.ndim else jsonable(float(a))
        return jsonable(a.tolist())
    return str(obj)


def dumps(obj):
    """Strict JSON text of ``obj`` (NaN/inf become null; never the invalid bare ``NaN``)."""
    return json.dumps(jsonable(obj), indent=2, allow_nan=False)


def prepare_out(out, names):
    """Create folder ``out`` for files ``names``; refuse links, announce what is replaced.

    A name in ``out`` that is a symbolic link (or not a regular file) is refused, so no
    write can land outside ``out``; existing files are listed in one line on stderr.
    """
    os.makedirs(out, exist_ok=True)
    existing = []
    for name in names:
        path = os.path.join(out, name)
        if os.path.islink(path):
            raise ValueError(
                f"{path} is a symbolic link; refusing to write through it (remove it or "
                "choose another --out)."
            )
        if os.path.lexists(path):
            if not os.path.isfile(path):
                raise ValueError(f"{path} exists and is not a regular file; choose another --out.")
            existing.append(name)
    if existing:
        print(
            f"jaxtests: overwriting {len(existing)} file(s) in {out}: {', '.join(existing)}",
            file=sys.stderr,
        )


def replace_file(path, write):
    """Write ``path`` by ``write(tmp)`` into a new file beside it, then ``os.replace``.

    The temporary file is created exclusively (no link followed) and renamed over
    ``path``, which replaces a link instead of writing through it; an interrupted run
    leaves the old file, never half a new one.
    """
    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(
        dir=folder or ".", prefix=f".{name}.", suffix=os.path.splitext(name)[1]
    )
    os.close(fd)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 -> the usual mode of a new file
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _cell(v):
    if v is None:
        return "-"
    if isinstance(v, float | np.floating):
        v = float(v)
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}"
    return str(v)


def estimate_text(value, interval=None):
    """An estimate, with its confidence interval when given, as one table cell:
    ``0.046 [0.01108, 0.08092]``.

    ``interval`` is a ``(low, high)`` pair (a one-sided one has ``inf``); numbers as
    :func:`text_table` prints them.
    """
    if interval is None:
        return _cell(float(value))
    low, high = interval
    return f"{_cell(float(value))} [{_cell(float(low))}, {_cell(float(high))}]"


def text_table(rows, columns):
    """Fixed-width text table of ``rows`` over ``columns``.

    A row is a dict keyed by column or a sequence of cells in column order (so that
    columns may share a label).
    """
    cells = [
        [_cell(r.get(c)) for c in columns] if isinstance(r, dict) else [_cell(x) for x in r]
        for r in rows
    ]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


def markdown_table(rows, columns):
    """GitHub-flavoured markdown table of ``rows`` over ``columns``."""
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def result_summary(res, *, statistic, resamples, method=None, label=None, labels=None):
    """Short text of a resampling result: a table of statistic, p-value and its 99%
    interval (one row per hypothesis), then method, resamples and seed lines.

    ``statistic`` names the statistic column, ``resamples`` what was drawn (``"sign
    patterns"``); ``method`` defaults to ``res.method``; ``labels`` (with column name
    ``label``) name the rows of a batched result.
    """
    stat = np.ravel(np.asarray(res.statistic, dtype=np.float64))
    pval = np.ravel(np.asarray(res.pvalue, dtype=np.float64))
    iv = np.asarray(res.pvalue_interval, dtype=np.float64).reshape(-1, 2)
    rows, columns = [], [statistic, "p-value", "99% interval"]
    if labels is not None:
        columns.insert(0, label)
    for i, (t, p, (lo, hi)) in enumerate(zip(stat, pval, iv)):
        row = {statistic: t, "p-value": p, "99% interval": f"[{_cell(lo)}, {_cell(hi)}]"}
        if labels is not None:
            row[label] = labels[i]
        rows.append(row)
    method = method or res.method
    alternative = getattr(res, "alternative", None)
    n = int(getattr(res, "n_resamples", None) or getattr(res, "n_permutations", 0))
    seed = getattr(res, "seed", None)
    if seed is None:
        seed = "none (no random draws)"
    elif isinstance(seed, int):
        seed = f"{seed} (repeat with --seed {seed})"
    lines = [
        text_table(rows, columns),
        f"method     {method}, {alternative}" if alternative else f"method     {method}",
        f"resamples  {n} {resamples}" if n else "resamples  none (closed form)",
        f"seed       {seed}",
    ]
    return "\n".join(lines)


class Progress:
    """A ``progress(done, total)`` callback drawing a tqdm bar on stderr.

    The bar appears ``delay`` seconds after the ``with`` block starts, whether or not
    the engine has reported yet (a first chunk can take long: compilation, large m),
    and is redrawn every ``interval`` seconds from a background thread, so the elapsed
    time runs and the ETA (from the draws done so far) stays current. ``disable=True``
    makes it a no-op. ``total`` is the count when known beforehand; until the first
    report without one, the bar says that it is preparing (compiling), not "0 ?/s".
    """

    hidden = False  # set on the non-zero processes of a distributed CLI run

    def __init__(
        self,
        desc,
        unit="draws",
        *,
        disable=False,
        delay=2.0,
        interval=0.5,
        elapsed_only=False,
        total=None,
    ):
        self.desc, self.unit, self.disable = desc, unit, disable or self.hidden
        # work with no counts to report (a compiled fit) shows only the running time
        self.bar_format = "{desc}: {elapsed} elapsed" if elapsed_only else None
        self.delay, self.interval = delay, interval
        self._bar = None
        self._done, self._total = 0, total
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._t0 = time.perf_counter()

    def _format(self):
        """The bar's format: the caller's, or a waiting line before anything is known."""
        if self.bar_format is None and self._total is None and self._done == 0:
            return "{desc}: preparing (compiling), {elapsed} elapsed"
        return self.bar_format

    def _show(self):
        """Create or redraw the bar; call with the lock held."""
        if self._bar is not None and self._bar.bar_format != self._format():
            self._bar.bar_format = self._format()
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self._total,
                desc=self.desc,
                unit=self.unit,
                unit_scale=True,
                file=sys.stderr,
                leave=False,
                smoothing=0,  # ETA from the average rate since the start
                bar_format=self._format(),
                delay=1e-9,  # no draw in __init__: the first one comes after start_t is set
            )
            self._bar.start_t = self._bar.last_print_t = self._bar._time() - (
                time.perf_counter() - self._t0
            )
        if self._total is not None and self._bar.total != self._total:
            self._bar.total = self._total
        if self._done != self._bar.n:
            self._bar.n = self._done
        self._bar.refresh()

    def _tick(self):
        if self._stop.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                self._show()
            if self._stop.wait(self.interval):
                return

    def __call__(self, done, total):
        if self.disable:
            return
        with self._lock:
            self._done, self._total = int(done), int(total)
            if self._bar is not None or time.perf_counter() - self._t0 >= self.delay:
                self._show()

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def __enter__(self):
        self._t0 = time.perf_counter()
        if not self.disable and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self.close()
        return False
