"""A text, category or date column of X is refused by name (forestimp._frames.check_numeric)
by every entry that takes X, not only fit and predict: importances, proximities and
forestimp.dask, the latter on the client before any cluster is looked up (no cluster runs
here: reaching one would fail with "No clients found")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp import importance as imp
from forestimp import proximity as px
from forestimp.boosting import GradientBoostingClassifier
from forestimp.exceptions import DataError

N = 60
RNG = np.random.default_rng(0)
NUMERIC = pd.DataFrame({"a": RNG.normal(size=N), "b": RNG.normal(size=N)})
Y = (NUMERIC["a"] > 0).astype(int).to_numpy()


def _variants() -> dict[str, object]:
    out: dict[str, object] = {}
    for kind, column in {
        "text": RNG.choice(["red", "blue"], N),
        "category": pd.Categorical(RNG.choice(["red", "blue"], N)),
        "date": pd.date_range("2000-01-01", periods=N),
    }.items():
        frame = NUMERIC.copy()
        frame["b"] = column
        out[kind] = frame
    return out


VARIANTS = _variants()
WORD = {
    "text": "text column 'b'",
    "category": "category column 'b'",
    "date": "date/time column 'b'",
}


@pytest.fixture(scope="module")
def forest():
    return fi.RandomForestClassifier(n_estimators=8, random_state=0).fit(NUMERIC, Y)


@pytest.fixture(scope="module")
def booster():
    return GradientBoostingClassifier(n_estimators=4, subsample=0.8, random_state=0).fit(NUMERIC, Y)


FOREST_ENTRIES = {
    "permutation": lambda e, X: imp.permutation(e, X, Y, n_repeats=1, random_state=0),
    "permutation oob": lambda e, X: imp.permutation(e, X, Y, oob=True, random_state=0),
    "local_permutation": lambda e, X: imp.local_permutation(e, X, Y),
    "local_mdi": lambda e, X: imp.local_mdi(e, X),
    "shap_values": lambda e, X: imp.shap_values(e, X),
    "context": lambda e, X: imp.context(e, X, Y, context=np.arange(N) % 2),
    "unbiased": lambda e, X: imp.unbiased(e, X, Y),
    "significance": lambda e, X: imp.significance(e, X, Y),
    "leaf_embedding": lambda e, X: px.leaf_embedding(e, X),
    "proximity": lambda e, X: px.proximity(e, X),
    "proximity X2": lambda e, X: px.proximity(e, NUMERIC, X),
}
BOOSTER_ENTRIES = ["permutation", "permutation oob", "local_mdi", "shap_values"]


def _refused(call, kind):
    with pytest.raises(DataError) as error:
        call()
    assert WORD[kind] in str(error.value) and "Encode such columns" in str(error.value)


@pytest.mark.parametrize("kind", VARIANTS)
@pytest.mark.parametrize("entry", FOREST_ENTRIES)
def test_forest_entries_refuse_a_non_numeric_column_by_name(forest, entry, kind):
    _refused(lambda: FOREST_ENTRIES[entry](forest, VARIANTS[kind]), kind)


@pytest.mark.parametrize("entry", BOOSTER_ENTRIES)
def test_booster_entries_refuse_a_text_column_by_name(booster, entry):
    _refused(lambda: FOREST_ENTRIES[entry](booster, VARIANTS["text"]), "text")


def test_an_object_array_of_words_is_refused_by_column_index():
    est = fi.RandomForestRegressor(n_estimators=4, random_state=0).fit(NUMERIC.to_numpy(), Y)
    with pytest.raises(DataError, match="text column at index 1"):
        imp.shap_values(est, VARIANTS["text"].to_numpy())


@pytest.mark.filterwarnings("error:X does not have valid feature names")
def test_the_numeric_frame_still_works(forest, booster):
    for entry in FOREST_ENTRIES.values():
        entry(forest, NUMERIC)
    for name in BOOSTER_ENTRIES:
        FOREST_ENTRIES[name](booster, NUMERIC)


# -- forestimp.dask, checked on the client ---------------------------------------------------


@pytest.fixture(scope="module")
def fdask():
    pytest.importorskip("distributed")
    return pytest.importorskip("forestimp.dask")


@pytest.fixture(scope="module")
def dd():
    return pytest.importorskip("dask.dataframe")


def _dask_entries(fdask, forest):
    from forestimp.selection import SequentialRandomSubspace

    return {
        "fit": lambda X: fdask.fit(fi.RandomForestClassifier(n_estimators=2), X, Y),
        "fit_patches": lambda X: fdask.fit_patches(fi.RandomPatchesClassifier(), X, Y),
        "permutation": lambda X: fdask.permutation(forest, X, Y),
        "srs": lambda X: fdask.srs(SequentialRandomSubspace(), X, Y),
        "shap_values": lambda X: fdask.shap_values(forest, X),
        "predict": lambda X: fdask.predict(forest, X),
        "predict_proba": lambda X: fdask.predict_proba(forest, X),
    }


@pytest.mark.parametrize(
    "entry", ["fit", "fit_patches", "permutation", "srs", "shap_values", "predict", "predict_proba"]
)
def test_dask_entries_refuse_a_text_column_of_a_dask_dataframe(fdask, dd, forest, entry):
    frame = dd.from_pandas(VARIANTS["text"], npartitions=2)
    _refused(lambda: _dask_entries(fdask, forest)[entry](frame), "text")


# A category column is a categorical feature of the estimators fitted by fit and
# fit_patches (categorical_features="from_dtype"): tests/python/test_dask_categorical.py.
@pytest.mark.parametrize(
    "entry, kind",
    [
        (entry, kind)
        for entry in ["fit", "fit_patches", "permutation", "srs"]
        for kind in VARIANTS
        if not (kind == "category" and entry in ("fit", "fit_patches"))
    ],
)
def test_dask_entries_refuse_a_text_column_of_a_pandas_dataframe(fdask, forest, entry, kind):
    _refused(lambda: _dask_entries(fdask, forest)[entry](VARIANTS[kind]), kind)


def test_a_numeric_dask_dataframe_still_maps(fdask, dd):
    forest = fi.RandomForestClassifier(n_estimators=4, random_state=0).fit(NUMERIC.to_numpy(), Y)
    frame = dd.from_pandas(NUMERIC, npartitions=2)
    got = fdask.predict(forest, frame).compute(scheduler="synchronous")
    np.testing.assert_array_equal(got, forest.predict(NUMERIC.to_numpy()))
