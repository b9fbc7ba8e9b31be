"""bayesian.correlated_ttest against the Corani & Benavoli (2015) posterior via scipy.stats.t."""

import numpy as np
import pytest
from scipy import stats

from jaxtests import bayesian

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("rho", [0.0, 0.1, 1 / 3])
@pytest.mark.parametrize("rope", [0.0, 0.01, 0.05])
def test_posterior_is_the_correlated_student_t(rho, rope):
    a = RNG.normal(0.80, 0.03, (4, 10))
    b = RNG.normal(0.79, 0.03, (4, 10))
    r = bayesian.correlated_ttest(a, b, rope=rope, rho=rho)
    d = a - b
    n = d.shape[-1]
    # Corani & Benavoli (2015): t_{n-1}(mean, (1/n + rho/(1-rho)) s^2), s^2 with ddof 1.
    post = stats.t(
        n - 1, d.mean(axis=-1), np.sqrt((1 / n + rho / (1 - rho)) * d.var(axis=-1, ddof=1))
    )
    # baycomp's orientation (issue 28.6): left is a - b above the rope (a higher)
    np.testing.assert_allclose(r.p_left, post.sf(rope), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(r.p_right, post.cdf(-rope), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(r.p_left + r.p_rope + r.p_right, 1.0, rtol=1e-12)
    assert r.df == n - 1 and r.p_left.shape == (4,)


def test_orientation_is_baycomps_for_the_same_argument_order():
    # Issue 28.6. baycomp 1.0.3, two_on_single(a, b, rope=0.01) (its CorrelatedTTest:
    # y - x, rho = 1 / 10 for 10 folds, one run): (0.9202585247784699,
    # 0.07951563711075404, 0.00022583811077603322); before issue 28 jaxtests reported
    # them the other way round.
    a = [0.81, 0.84, 0.79, 0.83, 0.80, 0.85, 0.82, 0.80, 0.78, 0.84]
    b = [0.80, 0.81, 0.79, 0.80, 0.78, 0.83, 0.80, 0.80, 0.76, 0.81]
    r = bayesian.correlated_ttest(a, b, rope=0.01, rho=1 / 10)
    baycomp = [0.9202585247784699, 0.07951563711075404, 0.00022583811077603322]
    np.testing.assert_allclose([r.p_left, r.p_rope, r.p_right], baycomp, rtol=1e-9)
    assert r.p_a_better == r.p_left and r.p_b_better == r.p_right  # accuracies
    # errors (lower is better): the same probabilities, the names follow the direction
    e = bayesian.correlated_ttest(a, b, rope=0.01, rho=1 / 10, higher_is_better=False)
    assert (e.p_left, e.p_right) == (r.p_left, r.p_right)
    assert e.p_a_better == r.p_right and e.p_b_better == r.p_left
    with pytest.raises(TypeError, match="`higher_is_better` must be a bool"):
        bayesian.correlated_ttest(a, b, rope=0.01, rho=0.1, higher_is_better="up")
    # the signed-rank test: baycomp 1.0.3, two_on_multiple(a, b, rope=0.01,
    # random_state=0, nsamples=50000) gives (0.98958, 0.01042, 0.0); ours, another
    # 50,000 draws, within 4 standard errors of the difference of two estimates
    s = bayesian.signrank(a, b, rope=0.01, key=0)
    ref = np.array([0.98958, 0.01042, 0.0])
    se = np.sqrt(ref * (1 - ref) * 2 / 50_000)
    got = np.array([s.p_left, s.p_rope, s.p_right])
    assert np.all(np.abs(got - ref) <= 4 * se + 1e-12), got
    assert s.p_a_better == s.p_left
    with pytest.raises(TypeError, match="`higher_is_better` must be a bool"):
        bayesian.signrank(a, b, rope=0.01, higher_is_better=1)


def test_swapping_the_learners_swaps_left_and_right():
    a, b = RNG.normal(size=12), RNG.normal(size=12)
    r = bayesian.correlated_ttest(a, b, rope=0.1, rho=0.2)
    s = bayesian.correlated_ttest(b, a, rope=0.1, rho=0.2)
    np.testing.assert_allclose([r.p_left, r.p_rope, r.p_right], [s.p_right, s.p_rope, s.p_left])


def test_axis():
    a, b = RNG.normal(size=(10, 3)), RNG.normal(size=(10, 3))
    r = bayesian.correlated_ttest(a, b, rope=0.1, rho=0.1, axis=0)
    t = bayesian.correlated_ttest(a.T, b.T, rope=0.1, rho=0.1)
    np.testing.assert_allclose(r.p_left, t.p_left, rtol=1e-13)


def test_zero_variance_is_a_point_mass():
    a = [0.9, 0.8, 0.7]
    r = bayesian.correlated_ttest(a, np.subtract(a, 0.02), rope=0.01, rho=0.1)
    assert (float(r.p_left), float(r.p_rope), float(r.p_right)) == (1.0, 0.0, 0.0)
    r = bayesian.correlated_ttest(a, a, rope=0.01, rho=0.1)
    assert (float(r.p_left), float(r.p_rope), float(r.p_right)) == (0.0, 1.0, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(rope=-0.1, rho=0.1), "rope"),
        (dict(rope="a", rho=0.1), "rope"),
        (dict(rope=0.1, rho=1.0), "rho"),
        (dict(rope=0.1, rho=-0.2), "rho"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bayesian.correlated_ttest([0.1, 0.2, 0.3], [0.2, 0.2, 0.2], **kwargs)


def test_bad_data_is_named():
    with pytest.raises(ValueError, match="at least 2 folds"):
        bayesian.correlated_ttest([0.1], [0.2], rope=0.0, rho=0.1)
    with pytest.raises(ValueError, match="shape"):
        bayesian.correlated_ttest([0.1, 0.2], [0.2], rope=0.0, rho=0.1)


# --- signrank: the Bayesian signed-rank test over data sets -----------------------------

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jaxtests.kernels import random as krandom  # noqa: E402
from jaxtests.kernels import statistics as kstatistics  # noqa: E402

from jaxtests import _random  # noqa: E402
from jaxtests import _signrank_draws as draws  # noqa: E402
from jaxtests._monitoring import CompileCounter  # noqa: E402

PSEUDO = {"rope": 0.0, "left": -np.inf, "right": np.inf}

# The posterior samples are drawn on the host (numpy, nothing compiled): N_SETS data sets,
# N_SAMPLES posterior samples (blocks of 4096).
N_SETS, N_SAMPLES = 10, 4000
N_WEIGHTS = 20_000  # weights drawn for the reference tests (samples 0 .. N_WEIGHTS - 1)


def _dirichlet_draws(key, m, prior_strength, count):
    """Posterior samples 0 .. count - 1's weights over m entries, as the function draws them."""
    return draws.dirichlet_weights(key, m, prior_strength, 0, count)


def _baycomp_samples(x, y, rope, weights, z0=0.0):
    """baycomp (janezd/baycomp) ``baycomp/multiple.py``, ``SignedRankTest.sample``, line
    for line, with its Dirichlet draws replaced by ``weights : (nsamples, n + 1)`` and its
    pseudo-observation 0 by ``z0`` (baycomp has only 0; -inf/+inf are ours)."""

    def heaviside(a, thresh):
        return (a > thresh).astype(float) + 0.5 * (a == thresh).astype(float)

    def diff_sums(x, y):
        diff = np.hstack(([z0], y - x))
        diff_m = np.lib.stride_tricks.as_strided(
            diff, strides=(*diff.strides, 0), shape=diff.shape * 2
        )
        return diff_m + diff_m.T

    nsamples = len(weights)

    def with_rope():
        sums = diff_sums(x, y)
        above_rope = heaviside(sums, 2 * rope)
        below_rope = heaviside(-sums, 2 * rope)
        samples = np.zeros((nsamples, 3))
        for i, samp_weights in enumerate(weights):
            prod_weights = np.outer(samp_weights, samp_weights)
            samples[i, 0] = np.sum(prod_weights * below_rope)
            samples[i, 2] = np.sum(prod_weights * above_rope)
        samples[:, 1] = -samples[:, 0] - samples[:, 2] + 1
        return samples

    def without_rope():
        sums = diff_sums(x, y)
        above_0 = heaviside(sums, 0)
        samples = np.zeros((nsamples, 3))
        for i, samp_weights in enumerate(weights):
            prod_weights = np.outer(samp_weights, samp_weights)
            samples[i, 2] = np.sum(prod_weights * above_0)
        samples[:, 0] = -samples[:, 2] + 1
        return samples

    return with_rope() if rope > 0 else without_rope()


def _baycomp_probs(x, y, rope, *, prior=0.5, nsamples, random_state):
    """baycomp's SignedRankTest(x, y, rope, prior=prior).probs(): its own numpy draws,
    ``RandomState(random_state).dirichlet``, and ``Posterior.probs`` (argmax winners);
    always the three probabilities (baycomp drops p_rope when rope == 0)."""
    weights = np.ones(len(x) + 1)
    weights[0] = prior
    draws = np.random.RandomState(random_state).dirichlet(weights, nsamples)
    sample = _baycomp_samples(x, y, rope, draws)
    winners = np.argmax(sample, axis=1)
    return np.bincount(winners, minlength=3) / len(winners)


# Differences in eighths: pairs whose sum is exactly +-2 rope (0.25) or 0 exercise the
# half weights of baycomp's heaviside.
TIED = np.array([0.125, 0.125, -0.375, 0.0, 0.25, -0.125, 0.5, 0.0])
SIGNRANK_DATA = {
    "noisy": (RNG.normal(0.80, 0.05, 8), RNG.normal(0.0, 0.02, 8)),
    "tied": (np.full(8, 0.5), TIED),
}


# Jitted once per shape (eager dispatch compiled each small op anew in every case); "host"
# is the sorted sums in numpy, as signrank computes them.
KERNELS = {
    "pairs": jax.jit(kstatistics.signrank_posterior),
    "sorted": jax.jit(kstatistics.signrank_posterior_sorted),
    "host": lambda d, w, rope: kstatistics.signrank_posterior_sorted(
        np.asarray(d), np.asarray(w), rope, xp=np
    ),
}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("data", sorted(SIGNRANK_DATA))
@pytest.mark.parametrize("rope", [0.0, 0.01, 0.125])
@pytest.mark.parametrize("place", ["rope", "left", "right"])
def test_signrank_kernel_is_baycomp_given_the_same_weights(kernel, data, rope, place):
    base, delta = SIGNRANK_DATA[data]
    a, b = base + delta, base  # our d = a - b is baycomp's y - x for x, y = b, a
    n = len(a)
    rng = np.random.default_rng(7)
    w = rng.dirichlet(np.r_[0.5, np.ones(n)], 200)
    ref = _baycomp_samples(b, a, rope, w, z0=PSEUDO[place])
    d = np.r_[PSEUDO[place], a - b]
    posterior = KERNELS[kernel]
    rope = np.float64(rope)  # traced: one program for every rope
    got = np.asarray(posterior(jnp.asarray(d), jnp.asarray(w), rope))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    if rope == 0:
        assert np.all(got[:, 1] == 0)  # nothing lies inside an empty rope, exactly
    # Swapping the learners (d -> -d) swaps left and right, bit for bit.
    swapped = np.asarray(posterior(-jnp.asarray(d), jnp.asarray(w), rope))
    np.testing.assert_array_equal(swapped, got[:, ::-1])
    # Zero-weight padding (the shape buckets) changes no bit.
    padded = posterior(
        jnp.asarray(np.r_[d, np.zeros(5)]), jnp.asarray(np.c_[w, np.zeros((200, 5))]), rope
    )
    np.testing.assert_array_equal(np.asarray(padded), got)
    if kernel == "host":
        # numpy runs the jitted kernel's operations in its order; XLA may fuse the rope's
        # total^2 - (below + above) into one rounding (an FMA), hence an ulp or so
        jitted = np.asarray(KERNELS["sorted"](d, w, rope))
        np.testing.assert_allclose(got, jitted, rtol=0, atol=4e-16)
        np.testing.assert_array_equal(got[:, ::2], jitted[:, ::2])  # the outer sums: equal


@pytest.mark.parametrize("m", [3, 128, 129, 300])
def test_signrank_host_sums_are_the_jitted_kernels(m):
    # The numpy sums (a loop over the rows up to 128 entries, cumsum beyond) add in the
    # jitted kernel's order: the outer sums are the same bits, the rope's within an ulp.
    rng = np.random.default_rng(m)
    d = np.r_[-np.inf, np.round(rng.normal(0, 0.05, m - 1), 2)]
    w = rng.dirichlet(np.ones(m), 64)
    got = kstatistics.signrank_posterior_sorted(d, w, 0.01, xp=np)
    want = np.asarray(KERNELS["sorted"](d, w, np.float64(0.01)))
    np.testing.assert_array_equal(got[:, ::2], want[:, ::2])
    np.testing.assert_allclose(got[:, 1], want[:, 1], rtol=0, atol=4e-16)


def test_signrank_samples_follow_baycomps_definition_for_its_weights():
    # Each posterior sample, recomputed in numpy from baycomp's definition (SignedRankTest:
    # sums of w_i w_j over all pairs, i == j included, whose Walsh sum d_i + d_j lies below
    # -2 rope, within, above 2 rope; heaviside(0) = 1/2) with the pseudo-observation 0 first,
    # for the Dirichlet weights the function drew (their law: the test below).
    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    rope, n = 0.02, N_SAMPLES
    r = bayesian.signrank(a, b, rope=rope, n_samples=n, key=5, return_samples=True)
    d = np.concatenate([[0.0], b - a])  # baycomp's y - x for x, y = a, b
    w = _dirichlet_draws(jax.random.key(5), d.size, 0.5, count=N_WEIGHTS)[:n]
    s = d[:, None] + d[None, :]
    above, below = (np.heaviside(x - 2 * rope, 0.5) for x in (s, -s))
    want = np.stack(
        [np.einsum("ki,ij,kj->k", w, m, w) for m in (below, 1 - above - below, above)], axis=1
    )
    np.testing.assert_allclose(r.samples, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("s", [0.5, 2.0, 0.0])
def test_signrank_weights_are_dirichlet(s):
    # Dirichlet(s, 1, ..., 1) over the pseudo-observation and n = 10 data sets:
    # w_0 ~ Beta(s, n), each data set's weight ~ Beta(1, n - 1 + s).
    n, count = N_SETS, N_WEIGHTS
    w = _dirichlet_draws(jax.random.key(3), n + 1, s, count=count)
    assert w.shape == (count, n + 1)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    total = s + n
    for j, alpha in ((0, s), (1, 1.0), (n, 1.0)):
        mean = alpha / total
        sd = np.sqrt(alpha * (total - alpha) / (total**2 * (total + 1)))
        # 5 standard errors of the mean of `count` weights: a false failure ~ 6e-7
        assert abs(w[:, j].mean() - mean) <= 5 * sd / np.sqrt(count) + 1e-15, (j, s)
    if s == 0:
        assert np.all(w[:, 0] == 0)


def _cases():
    rng = np.random.default_rng(2017)
    n = N_SETS
    base = rng.normal(0.80, 0.05, n)
    return {
        # a clearly better than b: p_left near 1 (baycomp's orientation)
        "a_better": (base + rng.normal(0.03, 0.01, n), base, 0.01),
        # equivalent: differences well inside the rope, p_rope large
        "equivalent": (base + rng.normal(0.0, 0.002, n), base, 0.01),
        # undecided: mass split between the rope and b better (p_right)
        "mixed": (base + rng.normal(-0.01, 0.02, n), base, 0.01),
        "no_rope": (base + rng.normal(0.005, 0.02, n), base, 0.0),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_signrank_probabilities_match_baycomp_within_monte_carlo_error(case):
    a, b, rope = _cases()[case]
    n_samples = 20_000
    r = bayesian.signrank(a, b, rope=rope, n_samples=n_samples, key=11, return_samples=True)
    got = np.array([r.p_left, r.p_rope, r.p_right])
    # baycomp's two_on_multiple(x, y) for the same argument order: x, y = a, b.
    ref = _baycomp_probs(a, b, rope, nsamples=n_samples, random_state=12)
    # Two independent estimates of each probability: 4 standard errors of their
    # difference (a false failure about 6e-5 per probability).
    p = (got + ref) / 2
    se = np.sqrt(p * (1 - p) * 2 / n_samples)
    assert np.all(np.abs(got - ref) <= 4 * se + 1e-12), (got, ref)
    np.testing.assert_allclose(got.sum(), 1.0, rtol=0, atol=1e-12)
    if case == "a_better":
        assert r.p_left > 0.99 and ref[0] > 0.99 and r.p_a_better == r.p_left
    if case == "equivalent":
        assert r.p_rope > 0.95
    if case == "mixed":
        assert 0.05 < r.p_right < 0.95 and 0.05 < r.p_rope < 0.95
    if case == "no_rope":
        assert r.p_rope == 0 and np.all(r.samples[:, 1] == 0)


@pytest.mark.parametrize("rope", [0.0, 0.01])
def test_signrank_swapping_the_learners_swaps_left_and_right_exactly(rope):
    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    kw = dict(rope=rope, n_samples=N_SAMPLES, key=4, return_samples=True)
    r = bayesian.signrank(a, b, **kw)
    s = bayesian.signrank(b, a, **kw)
    np.testing.assert_array_equal(s.samples, r.samples[:, ::-1])
    assert (s.p_left, s.p_rope, s.p_right) == (r.p_right, r.p_rope, r.p_left)
    left = bayesian.signrank(a, b, **kw, prior_place="left")
    right = bayesian.signrank(b, a, **kw, prior_place="right")
    np.testing.assert_array_equal(right.samples, left.samples[:, ::-1])


def test_signrank_prior_place_moves_mass_to_its_side():
    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    kw = dict(rope=0.01, n_samples=N_SAMPLES, key=8, prior_strength=1.0, return_samples=True)
    mid = bayesian.signrank(a, b, **kw).samples
    left = bayesian.signrank(a, b, prior_place="left", **kw).samples
    right = bayesian.signrank(a, b, prior_place="right", **kw).samples
    # Same weights; the pairs with the pseudo-observation move to its side (rounding
    # is monotone, so the inequality holds exactly), and strictly on average.
    assert np.all(left[:, 0] >= mid[:, 0]) and np.all(right[:, 2] >= mid[:, 2])
    assert left[:, 0].mean() > mid[:, 0].mean() and right[:, 2].mean() > mid[:, 2].mean()


def test_signrank_same_key_same_samples_for_any_batch_size():
    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    kw = dict(rope=0.01, n_samples=N_SAMPLES, return_samples=True)
    # one partial block of 4096 (the default), 572 blocks of 7 (the last partial), 4 of 1000
    runs = [bayesian.signrank(a, b, **kw, key=9, batch_size=bs) for bs in (None, 7, 1000)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.samples, runs[0].samples)
        assert (r.p_left, r.p_rope, r.p_right) == (runs[0].p_left, runs[0].p_rope, runs[0].p_right)
    r = runs[0]
    assert r.samples.shape == (N_SAMPLES, 3) and r.n_samples == N_SAMPLES
    assert r.n_datasets == N_SETS
    assert r.seed == 9 and r.rope == 0.01 and r.prior_place == "rope"
    np.testing.assert_allclose(r.samples.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert r.p_left + r.p_rope + r.p_right == pytest.approx(1.0, abs=1e-15)
    # a typed key and the recorded seed reproduce the run; another key does not
    typed = bayesian.signrank(a, b, **kw, key=jax.random.key(9))
    np.testing.assert_array_equal(typed.samples, r.samples)
    other = bayesian.signrank(a, b, **kw, key=10)
    assert not np.array_equal(other.samples, r.samples)
    fresh = bayesian.signrank(a, b, **kw)
    again = bayesian.signrank(a, b, **kw, key=fresh.seed)
    np.testing.assert_array_equal(again.samples, fresh.samples)


def test_signrank_draws_compile_nothing():
    # Issue 37: the samples are drawn on the host, so no data size (the sorted sums' 800
    # data sets included), n_samples or option compiles or traces a program.
    a, b = RNG.normal(0.8, 0.05, 800), RNG.normal(0.8, 0.05, 800)
    with CompileCounter() as counter:
        for n, n_samples in ((9, 1), (10, N_SAMPLES), (10, 3 * 4096 + 5), (800, 7)):
            bayesian.signrank(a[:n], b[:n], rope=0.02, n_samples=n_samples, key=1)
        bayesian.signrank(a[:12], b[:12], rope=0.0, n_samples=99, prior_strength=2.0, key=2)
        bayesian.signrank(a[:12], b[:12], rope=0.01, n_samples=99, key=jax.random.key(2))
    assert (counter.traces, counter.compiles) == (0, 0)


@pytest.mark.parametrize("partitionable", [True, False])
def test_host_key_words_are_jax_threefry_bits(partitionable):
    # The host's threefry-2x32 (numpy) against jax.random's: bits(fold_in(key, b), n) for
    # several keys, blocks and widths, in both of jax's layouts of the bits.
    blocks = np.array([0, 1, 2, 7, 4095, 2**20 + 3, 2**31 - 1], np.int64)
    with jax.enable_x64(True), jax.threefry_partitionable(partitionable):
        for seed in (0, 1, 12345, 2**32 + 7, 2**63 - 1):
            key = jax.random.key(seed)
            for n_keys in (1, 2, 3, 4, 5):
                want = np.asarray(krandom.block_keys(key, blocks, n_keys))
                got = _random.block_key_words(key, blocks, n_keys)
                assert got.dtype == np.uint32
                np.testing.assert_array_equal(got, want)
    # The counter hash, numpy and jnp: the same words.
    x = np.arange(0, 2**32 - 1, 2**32 // 5000, dtype=np.uint32)
    k0, k1 = np.uint32(0x9E3779B9), np.uint32(0x5BD1E995)
    np.testing.assert_array_equal(
        krandom.keyed_words(k0, k1, x, xp=np), np.asarray(jax.jit(krandom.keyed_words)(k0, k1, x))
    )


def test_signrank_weights_read_the_library_stream():
    # Sample g's data-set weights are normalised -log U of the stream's words (key words of
    # fold_in(key, g // 4096), counters 2 j 4096 + g % 4096 and 4096 further on), computed
    # here with jax's own threefry and the jnp hash; samples from 4094 to 4101 straddle two
    # key blocks. The pseudo-observation's weight is absent (prior_strength=0).
    key, m, first, count = jax.random.key(6), 5, 4094, 8
    w = draws.dirichlet_weights(key, m, 0.0, first, count)
    with jax.enable_x64(True):
        keys, local = krandom.draw_keys(key, jnp.int64(first), count, n_keys=4)
        j = np.arange(1, m, dtype=np.uint32)[:, None]
        hi, lo = (
            np.asarray(krandom.keyed_words(keys[None, :, 0], keys[None, :, 1], c + local[None]))
            for c in (2 * j * 4096, (2 * j + 1) * 4096)
        )
    e = -np.log(((hi >> 5) * 2.0**26 + (lo >> 6) + 0.5) * 2.0**-53).T
    assert np.all(w[:, 0] == 0)
    np.testing.assert_allclose(w[:, 1:], e / e.sum(axis=1, keepdims=True), rtol=1e-14)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (([0.1, np.nan, 0.3], [0.2, 0.2, 0.2]), {}, ValueError, "`a` contains NaN"),
        (([0.1, 0.2, 0.3], [0.2, np.inf, 0.2]), {}, ValueError, "`b` contains inf"),
        (([0.1, 0.2, 0.3], [0.2, 0.2]), {}, ValueError, "same shape"),
        (([0.1], [0.2]), {}, ValueError, "at least 2 data sets"),
        (([[0.1, 0.2]], [[0.2, 0.3]]), {}, ValueError, "`a` must be 1-dimensional"),
        ((["x", "y"], [0.2, 0.3]), {}, TypeError, "`a` must be an array of real"),
        (([0.1, 0.2], [0.2, 0.3]), dict(rope=-0.1), ValueError, "`rope`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(rope=np.nan), ValueError, "`rope`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(rope="0.1"), TypeError, "`rope`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(n_samples=0), ValueError, "`n_samples`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(n_samples=10.0), TypeError, "`n_samples`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(prior_strength=-1.0), ValueError, "`prior_strength`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(prior_place="middle"), ValueError, "`prior_place`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(prior_place=None), TypeError, "`prior_place`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(batch_size=0), ValueError, "`batch_size`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(key=-1), ValueError, "`key`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(return_samples="yes"), TypeError, "`return_samples`"),
        (([0.1, 0.2], [0.2, 0.3]), dict(progress=1), TypeError, "`progress`"),
        ((np.zeros(2**19), np.ones(2**19)), dict(n_samples=1), ValueError, "at most 524,287"),
    ],
)
def test_signrank_bad_input_is_named(args, kwargs, error, match):
    kwargs = {"rope": 0.01, **kwargs}
    with pytest.raises(error, match=match):
        bayesian.signrank(*args, **kwargs)


def test_signrank_result_is_readable_and_a_pytree():
    kw = dict(rope=0.01, n_samples=N_SAMPLES, key=0)
    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    r = bayesian.signrank(a, b, **kw, return_samples=True)
    text = repr(r)
    assert text.startswith("SignRankResult(p_left=") and "seed=0" in text
    leaves = jax.tree_util.tree_leaves(r)
    assert len(leaves) == 4 and leaves[3].shape == (N_SAMPLES, 3)
    lean = bayesian.signrank(a, b, **kw)
    assert lean.samples is None and len(jax.tree_util.tree_leaves(lean)) == 3
    assert (lean.p_left, lean.p_rope, lean.p_right) == (r.p_left, r.p_rope, r.p_right)


def test_signrank_refuses_jit_with_a_clear_error():
    b = jnp.asarray([0.7, 0.85, 0.7])
    with pytest.raises(TypeError, match=r"cannot run under jax\.jit"):
        jax.jit(lambda a: bayesian.signrank(a, b, rope=0.01, n_samples=10, key=0).p_left)(b)


def test_winner_shares_split_ties_evenly():
    samples = jnp.asarray(
        [[0.5, 0.0, 0.5], [0.2, 0.5, 0.3], [1 / 3, 1 / 3, 1 / 3], [0.4, 0.4, 0.2], [0.1, 0.0, 0.9]]
    )
    # Benavoli et al.'s tutorial code (BayesianSignedRank.R): each winner gets 1 / winners.
    want = [[3, 0, 3], [0, 6, 0], [2, 2, 2], [3, 3, 0], [0, 0, 6]]
    np.testing.assert_array_equal(draws.winner_shares(np.asarray(samples)), want)


@pytest.mark.parametrize("key", [0, 1])
def test_signrank_identical_learners_are_symmetric(key):
    # Issue 29: a == b with rope = 0 makes every sample (t, 0, t); baycomp's Posterior.probs
    # (argmax) gives each tie to the left, so the result was (1, 0, 0), and again with a
    # and b swapped. Ties split evenly: 1/2 each side, and a swap exchanges nothing.
    a = RNG.normal(0.8, 0.05, N_SETS)
    n = N_SAMPLES
    r = bayesian.signrank(a, a, rope=0.0, n_samples=n, key=key, return_samples=True)
    np.testing.assert_array_equal(r.samples[:, 0], r.samples[:, 2])
    assert np.all(r.samples[:, 1] == 0)
    assert (r.p_left, r.p_rope, r.p_right) == (0.5, 0.0, 0.5)
    b = a + np.r_[0.01, -0.01, np.zeros(N_SETS - 2)]  # not identical: no ties, a swap mirrors
    r = bayesian.signrank(a, b, rope=0.0, n_samples=n, key=key)
    s = bayesian.signrank(b, a, rope=0.0, n_samples=n, key=key)
    assert (s.p_left, s.p_rope, s.p_right) == (r.p_right, r.p_rope, r.p_left)
    # Inside a rope, identical learners are equivalent in every sample.
    r = bayesian.signrank(a, a, rope=0.01, n_samples=n, key=key)
    assert (r.p_left, r.p_rope, r.p_right) == (0.0, 1.0, 0.0)


def test_signrank_memory_does_not_grow_with_n_samples():
    # Issue 29: every sample was kept (3.4 GB at 2^26). Now the blocks' winners are summed
    # as they come; numpy holds one block's arrays (tracemalloc sees numpy's memory), the
    # same for 2^14 samples as for 2^18, and no (n_samples, 3) array.
    import tracemalloc

    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    kw = dict(rope=0.01, key=0)
    peaks = []
    for n_samples in (2**14, 2**18):
        tracemalloc.start()
        try:
            r = bayesian.signrank(a, b, n_samples=n_samples, **kw)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    # the samples alone: 2^18 * 3 * 8 bytes = 6 MiB; a block: a few (1024, 11) arrays. The
    # peaks vary by up to ~100 KB from run to run at either size (numpy's temporaries; it
    # failed once under xdist at +101 KB with a 64 KB slack): a slack of 256 KB, 1/24 of
    # what keeping the samples would add.
    assert peaks[1] < 2**22 and peaks[1] <= peaks[0] + 2**18, peaks
    assert r.samples is None and r.p_left + r.p_rope + r.p_right == pytest.approx(1.0)
    # The same probabilities as from the kept samples (argmax counts; no ties here).
    k = bayesian.signrank(a, b, n_samples=2**12, return_samples=True, **kw)
    lean = bayesian.signrank(a, b, n_samples=2**12, **kw)
    counts = np.bincount(np.argmax(k.samples, axis=1), minlength=3) / 2**12
    assert (lean.p_left, lean.p_rope, lean.p_right) == tuple(counts)


def test_signrank_many_data_sets_sum_the_sorted_pairs():
    # The sums run over the sorted differences (the pair indicators would take 3 m^2
    # doubles: 412 GB at 100,000 data sets); against baycomp's pair sums on the same
    # weights. Differences in hundredths: many pairs exactly on the rope.
    n = 800
    a, b = np.round(RNG.normal(0.8, 0.05, n), 2), np.round(RNG.normal(0.8, 0.05, n), 2)
    r = bayesian.signrank(a, b, rope=0.01, n_samples=6, key=3, return_samples=True)
    w = _dirichlet_draws(jax.random.key(3), n + 1, 0.5, count=6)
    ref = _baycomp_samples(a, b, 0.01, w)
    np.testing.assert_allclose(r.samples, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [0.3, 1.0, 2.5])
def test_gamma_draws_follow_scipys_gamma(shape):
    # The pseudo-observation's Gamma(s) (Marsaglia & Tsang) against scipy.stats.gamma's
    # CDF: a Kolmogorov-Smirnov test of 20,000 draws, fixed keys (false failure 1e-4).
    from scipy import stats

    n = 20_000
    local = np.arange(n, dtype=np.uint32) % 4096
    k0 = np.repeat(np.arange(1, 6, dtype=np.uint32) * 0x9E3779B9, 4096)[:n]
    g = draws.gamma(k0, k0 ^ np.uint32(0x5BD1E995), local, shape)
    assert np.all(g > 0) and np.all(np.isfinite(g))
    assert stats.kstest(g, stats.gamma(shape).cdf).pvalue > 1e-4
    mean, var = g.mean(), g.var()
    se = np.sqrt(shape * (shape + 1) * (shape + 2) * (shape + 3) / n)  # sd of g^2 / sqrt(n), bound
    assert abs(mean - shape) <= 5 * np.sqrt(shape / n)
    assert abs(var + mean**2 - shape * (shape + 1)) <= 5 * se


def test_signrank_progress_reports_samples_and_the_result_does_not_change(monkeypatch):
    from jaxtests import _engine

    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    kw = dict(rope=0.01, n_samples=3 * 4096 + 5, key=2, return_samples=True)
    one = bayesian.signrank(a, b, **kw)
    seen = []
    # a block per chunk: four chunks of 4096 (the default blocks: 1024, the same samples)
    monkeypatch.setattr(_engine, "_CHUNK_SECONDS", 1e-9)
    r = bayesian.signrank(
        a, b, **kw, batch_size=4096, progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [
        (0, kw["n_samples"]),
        (4096, kw["n_samples"]),
        (8192, kw["n_samples"]),
        (12288, kw["n_samples"]),
        (kw["n_samples"], kw["n_samples"]),
    ]
    np.testing.assert_array_equal(r.samples, one.samples)
    assert (r.p_left, r.p_rope, r.p_right) == (one.p_left, one.p_rope, one.p_right)


def test_signrank_an_interrupt_between_chunks_stops_it(monkeypatch):
    # Ctrl-C is seen between chunks (a KeyboardInterrupt from a progress report here).
    from jaxtests import _engine

    a, b = RNG.normal(0.8, 0.05, N_SETS), RNG.normal(0.8, 0.05, N_SETS)
    monkeypatch.setattr(_engine, "_CHUNK_SECONDS", 1e-9)
    reports = []

    def interrupt(done, total):
        reports.append(done)
        if len(reports) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bayesian.signrank(
            a, b, rope=0.01, n_samples=5 * 4096, key=0, batch_size=4096, progress=interrupt
        )
    assert reports == [0, 4096]
