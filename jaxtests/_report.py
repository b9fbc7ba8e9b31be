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

from jaxtests import _progress

__all__ = [
    "Numbers",
    "Progress",
    "column_format",
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
    Every refusal is a ``ValueError`` naming ``--out``, the path at fault and what to do.
    """
    try:
        os.makedirs(out, exist_ok=True)
    except FileExistsError:
        raise ValueError(
            f"--out {out}: a file of that name exists, and --out names a folder (the output "
            "files are written in it); give a folder's path, e.g. a new name."
        ) from None
    except NotADirectoryError:
        parent = os.path.dirname(os.path.abspath(out))
        while parent and not os.path.isfile(parent) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
        raise ValueError(
            f"--out {out}: cannot create the folder: {parent} is a file, not a folder; give "
            "a path under a folder."
        ) from None
    except OSError as exc:
        raise ValueError(
            f"--out {out}: cannot create the folder ({exc.strerror}); give a folder you "
            "can write to."
        ) from None
    existing = []
    for name in names:
        path = os.path.join(out, name)
        if os.path.islink(path):
            raise ValueError(
                f"--out {out}: {path} is a symbolic link; refusing to write through it "
                "(remove the link, or choose another --out folder)."
            )
        if os.path.lexists(path):
            if not os.path.isfile(path):
                raise ValueError(
                    f"--out {out}: {path} exists and is not a regular file (a folder?), so "
                    f"{name} cannot be written there; move it away, or choose another --out "
                    "folder."
                )
            existing.append(name)
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(
            f"--out {out}: the folder is not writable by this user; give a folder you can write to."
        )
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


# A column's numbers are fixed-point while they lie in [1e-4, 1e6), else scientific.
_FIXED_RANGE = (1e-4, 1e6)
_DIGITS = 4  # significant digits of the column's smallest nonzero magnitude
_MAX_EXTRA = 3  # fixed point: at most this many digits past _DIGITS on the largest value


def _is_number(v):
    return isinstance(v, float | int | np.floating | np.integer) and not isinstance(
        v, bool | np.bool_
    )


def column_format(values):
    """One format spec for a column of numbers, so that it has one number of decimals.

    ``_DIGITS`` significant digits of its smallest nonzero magnitude, in fixed point with
    the same decimals on every row (at most ``_MAX_EXTRA`` more digits than that on its
    largest: ``0.0824`` beside ``0.09292`` prints ``0.08240``, ``0.09292``); scientific
    notation with ``_DIGITS`` significant digits for the whole column when a magnitude
    lies outside ``[1e-4, 1e6)``; no decimals when every value is a whole number.
    """
    a = np.abs(np.asarray([float(v) for v in values], dtype=np.float64))
    a = a[np.isfinite(a) & (a > 0)]
    if a.size == 0:
        return ".0f"
    lo, hi = float(a.min()), float(a.max())
    if lo < _FIXED_RANGE[0] or hi >= _FIXED_RANGE[1]:
        return f".{_DIGITS - 1}e"
    if np.all(a == np.round(a)):
        return ".0f"
    need = _DIGITS - 1 - math.floor(math.log10(lo))
    most = _DIGITS - 1 - math.floor(math.log10(hi)) + _MAX_EXTRA
    return f".{max(0, min(need, most))}f"


def _number(v, fmt):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return format(v, fmt)


class Numbers(str):
    """A table cell of numbers in a text template: ``Numbers("{} [{}, {}]", (m, lo, hi))``.

    The text (a ``str``, as JSON writes it) has one format for its own numbers
    (:func:`column_format`); in :func:`text_table` and :func:`markdown_table` the numbers
    take the format of their whole column.
    """

    def __new__(cls, template, values):
        values = tuple(float(v) for v in values)
        self = super().__new__(cls, _fill(template, values, column_format(values)))
        self.template, self.values = template, values
        return self

    def format_with(self, fmt):
        return _fill(self.template, self.values, fmt)


def _fill(template, values, fmt):
    return template.format(*(_number(v, fmt) for v in values))


def _cell(v, fmt=None):
    if v is None:
        return "-"
    if isinstance(v, Numbers):
        return v if fmt is None else v.format_with(fmt)
    if _is_number(v) and (fmt is not None or not isinstance(v, int | np.integer)):
        return _number(v, fmt or column_format([v]))
    return str(v)


def _column_formats(cells_by_column):
    """A format per column holding a float (or a :class:`Numbers` cell); None otherwise."""
    out = []
    for cells in cells_by_column:
        numbers, has_float = [], False
        for v in cells:
            if isinstance(v, Numbers):
                numbers += v.values
                has_float = True
            elif _is_number(v):
                numbers.append(v)
                has_float |= not isinstance(v, int | np.integer)
        out.append(column_format(numbers) if has_float else None)
    return out


def estimate_text(value, interval=None, *, label=""):
    """An estimate, with its confidence interval when given, as one table cell:
    ``0.04600 [0.01108, 0.08092]`` (a :class:`Numbers` cell: one format for its numbers,
    and in a table the format of its column).

    ``interval`` is a ``(low, high)`` pair (a one-sided one has ``inf``); ``label`` goes
    before the numbers (``"d_z "``).
    """
    if interval is None:
        return Numbers(label + "{}", (value,))
    low, high = interval
    return Numbers(label + "{} [{}, {}]", (value, low, high))


def _table_cells(rows, columns):
    raw = [[r.get(c) for c in columns] if isinstance(r, dict) else list(r) for r in rows]
    formats = _column_formats([[row[i] for row in raw] for i in range(len(columns))])
    return [[_cell(x, f) for x, f in zip(row, formats)] for row in raw]


def text_table(rows, columns):
    """Fixed-width text table of ``rows`` over ``columns``, one number format per column
    (:func:`column_format`).

    A row is a dict keyed by column or a sequence of cells in column order (so that
    columns may share a label).
    """
    cells = _table_cells(rows, columns)
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


def markdown_table(rows, columns):
    """GitHub-flavoured markdown table of ``rows`` over ``columns``, one number format per
    column."""
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(row) + " |" for row in _table_cells(rows, columns)]
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
        row = {statistic: t, "p-value": p, "99% interval": Numbers("[{}, {}]", (lo, hi))}
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
    makes it a no-op, and so is a stderr that is not a terminal (a file or a pipe, as
    ``jaxtests demo 2> log``: the library's rule, :func:`jaxtests._progress.interactive`),
    where a bar redrawn with carriage returns would be dozens of lines. ``total`` is the
    count when known beforehand; until the first report without one, the bar says that it
    is preparing (compiling), not "0 ?/s".
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
        self.desc, self.unit = desc, unit
        self.disable = disable or self.hidden or not _progress.stderr_is_terminal()
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
