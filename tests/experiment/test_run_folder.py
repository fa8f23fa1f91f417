"""The run folder never lies and never destroys (issue 11, point 1).

* A file hdeeprm would generate but did not write (or that was edited since) is neither
  overwritten nor used as generated: the run stops, naming the file and what to do.
* Generated files are regenerated when anything they derive from changes: the trace's bytes,
  the platform file, the type library, the options, the hdeeprm version.
* Interrupted at any write, the manifest still claims exactly the files hdeeprm wrote, so
  ``hdeeprm-clean`` removes exactly those and the next run carries on.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import hdeeprm._atomic as atomic
from hdeeprm.analysis.clean import execute, plan_clean
from hdeeprm.cli.launch import main
from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare as inputs_module
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.platform.library import CATEGORIES

REPO = Path(__file__).resolve().parents[2]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
GENERATED = ("platform.xml", "res_hierarchy.json", "workload.json", "job_limits.json")
USER_WORKLOAD = {
    "nb_res": 4,
    "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
    "profiles": {"p": {"type": "delay", "delay": 5, "mem_bw": 1}},
}
#: Deliberately not what hdeeprm would compute for USER_WORKLOAD.
USER_LIMITS = {"max_time": 100.0, "max_core": 4, "max_mem": 10.0, "max_mem_bw": 8.0}


def _options(folder: Path, **extra) -> Path:
    doc = {
        "seed": 7,
        "platform_file_path": str(LEARNING_PLATFORM),
        "synthetic_workload": {"nb_jobs": 20},
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"}},
    }
    doc.update(extra)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def _trace(path: Path, run_times: tuple[int, ...] = (10, 20, 30)) -> Path:
    lines = [
        f"{k + 1} {k * 5} 0 {run} 1 -1 -1 1 {run * 2} -1 1 1 1 1 1 1 -1 -1"
        for k, run in enumerate(run_times)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _prepare(options: Path, run: Path, **kwargs):
    return prepare_inputs(load_options(options), run, **kwargs)


# --- files hdeeprm did not write ---------------------------------------------------------------
def test_a_users_workload_is_neither_overwritten_nor_used(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    mine = run / "workload.json"
    mine.write_text(json.dumps(USER_WORKLOAD))
    before = mine.read_bytes()
    with pytest.raises(InputError) as err:
        _prepare(_options(tmp_path), run)
    message = str(err.value)
    assert str(mine) in message and "-cw" in message and "another run folder" in message
    assert mine.read_bytes() == before
    assert sorted(p.name for p in run.iterdir()) == ["workload.json"], "nothing written"


def test_a_users_workload_with_limits_is_not_used_as_generated(tmp_path: Path) -> None:
    """Today's thesis behaviour silently ran the hand-written file in place of the trace."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "workload.json").write_text(json.dumps(USER_WORKLOAD))
    (run / "job_limits.json").write_text(json.dumps(USER_LIMITS))
    with pytest.raises(InputError, match="workload.json"):
        _prepare(_options(tmp_path), run)


@pytest.mark.parametrize("name", ["platform.xml", "res_hierarchy.json", "job_limits.json"])
def test_any_foreign_input_stops_the_run(tmp_path: Path, name: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / name).write_text("mine")
    with pytest.raises(InputError, match=f"{name}.*not hdeeprm's"):
        _prepare(_options(tmp_path), run)
    assert (run / name).read_text() == "mine"


def test_the_cli_exits_2_naming_the_file(tmp_path: Path) -> None:
    options = _options(tmp_path)
    (tmp_path / "workload.json").write_text(json.dumps(USER_WORKLOAD))
    result = CliRunner().invoke(main, [str(options), "-q"])
    assert result.exit_code == 2
    assert str(tmp_path / "workload.json") in result.output and "-cw" in result.output
    assert "Traceback" not in result.output
    # ... and -cw is the way to run it.
    result = CliRunner().invoke(main, [str(options), "-q", "-cw", str(tmp_path / "workload.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "workload.json").read_text()) == USER_WORKLOAD


def test_an_edited_generated_file_becomes_the_users(tmp_path: Path) -> None:
    options = _options(tmp_path)
    run = tmp_path / "run"
    _prepare(options, run)
    doc = json.loads((run / "workload.json").read_text())
    doc["jobs"] = doc["jobs"][:3]
    (run / "workload.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="changed since hdeeprm wrote it"):
        _prepare(options, run)
    plan = plan_clean(run)
    assert run / "workload.json" not in plan.files
    assert (run / "workload.json", "changed since hdeeprm wrote it") in plan.kept
    assert run / "platform.xml" in plan.files


def test_custom_workload_keeps_the_users_limits_beside_it(tmp_path: Path) -> None:
    options = _options(tmp_path)
    (tmp_path / "workload.json").write_text(json.dumps(USER_WORKLOAD))
    (tmp_path / "job_limits.json").write_text(json.dumps(USER_LIMITS))
    before = (tmp_path / "job_limits.json").read_bytes()
    inputs = _prepare(options, tmp_path, custom_workload=tmp_path / "workload.json")
    assert inputs.job_limits.max_time == 100.0  # the user's, not recomputed (5 s)
    assert (tmp_path / "job_limits.json").read_bytes() == before
    assert "job_limits.json" not in inputs.generated
    kept = {p.name for p in plan_clean(tmp_path).files}
    assert kept >= {"platform.xml", "res_hierarchy.json"}
    assert not kept & {"workload.json", "job_limits.json", "options.json"}


def test_custom_workload_in_the_run_folder_gets_limits_of_its_own(tmp_path: Path) -> None:
    """The limits a run generated for a workload in its own folder are not "the user's limits
    beside it" on the next run: a changed workload gets limits recomputed from it."""
    options = _options(tmp_path)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(USER_WORKLOAD))
    first = _prepare(options, tmp_path, custom_workload=workload)
    assert first.job_limits.max_time == 5.0
    assert first.generated[-1] == "job_limits.json"
    longer = json.loads(json.dumps(USER_WORKLOAD))
    longer["profiles"]["p"]["delay"] = 50
    workload.write_text(json.dumps(longer))
    second = _prepare(options, tmp_path, custom_workload=workload)
    assert second.job_limits.max_time == 50.0  # not the 5 s generated for the first workload
    assert second.generated[-1] == "job_limits.json"
    assert json.loads((tmp_path / "job_limits.json").read_text())["max_time"] == 50.0


# --- regeneration keys ---------------------------------------------------------------------
def test_trace_bytes_are_the_key_not_size_and_mtime(tmp_path: Path) -> None:
    trace = _trace(tmp_path / "t.swf")
    options = _options(tmp_path, workload_file_path=str(trace), synthetic_workload=None)
    doc = json.loads(options.read_text())
    del doc["synthetic_workload"]
    options.write_text(json.dumps(doc))
    run = tmp_path / "run"
    first = _prepare(options, run)
    assert first.workload.profiles["3"].req_time == 60
    stat = trace.stat()
    _trace(trace, (10, 20, 40))  # same size, new content...
    os.utime(trace, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # ... same modification time
    assert trace.stat().st_size == stat.st_size
    second = _prepare(options, run)
    assert second.generated == ["workload.json", "job_limits.json"]
    assert second.workload.profiles["3"].req_time == 80


def test_gzip_trace_hashed_as_stored(tmp_path: Path) -> None:
    plain = _trace(tmp_path / "t.swf")
    packed = tmp_path / "t.swf.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    options = _options(tmp_path, workload_file_path=str(packed))
    doc = json.loads(options.read_text())
    del doc["synthetic_workload"]
    options.write_text(json.dumps(doc))
    run = tmp_path / "run"
    assert _prepare(options, run).generated == list(GENERATED)
    assert _prepare(options, run).generated == []


def test_platform_library_version_and_options_are_keys(tmp_path: Path, monkeypatch) -> None:
    run = tmp_path / "run"
    options = _options(tmp_path)
    assert _prepare(options, run).generated == list(GENERATED)
    assert _prepare(options, run).generated == []
    # The platform file's bytes (an inline type library override lives there too).
    platform = tmp_path / "platform.json"
    doc = json.loads(LEARNING_PLATFORM.read_text())
    doc["_doc"] = "a copy with another comment"
    platform.write_text(json.dumps(doc))
    options = _options(tmp_path, platform_file_path=str(platform))
    assert _prepare(options, run).generated == ["platform.xml", "res_hierarchy.json"]
    # The shipped type library.
    library = tmp_path / "library"
    library.mkdir()
    for category in CATEGORIES:  # every shipped file, GPU types included
        source = Path(inputs_module.shipped_type_file(category))
        (library / source.name).write_bytes(source.read_bytes() + b"\n")
    monkeypatch.setattr(
        inputs_module, "shipped_type_file", lambda c: str(library / f"{c}_types.json")
    )
    assert _prepare(options, run).generated == ["platform.xml", "res_hierarchy.json"]
    # The GPU types alone (a platform's GPUs derive from them).
    gpu_file = library / "gpu_types.json"
    gpu_file.write_bytes(gpu_file.read_bytes() + b"\n")
    assert _prepare(options, run).generated == ["platform.xml", "res_hierarchy.json"]
    # An option that shapes the workload.
    options = _options(tmp_path, platform_file_path=str(platform), seed=8)
    assert _prepare(options, run).generated == ["workload.json", "job_limits.json"]
    # The hdeeprm version.
    monkeypatch.setattr(inputs_module, "__version__", "999.0")
    assert _prepare(options, run).generated == list(GENERATED)
    assert _prepare(options, run).generated == []


# --- interruptions -------------------------------------------------------------------------
class _Interrupt:
    """Replace ``os.replace`` in the atomic writer: raise KeyboardInterrupt at call ``k``,
    before the file is moved into place or just after."""

    def __init__(self, k: int, after: bool) -> None:
        self.k, self.after, self.calls = k, after, 0
        self.real = os.replace

    def __call__(self, src, dst) -> None:
        self.calls += 1
        if self.calls == self.k and not self.after:
            raise KeyboardInterrupt
        self.real(src, dst)
        if self.calls == self.k:
            raise KeyboardInterrupt


def _check_manifest_true(run: Path, user_files: dict[str, bytes]) -> None:
    """Clean would remove every file hdeeprm wrote and none of the user's."""
    plan = plan_clean(run)
    planned = {p.name for p in plan.files}
    for name in GENERATED:
        if (run / name).exists() and name not in user_files:
            assert name in planned, f"{name} written by hdeeprm but not claimed"
    assert not planned & set(user_files), "a user's file is claimed"
    for name, data in user_files.items():
        assert (run / name).read_bytes() == data


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run of :func:`_options`'s experiment."""
    folder = tmp_path_factory.mktemp("reference")
    return _prepare(_options(folder), folder / "run")


# Eight atomic moves: manifest, platform.xml, res_hierarchy.json, manifest, manifest,
# workload.json, job_limits.json, manifest; the ninth never comes (the run completes).
@pytest.mark.parametrize("after", [False, True], ids=["before-move", "after-move"])
@pytest.mark.parametrize("k", range(1, 10))
def test_interrupted_first_run_leaves_a_true_manifest(
    tmp_path: Path, monkeypatch, reference, k: int, after: bool
) -> None:
    options = _options(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    interrupt = _Interrupt(k, after)
    monkeypatch.setattr(atomic.os, "replace", interrupt)
    completed = True
    try:
        _prepare(options, run)
    except KeyboardInterrupt:
        completed = False
    monkeypatch.undo()
    assert completed == (k > 8)
    _check_manifest_true(run, {"notes.txt": b"mine"})
    # The next run carries on and produces what an uninterrupted run does.
    again = _prepare(options, run)
    assert (run / "workload.json").read_bytes() == (
        reference.output_dir / "workload.json"
    ).read_bytes()
    assert again.job_limits == reference.job_limits
    execute(plan_clean(run))
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("after", [False, True], ids=["before-move", "after-move"])
@pytest.mark.parametrize("k", range(1, 5))
def test_interrupted_regeneration_leaves_a_true_manifest(
    tmp_path: Path, monkeypatch, k: int, after: bool
) -> None:
    """Replacing hdeeprm's own files: the old or the new version is claimed, never neither."""
    run = tmp_path / "run"
    _prepare(_options(tmp_path), run)
    options = _options(tmp_path, seed=99)  # regenerates workload.json and job_limits.json
    monkeypatch.setattr(atomic.os, "replace", _Interrupt(k, after))
    with pytest.raises(KeyboardInterrupt):
        _prepare(options, run)
    monkeypatch.undo()
    _check_manifest_true(run, {})
    assert _prepare(options, run).generated in ([], ["workload.json", "job_limits.json"])


@pytest.mark.parametrize("k", range(1, 5))
def test_interrupted_custom_run_never_claims_the_users_files(
    tmp_path: Path, monkeypatch, k: int
) -> None:
    options = _options(tmp_path)
    user = {
        "workload.json": json.dumps(USER_WORKLOAD).encode(),
        "job_limits.json": json.dumps(USER_LIMITS).encode(),
    }
    for name, data in user.items():
        (tmp_path / name).write_bytes(data)
    monkeypatch.setattr(atomic.os, "replace", _Interrupt(k, after=True))
    with contextlib.suppress(KeyboardInterrupt):
        _prepare(options, tmp_path, custom_workload=tmp_path / "workload.json")
    monkeypatch.undo()
    _check_manifest_true(tmp_path, user)


def test_an_unreadable_manifest_is_an_error_and_clean_keeps_the_inputs(tmp_path: Path) -> None:
    options = _options(tmp_path)
    run = tmp_path / "run"
    _prepare(options, run)
    (run / ".hdeeprm_inputs.json").write_text("{not json")
    with pytest.raises(InputError, match=r"\.hdeeprm_inputs\.json.*not JSON"):
        _prepare(options, run)
    plan = plan_clean(run)
    kept = {path.name for path, _why in plan.kept}
    assert kept == set(GENERATED) | {".hdeeprm_inputs.json"}
