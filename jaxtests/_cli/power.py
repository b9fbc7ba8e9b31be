"""``jaxtests power``: power, calibration or MacKay's loss study by simulation."""

import sys

from jaxtests import study
from jaxtests._cli._common import (
    ALPHA,
    ALTERNATIVES,
    DF,
    POSITIVE,
    POSITIVE_INT,
    SEED,
    BadInput,
    _matplotlib_agg,
    _save_plot,
)
from jaxtests._report import dumps


def add_parser(subparsers):
    w = subparsers.add_parser(
        "power", help="power, calibration or MacKay's loss study by simulation"
    )
    w.add_argument(
        "--tests", nargs="+", help="t signflip_mean signflip_t wilcoxon sign hotelling t_bonferroni"
    )
    w.add_argument(
        "--generator",
        default=None,
        choices=("normal", "t", "cauchy", "lognormal", "bernoulli", "mvnormal"),
        help="default normal",
    )
    w.add_argument("--df", type=DF, help="degrees of freedom (generator t), > 2")
    w.add_argument("--sigma", type=POSITIVE, help="log-scale sigma (generator lognormal)")
    w.add_argument("--n-experiments", type=POSITIVE_INT, default=10_000)
    w.add_argument("--m", type=POSITIVE_INT, default=30, help="paired differences per experiment")
    w.add_argument("--effect", type=float, nargs="+", default=None, help="default 0 0.25 0.5")
    w.add_argument("--alpha", type=ALPHA, default=0.05)
    w.add_argument("--alternative", default=None, choices=ALTERNATIVES, help="default two-sided")
    w.add_argument("--n-resamples", type=POSITIVE_INT, default=10_000)
    w.add_argument("--seed", type=SEED, default=None)
    mode = w.add_mutually_exclusive_group()
    mode.add_argument("--calibration", action="store_true", help="type-I error under H0")
    mode.add_argument(
        "--loss-study",
        action="store_true",
        help="MacKay's |error|^p study under Cauchy errors ('More sensitive tests in DELVE')",
    )
    w.add_argument(
        "--powers", type=float, nargs="+", default=None, help="--loss-study: default 2 1 0.5 0.1"
    )
    w.add_argument("--json", action="store_true")
    w.add_argument("--out", help="folder for a PNG plot")
    w.set_defaults(func=run)


def run(args):
    def unused(option, why):
        raise BadInput(f"{option} is not used {why}.")

    if args.loss_study:
        for opt, val in (
            ("--generator", args.generator),
            ("--df", args.df),
            ("--sigma", args.sigma),
        ):
            if val is not None:
                unused(opt, "by --loss-study (Cauchy errors, MacKay)")
        if args.alternative is not None:
            unused("--alternative", "by --loss-study")
        if args.out:
            unused("--out", "by --loss-study (it has no plot)")
    else:
        if args.powers is not None:
            unused("--powers", "without --loss-study")
        if args.calibration and args.effect is not None:
            unused("--effect", "by --calibration (it simulates under H0, effect 0)")
    generator = args.generator or "normal"
    if args.df is not None and generator != "t":
        unused("--df", f"by --generator {generator} (only t has degrees of freedom)")
    if args.sigma is not None and generator != "lognormal":
        unused("--sigma", f"by --generator {generator} (only lognormal has sigma)")
    params = {k: getattr(args, k) for k in ("df", "sigma") if getattr(args, k) is not None}
    gen = study.generator(generator, **params) if params else generator
    alternative = args.alternative or "two-sided"
    effect = tuple(args.effect) if args.effect is not None else (0.0, 0.25, 0.5)
    if args.loss_study:
        res = study.loss_study(
            tests=tuple(args.tests or ("t",)),
            powers=tuple(args.powers or (2.0, 1.0, 0.5, 0.1)),
            n_experiments=args.n_experiments,
            m=args.m,
            effect=effect,
            alpha=args.alpha,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "loss_study", None
    elif args.calibration:
        res = study.calibration(
            tests=args.tests,
            generator=gen,
            n_experiments=args.n_experiments,
            m=args.m,
            alpha=args.alpha,
            alternative=alternative,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "calibration", study.plot_calibration
    else:
        res = study.power(
            tests=args.tests,
            generator=gen,
            n_experiments=args.n_experiments,
            m=args.m,
            effect=effect,
            alpha=args.alpha,
            alternative=alternative,
            n_resamples=args.n_resamples,
            key=args.seed,
        )
        kind, plot_fn = "power", study.plot_power
    if args.json:
        print(dumps({kind: res.to_dict()}))
    else:
        print(res.table())
    if args.out and plot_fn is not None:
        _matplotlib_agg()
        path = _save_plot(plot_fn(res), args.out, f"{kind}.png")
        print(f"plot: {path}", file=sys.stderr)
    return 0
