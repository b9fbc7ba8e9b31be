"""A documented generator of benchmark results: models answering clustered items."""

import math
from typing import NamedTuple

import numpy as np

__all__ = ["Benchmark", "make_benchmark"]


class Benchmark(NamedTuple):
    """Per-item results of :func:`make_benchmark`.

    Attributes
    ----------
    correct : ndarray, (n_models, n_items) or (n_models, n_items, n_samples)
        1.0 where a model answered an item right (per sampled answer with
        ``n_samples``), else 0.0.
    cluster : ndarray, (n_items,)
        The cluster (passage) of each item, ``0 .. n_clusters - 1``.
    models : tuple of str
        ``"model-0"``, ``"model-1"``, ...
    accuracy : ndarray, (n_models,)
        Each model's expected accuracy over the item population (the truth a
        test is about), computed by quadrature of the generating model.
    """

    correct: np.ndarray
    cluster: np.ndarray
    models: tuple
    accuracy: np.ndarray


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


def make_benchmark(
    abilities=(0.0, 0.2, 0.4),
    *,
    n_clusters=200,
    cluster_size=10,
    cluster_sd=1.0,
    item_sd=1.0,
    interaction_sd=0.5,
    n_samples=None,
    seed=0,
):
    """Generate models' 0/1 results on a benchmark whose items come in clusters.

    A one-parameter logistic (Rasch) model with clustered difficulties: item ``i``
    of cluster ``g`` has difficulty ``b_i = u_g + e_i`` with ``u_g ~ N(0,
    cluster_sd^2)`` shared by the cluster (a hard passage makes all its questions
    hard) and ``e_i ~ N(0, item_sd^2)``; model ``k`` answers it right with
    probability ``sigmoid(abilities[k] + v_kg - b_i)``, independently given these
    (and, with ``n_samples``, independently for each sampled answer), where
    ``v_kg ~ N(0, interaction_sd^2)`` is the model's own affinity for the cluster
    (one model is better on passages about sport). Models of equal ability have
    equal accuracy over the population of clusters, the null hypothesis of every
    test, yet their differences lean the same way within a cluster: naive
    per-item tests are then too liberal, clustered ones are not.

    Parameters
    ----------
    abilities : sequence of float
        One ability per model (logit scale); equal values give equally good models.
    n_clusters, cluster_size : int
        Clusters (passages) and items per cluster.
    cluster_sd, item_sd : float
        Spread of the clusters' and the items' difficulties (logit scale).
    interaction_sd : float
        Spread of each model's affinity for each cluster (logit scale); 0 gives
        differences between models that are independent from item to item.
    n_samples : int or None
        Sampled answers per item and model (a third axis), or None for one.
    seed : int
        numpy ``default_rng`` seed: the same seed gives the same benchmark.

    Returns
    -------
    Benchmark
        ``correct``, ``cluster``, ``models``, ``accuracy``.

    Examples
    --------
    >>> from jaxtests import datasets
    >>> bench = datasets.make_benchmark((0.0, 0.0), n_clusters=50, cluster_size=4)
    >>> bench.correct.shape, bench.cluster[:6].tolist()
    ((2, 200), [0, 0, 0, 0, 1, 1])
    >>> [round(float(a), 4) for a in bench.accuracy]  # equal abilities: equal accuracies
    [0.5, 0.5]
    """
    abilities = np.asarray(abilities, dtype=np.float64)
    if abilities.ndim != 1 or abilities.size == 0 or not np.isfinite(abilities).all():
        raise ValueError("`abilities` must be a non-empty sequence of finite numbers.")
    for value, name in ((n_clusters, "n_clusters"), (cluster_size, "cluster_size")):
        if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer, got {value!r}.")
    if n_clusters < 2:
        raise ValueError("`n_clusters` must be at least 2.")
    spreads = ((cluster_sd, "cluster_sd"), (item_sd, "item_sd"), (interaction_sd, "interaction_sd"))
    for value, name in spreads:
        if not (
            isinstance(value, int | float | np.floating) and math.isfinite(value) and value >= 0
        ):
            raise ValueError(f"`{name}` must be a finite number >= 0, got {value!r}.")
    if n_samples is not None and (
        not isinstance(n_samples, int | np.integer) or isinstance(n_samples, bool) or n_samples < 1
    ):
        raise ValueError(f"`n_samples` must be a positive integer or None, got {n_samples!r}.")
    rng = np.random.default_rng(seed)
    cluster = np.repeat(np.arange(n_clusters), cluster_size)
    difficulty = cluster_sd * rng.normal(size=n_clusters)[cluster]
    difficulty = difficulty + item_sd * rng.normal(size=cluster.size)
    affinity = interaction_sd * rng.normal(size=(abilities.size, n_clusters))[:, cluster]
    p = _sigmoid(abilities[:, None] + affinity - difficulty[None, :])
    shape = p.shape if n_samples is None else (*p.shape, n_samples)
    prob = p if n_samples is None else p[..., None]
    correct = (rng.random(shape) < prob).astype(np.float64)
    # E[sigmoid(a + v - b)], v - b ~ N(0, the three spreads squared): Gauss-Hermite
    nodes, weights = np.polynomial.hermite_e.hermegauss(101)
    sd = math.sqrt(cluster_sd**2 + item_sd**2 + interaction_sd**2)
    accuracy = _sigmoid(abilities[:, None] - sd * nodes[None, :]) @ weights / weights.sum()
    models = tuple(f"model-{k}" for k in range(abilities.size))
    return Benchmark(correct=correct, cluster=cluster, models=models, accuracy=accuracy)
