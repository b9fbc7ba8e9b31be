"""One reader for the text files users hand us: CSV (optionally gzipped) and numbers in it.

Shared by :func:`jaxtests.datasets.load_csv` and the CLI's tidy reader, so both accept
the same files: UTF-8 with or without a byte-order mark (Excel's "CSV UTF-8"), ``.gz``
compression, trailing blank lines. Everything else that spreadsheets and typos produce is
refused with the file, line and column: other encodings, blank lines between data rows,
duplicate or empty column names, and cells that are not plain decimal numbers ("1_000",
"0x10", "1,5").
"""

import csv
import gzip
import math
import os
import re

__all__ = ["TooLarge", "check_header", "open_text", "parse_number", "read_csv_rows"]

# Bounds on what a file may hold (decompressed): a 2 MB gzip expanding to one 2 GiB line
# raised a MemoryError. A results table's line is a few kB; 1 GiB of text is tens of
# millions of rows, several GB as Python rows.
MAX_LINE = 1 << 20  # characters
MAX_TEXT = 1 << 30  # characters

# A plain decimal number as spreadsheets write it. Python's float() also takes "1_000",
# "infinity" and surrounding spaces; a results file holding those is a typo, not data.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_MISSING = ("", "na", "nan", "null", "none")
_NONFINITE = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")


class TooLarge(ValueError):
    """A file with a line longer than ``MAX_LINE`` or more than ``MAX_TEXT`` characters."""


def open_text(path):
    """Open ``path`` for reading as UTF-8 text (a BOM is dropped; ``.gz`` is decompressed).

    Reading past ``MAX_LINE`` characters in a line or ``MAX_TEXT`` in the file raises
    :class:`TooLarge` naming the file (and the line), before the memory runs out.
    """
    path = os.fspath(path)
    if path.lower().endswith(".gz"):
        return _Bounded(gzip.open(path, "rt", encoding="utf-8-sig", newline=""), path, True)
    return _Bounded(open(path, encoding="utf-8-sig", newline=""), path, False)


class _Bounded:
    """A text file read by lines (``csv``) or whole (``json``), within the bounds."""

    def __init__(self, fh, path, gz):
        self.fh, self.path, self.gz = fh, path, gz
        self.seen = self.lines = 0

    def _count(self, text):
        self.seen += len(text)
        if self.seen > MAX_TEXT:
            raise TooLarge(
                f"{self.path}: more than {MAX_TEXT:,} characters"
                f"{' once decompressed' if self.gz else ''}, more than jaxtests reads; split "
                "the file, or keep only the columns the test needs."
            )
        return text

    def readline(self, size=-1):
        line = self.fh.readline(MAX_LINE + 1)
        self.lines += 1
        if len(line) > MAX_LINE:
            raise TooLarge(
                f"{self.path}, line {self.lines}: longer than {MAX_LINE:,} characters"
                f"{' once decompressed' if self.gz else ''} (no line breaks: not a CSV "
                "table?); a row of a results table is a few kB."
            )
        return self._count(line)

    def read(self, size=-1):
        left = MAX_TEXT - self.seen + 1
        return self._count(self.fh.read(left if size is None or size < 0 else min(size, left)))

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self):
        self.fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def decode_error(path, exc):
    """A ValueError naming the file for a UnicodeDecodeError raised while reading it."""
    return ValueError(
        f"{os.fspath(path)}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
        f"{exc.start}); save it as UTF-8 (Excel: 'CSV UTF-8'), e.g. iconv -f latin1 -t utf-8."
    )


def check_header(path, header):
    """Refuse empty and duplicate column names (one of two equal names would be dropped)."""
    empty = [i + 1 for i, h in enumerate(header) if h == ""]
    if empty:
        raise ValueError(f"{path}, line 1: column {empty[0]} has no name.")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise ValueError(f"{path}, line 1: duplicate column name(s) {dup} in the header.")


def sniff_delimiter(line):
    """The separator of a header line: a comma, else a tab or a semicolon, whichever the
    line holds more of (a header with none is one column: a comma)."""
    if "," in line:
        return ","
    tabs, semis = line.count("\t"), line.count(";")
    if tabs or semis:
        return "\t" if tabs >= semis else ";"
    return ","


def read_csv_rows(path, delimiter=","):
    """Header (stripped names) and ``[(line, cells)]`` of a CSV file.

    Blank lines at the end are ignored; a blank line before a data row is an error
    (a lost record, or two tables pasted together). ``delimiter=None`` takes the
    separator from the header line (:func:`sniff_delimiter`: comma, tab or semicolon).
    """
    path = os.fspath(path)
    try:
        if delimiter is None:
            with open_text(path) as fh:
                delimiter = sniff_delimiter(fh.readline())
        with open_text(path) as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            try:
                header = [h.strip() for h in next(reader)]
            except StopIteration:
                raise ValueError(f"{path}: the file is empty (no header line).") from None
            rows, blank = [], None
            for row in reader:
                lineno = reader.line_num
                if not row or all(not c.strip() for c in row):
                    blank = blank or lineno
                    continue
                if blank is not None:
                    raise ValueError(
                        f"{path}, line {blank}: blank line between data rows; remove it."
                    )
                rows.append((lineno, row))
    except UnicodeDecodeError as exc:
        raise decode_error(path, exc) from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        if isinstance(exc, FileNotFoundError):
            raise ValueError(f"{path}: no such file.") from None
        raise ValueError(f"{path}: cannot read the file ({exc}).") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable CSV file ({exc}).") from None
    if header == [""]:
        raise ValueError(f"{path}, line 1: the header line is blank.")
    check_header(path, header)
    return header, rows


def parse_number(path, line, col, raw, *, hint=""):
    """A finite float from a CSV cell or JSON value; the error names file, line and column."""
    where = f"{path}, line {line}, column {col!r}"
    if isinstance(raw, bool):
        raise ValueError(f"{where}: non-numeric value {raw!r}.")
    if isinstance(raw, int | float):
        try:
            v = float(raw)
        except OverflowError:  # a JSON integer such as 10**400
            raise ValueError(
                f"{where}: integer of {raw.bit_length()} bits, beyond float64's range."
            ) from None
        if not math.isfinite(v):
            raise ValueError(f"{where}: non-finite value {raw!r}.")
        return v
    if raw is None or (isinstance(raw, str) and raw.strip().lower() in _MISSING):
        raise ValueError(f"{where}: empty or missing value {raw!r}{hint}.")
    if not isinstance(raw, str):
        raise ValueError(f"{where}: non-numeric value {raw!r}.")
    cell = raw.strip()
    if cell.lower() in _NONFINITE:
        raise ValueError(f"{where}: non-finite value {raw!r}.")
    if not _NUMBER.fullmatch(cell):
        raise ValueError(f"{where}: non-numeric value {raw!r}.")
    v = float(cell)
    if not math.isfinite(v):  # 1e999
        raise ValueError(f"{where}: non-finite value {raw!r}.")
    return v
