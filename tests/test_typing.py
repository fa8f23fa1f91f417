"""The package's annotations hold: ``mypy hdeeprm`` (configured in pyproject.toml) is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_mypy_is_clean() -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (the test extra has it)")
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            str(REPO / "hdeeprm"),
        ]
    )
    assert status == 0, stdout + stderr
