"""Permutation importance: exact brute-force oracles (explicitly permuted copies of X, the
same permutations), identities between the casewise and global importances, determinism
across thread counts, a ranking sanity check and input validation."""

from __future__ import annotations

import pickle
import zlib

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.inspection import permutation_importance
from sklearn.metrics import accuracy_score, balanced_accuracy_score, get_scorer, make_scorer

import forestimp
from forestimp import _core
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.importance import PermutationImportance, _permutation, local_permutation, permutation


@pytest.fixture(scope="module")
def clf():
    X, y = make_classification(
        n_samples=400, n_features=6, n_informative=3, n_redundant=1, n_classes=3, random_state=1
    )
    est = forestimp.RandomForestClassifier(n_estimators=12, random_state=0).fit(X, y)
    Xh, yh = make_classification(
        n_samples=200, n_features=6, n_informative=3, n_redundant=1, n_classes=3, random_state=2
    )
    return est, X, y, Xh, yh


@pytest.fixture(scope="module")
def reg():
    X, y = make_regression(n_samples=300, n_features=5, n_informative=3, noise=2.0, random_state=0)
    est = forestimp.RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
    return est, X, y


def _tree_predict(est, t, X):
    """Tree t's own prediction (class code or value) for every row of X, via apply."""
    leaves = est.apply(X)[:, t]
    value = est.forest_.tree_arrays(t)["value"][leaves]
    return np.argmax(value, axis=1) if est.forest_.n_classes else value[:, 0]


def _tree_loss(est, t, X, y):
    pred = _tree_predict(est, t, X)
    return (pred != y).astype(float) if est.forest_.n_classes else (pred - y) ** 2


def _uses(est, t, m):
    return bool(np.any(est.forest_.tree_arrays(t)["feature"] == m))


# ------------------------------------------------------------------------ held-out
@pytest.mark.parametrize("which", ["clf", "reg"])
def test_held_out_predictions_equal_predict_on_permuted_copy(which, clf, reg):
    est, X = (clf[0], clf[3]) if which == "clf" else (reg[0], reg[1])
    seed = 12345
    X = np.ascontiguousarray(X)
    for m in range(X.shape[1]):
        got = _core.permuted_predictions(est.forest_, X, m, n_repeats=2, seed=seed)
        for r in range(2):
            perm = _core.permutation_indices(seed, len(X), m, r)
            assert sorted(perm) == list(range(len(X)))
            Xp = X.copy()
            Xp[:, m] = X[perm, m]
            np.testing.assert_array_equal(got[r], est.forest_.predict(Xp))


def test_held_out_importance_equals_brute_force(clf):
    est, _, _, Xh, yh = clf
    res = permutation(est, Xh, yh, n_repeats=3, scoring="balanced_accuracy", random_state=7)
    assert isinstance(res, PermutationImportance) and res.method == "held_out"
    base = balanced_accuracy_score(yh, est.predict(Xh))
    assert res.baseline_score == base
    for m in range(Xh.shape[1]):
        for r in range(3):
            Xp = Xh.copy()
            Xp[:, m] = Xh[_core.permutation_indices(res.seed, len(Xh), m, r), m]
            assert res.importances[m, r] == base - balanced_accuracy_score(yh, est.predict(Xp))
    np.testing.assert_array_equal(res.importances_mean, res.importances.mean(axis=1))
    np.testing.assert_allclose(res.standard_error, res.importances.std(axis=1) / np.sqrt(3))


def _brute_force(est, X, y, scorer, seed, n_repeats, sample_weight=None):
    """sklearn's scorer on explicitly permuted copies of X, with our permutations."""
    kw = {} if sample_weight is None else {"sample_weight": sample_weight}
    base = scorer(est, X, y, **kw)
    out = np.empty((X.shape[1], n_repeats))
    for m in range(X.shape[1]):
        for r in range(n_repeats):
            Xp = X.copy()
            Xp[:, m] = X[_core.permutation_indices(seed, len(X), m, r), m]
            out[m, r] = base - scorer(est, Xp, y, **kw)
    return base, out


@pytest.mark.parametrize("name", ["neg_log_loss", "roc_auc_ovr", "f1_macro", "accuracy"])
def test_held_out_equals_sklearn_scorers_on_permuted_copies(clf, name):
    """The fast path (precomputed predictions fed to a stand-in estimator) gives what the
    scikit-learn scorer gives on the real estimator and a permuted copy of X, weighted."""
    est, _, _, Xh, yh = clf
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(yh))
    res = permutation(est, Xh, yh, n_repeats=2, scoring=name, sample_weight=w, random_state=3)
    base, want = _brute_force(est, Xh, yh, get_scorer(name), res.seed, 2, sample_weight=w)
    assert res.baseline_score == pytest.approx(base, rel=1e-12)
    np.testing.assert_allclose(res.importances, want, rtol=1e-10, atol=1e-12)
    unweighted = permutation(est, Xh, yh, n_repeats=2, scoring=name, random_state=3)
    assert not np.allclose(unweighted.importances, res.importances)


def test_held_out_callable_and_multimetric(clf, reg):
    est, _, _, Xh, yh = clf
    kw = dict(n_repeats=2, random_state=3)
    acc = permutation(est, Xh, yh, **kw)
    # A plain callable scorer(estimator, X, y) gets the real estimator and a permuted copy
    # of X (the exact path); make_scorer objects take the fast path: the same numbers.
    seen = []

    def plain(e, X, y):
        seen.append(e)
        return float(np.mean(e.predict(X) == y))

    same = permutation(est, Xh, yh, scoring=plain, **kw)
    assert all(e is est for e in seen) and len(seen) == 1 + 2 * Xh.shape[1]
    np.testing.assert_array_equal(acc.importances, same.importances)
    made = permutation(est, Xh, yh, scoring=make_scorer(accuracy_score), **kw)
    np.testing.assert_array_equal(acc.importances, made.importances)
    # Several metrics: a dict of results, as sklearn.inspection.permutation_importance.
    both = permutation(est, Xh, yh, scoring=["accuracy", "neg_log_loss"], **kw)
    assert set(both) == {"accuracy", "neg_log_loss"}
    np.testing.assert_array_equal(both["accuracy"].importances, acc.importances)
    loss = permutation(est, Xh, yh, scoring="neg_log_loss", **kw)
    np.testing.assert_array_equal(both["neg_log_loss"].importances, loss.importances)
    mixed = permutation(est, Xh, yh, scoring={"mine": plain, "acc": "accuracy"}, **kw)
    np.testing.assert_array_equal(mixed["mine"].importances, acc.importances)
    # The same keys and shapes as scikit-learn's Bunch.
    sk = permutation_importance(est, Xh, yh, scoring="accuracy", n_repeats=2, random_state=0)
    for key in ("importances_mean", "importances_std", "importances"):
        assert getattr(acc, key).shape == sk[key].shape
    rest, Xr, yr = reg
    r2 = permutation(rest, Xr, yr, **kw)
    mse = permutation(rest, Xr, yr, scoring="neg_mean_squared_error", **kw)
    # r2 = 1 - MSE / var(y): the two importances differ by the factor var(y) exactly.
    np.testing.assert_allclose(mse.importances, r2.importances * np.var(yr), rtol=1e-9)


# ----------------------------------------------------------------------------- OOB
@pytest.mark.parametrize("which", ["clf", "reg"])
def test_oob_per_tree_equals_brute_force(which, clf, reg):
    est, X, y = (clf[0], clf[1], clf[2]) if which == "clf" else reg
    res = permutation(est, X, y, oob=True, n_repeats=2, random_state=11)
    assert res.method == "oob" and res.per_tree.shape == (est.n_estimators, X.shape[1])
    assert res.draws == "trees" and res.importances.shape == (X.shape[1], est.n_estimators)
    for t in range(est.n_estimators):
        oob = _core.oob_indices(est.forest_, t)
        Xo, yo = X[oob], y[oob]
        base = _tree_loss(est, t, Xo, yo)
        assert res.oob_error[t] == pytest.approx(base.mean(), rel=1e-12)
        for m in range(X.shape[1]):
            vals = []
            for r in range(2):
                perm = _core.permutation_indices(res.seed, len(oob), m, r, tree=t)
                Xp = Xo.copy()
                Xp[:, m] = Xo[perm, m]
                vals.append((_tree_loss(est, t, Xp, yo) - base).sum() / len(oob))
            assert res.per_tree[t, m] == pytest.approx(np.mean(vals), rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(res.raw_importances_mean, res.per_tree.mean(axis=0))
    se = res.per_tree.std(axis=0) / np.sqrt(est.n_estimators)
    np.testing.assert_allclose(res.standard_error, se)


def test_oob_bags_match_oob_predict(clf):
    """The OOB rows the importance uses are the ones the OOB score uses."""
    est, X, _, _, _ = clf
    _, counts = est.forest_.oob_predict(X)
    mine = np.zeros(len(X))
    for t in range(est.n_estimators):
        mine[_core.oob_indices(est.forest_, t)] += 1
    np.testing.assert_array_equal(mine, counts)


def test_tree_not_splitting_on_feature_contributes_zero():
    X, y = make_classification(n_samples=300, n_features=8, n_informative=3, random_state=0)
    est = forestimp.RandomForestClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    res = permutation(est, X, y, oob=True, random_state=0)
    unused = [(t, m) for t in range(20) for m in range(8) if not _uses(est, t, m)]
    assert len(unused) > 50
    for t, m in unused:
        assert res.per_tree[t, m] == 0.0
    assert np.count_nonzero(res.per_tree) > 0


def test_deterministic_for_any_n_jobs(clf):
    est, X, y, Xh, yh = clf
    a = permutation(est, X, y, oob=True, n_repeats=2, n_jobs=1, random_state=5)
    b = permutation(est, X, y, oob=True, n_repeats=2, n_jobs=2, random_state=5)
    np.testing.assert_array_equal(a.per_tree, b.per_tree)
    c = permutation(est, Xh, yh, n_repeats=2, n_jobs=1, random_state=5)
    d = permutation(est, Xh, yh, n_repeats=2, n_jobs=2, random_state=5)
    np.testing.assert_array_equal(c.importances, d.importances)
    for A, b, oob in [(X, y, True), (Xh, yh, False)]:
        e = local_permutation(est, A, b, oob=oob, n_jobs=1, random_state=5)
        f = local_permutation(est, A, b, oob=oob, n_jobs=2, random_state=5)
        np.testing.assert_array_equal(e.values, f.values)


def test_informative_features_rank_first():
    X, y = make_classification(
        n_samples=1500, n_features=12, n_informative=4, n_redundant=0, shuffle=False, random_state=0
    )
    est = forestimp.RandomForestClassifier(n_estimators=60, random_state=0, n_jobs=2).fit(X, y)
    res = permutation(est, X, y, oob=True, random_state=0, scaled=True)
    raw = res.raw_importances_mean
    assert raw[:4].min() > 5 * np.abs(raw[4:]).max()
    assert np.abs(raw[4:]).max() < 0.005  # noise features: about 0
    assert res.importances_mean[:4].min() > 3  # z-scores of informative features
    np.testing.assert_allclose(res.importances_mean, raw / res.standard_error)


# ------------------------------------------------------------------------ casewise
def test_casewise_oob_sums_to_per_tree(clf):
    """Σ_i |T_i| C[i, m] = Σ_t |O_t| VI_t(m) (the same permutations, repeat 0)."""
    est, X, y, _, _ = clf
    local = local_permutation(est, X, y, oob=True, random_state=4)
    C = local.values
    res = permutation(est, X, y, oob=True, random_state=4)
    n_oob = np.array([len(_core.oob_indices(est.forest_, t)) for t in range(est.n_estimators)])
    k = np.zeros(len(X))
    for t in range(est.n_estimators):
        k[_core.oob_indices(est.forest_, t)] += 1
    seen = k > 0
    assert np.all(np.isnan(C[~seen])) and not np.any(np.isnan(C[seen]))
    lhs = (k[seen, None] * C[seen]).sum(axis=0)
    np.testing.assert_allclose(lhs, n_oob @ res.per_tree, rtol=1e-12, atol=1e-12)
    # The global summary of the local result: the mean over the rows seen out of bag.
    np.testing.assert_allclose(local.importances_mean, C[seen].mean(axis=0), rtol=1e-12)


def test_casewise_held_out_tree_level(clf, reg):
    """mean_i C[i, m] = (1/M) Σ_t [err_t(X^π) − err_t(X)] with π of permutation(X, y)."""
    for est, X, y in [(clf[0], clf[3], clf[4]), reg]:
        C = local_permutation(est, X, y, random_state=9).values
        seed = permutation(est, X, y, random_state=9).seed
        for m in range(X.shape[1]):
            Xp = X.copy()
            Xp[:, m] = X[_core.permutation_indices(seed, len(X), m, 0), m]
            per_row = np.mean(
                [
                    _tree_loss(est, t, Xp, y) - _tree_loss(est, t, X, y)
                    for t in range(est.n_estimators)
                ],
                axis=0,
            )
            np.testing.assert_allclose(C[:, m], per_row, rtol=1e-10, atol=1e-12)


def test_casewise_forest_level_mean_is_held_out_importance(clf, reg):
    """mean_i C[i, m] = held-out importance under accuracy (0/1 loss) / neg MSE."""
    for (est, X, y), s in [((clf[0], clf[3], clf[4]), "accuracy"), (reg, "neg_mean_squared_error")]:
        C = local_permutation(est, X, y, level="forest", random_state=2).values
        imp = permutation(est, X, y, scoring=s, random_state=2).importances[:, 0]
        np.testing.assert_allclose(C.mean(axis=0), imp, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------- bad inputs
def test_bad_inputs(clf):
    est, X, y, Xh, yh = clf
    with pytest.raises(InvalidParameterError, match="n_repeats"):
        permutation(est, X, y, oob=True, n_repeats=0)
    with pytest.raises(InvalidParameterError, match="scoring"):
        permutation(est, Xh, yh, scoring="not_a_metric")
    with pytest.raises(InvalidParameterError, match="scoring"):
        permutation(est, X, y, oob=True, scoring="accuracy")  # OOB has its own loss
    with pytest.raises(InvalidParameterError, match="both X and y"):
        permutation(est, Xh, None)
    with pytest.raises(ValueError, match="features"):
        permutation(est, Xh[:, :4], yh)
    with pytest.raises(DataError, match="shape"):
        permutation(est, Xh, yh[:-1])
    with pytest.raises(InvalidParameterError, match="n_repeats >= 2"):
        permutation(est, Xh, yh, scaled=True)
    with pytest.raises(DataError, match="labels"):
        local_permutation(est, Xh, yh + 10)
    with pytest.raises(InvalidParameterError, match="level"):
        local_permutation(est, X, y, oob=True, level="forest")
    no_oob = forestimp.ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="bootstrap"):
        permutation(no_oob, X, y, oob=True)
    with pytest.raises(InvalidParameterError, match="bootstrap"):
        local_permutation(no_oob, X, y, oob=True)
    assert np.all(np.isfinite(permutation(no_oob, Xh, yh).importances))
    with pytest.raises(DataError):
        _core.oob_permutation_importance(
            est.forest_, X[:-1], y[:-1].astype(float), n_repeats=1, seed=0
        )
    with pytest.raises(InvalidParameterError, match="feature"):
        _core.permuted_predictions(est.forest_, Xh, 99, n_repeats=1, seed=0)


def test_oob_measures_refuse_data_other_than_the_training_data(clf):
    """The estimator keeps no reference to X: out-of-bag measures take it again and check it
    against the fit's fingerprint, instead of silently scoring the wrong rows."""
    est, X, y, Xh, yh = clf
    assert not any(v is X for v in vars(est).values())
    want = permutation(est, X, y, oob=True, random_state=1).importances
    # The same data in another container and dtype is accepted and gives the same numbers.
    again = permutation(est, X.tolist(), list(y), oob=True, random_state=1).importances
    np.testing.assert_array_equal(again, want)
    changed = X.copy()
    changed[0, 0] += 1.0  # row 0 is always in the fingerprint
    shuffled = np.random.default_rng(0).permutation(len(X))
    y_other = y.copy()
    y_other[5] = (y_other[5] + 1) % 3  # y is fingerprinted whole
    for A, b in [
        (Xh, yh),
        (X[:-1], y[:-1]),
        (changed, y),
        (X[shuffled], y[shuffled]),
        (X, y_other),
    ]:
        with pytest.raises(DataError, match="training data"):
            permutation(est, A, b, oob=True)
        with pytest.raises(DataError, match="training data"):
            local_permutation(est, A, b, oob=True)
    # A reloaded estimator checks the same fingerprint.
    twin = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(
        permutation(twin, X, y, oob=True, random_state=1).importances, want
    )
    with pytest.raises(DataError, match="399 rows given, 400 at fit"):
        permutation(twin, X[1:], y[1:], oob=True)


@pytest.mark.parametrize("n", [1, 7, 1024, 1025, 3000])
def test_the_training_fingerprint_is_the_crc_of_its_rows_as_float64(n):
    """Saved models keep the fingerprint: it must stay zlib's CRC-32 of up to 1024 evenly
    spaced rows of X as C-ordered float64, then of y as float64, whatever X's dtype, memory
    order or strides (the engine hashes the rows in place)."""
    from forestimp._base import _fingerprint

    rng = np.random.default_rng(n)
    base = rng.normal(size=(n, 9))
    base[0, 0] = np.nan
    y = rng.integers(0, 3, n).astype(np.uint32)
    rows = np.unique(np.linspace(0, n - 1, num=min(n, 1024)).astype(np.intp))
    for dtype in (np.float32, np.float64):
        X = base.astype(dtype)
        crc = zlib.crc32(np.ascontiguousarray(X[rows], dtype=np.float64).tobytes())
        want = (n, 9, zlib.crc32(y.astype(np.float64).tobytes(), crc))
        for view in (X, np.asfortranarray(X)):
            assert _fingerprint(view, y) == want
        wider = np.repeat(X, 2, axis=1)[:, ::2]  # strided columns, the same values
        assert _fingerprint(wider, y) == want
    with pytest.raises(IndexError, match="out of range"):
        _core.rows_crc32(base, np.array([n], dtype=np.int64))
    with pytest.raises(TypeError, match="float32 or float64"):
        _core.rows_crc32(base.astype(np.int64), rows.astype(np.int64))


def test_held_out_repeats_asked_in_blocks_are_the_whole(reg, monkeypatch):
    """Held-out permutation asks the engine for a few repeats at a time (Ctrl-C is read
    between calls): the blocks are the rows of the whole, and the importances the same."""
    est, X, y = reg
    whole = _core.permuted_predictions(est.forest_, X, 1, n_repeats=5, seed=7)
    parts = [
        _core.permuted_predictions(est.forest_, X, 1, n_repeats=k, seed=7, first_repeat=r)
        for r, k in ((0, 2), (2, 1), (3, 2))
    ]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    at_once = permutation(est, X, y, n_repeats=5, random_state=3)
    monkeypatch.setattr(_permutation, "_WALKS_PER_CALL", 1)  # one repeat a call
    in_blocks = permutation(est, X, y, n_repeats=5, random_state=3)
    np.testing.assert_array_equal(in_blocks.importances, at_once.importances)
