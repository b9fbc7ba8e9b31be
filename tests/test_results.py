"""Result objects behave like scipy's: numpy scalars, unpacking, JSON, jit and vmap."""

import json
import math
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _helpers import python_json

from jaxtests import signflip_test
from jaxtests._anova import anova
from jaxtests._hotelling import hotelling_t2
from jaxtests._intervals import clopper_pearson
from jaxtests._ttests import ttest_corrected, ttest_paired

RNG = np.random.default_rng(17)
A = RNG.normal(size=12)
B = A + RNG.normal(0.4, 0.5, size=12)
X = RNG.normal(size=(10, 2))
Y = X + RNG.normal(0.3, 0.5, size=(10, 2))
G = RNG.normal(size=(3, 8))

# Public tests that jit and vmap, with one batch of arguments each.
CASES = {
    "ttest_paired": (lambda a, b: ttest_paired(a, b), (A, B)),
    "ttest_corrected": (lambda a, b: ttest_corrected(a, b, n_train=90, n_test=10), (A, B)),
    "hotelling_t2": (lambda x, y: hotelling_t2(x, y), (X, Y)),
    "anova": (lambda g: anova(g), (G,)),
}


def test_scalar_fields_are_numpy_scalars_like_scipy():
    r = ttest_paired(A, B)
    assert type(r.pvalue) is np.float64 and type(r.statistic) is np.float64
    assert type(r.mean_difference) is np.float64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bool(r.pvalue < 0.05) == (float(r.pvalue) < 0.05)
        assert f"{r.pvalue:.3g}" == f"{float(r.pvalue):.3g}"
        assert json.loads(json.dumps({"p": r.pvalue}))["p"] == float(r.pvalue)
    s = signflip_test(A - B, n_resamples=999, key=0)
    assert type(s.n_extreme) is np.int64
    assert isinstance(s.pvalue_interval, np.ndarray) and s.pvalue_interval.shape == (2,)


def test_batched_fields_are_numpy_arrays():
    r = ttest_paired(np.stack([A, B]), np.stack([B, A]))
    assert isinstance(r.pvalue, np.ndarray) and r.pvalue.dtype == np.float64
    assert r.pvalue.shape == (2,)


def test_unpacks_as_statistic_then_pvalue():
    r = ttest_paired(A, B)
    t, p = r
    assert (t, p) == (r.statistic, r.pvalue) == (r[0], r[1])
    assert len(r) == 2 and r[-1] == r.pvalue
    assert r.df == len(A) - 1  # attributes still there
    stat, pval = hotelling_t2(X, Y)
    assert (stat, pval) == (hotelling_t2(X, Y).statistic, hotelling_t2(X, Y).pvalue)
    ci = clopper_pearson(3, 20)  # no statistic/pvalue: not a pair
    with pytest.raises(TypeError):
        iter(ci)


def test_to_dict_and_to_json_are_strict():
    with pytest.warns(RuntimeWarning, match="zero variance"):
        r = ttest_paired(A, A)  # a == b: NaN statistic and p-value
    d = r.to_dict()
    assert d["statistic"] is None and d["pvalue"] is None
    assert d["df"] == len(A) - 1 and d["method"] == "parametric"
    assert json.loads(r.to_json()) == d
    s = signflip_test(A - B, n_resamples=999, key=0).to_dict()
    assert isinstance(s["pvalue"], float) and isinstance(s["n_extreme"], int)
    assert isinstance(s["pvalue_interval"], list) and len(s["pvalue_interval"]) == 2
    assert s["seed"] == 0
    json.dumps(s, allow_nan=False)


def test_pytree_round_trips_under_jit_vmap_tree_map():
    r = ttest_paired(A, B)
    leaves, tree = jax.tree_util.tree_flatten(r)
    back = jax.tree_util.tree_unflatten(tree, leaves)
    assert back.pvalue == r.pvalue and back.pvalue_interval is None
    doubled = jax.tree_util.tree_map(lambda x: 2 * x, r)
    assert type(doubled.pvalue) is np.float64 and doubled.pvalue == 2 * r.pvalue
    same = jax.jit(lambda res: res)(r)
    assert type(same.pvalue) is np.float64 and same.pvalue == r.pvalue
    rb = ttest_paired(np.stack([A, B]), np.stack([B, A]))
    per = jax.vmap(lambda res: jax.tree_util.tree_map(lambda x: x + 1, res))(rb)
    np.testing.assert_array_equal(per.pvalue, rb.pvalue + 1)
    seen = []

    def f(a, b):
        res = ttest_paired(a, b)
        seen.append(type(res.pvalue))
        return res

    jax.jit(f)(A, B)
    assert issubclass(seen[0], jax.core.Tracer)  # tracers are left as they are


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_and_vmap_match_eager_in_x64(name):
    fn, args = CASES[name]
    eager = fn(*args)
    jitted = jax.jit(fn)(*(jnp.asarray(x) for x in args))
    np.testing.assert_allclose(jitted.pvalue, eager.pvalue, rtol=1e-10)
    np.testing.assert_allclose(jitted.statistic, eager.statistic, rtol=1e-10)
    batched = jax.vmap(fn)(*(np.stack([x, x]) for x in args))
    np.testing.assert_allclose(batched.pvalue, [eager.pvalue] * 2, rtol=1e-10)


def test_signflip_under_jit_says_why():
    for transform in (jax.jit, jax.vmap):
        with pytest.raises(TypeError, match=r"signflip_test cannot run under jax\.jit.*concrete"):
            transform(lambda d: signflip_test(d, n_resamples=99, key=0))(jnp.stack([A - B]))


SCRIPT = textwrap.dedent(
    """
    import json, warnings
    import jax, jax.numpy as jnp, numpy as np
    import jaxtests
    warnings.simplefilter("error")  # JAX's float64-truncation warning fails the run
    assert not jax.config.jax_enable_x64
    rng = np.random.default_rng(17)
    A = rng.normal(size=12); B = A + rng.normal(0.4, 0.5, size=12)
    X = rng.normal(size=(10, 2)); Y = X + rng.normal(0.3, 0.5, size=(10, 2))
    G = rng.normal(size=(3, 8))
    cases = {
        "ttest_paired": (lambda a, b: jaxtests.ttest_paired(a, b), (A, B)),
        "ttest_corrected": (
            lambda a, b: jaxtests.ttest_corrected(a, b, n_train=90, n_test=10), (A, B)),
        "hotelling_t2": (lambda x, y: jaxtests.hotelling_t2(x, y), (X, Y)),
        "anova": (lambda g: jaxtests.anova(g), (G,)),
    }
    out = {}
    for name, (fn, args) in cases.items():
        eager = fn(*args)
        jitted = jax.jit(fn)(*(jnp.asarray(x) for x in args))
        batched = jax.vmap(fn)(*(jnp.asarray(np.stack([x, x])) for x in args))
        out[name] = {
            "eager": [float(eager.pvalue), str(eager.pvalue.dtype), bool(eager.pvalue < 0.05)],
            "jit": [float(jitted.pvalue), str(jitted.pvalue.dtype)],
            "vmap": [float(batched.pvalue[1]), str(batched.pvalue.dtype)],
        }
    r = jaxtests.ttest_paired(A, B)
    t, p = r
    out["json"] = json.loads(json.dumps({"p": r.pvalue, "t": t}))
    out["format"] = f"{r.pvalue:.4f}"
    try:
        jax.jit(lambda d: jaxtests.signflip_test(d, n_resamples=99, key=0))(jnp.asarray(A - B))
    except TypeError as e:
        out["signflip_jit"] = str(e)
    print(json.dumps(out))
    """
)


def test_outside_x64_no_warnings_and_jit_vmap_work():
    out = python_json(SCRIPT, env={"JAX_PLATFORMS": "cpu"}, drop=("JAX_ENABLE_X64",), timeout=600)
    for name, (fn, args) in CASES.items():
        ref = float(fn(*args).pvalue)  # this process runs in x64
        got = out[name]
        # float64 outside x64; the last bits may differ between processes (XLA:CPU fusions).
        assert got["eager"][0] == pytest.approx(ref, rel=1e-13) and got["eager"][1] == "float64"
        assert got["eager"][2] == (ref < 0.05)
        # vmap stays float64 (of the float32 inputs jnp.asarray made outside x64)
        assert got["vmap"] == [pytest.approx(ref, rel=1e-6), "float64"]
        assert got["jit"][1] == "float32"  # the caller's precision inside its jit
        assert math.isclose(got["jit"][0], ref, rel_tol=1e-4, abs_tol=1e-6)
    r = ttest_paired(A, B)
    assert out["json"] == {"p": float(r.pvalue), "t": float(r.statistic)}
    assert out["format"] == f"{r.pvalue:.4f}"
    assert "concrete values" in out["signflip_jit"]


def test_shared_fields_follow_the_required_fields_and_precede_the_own_defaults():
    import dataclasses

    from jaxtests._results import PermutationFields, result, static_field
    from jaxtests._ttests import TtestResult

    @result
    class Toy(PermutationFields):
        statistic: jax.Array
        pvalue: jax.Array
        method: str = static_field()
        extra: int | None = static_field(default=None)

    shared = ["pvalue_interval", "n_resamples", "seed", "permutation_method"]
    names = [f.name for f in dataclasses.fields(Toy)]
    assert names == ["statistic", "pvalue", "method", *shared, "extra"]
    assert Toy._data_fields == ("statistic", "pvalue", "pvalue_interval")
    # the order TtestResult had when it wrote the four fields out itself
    names = [f.name for f in dataclasses.fields(TtestResult)]
    assert names[names.index("method") + 1 :] == [
        *shared,
        "test_train_ratio",
        "n_clusters",
        "cluster_se",
    ]
    r = Toy(statistic=np.float64(1.5), pvalue=np.float64(0.25), method="permutation", seed=3)
    assert repr(r) == "Toy(statistic=1.5, pvalue=0.25, method='permutation', seed=3)"
    assert r.to_dict()["seed"] == 3 and r.to_dict()["pvalue_interval"] is None
