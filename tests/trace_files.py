"""Where the real traces live (``../shared/traces``); tests using them skip cleanly without."""

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
