"""Bayesian comparison of learners (Benavoli, Corani, Demšar & Zaffalon, JMLR 2017).

``correlated_ttest``: two learners on one data set (cross-validation folds).
``signrank``: two learners over data sets (the Bayesian signed-rank test; its posterior
is drawn by :func:`jaxtests.plot.simplex`).
"""

from jaxtests._bayesian import BayesianResult, SignRankResult, correlated_ttest, signrank

__all__ = ["BayesianResult", "SignRankResult", "correlated_ttest", "signrank"]
