"""The level of Friedman's chi-square and Iman-Davenport F tests on the null (issue 42.1).

The numbers behind ``jaxtests._friedman.F_LEVEL`` and the size table of ``friedman``'s
docstring and the README: the probability that each approximation rejects at alpha = 0.05
and 0.01 when every data set ranks the ``k`` learners by an independent uniform random
permutation (continuous scores, no ties).

* ``--exact K N_FIRST N_LAST``: exact sizes, by enumerating the null of ``S = sum_j R_j^2``
  (dynamic programming over the sorted rank sums with probabilities; written here apart
  from the library's counting in ``jaxtests/_friedman_exact.py``). k = 5 at N = 30 takes
  about two minutes and 2 GB.
* ``--simulate K[,K...] N_FIRST N_LAST``: sizes estimated on 400,000 simulated null tables
  (standard errors 0.034 and 0.016 percentage points at alpha 0.05 and 0.01), for k >= 6.

The rule of ``F_LEVEL``: the F approximation holds its level at (k, N) when its size is at
most alpha plus two standard errors of a rejection rate measured on 10,000 null tables
(5.436% and 1.199%; a simulated size plus two of its own standard errors), at every N from
there on. Prints one line per (k, N): sizes in percent, F then chi-square, alpha 0.05 / 0.01.

Usage: python bench/friedman_level.py --exact 3 2 60
       python bench/friedman_level.py --simulate 6,7,8 2 20
"""

import argparse
import itertools
import math
import time

import numpy as np
from scipy import special

ALPHAS = (0.05, 0.01)


def null_of_s(k, n):
    """``(values, probabilities)`` of ``S = sum_j R_j^2`` (ranks 1..k, no ties, N = n)."""
    perms = np.array(list(itertools.permutations(range(1, k + 1))), np.int64)
    states = np.arange(1, k + 1, dtype=np.int64)[None]  # the first data set, held fixed
    probs = np.ones(1)
    for step in range(1, n - 1):
        new = (states[:, None, :] + perms[None]).reshape(-1, k)
        new.sort(axis=1)
        base = (step + 1) * k + 1
        code = np.zeros(len(new), np.int64)
        for j in range(k):
            code = code * base + new[:, j]
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
        probs = np.bincount(inv.reshape(-1), weights=np.repeat(probs / len(perms), len(perms)))
        states = new[first]
    if n == 1:
        s, w = np.sum(states**2, axis=1), probs
    else:
        s = ((states[:, None, :] + perms[None]) ** 2).sum(-1).ravel()
        w = np.repeat(probs / len(perms), len(perms))
    values, inv = np.unique(s, return_inverse=True)
    return values, np.bincount(inv.reshape(-1), weights=w)


def pvalues(s, k, n):
    """chi-square and F p-values of the rank-sum statistics ``s`` (as jaxtests.friedman)."""
    chi2 = np.maximum(12.0 / (n * k * (k + 1)) * s - 3 * n * (k + 1), 0.0)
    dfd = (k - 1) * (n - 1)
    rest = n * (k - 1) - chi2
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (n - 1) * chi2 / rest
        f_p = special.fdtrc(k - 1, dfd, np.where(rest > 1e-9, f, 1.0))
    # every data set ranks alike: F infinite, jaxtests reports the exact (k!)^(1 - N)
    f_p = np.where(rest > 1e-9, f_p, float(math.factorial(k)) ** (1 - n))
    return special.chdtrc(k - 1, chi2), f_p


def exact_sizes(k, n):
    values, probs = null_of_s(k, n)
    chi2_p, f_p = pvalues(values.astype(np.float64), k, n)
    return [probs[f_p <= a].sum() for a in ALPHAS] + [probs[chi2_p <= a].sum() for a in ALPHAS]


def simulated_sizes(k, n, rng, n_tables=400_000, chunk=25_000):
    hits = np.zeros(4)
    for _ in range(n_tables // chunk):
        ranks = np.argsort(np.argsort(rng.random((chunk, n, k)), axis=-1), axis=-1) + 1
        s = np.sum(ranks.sum(axis=1).astype(np.float64) ** 2, axis=-1)
        chi2_p, f_p = pvalues(s, k, n)
        hits += [np.sum(f_p <= a) for a in ALPHAS] + [np.sum(chi2_p <= a) for a in ALPHAS]
    return hits / n_tables


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--exact", nargs=3, type=str, metavar=("K", "N_FIRST", "N_LAST"))
    mode.add_argument("--simulate", nargs=3, type=str, metavar=("KS", "N_FIRST", "N_LAST"))
    args = parser.parse_args()
    ks, first, last = args.exact or args.simulate
    rng = np.random.default_rng(42)
    for k in (int(x) for x in ks.split(",")):
        for n in range(int(first), int(last) + 1):
            t0 = time.perf_counter()
            sizes = exact_sizes(k, n) if args.exact else simulated_sizes(k, n, rng)
            f05, f01, c05, c01 = (100 * x for x in sizes)
            how = "exact" if args.exact else "simulated"
            print(
                f"k={k} N={n:3d}  F: {f05:6.3f} {f01:6.3f}  chi2: {c05:6.3f} {c01:6.3f}  "
                f"{how} ({time.perf_counter() - t0:.1f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
