"""The user guide's examples run as written (one namespace, top to bottom)."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "importances.md"


def test_user_guide_examples_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 7
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)
    out = capsys.readouterr().out
    assert "3.32" in out or "3.321" in out
