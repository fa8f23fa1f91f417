"""Property-based checks of two kinds of bad input:

* a workload field of the wrong type (any job or profile field) ends in one
  :class:`InputError` naming the file, the job and the key, never another exception;
* a path argument of ``hdeeprm-launch`` or ``hdeeprm-sim`` that is a symlink loop, a dangling
  symlink, a folder or a FIFO ends in exit code 2 and one line, before anything is simulated,
  and never hangs (an alarm fails the example instead).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdeeprm.cli import launch, sim
from hdeeprm.errors import InputError
from hdeeprm.platform import load_platform
from hdeeprm.platform.simgrid import platform_xml
from hdeeprm.workload import load_workload
from hdeeprm.workload.model import PROFILE_NUMBERS

REPO = Path(__file__).resolve().parents[1]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
THESIS_WORKLOAD = REPO / "thesis_experiments" / "learning" / "workload.json"

PROPERTY = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# --------------------------------------------------------------------------- workload fields

WORKLOAD = {
    "nb_res": 4,
    "jobs": [
        {"id": "a", "subtime": 0, "res": 1, "profile": "wait", "walltime": 50},
        {
            "id": 7,
            "subtime": 2.5,
            "res": 2,
            "profile": "work",
            "gpus": 0,
            "workload_type": "compute",
        },
    ],
    "profiles": {
        "wait": {"type": "delay", "delay": 10, "mem": 10, "mem_bw": 1.5},
        "work": {
            "type": "parallel_homogeneous",
            "cpu": 1e9,
            "com": 0,
            "req_time": 5,
            "req_ops": 1e9,
            "mem": 1000,
            "mem_bw": 24,
        },
    },
}

text_with_units = st.sampled_from(["8 GB/s", "10", "1e3", "", "fast", "NaN", "-1"])
containers = st.one_of(st.lists(st.integers(), max_size=2), st.dictionaries(st.text(), st.none()))
not_a_number = st.one_of(text_with_units, st.text(max_size=6), st.booleans(), containers)
not_an_integer = st.one_of(
    not_a_number, st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != int(x))
)
#: For each field, values of a wrong type (or kind) for it.
WRONG: dict[str, st.SearchStrategy[Any]] = {
    "id": st.one_of(st.booleans(), containers, st.floats(), st.none(), st.just("")),
    "subtime": st.one_of(not_a_number, st.none()),
    "walltime": not_a_number,
    "res": st.one_of(not_an_integer, st.just(1.0), st.none()),
    "profile": st.one_of(st.integers(), st.booleans(), containers, st.none()),
    "gpus": st.one_of(not_an_integer, st.just(2.0), st.none()),
    "workload_type": st.one_of(st.integers(), st.booleans(), containers, st.none()),
    "type": st.one_of(st.integers(), st.booleans(), containers, st.none()),
    "delay": st.one_of(not_a_number, st.none()),
    "cpu": st.one_of(not_a_number, st.none()),
    "com": st.one_of(not_a_number, st.none()),
    "req_time": st.one_of(not_a_number, st.none()),
    "req_ops": st.one_of(not_a_number, st.none()),
    "mem": st.one_of(not_a_number, st.none()),
    "mem_bw": st.one_of(not_a_number, st.none()),
}
#: (job index, key) of every job field and (profile, key, the job using it) of every profile
#: field of WORKLOAD.
JOB_FIELDS = [(i, key) for i, job in enumerate(WORKLOAD["jobs"]) for key in job]
PROFILE_FIELDS = [
    (name, key, job["id"])
    for job in WORKLOAD["jobs"]
    for name in [job["profile"]]
    for key in WORKLOAD["profiles"][name]
]


@st.composite
def wrong_field(draw) -> tuple[dict, str, str, str | None]:
    """WORKLOAD with one field of the wrong type; also the JSON path of that field, its key
    and the id of the job the error must name (None for the id itself)."""
    doc = copy.deepcopy(WORKLOAD)
    if draw(st.booleans()):
        index, key = draw(st.sampled_from(JOB_FIELDS))
        doc["jobs"][index][key] = draw(WRONG[key])
        job = None if key == "id" else str(WORKLOAD["jobs"][index]["id"])
        return doc, f"jobs[{index}].{key}", key, job
    name, key, job_id = draw(st.sampled_from(PROFILE_FIELDS))
    doc["profiles"][name][key] = draw(WRONG[key])
    where = f"profiles.{name}" if key == "type" else f"profiles.{name}.{key}"
    return doc, where, key, str(job_id)


@PROPERTY
@given(case=wrong_field())
def test_a_workload_field_of_the_wrong_type_names_file_job_and_key(tmp_path: Path, case) -> None:
    doc, where, key, job = case
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as caught:
        load_workload(path)
    error = caught.value
    assert error.path == str(path)
    assert error.where is not None and error.where.startswith(where), error
    assert key in str(error)
    if job is not None:
        assert f"job {job!r}" in error.message, error


@PROPERTY
@given(
    key=st.sampled_from(sorted(PROFILE_NUMBERS)),
    value=st.one_of(not_a_number, st.floats(min_value=0, max_value=1e9)),
    index=st.sampled_from([0, 1]),
)
def test_a_profile_field_on_a_job_is_refused(tmp_path: Path, key: str, value, index: int) -> None:
    """hdeeprm reads ``mem``, ``mem_bw``, ``req_time`` and ``req_ops`` from the profile: on the
    job they would be silently ignored."""
    doc = copy.deepcopy(WORKLOAD)
    doc["jobs"][index][key] = value
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as caught:
        load_workload(path)
    job = doc["jobs"][index]
    assert caught.value.where == f"jobs[{index}].{key}"
    assert f"job {str(job['id'])!r}" in caught.value.message
    assert f"profiles.{job['profile']}.{key}" in caught.value.message


# --------------------------------------------------------------------------- path arguments


class Hang(Exception):
    """A command did not answer in time (it would have waited forever)."""


@contextlib.contextmanager
def no_hang(seconds: int = 30) -> Iterator[None]:
    def fire(signum, frame):  # noqa: ANN001, ARG001
        raise Hang(f"no answer in {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def bad_path(folder: Path, kind: str) -> Path:
    """A path of the given kind inside ``folder`` (created fresh)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bad_{kind}"
    if kind == "loop":
        os.symlink(folder / "bad_loop_b", path)
        os.symlink(path, folder / "bad_loop_b")
    elif kind == "dangling":
        os.symlink(folder / "nowhere", path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "file":
        path.write_text("not a folder\n")
    return path


KINDS = ("loop", "dangling", "folder", "fifo")

AGENT = """
import torch.nn.functional as F
from torch import nn

from hdeeprm.agents import PolicyLearningAgent


class Agent(PolicyLearningAgent):
    def __init__(self, gamma, action_size, observation_size):
        super().__init__(gamma)
        self.layer = nn.Linear(observation_size, action_size)

    def forward_policy(self, observation):
        return F.softmax(self.layer(observation), dim=1)
"""


def write_options(folder: Path, learning: bool, **paths: str) -> Path:
    agent = (
        {"type": "LEARNING", "policy_pair": "shortest-high_gflops"}
        if learning
        else {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"}
    )
    doc = {
        "seed": 7,
        "platform_file_path": str(LEARNING_PLATFORM),
        "pybatsim": {"log_level": "WARNING", "env": {"objective": "makespan"}, "agent": agent},
        **paths,
    }
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def assert_one_line_exit_2(result, name: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    errors = [line for line in lines if "rror" in line]
    assert len(errors) == 1, result.output
    assert name in errors[0], result.output


LAUNCH_ARGUMENTS = (
    "OPTIONS_FILE",
    "-cw",
    "-a",
    "-im",
    "-om",
    "-o",
    "platform_file_path",
    "workload_file_path",
)


@settings(PROPERTY, max_examples=len(LAUNCH_ARGUMENTS) * len(KINDS) * 2)
@given(argument=st.sampled_from(LAUNCH_ARGUMENTS), kind=st.sampled_from(KINDS))
def test_bad_paths_given_to_launch(tmp_path_factory, argument: str, kind: str) -> None:
    if argument == "-o" and kind == "folder":
        return  # a folder is what -o wants
    folder = tmp_path_factory.mktemp("launch")
    bad = bad_path(folder / "bad", kind)
    learning = argument in ("-a", "-im", "-om")
    agent = folder / "agent.py"
    agent.write_text(AGENT)
    in_options = {}
    if argument == "platform_file_path":
        in_options["platform_file_path"] = str(bad)
    elif argument == "workload_file_path":
        in_options["workload_file_path"] = str(bad)
    options = write_options(folder, learning, **in_options)
    args = [str(bad if argument == "OPTIONS_FILE" else options), "-q"]
    args += ["-o", str(bad if argument == "-o" else folder / "run")]
    if argument != "workload_file_path":
        args += ["-cw", str(bad if argument == "-cw" else THESIS_WORKLOAD)]
    if learning:
        args += ["-a", str(bad if argument == "-a" else agent)]
    if argument in ("-im", "-om"):
        args += [argument, str(bad)]
    with no_hang():
        result = CliRunner().invoke(launch.main, args)
    if argument == "-om" and kind != "folder":
        # A model is written atomically over whatever link or pipe has that name.
        assert result.exit_code in (0, 2), result.output
        assert "Traceback" not in result.output
        return
    assert_one_line_exit_2(result, bad.name)


@pytest.fixture(scope="module")
def sim_inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("sim")
    xml = folder / "platform.xml"
    xml.write_text(platform_xml(load_platform(LEARNING_PLATFORM)))
    return xml, THESIS_WORKLOAD


@settings(PROPERTY, max_examples=3 * (len(KINDS) + 1) * 2)
@given(argument=st.sampled_from(("-p", "-w", "-e")), kind=st.sampled_from((*KINDS, "file")))
def test_bad_paths_given_to_sim(tmp_path_factory, sim_inputs, argument: str, kind: str) -> None:
    """Every one is refused before the engine waits for a scheduler (none ever connects)."""
    if argument != "-e" and kind == "file":
        return  # a regular file is a valid input
    if argument == "-e" and kind == "folder":
        return  # a folder is where the outputs go: valid
    xml, workload = sim_inputs
    folder = tmp_path_factory.mktemp("simrun")
    bad = bad_path(folder, kind)
    args = ["-p", str(bad if argument == "-p" else xml)]
    args += ["-w", str(bad if argument == "-w" else workload)]
    args += ["-e", str(bad / "out") if argument == "-e" else str(folder / "out")]
    args += ["-q", "--timeout", "20", "-s", "tcp://127.0.0.1:1"]
    with no_hang():
        result = CliRunner().invoke(sim.main, args)
    assert_one_line_exit_2(result, bad.name)
