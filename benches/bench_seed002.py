"""Random forests against gradient boosting as feature rankers: seed 002's experiment.

Alonso Liso (2016, part B of ``shared/research/seed000-002-sutera-msc-alonso-msc.md``,
§B.2.2) ranks the inputs of a real regression table by the MDI of a random forest (RFR) and of
gradient boosting (GBR), prunes them with RFE at 10 % of the features per step, and studies how
stable each ranking is under the learners' random state (the swap counts of its §B.3). This
benchmark reproduces that shape on tables a package ships (nothing is downloaded):

* ``diabetes``: scikit-learn's ``load_diabetes`` (442 x 10, regression of disease progression);
* ``randhie``: statsmodels' RAND Health Insurance Experiment (20 190 x 9, regression of
  ``mdvis``; the table of ``bench_real_tables.py``).

Models use the thesis's tuned parameters for Bike Sharing (its Table 4.2.1): RFR
``n_estimators=200, max_depth=10, max_features=0.5, min_samples_split=4, min_samples_leaf=2``;
GBR ``loss="squared_error", n_estimators=200, max_depth=4, max_features=0.5,
min_samples_split=8, min_samples_leaf=2``. scikit-learn's ``GradientBoostingRegressor`` runs
beside forestimp's with the same parameters and seeds, as the peer.

Printed, per table:

1. mean normalized MDI of each column over the seeds, for forestimp RF, forestimp GB and
   scikit-learn GB, with each column's rank (1 = most important); the Kendall tau between the
   mean rankings, and which columns the two forestimp rankings place differently;
2. stability over ``--seeds`` random states: for each model, the minimum number of adjacent
   swaps between two seeds' rankings (Kendall distance), and the thesis's position-weighted
   Metric1 = sum_j [p(j) != j] / 2^(p(j)+j) and Metric2 = sum_j |p(j) - j| / 2^(p(j)+j), where
   ``p`` maps positions of one ranking to the other, averaged over all pairs of seeds;
3. the RFE path at 10 % per step (``forestimp.selection.RFE(step=0.1)``, shuffled 5-fold CV,
   seed 0): the columns dropped at each step and the cross-validated R^2 of each subset, RF
   beside GB;
4. fit times (median over the seeds) of forestimp GB over scikit-learn GB.

Run: ``python benches/bench_seed002.py [--tables diabetes,randhie] [--seeds 20]``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from scipy.stats import kendalltau
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor as SkGBR
from sklearn.model_selection import KFold

import forestimp
from forestimp.selection import RFE

RF_PARAMS = dict(
    n_estimators=200, max_depth=10, max_features=0.5, min_samples_split=4, min_samples_leaf=2
)
GB_PARAMS = dict(
    loss="squared_error",
    n_estimators=200,
    max_depth=4,
    max_features=0.5,
    min_samples_split=8,
    min_samples_leaf=2,
)


def load_table(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Columns, target and column names of a shipped table."""
    if name == "diabetes":
        d = load_diabetes()
        return d.data, d.target, list(d.feature_names)
    if name == "randhie":
        import statsmodels.api as sm

        frame = sm.datasets.randhie.load_pandas()
        return (
            frame.exog.to_numpy(np.float64),
            frame.endog.to_numpy(np.float64),
            list(frame.exog.columns),
        )
    raise SystemExit(f"unknown table {name!r}: diabetes or randhie")


def models(seed: int) -> dict[str, object]:
    """The three rankers of the study, seeded."""
    return {
        "forestimp RF": forestimp.RandomForestRegressor(**RF_PARAMS, random_state=seed, n_jobs=2),
        "forestimp GB": forestimp.GradientBoostingRegressor(**GB_PARAMS, random_state=seed),
        "sklearn GB": SkGBR(**GB_PARAMS, random_state=seed),
    }


def ranking(importances: np.ndarray) -> np.ndarray:
    """Columns from most to least important (ties by column index, stable)."""
    return np.argsort(-importances, kind="stable")


def swaps(a: np.ndarray, b: np.ndarray) -> int:
    """Minimum number of adjacent swaps turning ranking ``a`` into ``b`` (Kendall distance)."""
    pos = np.empty_like(b)
    pos[b] = np.arange(len(b))
    seq = pos[a]
    return int(sum(seq[i] > seq[j] for i, j in itertools.combinations(range(len(seq)), 2)))


def position_metrics(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The thesis's Metric1 and Metric2 between two rankings (§B.3 of the digest)."""
    pos = np.empty_like(b)
    pos[b] = np.arange(len(b))
    p = pos[a]  # position in b of the column at position j of a
    j = np.arange(len(a))
    weight = 2.0 ** -(p + j).astype(np.float64)
    return float(np.sum((p != j) * weight)), float(np.sum(np.abs(p - j) * weight))


def stability(rankings: list[np.ndarray]) -> tuple[float, int, float, float]:
    """Mean and max swaps, mean Metric1 and Metric2 over all pairs of seeds."""
    pairs = list(itertools.combinations(rankings, 2))
    s = [swaps(a, b) for a, b in pairs]
    m = [position_metrics(a, b) for a, b in pairs]
    return (
        float(np.mean(s)),
        int(np.max(s)),
        float(np.mean([x[0] for x in m])),
        float(np.mean([x[1] for x in m])),
    )


def study(name: str, n_seeds: int) -> None:
    X, y, cols = load_table(name)
    n, p = X.shape
    print(f"\n## {name}: {n} x {p}, {n_seeds} seeds\n")
    imps: dict[str, list[np.ndarray]] = {}
    times: dict[str, list[float]] = {}
    for seed in range(n_seeds):
        for label, est in models(seed).items():
            t0 = time.perf_counter()
            est.fit(X, y)  # type: ignore[attr-defined]
            times.setdefault(label, []).append(time.perf_counter() - t0)
            imps.setdefault(label, []).append(np.asarray(est.feature_importances_))  # type: ignore[attr-defined]

    means = {label: np.mean(v, axis=0) for label, v in imps.items()}
    ranks = {label: np.argsort(ranking(m)) + 1 for label, m in means.items()}
    labels = list(means)
    print("| column | " + " | ".join(f"{lab} MDI (rank)" for lab in labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for c in ranking(means["forestimp RF"]):
        cells = " | ".join(f"{means[lab][c]:.4f} ({ranks[lab][c]})" for lab in labels)
        print(f"| {cols[c]} | {cells} |")
    for a, b in [("forestimp RF", "forestimp GB"), ("forestimp GB", "sklearn GB")]:
        tau = kendalltau(ranks[a], ranks[b]).statistic
        moved = [
            f"{cols[c]} {ranks[a][c]}->{ranks[b][c]}"
            for c in range(p)
            if ranks[a][c] != ranks[b][c]
        ]
        print(
            f"\nKendall tau, {a} vs {b}: {tau:.3f}; "
            f"placed differently: {', '.join(moved) or 'none'}"
        )

    print("\n| model | mean swaps | max swaps | Metric1 | Metric2 |")
    print("|---|---:|---:|---:|---:|")
    for label in labels:
        mean_s, max_s, m1, m2 = stability([ranking(v) for v in imps[label]])
        print(f"| {label} | {mean_s:.2f} | {max_s} | {m1:.3f} | {m2:.3f} |")

    print("\nRFE at 10 % per step, shuffled 5-fold CV R^2 of each subset (seed 0):\n")
    paths = {}
    for label in ("forestimp RF", "forestimp GB"):
        cv = KFold(5, shuffle=True, random_state=0)  # randhie's rows are ordered
        rfe = RFE(models(0)[label], step=0.1, scoring=None, cv=cv, random_state=0).fit(X, y)
        paths[label] = rfe.history_
    print("| step | RF: columns | RF dropped | RF R^2 | GB: columns | GB dropped | GB R^2 |")
    print("|---:|---:|---|---:|---:|---|---:|")
    for k, (a, b) in enumerate(itertools.zip_longest(paths["forestimp RF"], paths["forestimp GB"])):
        cells = []
        for step in (a, b):
            if step is None:
                cells += ["", "", ""]
            else:
                dropped = ", ".join(cols[c] for c in step.dropped)
                cells += [str(step.n_features), dropped, f"{step.score:.4f} ± {step.score_std:.4f}"]
        print(f"| {k} | " + " | ".join(cells) + " |")

    fi, sk = np.median(times["forestimp GB"]), np.median(times["sklearn GB"])
    rf = np.median(times["forestimp RF"])
    print(
        f"\nFit, median over seeds: forestimp GB {fi:.3f} s, scikit-learn GB {sk:.3f} s "
        f"(ratio {fi / sk:.2f}); forestimp RF {rf:.3f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", default="diabetes,randhie")
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args()
    for name in args.tables.split(","):
        study(name, args.seeds)


if __name__ == "__main__":
    main()
