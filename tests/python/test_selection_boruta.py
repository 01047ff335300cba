"""Boruta: the two decision rules checked by hand, recovery of a known relevant set, virtual
shadows (no copy of X), determinism and the scikit-learn selector contract."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.base import clone
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import RandomForestClassifier as SkForest
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import forestimp
from forestimp.exceptions import InvalidParameterError
from forestimp.selection import Boruta
from forestimp.selection._boruta import benjamini_hochberg, binomial_pvalues, decide


def test_binomial_pvalues_are_the_tails_of_a_fair_coin():
    accept, reject = binomial_pvalues(np.array([10, 0, 5]), 10)
    assert accept[0] == pytest.approx(0.5**10) and reject[1] == pytest.approx(0.5**10)
    assert accept[2] == pytest.approx(binom.sf(4, 10, 0.5))
    assert reject[2] == pytest.approx(638 / 1024)  # P(B <= 5) = (1+10+45+120+210+252)/1024


def test_bonferroni_rule_by_hand():
    # 3 features, 10 runs: 3 * 2^-10 = 0.0029 < 0.01 confirms 10 hits and rejects 0 hits.
    status = np.zeros(3, dtype=np.int8)
    confirmed, rejected = decide(status, np.array([10, 0, 5]), 10, "bonferroni", 0.01)
    assert confirmed.tolist() == [0] and rejected.tolist() == [1]
    # With 11 features the same counts give 11 * 2^-10 = 0.0107: not below 0.01.
    status = np.zeros(11, dtype=np.int8)
    hits = np.array([10, 0] + [5] * 9)
    assert [len(a) for a in decide(status, hits, 10, "bonferroni", 0.01)] == [0, 0]
    # Decided features stay decided.
    status = np.array([1, -1, 0], dtype=np.int8)
    assert [len(a) for a in decide(status, np.array([10, 0, 5]), 10, "bonferroni", 0.01)] == [0, 0]


def test_benjamini_hochberg_by_hand():
    # Sorted 0.01, 0.03, 0.04, 0.2 against k * 0.05 / 4 = 0.0125, 0.025, 0.0375, 0.05.
    got = benjamini_hochberg(np.array([0.01, 0.04, 0.03, 0.2]), 0.05)
    assert got.tolist() == [True, False, False, False]
    # 0.02 <= 2 * 0.05 / 3 lets the step-up procedure keep every smaller p-value.
    got = benjamini_hochberg(np.array([0.02, 0.03, 0.001]), 0.05)
    assert got.tolist() == [True, True, True]
    assert benjamini_hochberg(np.array([]), 0.05).tolist() == []


def test_fdr_rule_by_hand():
    status = np.zeros(3, dtype=np.int8)
    # 5 runs: P(B >= 5) = 1/32 = 0.031 fails BH (0.05/3) and Bonferroni over runs (0.01).
    assert [len(a) for a in decide(status, np.array([5, 0, 3]), 5, "fdr", 0.05)] == [0, 0]
    # 8 runs: 2^-8 = 0.0039 passes BH (0.0167) and 0.05 / 8 = 0.00625, in both directions.
    confirmed, rejected = decide(status, np.array([8, 0, 4]), 8, "fdr", 0.05)
    assert confirmed.tolist() == [0] and rejected.tolist() == [1]


def _problem(n=600, p=20, random_state=0):
    return make_classification(
        n, p, n_informative=3, n_redundant=0, n_clusters_per_class=1, shuffle=False,
        random_state=random_state,
    )  # fmt: skip


@pytest.mark.parametrize(
    "params, false_positives",
    [
        # Bonferroni at 0.01 over 20 features: a false confirmation is very unlikely.
        (dict(importance="permutation", rule="bonferroni", alpha=0.01), 0),
        # FDR at 0.05 over 17 irrelevant features tolerates an occasional one.
        (dict(importance="mdi", rule="fdr", alpha=0.05), 1),
    ],
)
def test_recovers_the_informative_features(params, false_positives):
    X, y = _problem()
    sel = Boruta(random_state=0, max_iter=60, n_jobs=2, **params).fit(X, y)
    confirmed = set(np.flatnonzero(sel.support_))
    assert {0, 1, 2} <= confirmed and len(confirmed - {0, 1, 2}) <= false_positives
    assert (sel.ranking_[:3] == 1).all() and (sel.ranking_[3:] >= 1).all()
    assert sel.hit_rates_[:3].min() > 0.9 and np.median(sel.hit_rates_[3:]) < 0.2
    assert sel.importance_history_.shape == (sel.n_iter_, 20)
    assert len(sel.history_) == sel.n_iter_
    rejected = np.concatenate([s.dropped for s in sel.history_])
    # Rejected ones (and, with "fdr", tentative ones the rough fix drops) are not selected.
    assert set(rejected) <= set(np.flatnonzero(~sel.support_ & ~sel.support_weak_))
    assert sel.transform(X).shape == (600, len(confirmed))


def test_regression_and_a_foreign_estimator():
    X, y = make_friedman1(800, n_features=10, random_state=0)
    sel = Boruta(importance="mdi", random_state=0, max_iter=40).fit(X, y)
    assert set(np.flatnonzero(sel.support_)) <= set(range(5))
    assert {0, 1, 3} <= set(np.flatnonzero(sel.support_ | sel.support_weak_))
    X, y = _problem(400, 12)
    sk = Boruta(SkForest(50, random_state=0), importance="mdi", rule="fdr", alpha=0.05,
                random_state=0, max_iter=30).fit(X, y)  # fmt: skip
    assert np.flatnonzero(sk.support_).tolist() == [0, 1, 2]


def test_same_selection_for_any_n_jobs_and_memory_order():
    X, y = _problem(400, 15)
    runs = [
        Boruta(random_state=3, max_iter=25, n_jobs=j).fit(Xv, y)
        for j, Xv in [(1, X), (2, X), (2, np.asfortranarray(X))]
    ]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].importance_history_, other.importance_history_)
        np.testing.assert_array_equal(runs[0].support_, other.support_)


def test_shadows_are_virtual_no_copy_of_x():
    # 40 MB of X; a stacked [X, shadows] matrix (BorutaPy) would allocate at least that much
    # through NumPy, which tracemalloc sees.
    X, y = make_classification(25_000, 200, n_informative=3, random_state=0)
    tracemalloc.start()
    Boruta(forestimp.RandomForestClassifier(10, max_depth=3), importance="mdi",
           random_state=0, max_iter=3).fit(X, y)  # fmt: skip
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < X.nbytes / 4, peak


def test_bad_parameters_are_refused_clearly():
    X, y = _problem(100, 5)
    for bad in [dict(rule="holm"), dict(importance="air"), dict(alpha=2.0), dict(perc=0),
                dict(max_iter=0)]:  # fmt: skip
        with pytest.raises(InvalidParameterError):
            Boruta(**bad).fit(X, y)


def test_pipeline_clone_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = _problem(400, 8)
    frame = pd.DataFrame(X, columns=[f"col{j}" for j in range(8)])
    pipe = make_pipeline(Boruta(random_state=0, max_iter=30), SkForest(20, random_state=0))
    pipe.fit(frame, y)
    assert pipe[0].get_feature_names_out().tolist() == ["col0", "col1", "col2"]
    assert clone(pipe[0]).get_params() == pipe[0].get_params()


@parametrize_with_checks(
    [Boruta(forestimp.RandomForestClassifier(5), importance="mdi", max_iter=3, random_state=0)]
)
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def test_callback_sees_every_iteration_and_can_stop_early():
    X, y = _problem()
    seen = []
    full = Boruta(random_state=0, callback=seen.append).fit(X, y)
    assert [s.step for s in seen] == list(range(full.n_iter_))
    stopped = Boruta(random_state=0, callback=lambda step: step.step == 2).fit(X, y)
    assert stopped.n_iter_ == 3
    assert stopped.support_weak_.sum() + stopped.support_.sum() >= full.support_.sum()


def test_histogram_codes_made_once_give_the_same_selection(monkeypatch):
    # A histogram forest reads X's codes, binned once for every iteration; binning each
    # iteration's view instead gives the same codes, hence the same forests and importances.
    import forestimp.selection._boruta as boruta_module

    X, y = _problem()
    est = forestimp.RandomForestClassifier(30, max_depth=5, splitter="hist", max_bins=16)
    once = Boruta(est, importance="mdi", random_state=0, max_iter=8).fit(X, y)
    monkeypatch.setattr(boruta_module, "histogram_bins", lambda est, X: None)
    each = Boruta(est, importance="mdi", random_state=0, max_iter=8).fit(X, y)
    np.testing.assert_array_equal(once.importance_history_, each.importance_history_)
    assert [s.shadow_threshold for s in once.history_] == [
        s.shadow_threshold for s in each.history_
    ]
