"""First calls on an accelerator: where a fresh process's seconds go, program by program.

Issue 41: on an H200 the first call of 1000 hypotheses x m = 1000 (10^5 draws) took 10 s
with 2^25-element blocks of several hypotheses and 30 s with 2^27. Run once per process
(``JAXTESTS_CACHE_DIR=off``: nothing loaded), it times the first call and the best of two
warm calls of one workload and reports every program JAX compiled (``jax_log_compiles``:
tracing, lowering and XLA's compile, seconds each), so a lease can tell compiling from
running. ``--family`` forces an evaluator family, ``--several LOG2`` the dense block budget
of several hypotheses (the profile's ``_DENSE_BUDGET_ACCELERATOR``; a bench may set it, the
library does not read it from anywhere else); XLA's own flags travel in ``XLA_FLAGS``. Prints
one JSON line. ``bash bench/gpu_lease.sh first`` runs the variants a lease needs.
"""

import argparse
import json
import logging
import os
import re
import time

os.environ["JAXTESTS_CACHE_DIR"] = "off"
os.environ.setdefault("JAXTESTS_COMPILE", "optimized")

import jax
import numpy as np

WORKLOADS = {
    "h1000": ((1000, 1000), 10**5),  # 1000 hypotheses x m = 1000
    "m1e4": ((10_000,), 10**6),
}
_EVENT = re.compile(
    r"Finished (tracing \+ transforming|jaxpr to MLIR|XLA compilation of) (.*?) (?:for .*? )?"
    r"in ([0-9.e-]+) s"
)


class _Compiles(logging.Handler):
    """Collects (stage, program, seconds) from JAX's compile log."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.events = []

    def emit(self, record):
        m = _EVENT.search(record.getMessage())
        if m:
            self.events.append((m.group(1).split()[0], m.group(2)[:80], float(m.group(3))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="h1000", choices=sorted(WORKLOADS))
    ap.add_argument("--family", default="", help="JAXTESTS_EVALUATORS for this process")
    ap.add_argument("--several", type=int, default=0, help="log2 of the several-hypotheses budget")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    if args.family:
        os.environ["JAXTESTS_EVALUATORS"] = args.family
    t_import = time.perf_counter()
    import jaxtests
    from jaxtests import _profile

    t_import = time.perf_counter() - t_import
    if args.several:
        one, _, lanes = _profile._DENSE_BUDGET_ACCELERATOR
        _profile._DENSE_BUDGET_ACCELERATOR = (one, 2**args.several, lanes)
    shape, n = WORKLOADS[args.workload]
    d = np.random.default_rng(0).normal(0.01, 1.0, shape)
    handler = _Compiles()
    logging.getLogger("jax").addHandler(handler)
    jax.config.update("jax_log_compiles", True)

    def call():
        return jax.block_until_ready(jaxtests.signflip_test(d, n_resamples=n, key=1))

    t0 = time.perf_counter()
    r = call()
    first = time.perf_counter() - t0
    jax.config.update("jax_log_compiles", False)
    warm = []
    for _ in range(1 if n >= 10**8 else 2):
        t0 = time.perf_counter()
        call()
        warm.append(time.perf_counter() - t0)
    stages = {}
    for stage, _, s in handler.events:
        stages[stage] = stages.get(stage, 0.0) + s
    slowest = sorted((e for e in handler.events if e[0] == "XLA"), key=lambda e: -e[2])[:5]
    row = {
        "label": args.label,
        "workload": args.workload,
        "device": jax.devices()[0].device_kind,
        "jax": jax.__version__,
        "family": _profile.current().family.name,
        "several": args.several or None,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "import_s": round(t_import, 3),
        "first_s": round(first, 3),
        "warm_s": round(min(warm), 4),
        "stage_s": {k: round(v, 3) for k, v in stages.items()},
        "programs": len([e for e in handler.events if e[0] == "XLA"]),
        "slowest_compiles": [(name, round(s, 3)) for _, name, s in slowest],
        "pvalue": np.asarray(r.pvalue).ravel()[:4].tolist(),
        "pvalue_sum": float(np.asarray(r.pvalue).sum()),
    }
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
