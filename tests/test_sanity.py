"""permutation_test_score: Ojala & Garriga test 1 (seed 003) against scikit-learn.

Compilation dominates the cost of these tests: they share one dataset (148
instances, 5 stratified folds of 30, 30, 30, 29, 29, so label slots are
padded), one scoring tuple and batch shapes, so the sort-free ridge stream (which
runs a traced number of label blocks) and the generic learner paths are each
compiled once.
"""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jaxtests.kernels import labels as klabels
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import StratifiedKFold
from sklearn.model_selection import permutation_test_score as sk_pts
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from jaxtests import _sanity_streams, datasets, models
from jaxtests._sanity import permutation_test_score
from jaxtests._sanity_scores import count_scores
from jaxtests._splitters import KFold, make_splits, padded_test_index

SCORING = ("accuracy", "f1")  # shared by the tests that go through the ridge stream


@pytest.fixture(scope="module")
def data():
    X, y = datasets.load_breast_cancer()
    X = (X - X.mean(0)) / X.std(0)
    return X[:148, :6], y[:148]


def test_ridge_equals_sklearn_same_folds_and_permutations(data):
    X, y = data
    folds = list(StratifiedKFold(5).split(X, y))
    B = 64  # as the other ridge tests: one compiled batch of 64 fits
    # sklearn's _shuffle draws random_state.permutation(n) once per permutation, in order
    rs = np.random.RandomState(7)
    perms = np.stack([rs.permutation(len(y)) for _ in range(B)])
    ours = permutation_test_score(
        models.ridge_classifier(1.0), X, y, cv=folds, permutations=perms, key=0
    )
    # the built-in standardises on each training fold (issue 28.1): StandardScaler's pipeline
    pipe = make_pipeline(StandardScaler(), RidgeClassifier(1.0))
    s, ps, p = sk_pts(pipe, X, y, cv=folds, n_permutations=B, random_state=7)
    np.testing.assert_allclose(ours.statistic, s, atol=1e-8)
    np.testing.assert_allclose(ours.permutation_scores, ps, atol=1e-8)
    np.testing.assert_allclose(ours.pvalue, p, rtol=1e-12)
    # the sklearn-estimator fallback reproduces the same numbers
    calls = []
    fb = permutation_test_score(
        pipe,
        X,
        y,
        cv=folds,
        permutations=perms[:3],
        progress=lambda i, n: calls.append((i, n)),
    )
    np.testing.assert_allclose(fb.permutation_scores, ps[:3], atol=1e-8)
    assert calls[-1] == (3, 3)


# ---------------------------------------------------------------- label draws


def _planes_of_all_keys(n, b):
    """Bit planes ``(b, 1, R)`` holding every assignment of ``b``-bit keys to ``n`` positions."""
    R = 2 ** (b * n)
    keys = (np.arange(R)[None, :] >> (b * np.arange(n)[:, None])) & (2**b - 1)  # (n, R)
    planes = np.zeros((b, 1, 1, R), np.uint32)
    for j in range(b):  # plane j holds key bit b - 1 - j
        planes[j, 0, 0] = (((keys >> (b - 1 - j)) & 1) << np.arange(n)[:, None]).sum(0)
    return planes, keys


@pytest.mark.parametrize("n_pos", [1, 2, 3])
def test_radix_select_is_exact_by_enumeration(n_pos):
    # every assignment of 4-bit keys to 4 positions (65,536, equally likely):
    # the draw keeps {key < v} and a uniform s-subset of the ties {key = v}, so the
    # probability of a set A is sum over keys of [below ⊆ A ⊆ below | tie] / C(g, s).
    # Exact integer arithmetic: scale by lcm of the C(g, s) (12 for g <= 4).
    n, b = 4, 4  # radix_select is exact for any key width; 4 bits keep 2^16 cases
    planes, keys = _planes_of_all_keys(n, b)
    below, n_below, tie = jax.jit(klabels.radix_select)(
        jnp.asarray(planes), np.array([[2**n - 1]], np.uint32), np.array([n_pos])
    )
    below, n_below, tie = (
        np.asarray(a).reshape(-1).astype(np.int64) for a in (below, n_below, tie)
    )
    g = np.array([bin(t).count("1") for t in tie])
    s = n_pos - n_below
    assert np.all((below & tie) == 0) and np.all((s >= 1) & (s <= g))
    # below holds exactly the positions whose key is smaller than the tie value
    first = np.argmax((tie[None] >> np.arange(n)[:, None]) & 1, axis=0)
    v = keys[first, np.arange(keys.shape[1])]
    assert np.all(below == ((keys < v[None]) << np.arange(n)[:, None]).sum(0))
    lcm = 12
    weight = lcm // np.array([math.comb(gi, si) for gi, si in zip(g, s)])
    for subset in itertools.combinations(range(n), n_pos):
        A = sum(1 << i for i in subset)
        hit = ((below & ~A) == 0) & ((A & ~(below | tie)) == 0)
        assert int(weight[hit].sum()) * math.comb(n, n_pos) == lcm * 2 ** (b * n), subset


def test_label_draws_uniform_with_ties_and_padding():
    # 6 positions in two groups of 3 (slots 0-2 and 32-34): about 1% of the
    # 12,288 draws (6 / 2^9) have a tie at the cut, so the tie loop runs. Every 2-subset should have
    # probability 1/15; chi-square over 15 cells. Failure budget 1e-4 per chi-square.
    sizes, n_pos, R = (3, 3), 2, 4096
    draw = jax.jit(lambda k: klabels.draw_binary_labels(k, R, n_pos, sizes))
    counts = np.zeros(15, int)
    cells = {c: i for i, c in enumerate(itertools.combinations([0, 1, 2, 32, 33, 34], 2))}
    for j in range(3):
        Y = np.asarray(klabels.unpack_labels(draw(jax.random.fold_in(jax.random.key(11), j)))) > 0
        assert np.all(Y.sum(0) == n_pos)
        assert not Y[np.r_[3:32, 35:64]].any()  # padding slots stay 0
        for col in Y.T:
            counts[cells[tuple(np.flatnonzero(col))]] += 1
    assert scipy.stats.chisquare(counts).pvalue > 1e-4
    # per-group counts (permutations within folds): 1 of slots 0-2 and 2 of 32-34,
    # 9 equally likely cells
    Y = (
        np.asarray(
            klabels.unpack_labels(
                jax.jit(lambda k: klabels.draw_binary_labels(k, R, (1, 2), sizes))(
                    jax.random.key(12)
                )
            )
        )
        > 0
    )
    assert np.all(Y[:3].sum(0) == 1) and np.all(Y[32:35].sum(0) == 2)
    cell = 3 * np.argmax(Y[:3], axis=0) + np.argmin(Y[32:35], axis=0)
    assert scipy.stats.chisquare(np.bincount(cell, minlength=9)).pvalue > 1e-4


# ---------------------------------------------------------------- sort-free ridge stream


def _generic_scores(model, X, y, key, cv, B, scoring):
    """Scores of the same label draws through the generic (float64, fold_decisions) path."""
    split_key, perm_key = jax.random.split(jax.random.key(key))
    sp = make_splits(KFold(cv), y, split_key, True)
    train, test = sp.train.reshape(cv, -1), sp.test.reshape(cv, -1)
    order, sizes = _sanity_streams._partition(train, test)
    m = klabels.label_slots(sizes)
    slot = np.concatenate([k * m + np.arange(s) for k, s in enumerate(sizes)])
    rows = _sanity_streams.block_rows(len(y))
    Y = _sanity_streams._block_labels(
        _sanity_streams._block_words(perm_key, 0, 1, 1)[0],
        np.array([(y[t] > 0).sum() for t in test], np.uint32),  # stratified: per fold
        klabels.slot_masks(sizes),
        klabels.label_widths(sizes),
        slot[np.argsort(order)],
        rows=rows,
        shape=klabels.label_shape(sizes),
    )[:B]
    idx, va = padded_test_index(test[None])
    return _sanity_streams._FIT_SCORES(
        jnp.asarray(X),
        Y,
        jnp.asarray(y),
        jnp.asarray(train, jnp.float64),
        jnp.asarray(idx[0]),
        jnp.asarray(va[0]),
        kind=model.kind,
        task=model.task,
        params=model.params,
        scoring=scoring,
        classification=True,
        n_classes=0,
    )


def test_ridge_stream_equals_float64_path(data):
    # folds of 30, 30, 30, 29, 29 (padded slots); counts from float32 products
    # with the float64 repair equal the float64 decisions of the generic path
    X, y = data
    fast = permutation_test_score(
        models.ridge_classifier(), X, y, cv=5, n_permutations=64, key=3, scoring=SCORING
    )
    slow = _generic_scores(models.ridge_classifier(), X, y, 3, 5, 64, SCORING)
    np.testing.assert_allclose(fast.permutation_scores, slow, rtol=0, atol=1e-12)


@pytest.mark.usefixtures("optimized_programs")
def test_other_labels_of_the_same_size_compile_nothing(data):
    # Issue 37: the positives' counts were static, so every new label vector (another
    # count per fold) compiled the ridge stream again (1.1 s a call); they are traced now.
    from jaxtests._monitoring import CompileCounter

    X, y = data
    kw = dict(n_permutations=64, key=3, scoring=SCORING)
    flipped = y.copy()
    flipped[np.flatnonzero(y > 0)[:7]] = -1  # seven fewer positives
    for cv in (5, KFold(5, stratified=False)):  # per-fold counts, and one count
        permutation_test_score(models.ridge_classifier(), X, y, cv=cv, **kw)
        with CompileCounter() as counter:
            permutation_test_score(models.ridge_classifier(), X, flipped, cv=cv, **kw)
        assert (counter.traces, counter.compiles) == (0, 0), cv


@pytest.mark.usefixtures("optimized_programs")
def test_a_new_row_count_of_the_same_label_shape_compiles_nothing(data):
    # 148 rows (folds of 29-30) and 75 (folds of 15) share the label shape, 5 folds of 32
    # slots, not the key and rank widths (the bit lengths of the pools' sizes): these are
    # traced, so the ridge stream is not compiled again (it was: 1.6 s for breast cancer's
    # 569 rows after 500), for one pool or one per fold
    from jaxtests._monitoring import CompileCounter

    big, small = (30, 30, 30, 29, 29), (15,) * 5
    assert klabels.label_shape(big) == klabels.label_shape(small)
    assert (klabels.label_widths(big) != klabels.label_widths(small)).all()
    X, y = data
    kw = dict(n_permutations=64, key=3, scoring=SCORING)
    for cv in (5, KFold(5, stratified=False)):
        permutation_test_score(models.ridge_classifier(), X, y, cv=cv, **kw)
        with CompileCounter() as counter:
            permutation_test_score(models.ridge_classifier(), X[:75], y[:75], cv=cv, **kw)
        assert (counter.traces, counter.compiles) == (0, 0), cv


def test_ridge_repair_loop_changes_nothing(data):
    # a bound inflated past every decision sends all 1,024 label vectors of the
    # block through the float64 repair loop (8 at a time): scores must not change
    X, y = data
    split_key, perm_key = jax.random.split(jax.random.key(3))
    sp = make_splits(KFold(5), y, split_key, True)
    order, sizes = _sanity_streams._partition(sp.train[0], sp.test[0])
    part = _sanity_streams._ridge_partition(jnp.asarray(X[order]), sizes, 1.0)
    n_pos = jnp.asarray([int((y[t] > 0).sum()) for t in sp.test[0]], jnp.uint32)
    one = jnp.asarray(1, jnp.int32)
    zero = jnp.asarray(0, jnp.int32)
    stream = _sanity_streams._RidgeStream.of(sizes, 1024, SCORING)
    folds = (
        jnp.asarray(sizes, jnp.float64),
        jnp.asarray(klabels.slot_masks(sizes)),
        jnp.asarray(klabels.label_widths(sizes)),
    )
    normal = _sanity_streams._ridge_binary_stream(
        part, perm_key, zero, one, n_pos, *folds, stream=stream
    )
    forced = _sanity_streams._ridge_binary_stream(
        part._replace(err=jnp.full(len(sizes), 1e9)),
        perm_key,
        zero,
        one,
        n_pos,
        *folds,
        stream=stream,
    )
    np.testing.assert_array_equal(normal, forced)


def test_count_scores_by_hand():
    # one fold: tp, fn, fp, tn = 3, 1, 2, 4
    c = [jnp.asarray([[v]], jnp.float64) for v in (3.0, 1.0, 2.0, 4.0)]
    names = ("accuracy", "error", "tpr", "fpr", "specificity", "precision", "f1")
    names += ("balanced_accuracy", "recall")
    got = np.asarray(count_scores(*c, names))[0]
    want = [7 / 10, 3 / 10, 3 / 4, 2 / 6, 4 / 6, 3 / 5, 6 / 9, (3 / 4 + 4 / 6) / 2, 3 / 4]
    np.testing.assert_allclose(got, want, rtol=1e-15)


_REFERENCE = {}


@pytest.mark.parametrize("how", ["permutations", "sort-based"])
def test_regression_scores_depend_on_neither_batch_size_nor_count(how):
    # Real-valued scores carry every rounding of their fits: each fit takes the same number
    # of label vectors whatever batch_size and n_permutations (explicit permutations were
    # fitted in batches of batch_size: 3e-16 apart)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(97, 4))
    y = X[:, 0] + rng.normal(size=97)
    perms = np.stack([rng.permutation(97) for _ in range(50)])
    kw = dict(permutations=perms) if how == "permutations" else dict(n_permutations=50)

    def scores(m=50, **extra):
        if how == "permutations":
            kw["permutations"] = perms[:m]
        else:
            kw["n_permutations"] = m
        r = permutation_test_score(models.ridge(2.0), X, y, key=1, scoring="r2", **kw, **extra)
        return np.asarray(r.permutation_scores)

    ref = scores()
    for batch_size in (7, 16, 200):
        np.testing.assert_array_equal(scores(batch_size=batch_size), ref)
    np.testing.assert_array_equal(scores(m=9), ref[:9])


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch_size=st.one_of(st.none(), st.integers(1, 40_000)))
def test_batch_size_invariance_bit_identical(data, batch_size):
    # 2,085 permutations = 3 label blocks of 1,024: any split into compiled calls
    # gives bit-identical scores, and the first permutations do not depend on B
    X, y = data
    kw = dict(cv=5, n_permutations=2085, key=5, scoring=SCORING)
    if "ref" not in _REFERENCE:
        _REFERENCE["ref"] = np.asarray(
            permutation_test_score(
                models.ridge_classifier(), X, y, batch_size=1, **kw
            ).permutation_scores
        )
    ref = _REFERENCE["ref"]
    got = permutation_test_score(models.ridge_classifier(), X, y, batch_size=batch_size, **kw)
    np.testing.assert_array_equal(got.permutation_scores, ref)
    assert ref.shape == (2085, 2)
    short = permutation_test_score(
        models.ridge_classifier(), X, y, cv=5, n_permutations=30, key=5, scoring=SCORING
    )
    np.testing.assert_array_equal(short.permutation_scores, ref[:30])


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(key=st.integers(0, 2**31 - 1), B=st.integers(1, 300), noise=st.floats(0.0, 3.0))
def test_pvalue_properties(data, key, B, noise):
    X, y = data
    Xn = X + noise * np.random.default_rng(key).standard_normal(X.shape)
    r = permutation_test_score(
        models.ridge_classifier(), Xn, y, cv=5, n_permutations=B, key=key, scoring=SCORING
    )
    p = np.asarray(r.pvalue)
    assert np.all((p >= 1 / (B + 1)) & (p <= 1))
    C = np.sum(np.asarray(r.permutation_scores) >= np.asarray(r.statistic)[None] - 1e-12, axis=0)
    np.testing.assert_allclose(p, (C + 1) / (B + 1), rtol=1e-14)
    # 99% Clopper-Pearson: scipy.stats.binomtest(C, B).proportion_ci(0.99, "exact")
    for j in range(2):
        ci = scipy.stats.binomtest(int(C[j]), B).proportion_ci(0.99, method="exact")
        # scipy finds the bounds by root finding: agreement to 1e-12 absolute
        np.testing.assert_allclose(r.pvalue_interval[j], [ci.low, ci.high], rtol=0, atol=1e-12)
    assert r.seed == key and r.n_permutations == B


# ---------------------------------------------------------------- other learners and modes


@pytest.mark.parametrize("model", [models.logistic(), models.lda(), models.knn(5)], ids=str)
def test_generic_learners_see_the_same_draws(data, model):
    # the sort-free draws feed every learner; its null scores equal a direct float64
    # evaluation on the same label vectors, unpadded (the run fits 148 rows padded to 160)
    X, y = data
    r = permutation_test_score(model, X, y, cv=5, n_permutations=64, key=1, scoring=SCORING)
    np.testing.assert_array_equal(
        r.permutation_scores, _generic_scores(model, X, y, 1, 5, 64, SCORING)
    )
    assert float(r.pvalue[0]) == pytest.approx(1 / 65)  # strong signal
    assert float(np.mean(r.permutation_scores[:, 0])) < 0.65


def test_modes_train_and_groups(data):
    X, y = data
    base = dict(cv=5, n_permutations=50, key=1, scoring=SCORING)
    for kw in ({"permute": "train"}, {"groups": np.arange(len(y)) % 3}):
        if "permute" in kw:  # k-fold with permute="train" is anti-conservative: warned
            with pytest.warns(RuntimeWarning, match="anti-conservative"):
                r = permutation_test_score(models.ridge_classifier(), X, y, **base, **kw)
        else:
            r = permutation_test_score(models.ridge_classifier(), X, y, **base, **kw)
        assert float(r.pvalue[0]) == pytest.approx(1 / 51)  # strong signal
        # permuted accuracy ~ p^2 + (1-p)^2 for a label-blind classifier at best
        assert float(np.mean(r.permutation_scores[:, 0])) < 0.65
    # permute="train" leaves test labels: a different null from "all"
    a = permutation_test_score(models.ridge_classifier(), X, y, **base)
    assert not np.allclose(a.permutation_scores, r.permutation_scores)


def test_group_permutations_stay_within_groups(data):
    # labels constant within groups: permuting within groups changes nothing
    X, y = data
    g = (y > 0) * 3 + np.arange(len(y)) % 3
    r = permutation_test_score(
        models.ridge_classifier(), X, y, cv=5, n_permutations=50, groups=g, key=0, scoring=SCORING
    )
    np.testing.assert_allclose(r.permutation_scores, np.broadcast_to(r.statistic, (50, 2)))
    np.testing.assert_array_equal(r.pvalue, [1.0, 1.0])


def test_regression_r2():
    X, y = datasets.load_diabetes()
    r = permutation_test_score(
        models.ridge(1.0), X[:120], y[:120], cv=3, n_permutations=20, scoring="r2", key=0
    )
    assert float(r.statistic) > 0.2 > float(np.max(r.permutation_scores))


@pytest.mark.slow
def test_pvalues_calibrated_under_null(data):
    # labels independent of X, folds stratified on the labels: P(p <= a) = a for
    # B = 99 and a in {0.1, 0.5} (Phipson & Smyth; ties only lower it). 200
    # datasets: binomial SE sqrt(a (1 - a) / 200) <= 0.036; 4.5 SE bounds, failure
    # budget < 1e-4 over the 4 checks. Permuting all labels across stratified
    # folds instead gives about 0.67 at a = 0.5 (the observed labels are the only
    # stratified ones).
    X, y = data
    rng = np.random.default_rng(21)
    p = []
    for i in range(200):
        Xr = rng.standard_normal(X.shape)
        r = permutation_test_score(
            models.ridge_classifier(), Xr, y, cv=5, n_permutations=99, key=i, scoring=SCORING
        )
        p.append(np.asarray(r.pvalue))
    p = np.asarray(p)
    for a in (0.1, 0.5):
        se = np.sqrt(a * (1 - a) / len(p))
        np.testing.assert_array_less(np.abs(np.mean(p <= a, axis=0) - a), 4.5 * se)


def test_validation_messages(data):
    X, y = data
    m = models.ridge_classifier()
    with pytest.raises(ValueError, match="`scoring` must be one of"):
        permutation_test_score(m, X, y, scoring="r2")
    with pytest.raises(ValueError, match="`permute` must be one of"):
        permutation_test_score(m, X, y, permute="test")
    with pytest.raises(ValueError, match="`n_permutations` must be at least 1"):
        permutation_test_score(m, X, y, n_permutations=0)
    with pytest.raises(TypeError, match="`batch_size` must be an int"):
        permutation_test_score(m, X, y, batch_size=2.5)
    with pytest.raises(ValueError, match=r"`groups` must have shape \(148,\)"):
        permutation_test_score(m, X, y, groups=np.zeros(3))
    with pytest.raises(ValueError, match="row 0 is not a permutation"):
        permutation_test_score(m, X, y, permutations=np.zeros((2, 148), int))
    with pytest.raises(ValueError, match="`permutations` must be an integer array"):
        permutation_test_score(m, X, y, permutations=np.zeros((2, 148)))
    with pytest.raises(ValueError, match="explicit `permutations` apply to all labels"):
        perms = np.tile(np.arange(148), (2, 1))
        permutation_test_score(m, X, y, permutations=perms, permute="train")
    with pytest.raises(ValueError, match="`y` must be 1-d with one entry per row"):
        permutation_test_score(m, X, y[:10])
    with pytest.raises(ValueError, match="`y` holds a single class"):
        permutation_test_score(m, X, np.ones(148))
    with pytest.raises(ValueError, match="`y` holds a single class"):
        permutation_test_score(m, X, np.ones(148), cv=[(np.arange(100), np.arange(100, 148))])
    with pytest.raises(ValueError, match="`scoring` is empty"):
        permutation_test_score(m, X, y, scoring=())


def test_unused_options_are_refused(data):
    # issue 13: an option the chosen path would not use is an error, never ignored
    X, y = data
    with pytest.raises(ValueError, match="`n_jobs` applies to scikit-learn estimators"):
        permutation_test_score(models.ridge_classifier(), X, y, n_permutations=9, n_jobs=2)
    with pytest.raises(ValueError, match="`batch_size` applies to built-in models"):
        permutation_test_score(RidgeClassifier(), X, y, n_permutations=9, batch_size=4)
    perms = np.tile(np.arange(148), (3, 1))
    with pytest.raises(ValueError, match=r"`n_permutations` \(5\) disagrees with the 3 rows"):
        permutation_test_score(
            models.ridge_classifier(), X, y, permutations=perms, n_permutations=5
        )


# ---- issue 37: the ridge stream's host parts, and a new row count compiles nothing


@pytest.mark.parametrize("standardize", [False, True])
def test_host_ridge_parts_equal_the_jitted_kernels(data, standardize):
    # permutation_test_score builds the per-fold ridge systems and the observed
    # decisions in numpy on the host: the jitted kernels' values to round-off, and
    # the same confusion counts for a block of permuted labels
    from jaxtests.kernels import learners as klearners
    from jaxtests.kernels import ridge_partition as krp

    X, y = data
    sp = make_splits(KFold(5), y, jax.random.key(3), True)
    order, sizes = _sanity_streams._partition(sp.train[0], sp.test[0])
    Xo = X[order]
    host = krp.ridge_partition(Xo, sizes, 1.0, standardize, xp=np)
    jitted = _sanity_streams._ridge_partition(jnp.asarray(Xo), sizes, 1.0, standardize=standardize)
    for name in ("xbar", "M", "n_train"):
        want = np.asarray(getattr(jitted, name))
        np.testing.assert_allclose(getattr(host, name), want, rtol=0, atol=1e-12 * abs(want).max())
    # the float32 split x = hi + lo and its bound: the same to float32 round-off
    np.testing.assert_allclose(host.XT, jitted.XT, rtol=0, atol=1e-6 * abs(host.XT).max())
    m = klabels.label_slots(sizes)
    words = klabels.draw_binary_labels(jax.random.key(5), 64, 74, sizes)
    labels = klabels.unpack_labels(words).reshape(len(sizes), m, 64)
    counts = jax.jit(krp.ridge_partition_counts)
    host_counts = counts(jax.tree.map(jnp.asarray, host), labels)
    for a, b in zip(host_counts, counts(jitted, labels), strict=True):
        np.testing.assert_array_equal(a, b)
    index, _ = padded_test_index(sp.test)
    Y = jnp.asarray(y[None], jnp.float64)
    args = (sp.train[0].astype(float), index[0], 1.0, standardize)
    f_host = klearners.ridge_fold_decisions(X, np.asarray(Y), *args, xp=np)
    f_jit = jax.jit(klearners.ridge_fold_decisions, static_argnums=(4, 5))(
        jnp.asarray(X), Y, *map(jnp.asarray, args[:2]), *args[2:]
    )
    np.testing.assert_allclose(f_host, f_jit, rtol=0, atol=1e-12 * np.abs(f_jit).max())


@pytest.mark.usefixtures("optimized_programs")
def test_ridge_stream_at_new_row_counts_compiles_nothing():
    # one layout (5 folds of at most 24, 7-bit n): the stream's fold sizes and slot masks
    # are traced, the per-fold systems and observed decisions computed on the host
    from jaxtests._monitoring import CompileCounter

    rng = np.random.default_rng(4)

    def call(n):
        X = rng.normal(size=(n, 4))
        y = np.where(X[:, 0] + rng.normal(size=n) > 0, 1, -1)
        return permutation_test_score(
            models.ridge_classifier(), X, y, n_permutations=99, scoring=SCORING, key=1
        )

    call(100)
    with CompileCounter() as counter:
        for n in (101, 105, 110, 120):
            call(n)
    assert (counter.traces, counter.compiles) == (0, 0)
