"""Hostile inputs to the importance, proximity and theory functions (the rule of
``hostile_kit``), and to the engine's own entry points where only the engine can refuse."""

from __future__ import annotations

import numpy as np
import pytest
from hostile_kit import ABSURD, BAD_PREDICT_X, BAD_Y, RNG, YC, X, isolated, make, typed
from sklearn.ensemble import RandomForestClassifier as SklearnForest

import forestimp as fi
from forestimp import importance as imp
from forestimp import proximity as px
from forestimp import theory
from forestimp.exceptions import InvalidParameterError

pytestmark = pytest.mark.filterwarnings("ignore:the trees were grown on resampled rows")

FUNCS = {
    "permutation": lambda e, X, y: imp.permutation(e, X, y, random_state=0),
    "permutation oob": lambda e, X, y: imp.permutation(e, X, y, oob=True, random_state=0),
    "local_permutation": lambda e, X, y: imp.local_permutation(e, X, y),
    "local_mdi": lambda e, X, y: imp.local_mdi(e, X),
    "shap_values": lambda e, X, y: imp.shap_values(e, X, interactions=True),
    "context": lambda e, X, y: imp.context(e, X, y, context=np.arange(np.shape(y)[0]) % 2),
    "unbiased": lambda e, X, y: imp.unbiased(e, X, y),
    "significance": lambda e, X, y: imp.significance(e, X, y, n_permutations=3),
    "mdi": lambda e, X, y: imp.mdi(e),
    "leaf_embedding": lambda e, X, y: px.leaf_embedding(e, X),
    "proximity": lambda e, X, y: px.proximity(e, X, k=2),
}
FOREST_ONLY = {"local_permutation", "context", "unbiased", "significance", "leaf_embedding",
               "proximity"}  # fmt: skip


@pytest.fixture(scope="module")
def models():
    return {
        "forest": make(fi.RandomForestClassifier).fit(X, YC),
        "booster": make(fi.GradientBoostingClassifier, subsample=0.8).fit(X, YC),
    }


@pytest.mark.parametrize("func", FUNCS)
def test_importances_name_the_model_kinds_they_take(models, func):
    # A booster, a scikit-learn model or a string was an AttributeError from inside, or a
    # NotFittedError telling to fit a fitted model.
    call = FUNCS[func]
    call(models["forest"], X, YC)
    if func in FOREST_ONLY:
        with pytest.raises(InvalidParameterError, match="GradientBoostingClassifier"):
            call(models["booster"], X, YC)
    else:
        call(models["booster"], X, YC)
    held_out = func == "permutation"  # which scores any fitted estimator
    for other in ([] if held_out else [SklearnForest(n_estimators=2).fit(X, YC)]) + ["m", None]:
        with pytest.raises(InvalidParameterError) as error:
            call(other, X, YC)
        assert type(other).__name__ in str(error.value) or repr(other) in str(error.value)
    unfitted = fi.ExtraTreesRegressor() if func in FOREST_ONLY else fi.GradientBoostingClassifier()
    with pytest.raises(ValueError, match="not fitted"):
        call(unfitted, X, YC)


@pytest.mark.parametrize("func", FUNCS)
def test_importances_on_hostile_X_and_y(models, func):
    # A text label among integer classes was numpy's TypeError from searchsorted.
    call = FUNCS[func]
    for kind in ("forest",) if func in FOREST_ONLY else ("forest", "booster"):
        est = models[kind]
        for Xv in BAD_PREDICT_X.values():
            y = YC[: np.shape(Xv)[0]] if np.ndim(Xv) == 2 else YC
            typed(lambda est=est, Xv=Xv, y=y: call(est, Xv, y))
        for yv in BAD_Y.values():
            if yv is not None and np.shape(yv)[:1] == (40,):
                typed(lambda est=est, yv=yv: call(est, X, yv))


def test_importance_parameters_of_absurd_values(models):
    rf, context = models["forest"], np.arange(40) % 2
    for value in ABSURD:
        typed(lambda v=value: imp.permutation(rf, X, YC, n_repeats=v))
        typed(lambda v=value: imp.permutation(rf, X, YC, max_samples=v))
        typed(lambda v=value: imp.permutation(rf, X, YC, n_jobs=v))
        typed(lambda v=value: imp.significance(rf, X, YC, n_permutations=v))
        typed(lambda v=value: px.proximity(rf, X, k=v))
        typed(lambda v=value: imp.context(rf, X, YC, context=context, n_permutations=v))
        typed(lambda v=value: imp.local_permutation(rf, X, YC, level=v))
    for bad in (np.empty(0), np.full((3, 4), np.nan), np.zeros((2, 3, 4)), "x", np.array([["a"]])):
        typed(lambda b=bad: imp.janitza_pvalues(b))


# -- theory ----------------------------------------------------------------------------------
XD = RNG.integers(0, 2, size=(30, 3))
YD = XD[:, 0] ^ XD[:, 1]
ORACLES = {
    "asymptotic": theory.asymptotic_importances,
    "local_asymptotic": theory.local_asymptotic_importances,
    "expected": theory.expected_importances,
    "context": lambda X, y, **k: theory.context_importances(X, y, np.arange(len(y)) % 2, **k),
}
BAD_DISCRETE = {
    "empty": XD[:0],
    "no columns": XD[:, :0],
    "nan": np.where(XD == 0, np.nan, 1.0),
    "inf": np.where(XD == 0, np.inf, 1.0),
    "words": XD.astype(str),
    "3-D": XD[:, :, None],
    "1-D": XD[:, 0],
    "negative": -XD,
    "huge": XD * 2**62,
    "many values": RNG.integers(0, 10**6, size=(30, 3)),
    "None": None,
}


@pytest.mark.parametrize("oracle", ORACLES)
def test_theory_oracles_on_hostile_input(oracle):
    call = ORACLES[oracle]
    for Xv in BAD_DISCRETE.values():
        n = np.shape(Xv)[0] if np.ndim(Xv) else 30
        typed(lambda Xv=Xv, n=n: call(Xv, YD[:n]))
    for yv in (YD[:5], np.where(YD == 0, np.nan, 1.0), YD[:, None], YD + 0.5):
        typed(lambda yv=yv: call(XD, yv))
    for w in (-np.ones(30), np.zeros(30), np.full(30, np.nan), np.ones(3), np.full(30, np.inf)):
        typed(lambda w=w: call(XD, YD, weights=w))


def test_information_measures_on_hostile_input():
    for a in (YD[:0], np.where(YD == 0, np.nan, 1.0), XD[:, :, None], None, 3, RNG.normal(size=30)):
        typed(lambda a=a: theory.entropy(a))
        typed(lambda a=a: theory.mutual_information(a, a))
    for kw in ({"base": 0}, {"base": 1}, {"base": float("nan")}, {"estimator": "x"},
               {"weights": -np.ones(30)}, {"weights": np.ones(2)}):  # fmt: skip
        typed(lambda kw=kw: theory.conditional_entropy(YD, XD[:, 0], **kw))
    typed(lambda: theory.conditional_mutual_information(YD, YD, YD[:5]))


def test_a_simulation_of_days_is_refused():
    for kw in ({"batch_size": 10**18}, {"n_runs": 10**18}):
        with pytest.raises(InvalidParameterError, match="fits"):
            theory.simulate_srs("chaining", 10, 3, 2, 0.5, **kw)
    # p = 10**18 looped for ~10**17 fits a run.
    done = isolated(
        """
        from forestimp.theory import simulate_srs
        from forestimp.exceptions import InvalidParameterError
        try:
            simulate_srs("chaining", 10**18, 3, 2, 0.5, n_runs=5)
        except InvalidParameterError as e:
            assert "fits" in str(e)
        else:
            raise AssertionError("simulated")
        """,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]


# -- the engine's entry points ----------------------------------------------------------------
def test_core_booster_fit_survives_a_huge_n_iter_no_change():
    # Booster::fit_controlled keeps at most n_estimators past losses (it allocated
    # n_iter_no_change of them and aborted), so the fit runs, unstopped as before.
    done = isolated(
        """
        import numpy as np
        from forestimp._core import Booster
        X = np.random.default_rng(0).normal(size=(30, 2))
        b = Booster.fit(X, X[:, 0].copy(), None, n_classes=0, loss="squared_error", alpha=0.9,
            learning_rate=0.1, n_estimators=3, subsample=1.0, init_zero=False,
            splitter="best", max_bins=255, max_features=2, tree_features=None, max_depth=3,
            min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
            min_impurity_decrease=0.0, max_leaf_nodes=None, ccp_alpha=0.0, random_state=0,
            n_iter_no_change=10**18, tol=1e-4)
        assert b.n_rounds == 3, b.n_rounds
        """
    )
    assert done.returncode == 0, done.stderr[-500:]


def test_core_booster_oob_indices_refuses_a_huge_n_samples():
    # booster_oob_indices sized a mask from n_samples unchecked: a capacity-overflow panic
    # at 2**63, a hang at 10**18.
    done = isolated(
        """
        import numpy as np, forestimp as fi
        from forestimp._core import booster_oob_indices
        X = np.random.default_rng(0).normal(size=(30, 2))
        est = fi.GradientBoostingRegressor(n_estimators=2, subsample=0.5).fit(X, X[:, 0])
        for n in (2**63, 10**18):
            try:
                booster_oob_indices(est.booster_, n, 0)
            except (ValueError, MemoryError):
                pass
        """,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-500:]
