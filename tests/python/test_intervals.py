"""Prediction intervals and standard errors of the forest regressors (issue #53):
``predict_interval`` (jackknife+-after-bootstrap, out-of-bag conformal, quantile forest)
and ``predict_se`` (the bias-corrected infinitesimal jackknife, ranger's ``infjack``)."""

from __future__ import annotations

import math
import pickle
import shutil
import subprocess
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import forestimp as fi
from forestimp import _core, _intervals
from forestimp.exceptions import InvalidParameterError


def data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Heteroscedastic: the noise grows with x0."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = 2 * X[:, 0] + X[:, 0] * rng.normal(size=n) + 0.1 * X[:, 1]
    return X, y


def counts_of(est) -> np.ndarray:
    """(n_trees, n_train) draw counts."""
    return np.stack([_core.in_bag_counts(est.forest_, t) for t in range(len(est))])


def sklearn_tree_predictions(est, X) -> np.ndarray:
    """(n, n_trees, n_outputs) from the equivalent scikit-learn trees, not the engine."""
    per_tree = [tree.predict(X).reshape(len(X), -1) for tree in est.estimators_]
    return np.stack(per_tree, axis=1)


def brute_jackknife_plus(est, X_train, Y, X, alpha) -> np.ndarray:
    """Kim, Xu & Barber's J+aB bounds, one test row and one training row at a time."""
    N = counts_of(est)
    train, test = sklearn_tree_predictions(est, X_train), sklearn_tree_predictions(est, X)
    Y = Y.reshape(len(Y), -1)
    out = np.empty((len(X), Y.shape[1], 2))
    for j in range(Y.shape[1]):
        kept = [i for i in range(len(Y)) if (N[:, i] == 0).any()]
        n = len(kept)
        lo, hi = math.floor(alpha * (n + 1)), math.ceil((1 - alpha) * (n + 1))
        for r in range(len(X)):
            low, high = [], []
            for i in kept:
                trees = N[:, i] == 0
                residual = abs(Y[i, j] - train[i, trees, j].mean())
                low.append(test[r, trees, j].mean() - residual)
                high.append(test[r, trees, j].mean() + residual)
            out[r, j, 0] = sorted(low)[lo - 1] if lo >= 1 else -np.inf
            out[r, j, 1] = sorted(high)[hi - 1] if hi <= n else np.inf
    return out


def brute_ij_u(est, X, output: int = 0) -> np.ndarray:
    """Wager et al.'s V_IJ-U with ranger's N.var and subsample inflation, row by row."""
    N = counts_of(est).astype(float)
    B, n = N.shape
    preds = sklearn_tree_predictions(est, X)[:, :, output]
    n_var = np.mean([np.var(N[:, i]) for i in range(n)])
    out = []
    for t in preds:
        cov = [np.mean((N[:, i] - N[:, i].mean()) * (t - t.mean())) for i in range(n)]
        out.append(np.sum(np.square(cov)) - n * n_var * np.sum((t - t.mean()) ** 2) / B**2)
    inflation = 1 / (1 - N.mean()) ** 2 if N.max() <= 1 else 1.0
    return inflation * np.array(out)


@pytest.mark.parametrize("n_outputs", [1, 2])
def test_jackknife_plus_is_the_brute_force_bound_of_every_row(n_outputs):
    # 4 bootstrap trees on 60 rows leave ~0.6**4 = 13 % of the rows in every tree: they
    # have no out-of-bag prediction, are left out (with a warning) and n counts the rest.
    X, y = data(90)
    Y = y if n_outputs == 1 else np.column_stack([y, np.sin(6 * X[:, 1])])
    est = fi.RandomForestRegressor(n_estimators=4, random_state=1, store_leaf_values=True)
    est.fit(X[:60], Y[:60])
    assert not (counts_of(est) == 0).any(axis=0).all()
    for alpha in (0.1, 0.25):
        with pytest.warns(UserWarning, match="no out-of-bag prediction"):
            got = est.predict_interval(X[60:], alpha=alpha)
        want = brute_jackknife_plus(est, X[:60], Y[:60], X[60:], alpha)
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=0, atol=1e-12)
        assert got.shape == ((30, 2) if n_outputs == 1 else (30, 2, 2))
    if n_outputs == 2:  # every method and the standard errors, output by output
        with pytest.warns(UserWarning, match="no out-of-bag prediction"):
            assert est.predict_interval(X[60:], method="conformal").shape == (30, 2, 2)
        assert est.predict_interval(X[60:], method="quantile").shape == (30, 2, 2)
        se = est.predict_se(X[60:])
        want = np.column_stack([brute_ij_u(est, X[60:], j) for j in range(2)])
        np.testing.assert_allclose(se**2, np.maximum(want, 0), rtol=1e-10, atol=1e-14)


def test_ranks_are_exact_for_the_alpha_written():
    # Float arithmetic gives ceil((1 - 0.45) * 100) = ceil(55.00000000000001) = 56, and the
    # float 0.3's binary value (below 3/10) would give floor(0.3 * 10) = 2.
    assert _intervals.upper_rank(0.45, 99) == 55 and _intervals.lower_rank(0.45, 99) == 45
    assert _intervals.lower_rank(0.3, 9) == 3 and _intervals.upper_rank(0.3, 9) == 7
    assert _intervals.lower_rank(0.1, 99) == 10 and _intervals.upper_rank(0.1, 99) == 90
    assert _intervals.lower_rank(0.1, 8) == 0  # no lower bound from 8 rows at 10 %


def test_rank_out_of_range_gives_an_unbounded_side():
    # With 40 rows, alpha = 0.02 asks for the 0th smallest (no lower bound) and the 41st
    # (no upper bound): the interval is the whole line, as the theory says.
    X, y = data(60)
    est = fi.RandomForestRegressor(n_estimators=30, random_state=0, store_leaf_values=True)
    est.fit(X[:40], y[:40])
    for method in ("jackknife+", "conformal"):
        band = est.predict_interval(X[40:], alpha=0.02, method=method)
        assert np.all(band[:, 0] == -np.inf) and np.all(band[:, 1] == np.inf), method


def test_conformal_is_the_prediction_plus_the_oob_residual_quantile():
    X, y = data(200)
    est = fi.RandomForestRegressor(
        n_estimators=40, random_state=0, oob_score=True, store_leaf_values=True
    ).fit(X[:150], y[:150])
    residuals = np.sort(np.abs(y[:150] - est.oob_prediction_))  # scikit-learn's attribute
    half = residuals[math.ceil(0.9 * 151) - 1]  # the 136th smallest of 150
    got = est.predict_interval(X[150:], alpha=0.1, method="conformal")
    mean = est.predict(X[150:])
    np.testing.assert_allclose(got, np.column_stack([mean - half, mean + half]), atol=1e-12)


def test_quantile_method_is_the_central_band_of_the_quantile_forest():
    X, y = data(200)
    est = fi.ExtraTreesRegressor(n_estimators=20, random_state=0, store_leaf_values=True)
    est.fit(X[:150], y[:150])
    got = est.predict_interval(X[150:], alpha=0.2, method="quantile")
    assert np.array_equal(got, est.predict_quantiles(X[150:], [0.1, 0.9]))


def test_90_percent_intervals_cover_held_out_rows():
    X, y = data(3000, seed=3)
    est = fi.RandomForestRegressor(
        n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=2, store_leaf_values=True
    ).fit(X[:1000], y[:1000])
    for method in ("jackknife+", "conformal", "quantile"):
        band = est.predict_interval(X[1000:], alpha=0.1, method=method)
        inside = (y[1000:] >= band[:, 0]) & (y[1000:] <= band[:, 1])
        assert 0.85 <= inside.mean() <= 0.96, (method, inside.mean())


@pytest.mark.parametrize(
    "make",
    [
        lambda: fi.RandomForestRegressor(n_estimators=12, random_state=0),
        # Subsamples without replacement: the estimate is inflated by (n / (n - s))^2.
        lambda: fi.RandomPatchesRegressor(
            n_estimators=12, max_samples=0.5, max_features=1.0, random_state=0
        ),
    ],
)
def test_ij_u_is_the_brute_force_formula_both_ways(make, monkeypatch):
    X, y = data(120)
    est = make().fit(X[:80], y[:80])
    want = brute_ij_u(est, X[80:])
    assert (want < 0).any() and (want > 0).any()  # 12 trees: some are clipped
    got = est.predict_se(X[80:])
    np.testing.assert_allclose(got**2, np.maximum(want, 0), rtol=1e-10, atol=1e-14)
    # The direct product over parts of the training rows instead of the trees' Gram matrix.
    monkeypatch.setattr(_intervals, "BUDGET", 8 * 100)
    direct = _intervals.InfinitesimalJackknife(counts_of(est), len(X) - 80)
    assert direct.gram is None and sum(1 for _ in direct.parts()) > 1
    np.testing.assert_allclose(est.predict_se(X[80:]), got, rtol=1e-10, atol=1e-14)


R_SCRIPT = r"""
suppressMessages(library(ranger))
args <- commandArgs(TRUE)
pred <- as.matrix(read.csv(args[1], header = FALSE))
inbag <- as.matrix(read.csv(args[2], header = FALSE))
write.csv(ranger:::rInfJack(pred, inbag, calibrate = FALSE)$var.hat, args[3], row.names = FALSE)
set.seed(1)
x <- matrix(runif(200 * 3), 200)
d <- data.frame(x, y = 2 * x[, 1] + x[, 1] * rnorm(200))
for (replace in c(TRUE, FALSE)) {
  f <- ranger(y ~ ., d, num.trees = 300, keep.inbag = TRUE, seed = 1, num.threads = 1,
              replace = replace, sample.fraction = if (replace) 1 else 0.5)
  se <- suppressWarnings(predict(f, d[1:15, ], type = "se")$se)  # <= 20 rows: uncalibrated
  all <- predict(f, d[1:15, ], predict.all = TRUE)$predictions
  tag <- if (replace) "boot" else "sub"
  write.csv(cbind(se, all), paste0(args[4], tag, "_pred.csv"), row.names = FALSE)
  write.csv(simplify2array(f$inbag.counts), paste0(args[4], tag, "_inbag.csv"), row.names = FALSE)
}
"""


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R with ranger")
def test_ij_u_is_rangers_infjack(tmp_path):
    # ranger's own code twice: rInfJack(calibrate = FALSE) on our forest's predictions and
    # draws, and our formula on ranger's forests against predict(type = "se") (15 rows:
    # ranger calibrates from 21), with and without replacement.
    X, y = data(120)
    est = fi.RandomForestRegressor(n_estimators=50, random_state=0).fit(X[:80], y[:80])
    preds = _core.tree_predictions(est.forest_, X[80:])[:, :, 0]
    np.savetxt(tmp_path / "p.csv", preds, delimiter=",")
    np.savetxt(tmp_path / "n.csv", counts_of(est).T, delimiter=",", fmt="%d")
    script = tmp_path / "ij.R"
    script.write_text(R_SCRIPT)
    paths = [tmp_path / "p.csv", tmp_path / "n.csv", tmp_path / "v.csv", f"{tmp_path}/"]
    done = subprocess.run(["Rscript", str(script), *map(str, paths)], capture_output=True)
    if done.returncode != 0 and b"ranger" in done.stderr and b"library" in done.stderr:
        pytest.skip("R has no ranger")
    assert done.returncode == 0, done.stderr.decode()
    ranger_var = np.loadtxt(tmp_path / "v.csv", skiprows=1)
    ours = _intervals.InfinitesimalJackknife(counts_of(est), len(preds)).variance(preds)
    np.testing.assert_allclose(ours, ranger_var, rtol=1e-9, atol=1e-14)
    for tag in ("boot", "sub"):
        table = np.genfromtxt(tmp_path / f"{tag}_pred.csv", delimiter=",", skip_header=1)
        inbag = np.loadtxt(tmp_path / f"{tag}_inbag.csv", delimiter=",", skiprows=1)
        var = _intervals.InfinitesimalJackknife(inbag.T, 15).variance(table[:, 1:])
        positive = var > 0  # ranger's se is NaN elsewhere (the square root of a negative)
        assert positive.sum() >= 10
        np.testing.assert_allclose(np.sqrt(var[positive]), table[positive, 0], rtol=1e-9)


def test_ij_variance_is_the_size_of_the_variance_over_new_training_sets():
    # The forest's variance over 20 fresh training samples from the same law, next to the
    # IJ-U estimate from one forest: loosely the same size (Wager et al.'s Fig. 2). Over
    # six seeds of the one forest the ratio of the means was 0.66-1.03.
    probe = np.random.default_rng(9).random((40, 3))
    refits = []
    for seed in range(20):
        X, y = data(300, seed=100 + seed)
        est = fi.RandomForestRegressor(n_estimators=300, min_samples_leaf=5, random_state=seed)
        refits.append(est.fit(X, y).predict(probe))
    X, y = data(300, seed=7)
    est = fi.RandomForestRegressor(n_estimators=300, min_samples_leaf=5, random_state=0)
    ij = est.fit(X, y).predict_se(probe) ** 2
    ratio = ij.mean() / np.var(refits, axis=0, ddof=1).mean()
    assert 1 / 3 < ratio < 3, ratio


def test_results_do_not_depend_on_n_jobs_pickles_blocks_or_sparse_input(monkeypatch):
    X, y = data(200)
    kw = dict(n_estimators=20, random_state=0, store_leaf_values=True)
    one = fi.RandomForestRegressor(**kw, n_jobs=1).fit(X[:150], y[:150])
    three = fi.RandomForestRegressor(**kw, n_jobs=3).fit(X[:150], y[:150])
    probe = X[150:]
    for method in ("jackknife+", "conformal", "quantile"):
        want = one.predict_interval(probe, method=method)
        assert np.array_equal(three.predict_interval(probe, method=method), want), method
    assert np.array_equal(three.predict_se(probe), one.predict_se(probe))
    again = pickle.loads(pickle.dumps(one))  # the draws and out-of-bag rows come back
    assert np.array_equal(again.predict_interval(probe), one.predict_interval(probe))
    assert np.array_equal(again.predict_se(probe), one.predict_se(probe))
    # Blocks of a few rows, of C, Fortran or sparse X: the bounds of one block.
    sparse_probe = sp.csr_matrix(np.where(probe > 0.5, probe, 0.0))
    for X_ in (probe, np.asfortranarray(probe), sparse_probe):
        dense = X_.toarray() if sp.issparse(X_) else np.ascontiguousarray(X_)
        jab, se = one.predict_interval(dense), one.predict_se(dense)
        with monkeypatch.context() as m:
            m.setattr(_intervals, "BUDGET", 8 * 2000)
            np.testing.assert_allclose(one.predict_interval(X_), jab, rtol=0, atol=1e-12)
            np.testing.assert_allclose(one.predict_se(X_), se, rtol=1e-12, atol=1e-14)


def test_bad_requests_are_typed_errors():
    X, y = data(100)
    est = fi.RandomForestRegressor(n_estimators=5, random_state=0, store_leaf_values=True)
    est.fit(X, y)
    for bad in (0, 1, 0.0, 1.0, -0.1, 1.5, float("nan"), "0.1", True, None, [0.1]):
        with pytest.raises(InvalidParameterError, match="alpha"):
            est.predict_interval(X, alpha=bad)
    for bad in ("jackknife", "cqr", None, 1):
        with pytest.raises(InvalidParameterError, match="method"):
            est.predict_interval(X, method=bad)
    plain = fi.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    for method in ("jackknife+", "conformal", "quantile"):
        with pytest.raises(InvalidParameterError, match="store_leaf_values=True"):
            plain.predict_interval(X, method=method)
    assert plain.predict_se(X).shape == (100,)  # the draws are enough
    # Extra-Trees grow every tree on every row: no out-of-bag row, no jackknife.
    whole = fi.ExtraTreesRegressor(n_estimators=5, random_state=0, store_leaf_values=True)
    whole.fit(X, y)
    for call in (
        lambda: whole.predict_interval(X, method="jackknife+"),
        lambda: whole.predict_interval(X, method="conformal"),
        lambda: whole.predict_se(X),
    ):
        with pytest.raises(InvalidParameterError, match="bootstrap=True"):
            call()
    assert whole.predict_interval(X, method="quantile").shape == (100, 2)
    # A warm start on other data assembles trees grown apart: no common training set (nor
    # leaf values, which such a fit refuses).
    plain.set_params(warm_start=True, n_estimators=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain.fit(X[:50], y[:50])
    with pytest.raises(InvalidParameterError, match="assembled"):
        plain.predict_se(X)
    for cls in (fi.RandomForestClassifier, fi.ExtraTreesClassifier):
        assert not hasattr(cls(), "predict_interval") and not hasattr(cls(), "predict_se")


def test_plot_intervals_draws_the_band_and_the_share_inside(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from forestimp.plotting import plot_intervals

    x = np.linspace(0, 1, 50)
    bounds = np.column_stack([x - 0.1, x + 0.1])
    bounds[0] = [-np.inf, np.inf]  # left out of the band, still a row inside
    y = x.copy()
    y[5::10] += 1.0  # 5 rows outside
    ax = plot_intervals(x, bounds, y, prediction=x, path=str(tmp_path / "band.png"))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "inside (90.0%)" in labels and (tmp_path / "band.png").stat().st_size > 0
    with pytest.raises(ValueError, match="shape"):
        plot_intervals(x, bounds[:, :1])
    plt.close("all")
