"""Bad inputs given to the console scripts end in exit code 2 and one line naming the file,
the key or line and the fix: a workload field of the wrong type, an error in a user's agent
code, a symlink loop, an export prefix under a regular file, hosts a platform does not have."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from click.testing import CliRunner

from hdeeprm.cli import launch, sim
from hdeeprm.platform import load_platform
from hdeeprm.platform.simgrid import platform_xml

REPO = Path(__file__).resolve().parents[1]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
THESIS = REPO / "thesis_experiments" / "learning"


def one_error_line(result) -> str:
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def classic_options(folder: Path) -> Path:
    doc = {
        "seed": 7,
        "platform_file_path": str(LEARNING_PLATFORM),
        "pybatsim": {
            "env": {"objective": "makespan"},
            "agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"},
        },
    }
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_bandwidth_with_a_unit_names_file_job_and_key(tmp_path: Path) -> None:
    doc = json.loads((THESIS / "workload.json").read_text())
    doc["profiles"][doc["jobs"][1]["profile"]]["mem_bw"] = "8 GB/s"
    workload = tmp_path / "custom.json"
    workload.write_text(json.dumps(doc))
    args = [str(classic_options(tmp_path)), "-cw", str(workload), "-o", str(tmp_path / "run")]
    line = one_error_line(CliRunner().invoke(launch.main, args))
    assert not (tmp_path / "run" / "platform.xml").exists()  # refused before writing
    assert line.startswith(f"error: {workload}, profiles.job_2.mem_bw: job '2' ")
    assert "'8 GB/s'" in line and "without quotes or unit" in line


AGENTS = {
    "raises": (
        "    def forward_policy(self, observation):\n"
        "        table = {}\n"
        "        return table['x']\n",
        "line 13: agent MyAgent.forward_policy raised KeyError('x') in `return table['x']`",
    ),
    "list": (
        "    def forward_policy(self, observation):\n        return [0.2] * 5\n",
        "class MyAgent: MyAgent.forward_policy returned a list: expected a torch.Tensor",
    ),
    "value_only": (
        "    def forward_value(self, observation):\n"
        "        return self.layer(observation)[:, :1]\n",
        "class MyAgent: agent MyAgent does not implement decide: an agent with only a value head",
    ),
}
AGENT_HEAD = """from torch import nn

from hdeeprm.agents import PolicyLearningAgent, ValueLearningAgent


class MyAgent({base}):
    def __init__(self, gamma, action_size, observation_size):
        super().__init__(gamma)
        self.layer = nn.Linear(observation_size, action_size)

"""


def run_agent(tmp_path: Path, case: str) -> str:
    body, _ = AGENTS[case]
    base = "ValueLearningAgent" if case == "value_only" else "PolicyLearningAgent"
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT_HEAD.format(base=base) + body)
    args = [str(THESIS / "options.json"), "-cw", str(THESIS / "workload.json")]
    args += ["-o", str(tmp_path / "run"), "-a", str(agent), "-q"]
    line = one_error_line(CliRunner().invoke(launch.main, args))
    assert line.startswith(f"error: {agent}, "), line
    assert not (tmp_path / "run" / "training_log.csv").exists()
    return line


def test_an_exception_in_the_users_forward_policy(tmp_path: Path) -> None:
    assert AGENTS["raises"][1] in run_agent(tmp_path, "raises")


def test_forward_policy_returning_a_list(tmp_path: Path) -> None:
    assert AGENTS["list"][1] in run_agent(tmp_path, "list")


def test_an_agent_with_only_a_value_head(tmp_path: Path) -> None:
    assert AGENTS["value_only"][1] in run_agent(tmp_path, "value_only")


def test_a_custom_workload_that_is_a_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    os.symlink(tmp_path / "other", loop)
    os.symlink(loop, tmp_path / "other")
    args = [str(classic_options(tmp_path)), "-cw", str(loop), "-o", str(tmp_path / "run")]
    line = one_error_line(CliRunner().invoke(launch.main, args))
    assert line == f"error: {loop}: workload file (-cw) is a symbolic link loop; point it at a " + (
        "regular file"
    )


def test_sim_refuses_an_export_prefix_under_a_file_before_simulating(tmp_path: Path) -> None:
    """No scheduler is listening: the check must come before the engine waits for one."""
    xml = tmp_path / "platform.xml"
    xml.write_text(platform_xml(load_platform(LEARNING_PLATFORM)))
    blocker = tmp_path / "DIR"
    blocker.write_text("a regular file\n")
    args = ["-p", str(xml), "-w", str(THESIS / "workload.json"), "-e", str(blocker / "out")]
    args += ["-q", "--timeout", "30", "-s", "tcp://127.0.0.1:1"]
    line = one_error_line(CliRunner().invoke(sim.main, args))
    assert line == (
        f"hdeeprm-sim: error: {blocker}: cannot create the folder: a file with that name exists"
    )


def test_other_scripts_refuse_a_fifo_instead_of_waiting(tmp_path: Path) -> None:
    """hdeeprm-jobstat, hdeeprm-sweep and hdeeprm-visual --workload: exit 2 at once (an alarm
    fails the test if one of them waits for a writer)."""
    from hdeeprm.cli import jobstat, sweep, visual

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    calls = [
        (jobstat.main, [str(fifo), "req_time", "mean"]),
        (sweep.main, [str(fifo), "--list"]),
        (visual.main, [str(tmp_path), "mem_bubbles", "--workload", str(fifo), "-s", "x.png"]),
    ]
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.alarm(60)
    try:
        for command, args in calls:
            result = CliRunner().invoke(command, args)
            assert result.exit_code == 2, result.output
            assert "is a FIFO (named pipe)" in result.output and str(fifo) in result.output
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
