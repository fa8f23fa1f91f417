"""The speed suite runner (``python -m benchmarks``) in its smallest mode, and the benchmark
scripts' independence from the test helpers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
HEADERS = ["benchmark", "figure", "value", "unit", "CPU s"]


def suite(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PYTHONPATH=str(REPO), **env)
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_quick_run_prints_a_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "bench.json"
    done = suite(tmp_path, "--quick", "--only", "synthetic", "--json", str(out))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("benchmark"))
    assert header.split() == ["benchmark", "figure", "value", "unit", "CPU", "s"]
    assert any(line.startswith("synthetic ") and "jobs/s" in line for line in lines)
    report = json.loads(out.read_text())
    assert report["quick"] is True and report["skipped"] == []
    assert set(report["machine"]) == {"python", "cpus", "load_average", "hdeeprm"}
    assert (Path(report["machine"]["hdeeprm"]) / "__init__.py").is_file()
    (row,) = report["results"]
    assert list(row) == HEADERS
    assert row["benchmark"] == "synthetic" and row["unit"] == "jobs/s"
    assert row["value"] > 0 and row["CPU s"] > 0
    assert not list(out.parent.glob(".bench.json.*"))  # no temporary file left


def test_missing_trace_is_skipped_and_listed(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "bench.json"
    done = suite(
        tmp_path,
        "--quick",
        "--only",
        "convert",
        "--json",
        str(out),
        HDEEPRM_TRACES=str(empty),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr
    assert "skipped convert:" in done.stdout
    assert "hdeeprm-traces fetch UniLu-Gaia-2014-1.swf.gz" in done.stdout
    report = json.loads(out.read_text())
    assert report["results"] == []
    assert [s["benchmark"] for s in report["skipped"]] == ["convert"]


def test_list_names_every_benchmark(tmp_path: Path) -> None:
    done = suite(tmp_path, "--list")
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert {"convert", "engine", "synthetic", "classic", "environment", "pool", "ppo"} <= set(names)


def test_no_benchmark_reaches_into_tests() -> None:
    """Benchmarks run from a clone without the test suite on their path: none puts ``tests/``
    on ``sys.path`` or imports a test helper."""
    helpers = ("trace_files", "batsim_env", "pybatsim_runs", "trace_workloads", "easy_runs")
    editing = re.compile(r"sys\.path\s*(\.insert|\.append|\.extend|\[|\+=|=)")
    importing = re.compile(rf"^\s*(from|import)\s+({'|'.join(helpers)})\b", re.M)
    for path in sorted(BENCHMARKS.rglob("*.py")):
        text = path.read_text()
        for line in text.splitlines():
            if editing.search(line):
                assert "tests" not in line, f"{path.relative_to(REPO)}: {line.strip()}"
        assert not importing.search(text), f"{path.relative_to(REPO)} imports a test helper"
