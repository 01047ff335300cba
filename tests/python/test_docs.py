"""The user guides' examples run as written (one namespace per guide, top to bottom)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def run_guide(name: str, min_blocks: int) -> None:
    guide = DOCS / name
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), flags=re.S)
    assert len(blocks) >= min_blocks
    namespace: dict = {"__name__": "__main__"}
    for block in blocks:
        exec(compile(block, str(guide), "exec"), namespace)


def test_user_guide_examples_run(capsys):
    run_guide("importances.md", 7)
    out = capsys.readouterr().out
    assert "3.32" in out or "3.321" in out


def test_selection_guide_examples_run(capsys):
    run_guide("selection.md", 6)
    out = capsys.readouterr().out
    for selector in ("Boruta", "SRS in memory", "mean threshold"):
        assert f"{selector}: kept 10, of which 10/10 relevant" in out, out
    assert "same on disk: True" in out


def test_dask_guide_example_runs(capsys):
    pytest.importorskip("distributed")
    run_guide("dask.md", 2)
    out = capsys.readouterr().out
    assert "same model bytes: True" in out and "same OOB score: True" in out, out
    assert "found: [ 3 17]" in out and "same selection: True" in out, out
    assert "same quantiles: True" in out and "same interval: True" in out, out


def test_categorical_guide_examples_run(capsys):
    run_guide("categorical.md", 7)
    out = capsys.readouterr().out
    assert "same predictions: True" in out and "same model: True" in out, out
    assert "5000 levels, training accuracy 1.0" in out, out
    assert "same importances: True" in out, out


def test_quantiles_guide_example_runs(capsys):
    run_guide("quantiles.md", 1)
    out = capsys.readouterr().out
    assert "90 % band covers" in out and "median:" in out, out


def test_intervals_guide_examples_run(capsys):
    pytest.importorskip("matplotlib")
    run_guide("intervals.md", 2)
    out = capsys.readouterr().out
    # The quantile forest has no finite-sample guarantee (it covers 0.87 there).
    for method, low in (("jackknife+", 0.85), ("conformal", 0.85), ("quantile", 0.8)):
        covers = re.search(rf"{re.escape(method)}: covers (\d\.\d\d)", out)
        assert covers and low <= float(covers.group(1)) <= 0.95, out
    assert "standard errors:" in out and "plotted: ['interval', 'prediction']" in out, out
