"""``jaxtests signflip``: the sign-flip permutation test on paired differences from a file."""

import sys

import numpy as np

from jaxtests import signflip_test
from jaxtests._cli._common import (
    ALTERNATIVES,
    POSITIVE_INT,
    SEED,
    BadInput,
    _quiet_call,
    _resamples_used,
)
from jaxtests._report import Progress, dumps, result_summary
from jaxtests._tidy import _records
from jaxtests.datasets import load_csv
from jaxtests.datasets._text import parse_number, read_csv_rows


def add_parser(subparsers):
    f = subparsers.add_parser("signflip", help="sign-flip permutation test on paired differences")
    f.add_argument(
        "file",
        help="CSV (or .csv.gz) with a column of paired differences, or a tidy file with "
        "an algorithm column and --pair A B",
    )
    f.add_argument("--column", help="the column (default: the only one)")
    f.add_argument(
        "--pair", nargs=2, metavar=("A", "B"), help="test A - B of --column in a tidy file"
    )
    f.add_argument("--statistic", default="mean", choices=("mean", "t"))
    f.add_argument("--alternative", default="two-sided", choices=ALTERNATIVES)
    f.add_argument(
        "--n-resamples",
        type=POSITIVE_INT,
        default=None,
        help="Monte Carlo draws (default 10^6); refused if the p-value is exact",
    )
    f.add_argument("--exact", action="store_true", help="enumerate all 2^m sign patterns")
    f.add_argument("--seed", type=SEED, default=None)
    f.add_argument("--json", action="store_true")
    f.add_argument("--quiet", action="store_true")
    f.set_defaults(func=run)


def _pair_differences(path, header, column, pair):
    """``A - B`` of ``column`` on rows paired by their fold/instance ids, from a tidy file."""
    ids = [c for c in ("repetition", "fold", "instance") if c in header]
    if not ids:
        raise BadInput(
            f"{path}: --pair needs columns that pair the rows of the two algorithms "
            f"('fold' and/or 'instance'); the columns are {header}."
        )
    extra = [h for h in header if h not in (*ids, "algorithm", column)]
    _, rows = _records(path)
    vals = {}
    for line, r in rows:
        a = str(r.get("algorithm", "")).strip()
        key = tuple(str(r.get(c, "")).strip() for c in ids)
        if (a, key) in vals:
            raise BadInput(f"{path}, line {line}: duplicate row for algorithm {a!r}, {key}.")
        vals[(a, key)] = (line, r.get(column))
    algs = list(dict.fromkeys(a for a, _ in vals))
    for a in pair:
        if a not in algs:
            raise BadInput(f"--pair: algorithm {a!r} is not in {path} ({algs}).")
    ka = [k for a, k in vals if a == pair[0]]
    kb = {k for a, k in vals if a == pair[1]}
    if set(ka) != kb:
        diff = sorted(set(ka) ^ kb)[:3]
        raise BadInput(
            f"{path}: {pair[0]!r} and {pair[1]!r} are not on the same {'/'.join(ids)} "
            f"(e.g. {diff}); paired differences need both on every row."
        )
    num = {}
    for a in pair:
        for k in ka:
            line, raw = vals[(a, k)]
            num[(a, k)] = parse_number(path, line, column, raw)
    d = np.array([num[(pair[0], k)] - num[(pair[1], k)] for k in ka])
    return d, ids, extra


def run(args):
    if args.exact and args.n_resamples is not None:
        raise BadInput("--n-resamples is not used with --exact (all 2^m patterns are enumerated).")
    path = args.file
    tidy = str(path).lower().endswith((".json", ".json.gz"))
    header, _ = _records(path) if tidy else read_csv_rows(path)
    if "algorithm" in header:
        column = (
            args.column
            or (
                [h for h in header if h not in ("algorithm", "repetition", "fold", "instance")]
                + [None]
            )[0]
        )
        if column is None or column not in header:
            raise BadInput(f"{path}: --column {column!r} not found; columns are {header}.")
        if not args.pair:
            raise BadInput(
                f"{path}: column {column!r} holds the values of each algorithm, not paired "
                "differences; give --pair A B to test A - B on each fold/instance (or a file "
                "with one column of differences)."
            )
        if args.pair[0] == args.pair[1]:
            raise BadInput(f"--pair: the two algorithms must differ, got {args.pair[0]!r} twice.")
        d, ids, _ = _pair_differences(path, header, column, args.pair)
        what = f"{args.pair[0]} - {args.pair[1]} on {column!r} per {'/'.join(ids)}"
    else:
        if args.pair:
            raise BadInput(f"--pair is not used: {path} has no 'algorithm' column.")
        if tidy:
            raise BadInput(f"{path}: a JSON file needs 'algorithm' records and --pair A B.")
        column = args.column or (header[0] if len(header) == 1 else None)
        if column is None:
            raise BadInput(f"{path}: several columns {header}; choose one with --column.")
        _, d = load_csv(path, label=column, features=[])
        if d.dtype.kind != "f":  # read as class names: the first cell that is not a number
            _, rows = read_csv_rows(path)
            i = header.index(column)
            d = np.array([parse_number(path, line, column, cells[i]) for line, cells in rows])
        what = f"column {column!r}"
    if d.size < 2:
        raise BadInput(f"{path}: {what} has {d.size} difference(s); the test needs at least 2.")
    # --exact enumerates all patterns: no n_resamples (the engine refuses one below 2^m).
    kw = {"method": "exact"} if args.exact else {"n_resamples": args.n_resamples or 1_000_000}
    with Progress("sign flips", disable=args.quiet) as bar:
        res, notes = _quiet_call(
            signflip_test,
            d,
            statistic=args.statistic,
            alternative=args.alternative,
            key=args.seed,
            progress=bar,
            **kw,
        )
    if not args.exact:
        note = _resamples_used(res, args, f"the test of the {d.size} differences in {path}")
        notes = [*notes, note] if note else notes
    if args.json:
        out = {"file": str(path), "column": column, "n": int(d.size), "result": res}
        if args.pair:
            out["pair"] = list(args.pair)
        if notes:
            out["notes"] = notes
        print(dumps(out))
        return 0
    print(f"{path}: {what}, m = {d.size} paired differences, {_mean_text(d)}")
    print(result_summary(res, statistic=f"statistic ({args.statistic})", resamples="sign patterns"))
    for n in notes:
        print(f"jaxtests: note: {n}", file=sys.stderr)
    return 0


def _mean_text(d):
    """The mean difference with its 95% t interval and Cohen's d_z (numpy, no compile)."""
    from scipy import special

    from jaxtests._report import estimate_text

    n, mean, sd = d.size, float(d.mean()), float(d.std(ddof=1))
    half = special.stdtrit(n - 1, 0.975) * sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        dz = np.float64(mean) / sd
    return (
        f"mean {estimate_text(mean, (mean - half, mean + half))} (95% t interval), "
        f"d_z {estimate_text(dz)}"
    )
