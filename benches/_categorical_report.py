"""The Markdown report of ``bench_categorical.py``: the tables, each table's rows, and the
issue's targets (#52) checked row by row."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from _categorical_tables import Split

TOL = 0.005  # the margin against the best peer of the family

# forestimp models: label, family of peers, whether the fit-time target applies
MODELS = {
    "rf": ("RF exact", "ranger RF"),
    "et": ("ET", "ranger ET"),
    "hist": ("RF hist", "ranger RF"),
    "gb-hist": ("GB hist", "boosting"),
    "gb": ("GB exact", "boosting"),
}


# ----------------------------------------------------------------------------- report
def md_row(*cells: Any) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def fmt(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "—"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def print_tables(splits: list[Split]) -> None:
    print("\n## Tables\n")
    md_row(
        "table", "task", "rows (train / test)", "numeric", "categorical (levels)",
        "test rows with an unseen level", "one-hot width", "HGB: ordinal codes",
    )  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for s in splits:
        t = s.table
        levels = ", ".join(f"{c} {s.levels(c)}" for c in t.cats)
        oh = f"{s.width('one-hot')}" if s.onehot_cols else "skipped"
        if s.wide_cols and s.onehot_cols:
            oh += f" ({', '.join(s.wide_cols)} as ordinal codes)"
        hgb = ", ".join(s.hgb_ordinal) or "none"
        n_num = t.X.shape[1] - len(t.cats)
        unseen = f"{100 * s.unseen():.1f} %"
        md_row(t.name, t.task, f"{len(s.train)} / {len(s.test)}", n_num, levels, unseen, oh, hgb)
    print()
    for s in splits:
        print(f"- {s.table.name}: {s.table.source}")


def print_raw(table: str, rows: list[dict[str, Any]]) -> None:
    mine = [r for r in rows if r["table"] == table]
    if not mine:
        return
    metric = "accuracy" if mine[0]["task"] == "classification" else "R²"
    print(f"\n### {table}: held-out {metric} and fit time\n")
    print(f"| library | model | encoding | width | fit s | {metric} | note |")
    print("|---|---|---|---|---|---|---|")
    for r in mine:
        note = r.get("note", "")
        if "cat_cols" in r:
            note = (note + "; " if note else "") + f"{r['cat_cols']} columns categorical"
        print(
            f"| {r['library']} | {r['model']} | {r.get('encoding', '')} | {fmt(r.get('width'))} "
            f"| {fmt(r.get('fit_s'), 2)} | {fmt(r.get('score'))} | {note} |"
        )


def check_targets(rows: list[dict[str, Any]], tables: list[str]) -> list[dict[str, Any]]:
    out = []
    for table in tables:
        mine = [r for r in rows if r["table"] == table]

        def get(
            library: str, model: str, encoding: str | None = None, mine: list = mine
        ) -> dict | None:
            for r in mine:
                if r["library"] == library and r["model"] == model and "fit_s" in r:
                    if encoding is None or r.get("encoding") == encoding:
                        return r
            return None

        for label, family in MODELS.values():
            native = get("forestimp", label, "native")
            encoded = [
                r for e in ("one-hot", "ordinal") if (r := get("forestimp", label, e)) is not None
            ]
            if native is None and not encoded:
                continue
            c: dict[str, Any] = {"table": table, "model": label}
            if native is None:
                c["note"] = "native not yet supported"
                out.append(c)
                continue
            c["native"] = native["score"]
            if encoded:
                best = max(encoded, key=lambda r: r["score"])
                c["best_encoded"], c["best_encoding"] = best["score"], best["encoding"]
                c["vs_encoded"] = native["score"] - best["score"]
                c["ok_encoded"] = c["vs_encoded"] >= 0
            if family == "boosting":
                peers = [
                    r
                    for r in (get("sklearn", "HistGradientBoosting"), get("lightgbm", "LGBM gbdt"))
                    if r
                ]
            else:
                # RF exact and hist: ranger's RF and LightGBM's rf; ET: ranger's ET
                pool = (
                    get("ranger", family),
                    get("lightgbm", "LGBM rf") if "RF" in family else None,
                )
                peers = [r for r in pool if r]
            if peers:
                best_peer = max(peers, key=lambda r: r["score"])
                c["peer"], c["peer_score"] = best_peer["model"], best_peer["score"]
                c["vs_peer"] = native["score"] - best_peer["score"]
                c["ok_peer"] = c["vs_peer"] >= -TOL
            if family != "boosting" and (ranger := get("ranger", family)) is not None:
                c["fit_ratio"] = native["fit_s"] / ranger["fit_s"]
                c["ok_fit"] = c["fit_ratio"] <= 0.5
            out.append(c)
    return out


def mark(ok: Any) -> str:
    return "" if ok is None else ("✓" if ok else "✗")


def print_targets(checks: list[dict[str, Any]]) -> None:
    print("\n## Targets (issue #52)\n")
    print(
        "Δ = native − the other (accuracy or R²); targets: Δ encoded ≥ 0, Δ peer ≥ −0.005, "
        "fit / ranger ≤ 0.5 (forests).\n"
    )
    print(
        "| table | model | native | best encoded | Δ encoded | best peer | Δ peer | fit / ranger |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c in checks:
        if "note" in c:
            print(f"| {c['table']} | {c['model']} | {c['note']} | | | | | |")
            continue
        enc = (
            f"{fmt(c.get('best_encoded'))} ({c.get('best_encoding', '—')})"
            if "best_encoded" in c
            else "—"
        )
        peer = f"{fmt(c.get('peer_score'))} ({c['peer']})" if "peer" in c else "—"
        d_enc = f"{c['vs_encoded']:+.4f} {mark(c['ok_encoded'])}" if "vs_encoded" in c else "—"
        d_peer = f"{c['vs_peer']:+.4f} {mark(c['ok_peer'])}" if "vs_peer" in c else "—"
        fit = f"{c['fit_ratio']:.2f} {mark(c['ok_fit'])}" if "fit_ratio" in c else "—"
        md_row(c["table"], c["model"], fmt(c["native"]), enc, d_enc, peer, d_peer, fit)
    met = missed = 0
    misses = []
    for c in checks:
        for key, what in (
            ("ok_encoded", "vs encoded"),
            ("ok_peer", "vs peer"),
            ("ok_fit", "fit / ranger"),
        ):
            if key in c:
                if c[key]:
                    met += 1
                else:
                    missed += 1
                    misses.append(f"{c['table']} {c['model']}: {what}")
    print(f"\nTargets met: {met} of {met + missed}.")
    if misses:
        print("Missed: " + "; ".join(misses) + ".")
    pending = [f"{c['table']} {c['model']}" for c in checks if "note" in c]
    if pending:
        print("Not yet supported natively: " + "; ".join(pending) + ".")


def versions(peers: list[str], ranger: str) -> str:
    """The versions of the libraries in the run (``ranger``: R's and ranger's, when run)."""
    import pandas as pd
    import sklearn

    import forestimp

    parts = [
        f"forestimp {getattr(forestimp, '__version__', '?')}",
        f"numpy {np.__version__}",
        f"pandas {pd.__version__}",
        f"scikit-learn {sklearn.__version__}",
    ]
    if "lightgbm" in peers:
        import lightgbm

        parts.append(f"lightgbm {lightgbm.__version__}")
    if "ranger" in peers:
        parts.append(ranger)
    return ", ".join(parts)
