"""Power and calibration studies of the tests, and agreement tables on real runs.

* :func:`power` simulates many experiments at once and reports each test's
  rejection rate with a Clopper-Pearson interval, for one effect or a curve.
* :func:`calibration` does the same under H0 and compares the p-values with the
  uniform distribution (QQ data, Kolmogorov distance, a flag for tests whose
  type-I error exceeds ``alpha`` beyond Monte Carlo error).
* :func:`loss_study` is MacKay's experiment ("More sensitive tests in DELVE"): Cauchy errors, paired
  tests on the losses ``|error|^p`` for ``p`` in {2, 1, 0.5, 0.1}.
* :func:`agreement` tabulates the accept/reject decisions of two tests over
  repeated cross-validation runs and all pairs of algorithms (Yildiz & Alpaydin,
  "Statistical Tests using Hinge/epsilon-Sensitive Loss", Tables 2-3, and
  "Multivariate Comparison of Classification Algorithms", Tables 1-2), with
  normality-rejection rates (the former's Table 1).

Every result has ``table()`` (plain text) and ``to_dict()`` (JSON-able).
Figures: :func:`plot_power`, :func:`plot_calibration`, :func:`plot_agreement`
(matplotlib is imported only when they are called).
"""

from jaxtests._plotting.studies import plot_agreement as plot_agreement
from jaxtests._plotting.studies import plot_calibration as plot_calibration
from jaxtests._plotting.studies import plot_power as plot_power
from jaxtests._studies._experiments import MULTIVARIATE_TESTS as MULTIVARIATE_TESTS
from jaxtests._studies._experiments import TESTS as TESTS
from jaxtests._studies._experiments import UNIVARIATE_TESTS as UNIVARIATE_TESTS
from jaxtests._studies.agreement import PRESETS as PRESETS
from jaxtests._studies.agreement import AgreementResult as AgreementResult
from jaxtests._studies.agreement import agreement as agreement
from jaxtests._studies.calibration import CalibrationResult as CalibrationResult
from jaxtests._studies.calibration import calibration as calibration
from jaxtests._studies.generators import GENERATORS as GENERATORS
from jaxtests._studies.generators import Generator as Generator
from jaxtests._studies.generators import from_data as from_data
from jaxtests._studies.generators import generator as generator
from jaxtests._studies.loss_study import LossStudyResult as LossStudyResult
from jaxtests._studies.loss_study import loss_study as loss_study
from jaxtests._studies.power import PowerResult as PowerResult
from jaxtests._studies.power import power as power

__all__ = [
    "GENERATORS",
    "MULTIVARIATE_TESTS",
    "PRESETS",
    "TESTS",
    "UNIVARIATE_TESTS",
    "AgreementResult",
    "CalibrationResult",
    "Generator",
    "LossStudyResult",
    "PowerResult",
    "agreement",
    "calibration",
    "from_data",
    "generator",
    "loss_study",
    "plot_agreement",
    "plot_calibration",
    "plot_power",
    "power",
]
