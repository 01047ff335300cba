"""A gradient booster's parameters that do not depend on the data, checked and resolved
for the engine (:class:`forestimp._boosting_base.BaseGradientBoosting`)."""

from __future__ import annotations

import warnings
from typing import Any

from . import _params as P
from ._core import InvalidParameterError


def checked(self: Any) -> dict[str, Any]:
    """The engine's parameters that do not depend on the data (InvalidParameterError)."""
    loss = P.check_choice("loss", self.loss, self._losses)
    lr = P.check_real("learning_rate", self.learning_rate, 0.0, float("inf"))
    n_est = P.check_int("n_estimators", self.n_estimators, 1, P.MAX_TREES)
    criterion = P.check_choice(
        "criterion", self.criterion, ("deprecated", "friedman_mse", "squared_error")
    )
    if criterion != "deprecated":
        # scikit-learn 1.9 accepts it, warns and ignores it: its trees split on
        # squared error whatever it says, as these do.
        warnings.warn(
            "The parameter `criterion` is deprecated and will be removed in 1.11. It has "
            "no effect. Leave it to its default value to avoid this warning.",
            FutureWarning,
            stacklevel=3,
        )
    sub = self.subsample
    if not (P._is_real(sub) or P._is_int(sub)) or not (0.0 < float(sub) <= 1.0):
        raise InvalidParameterError(
            f"The 'subsample' parameter must be a float in the range (0.0, 1.0], got {sub!r}."
        )
    alpha = P.check_real("alpha", self.alpha, 0.0, 1.0)
    if loss in ("huber", "quantile") and not 0.0 < alpha < 1.0:
        raise InvalidParameterError(
            f"The 'alpha' parameter must be a float in the range (0.0, 1.0), got {alpha!r}."
        )
    if self._init_estimator():
        needed = ("fit", "predict_proba" if self._is_classifier else "predict")
        if not all(callable(getattr(self.init, m, None)) for m in needed):
            raise InvalidParameterError(
                f"The 'init' parameter must be None, 'zero' or an estimator with "
                f"{' and '.join(needed)}, got {self.init!r}."
            )
    elif self.init is not None and self.init != "zero":
        raise InvalidParameterError(
            f"The 'init' parameter must be None, 'zero' or an estimator, got {self.init!r}."
        )
    max_depth = P.check_int("max_depth", self.max_depth, 1, none_ok=True)
    max_leaf_nodes = P.check_int("max_leaf_nodes", self.max_leaf_nodes, 2, none_ok=True)
    P.check_real("min_weight_fraction_leaf", self.min_weight_fraction_leaf, 0.0, 0.5)
    P.check_real("min_impurity_decrease", self.min_impurity_decrease, 0.0, float("inf"))
    P.check_real("ccp_alpha", self.ccp_alpha, 0.0, float("inf"))
    P.check_real("validation_fraction", self.validation_fraction, 0.0, 1.0)
    if not 0.0 < self.validation_fraction < 1.0:
        raise InvalidParameterError(
            "The 'validation_fraction' parameter must be a float in the range (0.0, 1.0), "
            f"got {self.validation_fraction!r}."
        )
    n_iter = P.check_int("n_iter_no_change", self.n_iter_no_change, 1, none_ok=True)
    if n_iter is not None:
        # The engine keeps n_iter_no_change past losses (it aborts allocating 10**18);
        # at n_estimators or more the rule can never stop, so that many slots agree.
        n_iter = min(n_iter, n_est)
    P.check_real("tol", self.tol, 0.0, float("inf"))
    verbose = P.check_verbose(self.verbose)
    P.check_bool(type(self).__name__, "warm_start", self.warm_start)
    splitter = P.check_choice("splitter", self.splitter, ("best", "random", "hist"))
    max_bins = P.check_int("max_bins", self.max_bins, 2, 256)
    return {
        "loss": loss,
        "alpha": alpha,
        "learning_rate": float(lr),
        "n_estimators": n_est,
        "subsample": float(sub),
        "init_zero": self.init is not None,
        "splitter": splitter,
        "max_bins": max_bins,
        "max_depth": max_depth,
        "min_weight_fraction_leaf": float(self.min_weight_fraction_leaf),
        "min_impurity_decrease": float(self.min_impurity_decrease),
        "max_leaf_nodes": max_leaf_nodes,
        "ccp_alpha": float(self.ccp_alpha),
        "n_iter_no_change": n_iter,
        "tol": float(self.tol),
        "verbose": verbose,
    }
