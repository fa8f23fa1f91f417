"""The package's annotations hold: ``mypy hdeeprm`` (configured in pyproject.toml) is clean."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_mypy_is_clean() -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (the test extra has it)")
    # mypy raises the collector's thresholds for its own run and leaves them so: restored, so
    # that the tests after this one see the interpreter's usual garbage collection.
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    try:
        stdout, stderr, status = api.run(
            [
                "--config-file",
                str(REPO / "pyproject.toml"),
                "--cache-dir",
                str(REPO / ".mypy_cache"),
                str(REPO / "hdeeprm"),
            ]
        )
    finally:
        gc.set_threshold(*threshold)
        if enabled:
            gc.enable()
        else:
            gc.disable()
    assert status == 0, stdout + stderr
