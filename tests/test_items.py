"""Clustered items on the command line and in CVResult, and repeated samples per item (issue 38).

References: the library's own clustered tests (tests/test_clusters.py checks them against
statsmodels, clubSandwich's formulas and enumeration) on the same arrays as the CLI reads;
scipy's ttest_rel on the per-item means; Miller (2024)'s decomposition worked in numpy by
hand; a numpy simulation for its unbiasedness.
"""

import json

import numpy as np
import pytest
import scipy.stats as st
from _helpers import cli as _cli
from sklearn.linear_model import LogisticRegression, RidgeClassifier

import jaxtests
from jaxtests._cv import cross_validate

# ---------------------------------------------------------------- files written by hand


def _instance_file(path, *, bad_label=False, extra=None):
    """24 instances of one held-out fold in 6 passages; two classifiers' scores."""
    rng = np.random.default_rng(0)
    y = np.where(rng.random(24) < 0.5, 1, -1)
    sa = y * 0.6 + rng.normal(size=24)
    sb = y * 0.2 + rng.normal(size=24)
    passage = np.array([f"p{i // 4}" for i in range(24)])
    lines = ["algorithm,fold,instance,y_true,score,passage" + (f",{extra}" if extra else "")]
    for alg, s in (("a", sa), ("b", sb)):
        for i in range(24):
            lab = "p9" if bad_label and alg == "b" and i == 5 else passage[i]
            lines.append(f"{alg},1,q{i},{y[i]},{float(s[i])!r},{lab}" + (",0" if extra else ""))
    path.write_text("\n".join(lines) + "\n")
    return path, y, sa, sb, passage


def _item_file(path, *, k=4, drop=False, sample=True):
    """15 items in 5 passages, k sampled 0/1 answers per item of models a and b."""
    rng = np.random.default_rng(3)
    p = np.clip(0.6 + 0.35 * rng.normal(size=15), 0.02, 0.98)
    x = np.stack([rng.random((15, k)) < np.clip(p + s, 0, 1)[:, None] for s in (0.1, -0.05)])
    x = x.astype(float)
    lines = ["model,item" + (",sample" if sample else "") + ",score,passage"]
    for m, name in enumerate("ab"):
        for i in range(15):
            for j in range(k):
                if drop and (m, i, j) == (1, 7, 0):
                    continue
                cells = [name, f"q{i}", *([str(j)] if sample else []), f"{x[m, i, j]:g}"]
                lines.append(",".join([*cells, f"p{i // 3}"]))
    path.write_text("\n".join(lines) + "\n")
    return path, x, np.array([f"p{i // 3}" for i in range(15)])


# ---------------------------------------------------------------- item_means


def test_item_means_is_millers_decomposition_by_hand():
    # Miller (2024), eq. 6: Var(mean) = Var(x)/n + E[sigma^2]/(n K), worked in numpy.
    rng = np.random.default_rng(1)
    x = (rng.random((3, 9, 5)) < rng.random((3, 9, 1))).astype(float)
    r = jaxtests.item_means(x)
    n, k = 9, 5
    means = x.mean(-1)
    within = x.var(-1, ddof=1)
    np.testing.assert_allclose(r.means, means, rtol=1e-15)
    np.testing.assert_allclose(r.within_variance, within, rtol=1e-15)
    np.testing.assert_allclose(r.variance_within, within.mean(-1), rtol=1e-14)
    total = means.var(-1, ddof=1)
    np.testing.assert_allclose(r.variance_between, total - within.mean(-1) / k, rtol=1e-12)
    # the two parts add up to the variance of the mean the tests use
    np.testing.assert_allclose(
        r.variance_between / n + r.variance_within / (n * k), r.standard_error**2, rtol=1e-12
    )
    np.testing.assert_allclose(r.within_share, within.mean(-1) / k / total, rtol=1e-12)
    np.testing.assert_allclose(r.mean, x.mean((-2, -1)), rtol=1e-15)
    # the difference of models 0 and 2: independent samples, within variances add
    dif = r.difference(0, 2)
    dm = means[0] - means[2]
    np.testing.assert_allclose(dif.means, dm, rtol=1e-15)
    dw = (within[0] + within[2]).mean()
    np.testing.assert_allclose(dif.variance_within, dw, rtol=1e-14)
    np.testing.assert_allclose(dif.within_share, dw / k / dm.var(ddof=1), rtol=1e-12)
    # the doctest's numbers: means (2/3, 0, 1, 1/3), var 5/27, within mean 1/6: share 0.3
    small = jaxtests.item_means([[1, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0, 0]])
    assert float(small.within_share) == pytest.approx(0.3, rel=1e-12)
    assert float(small.standard_error) ** 2 == pytest.approx(5 / 27 / 4, rel=1e-12)


def test_item_means_estimates_are_unbiased():
    # numpy simulation: items' true means x_i ~ Beta(2, 2) (Var(x) = 1/20), K Bernoulli
    # samples each (E[sigma^2] = E[x(1 - x)] = 1/5); 4000 evals of 30 items, K = 3.
    rng = np.random.default_rng(2)
    p = rng.beta(2, 2, size=(4000, 30, 1))
    r = jaxtests.item_means((rng.random((4000, 30, 3)) < p).astype(float))
    between, within = np.asarray(r.variance_between), np.asarray(r.variance_within)
    # tolerances: 5 standard errors of the mean over the 4000 evals
    assert abs(between.mean() - 1 / 20) < 5 * between.std() / np.sqrt(4000)
    assert abs(within.mean() - 1 / 5) < 5 * within.std() / np.sqrt(4000)


def test_item_means_one_sample_and_bad_input():
    r = jaxtests.item_means([[1.0], [0.0], [1.0]])
    assert r.n_samples == 1 and np.isnan(r.variance_within) and np.isnan(r.within_share)
    assert float(r.standard_error) == pytest.approx(np.std([1, 0, 1], ddof=1) / np.sqrt(3))
    with pytest.raises(ValueError, match=r"`scores` must have shape \(\.\.\., n_items"):
        jaxtests.item_means([1.0, 0.0])
    with pytest.raises(ValueError, match="`scores` has 1 item"):
        jaxtests.item_means([[1.0, 0.0]])
    with pytest.raises(ValueError, match="`scores` holds NaN: every item needs the same"):
        jaxtests.item_means([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(TypeError, match="`scores` must be an array of numbers"):
        jaxtests.item_means([["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match="`difference` compares two models"):
        r.difference(0, 1)


# ---------------------------------------------------------------- the per-item reader


def test_read_items(tmp_path):
    path, x, passage = _item_file(tmp_path / "items.csv")
    t = jaxtests.read_items(path, cluster="passage")
    assert t.models == ("a", "b") and t.items == tuple(f"q{i}" for i in range(15))
    np.testing.assert_array_equal(t.samples, x)
    assert t.clusters == tuple(passage) and t.cluster_column == "passage"
    np.testing.assert_allclose(t.item_means().means, x.mean(-1), rtol=1e-15)
    # without a sample column the rows of an item are its samples, in file order
    p2, x2, _ = _item_file(tmp_path / "nosample.csv", sample=False)
    np.testing.assert_array_equal(jaxtests.read_items(p2, cluster="passage").samples, x2)


def test_read_items_refusals(tmp_path):
    path, _, _ = _item_file(tmp_path / "drop.csv", drop=True)
    with pytest.raises(ValueError, match=r"model 'b' has 3 sample\(s\) of item 'q7'.*refused"):
        jaxtests.read_items(path, cluster="passage")
    path, _, _ = _item_file(tmp_path / "items.csv")
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['passage'\].*--cluster"):
        jaxtests.read_items(path)
    with pytest.raises(ValueError, match="cluster column 'topic' not found"):
        jaxtests.read_items(path, cluster="topic")
    with pytest.raises(ValueError, match="the cluster column cannot be 'item'"):
        jaxtests.read_items(path, cluster="item")
    lines = path.read_text().splitlines()
    dup = tmp_path / "dup.csv"
    dup.write_text("\n".join([*lines, lines[1]]) + "\n")
    with pytest.raises(ValueError, match=r"duplicate row for model 'a', item 'q0', sample '0'"):
        jaxtests.read_items(dup, cluster="passage")
    moved = tmp_path / "moved.csv"
    moved.write_text("\n".join([*lines[:-1], lines[-1].rsplit(",", 1)[0] + ",p0"]) + "\n")
    with pytest.raises(ValueError, match=r"'p0' differs from 'p4' on line \d+ for item 'q14'"):
        jaxtests.read_items(moved, cluster="passage")
    missing = tmp_path / "missing.csv"
    missing.write_text("\n".join(ln for ln in lines if not ln.startswith("b,q3,")) + "\n")
    with pytest.raises(ValueError, match=r"model 'b' has no score for item\(s\) \['q3'\]"):
        jaxtests.read_items(missing, cluster="passage")


# ---------------------------------------------------------------- compare --cluster


@pytest.mark.filterwarnings("ignore:the cluster bootstrap resamples")
def test_cli_clustered_instances_equal_the_library(capsys, tmp_path):
    path, y, sa, sb, passage = _instance_file(tmp_path / "inst.csv")
    tests = ("t", "signflip", "bootstrap", "mcnemar", "wild")
    args = ["--cluster", "passage", "--seed", "4", "--n-resamples", "999", "--quiet"]
    status, out, err = _cli(
        capsys, "compare", path, *[a for t in tests for a in ("--test", t)], *args, "--json"
    )
    assert status == 0, err
    payload = json.loads(out)
    rows = {r["test"].split(" (")[0]: r for r in payload["rows"]}
    assert payload["cluster"]["n_clusters"] == 6 and payload["cluster"]["n_instances"] == 24
    assert payload["cluster"]["column"] == "passage"
    pa, pb = np.where(sa > 0, 1, -1), np.where(sb > 0, 1, -1)
    d = (pa != y).astype(float) - (pb != y).astype(float)  # zero_one loss differences
    zeros = np.zeros_like(d)
    t = jaxtests.ttest_paired(d, zeros, cluster=passage)
    assert rows["t"]["test"] == "t (per instance, clustered CR1)"
    assert rows["t"]["pvalue"] == pytest.approx(float(t.pvalue), rel=1e-12)
    assert rows["t"]["df"] == 5
    s = jaxtests.signflip_test(d, cluster=passage)  # 2^6 patterns: exact
    assert rows["signflip"]["pvalue"] == pytest.approx(float(s.pvalue), rel=1e-12)
    bt = jaxtests.bootstrap_test(
        (d, zeros), "mean_difference", cluster=passage, n_resamples=999, key=4
    )
    assert rows["bootstrap"]["pvalue"] == pytest.approx(float(bt.pvalue), rel=1e-12)
    mc = jaxtests.mcnemar(y, pa, pb, cluster=passage)
    assert rows["mcnemar"]["test"] == "mcnemar (clustered, chi2)"
    assert rows["mcnemar"]["statistic"] == pytest.approx(float(mc.statistic), rel=1e-12)
    assert rows["mcnemar"]["pvalue"] == pytest.approx(float(mc.pvalue), rel=1e-12)
    w = jaxtests.wild_cluster_bootstrap(d, zeros, cluster=passage, n_resamples=999, key=4)
    assert rows["wild cluster bootstrap"]["pvalue"] == pytest.approx(float(w.pvalue), rel=1e-12)
    # CR2 and the text output's line on the clusters
    status, out, _ = _cli(
        capsys, "compare", path, "--cluster", "passage", "--cluster-se", "CR2", "--quiet"
    )
    assert status == 0
    t2 = jaxtests.ttest_paired(d, zeros, cluster=passage, cluster_se="CR2")
    assert "t (per instance, clustered CR2)" in out and f"{float(t2.statistic):.4g}" in out
    assert "clustered by 'passage': 6 clusters of 24 instances" in out
    status, out, _ = _cli(capsys, "compare", path, "--cluster", "passage", "--markdown")
    assert status == 0 and "| t (per instance, clustered CR1) |" in out
    assert "clustered by 'passage': 6 clusters" in out


def test_cli_clustered_repetitions_average_each_instance(capsys, tmp_path):
    # 2 repetitions of 2-fold cv: the t of each instance's mean difference over the
    # repetitions (as without clusters), its label once per instance
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 20)
    lines, zero_one = ["algorithm,repetition,fold,instance,y_true,score,topic"], {}
    for r in (1, 2):
        fold = np.where(rng.permutation(20) < 10, 1, 2)
        for alg, shift in (("a", 0.8), ("b", 0.3)):
            for i in range(20):
                s = float((2 * y[i] - 1) * shift + rng.normal())
                zero_one.setdefault(alg, np.zeros(20))[i] += float((s > 0) != y[i]) / 2
                lines.append(f"{alg},{r},{fold[i]},i{i:02d},{y[i]},{s!r},t{i % 5}")
    path = tmp_path / "rep.csv"
    path.write_text("\n".join(lines) + "\n")
    status, out, err = _cli(capsys, "compare", path, "--cluster", "topic", "--json")
    assert status == 0, err
    payload = json.loads(out)
    d = zero_one["a"] - zero_one["b"]
    ref = jaxtests.ttest_paired(d, np.zeros(20), cluster=[f"t{i % 5}" for i in range(20)])
    assert payload["rows"][0]["pvalue"] == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert payload["cluster"]["n_clusters"] == 5 and payload["cluster"]["n_instances"] == 20


def _one_line_error(capsys, *args, match):
    status, out, err = _cli(capsys, "compare", *args)
    assert status == 2 and not out, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("jaxtests: error: "), err
    assert match in err, err


def test_cli_cluster_refusals(capsys, tmp_path):
    path, *_ = _instance_file(tmp_path / "inst.csv")
    cl = ("--cluster", "passage")
    for test, why in (
        ("delong", "--test delong cannot take --cluster: DeLong's variance"),
        ("cochran", "--test cochran cannot take --cluster: Cochran's Q"),
        ("swap", "--test swap cannot take --cluster"),
        ("corrected-t", "--test corrected-t cannot take --cluster: it compares per-fold"),
    ):
        _one_line_error(capsys, path, *cl, "--test", test, match=why)
    plain = tmp_path / "plain.csv"  # no cluster column
    plain.write_text("".join(ln.rsplit(",", 1)[0] + "\n" for ln in path.read_text().splitlines()))
    _one_line_error(
        capsys, plain, "--cluster-se", "CR2", match="--cluster-se is used with --cluster only"
    )
    _one_line_error(
        capsys, path, *cl, "--cluster-se", "CR2", "--test", "signflip", match="only t uses it"
    )
    _one_line_error(capsys, plain, "--test", "wild", match="--test wild is the wild cluster")
    _one_line_error(
        capsys,
        path,
        *cl,
        "--test",
        "bootstrap",
        "--measures",
        "roc_auc",
        match="--test bootstrap --measures roc_auc cannot take --cluster",
    )
    _one_line_error(capsys, path, *cl, "--measures", "f1", match="'f1' is not a per-instance")
    _one_line_error(capsys, path, "--cluster", "topic", match="cluster column 'topic' not found")
    _one_line_error(capsys, path, match="unknown column(s) ['passage']")
    bad, *_ = _instance_file(tmp_path / "bad.csv", bad_label=True)
    _one_line_error(
        capsys,
        bad,
        *cl,
        match="line 31, column 'passage': 'p9' differs from 'p1' on line 7 for instance 'q5'",
    )
    per_fold = tmp_path / "folds.csv"
    per_fold.write_text("algorithm,fold,error,passage\na,1,0.1,x\nb,1,0.2,x\n")
    _one_line_error(capsys, per_fold, *cl, match="this is a per-fold file")
    many = tmp_path / "datasets.csv"
    many.write_text("dataset,algorithm,acc\nd1,a,0.1\nd1,b,0.2\nd2,a,0.3\nd2,b,0.2\n")
    _one_line_error(capsys, many, *cl, match="this is a many-data-set file")


def test_cli_items_repeated_samples(capsys, tmp_path):
    path, x, passage = _item_file(tmp_path / "items.csv")
    means = x.mean(-1)
    d = means[0] - means[1]
    status, out, err = _cli(capsys, "compare", path, "--cluster", "passage", "--quiet", "--json")
    assert status == 0, err
    payload = json.loads(out)
    (row,) = payload["rows"]
    t = jaxtests.ttest_paired(means[0], means[1], cluster=passage)
    assert row["test"] == "t (per item, clustered CR1)"
    assert row["pvalue"] == pytest.approx(float(t.pvalue), rel=1e-12)
    assert row["mean_difference"] == pytest.approx(d.mean(), rel=1e-12)
    assert payload["cluster"] == {
        "column": "passage",
        "n_clusters": 5,
        "n_items": 15,
        "tests": {"t": "cluster-robust t"},
    }
    items = payload["items"]
    assert items["n_items"] == 15 and items["n_samples"] == 4
    w = x.var(-1, ddof=1)  # Miller's decomposition by hand, per model and of a - b
    for name, mu, within in (
        ("a", means[0], w[0]),
        ("b", means[1], w[1]),
        ("a - b", d, w[0] + w[1]),
    ):
        got = items["models"][name]
        assert got["variance_within"] == pytest.approx(within.mean(), rel=1e-12)
        assert got["variance_between"] == pytest.approx(
            mu.var(ddof=1) - within.mean() / 4, rel=1e-10
        )
        assert got["standard_error"] == pytest.approx(np.sqrt(mu.var(ddof=1) / 15), rel=1e-12)
        assert got["within_share"] == pytest.approx(within.mean() / 4 / mu.var(ddof=1), rel=1e-12)
    # unclustered: scipy's paired t on the per-item means; the text says what was averaged
    status, out, _ = _cli(capsys, "compare", path, "--cluster", "passage", "--test", "signflip")
    assert status == 0 and "signflip (per item, clustered, exact)" in out
    s = jaxtests.signflip_test(d, cluster=passage)
    assert f"{float(s.pvalue):.4f}" in out
    assert "per-item means of 4 samples (15 items" in out
    share = w[0].mean() / 4 / means[0].var(ddof=1)
    assert f"sampling is {share:.1%} of the total" in out
    p2, x2, _ = _item_file(tmp_path / "nosample.csv", sample=False)
    p2.write_text("\n".join(ln.rsplit(",", 1)[0] for ln in p2.read_text().splitlines()) + "\n")
    status, out, _ = _cli(capsys, "compare", p2, "--json")
    assert status == 0
    m2 = x2.mean(-1)
    ref = st.ttest_rel(m2[0], m2[1])  # scipy on the per-item means
    assert json.loads(out)["rows"][0]["pvalue"] == pytest.approx(ref.pvalue, rel=1e-10)


def test_cli_items_refusals(capsys, tmp_path):
    path, *_ = _item_file(tmp_path / "items.csv")
    cl = ("--cluster", "passage")
    _one_line_error(
        capsys, path, *cl, "--test", "mcnemar", match="--test mcnemar does not take a per-item"
    )
    _one_line_error(capsys, path, *cl, "--measures", "acc", match="one measure, its 'score'")
    drop, *_ = _item_file(tmp_path / "drop.csv", drop=True)
    _one_line_error(capsys, drop, *cl, match="unequal numbers of samples per item are refused")


# ---------------------------------------------------------------- CVResult's routes


@pytest.fixture(scope="module")
def held_out():
    # one held-out split of 40 of 80 instances, so the labels map through its test indices
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] + rng.normal(size=80) > 0, 1, -1)
    test = np.sort(rng.choice(80, 40, replace=False))
    train = np.setdiff1d(np.arange(80), test)
    cv = cross_validate(
        {"lr": LogisticRegression(), "ridge": RidgeClassifier(alpha=50.0)},
        X,
        y,
        cv=[(train, test)],
    )
    labels = np.array([f"c{i % 9}" for i in range(80)])  # 9 clusters over the data set
    return cv, labels, test


@pytest.mark.filterwarnings("ignore:the cluster bootstrap resamples")
def test_cv_routes_forward_cluster(held_out):
    cv, labels, test = held_out
    lab = labels[test]
    d = cv.instance_differences("lr", "ridge", "hinge")
    s = cv.signflip_test("lr", "ridge", loss="hinge", cluster=labels)  # 2^9 patterns
    ref = jaxtests.signflip_test(d, cluster=lab)
    assert s.n_clusters == 9 and s.method == "exact"
    np.testing.assert_array_equal(s.pvalue, ref.pvalue)
    b = cv.bootstrap_test("lr", "ridge", loss="hinge", cluster=labels, n_resamples=999, key=2)
    bref = jaxtests.bootstrap_test(
        (d, np.zeros_like(d)), "mean_difference", cluster=lab, n_resamples=999, key=2
    )
    np.testing.assert_allclose(b.pvalue, bref.pvalue, rtol=1e-12)
    ci = cv.bootstrap("lr", "ridge", measure="accuracy", cluster=labels, n_resamples=999, key=3)
    out = {n: cv.test_outputs(n) for n in ("lr", "ridge")}
    yv = out["lr"].y
    ciref = jaxtests.bootstrap(
        (yv, out["lr"].output, out["ridge"].output),
        "accuracy_difference",
        cluster=labels[out["lr"].index],
        n_resamples=999,
        key=3,
    )
    assert ci.n_clusters == 9
    np.testing.assert_allclose(ci.confidence_interval.low, ciref.confidence_interval.low)
    mc = cv.mcnemar("lr", "ridge", cluster=labels)
    pa, pb = (np.where(out[n].output > 0, 1, -1) for n in ("lr", "ridge"))
    mref = jaxtests.mcnemar(np.where(yv > 0, 1, -1), pa, pb, cluster=labels[out["lr"].index])
    assert mc.n_clusters == 9
    np.testing.assert_allclose(mc.pvalue, mref.pvalue, rtol=1e-12)
    with pytest.raises(ValueError, match=r"`cluster` needs one label per instance of the data"):
        cv.signflip_test("lr", "ridge", cluster=lab)
    with pytest.raises(ValueError, match="`cluster` groups instances; `ttest_paired` tests"):
        cv.ttest_paired("lr", "ridge", cluster=labels)
