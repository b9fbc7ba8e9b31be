"""Issue 41: TF32 for the decision dot of the ridge label stream, proven on the CPU.

No GPU here: TF32 is emulated (both inputs rounded to 11 significant bits, to
nearest even as NVIDIA converts, or truncated; then a true float32 dot), its
error checked against ``tf32_decision_bound`` with exact sums, and the real
kernel run with the emulated dot and its recheck against today's counts.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jaxtests.kernels import labels as klabels
from jaxtests.kernels import ridge_partition as krp

from jaxtests import _sanity_streams

MODES = ("nearest", "truncate")


def _tf32(x, mode, bits=11):
    """float32 ``x`` rounded to ``bits`` significant bits (the TF32 conversion: 11)."""
    drop = 24 - bits
    b = lax.bitcast_convert_type(x, jnp.uint32)
    if mode == "nearest":  # round half to even on the dropped bits
        b = b + jnp.uint32((1 << (drop - 1)) - 1) + ((b >> jnp.uint32(drop)) & jnp.uint32(1))
    b = b & jnp.uint32((0xFFFFFFFF >> drop) << drop)
    return lax.bitcast_convert_type(b, jnp.float32)


def _emulated(M32, Tc, mode, bits=11):
    """TF32 decisions, emulated: rounded inputs, true float32 products and sums."""
    M, T = _tf32(M32, mode, bits), _tf32(Tc, mode, bits)
    return jnp.einsum("kmd,kdr->kmr", M, T, precision=lax.Precision.HIGHEST)


def _reference_round(x, mode):
    """numpy: float32 ``x`` to 11 significant bits by frexp (independent of the bit trick)."""
    m, e = np.frexp(x.astype(np.float64))  # x = m 2^e, 0.5 <= |m| < 1: 11 bits of m
    scaled = m * 2.0**11
    r = np.round(scaled) if mode == "nearest" else np.trunc(scaled)  # np.round: half to even
    return (r * 2.0 ** (e - 11)).astype(np.float32)


def _adversarial(rng, K, n_lanes):
    """Rows ``m (n_lanes, K)`` and columns ``t (K, n_lanes)`` float32: cancellation, near-zero
    dots, exponents over 2^+-20, values just off the 11-bit grid (round-half cases)."""
    m = rng.normal(size=(n_lanes, K)) * 2.0 ** rng.integers(-20, 20, size=(n_lanes, 1))
    t = rng.normal(size=(K, n_lanes)) * 2.0 ** rng.integers(-20, 20, size=(1, n_lanes))
    # cancellation: the last term undoes the sum of the others (dot near 0)
    head = np.einsum("lk,kl->l", m[:, :-1], t[:-1])
    m[: n_lanes // 2, -1] = -head[: n_lanes // 2] / t[-1, : n_lanes // 2]
    # halfway and just-off-grid values: 11 bits plus one half-ulp (ties), or nearly
    grid = np.round(rng.normal(size=(n_lanes // 4, K)) * 2**10)
    m[-(n_lanes // 4) :] = (
        grid + rng.choice([0.5, 0.5 - 2**-13, 0.5 + 2**-13], grid.shape)
    ) / 2**10
    return m.astype(np.float32), t.astype(np.float32)


def _fsum_rows(m, t):
    """Exact products (float32 x float32 fits float64) summed by fsum: the exact dot to 2^-53."""
    prod = m.astype(np.float64) * t.T.astype(np.float64)
    return np.array([math.fsum(p) for p in prod]), np.abs(prod).sum(1)


@pytest.mark.parametrize("mode", MODES)
def test_tf32_round_equals_the_frexp_reference(mode):
    rng = np.random.default_rng(0)
    x = (rng.normal(size=4096) * 2.0 ** rng.integers(-60, 60, 4096)).astype(np.float32)
    grid = np.round(rng.normal(size=1024) * 2**10) / 2**10  # exact ties below
    x = np.concatenate([x, (grid + 2.0**-11).astype(np.float32), np.float32([0, -0.0, 1, -3])])
    got = np.asarray(_tf32(jnp.asarray(x), mode))
    np.testing.assert_array_equal(got, _reference_round(x, mode))
    assert np.all(np.abs(got - x) <= np.abs(x) * 2.0**-10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("K", [2, 7, 65, 4097])
def test_emulated_tf32_error_within_the_bound(mode, K):
    rng = np.random.default_rng(K)
    m, t = _adversarial(rng, K, 512)
    f = _emulated(jnp.asarray(m)[None], jnp.asarray(t)[None], mode)[0]
    f = np.diagonal(np.asarray(f, np.float64))  # lane l: row l of m with column l of t
    exact, S = _fsum_rows(m, t)
    err = np.abs(f - exact)
    bound = krp.tf32_decision_bound(K) * S
    assert np.all(err <= bound + 2.0**-52 * np.abs(exact))
    # the kernel's S from the same fast dot of |m|, |t| is at least (1 - v)^2 (1 - gamma) S
    mag = _emulated(jnp.abs(jnp.asarray(m))[None], jnp.abs(jnp.asarray(t))[None], mode)[0]
    mag = np.diagonal(np.asarray(mag, np.float64))
    lower = (1 - krp._TF32_INPUT) ** 2 * (1 - krp._gamma(K, krp._TF32_ADD))
    assert np.all(mag >= lower * S)
    # the bound is not vacuous: rounded inputs move some dots by a fair part of it
    # (at large K its accumulation term, for truncating adders, dominates)
    assert np.max(err / bound) > (0.05 if K <= 65 else 0.005)


def test_truncating_accumulation_within_the_bound():
    # tensor cores may truncate each addition (Fasi et al. 2021): a sequential float32
    # sum of TF32 products rounded toward zero at every step stays within the bound
    rng = np.random.default_rng(7)
    K = 1024
    m, t = _adversarial(rng, K, 256)
    mr = _reference_round(m, "truncate").astype(np.float64)
    tr = _reference_round(t, "truncate").astype(np.float64)
    acc = np.zeros(m.shape[0], np.float32)
    for k in range(K):
        s = acc.astype(np.float64) + mr[:, k] * tr[k]  # exact product (22 bits)
        y = s.astype(np.float32)
        acc = np.where(np.abs(y) > np.abs(s), np.nextafter(y, np.float32(0)), y)
    exact, S = _fsum_rows(m, t)
    bound = krp.tf32_decision_bound(K) * S
    assert np.all(np.abs(acc - exact) <= bound + 2.0**-52 * np.abs(exact))


@pytest.mark.parametrize("many", [False, True])
def test_recheck_replaces_the_flagged_lanes_by_the_true_product(many):
    # the gather (few flagged lanes) and the full product (more than a 32nd) give the
    # float32 product on flagged lanes and leave every other lane as it was
    rng = np.random.default_rng(3)
    K, m, d, R = 3, 40, 5, 64
    M32 = jnp.asarray(rng.normal(size=(K, m, d + 1)), jnp.float32)
    Tc = jnp.asarray(rng.normal(size=(K, d + 1, R)), jnp.float32)
    f = jnp.asarray(rng.normal(size=(K, m, R)) * 100, jnp.float32)
    flag = np.abs(np.asarray(f)) <= (150.0 if many else 1.0)
    got = np.asarray(jax.jit(krp._rechecked)(M32, Tc, f, jnp.asarray(flag)))
    full = np.asarray(jnp.einsum("kmd,kdr->kmr", M32, Tc, precision=lax.Precision.HIGHEST))
    assert (flag.sum() > K * m * R // 32) == many and flag.sum() > 0
    np.testing.assert_array_equal(got[~flag], np.asarray(f)[~flag])
    # a true float32 dot: within gamma_{d+1}(2^-24) of the exact one, as the full product
    M64, T64 = np.asarray(M32, np.float64), np.asarray(Tc, np.float64)
    exact = np.einsum("kmd,kdr->kmr", M64, T64)
    S = np.einsum("kmd,kdr->kmr", np.abs(M64), np.abs(T64))
    gamma = (d + 1) * 2.0**-24 / (1 - (d + 1) * 2.0**-24)
    assert np.all(np.abs(got[flag] - exact[flag]) <= gamma * S[flag] * (1 + 1e-9))
    # XLA:CPU adds a gathered lane's terms in the full product's order; a GPU's matrix unit
    # does not (an H200, 2026-11-28: 32 of 72 lanes 1-2 ulp apart). The stream needs only the
    # bound above: a lane outside the band has the exact product's sign in either order, and
    # one inside it is decided in float64 (same scores as the CPU: bench_ridge_tf32).
    if jax.default_backend() == "cpu":
        np.testing.assert_array_equal(got[flag], full[flag])


def _data(rng, n, kind):
    """``cancelling``: two nearly collinear large features (ridge weights of opposite
    signs that cancel), noise features and weak labels, many decisions near 0;
    ``plain``: standard normal features with a signal."""
    if kind == "plain":
        X = rng.normal(size=(n, 6))
        return X, np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
    z = rng.normal(size=n)
    X = np.column_stack(
        [1e3 * z, 1e3 * z + rng.normal(size=n), rng.normal(size=(n, 3)), 1e-3 * rng.normal(size=n)]
    )
    return X, np.where(rng.normal(size=n) > 0, 1, -1)


def _counts(part, labels, decision_fn):
    fn = functools.partial(krp.ridge_partition_counts, decision_fn=decision_fn)
    return [np.asarray(c) for c in jax.jit(fn)(part, labels)]


@pytest.mark.parametrize("kind", ["cancelling", "plain"])
@pytest.mark.parametrize("share", [1, 10**9])  # every flagged lane gathered; the full product
def test_stream_counts_with_emulated_tf32_and_recheck_equal_todays(kind, share, monkeypatch):
    rng = np.random.default_rng(11)
    sizes = (30, 30, 30, 29, 29)
    X, y = _data(rng, sum(sizes), kind)
    part = jax.tree.map(jnp.asarray, krp.ridge_partition(X, sizes, 1.0, xp=np))
    R = 512
    words = klabels.draw_binary_labels(jax.random.key(5), R, int((y > 0).sum()), sizes)
    labels = klabels.unpack_labels(words).reshape(len(sizes), klabels.label_slots(sizes), R)
    today = _counts(part, labels, None)
    monkeypatch.setattr(krp, "_RECHECK_SHARE", share)
    flagged = []  # lanes rechecked per call: 2 or more, so share = 10^9 (cap 1) takes
    recheck = krp._rechecked  # the full product and share = 1 the gather

    def spy(M32, Tc, f, flag):
        jax.debug.callback(lambda k: flagged.append(int(k)), jnp.sum(flag))
        return recheck(M32, Tc, f, flag)

    monkeypatch.setattr(krp, "_rechecked", spy)
    for mode in MODES:
        got = _counts(part, labels, functools.partial(_emulated, mode=mode))
        for a, b in zip(today, got, strict=True):
            np.testing.assert_array_equal(a, b)
    assert len(flagged) == 2 and min(flagged) >= 2
    # the data need the recheck, and the test can fail: without it (the emulated TF32
    # decisions as they are) the counts of some label vectors change
    monkeypatch.setattr(krp, "_rechecked", lambda M32, Tc, f, flag: f)
    for mode in MODES:
        got = _counts(part, labels, functools.partial(_emulated, mode=mode))
        assert any(np.any(a != b) for a, b in zip(today, got, strict=True)), mode


def _breast_cancer(R):
    """The benchmark's data, its 5-fold partition and ``R`` label vectors in fold-slot order."""
    from jaxtests import datasets

    X, y = datasets.load_breast_cancer()
    sizes = (114, 114, 114, 114, 113)
    part = jax.tree.map(jnp.asarray, krp.ridge_partition(X, sizes, 1.0, xp=np))
    words = klabels.draw_binary_labels(jax.random.key(6), R, int((y > 0).sum()), sizes)
    labels = klabels.unpack_labels(words).reshape(len(sizes), klabels.label_slots(sizes), R)
    return X, part, labels


def test_breast_cancer_counts_with_emulated_tf32_equal_todays():
    # the benchmark's data (30 features of scales 1e-3 to 4e3): about 1% of the lanes
    # are rechecked (a 32nd would be gathered)
    _, part, labels = _breast_cancer(1024)
    today = _counts(part, labels, None)
    for mode in MODES:
        got = _counts(part, labels, functools.partial(_emulated, mode=mode))
        for a, b in zip(today, got, strict=True):
            np.testing.assert_array_equal(a, b)


def _decision_inputs(part, labels):
    """``(M32, Tc)`` of the decision dot of ``ridge_partition_counts`` (its own steps)."""
    d = part.M.shape[-1]
    S32 = jnp.einsum("kdm,kmr->kdr", part.XT, labels, precision=lax.Precision.HIGHEST)
    S = S32[:, :d].astype(jnp.float64) + S32[:, d:-1].astype(jnp.float64)
    S1 = S32[:, -1].astype(jnp.float64)
    T1 = S1.sum(0)[None] - S1
    T = S.sum(0)[None] - S - part.xbar[:, :, None] * T1[:, None, :]
    c = 2 * T1 / part.n_train[:, None] - 1
    return part.M32, jnp.concatenate([T, c[:, None, :]], axis=1).astype(jnp.float32)


def _stream_lowered(platform, tf32):
    """StableHLO text of the compiled ridge stream lowered for ``platform``."""
    rng = np.random.default_rng(2)
    sizes = (30, 30, 30, 29, 29)
    X, y = _data(rng, sum(sizes), "cancelling")
    part = jax.tree.map(jnp.asarray, krp.ridge_partition(X, sizes, 1.0, xp=np))
    stream = _sanity_streams._RidgeStream.of(sizes, 256, ("accuracy",), platform)
    assert stream.tf32 == tf32
    args = (
        part,
        jnp.zeros((stream.max_blocks, 4), jnp.uint32),
        jnp.int32(1),
        jnp.asarray([int((y > 0).sum())], jnp.uint32),
        jnp.asarray(sizes, jnp.float64),
        jnp.asarray(klabels.slot_masks(sizes)),
        jnp.asarray(klabels.label_widths(sizes)),
        jnp.zeros((4, len(sizes))),
    )
    traced = _sanity_streams._ridge_stream.trace(*args, stream=stream)
    return traced.lower(lowering_platforms=(platform,)).as_text()


def _dots(text, dtype="f32"):
    """The ``dot_general`` lines of ``text`` whose result is ``dtype``."""
    return [
        line
        for line in text.splitlines()
        if "stablehlo.dot_general" in line and line.rstrip().endswith(f"{dtype}>")
    ]


def test_cuda_lowering_has_only_the_decision_dot_in_tf32():
    text = _stream_lowered("cuda", True)
    dots = _dots(text)
    fast = [line for line in dots if "precision = [DEFAULT, DEFAULT]" in line]
    # the decision dot (K, m, d + 1) x (K, d + 1, R) and its magnitudes |M32| . |Tc|:
    # 5 folds, 32 slots, 6 features + 1
    assert len(fast) == 2
    assert all("(tensor<5x32x7xf32>, tensor<5x7x256xf32>)" in line for line in fast)
    others = [line for line in dots if line not in fast]
    # label sums, count dot, both recheck products, the labels' cum and running counts
    assert len(others) >= 6
    assert all("precision = [HIGHEST, HIGHEST]" in line for line in others)
    # the float64 repair's product is float64 (no TF32 on any GPU)
    assert len(_dots(text, "f64")) == 1
    assert len(_dots(text, "f64")) + len(dots) == text.count("stablehlo.dot_general")


def test_cpu_lowering_keeps_every_dot_highest():
    dots = _dots(_stream_lowered("cpu", False))
    assert dots and all("precision = [HIGHEST, HIGHEST]" in line for line in dots)
    assert [_sanity_streams._tf32_decisions(p) for p in ("cpu", "cuda", "rocm", "tpu")] == [
        False,
        True,
        True,
        False,
    ]


def test_forced_tf32_stream_gives_the_same_scores_on_the_cpu(monkeypatch):
    # the override runs the TF32 program (decision dot of DEFAULT precision, then the
    # recheck) on the CPU, where DEFAULT is true float32: this checks the wiring of the
    # stream, not TF32 (the emulation tests above do that)
    from jaxtests import models
    from jaxtests._sanity import permutation_test_score

    rng = np.random.default_rng(8)
    X, y = _data(rng, 149, "plain")
    kw = dict(n_permutations=300, key=4, scoring=("accuracy", "f1"))
    monkeypatch.setenv("JAXTESTS_RIDGE_TF32", "0")
    today = permutation_test_score(models.ridge_classifier(), X, y, **kw)
    monkeypatch.setenv("JAXTESTS_RIDGE_TF32", "1")
    assert _sanity_streams._RidgeStream.of((30, 29), 32, ("accuracy",), "cpu").tf32
    traced = []  # the stream program of this layout is traced here first, with the recheck
    recheck = krp._rechecked
    monkeypatch.setattr(krp, "_rechecked", lambda *a: traced.append(1) or recheck(*a))
    fast = permutation_test_score(models.ridge_classifier(), X, y, **kw)
    assert traced
    np.testing.assert_array_equal(fast.permutation_scores, today.permutation_scores)
    np.testing.assert_array_equal(fast.pvalue, today.pvalue)


def test_breast_cancer_few_vectors_are_decided_again_and_counts_are_float64s(monkeypatch):
    # The bound of each decision from the dot of |M32|, |Tc| (not |M_k|_1 |T|_inf, which held
    # 3,942 of these 4,096 label vectors within it: an H200 spent 0.45 s of 10^5 permutations
    # deciding them again in float64, 8 at a time); the counts stay float64's: those of every
    # vector decided in float64 (a bound made huge).
    R = 4096
    X, part, labels = _breast_cancer(R)
    unsure, count = [], krp.running_count

    def spy(u):
        out = count(u)
        jax.debug.callback(lambda k: unsure.append(int(k)), out[-1])
        return out

    monkeypatch.setattr(krp, "running_count", spy)
    today = _counts(part, labels, None)
    assert 0 < unsure[-1] <= R // 50  # 34 here
    d, gamma = X.shape[1], krp._gamma
    huge = lambda k, u: 1e30 if (k, u) == (d + 4, 2.0**-24) else gamma(k, u)  # noqa: E731
    monkeypatch.setattr(krp, "_gamma", huge)
    every = _counts(part, labels, None)
    assert unsure[-1] == R
    for a, b in zip(today, every, strict=True):
        np.testing.assert_array_equal(a, b)
