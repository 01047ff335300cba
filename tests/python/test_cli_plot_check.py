"""``--plot`` is checked before any work: without matplotlib (or with one too old, or with an
image format it does not write) each command stops at once, with exit status 2 and one line
on stderr, instead of growing every forest and then ending in a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import forestimp
from forestimp.cli import main

PYTHON_DIR = str(Path(forestimp.__file__).resolve().parent.parent)


@pytest.fixture
def no_work(monkeypatch):
    """Make every command's work fail the test, so that a refusal must come first."""

    def started(args):
        raise AssertionError(f"forestimp {args.command} started its work")

    monkeypatch.setattr("forestimp._select.run", started)
    monkeypatch.setattr("forestimp._rank.run", started)
    monkeypatch.setattr("forestimp.cli._demo", started)


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(20)))
    return str(path)


def _argv(command, csv_file, png):
    head = {"demo": ["demo"], "rank": ["rank", csv_file, "--target", "y"], "select": ["select"]}
    return [*head[command], "--plot", str(png)]


def refused(argv, capsys, *fragments):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"forestimp {argv[0]}: error: argument --plot: "), err
    for fragment in fragments:
        assert fragment in err, err
    return err


@pytest.mark.parametrize("command", ["select", "rank", "demo"])
def test_without_matplotlib(monkeypatch, capsys, tmp_path, csv_file, no_work, command):
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.backend_bases"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    argv = _argv(command, csv_file, tmp_path / "plot.png")
    refused(argv, capsys, "needs matplotlib", "pip install 'forestimp[plot]'")
    assert not (tmp_path / "plot.png").exists()


@pytest.mark.parametrize("command", ["select", "rank", "demo"])
def test_with_a_matplotlib_too_old(monkeypatch, capsys, tmp_path, csv_file, no_work, command):
    matplotlib = pytest.importorskip("matplotlib")
    monkeypatch.setattr(matplotlib, "__version__", "3.9.4")
    argv = _argv(command, csv_file, tmp_path / "plot.png")
    refused(argv, capsys, "matplotlib >= 3.10", "found 3.9.4")


def test_with_a_format_matplotlib_does_not_write(capsys, tmp_path, csv_file, no_work):
    pytest.importorskip("matplotlib")
    refused(_argv("select", csv_file, tmp_path / "plot.txt"), capsys, "no .txt images", "png")


def test_a_usable_plot_lets_the_work_start(tmp_path, csv_file, no_work):
    pytest.importorskip("matplotlib")
    for name in ("plot.png", "plot.PDF", "plot"):  # no suffix: matplotlib writes a PNG
        with pytest.raises(AssertionError, match="started its work"):
            main(_argv("select", csv_file, tmp_path / name))


def test_the_console_command_without_matplotlib(tmp_path):
    # The command as a user runs it, in a fresh interpreter where matplotlib cannot be
    # imported. On main it ran the selection, then died with ModuleNotFoundError.
    png = tmp_path / "plot.png"
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from forestimp.cli import main\n"
        f"main(['select', '--method', 'threshold', '--n-estimators', '5', '--plot', {str(png)!r}])"
    )
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "forestimp select: error: argument --plot: drawing needs matplotlib: "
        "pip install 'forestimp[plot]'"
    ]
    assert not png.exists()
