"""Options file validation: thesis files keep working, every error names key and allowed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.options import load_options, options_from_json

THESIS_APPENDIX_F = {
    "seed": 20091995,
    "nb_resources": 64,
    "nb_jobs": 5000,
    "workload_file_path": "workloads/my_workload.swf",
    "platform_file_path": "platforms/my_platform.json",
    "pybatsim": {
        "log_level": "WARNING",
        "env": {
            "objective": "avg_utilization",
            "actions": {
                "selection": [
                    {"shortest": ["high_gflops", "high_mem"]},
                    {"first": ["high_mem_bw"]},
                ],
                "void": False,
            },
            "observation": "small",
            "queue_sensitivity": 0.03,
        },
        "agent": {"type": "LEARNING", "run": "train", "hidden": 128, "lr": 0.001, "gamma": 0.95},
    },
}


def _write(tmp_path: Path, doc: dict) -> Path:
    (tmp_path / "workloads").mkdir(exist_ok=True)
    (tmp_path / "platforms").mkdir(exist_ok=True)
    (tmp_path / "workloads" / "my_workload.swf").write_text("1 0 0 10 1 -1 -1 1 20 -1 1\n")
    (tmp_path / "platforms" / "my_platform.json").write_text("{}")
    path = tmp_path / "options.json"
    path.write_text(json.dumps(doc))
    return path


def _with(pybatsim: dict | None = None, **top) -> dict:
    doc = json.loads(json.dumps(THESIS_APPENDIX_F))
    doc.update(top)
    if pybatsim:
        for key, value in pybatsim.items():
            doc["pybatsim"][key] = value
    return doc


def test_thesis_appendix_f_loads_and_resolves_relative_paths(tmp_path: Path) -> None:
    opts = load_options(_write(tmp_path, THESIS_APPENDIX_F))
    assert opts.seed == 20091995
    assert opts.nb_jobs == 5000
    assert opts.platform_file_path == (tmp_path / "platforms" / "my_platform.json").resolve()
    assert opts.workload_file_path == (tmp_path / "workloads" / "my_workload.swf").resolve()
    assert opts.env.observation == "small"
    assert opts.env.queue_sensitivity == 0.03
    # Order as written: shortest's two core policies, then first's one.
    assert opts.env.action_names == [
        "shortest-high_gflops",
        "shortest-high_mem",
        "first-high_mem_bw",
    ]
    assert opts.agent.type == "LEARNING" and opts.agent.gamma == 0.95 and opts.agent.hidden == 128


def test_default_action_space_is_36_pairs_plus_void() -> None:
    doc = _with(
        {
            "env": {"actions": {"void": True}},
            "agent": {"type": "CLASSIC", "policy_pair": "random-random"},
        }
    )
    opts = options_from_json(doc, check_files=False)
    names = opts.env.action_names
    assert len(names) == 37
    assert names[0] == "random-random" and names[1] == "random-high_gflops"
    assert names[35] == "low_mem_bw-low_power" and names[36] == "void"


def test_thesis_classic_options_and_alias() -> None:
    # The original consequences experiment's options (thesis 5.3), with its objective alias.
    doc = {
        "seed": 20091995,
        "nb_resources": 2280,
        "nb_jobs": 100,
        "workload_file_path": "gaia.swf",
        "platform_file_path": "gaia.json",
        "pybatsim": {
            "log_level": "DEBUG",
            "env": {"objective": "avg_completion_time", "queue_sensitivity": 0.05},
            "agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"},
        },
    }
    opts = options_from_json(doc, check_files=False)
    assert opts.env.objective == "avg_job_completion"
    assert opts.agent.policy_pair == "shortest-high_gflops"
    assert opts.log_level == "DEBUG"


@pytest.mark.parametrize(
    ("mutate", "where", "fragment"),
    [
        (lambda d: d.update(sed=1), "sed", "did you mean 'seed'"),
        (
            lambda d: d["pybatsim"]["env"].update(objective="speed"),
            "pybatsim.env.objective",
            "allowed values: avg_job_slowdown, avg_job_completion, avg_utilization, makespan, "
            "energy_consumption, edp",
        ),
        (
            lambda d: d["pybatsim"]["env"].update(observation="tiny"),
            "pybatsim.env.observation",
            "allowed values: normal, small, minimal",
        ),
        (
            lambda d: d["pybatsim"]["env"]["actions"].update(selection=[{"longest": ["random"]}]),
            "pybatsim.env.actions.selection[0].longest",
            "unknown job policy 'longest'",
        ),
        (
            lambda d: d["pybatsim"]["env"]["actions"].update(selection=[{"first": ["high_flops"]}]),
            "pybatsim.env.actions.selection[0].first[0]",
            'got "high_flops"',
        ),
        (
            lambda d: d["pybatsim"]["agent"].update(type="SMART"),
            "pybatsim.agent.type",
            "allowed values: CLASSIC, LEARNING",
        ),
        (
            lambda d: d["pybatsim"]["agent"].update(gamma=1.5),
            "pybatsim.agent.gamma",
            "expected a number in [0, 1]",
        ),
        (
            lambda d: d["pybatsim"]["agent"].update(hidden="many"),
            "pybatsim.agent.hidden",
            'expected an integer, got "many"',
        ),
        (
            lambda d: d["pybatsim"].update(log_level="LOUD"),
            "pybatsim.log_level",
            "allowed values: DEBUG, INFO, WARNING, ERROR, CRITICAL",
        ),
        (lambda d: d.update(nb_jobs=0), "nb_jobs", "expected an integer >= 1, got 0"),
        (lambda d: d.pop("seed"), "seed", "missing required key"),
        (
            lambda d: d["pybatsim"]["env"].update(queue_sensitivity=0),
            "pybatsim.env.queue_sensitivity",
            "expected a number in (0, inf]",
        ),
    ],
)
def test_bad_values_name_key_and_allowed_values(mutate, where: str, fragment: str) -> None:
    doc = json.loads(json.dumps(THESIS_APPENDIX_F))
    mutate(doc)
    with pytest.raises(InputError) as info:
        options_from_json(doc, "/data/options.json", check_files=False)
    message = str(info.value)
    assert message.startswith(f"/data/options.json, {where}:"), message
    assert fragment in message


def test_classic_agent_needs_a_pair_inside_the_action_space() -> None:
    doc = _with({"agent": {"type": "CLASSIC"}})
    with pytest.raises(InputError, match="pybatsim.agent.policy_pair: missing"):
        options_from_json(doc, check_files=False)
    doc = _with({"agent": {"type": "CLASSIC", "policy_pair": "first-low_power"}})
    with pytest.raises(InputError, match="first-high_mem_bw"):
        # the message lists the configured actions, which do not include first-low_power
        options_from_json(doc, check_files=False)


def test_missing_files_are_reported_before_running(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_text(json.dumps(THESIS_APPENDIX_F))
    with pytest.raises(InputError, match="platform_file_path: file not found"):
        load_options(path)


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "options.json"
    path.write_text('{"seed": 1,\n "nb_jobs": }\n')
    with pytest.raises(InputError, match=r"options.json, line 2: invalid JSON"):
        load_options(path)


def test_synthetic_workload_excludes_a_trace() -> None:
    doc = _with(synthetic_workload={"nb_jobs": 200})
    with pytest.raises(InputError, match="either workload_file_path or synthetic_workload"):
        options_from_json(doc, check_files=False)
    doc["workload_file_path"] = ""
    opts = options_from_json(doc, check_files=False)
    assert opts.synthetic_workload is not None and opts.synthetic_workload.nb_jobs == 200
    assert opts.workload_file_path is None


def test_environment_variables_in_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, THESIS_APPENDIX_F)
    doc = _with(workload_file_path="${HDEEPRM_TEST_TRACES}/my_workload.swf")
    path = tmp_path / "options.json"
    path.write_text(json.dumps(doc))
    monkeypatch.delenv("HDEEPRM_TEST_TRACES", raising=False)
    with pytest.raises(InputError, match="environment variable HDEEPRM_TEST_TRACES is not set"):
        load_options(path)
    monkeypatch.setenv("HDEEPRM_TEST_TRACES", str(tmp_path / "workloads"))
    opts = load_options(path)
    assert opts.workload_file_path == tmp_path / "workloads" / "my_workload.swf"
