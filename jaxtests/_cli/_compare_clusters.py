"""``compare --cluster``: clustered instances and per-item files (issue 38).

Which tests take clusters, the labels aligned with the differences they test, and
what the output says about clusters and repeated samples per item.
"""

import numpy as np

from jaxtests._cli._common import BadInput
from jaxtests._tidy import ItemTable, PerInstance

CLUSTER_SE = ("CR1", "CR2")
# the tests of instances (or items) that honour --cluster, and how
CLUSTERED = {
    "t": "cluster-robust t",
    "signflip": "clusters' sums flipped together",
    "bootstrap": "clusters resampled whole",
    "mcnemar": "Durkalski et al.'s clustered chi-square",
    "wild": "wild cluster bootstrap (Rademacher, restricted)",
}
ITEM_TESTS = ("t", "signflip", "bootstrap", "wild")  # the tests of a per-item file
REFUSED = {  # why a test cannot take --cluster
    "delong": "DeLong's variance takes the instances as independent",
    "cochran": "Cochran's Q takes the instances as independent",
    "swap": "it swaps the predictions of single instances",
}


def add_options(parser):
    parser.add_argument(
        "--cluster",
        metavar="COLUMN",
        help="column of cluster labels of a per-instance or per-item file (questions about "
        "one passage): t, signflip, bootstrap, mcnemar and wild take the clusters as the "
        "independent units",
    )
    parser.add_argument(
        "--cluster-se",
        choices=CLUSTER_SE,
        default=None,
        help="--test t with --cluster: CR1 (default; statsmodels' cluster-robust standard "
        "error, G - 1 df) or CR2 (Bell & McCaffrey, better with few clusters)",
    )


def clustered(data):
    return getattr(data, "clusters", None) is not None


def check(args, tests, data, losses=()):
    """Refuse the tests and options that cannot take the clusters or the per-item file."""
    if args.cluster_se is not None and args.cluster is None:
        raise BadInput("--cluster-se is used with --cluster only (the clustered t).")
    if args.cluster_se is not None and "t" not in tests:
        raise BadInput(f"--cluster-se is not used by --test {' '.join(tests)}: only t uses it.")
    if "wild" in tests and args.cluster is None:
        raise BadInput(
            "--test wild is the wild cluster bootstrap: name the column of cluster labels "
            "with --cluster."
        )
    if isinstance(data, ItemTable):
        for t in tests:
            if t not in ITEM_TESTS:
                raise BadInput(
                    f"--test {t} does not take a per-item file (model, item, score): it takes "
                    "t, signflip, bootstrap and wild (with --cluster)."
                )
        if args.measures and any(m != "score" for m in args.measures):
            raise BadInput("--measures: a per-item file has one measure, its 'score' column.")
        return
    if args.cluster is None:
        return
    if not isinstance(data, PerInstance):  # read_tidy refuses a cluster column here
        raise BadInput("--cluster groups the instances of a per-instance file.")
    for t in tests:
        if t not in CLUSTERED:
            why = REFUSED.get(t, "it compares per-fold values, not instances")
            raise BadInput(f"--test {t} cannot take --cluster: {why}.")
    for t in ("t", "wild"):
        for m in args.measures or () if t in tests else ():
            if m not in losses:
                raise BadInput(
                    f"--test {t} with --cluster tests per-instance loss differences; {m!r} is "
                    f"not a per-instance loss. Choose from {list(losses)}."
                )
    if "bootstrap" in tests and any("auc" in m for m in args.measures or ()):
        raise BadInput(
            "--test bootstrap --measures roc_auc cannot take --cluster: an AUC is not a ratio "
            "of sums over instances (use a per-instance loss, or accuracy, f1...)."
        )


def labels(data):
    """Cluster labels aligned with the differences of ``_signflip_data`` (None unclustered)."""
    if not clustered(data):
        return None
    lab = np.asarray(data.clusters)
    if isinstance(data, PerInstance) and data.repetitions is not None:
        # the differences are each instance's mean over repetitions, in np.unique order
        _, first = np.unique(data.instances, return_index=True)
        lab = lab[first]
    return lab


def unit(data):
    """What one difference of a per-instance test is: an item or an instance."""
    return "item" if isinstance(data, ItemTable) else "instance"


def summary(args, data, tests):
    """The clusters and the per-item means, for ``--json`` and as lines of text."""
    payload, lines = {}, []
    lab = labels(data)
    if lab is not None:
        g, n = np.unique(lab).size, lab.size
        used = [t for t in tests if t in CLUSTERED]
        se = args.cluster_se or "CR1"
        payload["cluster"] = {
            "column": data.cluster_column,
            "n_clusters": int(g),
            f"n_{unit(data)}s": int(n),
            "tests": {t: CLUSTERED[t] for t in used},
        }
        how = "; ".join(f"{t}: {CLUSTERED[t]}" + (f" ({se})" if t == "t" else "") for t in used)
        lines.append(
            f"clustered by {data.cluster_column!r}: {g} clusters of {n} {unit(data)}s ({how})."
        )
    if isinstance(data, ItemTable):
        res = data.item_means()
        k = res.n_samples
        rows = {m: _split_of(res, i) for i, m in enumerate(data.models)}
        if len(data.models) >= 2:
            a, b = args.pair or data.models[:2]
            ia, ib = data.models.index(a), data.models.index(b)
            rows[f"{a} - {b}"] = _split_of(res.difference(ia, ib), None)
        payload["items"] = {"n_items": res.n_items, "n_samples": k, "models": rows}
        if k == 1:
            lines.append(
                f"per-item scores ({res.n_items} items, one sample each): no within-item "
                "variance to estimate."
            )
        else:
            lines.append(
                f"per-item means of {k} samples ({res.n_items} items; Miller 2024: Var(mean) = "
                "between / n + within / (n K)):"
            )
            for name, r in rows.items():
                lines.append(
                    f"  {name}: mean {r['mean']:.4g}, standard error "
                    f"{r['standard_error']:.4g}; within-item variance "
                    f"{r['variance_within']:.4g}, between-item {r['variance_between']:.4g}; "
                    f"sampling is {r['within_share']:.1%} of the total"
                    + (
                        " (more than all: the between-item estimate is negative)"
                        if r["variance_between"] < 0
                        else ""
                    )
                )
    return payload, lines


def _split_of(res, i):
    pick = (lambda v: np.asarray(v)[i]) if i is not None else np.asarray
    return {
        f: float(pick(getattr(res, f)))
        for f in (
            "mean",
            "standard_error",
            "variance_within",
            "variance_between",
            "within_share",
        )
    }
