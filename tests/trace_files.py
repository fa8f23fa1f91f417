"""Where the real traces are, for tests: :mod:`hdeeprm.workload.archive` decides.

A test using a trace skips only when the trace is in none of the searched folders
(``$HDEEPRM_TRACES``, then the per-user cache), with a message naming the file and the command
that gets it. The folders are resolved once, at import, so that a relative ``$HDEEPRM_TRACES``
(CI sets ``../shared/traces``) keeps meaning the same folder when a test changes directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hdeeprm.workload import archive

REPO = Path(__file__).resolve().parent.parent
PLATFORM_EXAMPLES = REPO / "platform_examples"
#: The folders searched, in order, fixed when the tests start.
FOLDERS = archive.search_folders()


def find(name: str) -> Path | None:
    """The path of trace ``name``, or ``None`` when it is absent."""
    return archive.find_trace(name, FOLDERS)


def trace_path(name: str) -> Path:
    """The path of trace ``name``; skip the test, saying how to get it, when it is absent."""
    path = find(name)
    if path is None:
        pytest.skip(archive.missing_message(name, FOLDERS))
    return path
