"""Mistakes and mishaps end in one clear line and exit code 2: no traceback, no hang, no
half-written file, no leftover temporary file.

The scenario is thesis 5.4's (learning platform, two one-core jobs of 24 GB/s), run by the
``hdeeprm-launch`` command itself. Tests run as root, so an unwritable folder is either a real
one root cannot write either (under ``/proc``) or a simulated ``EACCES``/``ENOSPC`` raised where
hdeeprm's writers reach the file system (``hdeeprm._atomic._open_stream``, ``mkstemp``).
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import hdeeprm._atomic as atomic
from hdeeprm.cli.launch import main

REPO = Path(__file__).resolve().parents[2]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
THESIS_WORKLOAD = REPO / "thesis_experiments" / "learning" / "workload.json"


def options_file(folder: Path, pair: str = "shortest-high_gflops", **pybatsim) -> Path:
    doc = {
        "seed": 7,
        "platform_file_path": str(LEARNING_PLATFORM),
        "pybatsim": {
            "log_level": "INFO",
            "env": {"objective": "makespan", "actions": {"void": True}},
            "agent": {"type": "CLASSIC", "policy_pair": pair},
            **pybatsim,
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def launch(options: Path, run: Path | str, *extra: str):
    return CliRunner().invoke(
        main, [str(options), "-cw", str(THESIS_WORKLOAD), "-o", str(run), "-q", *extra]
    )


def one_clear_error(result, *needles: str) -> str:
    """The run failed with exit code 2 and one ``error:`` line holding every needle."""
    output = result.output
    assert result.exit_code == 2, output
    assert "Traceback" not in output and "Logging error" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output
    assert len(output.splitlines()) <= 3, output
    return errors[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".tmp-*")) if folder.is_dir() else []


def test_classic_void_pair_is_refused_before_anything_runs(tmp_path: Path) -> None:
    options = options_file(tmp_path / "opt", pair="void")
    result = launch(options, tmp_path / "run")
    one_clear_error(result, "pybatsim.agent.policy_pair", "void", "never")
    assert not (tmp_path / "run").exists()


def test_output_folder_under_a_regular_file(tmp_path: Path) -> None:
    options = options_file(tmp_path / "opt")
    (tmp_path / "plain").write_text("a regular file\n")
    result = launch(options, tmp_path / "plain" / "run")
    one_clear_error(result, str(tmp_path / "plain" / "run"), "Not a directory")
    assert (tmp_path / "plain").read_text() == "a regular file\n"


@pytest.mark.parametrize("target", ["/proc/hdeeprm-test-run", "/proc/self"])
def test_folder_even_root_cannot_write(tmp_path: Path, target: str) -> None:
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc file system")
    options = options_file(tmp_path / "opt")
    one_clear_error(launch(options, target), "cannot write")


def test_read_only_folder(tmp_path: Path, monkeypatch) -> None:
    options = options_file(tmp_path / "opt")
    run = tmp_path / "run"
    run.mkdir()

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)
    one_clear_error(launch(options, run), str(run), "Permission denied", "-o")
    assert list(run.iterdir()) == []


def fail_writes_to(monkeypatch, name: str, after: int = 0) -> None:
    """Writes to the temporary file of ``name`` raise ENOSPC once ``after`` bytes are in."""
    real = atomic._open_stream

    def open_stream(fd, mode, encoding, newline):
        stream = real(fd, mode, encoding, newline)
        target = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
        if not target.startswith(f".tmp-{name}-"):
            return stream
        written = [0]
        write = stream.write

        def full_write(data):
            written[0] += len(data)
            if written[0] > after:
                raise OSError(errno.ENOSPC, "No space left on device")
            return write(data)

        stream.write = full_write
        return stream

    monkeypatch.setattr(atomic, "_open_stream", open_stream)


@pytest.mark.parametrize(
    "name",
    [
        "platform.xml",
        "job_limits.json",
        "insights.log",
        "out_jobs.csv",
        "out_consumed_energy.csv",
        "hdeeprm_mem_bw_overutilization.csv",
    ],
)
def test_disk_full_stops_with_one_message(tmp_path: Path, monkeypatch, name: str) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to tell the files apart")
    options = options_file(tmp_path / "opt")
    reference = tmp_path / "reference"
    assert launch(options, reference).exit_code == 0
    fail_writes_to(monkeypatch, name)
    run = tmp_path / "run"
    one_clear_error(launch(options, run), name, "No space left on device")
    assert leftovers(run) == []
    # Whatever was written before the failure is complete: byte for byte the reference's.
    for path in run.iterdir():
        if path.name != ".hdeeprm_inputs.json":
            assert path.read_bytes() == (reference / path.name).read_bytes(), path.name
    assert not (run / name).exists()


def test_disk_full_in_a_long_log_is_reported_once(tmp_path: Path, monkeypatch) -> None:
    """A log with many records fails at its first write, not once per record."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to tell the files apart")
    options = options_file(tmp_path / "opt", log_detail=True)
    jobs = [
        {"id": i, "subtime": i, "res": 1, "profile": "p"} for i in range(300)
    ]  # one decision per job, each logged at INFO
    profile = {"type": "parallel_homogeneous", "cpu": 4.2e9, "com": 0, "mem_bw": 24}
    workload = tmp_path / "many.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"p": profile}}))
    fail_writes_to(monkeypatch, "insights.log", after=2000)
    result = CliRunner().invoke(
        main, [str(options), "-cw", str(workload), "-o", str(tmp_path / "run"), "-q"]
    )
    one_clear_error(result, "insights.log", "No space left on device")
    assert leftovers(tmp_path / "run") == []
    assert not (tmp_path / "run" / "insights.log").exists()
