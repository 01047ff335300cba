"""Multi-output targets (a 2-D y): parity with scikit-learn's multi-output trees and forests,
scikit-learn's shapes of every output and attribute, determinism, and bad input."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn import ensemble as sk
from sklearn.exceptions import DataConversionWarning

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError

from conftest import ALL_ESTIMATORS, CLASSIFIERS

# float32 X: scikit-learn grows on float32, so both search the same values (no ties: the
# values are continuous and distinct).
RNG = np.random.default_rng(7)
X = RNG.normal(size=(240, 5)).astype(np.float32)
X_TEST = RNG.normal(size=(100, 5)).astype(np.float32)
Y_REG = np.c_[X[:, 0] + 0.3 * X[:, 1] ** 2, np.sin(2 * X[:, 2]) - X[:, 3], 5.0 * X[:, 4]]
Y_CLS = np.c_[X[:, 0] > 0, np.digitize(X[:, 1] + X[:, 2], [-0.7, 0.0, 0.7]), X[:, 3] > 0.5]
Y_CLS = Y_CLS.astype(int)
# String labels of different counts per output.
Y_TEXT = np.c_[np.where(Y_CLS[:, 0], "yes", "no"), np.array(list("abcd"))[Y_CLS[:, 1]]]

# Deterministic trees: every feature at every node, every row once, nodes of >= 8 rows (so
# that two features rarely cut a node into the same two sets, a tie either library breaks
# its own way).
EXACT = dict(max_features=None, bootstrap=False, min_samples_leaf=4, random_state=0)


def _split(values: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    ends = np.cumsum(widths)
    return [values[:, e - w : e] for w, e in zip(widths, ends, strict=True)]


@pytest.mark.parametrize("criterion", ["squared_error"])
def test_regression_matches_sklearn(criterion):
    ours = fi.RandomForestRegressor(n_estimators=3, criterion=criterion, **EXACT).fit(X, Y_REG)
    theirs = sk.RandomForestRegressor(n_estimators=3, criterion=criterion, **EXACT)
    theirs.fit(X, Y_REG)
    for Z in (X, X_TEST):
        assert ours.predict(Z).shape == theirs.predict(Z).shape == (len(Z), 3)
        np.testing.assert_allclose(ours.predict(Z), theirs.predict(Z), rtol=0, atol=1e-9)
    # The trees themselves: same nodes, and scikit-learn's impurity (the mean over outputs
    # of the variances) and values.
    a, b = ours.estimators_[0].tree_, theirs.estimators_[0].tree_
    assert a.node_count == b.node_count
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_allclose(a.impurity, b.impurity, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(a.value, b.value, rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=0, atol=1e-9
    )


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("y", [Y_CLS, Y_TEXT], ids=["codes", "text"])
def test_classification_matches_sklearn(criterion, y):
    # Class counts make equal decreases on different features common in small nodes (a tie
    # each library breaks its own way, with one output as with several): continuous sample
    # weights and a depth limit leave none.
    kw = dict(n_estimators=3, criterion=criterion, max_depth=6, **{**EXACT, "min_samples_leaf": 8})
    weights = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    ours = fi.RandomForestClassifier(**kw).fit(X, y, sample_weight=weights)
    theirs = sk.RandomForestClassifier(**kw).fit(X, y, sample_weight=weights)
    assert ours.n_outputs_ == theirs.n_outputs_ == y.shape[1]
    assert ours.n_classes_ == list(theirs.n_classes_)
    for a, b in zip(ours.classes_, theirs.classes_, strict=True):
        np.testing.assert_array_equal(a, b)
    for Z in (X, X_TEST):
        pa, pb = ours.predict_proba(Z), theirs.predict_proba(Z)
        assert isinstance(pa, list) and len(pa) == len(pb)
        for a, b in zip(pa, pb, strict=True):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(ours.predict(Z), theirs.predict(Z))
        assert ours.predict(Z).dtype == theirs.predict(Z).dtype
    # scikit-learn's impurity is the mean over outputs, entropy in bits in both libraries.
    # (Its trees may also split a pure node whose weighted counts round to an impurity of
    # 1e-16, which changes no prediction: the nodes are compared down to the first such
    # split.)
    a, b = ours.estimators_[0].tree_, theirs.estimators_[0].tree_
    n = min(a.node_count, b.node_count)
    same = np.cumprod(a.feature[:n] == b.feature[:n]).astype(bool)
    assert same.sum() > 10
    np.testing.assert_allclose(a.impurity[:n][same], b.impurity[:n][same], atol=1e-12)


def test_a_single_tree_is_scikit_learns_decision_tree():
    from sklearn.tree import DecisionTreeRegressor

    ours = fi.RandomForestRegressor(n_estimators=1, **EXACT).fit(X, Y_REG)
    theirs = DecisionTreeRegressor(min_samples_leaf=4, random_state=0).fit(X, Y_REG)
    np.testing.assert_allclose(ours.predict(X_TEST), theirs.predict(X_TEST), rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (fi.RandomForestClassifier, sk.RandomForestClassifier),
        (fi.ExtraTreesClassifier, sk.ExtraTreesClassifier),
        (fi.RandomForestRegressor, sk.RandomForestRegressor),
        (fi.ExtraTreesRegressor, sk.ExtraTreesRegressor),
    ],
    ids=["RFC", "ETC", "RFR", "ETR"],
)
def test_shapes_and_attributes_match_sklearn(ours, theirs):
    classifier = ours in CLASSIFIERS
    # OOB of a multi-output classifier needs binary outputs (scikit-learn's rule).
    y = Y_CLS[:, [0, 2]] if classifier else Y_REG
    params = dict(n_estimators=30, bootstrap=True, oob_score=True, random_state=0)
    a, b = ours(**params).fit(X, y), theirs(**params).fit(X, y)
    assert a.n_outputs_ == b.n_outputs_ == y.shape[1]
    assert a.predict(X_TEST).shape == b.predict(X_TEST).shape
    if classifier:
        assert a.oob_decision_function_.shape == b.oob_decision_function_.shape
        assert [p.shape for p in a.predict_proba(X_TEST)] == [
            p.shape for p in b.predict_proba(X_TEST)
        ]
        assert [p.shape for p in a.predict_log_proba(X_TEST)] == [
            p.shape for p in b.predict_log_proba(X_TEST)
        ]
        # Subset accuracy of the out-of-bag votes, as scikit-learn scores it.
        seen = ~np.isnan(a.oob_decision_function_).any(axis=(1, 2))
        votes = np.argmax(a.oob_decision_function_[seen], axis=1)
        assert a.oob_score_ == pytest.approx(np.mean(np.all(votes == y[seen], axis=1)))
    else:
        assert a.oob_prediction_.shape == b.oob_prediction_.shape == y.shape
        from sklearn.metrics import r2_score

        assert a.oob_score_ == pytest.approx(r2_score(y, a.oob_prediction_))
    assert abs(a.oob_score_ - b.oob_score_) < 0.1
    assert a.apply(X_TEST).shape == b.apply(X_TEST).shape


def test_oob_of_multiclass_multioutput_is_refused_as_sklearn_does():
    with pytest.raises(ValueError, match="multiclass-multioutput"):
        sk.RandomForestClassifier(n_estimators=5, oob_score=True).fit(X, Y_CLS)
    with pytest.raises(DataError, match="multiclass-multioutput"):
        fi.RandomForestClassifier(n_estimators=5, oob_score=True).fit(X, Y_CLS)


@pytest.mark.parametrize("cls", ALL_ESTIMATORS)
def test_every_estimator_fits_several_outputs(cls):
    classifier = cls in CLASSIFIERS
    y = Y_CLS if classifier else Y_REG
    est = cls(n_estimators=8, random_state=0).fit(X, y)
    assert est.n_outputs_ == 3
    pred = est.predict(X_TEST)
    assert pred.shape == (len(X_TEST), 3)
    if classifier:
        proba = est.predict_proba(X_TEST)
        assert [p.shape[1] for p in proba] == est.n_classes_
        for p in proba:
            np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # estimators_ are scikit-learn trees with n_outputs > 1 whose mean is the prediction.
    trees = est.estimators_
    assert trees[0].n_outputs_ == 3
    if classifier:
        mean = [np.mean([t.predict_proba(X_TEST)[k] for t in trees], axis=0) for k in range(3)]
        for m, p in zip(mean, est.predict_proba(X_TEST), strict=True):
            np.testing.assert_allclose(m, p, atol=1e-12)
        skl = est.to_sklearn()
        for m, p in zip(skl.predict_proba(X_TEST), est.predict_proba(X_TEST), strict=True):
            np.testing.assert_allclose(m, p, atol=1e-12)
        np.testing.assert_array_equal(skl.predict(X_TEST), pred)
    else:
        mean = np.mean([t.predict(X_TEST) for t in trees], axis=0)
        np.testing.assert_allclose(mean, pred, atol=1e-12)
        np.testing.assert_allclose(est.to_sklearn().predict(X_TEST), pred, atol=1e-12)


@pytest.mark.parametrize("splitter", ["best", "random", "hist"])
def test_every_splitter_learns_every_output(splitter):
    """Each output is learned as well as scikit-learn's forest of the same kind learns it
    (held-out R² per output, 100 trees each)."""
    ours = fi.ExtraTreesRegressor if splitter == "random" else fi.RandomForestRegressor
    theirs = sk.ExtraTreesRegressor if splitter == "random" else sk.RandomForestRegressor
    kw = {} if splitter == "random" else {"splitter": splitter}
    a = ours(n_estimators=100, random_state=0, **kw).fit(X, Y_REG)
    b = theirs(n_estimators=100, random_state=0).fit(X, Y_REG)
    Z = np.random.default_rng(3).normal(size=(400, 5)).astype(np.float32)
    truth = np.c_[Z[:, 0] + 0.3 * Z[:, 1] ** 2, np.sin(2 * Z[:, 2]) - Z[:, 3], 5.0 * Z[:, 4]]

    def r2(pred):
        return 1 - ((pred - truth) ** 2).mean(0) / truth.var(0)

    ra, rb = r2(a.predict(Z)), r2(b.predict(Z))
    assert np.all(ra > rb - 0.05), (ra, rb)
    assert np.all(ra > 0.3), ra


def test_missing_values_with_several_outputs():
    Xn = X.copy()
    Xn[::7, 0] = np.nan
    est = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(Xn, Y_CLS)
    assert est.predict(Xn).shape == Y_CLS.shape
    # Per-output training accuracy (scikit-learn's score refuses multiclass-multioutput).
    assert np.all((est.predict(Xn) == Y_CLS).mean(axis=0) > 0.9)


@pytest.mark.parametrize("cls", [fi.RandomForestRegressor, fi.ExtraTreesClassifier])
def test_sparse_x_grows_the_dense_forest(cls):
    import scipy.sparse as sparse

    Xs = np.where(np.abs(X) < 0.8, 0, X)
    y = Y_CLS if cls in CLASSIFIERS else Y_REG
    a = cls(n_estimators=5, random_state=0).fit(sparse.csc_matrix(Xs), y)
    b = cls(n_estimators=5, random_state=0).fit(Xs, y)
    assert a.forest_.to_bytes() == b.forest_.to_bytes()
    np.testing.assert_array_equal(a.predict(sparse.csr_matrix(X_TEST)), b.predict(X_TEST))


def test_column_vector_warns_and_is_one_dimensional():
    y = Y_REG[:, :1]
    with pytest.warns(DataConversionWarning, match="column-vector"):
        col = fi.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    flat = fi.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y[:, 0])
    assert col.n_outputs_ == 1
    assert col.predict(X_TEST).shape == (len(X_TEST),)
    assert col.forest_.to_bytes() == flat.forest_.to_bytes()
    with pytest.warns(DataConversionWarning):
        clf = fi.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, Y_CLS[:, 1:2])
    assert clf.classes_.ndim == 1 and isinstance(clf.n_classes_, int)


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_same_model_for_any_n_jobs(cls):
    y = Y_CLS if cls in CLASSIFIERS else Y_REG
    models = {
        cls(n_estimators=12, random_state=3, n_jobs=j).fit(X, y).forest_.to_bytes()
        for j in (1, 2, 4)
    }
    assert len(models) == 1


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_persistence_round_trips(cls, tmp_path):
    y = Y_TEXT if cls in CLASSIFIERS else Y_REG
    est = cls(n_estimators=6, random_state=0, bootstrap=True, oob_score=cls not in CLASSIFIERS)
    est.fit(X, y)
    for back in (pickle.loads(pickle.dumps(est)), _saved(est, tmp_path)):
        assert back.forest_.to_bytes() == est.forest_.to_bytes()
        np.testing.assert_array_equal(back.predict(X_TEST), est.predict(X_TEST))
        assert back.n_outputs_ == 3 if cls not in CLASSIFIERS else 2
        if cls in CLASSIFIERS:
            assert back.n_classes_ == est.n_classes_
            for a, b in zip(back.classes_, est.classes_, strict=True):
                np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(back.oob_prediction_, est.oob_prediction_)
    # Version 4 (versions 5 and 6 are for forests that keep their nodes as grown).
    assert est.forest_.to_bytes()[4] == 4 < fi._core.FORMAT_VERSION


def _saved(est, tmp_path):
    path = tmp_path / "model.fimp"
    est.save(path)
    return fi.load(path)


def test_multi_output_model_bytes_survive_the_loader_fuzz():
    import struct
    import zlib

    data = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, Y_CLS)
    data = data.forest_.to_bytes()
    rng = np.random.default_rng(0)
    loaded = 0
    for trial in range(600):
        payload = bytearray(data[20:])
        if trial % 3 == 0:
            payload = payload[: rng.integers(0, len(payload))]
        else:
            i = rng.integers(0, len(payload))
            payload[i] = int(rng.integers(0, 256))
        sealed = struct.pack("<4sHHQI", b"FIMP", 4, 0, len(payload), zlib.crc32(payload))
        try:
            forest = fi._core.Forest.from_bytes(sealed + bytes(payload))
        except fi.exceptions.ModelFormatError:
            continue
        loaded += 1
        forest.predict(X_TEST)  # whatever loads must predict
    # Truncations never load; some bytes (a threshold, a leaf value) change harmlessly.
    assert 0 < loaded < 400


BAD = [
    ("y-nan", Y_REG * np.r_[np.nan, np.ones(239)][:, None], None, ValueError, "NaN"),
    ("y-length", Y_REG[:200], None, ValueError, "inconsistent numbers of samples"),
    ("y-3d", Y_REG[:, :, None], None, ValueError, "1-D or 2-D|dim"),
    ("y-no-column", Y_REG[:, :0], None, ValueError, "output|0"),
    ("sw-length", Y_REG, np.ones(7), ValueError, "sample_weight"),
    ("sw-nan", Y_REG, np.r_[np.nan, np.ones(239)], ValueError, "NaN"),
]


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
@pytest.mark.parametrize(("y", "sw", "exc", "match"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(cls, y, sw, exc, match):
    if cls in CLASSIFIERS and not np.isnan(y).any():
        y = (y > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataConversionWarning)
        with pytest.raises(exc, match=match):
            cls(n_estimators=3, random_state=0).fit(X, y, sample_weight=sw)


def test_core_refuses_mismatched_outputs():
    codes = np.ascontiguousarray(Y_CLS, dtype=np.uint32)
    kw = dict(
        criterion="gini", splitter="best", n_estimators=2, max_features=2, max_depth=None,
        min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0, max_leaf_nodes=None, bootstrap=True, max_samples=None,
        tree_features=None, balanced_subsample=False, random_state=0, n_jobs=1,
    )  # fmt: skip
    Forest = fi._core.Forest
    ok = Forest.fit(X, codes, None, n_classes=0, output_classes=[2, 4, 2], **kw)
    assert ok.n_outputs == 3 and ok.outputs == [2, 4, 2]
    with pytest.raises(DataError, match="class code"):
        Forest.fit(X, codes, None, n_classes=0, output_classes=[2, 2, 2], **kw)
    with pytest.raises(TypeError, match="output_classes"):
        Forest.fit(X, codes, None, n_classes=0, output_classes=[2, 4], **kw)
    with pytest.raises(TypeError, match="output_classes"):
        Forest.fit(X, codes, None, n_classes=2, **kw)
    with pytest.raises(TypeError, match="C-contiguous"):
        Forest.fit(X, np.asfortranarray(codes), None, n_classes=0, output_classes=[2, 4, 2], **kw)
    with pytest.raises(DataError, match="n_classes"):
        Forest.fit(X, codes, None, n_classes=0, output_classes=[2, 10**6, 2], **kw)
    kw["criterion"] = "poisson"
    with pytest.raises(InvalidParameterError, match="multi-output"):
        Forest.fit(X, np.abs(Y_REG).astype(np.float64), None, n_classes=0, **kw)


def test_guide_examples_run(capsys):
    from test_docs import run_guide

    run_guide("multi-output.md", 3)
    out = capsys.readouterr().out
    assert "2 (3, 2) (300, 2)" in out and "[2, 3] [(3, 2), (3, 3)]" in out, out
    assert "True 2" in out


def test_class_weight_per_output_is_scikit_learns():
    """A list of one dict per output multiplies the outputs' weights (scikit-learn's
    ``compute_sample_weight``): the same trees as those weights passed as sample_weight."""
    from sklearn.utils.class_weight import compute_sample_weight

    cw = [{0: 1.0, 1: 3.0}, {0: 1.0, 1: 2.0, 2: 1.0, 3: 0.5}, {0: 2.0, 1: 1.0}]
    a = fi.RandomForestClassifier(n_estimators=4, class_weight=cw, random_state=0).fit(X, Y_CLS)
    weights = compute_sample_weight(cw, Y_CLS)
    b = fi.RandomForestClassifier(n_estimators=4, random_state=0)
    b.fit(X, Y_CLS, sample_weight=weights)
    assert a.forest_.to_bytes() == b.forest_.to_bytes()
    # Per tree, the product of the outputs' weights (test_warm_start_sklearn.py).
    sub = fi.RandomForestClassifier(n_estimators=2, class_weight="balanced_subsample")
    assert sub.fit(X, Y_CLS).predict(X).shape == Y_CLS.shape


def test_multiway_and_warm_start_with_several_outputs():
    codes = np.random.default_rng(0).integers(0, 3, size=(200, 4)).astype(float)
    y = np.c_[codes[:, 0] > 0, codes[:, 1]].astype(int)
    est = fi.TotallyRandomizedTreesClassifier(n_estimators=20, multiway=True, random_state=0)
    est.fit(codes, y)
    # Fully grown on the codes it depends on: each output is read off its own feature.
    np.testing.assert_array_equal(est.predict(codes), y)
    warm = fi.RandomForestRegressor(n_estimators=5, warm_start=True, random_state=0).fit(X, Y_REG)
    warm.set_params(n_estimators=9).fit(X, Y_REG)
    once = fi.RandomForestRegressor(n_estimators=9, random_state=0).fit(X, Y_REG)
    assert warm.forest_.to_bytes() == once.forest_.to_bytes()


def test_saved_multi_output_files_survive_the_file_fuzz():
    """test_save_load.py's fuzz on a multi-output classifier's file (concatenated classes_
    of two outputs, a 3-D oob_decision_function_ stored 2-D, a format-4 model): every
    truncation and bit flip is refused; damage behind valid checksums is refused or loads
    into an estimator that predicts (or refuses with a typed error)."""
    from test_save_load import _must_refuse, _seal

    from forestimp import persistence
    from forestimp.exceptions import ModelFormatError

    from model_forge import file_sections as _sections

    y = np.c_[np.where(Y_CLS[:40, 0], "yes", "no"), np.where(Y_CLS[:40, 2], "b", "a")]
    est = fi.RandomForestClassifier(n_estimators=6, max_depth=2, oob_score=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rows without OOB trees
        data = persistence.dumps(est.fit(X[:40], y))
    back = persistence.loads(data)
    np.testing.assert_array_equal(back.oob_decision_function_, est.oob_decision_function_)
    for keep in range(0, len(data), 7):
        _must_refuse(data[:keep])
    for bit in range(0, 8 * len(data), 5):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        _must_refuse(bytes(flipped))
    sections = _sections(data)
    rng = np.random.default_rng(2)
    loaded = 0
    for _ in range(800):
        k = int(rng.integers(0, len(sections)))
        body = bytearray(sections[k][1])
        body[int(rng.integers(0, len(body)))] = int(rng.integers(0, 256))
        mutated = [*sections[:k], (sections[k][0], bytes(body)), *sections[k + 1 :]]
        try:
            got = persistence.loads(_seal(mutated))
        except ModelFormatError:
            continue
        loaded += 1
        try:
            got.predict(X_TEST[:5])
        except (InvalidParameterError, DataError):
            pass
    assert loaded > 0
