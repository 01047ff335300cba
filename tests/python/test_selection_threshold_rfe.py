"""SelectFromImportance and RFE (issue #21): recovery of a known relevant set, the thresholds
and the alpha rule against hand computations, scikit-learn's SelectFromModel and the printed
tables of Alonso Liso (2016), the selector contract, determinism and parameter errors."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.feature_selection import SelectFromModel
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import forestimp as fi
from forestimp.exceptions import InvalidParameterError
from forestimp.selection import RFE, SelectFromImportance, _rfe, _threshold
from forestimp.selection._rfe_rules import alpha_choice, block_drops, next_size

# Alonso Liso (2016), validation errors (%) of RF on Sotavento along the RFE path: Table 4.3.2
# (step 0.5) and Table 4.3.4 (step 0.2), sizes floor(1080 * (1 - step)**k).
SIZES_05 = [1080, 540, 270, 135, 67, 33, 16, 8, 4, 2]
VAL_05 = [6.601, 6.562, 6.550, 6.545, 6.589, 6.725, 6.930, 7.148, 7.595, 7.563]
PERC_STD_05 = [0.142, 0.043, 0.012, 0, 0.113, 0.456, 0.975, 1.527, 2.659, 2.576]
SIZES_08 = [1080, 864, 691, 552, 442, 353, 283, 226, 181, 144, 115, 92, 74, 59, 47, 37, 30, 24]
SIZES_08 += [19, 15, 12, 9, 7, 6, 5, 4, 3, 2, 2]
VAL_08 = [6.601, 6.581, 6.588, 6.572, 6.539, 6.551, 6.538, 6.532, 6.515, 6.525, 6.533, 6.564]
VAL_08 += [6.579, 6.646, 6.664, 6.732, 6.732, 6.778, 6.823, 6.999, 6.997, 7.081, 7.185, 7.496]
VAL_08 += [7.618, 7.595, 7.575, 7.563, 7.563]


class FixedImportances(BaseEstimator):
    """A model with given importances (the first ``n_features`` of ``importances``); it
    records the ``sample_weight`` of every fit in ``WEIGHTS``."""

    WEIGHTS: list = []

    def __init__(self, importances=None):
        self.importances = importances

    def fit(self, X, y, sample_weight=None):
        self.feature_importances_ = np.asarray(self.importances, dtype=float)[: X.shape[1]]
        FixedImportances.WEIGHTS.append(sample_weight)
        return self

    def score(self, X, y):
        return 0.0


def precision_recall(support, relevant):
    chosen = set(np.flatnonzero(support).tolist())
    hits = len(chosen & set(relevant))
    return hits / max(1, len(chosen)), hits / len(relevant)


@pytest.fixture(scope="module")
def classification():
    return make_classification(
        1000, 30, n_informative=5, n_redundant=0, shuffle=False, random_state=0
    )


@pytest.fixture(scope="module")
def friedman():
    return make_friedman1(500, 15, noise=1.0, random_state=0)


# ------------------------------------------------------------------- recovery
@pytest.mark.parametrize(
    "selector",
    [
        SelectFromImportance(random_state=0),
        SelectFromImportance(threshold="probe", random_state=0),
        RFE(random_state=0),
        RFE(subset_size=8, random_state=0),
    ],
    ids=["mean", "probe", "rfe", "subset-rfe"],
)
def test_recovers_the_relevant_set(selector, classification, friedman):
    for (X, y), name in ((classification, "classification"), (friedman, "friedman1")):
        support = clone(selector).fit(X, y).support_
        precision, recall = precision_recall(support, range(5))
        # At most one miss and one false column out of 5. Each problem has one weak relevant
        # column: informative column 3 (MDI 0.024, the best noise column 0.015) and
        # Friedman's x3, which enters as (x3 - 0.5)^2; the mean threshold misses both.
        assert precision >= 0.8 and recall >= 0.8, (name, np.flatnonzero(support))


def test_rfe_with_boosting_needs_cv_and_then_works(classification):
    X, y = classification
    gb = GradientBoostingClassifier(n_estimators=30, max_depth=2)
    with pytest.raises(InvalidParameterError, match="GradientBoostingClassifier has none.*cv=5"):
        RFE(gb).fit(X, y)
    rfe = RFE(gb, cv=3, step=0.3, random_state=0).fit(X, y)
    # The 5 informative columns outlast the noise; 30 depth-2 trees score best on 2 of them.
    five = next(s for s in rfe.history_ if s.n_features == 5)
    assert five.features.tolist() == [0, 1, 2, 3, 4]
    assert precision_recall(rfe.support_, range(5))[0] == 1.0
    assert "split2_test_score" in rfe.cv_results_
    assert rfe.history_[0].score_std == pytest.approx(
        np.std([rfe.cv_results_[f"split{i}_test_score"][0] for i in range(3)])
    )


# ------------------------------------------------------------------- thresholds by hand
IMP = np.array([20, 16, 12, 8, 4, 2, 1, 1]) / 64  # exact in binary: mean 8/64, median 6/64


@pytest.mark.parametrize(
    ("threshold", "max_features", "expected"),
    [
        ("mean", None, [0, 1, 2, 3]),  # 8/64 >= mean = 8/64: a tie is kept
        ("median", None, [0, 1, 2, 3]),  # (8 + 4) / 2 / 64
        ("2*mean", None, [0, 1]),  # 16/64, kept on the tie
        ("0.5*median", None, [0, 1, 2, 3, 4]),  # 3/64
        (0.2, None, [0, 1]),
        (0.1, None, [0, 1, 2, 3]),
        (None, None, [0, 1, 2, 3]),  # None is "mean", as in scikit-learn
        (-np.inf, 2, [0, 1]),  # top-k only
        ("median", 3, [0, 1, 2]),  # the cap after the threshold
        (-np.inf, 7, [0, 1, 2, 3, 4, 5, 6]),  # the 1/64 tie goes to the earlier column
        ("mean", lambda X: X.shape[1] // 4, [0, 1]),
    ],
)
def test_thresholds_by_hand_and_as_select_from_model(threshold, max_features, expected):
    X, y = np.random.default_rng(0).normal(size=(10, 8)), np.arange(10) % 2
    model = FixedImportances(IMP)
    sel = SelectFromImportance(model, threshold=threshold, max_features=max_features).fit(X, y)
    assert sel.get_support(indices=True).tolist() == expected
    sk = SelectFromModel(model, threshold=threshold, max_features=max_features).fit(X, y)
    assert sel.get_support().tolist() == sk.get_support().tolist()
    assert sel.ranking_.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert sel.history_[0].kept.tolist() == expected


@pytest.mark.parametrize(("best_probe", "expected"), [(5, [0, 1, 2, 3]), (8, [0, 1, 2])])
def test_probe_threshold_is_strictly_above_the_best_probe(best_probe, expected):
    X, y = np.random.default_rng(0).normal(size=(10, 8)), np.arange(10) % 2
    probes = np.array([3, best_probe, 1]) / 64  # the model sees the 8 columns, then 3 probes
    model = FixedImportances(np.concatenate([IMP, probes]))
    sel = SelectFromImportance(model, threshold="probe", n_probes=3, random_state=0).fit(X, y)
    assert sel.threshold_ == best_probe / 64
    assert sel.probe_importances_.tolist() == probes.tolist()
    assert sel.get_support(indices=True).tolist() == expected
    assert sel.estimator_.feature_importances_.shape == (11,)
    # n_probes alone selects the probe threshold; the default count is n_features
    assert SelectFromImportance(model, n_probes=3).fit(X, y).threshold_ == best_probe / 64
    big = FixedImportances(np.concatenate([IMP, np.zeros(8)]))
    assert len(SelectFromImportance(big, threshold="probe").fit(X, y).probe_importances_) == 8


def test_probe_threshold_admits_one_noise_column_on_average():
    # Pure noise: every column is exchangeable with the probes, so each beats the best of
    # m = n_features probes with probability 1 / (m + 1): 10 / 11 columns expected per fit.
    rng = np.random.default_rng(0)
    counts = []
    for seed in range(60):
        X, y = rng.normal(size=(200, 10)), rng.integers(0, 2, 200)
        sel = SelectFromImportance(fi.RandomForestClassifier(50), threshold="probe")
        counts.append(sel.set_params(random_state=seed).fit(X, y).support_.sum())
    assert 0.5 <= np.mean(counts) <= 1.5


def test_sample_weight_reaches_every_fit(classification):
    X, y = classification
    w = np.linspace(0.5, 1.5, len(y))
    FixedImportances.WEIGHTS.clear()
    model = FixedImportances(np.linspace(1, 0, 30))
    sel = SelectFromImportance(model, threshold="probe").fit(X, y, sample_weight=w)
    assert FixedImportances.WEIGHTS[-1] is w and sel.n_features_in_ == 30
    FixedImportances.WEIGHTS.clear()
    RFE(model, cv=3, step=0.5).fit(X, y, sample_weight=w)
    sizes = sorted({len(weights) for weights in FixedImportances.WEIGHTS})
    assert sizes == [666, 667, 1000]  # the CV folds' share of w, and w itself


# ------------------------------------------------------------------- the path and the rule
def test_schedule_reproduces_alonso_liso_sizes():
    for step, printed in ((0.5, SIZES_05), (0.2, SIZES_08)):
        sizes = [1080]
        while sizes[-1] > 1:
            sizes.append(next_size(sizes[-1], len(sizes) - 1, step, (1080, 0), 1))
        n = len(printed) - (printed[-1] == printed[-2])  # his last row repeats 2
        assert sizes[:n] == printed[:n]
    # Subset-RFE with 54-column blocks at step 0.2: 1080 -> 880 -> 717 (Table 4.3.12)
    assert 1080 - sum(block_drops([54] * 20, 0.2, 1079)) == 880
    assert 880 - sum(block_drops([54] * 16 + [16], 0.2, 879)) == 717
    assert block_drops([54, 54], 0.2, 5) == [5, 0]  # min_features_to_select holds
    assert block_drops([3, 3], 0.2, 10) == [1, 0]  # every block rounds to 0: one goes
    assert block_drops([4, 2], 3, 10) == [3, 1]  # an int step, at most s - 1 per block


def test_alpha_rule_reproduces_alonso_liso_tables():
    for sizes, val, chosen in (
        (SIZES_05, VAL_05, {1.0: 16, 0.5: 33, 0.25: 67, 0.0: 135}),  # Table 4.3.6
        (SIZES_08, VAL_08, {1.0: 19, 0.5: 47, 0.25: 74, 0.0: 181}),  # Table 4.3.8
    ):
        scores = -np.array(val)  # errors: lower is better
        for alpha, n in chosen.items():
            assert sizes[alpha_choice(sizes, scores, [np.nan] * len(sizes), alpha)] == n
    perc_std = (np.array(VAL_05) - min(VAL_05)) / np.std(VAL_05)
    np.testing.assert_allclose(perc_std, PERC_STD_05, atol=3e-3)


def test_alpha_rule_with_the_best_steps_std():
    sizes, scores, stds = [50, 40, 30, 20, 10], [0.80, 0.90, 0.88, 0.85, 0.70], [0.1] + [0.02] * 4
    expected = {0.0: 40, 1.0: 30, 2.0: 30, 2.5: 20, 10.0: 10}  # within 0.90 - alpha * 0.02
    for alpha, n in expected.items():
        assert sizes[alpha_choice(sizes, scores, stds, alpha, "score")] == n
    with pytest.raises(InvalidParameterError, match="alpha_std='path'"):
        alpha_choice(sizes, scores, [np.nan] * 5, 1.0, "score")


def test_rfe_history_ranking_and_final_model(classification):
    X, y = classification
    rfe = RFE(fi.RandomForestClassifier(50), random_state=0).fit(X, y)
    steps = rfe.history_
    assert [s.n_features for s in steps] == [30, 24, 19, 15, 12, 9, 7, 6, 5, 4, 3, 2, 1]
    for before, after in zip(steps, steps[1:], strict=False):
        assert after.features.tolist() == before.kept.tolist()
        assert sorted(before.kept.tolist() + before.dropped.tolist()) == before.features.tolist()
        # the dropped columns were the least important of the fit
        assert (
            before.scores[np.isin(before.features, before.dropped)].max()
            <= before.scores[np.isin(before.features, before.kept)].min()
        )
    chosen = next(s for s in steps if s.n_features == rfe.n_features_)
    assert rfe.estimator_.oob_score_ == chosen.score  # the refit is that step's model
    assert set(np.flatnonzero(rfe.ranking_ == 1)) == set(chosen.features.tolist())
    assert set(np.flatnonzero(rfe.ranking_ == 2)) == set(steps[chosen.step - 1].dropped.tolist())
    se = np.sqrt(chosen.score * (1 - chosen.score) / len(y))
    assert chosen.score_std == pytest.approx(se, rel=0.05)  # out-of-bag rows: nearly all
    assert rfe.history_frame().shape[0] == len(steps)
    assert rfe.cv_results_["n_features"].tolist() == [s.n_features for s in steps]


def test_subset_rfe_ranks_in_blocks_then_plainly(classification):
    X, y = classification
    rfe = RFE(fi.RandomForestClassifier(30), subset_size=8, random_state=0).fit(X, y)
    for s in rfe.history_:
        assert s.n_blocks == (-(-s.n_features // 8) if s.n_features > 8 else 1)
    assert rfe.history_[1].n_features == 26  # blocks 8, 8, 8, 6 each drop int(0.2 * s) = 1


# ------------------------------------------------------------------- determinism
@pytest.mark.parametrize(
    "selector",
    [
        RFE(fi.RandomForestClassifier(30), subset_size=10, random_state=3),
        SelectFromImportance(
            fi.RandomForestClassifier(30), importance="permutation", n_probes=5, random_state=3
        ),
    ],
    ids=["subset-rfe", "probe-permutation"],
)
def test_same_selection_for_any_n_jobs(selector, classification):
    X, y = classification
    one = clone(selector).set_params(n_jobs=1).fit(X, y)
    two = clone(selector).set_params(n_jobs=2).fit(X, y)
    assert one.support_.tolist() == two.support_.tolist()
    for a, b in zip(one.history_, two.history_, strict=True):
        assert a.scores.tolist() == b.scores.tolist()


# ------------------------------------------------------------------- sklearn contract
def _tiny(cls, **kw):
    return cls(n_estimators=10, random_state=0, **kw)


@parametrize_with_checks(
    [
        SelectFromImportance(_tiny(fi.RandomForestClassifier)),
        SelectFromImportance(_tiny(fi.RandomForestRegressor), threshold="probe"),
        RFE(_tiny(fi.RandomForestClassifier)),
        RFE(
            _tiny(fi.ExtraTreesRegressor, bootstrap=True), cv=3, subset_size=3, importance="mdi_oob"
        ),
    ]
)
def test_sklearn_selector_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize("selector", [SelectFromImportance(), RFE()], ids=["sfi", "rfe"])
def test_pipeline_names_and_clone(selector, classification):
    pd = pytest.importorskip("pandas")
    X, y = classification
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    sel = clone(selector).set_params(estimator=fi.RandomForestClassifier(30), random_state=0)
    params = {k: v for k, v in sel.get_params().items() if k != "estimator"}
    assert {k: v for k, v in clone(sel).get_params().items() if k != "estimator"} == params
    pipe = Pipeline([("sel", sel), ("clf", LogisticRegression())]).fit(frame, y)
    fitted = pipe.named_steps["sel"]
    names = fitted.get_feature_names_out().tolist()
    assert names == [f"c{j}" for j in fitted.get_support(indices=True)]
    assert fitted.transform(frame).shape == (len(y), len(names))
    assert pipe.score(frame, y) > 0.8


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("selector", "match"),
    [
        (RFE(step=0), "'step'"),
        (RFE(step=1.0), "'step'"),
        (RFE(step="a"), "'step'"),
        (RFE(step=True), "'step'"),
        (RFE(alpha=-1.0), "'alpha'"),
        (RFE(alpha_std="fold"), "'alpha_std'"),
        (RFE(subset_size=1), "'subset_size'"),
        (RFE(min_features_to_select=0), "'min_features_to_select'"),
        (RFE(importance="gini"), "'importance'"),
        (RFE(fi.ExtraTreesClassifier(5)), "bootstrap=False"),
        (SelectFromImportance(threshold="max"), "'threshold'"),
        (SelectFromImportance(threshold="x*mean"), "'threshold'"),
        (SelectFromImportance(threshold=[1]), "'threshold'"),
        (SelectFromImportance(n_probes=0), "'n_probes'"),
        (SelectFromImportance(threshold="median", n_probes=5), "threshold='probe'"),
        (SelectFromImportance(max_features=31), "'max_features'"),
        (SelectFromImportance(GradientBoostingClassifier(), importance="air"), "forestimp"),
    ],
)
def test_bad_parameters_raise_a_clear_value_error(selector, match, classification):
    X, y = classification
    with pytest.raises(InvalidParameterError, match=match):
        selector.fit(X, y)
    assert issubclass(InvalidParameterError, ValueError)


def test_docstring_examples_run():
    for module in (_threshold, _rfe):
        assert doctest.testmod(module).failed == 0


def test_rfe_callback_sees_every_step_and_can_end_the_path(classification):
    X, y = classification
    seen = []
    full = RFE(random_state=0, callback=seen.append).fit(X, y)
    assert [s.n_features for s in seen] == [s.n_features for s in full.history_]
    short = RFE(random_state=0, callback=lambda step: step.n_features <= 12).fit(X, y)
    assert short.history_[-1].n_features <= 12 < short.history_[-2].n_features
    assert short.n_features_ >= 12


def test_probes_of_a_forestimp_forest_are_virtual_no_copy_of_x():
    # 40 MB of X: a real [X, probes] matrix would allocate more than that through NumPy,
    # which tracemalloc sees; the engine's virtual probes allocate a permutation.
    import tracemalloc

    X, y = make_classification(
        25_000, 200, n_informative=3, n_redundant=0, shuffle=False, random_state=0
    )
    est = fi.RandomForestClassifier(30, max_depth=6)
    tracemalloc.start()
    sel = SelectFromImportance(est, threshold="probe", random_state=0).fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < X.nbytes / 4, peak
    assert len(sel.probe_importances_) == 200
    assert set(sel.get_support(indices=True)) >= {0, 1, 2}
