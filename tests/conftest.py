"""Shared fixtures: where the real traces live, skipping cleanly when they are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TRACES = REPO.parent / "shared" / "traces"
PLATFORM_EXAMPLES = REPO / "platform_examples"


def trace_path(name: str) -> Path:
    """Path of a real trace in ``../shared/traces``; skip the test when it is not there."""
    path = TRACES / name
    if not path.is_file():
        pytest.skip(f"real trace {name} not available (../shared/traces absent)")
    return path


@pytest.fixture
def gaia_trace() -> Path:
    """The UniLu Gaia 2014 trace (51,899 jobs)."""
    return trace_path("UniLu-Gaia-2014-1.swf.gz")
