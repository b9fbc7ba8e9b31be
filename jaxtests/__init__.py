"""jaxtests: statistical tests for comparing learning algorithms, on JAX.

Public API re-exports only; see the submodules for documentation.
"""

from jaxtests import bayesian, datasets, losses, measures, models, study
from jaxtests._cv import CVResult, FiveByTwo, KFold, RandomSplits, cross_validate
from jaxtests._friedman import FriedmanResult, NemenyiResult, friedman, nemenyi
from jaxtests._intervals import clopper_pearson, hoeffding_interval, hoeffding_sample_size
from jaxtests._multivariate import anova, hotelling_t2, manova, mardia
from jaxtests._permutation import PermutationTestResult, permutation_test, signflip_test, swap_test
from jaxtests._posthoc import adjust_pvalues, cliques, ordering, posthoc
from jaxtests._rank_posthoc import FriedmanPosthocResult, friedman_posthoc
from jaxtests._sanity import PermutationTestScoreResult, permutation_test_score
from jaxtests._scores import ScoreTable, read_scores
from jaxtests._ttests import ftest_5x2cv, mcnemar, ttest_5x2cv, ttest_corrected, ttest_paired
from jaxtests._wilcoxon import WilcoxonResult, wilcoxon

__all__ = [
    "CVResult",
    "FiveByTwo",
    "FriedmanPosthocResult",
    "FriedmanResult",
    "KFold",
    "NemenyiResult",
    "PermutationTestResult",
    "PermutationTestScoreResult",
    "RandomSplits",
    "ScoreTable",
    "WilcoxonResult",
    "adjust_pvalues",
    "anova",
    "bayesian",
    "cliques",
    "clopper_pearson",
    "cross_validate",
    "datasets",
    "friedman",
    "friedman_posthoc",
    "ftest_5x2cv",
    "hoeffding_interval",
    "hoeffding_sample_size",
    "hotelling_t2",
    "losses",
    "manova",
    "mardia",
    "mcnemar",
    "measures",
    "models",
    "nemenyi",
    "ordering",
    "permutation_test",
    "permutation_test_score",
    "posthoc",
    "read_scores",
    "signflip_test",
    "study",
    "swap_test",
    "ttest_5x2cv",
    "ttest_corrected",
    "ttest_paired",
    "wilcoxon",
]

__version__ = "0.1.0"
