"""``jaxtests warmup``: compile the common sizes of the main tests once, into the cache.

Every public test pads its data to a capacity or a bucket size
(:mod:`jaxtests._buckets`), so one call per bucket compiles every program a
later run of that size needs;
with the persistent compilation cache on, later processes load them instead
of compiling.
"""

import sys
import time

import numpy as np

from jaxtests._buckets import LADDER, bucket
from jaxtests._cli._common import POSITIVE_INT


def add_parser(subparsers):
    w = subparsers.add_parser(
        "warmup",
        help="compile the main tests for the common data sizes once, so later runs start warm",
    )
    w.add_argument(
        "--max-instances",
        type=POSITIVE_INT,
        default=10_000,
        help="largest number of instances (paired differences) to compile for (default 10000)",
    )
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(func=run)


def _cache_note():
    """Where compiled programs persist, or why they do not."""
    import jax

    from jaxtests import _cache

    # JAX's setting is the one in force, whoever set it (jaxtests' default or the user).
    folder = jax.config.jax_compilation_cache_dir
    if folder:
        return f"cache: {folder}"
    if _cache.cache_dir() is None:
        why = "JAXTESTS_CACHE_DIR turns it off"
    else:
        why = (
            f"JAX's compilation cache is disabled, or {_cache.cache_dir()} is not writable "
            "or not yours alone"
        )
    return f"cache: off ({why}), so nothing outlasts this process"


def run(args):
    import jax
    from tqdm import tqdm

    from jaxtests import _aot
    from jaxtests._monitoring import CompileCounter

    plan = warmup_plan(max_instances=args.max_instances)
    t0 = time.perf_counter()
    with (
        _aot.forced("optimized"),  # what later calls load: the programs that run fastest
        CompileCounter() as counter,
        tqdm(
            plan, desc="warmup", unit="call", file=sys.stderr, disable=args.quiet, leave=False
        ) as bar,
    ):
        for label, thunk in bar:
            bar.set_postfix_str(label, refresh=False)
            jax.block_until_ready(thunk())
    seconds = time.perf_counter() - t0
    print(
        f"jaxtests warmup: {len(plan)} calls up to {args.max_instances} instances compiled "
        # JAX reports a load from its cache as a backend compile too
        f"{counter.compiles - counter.hits} programs ({counter.hits + counter.programs} loaded "
        f"from the cache) in "
        f"{seconds:.1f} s; {_cache_note()}"
    )
    return 0


def warmup_plan(max_instances=10_000, n_resamples=(9_999, 100_000)):
    """The calls ``jaxtests warmup`` makes: ``[(label, thunk), ...]``.

    One call per compiled program of the common tests (sign-flip "mean" and
    balanced two-sample Monte Carlo tests with scipy's and jaxtests' default
    numbers of resamples, one per padded size of the evaluator family this
    backend uses, up to ``max_instances``: the CPU's word loops pad to a few
    capacities, an accelerator's dense family to every ladder bucket; the paired
    and unpaired bootstrap of a mean difference with BCa at every ladder size).
    """
    import jaxtests
    from jaxtests import _profile

    rng = np.random.default_rng(0)
    plan = []
    top = bucket(-(-max(1, int(max_instances)) // 32))
    # the padding the tests' calls will use on this backend (JAXTESTS_EVALUATORS included)
    pad_words = _profile.current().schedule.pad_words
    words = sorted({pad_words(32 * b) for b in LADDER if b <= top})
    for b in words:
        m = 32 * b
        for n in n_resamples:
            d = rng.normal(size=m)
            plan.append(
                (
                    f"signflip_test m={m} n_resamples={n}",
                    lambda d=d, n=n: jaxtests.signflip_test(d, n_resamples=n, key=0),
                )
            )
            plan.append(
                (
                    f"permutation_test n={m} n_resamples={n}",
                    lambda d=d, n=n: jaxtests.permutation_test(
                        d[: len(d) // 2], d[len(d) // 2 :], n_resamples=n, key=0
                    ),
                )
            )
    # The bootstrap pads each sample to a ladder size: one program per size and statistic.
    # (The t tests, ANOVA and Hotelling's T² run in numpy on concrete data: nothing to compile.)
    for n in [b for b in LADDER if 8 <= b <= 32 * top]:
        x, y = rng.normal(size=n), rng.normal(size=n)
        for paired in (False, True):
            plan.append(
                (
                    f"bootstrap mean_difference n={n}{' paired' if paired else ''}",
                    lambda x=x, y=y, p=paired: (
                        jaxtests.bootstrap(
                            (x, y), "mean_difference", paired=p, key=0
                        ).confidence_interval
                    ),
                )
            )
    return plan
