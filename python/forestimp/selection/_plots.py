"""What each selector draws with ``selector.plot()`` (matplotlib):

* :class:`SelectFromImportance`: the importances against the threshold;
* :class:`Boruta`: each feature's importances over the iterations against the band of the
  shadow threshold (R Boruta's ``plot``);
* :class:`RFE`: the score along the elimination path, with the chosen subset;
* :class:`SequentialRandomSubspace`: the found set growing over the iterations (and its F1
  against a known truth).

Each takes ``groups=``, the encoded columns of each source column (a text column one-hot
encoded into several, as ``forestimp select`` does): the counts in the titles and axes are
then of source columns, a group counted when any of its columns is, as the command's table
counts them; the encoded counts follow in parentheses where they differ.

Each selector class names its drawing (``BaseSelector._draw``) and ``selector.plot()`` calls
it; this module reads the fitted attributes it is given and imports no selector class, so it
sits below all of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..importance._result import feature_names_of
from ..plotting import new_axes

KEPT, TENTATIVE, DROPPED, BAND = "#55A868", "#CCB974", "#C44E52", "#4C72B0"


def feature_names(selector: Any) -> list[str]:
    """The selector's column names as text (``x<j>`` when it was fitted without any)."""
    return [str(n) for n in feature_names_of(selector, selector.n_features_in_)]


def count_sources(columns: Any, groups: list[np.ndarray] | None) -> int:
    """The source columns among ``columns`` (indices or a mask); each column alone without
    ``groups``."""
    columns = np.asarray(columns)
    if columns.dtype == bool:
        columns = np.flatnonzero(columns)
    if groups is None:
        return len(columns)
    chosen = set(columns.tolist())
    return sum(any(int(j) in chosen for j in g) for g in groups)


def _counted(columns: Any, groups: list[np.ndarray] | None) -> str:
    """``"3"``, or ``"3 (4 encoded)"`` when the source and encoded counts differ."""
    columns = np.asarray(columns)
    encoded = int(columns.sum()) if columns.dtype == bool else len(columns)
    sources = count_sources(columns, groups)
    return str(sources) if sources == encoded else f"{sources} ({encoded} encoded)"


def _statuses(selector: Any, groups: list[np.ndarray] | None) -> tuple[np.ndarray, ...]:
    """Boruta's confirmed and tentative masks, by source column when ``groups`` is given:
    a group takes the status of its best-ranked column."""
    confirmed, tentative = selector.support_, selector.support_weak_
    if groups is None:
        return confirmed, tentative
    best = [g[np.argmin(selector.ranking_[g])] for g in groups]
    return confirmed[best], tentative[best] & ~confirmed[best]


def _top(selector: Any, max_features: int | None) -> np.ndarray:
    """Column indices by ``ranking_``, at most ``max_features`` of them."""
    return np.argsort(selector.ranking_, kind="stable")[:max_features]


def threshold_bars(
    selector: Any, ax: Any = None, *, max_features: int | None = 30, groups: Any = None
) -> Any:
    """Horizontal bars of the importances (kept green, dropped red) and the threshold line;
    with the probe threshold, the best probe is the line."""
    cols = _top(selector, max_features)[::-1]
    names = feature_names(selector)
    ax = ax if ax is not None else new_axes((6.4, 0.3 * len(cols) + 1.4))
    colors = [KEPT if selector.support_[j] else DROPPED for j in cols]
    ax.barh(np.arange(len(cols)), selector.importances_[cols], color=colors)
    ax.set_yticks(np.arange(len(cols)), [names[j] for j in cols])
    probe = len(selector.probe_importances_) > 0
    label = "best of the probes" if probe else f"threshold ({selector.threshold})"
    ax.axvline(selector.threshold_, color=BAND, linestyle="--", label=label)
    ax.set_xlabel(f"importance ({selector.importance})")
    total = len(groups) if groups is not None else len(selector.support_)
    ax.set_title(f"SelectFromImportance: {_counted(selector.support_, groups)} of {total} "
                 "columns kept")  # fmt: skip
    ax.legend(loc="lower right")
    return ax


def boruta_boxes(
    selector: Any, ax: Any = None, *, max_features: int | None = 30, groups: Any = None
) -> Any:
    """One box per feature over the iterations it took part in (green confirmed, yellow
    tentative, red rejected), the shadow threshold's range shaded and its median dashed."""
    cols = _top(selector, max_features)
    history = selector.importance_history_
    cols = cols[np.argsort([np.nanmedian(history[:, j]) for j in cols], kind="stable")]
    names = feature_names(selector)
    ax = ax if ax is not None else new_axes((6.4, 0.3 * len(cols) + 1.4))
    data = [history[~np.isnan(history[:, j]), j] for j in cols]
    boxes = ax.boxplot(data, orientation="horizontal", patch_artist=True, widths=0.6,
                       medianprops={"color": "black"})  # fmt: skip
    for patch, j in zip(boxes["boxes"], cols, strict=True):
        weak = selector.support_weak_[j]
        patch.set_facecolor(KEPT if selector.support_[j] else TENTATIVE if weak else DROPPED)
    ax.set_yticks(np.arange(1, len(cols) + 1), [names[j] for j in cols])
    shadow = np.array([s.shadow_threshold for s in selector.history_])
    ax.axvspan(shadow.min(), shadow.max(), color=BAND, alpha=0.2, label="shadow threshold")
    ax.axvline(np.median(shadow), color=BAND, linestyle="--")
    confirmed, tentative = _statuses(selector, groups)
    levels = ""
    if groups is not None and len(groups) != len(selector.support_):
        n_conf, n_tent = int(selector.support_.sum()), int(selector.support_weak_.sum())
        levels = f"\n(encoded: {n_conf} confirmed, {n_tent} tentative of {len(selector.support_)})"
    ax.set_title(
        f"Boruta, {selector.n_iter_} iterations: {int(confirmed.sum())} confirmed, "
        f"{int(tentative.sum())} tentative of {len(confirmed)} columns{levels}"
    )
    ax.set_xlabel(f"importance ({selector.importance})")
    ax.legend(loc="lower right")
    return ax


def rfe_path(selector: Any, ax: Any = None, *, groups: Any = None) -> Any:
    """The score of each step against its number of columns (± its spread), the best step
    and the chosen one (the fewest columns within ``alpha`` spreads of the best)."""
    res = selector.cv_results_
    scores, stds = res["mean_test_score"], res["std_test_score"]
    sizes = np.array([count_sources(step.features, groups) for step in selector.history_])
    ax = ax if ax is not None else new_axes((6.4, 4.0))
    ax.errorbar(sizes, scores, yerr=np.nan_to_num(stds), marker="o", ms=3, color=BAND,
                capsize=2)  # fmt: skip
    best = int(np.argmax(scores))
    chosen = int(np.flatnonzero(res["n_features"] == selector.n_features_)[0])
    ax.plot(sizes[best], scores[best], "s", color=TENTATIVE, ms=9, label="best score")
    ax.plot(sizes[chosen], scores[chosen], "*", color=KEPT, ms=14,
            label=f"chosen: {_counted(selector.support_, groups)} columns")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("columns kept" + (" (a one-hot encoded column counts once)" if groups else ""))
    scoring = "out-of-bag" if selector.cv is None and selector.scoring == "oob" else "CV"
    ax.set_ylabel(f"{scoring} score")
    ax.set_title(f"RFE path, alpha = {selector.alpha} ({selector.alpha_std} std)")
    ax.legend(loc="lower right")
    return ax


def srs_trace(selector: Any, ax: Any = None, *, groups: Any = None) -> Any:
    """The size of the found set after each iteration; F1 against the truth on a second
    axis when ``fit`` was given one."""
    trace = selector.history_
    it = np.arange(1, len(trace) + 1)
    ax = ax if ax is not None else new_axes((6.4, 4.0))
    found = [s.n_found if groups is None else count_sources(s.kept, groups) for s in trace]
    ax.step(it, found, where="post", color=BAND, label="|F| found")
    ax.set_xlabel("iteration")
    ax.set_ylabel("columns found", color=BAND)
    f1 = np.array([s.f1 for s in trace])
    if np.isfinite(f1).any():
        twin = ax.twinx()
        twin.plot(it, f1, color=KEPT)
        twin.set_ylim(0, 1.02)
        twin.set_ylabel("F1 against the truth", color=KEPT)
    ax.set_title(f"Sequential Random Subspace, q = {len(trace[0].features) if trace else 0}")
    return ax
