"""Every console script ends a user's mistake in one line and exit code 2, a bug in one line
saying it is an internal error and exit code 1 (its full trace only with ``--debug``).

Mistakes tried on each script: a missing file, a folder where a file is expected, an output
that cannot be written. Tests run as root, so an unwritable folder is one root cannot write
either: under ``/proc``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdeeprm.cli import clean, evaluate, jobstat, launch, metrics, sim, sweep, traces, visual

REPO = Path(__file__).resolve().parents[1]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
THESIS_WORKLOAD = REPO / "thesis_experiments" / "learning" / "workload.json"
SWF = "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
CAN_USE_PROC = Path("/proc/self").is_dir()


def options_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.swf").write_text(SWF)
    doc = {
        "seed": 7,
        "platform_file_path": str(LEARNING_PLATFORM),
        "workload_file_path": "tiny.swf",
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"}},
    }
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def sweep_file(folder: Path) -> Path:
    options_file(folder)
    path = folder / "sweep.json"
    path.write_text(json.dumps({"options": "options.json", "grid": {"seed": [1]}}))
    return path


def run_folder(folder: Path) -> Path:
    """A finished run folder, written by hdeeprm-launch itself."""
    result = CliRunner().invoke(
        launch.main, [str(options_file(folder)), "-o", str(folder / "run"), "-q"]
    )
    assert result.exit_code == 0, result.output
    return folder / "run"


def one_line(result, code: int = 2) -> str:
    """The script exited with ``code`` and wrote exactly one line on stderr, no traceback."""
    assert result.exit_code == code, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def invoke(command: click.Command, args: list[str]):
    return CliRunner().invoke(command, [str(a) for a in args])


# --- user mistakes --------------------------------------------------------------------------
MISSING: dict[str, Callable[[Path], tuple[click.Command, list]]] = {
    "launch": lambda t: (launch.main, [t / "absent.json"]),
    "sim": lambda t: (sim.main, ["-p", t / "absent.xml", "-w", t / "absent.json"]),
    "sweep": lambda t: (sweep.main, [t / "absent.json"]),
    "evaluate": lambda t: (evaluate.main, [t / "absent.json"]),
    "metrics": lambda t: (metrics.main, [t / "absent"]),
    "visual": lambda t: (visual.main, [t / "absent", "gantt", "-s", t / "g.png"]),
    "jobstat": lambda t: (jobstat.main, [t / "absent.swf", "size", "max"]),
    "clean": lambda t: (clean.main, [t / "absent"]),
    "traces": lambda t: (traces.main, ["fetch", "absent.swf.gz"]),
}

FOLDER_FOR_FILE: dict[str, Callable[[Path], tuple[click.Command, list]]] = {
    "launch": lambda t: (launch.main, [t]),
    "sim": lambda t: (sim.main, ["-p", t, "-w", t]),
    "sweep": lambda t: (sweep.main, [t]),
    "evaluate": lambda t: (evaluate.main, [t]),
    "metrics": lambda t: (metrics.main, [run_folder(t), "-s", t]),
    "visual": lambda t: (visual.main, [run_folder(t), "gantt", "-s", t]),
    "jobstat": lambda t: (jobstat.main, [t, "size", "max"]),
    "clean": lambda t: (clean.main, [options_file(t)]),  # a file where a folder is expected
    "traces": lambda t: (traces.main, ["fetch"]),  # nothing to fetch: the same one-line rule
}

#: Scripts that write somewhere the user chooses, and how to point them at ``out``.
OUTPUT: dict[str, Callable[[Path, str], tuple[click.Command, list]]] = {
    "launch": lambda t, out: (launch.main, [options_file(t), "-o", out, "-q"]),
    "sweep": lambda t, out: (sweep.main, [sweep_file(t), "-o", out, "-q", "-j", "1"]),
    "evaluate": lambda t, out: (evaluate.main, [options_file(t), "-o", out, "-q"]),
    "metrics": lambda t, out: (metrics.main, [run_folder(t), "-s", f"{out}/m.png"]),
    "visual": lambda t, out: (visual.main, [run_folder(t), "gantt", "-s", f"{out}/g.png"]),
}


@pytest.mark.parametrize("script", sorted(MISSING))
def test_missing_file(tmp_path: Path, script: str) -> None:
    one_line(invoke(*MISSING[script](tmp_path)))


@pytest.mark.parametrize("script", sorted(FOLDER_FOR_FILE))
def test_folder_where_a_file_is_expected(tmp_path: Path, script: str) -> None:
    one_line(invoke(*FOLDER_FOR_FILE[script](tmp_path)))


@pytest.mark.skipif(not CAN_USE_PROC, reason="no /proc file system")
@pytest.mark.parametrize("script", sorted(OUTPUT))
def test_unwritable_output_folder(tmp_path: Path, script: str) -> None:
    line = one_line(invoke(*OUTPUT[script](tmp_path, "/proc/hdeeprm-test-out")))
    assert "/proc/hdeeprm-test-out" in line and "cannot" in line


def test_sweep_output_under_a_regular_file_is_refused_before_any_run(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    command, args = OUTPUT["sweep"](tmp_path, str(tmp_path / "plain" / "out"))
    line = one_line(invoke(command, args))
    assert line.startswith(f"error: {tmp_path / 'plain' / 'out'}: cannot write")
    assert not (tmp_path / "inputs").exists() and not (tmp_path / "runs").exists()


# --- internal errors ------------------------------------------------------------------------
def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("boom")


#: Where each script is made to fail as a bug would: (module, attribute, arguments).
BUGS: dict[str, Callable[[Path], tuple[click.Command, str, str, list]]] = {
    "launch": lambda t: (launch.main, "hdeeprm.options", "load_options", [options_file(t)]),
    "sim": lambda t: (
        sim.main,
        "hdeeprm.cli.sim",
        "check_endpoint",
        ["-p", LEARNING_PLATFORM, "-w", THESIS_WORKLOAD],
    ),
    "sweep": lambda t: (sweep.main, "hdeeprm.sweep", "load_sweep", [sweep_file(t)]),
    "evaluate": lambda t: (evaluate.main, "hdeeprm.options", "load_options", [options_file(t)]),
    "metrics": lambda t: (
        metrics.main,
        "hdeeprm.analysis.metrics",
        "summarize_runs",
        [run_folder(t)],
    ),
    "visual": lambda t: (
        visual.main,
        "hdeeprm.analysis.runfolder",
        "RunFolder",
        [run_folder(t), "gantt", "-s", t / "g.png"],
    ),
    "jobstat": lambda t: (
        jobstat.main,
        "hdeeprm.cli.jobstat",
        "compute_statistic",
        [options_file(t).parent / "tiny.swf", "size", "max"],
    ),
    "clean": lambda t: (clean.main, "hdeeprm.cli.clean", "plan_clean", [t]),
    "traces": lambda t: (traces.main, "hdeeprm.workload.archive", "find_trace", ["list"]),
}


@pytest.mark.parametrize("script", sorted(BUGS))
def test_internal_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    command, module, name, args = BUGS[script](tmp_path)
    monkeypatch.setattr(f"{module}.{name}", _boom)
    line = one_line(invoke(command, args), code=1)
    assert line.startswith("internal error") and "RuntimeError: boom" in line
    assert "--debug" in line
    # With --debug, the full trace comes first, then the same line.
    debug_args = ["--debug", *args] if script != "traces" else ["list", "--debug"]
    result = invoke(command, debug_args)
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("internal error")


# --- Ray ------------------------------------------------------------------------------------
class _NoCluster:
    """Stands for the ``ray`` module where no cluster runs (what ray.init raises then)."""

    @staticmethod
    def is_initialized() -> bool:
        return False

    @staticmethod
    def init(**kwargs: object) -> None:
        raise ConnectionError(
            "Could not find any running Ray instance. Please specify the one to connect to by "
            "setting `--address` flag or `RAY_ADDRESS` environment variable."
        )


def test_ray_auto_without_a_cluster_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hdeeprm._ray.import_ray", lambda: _NoCluster)
    line = one_line(invoke(sweep.main, [sweep_file(tmp_path), "--ray", "auto", "-q"]))
    assert line == (
        "error: no Ray cluster is running on this machine (Could not find any running Ray "
        "instance); start one with 'ray start --head' (docs/sweep.md), or use --ray alone for "
        "a local instance"
    )
    line = one_line(invoke(sweep.main, [sweep_file(tmp_path), "--ray", "head:6379", "-q"]))
    assert "no Ray cluster is running at head:6379" in line


# --- property: any output folder argument ---------------------------------------------------
KINDS = ("under a regular file", "read-only", "dangling symlink", "existing file")


def _output_target(tmp: Path, kind: str) -> str:
    """An output folder of the given kind (read-only: one root cannot write either)."""
    if kind == "under a regular file":
        (tmp / "plain").write_text("")
        return str(tmp / "plain" / "out")
    if kind == "read-only":
        return "/proc/hdeeprm-test-out"
    if kind == "dangling symlink":
        link = tmp / "link"
        link.symlink_to(tmp / "nowhere" / "at-all")
        return str(link)
    (tmp / "existing").write_text("")
    return str(tmp / "existing")


@pytest.mark.skipif(not CAN_USE_PROC, reason="no /proc file system")
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(script=st.sampled_from(sorted(OUTPUT)), kind=st.sampled_from(KINDS))
def test_any_bad_output_folder_is_one_line_or_works(
    tmp_path_factory: pytest.TempPathFactory, script: str, kind: str
) -> None:
    """Whatever the output folder argument, never a traceback: either the script works
    (a dangling symlink may be followed and its target created) or it ends in one line,
    exit code 2, naming the folder."""
    tmp = tmp_path_factory.mktemp("out")
    target = _output_target(tmp, kind)
    result = invoke(*OUTPUT[script](tmp, target))
    if result.exit_code == 0:
        assert kind == "dangling symlink", result.output
        return
    line = one_line(result)
    assert line.startswith(("error:", "Error:"))
    name = os.path.basename(target)
    assert name in line or "Directory" in line, line


def test_empty_custom_workload_names_the_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"nb_res": 4, "jobs": [], "profiles": {}}))
    args = [options_file(tmp_path), "-cw", empty, "-o", tmp_path / "run", "-q"]
    line = one_line(invoke(launch.main, args))
    assert line.startswith(f"error: {empty}: the workload has no jobs")
