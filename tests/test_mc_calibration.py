"""Monte Carlo p-values against the exact (enumerated) p over many keys, for every path.

Per-call tests cannot see duplicated or correlated draws, nor a count that is
off by a rounding band: across keys, the number ``b`` of extreme draws out of
``B`` must be Binomial(B, p) with ``p`` the exact p-value, enumerated here in
numpy. Per case, over ``K`` keys:

- mean: ``|mean(b / B) - p| <= 4 sqrt(p (1 - p) / (B K))``;
- variance: ``var(b) / (B p (1 - p))`` in ``[0.7, 1.3]`` (duplicated draws give
  about 2, the correlated two-sample corrections of issue 13 about 1.4);
- coverage: the 99% Clopper-Pearson ``pvalue_interval`` misses ``p`` at most
  ``MAX_MISSES`` times (Poisson(<= 0.01 K) tail).

Failure budget under a change of keys, per case: mean 6e-5, variance (a
chi-square with K - 1 degrees of freedom, Wilson-Hilferty) about 4e-4 above
and 2e-5 below, coverage below 1e-3 for K = 300 (Binomial(300, 0.01) >= 10:
3e-4 .. 1e-3); below 2% over the cases here (union bound).

Data are multiples of 2^-8 (heavy tails: one value 2^20), so every float64
sum of the references is exact and ties are exact; the engine's float32 sums
are not, which is what the heavy-tailed cases probe (issue 13, item 12).
"""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxtests._permutation import (
    permutation_test,
    signflip_test,
    swap_test,
)
from jaxtests._within_block import within_block_pvalue

K = 300
MAX_MISSES = 9  # P(Binomial(300, 0.01) >= 10) = 8e-4

pytestmark = pytest.mark.slow


def _quantized(rng, loc, scale, n):
    return np.round(rng.normal(loc, scale, n) * 256) / 256


def _check(runs, p_exact, n_resamples, factor=1.0):
    """``runs`` of ``(n_extreme, lo, hi)``; ``factor`` 2 for two-sided tail counts."""
    b = np.array([r[0] for r in runs], float)
    lo = np.array([r[1] for r in runs])
    hi = np.array([r[2] for r in runs])
    q = p_exact / factor  # the tail probability that b counts
    se = math.sqrt(q * (1 - q) / (n_resamples * len(runs)))
    assert abs(b.mean() / n_resamples - q) <= 4 * se, (b.mean() / n_resamples, q)
    ratio = b.var(ddof=1) / (n_resamples * q * (1 - q))
    assert 0.7 <= ratio <= 1.3, ratio
    misses = int(np.sum((p_exact < lo - 1e-12) | (p_exact > hi + 1e-12)))
    assert misses <= MAX_MISSES, misses


def _runs(call):
    out = []
    for k in range(K):
        r = call(k)
        lo, hi = np.asarray(r.pvalue_interval)
        out.append((int(r.n_extreme), float(lo), float(hi)))
    return out


# ---------------------------------------------------------------- references


def _signflip_exact(d, fn, alternative):
    m = d.size
    s = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
    null = np.array([fn(row) for row in s * d]) if fn is not np.mean else (s @ d) / m
    obs = fn(d)
    ge, le = np.mean(null >= obs), np.mean(null <= obs)
    return {"greater": ge, "less": le, "two-sided": min(1.0, 2 * min(ge, le))}[alternative]


def _twosample_exact(x, y, fn):
    z = np.concatenate([x, y])
    n, n1 = z.size, x.size
    null = []
    for g in itertools.combinations(range(n), n1):
        mask = np.zeros(n, bool)
        mask[list(g)] = True
        null.append(fn(z[mask], z[~mask]))
    return np.mean(np.array(null) >= fn(x, y))  # "greater"


# ---------------------------------------------------------------- sign flips

_HEAVY = np.concatenate([[2.0**20], np.arange(1, 14) / 256 * np.array([1, -1] * 6 + [1])])


@pytest.mark.parametrize(
    ("name", "d", "alternative"),
    [
        ("normal", _quantized(np.random.default_rng(0), 0.1, 1.0, 14), "greater"),
        # one value 2^20 among 13 of size ~0.03: the float32 rounding band of the
        # sums (1.6e-6 sum|d|) covers the whole null; counts must be float64's.
        ("heavy", _HEAVY, "greater"),
        ("heavy-two-sided", _HEAVY, "two-sided"),
    ],
)
def test_signflip_mean_calibrated(name, d, alternative):
    p = _signflip_exact(d, np.mean, alternative)
    assert 0.05 < p < 0.95, p  # the variance check needs a non-degenerate p
    n_resamples = 500
    runs = _runs(
        lambda k: signflip_test(
            d, alternative=alternative, method="monte-carlo", n_resamples=n_resamples, key=k
        )
    )
    _check(runs, p, n_resamples, 2.0 if alternative == "two-sided" else 1.0)


def test_signflip_callable_calibrated():
    d = _quantized(np.random.default_rng(1), 0.2, 1.0, 10)
    p = _signflip_exact(d, np.median, "greater")  # numpy enumeration of 2^10 patterns
    n_resamples = 500
    runs = _runs(
        lambda k: signflip_test(
            d,
            statistic=jnp.median,
            alternative="greater",
            method="monte-carlo",
            n_resamples=n_resamples,
            key=k,
        )
    )
    _check(runs, p, n_resamples)


_D_MAXT = np.stack(
    [
        _quantized(np.random.default_rng(2), 0.15, 1.0, 11),
        _quantized(np.random.default_rng(8), 0.0, 1.0, 11),
    ]
)


@pytest.mark.parametrize(
    ("name", "d"),
    [
        ("normal", _D_MAXT),
        # hypothesis 0 heavy-tailed: its float32 band covers its whole null
        ("heavy", np.stack([np.concatenate([[2.0**20], _D_MAXT[0, 1:] / 64]), _D_MAXT[1]])),
    ],
)
def test_signflip_maxt_calibrated(name, d):
    # Westfall-Young max-T over two hypotheses sharing the patterns: adjusted p of
    # hypothesis 0 is P(max_h T_h / sd_h >= t_0 / sd_0), enumerated over 2^11 patterns.
    m = d.shape[1]
    s = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
    sd = np.sqrt(np.sum(d * d, axis=1)) / m
    z = (s @ d.T) / m / sd  # (patterns, H)
    z_obs = d.mean(axis=1) / sd
    p_adj = np.mean(z.max(axis=1) >= z_obs[0] - 1e-12)
    assert 0.05 < p_adj < 0.95
    n_resamples = 500
    runs = []
    for k in range(K):
        r = signflip_test(
            d,
            alternative="greater",
            method="monte-carlo",
            n_resamples=n_resamples,
            key=k,
            correction="maxT",
        )
        # adjusted = (max-T count + 1) / (B + 1): the count is never below the raw one
        b = round(float(r.pvalue_adjusted[0]) * (n_resamples + 1)) - 1
        lo, hi = stats.beta.ppf([0.005, 0.995], [b, b + 1], [n_resamples - b + 1, n_resamples - b])
        runs.append((b, lo, hi))
    _check(runs, p_adj, n_resamples)


# ---------------------------------------------------------------- two samples


def _mean_diff(a, b):
    return np.mean(a) - np.mean(b)


@pytest.mark.parametrize(
    ("name", "x", "y"),
    [
        (
            "normal",
            _quantized(np.random.default_rng(3), 0.3, 1.0, 5),
            _quantized(np.random.default_rng(4), 0.0, 1.0, 7),
        ),
        # one value 2^20 in x: half the splits carry it; the rest decides among them.
        (
            "heavy",
            np.concatenate([[2.0**20], np.arange(1, 5) / 64]),
            np.arange(2, 9) / 128,
        ),
    ],
)
def test_twosample_mean_difference_calibrated(name, x, y):
    p = _twosample_exact(x, y, _mean_diff)  # numpy enumeration of C(12, 5) = 792 splits
    assert 0.05 < p < 0.95, p
    n_resamples = 500
    runs = _runs(
        lambda k: permutation_test(
            x, y, alternative="greater", method="monte-carlo", n_resamples=n_resamples, key=k
        )
    )
    _check(runs, p, n_resamples)


def test_twosample_callable_calibrated():
    # 2048 draws: two evaluation blocks of 1024 inside one key block of 4096, which
    # shared their subset-size corrections before the fix (variance ratio ~1.4).
    rng = np.random.default_rng(5)
    x = _quantized(rng, 0.4, 1.0, 3)
    y = _quantized(rng, 0.0, 1.0, 9)

    def med(a, b):
        return jnp.median(a) - jnp.median(b)

    p = _twosample_exact(x, y, lambda a, b: np.median(a) - np.median(b))  # C(12, 3) splits
    assert 0.05 < p < 0.95, p
    n_resamples = 2048
    runs = _runs(
        lambda k: permutation_test(
            x,
            y,
            statistic=med,
            alternative="greater",
            method="monte-carlo",
            n_resamples=n_resamples,
            key=k,
        )
    )
    _check(runs, p, n_resamples)


# ---------------------------------------------------------------- swaps


def _f1(y, p):
    tp = np.sum((y == 1) & (p == 1))
    den = 2 * tp + np.sum((y == 0) & (p == 1)) + np.sum((y == 1) & (p == 0))
    return 2 * tp / den if den else 0.0


def _swap_exact(y, a, b, fn):
    idx = np.flatnonzero(a != b)
    obs = fn(y, a) - fn(y, b)
    null = []
    for s in itertools.product([0, 1], repeat=idx.size):
        aa, bb = a.copy(), b.copy()
        sw = idx[np.array(s, bool)]
        aa[sw], bb[sw] = b[sw], a[sw]
        null.append(fn(y, aa) - fn(y, bb))
    return np.mean(np.array(null) >= obs - 1e-12)  # "greater"


def _auc(y, s):
    pos, neg = s[y == 1], s[y == 0]
    return np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :]))


@pytest.mark.parametrize("measure", ["f1", "auc"])
def test_swap_calibrated(measure):
    rng = np.random.default_rng(6)
    y = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 0])
    if measure == "f1":
        a = np.where(rng.random(12) < 0.8, y, 1 - y)
        b = np.where(rng.random(12) < 0.7, y, 1 - y)
        fn = _f1
    else:
        a = _quantized(rng, y * 0.8, 1.0, 12)
        b = _quantized(rng, y * 0.5, 1.0, 12)
        fn = _auc
    p = _swap_exact(y, a, b, fn)  # numpy enumeration of every swap
    assert 0.05 < p < 0.95, p
    n_resamples = 500
    runs = _runs(
        lambda k: swap_test(
            y,
            a,
            b,
            measure=measure,
            alternative="greater",
            method="monte-carlo",
            n_resamples=n_resamples,
            key=k,
        )
    )
    _check(runs, p, n_resamples)


# ---------------------------------------------------------------- within blocks


def _spread(x):
    # between-algorithm spread of the fold-centred means (a repeated-measures F numerator)
    xc = x - jnp.mean(x, axis=1, keepdims=True)
    return jnp.sum(jnp.mean(xc, axis=0) ** 2)


def test_within_block_calibrated():
    # 1024 draws: one evaluation block, whose second half repeated the first before the fix.
    x = _quantized(np.random.default_rng(7), 0.0, 1.0, 12).reshape(4, 3)
    x[:, 0] += 0.5
    perms = list(itertools.permutations(range(3)))
    # all 6^4 = 1296 arrangements
    xp = np.stack(
        [[x[i, list(q)] for i, q in enumerate(ps)] for ps in itertools.product(perms, repeat=4)]
    )
    null = np.asarray(jax.vmap(_spread)(jnp.asarray(xp)))
    obs = float(_spread(jnp.asarray(x)))
    p = np.mean(null >= obs - 1e-9 * abs(obs))
    assert 0.05 < p < 0.95, p
    n_resamples = 1024
    runs = _runs(
        lambda k: within_block_pvalue(
            _spread, x, alternative="greater", n_resamples=n_resamples, key=k
        )
    )
    _check(runs, p, n_resamples)
