"""``jaxtests demo``: a worked comparison of nine classifiers on an embedded real dataset."""

from jaxtests._cli._common import POSITIVE_INT, SEED
from jaxtests._demo import run_demo


def add_parser(subparsers):
    d = subparsers.add_parser(
        "demo",
        help="a worked example: nine classifiers compared by every test on a real dataset",
    )
    d.add_argument(
        "--dataset", default="breast_cancer", help="embedded dataset (breast_cancer, pima)"
    )
    d.add_argument("--seed", type=SEED, default=0, help="seed of folds and resamples")
    d.add_argument(
        "--n-resamples",
        type=POSITIVE_INT,
        default=None,
        help="sign-flip draws per test (default 10^6, 10^4 with --quick)",
    )
    d.add_argument(
        "--quick",
        action="store_true",
        help="a few seconds: 3 learners (linear and Gaussian SVM, LDA), 5 folds, 10^4 sign "
        "flips; skips the label-permutation sanity check and all but 2 figures",
    )
    d.add_argument(
        "--out",
        default="jaxtests-demo",
        help="output folder for JSON and PNGs (existing files are replaced, never through links)",
    )
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.set_defaults(func=run)


def run(args):
    return run_demo(args)
