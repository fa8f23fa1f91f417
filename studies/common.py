"""Paths shared by the studies' scripts."""

from __future__ import annotations

from pathlib import Path

#: The repository's root (the folder holding ``studies/`` and ``platform_examples/``).
REPO = Path(__file__).resolve().parents[1]
#: Where the scripts look for real traces by default: ``traces/`` in a ``shared/`` folder
#: beside the repository.
TRACES = REPO.parent / "shared" / "traces"
