"""``jaxtests warmup``: compile the common sizes of the main tests once, into the cache.

Every public test pads its data to a capacity or a bucket size
(:mod:`jaxtests._buckets`), so one call per bucket compiles every program a
later run of that size needs;
with the persistent compilation cache on, later processes load them instead
of compiling.
"""

import sys
import time

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

    from jaxtests._buckets import CompileCounter, warmup_plan

    plan = warmup_plan(max_instances=args.max_instances)
    t0 = time.perf_counter()
    with (
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
