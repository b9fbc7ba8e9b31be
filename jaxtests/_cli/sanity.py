"""``jaxtests sanity``: the label-permutation sanity check on a feature/label CSV."""

from jaxtests import permutation_test_score
from jaxtests._cli._common import POSITIVE_INT, SEED, BadInput, _given_twice
from jaxtests._learners import cli_models
from jaxtests._report import Progress, dumps, result_summary
from jaxtests.datasets import load_csv


def add_parser(subparsers):
    s = subparsers.add_parser(
        "sanity", help="label-permutation sanity check on a feature/label CSV"
    )
    s.add_argument("file")
    s.add_argument("--label", required=True, help="label column")
    s.add_argument("--features", nargs="+", help="feature columns (default: all others)")
    s.add_argument("--model", default="ridge", choices=tuple(cli_models("classification")))
    s.add_argument("--cv", type=POSITIVE_INT, default=5)
    s.add_argument("--n-permutations", type=POSITIVE_INT, default=1000)
    s.add_argument("--scoring", default="accuracy")
    s.add_argument("--seed", type=SEED, default=None)
    s.add_argument("--json", action="store_true")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(func=run)


def run(args):
    if args.features and args.label in args.features:
        raise BadInput(
            f"--features includes the label column {args.label!r}; the model would be given "
            "the answer. Leave it out."
        )
    _given_twice(args.features, "--features")
    X, y = load_csv(args.file, label=args.label, features=args.features)
    model = cli_models("classification")[args.model]()
    with Progress("label permutations", unit="perm", disable=args.quiet) as bar:
        res = permutation_test_score(
            model,
            X,
            y,
            cv=args.cv,
            n_permutations=args.n_permutations,
            scoring=args.scoring,
            key=args.seed,
            progress=bar,
        )
    if args.json:
        print(dumps({"file": str(args.file), "model": args.model, "result": res}))
        return 0
    print(
        f"{args.file}: {X.shape[0]} instances, {X.shape[1]} features, model {args.model}, "
        f"{args.cv}-fold CV"
    )
    print(
        result_summary(
            res,
            statistic=f"score ({res.scoring})",
            resamples="label permutations",
            method=f"monte-carlo label permutations ({res.permute})",
        )
    )
    return 0
