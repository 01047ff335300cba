"""forestimp.dask with categorical features (issue #52) on a LocalCluster of 2 worker
processes: the categories are learned once over all the rows and every task codes X by them,
so a distributed fit gives one machine's model bytes for DataFrames, Dask DataFrames, Parquet
files and (declared by mask or indices) arrays and array files; prediction over partitions
whose dtypes declare other categories is one machine's; Random Patches grown block by block
code a category the same in every block."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
fdask = pytest.importorskip("forestimp.dask")

CARRIERS = ["ua", "aa", "dl", "wn", "b6", "as", "nk", "f9"]  # declared in no sorted order


@pytest.fixture(scope="module")
def client(two_workers):
    return two_workers


@pytest.fixture(scope="module")
def frame():
    """A string category column (with missing values), a numeric category column and a
    numeric one; the target depends on the carrier through an order its codes do not have."""
    rng = np.random.default_rng(0)
    n = 480
    k = rng.integers(0, len(CARRIERS), n)
    effect = rng.normal(size=len(CARRIERS))
    carrier = np.array(CARRIERS, dtype=object)[k]
    carrier[rng.random(n) < 0.05] = None
    X = pd.DataFrame(
        {
            "carrier": pd.Categorical(carrier, categories=CARRIERS),
            "gate": pd.Categorical(rng.choice([3, 1, 7], n), categories=[7, 3, 1]),
            "distance": rng.random(n),
        }
    )
    y = (effect[k] + X["distance"].to_numpy() + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return X, y


@pytest.fixture(scope="module")
def labels():
    """An array whose column 0 holds category labels as numbers (NaN missing)."""
    rng = np.random.default_rng(1)
    n = 400
    X = np.column_stack([rng.choice([10.0, 20.0, 35.0, 40.0, 55.0], n), rng.random(n)])
    X[rng.random(n) < 0.05, 0] = np.nan
    y = np.where(np.isin(X[:, 0], [10.0, 35.0]), 2.0, -1.0) + X[:, 1]
    return X, y


def _bytes(est) -> bytes:
    return est.forest_.to_bytes()


def _same_categories(a, b) -> None:
    np.testing.assert_array_equal(a.is_categorical_, b.is_categorical_)
    for x, z in zip(a.categories_, b.categories_, strict=True):
        assert (x is None) == (z is None)
        if x is not None:
            np.testing.assert_array_equal(x, z)


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_frames_and_parquet_give_one_machines_model(client, frame, tmp_path):
    X, y = frame

    def make():
        return fi.RandomForestClassifier(n_estimators=8, oob_score=True, random_state=0)

    local = make().fit(X, y)
    assert list(local.is_categorical_) == [True, True, False]
    for n_tasks in (None, 3):
        spread = fdask.fit(make(), X, y, client=client, n_tasks=n_tasks)
        assert _bytes(spread) == _bytes(local)
        _same_categories(spread, local)
        assert spread.oob_score_ == local.oob_score_
    # A Dask DataFrame whose categories are known (from its dtypes) ...
    known = dd.from_pandas(X, npartitions=3)
    assert _bytes(fdask.fit(make(), known, y, client=client)) == _bytes(local)
    # ... or unknown: each partition declares its own; learned from the computed frame.
    unknown = dd.from_pandas(X.astype({"carrier": object}), npartitions=3)
    unknown = unknown.astype({"carrier": "category"})
    assert not unknown["carrier"].cat.known
    whole = make().fit(unknown.compute(), y)
    from_unknown = fdask.fit(make(), unknown, y, client=client, n_tasks=4)
    assert _bytes(from_unknown) == _bytes(whole)
    _same_categories(from_unknown, whole)
    # A Parquet file read by the workers, as one machine reads it: a string category
    # column comes back as categories (in their order), a numeric one as numbers (pyarrow),
    # which categorical_features can name.
    path = str(tmp_path / "train.parquet")
    X.assign(target=y).to_parquet(path)
    read = pd.read_parquet(path).drop(columns=["target"])
    assert list(read["carrier"].cat.categories) == CARRIERS and read["gate"].dtype == "int64"
    from_file = fdask.fit(make(), path, "target", client=client)
    assert _bytes(from_file) == _bytes(make().fit(read, y))
    assert list(from_file.is_categorical_) == [True, False, False]
    np.testing.assert_array_equal(from_file.categories_[0], CARRIERS)
    both = fi.RandomForestClassifier(
        n_estimators=8, random_state=0, categorical_features=["carrier", "gate"]
    )
    from_file = fdask.fit(both, path, "target", client=client)
    assert _bytes(from_file) == _bytes(both.fit(read, y))
    np.testing.assert_array_equal(from_file.categories_[1], [1.0, 3.0, 7.0])
    # Categories named, on an ExtraTrees (random categorical splits).
    names = fi.ExtraTreesClassifier(
        n_estimators=6, random_state=1, categorical_features=["carrier", "gate"]
    )
    text = X.astype({"carrier": object, "gate": float})
    assert _bytes(fdask.fit(names, text, y, client=client)) == _bytes(names.fit(text, y))


def test_arrays_and_array_files_with_categories_by_mask_or_indices(client, labels, tmp_path):
    X, y = labels
    make = lambda spec: fi.ExtraTreesRegressor(  # noqa: E731
        n_estimators=6, random_state=2, categorical_features=spec
    )
    local = make([0]).fit(X, y)
    np.testing.assert_array_equal(local.categories_[0], [10.0, 20.0, 35.0, 40.0, 55.0])
    np.save(tmp_path / "X.npy", X)
    zarr = pytest.importorskip("zarr")
    zarr.save_array(str(tmp_path / "X.zarr"), X)
    inputs = [
        X,
        da.from_array(X, chunks=(130, 2)),
        str(tmp_path / "X.npy"),
        tmp_path / "X.zarr",
    ]
    for X_in in inputs:
        for spec in ([0], np.array([True, False]), [-2]):
            spread = fdask.fit(make(spec), X_in, y, client=client, n_tasks=3)
            assert _bytes(spread) == _bytes(local), (type(X_in), spec)
            _same_categories(spread, local)
    # Text labels in an object array, declared by index: coded as one machine codes them.
    text = np.column_stack([np.where(np.isnan(X[:, 0]), None, X[:, 0].astype(str)), X[:, 1]])
    text = text.astype(object)
    by_text = make([0]).fit(text, y)
    assert _bytes(fdask.fit(make([0]), text, y, client=client)) == _bytes(by_text)
    # "from_dtype" (the default) finds no category in numbers: the numeric model.
    numeric = fi.ExtraTreesRegressor(n_estimators=6, random_state=2).fit(X, y)
    default = fdask.fit(fi.ExtraTreesRegressor(n_estimators=6, random_state=2), inputs[2], y)
    assert _bytes(default) == _bytes(numeric) and default.categories_ is None


def test_prediction_over_partitions_matches_one_machine(client, frame):
    from forestimp.importance import shap_values

    X, y = frame
    est = fi.RandomForestClassifier(n_estimators=6, random_state=0).fit(X, y)
    # Rows to predict: an unseen carrier and missing ones too, in partitions whose dtypes
    # declare other categories, in other orders, than the training frame's.
    rows = X.astype({"carrier": object}).copy()
    rows.loc[rows.index[::37], "carrier"] = "zz"
    ddf = dd.from_pandas(rows, npartitions=4).astype({"carrier": "category"})
    ddf = ddf.map_partitions(
        lambda part: part.assign(carrier=part["carrier"].cat.reorder_categories(
            part["carrier"].cat.categories[::-1]
        )),
        meta=ddf._meta,
    )  # fmt: skip
    want = rows.astype({"carrier": "category"})
    np.testing.assert_array_equal(fdask.predict(est, ddf).compute(), est.predict(want))
    np.testing.assert_array_equal(fdask.predict_proba(est, ddf).compute(), est.predict_proba(want))
    values = fdask.shap_values(est, ddf.partitions[:2]).compute()
    first = ddf.partitions[:2].compute()
    np.testing.assert_array_equal(values, shap_values(est, first).values)
    # An estimator fitted on an array with a mask, over the blocks of a Dask Array.
    A = np.column_stack([X["gate"].astype(float), X["distance"]])
    masked = fi.RandomForestClassifier(n_estimators=5, random_state=0, categorical_features=[0])
    masked.fit(A, y)
    blocks = da.from_array(A, chunks=(100, 2))
    np.testing.assert_array_equal(fdask.predict(masked, blocks).compute(), masked.predict(A))


def test_permutation_permutes_categories_as_one_machine(client, frame):
    from forestimp.importance import permutation

    X, y = frame
    est = fi.RandomForestClassifier(n_estimators=8, random_state=0).fit(X[:360], y[:360])
    oob = permutation(est, X[:360], y[:360], oob=True, random_state=3)
    spread = fdask.permutation(est, X[:360], y[:360], oob=True, random_state=3, n_tasks=3)
    np.testing.assert_array_equal(spread.importances, oob.importances)
    held = permutation(est, X[360:], y[360:], n_repeats=2, random_state=4)
    held_spread = fdask.permutation(
        est, dd.from_pandas(X[360:], npartitions=2), y[360:], n_repeats=2, random_state=4,
        client=client, n_tasks=2,
    )  # fmt: skip
    np.testing.assert_array_equal(held_spread.importances, held.importances)


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_patches_code_a_category_alike_in_every_block(client, tmp_path):
    # Block 1 holds every category, block 2 only 20 and 40. Codes learned per block would
    # code 20 as 0 and 40 as 1 in block 2 (10 and 20 in block 1): its trees would send 20
    # where 10 goes. Learned once over all the rows, every tree agrees with the target.
    rng = np.random.default_rng(2)
    first = rng.choice([10.0, 20.0, 30.0, 40.0], 200)
    second = rng.choice([20.0, 40.0], 200)
    X = np.column_stack([np.concatenate([first, second]), rng.random(400)])
    y = np.isin(X[:, 0], [10.0, 20.0]).astype(int)
    make = lambda: fi.RandomForestClassifier(  # noqa: E731
        n_estimators=8, max_features=1.0, random_state=0, categorical_features=[0]
    )
    kw = dict(n_row_blocks=2, client=client)
    est = fdask.fit_patches(make(), X, y, **kw)
    np.testing.assert_array_equal(est.categories_[0], [10.0, 20.0, 30.0, 40.0])
    # 20 and 40, in both blocks, are predicted by every tree as the target says (10 and
    # 30, unseen in block 2, go where its trees send unseen categories).
    both = np.isin(X[:, 0], [20.0, 40.0])
    proba = est.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(proba[both], y[both].astype(float))
    # The same patches from a .npy file, a Zarr array and a dask Array: categories learned
    # by a task per row block, merged; and a DataFrame whose category order is the labels'.
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    zarr = pytest.importorskip("zarr")
    zarr.save_array(str(tmp_path / "X.zarr"), X)
    for X_in in (str(tmp_path / "X.npy"), tmp_path / "X.zarr", da.from_array(X, 90)):
        other = fdask.fit_patches(make(), X_in, tmp_path / "y.npy", **kw)
        assert _bytes(other) == _bytes(est)
        np.testing.assert_array_equal(other.categories_[0], est.categories_[0])
    names = {10.0: "a", 20.0: "b", 30.0: "c", 40.0: "d"}
    df = pd.DataFrame(
        {
            "k": pd.Categorical([names[v] for v in X[:, 0]], categories=list("abcd")),
            "u": X[:, 1],
        }
    )
    by_frame = fi.RandomForestClassifier(n_estimators=8, max_features=1.0, random_state=0)
    by_frame = fdask.fit_patches(by_frame, df, y, **kw)
    assert _bytes(by_frame) == _bytes(est)
    assert list(by_frame.feature_names_in_) == ["k", "u"]
    np.testing.assert_array_equal(by_frame.predict(df), est.predict(X))
    # Column subsets and out-of-bag rows within patches: the categorical column keeps its
    # categories in the patches that draw it.
    wide = np.column_stack([X, rng.random(400)])
    sub = fi.ExtraTreesClassifier(
        n_estimators=12, bootstrap=True, oob_score=True, random_state=0, categorical_features=[0]
    )
    sub = fdask.fit_patches(
        sub, wide, y, n_row_blocks=2, n_patches=6, max_features=2, client=client
    )
    assert sub.is_categorical_.tolist() == [True, False, False]
    assert 0.5 < sub.oob_score_ <= 1.0


def test_what_cannot_be_done_is_a_typed_error(client, frame, labels, tmp_path):
    X, y = frame
    ddf = dd.from_pandas(X, npartitions=2)
    with pytest.raises(InvalidParameterError, match="Dask DataFrame"):
        fdask.fit_patches(fi.RandomForestClassifier(n_estimators=2), ddf, y, client=client)
    # A text column not declared categorical: refused on the client, naming it.
    text = X.astype({"carrier": object})
    with pytest.raises(DataError, match="carrier"):
        fdask.fit(fi.RandomForestClassifier(n_estimators=2), text, y, client=client)
    A, t = labels
    np.save(tmp_path / "A.npy", A)
    # Names need a DataFrame (raised by the worker that reads the file); a bad mask.
    named = fi.ExtraTreesRegressor(n_estimators=2, categorical_features=["x0"])
    with pytest.raises(InvalidParameterError, match="by name"):
        fdask.fit(named, str(tmp_path / "A.npy"), t, client=client)
    with pytest.raises(InvalidParameterError, match="by name"):
        fdask.fit_patches(named, A, t, client=client)
    masked = fi.ExtraTreesRegressor(n_estimators=2, categorical_features=[True])
    with pytest.raises(InvalidParameterError, match="mask"):
        fdask.fit(masked, A, t, client=client)
    # Text in a categorical column of an array file: .npy files hold numbers only.
    np.save(tmp_path / "text.npy", np.array([["a", "1"], ["b", "2"]], dtype=object))
    with pytest.raises(DataError):
        fdask.fit(fi.ExtraTreesRegressor(n_estimators=2, categorical_features=[0]),
                  str(tmp_path / "text.npy"), [1.0, 2.0], client=client)  # fmt: skip


def test_srs_carries_a_categorical_mask_as_one_process(client):
    from forestimp.selection import SequentialRandomSubspace

    rng = np.random.default_rng(3)
    n, p = 300, 12
    X = rng.normal(size=(n, p))
    X[:, 2] = rng.choice([5.0, 9.0, 2.0, 7.0], n)
    y = (np.isin(X[:, 2], [5.0, 2.0]) ^ (X[:, 7] > 0)).astype(int)
    base = fi.ExtraTreesClassifier(n_estimators=20, categorical_features=[2])
    srs = SequentialRandomSubspace(
        base, q=4, n_iterations=6, n_probes=5, batch_size=3, random_state=0
    )
    local = srs.fit(X, y)
    spread = fdask.srs(srs, X, y, client=client)
    np.testing.assert_array_equal(spread.support_, local.support_)
    np.testing.assert_array_equal(spread.importances_, local.importances_)
    # Category columns of a DataFrame: SRS reads numbers only, a DataError on the client.
    frame = pd.DataFrame(X).assign(k=pd.Categorical(X[:, 2]))
    with pytest.raises(DataError, match="categorical_features"):
        fdask.srs(srs, frame, y, client=client)
