"""The shipped examples match the machines of the real traces (skipped without ../shared)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from trace_files import trace_path

from hdeeprm.platform import load_platform

EXAMPLES = Path(__file__).resolve().parents[2] / "platform_examples"


def header_value(trace: Path, key: str) -> int:
    """``; Key: value`` from the SWF header comments (only the header is read)."""
    with gzip.open(trace, "rt") as handle:
        for line in handle:
            if not line.startswith(";"):
                break
            name, _, value = line[1:].partition(":")
            if name.strip() == key:
                return int(value.split()[0])
    raise AssertionError(f"{key} not in the header of {trace}")


@pytest.mark.parametrize(
    ("trace", "example", "cores_key"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", "kth_sp2.json", "MaxProcs"),  # 100 nodes, 100 procs
        ("lublin_256.swf.gz", "lublin_256.json", "MaxNodes"),  # synthetic: no MaxProcs
        ("RICC-2010-2.swf.gz", "ricc.json", "MaxProcs"),  # 1,024 nodes x 2 x 4 cores = 8,192
        ("NASA-iPSC-1993-3.1-cln.swf.gz", "nasa_ipsc860.json", "MaxProcs"),  # 128 nodes
        ("LANL-CM5-1994-4.1-cln.swf.gz", "lanl_cm5.json", "MaxProcs"),  # 1,024 nodes
    ],
)
def test_example_has_the_trace_machine_size(trace: str, example: str, cores_key: str) -> None:
    path = trace_path(trace)
    platform = load_platform(EXAMPLES / example)
    assert len(platform.cores) == header_value(path, cores_key)
    assert len(platform.nodes) == header_value(path, "MaxNodes")


def test_lcg_example_has_the_grid_processor_count() -> None:
    # The LCG header has no MaxNodes (170 pooled sites): only the processor count is checked.
    path = trace_path("LCG.swf.gz")
    platform = load_platform(EXAMPLES / "lcg.json")
    assert len(platform.cores) == header_value(path, "MaxProcs") == 24515
