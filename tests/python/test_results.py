"""The one result family of forestimp.importance: the scikit-learn Bunch names, the package's
spread rule (ddof 0), feature names, rankings, DataFrames and plots, for every measure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.inspection import permutation_importance

import forestimp as fi
from forestimp.importance import (
    Importances,
    context,
    local_mdi,
    local_permutation,
    mdi,
    permutation,
    significance,
    unbiased,
)
from forestimp.importance._result import spread


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(300, 5, n_informative=3, random_state=0)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    est = fi.RandomForestClassifier(n_estimators=20, random_state=0).fit(df, y)
    return est, df, y


def _all_results(est, X, y):
    return {
        "mdi": mdi(est),
        "oob": permutation(est, X, y, oob=True, random_state=0),
        "held_out": permutation(est, X, y, n_repeats=3, random_state=0),
        "air": unbiased(est, X, y, method="air"),
        "mdi_oob": unbiased(est, X, y, method="mdi_oob"),
        "local_mdi": local_mdi(est, X),
        "local_permutation": local_permutation(est, X, y, oob=True, random_state=0),
        "context": context(est, X, y, context=X["e"].to_numpy() > 0),
        "significance": significance(est, X, y, importance="mdi", n_permutations=3),
    }


@pytest.mark.filterwarnings("ignore:the trees were grown on resampled rows")
def test_every_measure_has_the_common_fields(fitted):
    est, X, y = fitted
    for name, r in _all_results(est, X, y).items():
        assert isinstance(r, Importances), name
        assert r.importances_mean.shape == (5,)
        assert r.feature_names.tolist() == ["a", "b", "c", "d", "e"]
        std, se = spread(r.importances, 5)
        np.testing.assert_array_equal(r.importances_std, std)
        np.testing.assert_array_equal(r.standard_error, se)
        frame = r.to_frame()
        assert frame.index.tolist() == ["a", "b", "c", "d", "e"]
        np.testing.assert_array_equal(frame["importances_mean"], r.importances_mean)
        assert frame["rank"].to_numpy()[r.ranking_].tolist() == [1, 2, 3, 4, 5]
        if r.importances is None:  # context: the engine sums trees, no draws
            assert np.isnan(r.standard_error).all()
        else:
            n = r.importances.shape[1]
            draws = r.importances[:, ~np.isnan(r.importances).any(axis=0)]
            np.testing.assert_allclose(r.importances_std, draws.std(axis=1, ddof=0))
            np.testing.assert_allclose(
                r.standard_error, r.importances_std / np.sqrt(draws.shape[1])
            )
            assert n == {"trees": 20, "repeats": 3, "samples": 300}[r.draws], name


def test_std_matches_sklearn_bunch_convention(fitted):
    """importances_std is np.std of the importances matrix over its columns (ddof 0), as in
    sklearn.inspection.permutation_importance's Bunch."""
    est, X, y = fitted
    sk = permutation_importance(est, X, y, n_repeats=4, random_state=0)
    np.testing.assert_allclose(sk.importances_std, sk.importances.std(axis=1))
    ours = permutation(est, X, y, n_repeats=4, random_state=0)
    np.testing.assert_allclose(ours.importances_std, ours.importances.std(axis=1))
    np.testing.assert_allclose(ours.importances_mean, ours.importances.mean(axis=1))


def test_default_feature_names_and_stable_ranking_on_ties():
    X = np.column_stack([np.zeros(40), np.arange(40) % 2, np.zeros(40), np.arange(40) % 2])
    y = np.arange(40) % 2
    est = fi.RandomForestClassifier(n_estimators=5, bootstrap=False, random_state=0).fit(X, y)
    r = mdi(est)
    assert r.feature_names.tolist() == ["x0", "x1", "x2", "x3"]
    # Constant columns 0 and 2 tie at 0: they keep their order, after the two used columns.
    assert r.importances_mean[0] == r.importances_mean[2] == 0.0
    assert r.ranking_[2:].tolist() == [0, 2]


def test_plot_returns_the_axes():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    X, y = make_classification(200, 4, random_state=0)
    est = fi.ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, y)
    r = mdi(est)
    fig, ax = plt.subplots()
    assert r.plot(ax=ax) is ax
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == f"x{r.ranking_[0]}"  # most important on top
    widths = sorted(p.get_width() for p in ax.patches)
    np.testing.assert_allclose(widths, np.sort(r.importances_mean))
    assert r.plot(max_features=2).get_figure() is not fig
    plt.close("all")
