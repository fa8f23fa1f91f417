"""Fixtures of the analysis tests (the run folder itself is described in handmade.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from handmade import make_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """The hand-made run folder (with a training log)."""
    return make_run(tmp_path / "handmade")
