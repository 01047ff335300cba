"""What ``forestimp select`` reports: one row per source column, the summary of the run, the
warnings that say what to raise, and the table, CSV or JSON they are written as.

Every count is of source columns, a text column once: split natively as categories it is one
column; one-hot encoded it is counted once however many levels it became (the levels are
counted in parentheses where they differ). The table, the summary, the plot titles
(``selector.plot(groups=...)``) and the JSON agree.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ._rank import MEASURES
from .selection._plots import count_sources

KEPT = ("kept", "confirmed", "found")
# Each --method of ``forestimp select`` (its choices) and the rule it follows.
METHODS = {
    "boruta": "Boruta, all-relevant: each column against the best of the permuted copies "
    "(shadows) of the columns, binomial tests over the iterations",
    "rfe": "recursive elimination: refit, drop the least important fifth, keep the fewest "
    "columns whose out-of-bag score is within alpha standard errors of the best",
    "threshold": "one forest; keep the columns whose importance reaches the threshold",
    "srs": "Sequential Random Subspace: forests on q columns at a time, the columns found "
    "so far kept in the next subspaces; never more than q columns in memory",
}
# SRS is "still finding" columns when one entered F in the last fifth of its iterations.
LATE_SHARE = 0.2


def encoded_results(selector: Any) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``(status, score, extra columns)`` of each column the selector saw."""
    from .selection import RFE, Boruta, SequentialRandomSubspace

    support = selector.support_
    if isinstance(selector, Boruta):
        status = np.where(support, "confirmed", np.where(selector.support_weak_, "tentative",
                                                         "rejected"))  # fmt: skip
        with np.errstate(all="ignore"):
            score = np.nanmedian(selector.importance_history_, axis=0)
        return status, score, {"hit_rate": selector.hit_rates_}
    if isinstance(selector, SequentialRandomSubspace):
        status = np.where(support, "found", "not found")
        return status, selector.importances_, {"n_draws": selector.n_draws_}
    status = np.where(support, "kept", "dropped")
    if isinstance(selector, RFE):
        score = np.full(len(support), np.nan)
        for step in selector.history_:  # later steps overwrite: the last fit each was in
            score[step.features] = step.scores
        return status, score, {}
    return status, selector.importances_, {}


def source_groups(problem: Any, selector: Any) -> tuple[list[str], list[np.ndarray]]:
    """``(names, encoded columns of each)`` of the source columns; out of core, the file's
    columns as the selector read them, one encoded column each."""
    if problem.names is not None and problem.groups is not None:
        return problem.names, problem.groups
    from .selection._plots import feature_names

    names = feature_names(selector)
    return names, [np.array([j]) for j in range(len(names))]


def source_rows(selector: Any, problem: Any) -> list[dict[str, Any]]:
    """One record per source column, ranked (kept first, by score), best level for groups."""
    status, score, extra = encoded_results(selector)
    names, groups = source_groups(problem, selector)
    order_of = {"confirmed": 0, "kept": 0, "found": 0, "tentative": 1}
    rows = []
    for name, g in zip(names, groups, strict=True):
        best = g[np.argmin(selector.ranking_[g])]
        values = score[g][np.isfinite(score[g])]
        best_score = float(values.max()) if len(values) else None
        key = (order_of.get(status[best], 2), int(selector.ranking_[best]), -(best_score or 0.0))
        row = {
            "feature": name,
            "status": status[best],
            "score": best_score,
            **{k: float(v[best]) for k, v in extra.items()},
            "n_columns": len(g),
            "_key": key,
        }
        rows.append(row)
    rows.sort(key=lambda r: r.pop("_key"))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def known_answer(problem: Any, rows: list[dict[str, Any]], method: str) -> str:
    """How the kept set compares with the built-in problem's relevant columns."""
    assert problem.relevant is not None
    kept = {r["feature"] for r in rows if r["status"] in KEPT}
    relevant = {n for names in problem.relevant.values() for n in names}
    hits = kept & relevant
    parts = [f"{len(kept & set(v))}/{len(v)} {k}" for k, v in problem.relevant.items()]
    precision = len(hits) / len(kept) if kept else float("nan")
    lines = [
        f"known answer: {len(relevant)} relevant columns; kept {', '.join(parts)} and "
        f"{len(kept - relevant)} noise: recall {len(hits) / len(relevant):.2f}, "
        f"precision {precision:.2f}"
    ]
    missed_redundant = set(problem.relevant.get("redundant", [])) - kept
    if method in ("rfe", "threshold") and missed_redundant:
        lines.append(
            "(RFE and thresholds look for a small predictive set: a redundant column, a "
            "combination of informative ones, may be left out at no loss; Boruta and SRS look "
            "for every relevant column)"
        )
    return "\n".join(lines) + "\n"


def _columns(n_sources: int, n_encoded: int) -> str:
    """``"3 columns"``, with the encoded count in parentheses when it differs."""
    word = "column" if n_sources == 1 else "columns"
    return f"{n_sources} {word}" + (f" ({n_encoded} encoded)" if n_encoded != n_sources else "")


def iterations(selector: Any) -> int:
    """The selection's iterations: Boruta's and SRS's forests, RFE's steps, a threshold's one
    fit."""
    for name in ("n_iter_", "n_iterations_"):
        if hasattr(selector, name):
            return int(getattr(selector, name))
    return len(selector.history_)


def measure_line(selector: Any) -> str:
    """The importance measure the selection used, named and explained."""
    from .selection import Boruta

    name = selector.get_params()["importance"]
    scaled = " (as z-scores: over its standard error)" if isinstance(selector, Boruta) else ""
    return f"importance: {name}{scaled}: {MEASURES.get(name, name)}"


def method_line(args: Any, selector: Any, groups: list[np.ndarray] | None) -> str:
    """The method's decision rule in numbers, counted in source columns."""
    if args.method == "threshold":
        return f"threshold {selector.threshold_:.5g} ({selector.threshold} of the importances)"
    if args.method == "boruta":
        return f"{selector.n_iter_} iterations (--max-iter {selector.max_iter}), rule " \
            f"{selector.rule}, alpha {selector.alpha}"  # fmt: skip
    if args.method == "rfe":
        res = selector.cv_results_
        best = int(np.argmax(res["mean_test_score"]))
        chosen = int(np.flatnonzero(res["n_features"] == selector.n_features_)[0])
        steps = selector.history_
        scoring = "out-of-bag" if selector.scoring == "oob" else f"5-fold CV {selector.scoring}"

        def at(step: Any) -> str:
            return _columns(count_sources(step.features, groups), len(step.features))

        return (
            f"path of {len(steps)} steps, {scoring} score {res['mean_test_score'][chosen]:.4f} "
            f"at {at(steps[chosen])} (best {res['mean_test_score'][best]:.4f} at "
            f"{at(steps[best])})"
        )
    q = len(selector.history_[0].features) if selector.history_ else 0
    return (
        f"{selector.n_iterations_} iterations of q = {q} columns; "
        f"{selector.bytes_read_ / 1e6:.1f} MB read"
    )


def summary(args: Any, selector: Any, problem: Any, rows: list[dict[str, Any]],
            quality: Any) -> str:  # fmt: skip
    """What ran on what, the measure, the model's quality and the method's rule."""
    p = selector.n_features_in_
    native = problem.categorical is not None
    categorical = f" ({len(problem.text)} categorical)" if native else ""
    lines = [
        f"{args.method}: {METHODS[args.method]}",
        f"data: {problem.label}, {len(problem.y)} rows, {_columns(len(rows), p)}{categorical}, "
        f"{problem.task} ({problem.reason})",
        measure_line(selector),
    ]
    if quality is not None:
        lines.append(quality.line())
    lines.append(method_line(args, selector, problem.groups))
    return "\n".join(lines) + "\n"


def selection_warnings(args: Any, selector: Any, rows: list[dict[str, Any]],
                       problem: Any) -> list[str]:  # fmt: skip
    """Lines that say the selection is not finished, and what to raise."""
    out = []
    if args.method == "boruta":
        tentative = [r["feature"] for r in rows if r["status"] == "tentative"]
        if tentative:
            shown = ", ".join(tentative[:5]) + (", ..." if len(tentative) > 5 else "")
            n = selector.n_iter_
            out.append(
                f"warning: Boruta ended after {n} iterations with {len(tentative)} tentative "
                f"columns ({shown}), neither confirmed nor rejected: raise --max-iter (e.g. "
                f"--max-iter {max(2 * n, 100)}) to decide them"
            )
    if args.method == "srs":
        out += srs_warnings(selector, problem)
    return out


def srs_warnings(selector: Any, problem: Any) -> list[str]:
    """SRS has not converged: columns never drawn, or columns still being found near the end."""
    _, groups = source_groups(problem, selector)
    n = selector.n_iterations_
    out = []
    drawn = selector.n_draws_ > 0
    never = sum(not drawn[g].any() for g in groups)
    if never:
        out.append(
            f"warning: SRS never drew {never} of {len(groups)} columns in its {n} iterations: "
            f"raise --iterations (e.g. --iterations {2 * n})"
        )
    late = [s.step for s in selector.history_ if len(s.new)]
    tail = max(1, math.ceil(LATE_SHARE * n))
    if n > 1 and late and late[-1] >= n - tail:
        out.append(
            f"warning: SRS was still finding columns at iteration {late[-1] + 1} of {n}: the "
            f"found set may not have converged; raise --iterations (e.g. --iterations {2 * n})"
        )
    return out


def render(fmt: str, args: Any, head: str, rows: list[dict[str, Any]],
           meta: dict[str, Any]) -> str:  # fmt: skip
    """The kept columns (``--all``: every column) as a table, or every column as CSV/JSON."""
    if fmt == "json":
        return json.dumps({**meta, "features": rows}, indent=2) + "\n"
    if fmt == "csv":
        import pandas as pd

        return pd.DataFrame(rows).to_csv(index=False)
    shown = rows if args.all else [r for r in rows if r["status"] in (*KEPT, "tentative")]
    kept = sum(r["status"] in KEPT for r in rows)
    extra = [k for k in ("hit_rate", "n_draws") if rows and k in rows[0]]
    width = max([7] + [len(r["feature"]) for r in shown])
    tentative = sum(r["status"] == "tentative" for r in rows)
    also = f" ({tentative} tentative)" if tentative else ""
    lines = [head.rstrip("\n"), f"kept {kept} of {len(rows)} columns{also}:"]
    lines.append(
        f"{'rank':>4}  {'feature':<{width}}  {'status':<10}  {'score':>10}"
        + "".join(f"  {k:>8}" for k in extra)
    )
    for r in shown:
        score = np.nan if r["score"] is None else r["score"]
        lines.append(
            f"{r['rank']:>4}  {r['feature']:<{width}}  {r['status']:<10}  {score:10.4g}"
            + "".join(f"  {r[k]:8.3g}" for k in extra)
        )
    dropped = [r["feature"] for r in rows if r not in shown]
    if dropped:
        more = ", ... (--all lists them)" if len(dropped) > 8 else ""
        lines.append(f"dropped {len(dropped)}: {', '.join(dropped[:8])}{more}")
    return "\n".join(lines) + "\n"
