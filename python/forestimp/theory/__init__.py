"""Exact oracles for tree-based variable importances on discrete distributions.

* :func:`asymptotic_importances` — infinite forests of totally randomized trees grown on
  infinite samples (Louppe et al. 2013, Thm 1; Louppe 2014, Eq. 6.10, 6.31, 6.37);
* :func:`local_asymptotic_importances` — their local (per-sample) MDI, the Shapley values of
  an impurity game (Sutera et al. 2021);
* :func:`expected_importances` — infinite forests of finite-sample trees with K > 1 or
  Extra-Trees binary splits, by exact enumeration of the trees;
* :func:`context_importances` — context-dependent scores (Sutera PhD, ch. 6, Eq. 6.10–6.12);
* :func:`expected_srs_iterations` — expected number of trees that random subspace and
  sequential random subspace selection need to find all relevant variables (Sutera PhD,
  ch. 7, Thms 7.7–7.10 and App. 7.B.3), with :func:`srs_transition_matrix` for its chain,
  and :func:`simulate_srs` for batched rounds (B subspaces per round, as on a cluster);
* entropy, conditional entropy, (conditional) mutual information with plug-in, Miller–Madow
  and Grassberger estimators.
"""

from ._asymptotic import AsymptoticImportances, asymptotic_importances
from ._context import ContextImportances, context_importances
from ._expected import expected_importances
from ._information import (
    conditional_entropy,
    conditional_mutual_information,
    entropy,
    mutual_information,
)
from ._shapley import LocalAsymptoticImportances, local_asymptotic_importances
from ._srs import expected_srs_iterations, srs_transition_matrix
from ._srs_batches import SRSSimulation, simulate_srs

__all__ = [
    "AsymptoticImportances",
    "ContextImportances",
    "LocalAsymptoticImportances",
    "SRSSimulation",
    "asymptotic_importances",
    "context_importances",
    "conditional_entropy",
    "conditional_mutual_information",
    "entropy",
    "expected_importances",
    "expected_srs_iterations",
    "local_asymptotic_importances",
    "mutual_information",
    "simulate_srs",
    "srs_transition_matrix",
]
