"""Fit times of the criteria and parameters of issue #22 item 6, and the A/B of the
unchanged paths.

``python benches/bench_criteria.py ab`` fits the squared-error and Gini forests once (n_jobs=1,
for a CPU-time A/B of two builds under ``farm-bench``); ``python benches/bench_criteria.py
peers`` times Poisson and ``ccp_alpha`` fits against scikit-learn on the same data (best of 3,
n_jobs=1) and prints the ratios; ``python benches/bench_criteria.py monotonic`` does the same for
``monotonic_cst`` (and the unconstrained fits, for reference); ``python benches/bench_criteria.py
mae`` times ``criterion="absolute_error"`` forests of 100 trees on ``make_regression(5000, 20)``
against scikit-learn (best of 2, n_jobs=1); ``mae-more`` the same with ``monotonic_cst`` and
with 3 outputs (20 trees).
"""

from __future__ import annotations

import sys
import time

import numpy as np


def _data(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, p)).astype(np.float32)
    signal = 2 * X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3]
    y = signal + 0.3 * rng.standard_normal(n)
    counts = rng.poisson(np.exp(signal)).astype(np.float64)
    return X, y, counts


def ab() -> None:
    import forestimp as fi

    X, y, _ = _data(20_000, 20)
    yc = (y > np.median(y)).astype(int)
    fi.RandomForestClassifier(30, n_jobs=1, random_state=0).fit(X, yc)
    fi.RandomForestRegressor(20, max_features=0.3, n_jobs=1, random_state=0).fit(X, y)
    fi.ExtraTreesRegressor(30, n_jobs=1, random_state=0).fit(X, y)
    fi.RandomForestRegressor(30, splitter="hist", n_jobs=1, random_state=0).fit(X, y)


def _best_of(make, X, y, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        make().fit(X, y)
        best = min(best, time.process_time() - t)
    return best


def peers() -> None:
    from sklearn import ensemble as sk

    import forestimp as fi

    X, y, counts = _data(20_000, 20)
    cases = [
        ("RF poisson", "RandomForestRegressor", dict(criterion="poisson"), counts),
        ("ET poisson", "ExtraTreesRegressor", dict(criterion="poisson"), counts),
        ("RF squared_error", "RandomForestRegressor", {}, y),
        ("RF ccp_alpha=1e-4", "RandomForestRegressor", dict(ccp_alpha=1e-4), y),
        ("ET ccp_alpha=1e-4", "ExtraTreesRegressor", dict(ccp_alpha=1e-4), y),
    ]
    print(f"{'case':24s} {'forestimp s':>12s} {'sklearn s':>10s} {'ratio':>6s}")
    for name, cls, kw, target in cases:
        params = dict(n_estimators=20, max_features=0.3, n_jobs=1, random_state=0, **kw)
        ours = _best_of(lambda cls=cls, p=params: getattr(fi, cls)(**p), X, target)
        theirs = _best_of(lambda cls=cls, p=params: getattr(sk, cls)(**p), X, target)
        print(f"{name:24s} {ours:12.3f} {theirs:10.3f} {ours / theirs:6.2f}")


def monotonic() -> None:
    from sklearn import ensemble as sk

    import forestimp as fi

    X, y, _ = _data(20_000, 20)
    yc = (y > np.median(y)).astype(int)
    # The signal increases in x0 and x2, decreases in x1; the 17 others are free.
    cst = [1, -1, 1] + [0] * 17
    cases = [
        ("RF regression", "RandomForestRegressor", y),
        ("ET regression", "ExtraTreesRegressor", y),
        ("RF binary", "RandomForestClassifier", yc),
        ("ET binary", "ExtraTreesClassifier", yc),
    ]
    print(f"{'case':28s} {'forestimp s':>12s} {'sklearn s':>10s} {'ratio':>6s}")
    for name, cls, target in cases:
        for label, kw in [("free", {}), ("monotonic_cst", dict(monotonic_cst=cst))]:
            params = dict(n_estimators=20, max_features=0.3, n_jobs=1, random_state=0, **kw)
            ours = _best_of(lambda cls=cls, p=params: getattr(fi, cls)(**p), X, target)
            theirs = _best_of(lambda cls=cls, p=params: getattr(sk, cls)(**p), X, target)
            print(f"{name + ' ' + label:28s} {ours:12.3f} {theirs:10.3f} {ours / theirs:6.2f}")


def mae() -> None:
    from sklearn import ensemble as sk
    from sklearn.datasets import make_regression

    import forestimp as fi

    X, y = make_regression(5000, 20, noise=1.0, random_state=0)
    X = X.astype(np.float32)
    print(f"{'case':24s} {'forestimp s':>12s} {'sklearn s':>10s} {'ratio':>6s}")
    for name, cls in [
        ("RF absolute_error", "RandomForestRegressor"),
        ("ET absolute_error", "ExtraTreesRegressor"),
    ]:
        params = dict(n_estimators=100, criterion="absolute_error", n_jobs=1, random_state=0)
        ours = _best_of(lambda cls=cls, p=params: getattr(fi, cls)(**p), X, y, repeat=2)
        theirs = _best_of(lambda cls=cls, p=params: getattr(sk, cls)(**p), X, y, repeat=2)
        print(f"{name:24s} {ours:12.3f} {theirs:10.3f} {ours / theirs:6.2f}", flush=True)


def mae_more() -> None:
    """``criterion="absolute_error"`` with ``monotonic_cst`` and with 3 outputs, against
    scikit-learn: 20 trees on ``make_regression(5000, 20)``, best of 2, n_jobs=1."""
    from sklearn import ensemble as sk
    from sklearn.datasets import make_regression

    import forestimp as fi

    X, y = make_regression(5000, 20, noise=1.0, random_state=0)
    X = X.astype(np.float32)
    Y = np.column_stack([y, np.abs(y), X[:, 0] * 3 - y / 50])
    cst = [1, -1] + [0] * 18
    print(f"{'case':30s} {'forestimp s':>12s} {'sklearn s':>10s} {'ratio':>6s}")
    for name, cls, extra, target in [
        ("RF absolute_error cst", "RandomForestRegressor", dict(monotonic_cst=cst), y),
        ("ET absolute_error cst", "ExtraTreesRegressor", dict(monotonic_cst=cst), y),
        ("RF absolute_error 3 outputs", "RandomForestRegressor", {}, Y),
        ("ET absolute_error 3 outputs", "ExtraTreesRegressor", {}, Y),
    ]:
        params = dict(n_estimators=20, criterion="absolute_error", n_jobs=1, random_state=0)
        params |= extra
        ours = _best_of(lambda c=cls, p=params: getattr(fi, c)(**p), X, target, repeat=2)
        theirs = _best_of(lambda c=cls, p=params: getattr(sk, c)(**p), X, target, repeat=2)
        print(f"{name:30s} {ours:12.3f} {theirs:10.3f} {ours / theirs:6.2f}", flush=True)


if __name__ == "__main__":
    modes = {
        "ab": ab,
        "peers": peers,
        "monotonic": monotonic,
        "mae": mae,
        "mae-more": mae_more,
    }
    modes[sys.argv[1] if len(sys.argv) > 1 else "peers"]()
