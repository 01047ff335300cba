"""Context-dependent importances (Sutera, PhD ch. 6) from forests of totally randomized trees.

On exhaustive data (every row of the support, replicated so that contexts have their
probabilities) a large forest reproduces the asymptotic values of Tables 6.2 and 6.3.
"""

from __future__ import annotations

import numpy as np
import pytest

import forestimp
from forestimp.datasets import make_context_problem
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.importance import ContextImportances, context
from forestimp.theory import context_importances as exact_context_importances

from conftest import SKIP_6_3, TABLE_6_2, TABLE_6_3


def problem1(copies=1):
    """Context Problem 1 (16 rows), ``copies`` times."""
    X, y, c, _ = make_context_problem(1)
    return np.tile(X.astype(float), (copies, 1)), np.tile(y, copies), np.tile(c, copies)


def problem2():
    """Context Problem 2 (320 equally likely rows)."""
    X, y, c, _ = make_context_problem(2)
    return X.astype(float), y, c


def trt(X, y, n_estimators, **kw):
    return forestimp.TotallyRandomizedTreesClassifier(
        n_estimators=n_estimators, criterion="entropy", bootstrap=False, random_state=0, **kw
    ).fit(X, y)


@pytest.fixture(scope="module")
def p1():
    X, y, c = problem1()
    est = trt(X, y, 2000)
    return est, X, y, c


@pytest.fixture(scope="module")
def p2():
    X, y, c = problem2()
    est = trt(X, y, 2000, n_jobs=2)
    return est, X, y, c


def test_binary_features_split_like_multiway_splits(p1, p2):
    # A random threshold on a 0/1 feature always falls strictly between 0 and 1, so binary
    # trees on bits are the multiway trees of the theory.
    for est, _, _, _ in (p1, p2):
        for i in range(20):
            a = est.forest_.tree_arrays(i)
            internal = a["feature"] >= 0
            assert np.all((a["threshold"][internal] > 0) & (a["threshold"][internal] < 1))


def test_problem1_reproduces_table_6_2(p1):
    est, X, y, c = p1
    r = context(est, X, y, c, naive=True)
    assert isinstance(r, ContextImportances)
    np.testing.assert_allclose(r.importances_mean, TABLE_6_2["importances"], atol=0.02)
    np.testing.assert_allclose(r.per_context, TABLE_6_2["per_context"], atol=0.02)
    np.testing.assert_allclose(r.absolute.T, TABLE_6_2["absolute"], atol=0.02)
    np.testing.assert_allclose(r.signed.T, TABLE_6_2["signed"], atol=0.02)
    np.testing.assert_allclose(r.global_signed, TABLE_6_2["global_signed"], atol=0.02)
    # X1 is context-independent: every node's two informations are equal (Thm 6.2).
    assert np.all(np.abs(r.absolute[0]) < 1e-12)
    # X2 and X3 meet Thm 6.3's equality |Imp^D| = Imp^| node by node.
    np.testing.assert_allclose(np.abs(r.signed), r.absolute, atol=1e-12)
    # X_c independent of the inputs: the global score is the P(x_c)-mixture of the signed ones.
    np.testing.assert_allclose(r.global_signed, r.signed.mean(axis=1), atol=1e-12)
    assert r.pvalues_absolute is None and r.null_absolute.shape == (0, 3, 2)


def test_problem2_reproduces_table_6_3(p2):
    est, X, y, c = p2
    r = context(est, X, y, c, naive=True)
    np.testing.assert_allclose(r.importances_mean, TABLE_6_3["importances"], atol=0.02)
    np.testing.assert_allclose(r.per_context, TABLE_6_3["per_context"], atol=0.02)
    np.testing.assert_allclose(r.absolute.T, TABLE_6_3["absolute"], atol=0.02)
    np.testing.assert_allclose(r.signed.T, TABLE_6_3["signed"], atol=0.02)
    assert np.all(r.absolute[7] < 1e-12) and r.importances_mean[7] < 1e-12  # X8 is noise


def test_skip_convention_gives_the_other_context0_values(p2):
    est, X, y, c = p2
    zero = context(est, X, y, c, empty="zero")
    skip = context(est, X, y, c, empty="skip")
    np.testing.assert_allclose(skip.absolute[:4, 0], SKIP_6_3["absolute"], atol=0.02)
    np.testing.assert_allclose(skip.signed[:4, 0], SKIP_6_3["signed"], atol=0.02)
    # Every node holds context-1 rows, and nodes without context-0 rows never separate Y by
    # X5..X7 (their rows are context 1, where X5..X7 are noise): only X1..X4 | 0 change.
    np.testing.assert_array_equal(skip.absolute[:, 1], zero.absolute[:, 1])
    np.testing.assert_allclose(skip.absolute[4:, 0], zero.absolute[4:, 0], atol=1e-12)
    assert np.all(zero.absolute[:4, 0] - skip.absolute[:4, 0] > 0.05)
    # The global score weighs contexts by P(x_c | t): it has no convention.
    np.testing.assert_array_equal(skip.global_signed, zero.global_signed)


@pytest.mark.parametrize("criterion", ["entropy", "gini"])
def test_imp_is_the_forest_mdi_on_its_training_data(criterion):
    X, y, c = problem2()
    rng = np.random.RandomState(0)
    w = rng.randint(0, 4, size=len(y)).astype(float)
    est = forestimp.ExtraTreesClassifier(
        n_estimators=30, max_features=3, criterion=criterion, random_state=1
    ).fit(X, y, sample_weight=w)
    r = context(est, X, y, c, sample_weight=w)
    np.testing.assert_allclose(r.importances_mean, est.mdi_importances_, rtol=0, atol=1e-12)
    # Without the fit's weights the samples weigh alike, and Imp is no longer the MDI.
    unweighted = context(est, X, y, c)
    assert not np.allclose(unweighted.importances_mean, est.mdi_importances_)


def test_regression_uses_the_variance_decrease():
    # Problem 1 with a real output and the variance impurity (Sutera Eq. 6.13). Unlike with
    # the entropy, X1 is context-dependent here: Y = 2 vs Y in {0, 1} spreads differently.
    X, y, c = problem1(2)
    est = forestimp.TotallyRandomizedTreesRegressor(n_estimators=1000, random_state=0).fit(X, y)
    r = context(est, X, y.astype(float), c)
    np.testing.assert_allclose(r.importances_mean, est.mdi_importances_, rtol=0, atol=1e-12)
    exact = exact_context_importances(X, y.astype(float), c, criterion="variance")
    np.testing.assert_allclose(r.absolute, exact.absolute, atol=0.02)
    np.testing.assert_allclose(r.signed, exact.signed, atol=0.02)
    np.testing.assert_allclose(r.global_signed, exact.global_signed, atol=0.02)
    assert exact.absolute[0].min() > 0.1


@pytest.mark.parametrize(("criterion", "empty"), [("gini", "zero"), ("entropy", "skip")])
def test_forest_scores_match_the_exact_scores(criterion, empty):
    # The exact oracle (forestimp.theory) on the same support, for another impurity and the
    # other convention; the global score too.
    X, y, c = problem2()
    est = trt(X, y, 1000, n_jobs=2).set_params(criterion=criterion).fit(X, y)
    r = context(est, X, y, c, empty=empty)
    exact = exact_context_importances(X, y, c, criterion=criterion, empty=empty)
    np.testing.assert_allclose(r.absolute, exact.absolute, atol=0.02)
    np.testing.assert_allclose(r.signed, exact.signed, atol=0.02)
    np.testing.assert_allclose(r.global_signed, exact.global_signed, atol=0.02)


def test_permutation_pvalues_and_labels_on_problem1():
    # 16 copies: permuted contexts are nearly balanced in every node, so the null is small.
    X, y, c = problem1(16)
    est = trt(X, y, 300)
    r = context(est, X, y, c, n_permutations=99, random_state=0)
    assert r.pvalues_absolute[0].min() > 0.5  # X1: not context-dependent
    assert r.pvalues_absolute[1:].max() <= 0.01  # X2, X3: (1 + 0) / 100
    assert r.pvalues_signed[1:].max() <= 0.01
    expected = [
        ["independent", "independent"],
        ["complementary", "irrelevant"],
        ["irrelevant", "complementary"],
    ]
    assert r.labels.tolist() == expected
    # The p-values are the counts of null scores reaching the observed ones.
    ge = r.null_absolute >= r.absolute * (1 - 1e-9)
    np.testing.assert_array_equal(r.pvalues_absolute, (1 + ge.sum(axis=0)) / 100)
    ge = np.abs(r.null_signed) >= np.abs(r.signed) * (1 - 1e-9)
    np.testing.assert_array_equal(r.pvalues_signed, (1 + ge.sum(axis=0)) / 100)
    # Labels without permutations (exact data): a positive Imp^| means context-dependent.
    assert context(est, X, y, c).labels.tolist() == expected


def test_results_do_not_depend_on_n_jobs_and_are_seeded():
    X, y, c = problem1(4)
    est = trt(X, y, 50)
    a = context(est, X, y, c, n_permutations=30, random_state=3, n_jobs=1)
    b = context(est, X, y, c, n_permutations=30, random_state=3, n_jobs=3)
    for name in ("absolute", "signed", "pvalues_absolute", "null_absolute", "null_signed"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    d = context(est, X, y, c, n_permutations=30, random_state=4)
    assert not np.array_equal(a.null_absolute, d.null_absolute)


def test_context_labels_of_any_type_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y, c = problem1()
    names = ["a", "b", "d"]
    est = trt(pd.DataFrame(X, columns=names), np.array(["u", "v", "w"])[y], 100)
    r = context(est, pd.DataFrame(X, columns=names), np.array(["u", "v", "w"])[y], 1 - c)
    df, labels = pd.DataFrame(X, columns=names), np.array(["u", "v", "w"])[y]
    s = context(est, df, labels, np.where(c == 0, "red", "blue"))  # "blue" (c = 1) sorts first
    assert r.feature_names.tolist() == names
    assert s.context_values.tolist() == ["blue", "red"]
    np.testing.assert_array_equal(r.absolute, s.absolute)


def test_bootstrap_forests_warn():
    X, y, c = problem1()
    est = forestimp.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="bootstrap=False"):
        context(est, X, y, c)


def test_bad_inputs(p1):
    est, X, y, c = p1
    with pytest.raises(DataError, match="context must have shape"):
        context(est, X, y, c[1:])
    with pytest.raises(InvalidParameterError, match="context"):
        context(est, np.tile(X, (20, 1)), np.tile(y, 20), np.arange(320))
    with pytest.raises(InvalidParameterError, match="context is required"):
        context(est, X, y)
    with pytest.raises(InvalidParameterError, match="n_permutations"):
        context(est, X, y, c, n_permutations=-1)
    with pytest.raises(InvalidParameterError, match="empty"):
        context(est, X, y, c, empty="drop")
    with pytest.raises(InvalidParameterError, match="alpha"):
        context(est, X, y, c, alpha=2.0)
    with pytest.raises(DataError, match="not fitted on"):
        context(est, X, y + 5, c)
    with pytest.raises(InvalidParameterError, match="X and y"):
        context(est, X, None, c)
    with pytest.raises(ValueError):
        context(est, X[:, :2], y, c)
    with pytest.raises(ValueError):
        context(est, X, y, c, sample_weight=-np.ones(len(y)))


@pytest.mark.parametrize("problem", [1, 2])
def test_builders_match_the_datasets_module(problem):
    def rows(X, y, c):
        return sorted(map(tuple, np.column_stack([X, y, c]).astype(int).tolist()))

    X, y, c, _ = make_context_problem(problem)
    assert rows(*(problem1() if problem == 1 else problem2())) == rows(X, y, c)
