"""jaxtests: statistical tests for comparing learning algorithms, on JAX.

Public API re-exports only; see the submodules for documentation. The
resampling and t tests are imported with the package (and jax with them);
every other name at first use (PEP 562), so ``import jaxtests`` does not load
cross-validation, plotting, studies, data sets or scipy.
"""

import importlib as _importlib

# re-exported eagerly (listed in __all__ below)
from jaxtests._mcnemar import mcnemar  # noqa: F401
from jaxtests._permutation import (  # noqa: F401
    PermutationTestResult,
    permutation_test,
    signflip_test,
    swap_test,
)
from jaxtests._ttests import (  # noqa: F401
    ftest_5x2cv,
    ttest_5x2cv,
    ttest_corrected,
    ttest_paired,
)
from jaxtests._version import __version__ as __version__

# public name -> the module that defines it (submodules map to themselves)
_WHERE = {
    "bayesian": "jaxtests.bayesian",
    "datasets": "jaxtests.datasets",
    "kernels": "jaxtests.kernels",
    "losses": "jaxtests.losses",
    "measures": "jaxtests.measures",
    "models": "jaxtests.models",
    "plot": "jaxtests.plot",  # matplotlib loads at first use, not with jaxtests
    "power": "jaxtests.power",
    "study": "jaxtests.study",
    "ConfidenceInterval": "jaxtests._results",
    **dict.fromkeys(("CVResult", "cross_validate"), "jaxtests._cv"),
    **dict.fromkeys(("FiveByTwo", "KFold", "RandomSplits"), "jaxtests._splitters"),
    **dict.fromkeys(
        ("BootstrapResult", "BootstrapTestResult", "bootstrap", "bootstrap_test"),
        "jaxtests._bootstrap",
    ),
    **dict.fromkeys(("CochranQResult", "cochran_q"), "jaxtests._cochran"),
    **dict.fromkeys(
        ("DeLongIntervalResult", "DeLongResult", "delong_interval", "delong_test"),
        "jaxtests._delong",
    ),
    **dict.fromkeys(
        ("FriedmanResult", "NemenyiResult", "friedman", "nemenyi"), "jaxtests._friedman"
    ),
    **dict.fromkeys(
        ("clopper_pearson", "hoeffding_interval", "hoeffding_sample_size"), "jaxtests._intervals"
    ),
    **dict.fromkeys(("anova", "manova"), "jaxtests._anova"),
    "hotelling_t2": "jaxtests._hotelling",
    "mardia": "jaxtests._mardia",
    **dict.fromkeys(("ModelComparison", "compare_models"), "jaxtests._many_models"),
    **dict.fromkeys(("adjust_pvalues", "cliques", "ordering", "posthoc"), "jaxtests._posthoc"),
    **dict.fromkeys(("FriedmanPosthocResult", "friedman_posthoc"), "jaxtests._rank_posthoc"),
    **dict.fromkeys(("PermutationTestScoreResult", "permutation_test_score"), "jaxtests._sanity"),
    **dict.fromkeys(("ScoreTable", "read_scores"), "jaxtests._scores"),
    **dict.fromkeys(("ItemMeansResult", "item_means"), "jaxtests._items"),
    **dict.fromkeys(("ItemTable", "read_items"), "jaxtests._tidy"),
    "ScoreReport": "jaxtests._score_report",
    **dict.fromkeys(("WilcoxonResult", "wilcoxon"), "jaxtests._wilcoxon"),
    **dict.fromkeys(("WildBootstrapResult", "wild_cluster_bootstrap"), "jaxtests._wild"),
}

__all__ = sorted(
    [
        "PermutationTestResult",
        "ftest_5x2cv",
        "mcnemar",
        "permutation_test",
        "signflip_test",
        "swap_test",
        "ttest_5x2cv",
        "ttest_corrected",
        "ttest_paired",
        *_WHERE,
    ]
)


def __getattr__(name):
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'jaxtests' has no attribute {name!r}")
    module = _importlib.import_module(where)
    value = module if where == f"jaxtests.{name}" else getattr(module, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted({*globals(), *_WHERE})
