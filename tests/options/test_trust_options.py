"""Options that would hang or exhaust the machine are refused at validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.options import load_options
from hdeeprm.workload import budget, lublin_workload

REPO = Path(__file__).resolve().parents[2]
GAIA = REPO / "platform_examples" / "gaia.json"


def write(folder: Path, doc: dict) -> Path:
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def synthetic(folder: Path, nb_jobs: int) -> Path:
    return write(
        folder,
        {
            "seed": 1,
            "platform_file_path": str(GAIA),
            "synthetic_workload": {"model": "lublin", "nb_jobs": nb_jobs},
            "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
        },
    )


def test_classic_void_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "seed": 1,
            "platform_file_path": str(GAIA),
            "pybatsim": {
                "env": {"actions": {"void": True}},
                "agent": {"type": "CLASSIC", "policy_pair": "void"},
            },
        },
    )
    with pytest.raises(InputError) as caught:
        load_options(path)
    assert caught.value.path == str(path)
    assert caught.value.where == "pybatsim.agent.policy_pair"
    assert "never" in caught.value.message


def test_learning_agents_keep_the_void_action(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "seed": 1,
            "platform_file_path": str(GAIA),
            "pybatsim": {"env": {"actions": {"void": True}}, "agent": {"type": "LEARNING"}},
        },
    )
    assert load_options(path).env.void


def test_log_detail_is_a_boolean(tmp_path: Path) -> None:
    doc = {
        "seed": 1,
        "platform_file_path": str(GAIA),
        "pybatsim": {"log_detail": "yes", "agent": {"type": "LEARNING"}},
    }
    with pytest.raises(InputError) as caught:
        load_options(write(tmp_path, doc))
    assert caught.value.where == "pybatsim.log_detail"
    doc["pybatsim"]["log_detail"] = True
    assert load_options(write(tmp_path, doc)).log_detail is True


def test_synthetic_workload_beyond_memory_is_refused_with_its_size(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_options(synthetic(tmp_path, 10**12))
    assert caught.value.where == "synthetic_workload.nb_jobs"
    assert "would need about 7.3 PB" in caught.value.message


def test_synthetic_budget_uses_available_memory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(budget, "available_memory", lambda: 1024**3)  # 1 GB
    # 8 KB per job: 131,072 jobs fit in 1 GB, 131,073 do not.
    assert load_options(synthetic(tmp_path, 131_072)).synthetic_workload.nb_jobs == 131_072
    with pytest.raises(InputError, match=r"at most 131,072"):
        load_options(synthetic(tmp_path, 131_073))
    with pytest.raises(InputError, match="would need about"):
        lublin_workload(131_073, 256, 1, reference_speed=1.0)


def test_relative_traces_variable_is_explained(tmp_path: Path, monkeypatch) -> None:
    """A relative $HDEEPRM_TRACES resolves against the options file's folder, as any relative
    path there (docs/gallery.md says so); when that finds nothing, the error says why."""
    monkeypatch.setenv("HDEEPRM_TRACES", "../shared/traces")
    folder = tmp_path / "exp"
    folder.mkdir()
    doc = {
        "seed": 1,
        "workload_file_path": "${HDEEPRM_TRACES}/trace.swf",
        "platform_file_path": str(GAIA),
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
    }
    with pytest.raises(InputError) as caught:
        load_options(write(folder, doc))
    assert caught.value.where == "workload_file_path"
    assert str(tmp_path / "shared" / "traces" / "trace.swf") in caught.value.message
    assert "HDEEPRM_TRACES holds a relative path" in caught.value.message
    # The same relative value, seen from the options file's folder, is found.
    (tmp_path / "shared" / "traces").mkdir(parents=True)
    (tmp_path / "shared" / "traces" / "trace.swf").write_text("1 0 0 10 1 -1 -1 1 10 -1 1\n")
    assert load_options(write(folder, doc)).workload_file_path.name == "trace.swf"
