"""Small sweeps shared by the sweep tests (a hand-made SWF trace, a small Lublin workload)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from hdeeprm.sweep import RESULT_FILE
from hdeeprm.sweep.table import TIMING_COLUMNS

REPO = Path(__file__).resolve().parents[2]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
LUBLIN_PLATFORM = REPO / "platform_examples" / "lublin_256.json"

# id submit wait run alloc cpu usedmem reqproc reqtime reqmem status user group exe queue
# partition preceding think
TRACE = """; three one-core jobs of 10 s
1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1
2 5 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1
3 20 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1
"""


def write_json(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc))
    return path


def trace_sweep(folder: Path, pairs: list[str], **grid: object) -> Path:
    (folder / "tiny.swf").write_text(TRACE)
    write_json(
        folder / "options.json",
        {
            "seed": 5,
            "platform_file_path": str(LEARNING_PLATFORM),
            "workload_file_path": "tiny.swf",
            "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": pairs[0]}},
        },
    )
    return write_json(
        folder / "sweep.json",
        {"options": "options.json", "grid": {"policy_pair": pairs, **grid}},
    )


def synthetic_sweep(folder: Path, nb_jobs: int = 60) -> Path:
    """2 seeds x 3 pairs of a small Lublin workload on 256 cores: 6 runs, 2 inputs folders."""
    write_json(
        folder / "options.json",
        {
            "seed": 3,
            "platform_file_path": str(LUBLIN_PLATFORM),
            "synthetic_workload": {"model": "lublin", "nb_jobs": nb_jobs},
            "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
        },
    )
    return write_json(
        folder / "sweep.json",
        {
            "options": "options.json",
            "output_dir": "out",
            "grid": {
                "seed": [1, 2],
                "policy_pair": ["shortest-high_gflops", "first-low_power", "smallest-high_mem"],
            },
        },
    )


def deterministic(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=list(TIMING_COLUMNS))


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), timing-dependent ones left out."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != RESULT_FILE:
            files[str(path.relative_to(folder))] = path.read_bytes()
    return files
