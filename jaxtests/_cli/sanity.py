"""``jaxtests sanity``: the label-permutation sanity check on a feature/label CSV."""

import argparse

from jaxtests import permutation_test_score
from jaxtests._cli._common import POSITIVE_INT, SEED, BadInput, _given_twice
from jaxtests._learners import cli_models
from jaxtests._report import Progress, dumps, result_summary
from jaxtests.datasets import load_csv
from jaxtests.kernels import measures as kmeasures


def add_parser(subparsers):
    s = subparsers.add_parser(
        "sanity",
        help="label-permutation sanity check on a feature/label CSV",
        description="Is the model better than chance? Cross-validated score with the true "
        "labels against the scores with permuted labels (Ojala & Garriga 2010).",
    )
    s.add_argument("file", help="CSV with a header: feature columns and a label column")
    s.add_argument("--label", required=True, help="the label column (any two or more values)")
    s.add_argument("--features", nargs="+", help="feature columns (default: all others)")
    models = tuple(cli_models("classification"))
    s.add_argument(
        "--model",
        default="ridge",
        choices=models,
        help=f"built-in learner ({', '.join(models)}; svm: RBF support vector machine); "
        "default ridge",
    )
    s.add_argument(
        "--standardize",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="standardise the features on each training fold (scikit-learn's StandardScaler "
        "in a pipeline); on by default, --no-standardize fits the raw features",
    )
    s.add_argument("--cv", type=POSITIVE_INT, default=5, help="number of folds (default 5)")
    s.add_argument(
        "--n-permutations",
        type=POSITIVE_INT,
        default=1000,
        help="label permutations (default 1000); the p-value is at least 1/(n + 1)",
    )
    scores = (*kmeasures.measure_names("counts"), "roc_auc")  # permutation_test_score's
    s.add_argument(
        "--scoring", default="accuracy", help=f"score per fold: {', '.join(scores)} (accuracy)"
    )
    s.add_argument("--seed", type=SEED, default=None, help="seed of folds and permutations")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=run)


def run(args):
    if args.features and args.label in args.features:
        raise BadInput(
            f"--features includes the label column {args.label!r}; the model would be given "
            "the answer. Leave it out."
        )
    _given_twice(args.features, "--features")
    X, y = load_csv(args.file, label=args.label, features=args.features)
    model = cli_models("classification")[args.model](standardize=args.standardize)
    total = args.n_permutations
    with Progress("label permutations", unit="perm", disable=args.quiet, total=total) as bar:
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
        payload = {"file": str(args.file), "model": args.model, "standardize": args.standardize}
        print(dumps({**payload, "result": res}))
        return 0
    print(
        f"{args.file}: {X.shape[0]} instances, {X.shape[1]} features, model {args.model} "
        f"({'features standardised on each training fold' if args.standardize else 'raw features'}"
        f"), {args.cv}-fold CV"
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
