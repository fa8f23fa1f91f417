"""``make demo`` shows what its install is doing instead of a minute of silence."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("target", ["demo", "test"])
def test_install_shows_progress(target: str) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    plan = subprocess.run(
        ["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    installs = [line for line in plan if " pip install " in line]
    assert len(installs) == 2  # the pinned PyTorch, then hdeeprm
    for line in installs:
        words = line.split()
        assert "--quiet" not in words and "-q" not in words, line
        assert "--progress-bar on" in line, line
    steps = [line for line in plan if line.startswith("echo") and "==>" in line]
    assert len(steps) == 2  # each install announces itself
