"""Fixtures of the tests that need a real Batsim (marked ``batsim``; see batsim_env.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from batsim_env import need_batsim, need_pybatsim


@pytest.fixture(scope="session")
def batsim_exe() -> Path:
    """A working Batsim 4.x executable (the test is skipped, with the reason, without one)."""
    return need_batsim()


@pytest.fixture(scope="session")
def pybatsim_exe() -> Path:
    """pybatsim 3.x's launcher (``pybatsim SCHEDULER -s ENDPOINT``), or skip."""
    return need_pybatsim()
