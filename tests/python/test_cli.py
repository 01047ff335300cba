"""The ``forestimp`` console command: ``demo`` and ``rank``."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from forestimp.cli import main

LED_EXACT = [0.4127, 0.5815, 0.5312, 0.5421, 0.6566, 0.2258, 0.3720]


def test_demo_prints_the_led_table(capsys):
    code = main(["demo", "--n-estimators", "300"])
    assert code in (None, 0)
    out = capsys.readouterr().out
    for m in range(1, 8):
        assert re.search(rf"\bX{m}\b", out), f"X{m} missing from:\n{out}"
    # The exact Thm-1 values are printed next to the estimates.
    for value in LED_EXACT:
        assert f"{value:.4f}" in out or f"{value:.3f}" in out, value


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {
            "noise_a": rng.normal(size=n),
            "signal": rng.normal(size=n),
            "noise_b": rng.normal(size=n),
            "noise_c": rng.uniform(size=n),
        }
    )
    df["label"] = np.where(df["signal"] + 0.1 * rng.normal(size=n) > 0, "yes", "no")
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def _ranked_columns(out: str, names) -> list[str]:
    """Column names in the order the report first mentions them."""
    found = {name: out.find(name) for name in names}
    return sorted((n for n, pos in found.items() if pos >= 0), key=found.get)


@pytest.mark.parametrize("model", ["rf", "hist"])
def test_rank_puts_the_informative_column_first(csv_file, capsys, model):
    code = main(["rank", str(csv_file), "--target", "label", "--model", model])
    assert code in (None, 0)
    out = capsys.readouterr().out
    ranked = _ranked_columns(out, ["signal", "noise_a", "noise_b", "noise_c"])
    assert ranked[0] == "signal", out
    assert len(ranked) == 4, out


def test_rank_missing_target_column_exits_with_usage_error(csv_file, capsys):
    with pytest.raises(SystemExit) as info:
        main(["rank", str(csv_file), "--target", "no_such_column"])
    assert info.value.code == 2
    assert "no_such_column" in capsys.readouterr().err


def test_rank_missing_file_exits_with_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["rank", str(tmp_path / "absent.csv"), "--target", "label"])
    # Any failing exit status with a message naming the file (no traceback).
    code = info.value.code
    assert code not in (0, None)
    assert "absent.csv" in (code if isinstance(code, str) else capsys.readouterr().err)


def test_unknown_command_exits_with_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


@pytest.mark.parametrize("command", ["demo", "rank"])
def test_plots_are_written_as_png(command, csv_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / f"{command}.png"
    if command == "demo":
        argv = ["demo", "--n-estimators", "200", "--plot", str(png)]
    else:
        argv = ["rank", str(csv_file), "--target", "label", "--n-estimators", "50"]
        argv += ["--plot", str(png)]
    assert main(argv) in (None, 0)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in capsys.readouterr().out
