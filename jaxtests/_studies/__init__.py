"""The studies of :mod:`jaxtests.study`, one per module.

``generators`` draws simulated experiments, ``_experiments`` runs the tests on a batch
of them; ``power``, ``calibration``, ``loss_study`` and ``agreement`` are the studies.
"""
