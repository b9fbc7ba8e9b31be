"""Bayesian comparison of learners (Benavoli, Corani, Demšar & Zaffalon, JMLR 2017).

``correlated_ttest``: two learners on one data set (cross-validation folds).
"""

from jaxtests._bayesian import BayesianResult, correlated_ttest

__all__ = ["BayesianResult", "correlated_ttest"]
