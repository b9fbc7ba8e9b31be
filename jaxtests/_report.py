"""Report helpers for the CLI: JSON-able conversion, text and markdown tables, progress."""

import dataclasses
import math
import sys

import numpy as np

__all__ = ["Progress", "jsonable", "markdown_table", "text_table"]


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


def _cell(v):
    if v is None:
        return "-"
    if isinstance(v, float | np.floating):
        v = float(v)
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}"
    return str(v)


def text_table(rows, columns):
    """Fixed-width text table of ``rows`` (dicts) over ``columns``."""
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
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


class Progress:
    """A ``progress(done, total)`` callback drawing a tqdm bar on stderr.

    The bar appears only for runs longer than ``delay`` seconds and shows the
    count done, the rate and the ETA. ``disable=True`` makes it a no-op.
    """

    def __init__(self, desc, unit="draws", *, disable=False, delay=2.0):
        self.desc, self.unit, self.disable, self.delay = desc, unit, disable, delay
        self._bar = None

    def __call__(self, done, total):
        if self.disable:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=int(total),
                desc=self.desc,
                unit=self.unit,
                unit_scale=True,
                delay=self.delay,
                file=sys.stderr,
                leave=False,
            )
        self._bar.update(int(done) - self._bar.n)  # update() honours the display delay

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
