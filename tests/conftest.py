"""Shared fixtures (the trace helpers live in ``trace_files.py`` so tests can import them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_files import trace_path


@pytest.fixture
def gaia_trace() -> Path:
    """The UniLu Gaia 2014 trace (51,899 jobs)."""
    return trace_path("UniLu-Gaia-2014-1.swf.gz")
