"""Feature selection: forestimp's selectors against their peers, same data, same run.

Data: ``make_classification(n_samples, n_features, n_informative, n_redundant=0,
shuffle=False, random_state=0)``, so the relevant set is the first ``n_informative`` columns;
every run reports the precision and recall of its selected set against it.

One function per peer comparison (``SECTIONS``; ``--only`` picks some):

* ``rfe``: ``forestimp.selection.RFE()`` with its defaults (100 trees, step 0.2, out-of-bag
  scores, alpha = 1 standard error) and with scikit-learn's protocol (``step=10, cv=3``,
  100 exact-split trees) against ``sklearn.feature_selection.RFECV(RandomForestClassifier(
  100), step=10, cv=3)``, the issue's peer (76 s measured there);
* ``threshold``: ``SelectFromImportance()`` (mean threshold) and
  ``SelectFromImportance(threshold="probe")`` against ``SelectFromModel(
  RandomForestClassifier(100))`` (mean threshold).

Every forest has ``n_jobs=--n-jobs`` and ``random_state=0``. Each run is a fresh child process
(``python benches/bench_selection.py --child SPEC``) that builds the data, then times only the
selector's ``fit``: the wall time is the best of ``--repeats`` fits (``--peer-repeats`` for the
slow scikit-learn runs), and the peak RSS is the child's ``resource.getrusage(RUSAGE_SELF)
.ru_maxrss`` (whole process: interpreter, libraries and data included; the RSS before the first
fit is printed next to it, so the difference is what the selection added). Not a test: run it
by hand, e.g. ``python benches/bench_selection.py`` (about 4 minutes, most of it RFECV) or
``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


# ----------------------------------------------------------------------- the selectors
def build(method: str, n_jobs: int) -> Any:
    """The unfitted selector of ``method``."""
    from sklearn.ensemble import RandomForestClassifier as SkRF
    from sklearn.feature_selection import RFECV, SelectFromModel

    import forestimp as fi
    from forestimp.selection import RFE, SelectFromImportance

    common = dict(n_jobs=n_jobs, random_state=0)
    makers: dict[str, Callable[[], Any]] = {
        "forestimp RFE() defaults": lambda: RFE(**common),
        "forestimp RFE(RF(100), step=10, cv=3)": lambda: RFE(
            fi.RandomForestClassifier(100), step=10, cv=3, **common
        ),
        "sklearn RFECV(RF(100), step=10, cv=3)": lambda: RFECV(SkRF(100, **common), step=10, cv=3),
        "forestimp SelectFromImportance() mean": lambda: SelectFromImportance(**common),
        "forestimp SelectFromImportance(threshold='probe')": lambda: SelectFromImportance(
            threshold="probe", **common
        ),
        "sklearn SelectFromModel(RF(100)) mean": lambda: SelectFromModel(SkRF(100, **common)),
    }
    return makers[method]()


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs in the child process: data, then ``repeats`` timed fits of one selector."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        spec["n"],
        spec["p"],
        n_informative=spec["informative"],
        n_redundant=0,
        shuffle=False,
        random_state=0,
    )
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times, support = [], None
    for _ in range(spec["repeats"]):
        sel = build(spec["method"], spec["n_jobs"])
        t0 = time.perf_counter()
        sel.fit(X, y)
        times.append(time.perf_counter() - t0)
        support = sel.get_support(indices=True)
    assert support is not None
    chosen = set(support.tolist())
    hits = len(chosen & set(range(spec["informative"])))
    return {
        "seconds": min(times),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "before_mb": rss_before / 1024,
        "selected": len(chosen),
        "precision": hits / max(1, len(chosen)),
        "recall": hits / spec["informative"],
    }


def run(method: str, args: argparse.Namespace, repeats: int) -> dict[str, Any]:
    """One child process for ``method``; its measurements and the method's name."""
    spec = dict(
        method=method,
        n=args.n_samples,
        p=args.n_features,
        informative=args.n_informative,
        n_jobs=args.n_jobs,
        repeats=repeats,
    )
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{method} failed:\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["method"] = method
    print(f"  {method}: {out['seconds']:.2f} s", file=sys.stderr)
    return out


# ----------------------------------------------------------------------- comparisons
def print_rows(title: str, rows: list[dict[str, Any]], peer: dict[str, Any]) -> None:
    print(f"\n### {title}\n")
    print(
        "| method | fit s | peak RSS MB (before fit) | selected | precision | recall "
        "| time / peer | peak RSS / peer |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['method']} | {r['seconds']:.2f} | {r['peak_mb']:.0f} ({r['before_mb']:.0f}) "
            f"| {r['selected']} | {r['precision']:.2f} | {r['recall']:.2f} "
            f"| {r['seconds'] / peer['seconds']:.3f} | {r['peak_mb'] / peer['peak_mb']:.2f} |"
        )


def compare_rfe(args: argparse.Namespace) -> None:
    """forestimp RFE (defaults, and scikit-learn's protocol) vs scikit-learn RFECV."""
    peer = run("sklearn RFECV(RF(100), step=10, cv=3)", args, args.peer_repeats)
    rows = [
        run("forestimp RFE() defaults", args, args.repeats),
        run("forestimp RFE(RF(100), step=10, cv=3)", args, args.repeats),
        peer,
    ]
    print_rows("RFE vs scikit-learn RFECV", rows, peer)
    target = "met" if rows[0]["seconds"] < 5 else "missed"
    print(f"\nIssue #21 target, RFE() under 5 s: {rows[0]['seconds']:.2f} s ({target})")


def compare_threshold(args: argparse.Namespace) -> None:
    """forestimp SelectFromImportance (mean, probe) vs scikit-learn SelectFromModel."""
    peer = run("sklearn SelectFromModel(RF(100)) mean", args, args.peer_repeats)
    rows = [
        run("forestimp SelectFromImportance() mean", args, args.repeats),
        run("forestimp SelectFromImportance(threshold='probe')", args, args.repeats),
        peer,
    ]
    print_rows("SelectFromImportance vs scikit-learn SelectFromModel", rows, peer)


# Later sections (Boruta, SRS) add their function here.
SECTIONS: dict[str, Callable[[argparse.Namespace], None]] = {
    "rfe": compare_rfe,
    "threshold": compare_threshold,
}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(json.loads(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--only", default=",".join(SECTIONS), help="comma list of " + ", ".join(SECTIONS)
    )
    ap.add_argument("--n-samples", type=int, default=5000)
    ap.add_argument("--n-features", type=int, default=200)
    ap.add_argument("--n-informative", type=int, default=10)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="forestimp fits per run (best)")
    ap.add_argument("--peer-repeats", type=int, default=1, help="scikit-learn fits per run")
    ap.add_argument("--quick", action="store_true", help="1000 x 50, 1 repeat")
    args = ap.parse_args()
    if args.quick:
        args.n_samples, args.n_features, args.repeats, args.peer_repeats = 1000, 50, 1, 1
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        ap.error(f"unknown sections {unknown}; choose among {sorted(SECTIONS)}")
    load = os.getloadavg()[0]
    print(
        f"{args.n_samples} x {args.n_features}, {args.n_informative} informative (columns "
        f"0..{args.n_informative - 1}), n_jobs={args.n_jobs}, best of {args.repeats} "
        f"(scikit-learn: {args.peer_repeats}); 1-min load average {load:.2f}"
    )
    for name in only:
        SECTIONS[name](args)
    print(f"\n1-min load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
