"""Paths shared by the studies' scripts."""

from __future__ import annotations

from pathlib import Path

from hdeeprm.workload.archive import cache_dir, find_trace

#: The repository's root (the folder holding ``studies/`` and ``platform_examples/``).
REPO = Path(__file__).resolve().parents[1]


def trace(name: str) -> Path:
    """A real trace found as everywhere in hdeeprm: in ``HDEEPRM_TRACES``, then in the cache.

    When it is in neither, the cache's path is returned, so ``--help`` still works and the run
    stops on the missing file; ``hdeeprm-traces fetch NAME`` puts it there.
    """
    return find_trace(name) or cache_dir() / name
