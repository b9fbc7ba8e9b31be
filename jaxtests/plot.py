"""Figures from the seeds: fold histograms and paired fold differences, (tpr, fpr)
scatter with Gaussian contours, permutation null distributions, algorithm orderings,
Demšar's critical-difference diagram of a Nemenyi test, projections on learned measures,
the simplex of a Bayesian signed-rank test's posterior.

Needs matplotlib (a dependency of jaxtests). Every function draws on ``ax`` when given,
else on a new figure, and returns the figure; nothing is shown or saved here (the CLI
saves PNGs). Each accepts the result object that carries its data (a permutation test
with ``return_null=True``, a post hoc result, a MANOVA result) as well as plain arrays;
``critical_difference`` takes its ``NemenyiResult`` only, ``simplex`` its
``SignRankResult`` only.

Readable at many algorithms: overlays switch to small multiples (one panel per
algorithm, shared axes) above three algorithms, names sit on an axis (one row each, so
they never overlap), count axes have integer ticks, and legends sit outside the data.
"""

from jaxtests._plotting.critical_difference import critical_difference as critical_difference
from jaxtests._plotting.folds import fold_differences as fold_differences
from jaxtests._plotting.folds import fold_histograms as fold_histograms
from jaxtests._plotting.folds import projection as projection
from jaxtests._plotting.null import null_distribution as null_distribution
from jaxtests._plotting.ordering import ordering as ordering
from jaxtests._plotting.scatter import scatter_gaussian as scatter_gaussian
from jaxtests._plotting.simplex import simplex as simplex

__all__ = [
    "critical_difference",
    "fold_differences",
    "fold_histograms",
    "null_distribution",
    "ordering",
    "projection",
    "scatter_gaussian",
    "simplex",
]
