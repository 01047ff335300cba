"""forestimp's quantiles against quantile-forest's on the same trees (``bench_quantiles``).

quantile-forest grows its own trees, so the comparison hands it forestimp's: its fit runs
with scikit-learn's ``BaseForest.fit`` replaced by one that installs forestimp's exported
trees (``estimators_``), and quantile-forest then maps the training rows to their leaves as
it always does. Without bootstrap every training row is in its leaves in both packages, and
both weigh a row by ``1 / leaf size`` summed over the trees, scaled to the mean leaf size:
the definitions are the same, so the quantiles must be equal to rounding (quantile-forest's
``weighted_leaves=True``; its default, False, weighs every leaf sample alike). X is rounded
to float32, as scikit-learn's trees read it.
"""

from __future__ import annotations

import numpy as np

import forestimp as fi

HOWS = ("linear", "lower", "higher", "nearest", "midpoint")
QS = [0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0]


def compare(n: int = 3000, trees: int = 50, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Per interpolation, the largest |difference| between the two packages' quantiles
    for q > 0, and at q = 0. (quantile-forest 1.4.2's ``"lower"`` and ``"midpoint"`` at
    q = 0 can read a training target of zero weight, the smallest of all, when the row's
    smallest target weighs less than one position.)"""
    import sklearn.ensemble._forest as skf
    from quantile_forest import RandomForestQuantileRegressor

    rng = np.random.default_rng(seed)
    X = rng.random((n, 5)).astype(np.float32).astype(np.float64)
    y = 3 * X[:, 0] + (0.2 + X[:, 1]) * rng.normal(size=n)
    kw = dict(n_estimators=trees, min_samples_leaf=5, bootstrap=False, random_state=seed)
    ours = fi.ExtraTreesRegressor(**kw, store_leaf_values=True).fit(X, y)
    exported = ours.estimators_

    def install(self, X, y, sample_weight=None):
        self.estimators_, self.n_outputs_, self.n_features_in_ = exported, 1, X.shape[1]
        return self

    real = skf.BaseForest.fit
    skf.BaseForest.fit = install
    try:
        theirs = RandomForestQuantileRegressor(
            n_estimators=trees, bootstrap=False, max_samples_leaf=None
        ).fit(X, y)
    finally:
        skf.BaseForest.fit = real
    Xt = rng.random((1000, 5)).astype(np.float32).astype(np.float64)
    if not np.array_equal(theirs.apply(Xt), ours.apply(Xt)):
        raise AssertionError("quantile-forest does not route the rows as forestimp's trees")
    out = {}
    for how in HOWS:
        a = ours.predict_quantiles(Xt, QS, interpolation=how)
        b = theirs.predict(Xt, quantiles=QS, interpolation=how, weighted_leaves=True)
        out[how] = (float(np.abs(a - b)[:, 1:].max()), float(np.abs(a - b)[:, 0].max()))
    return out
