"""Training runs: episodes, logs, checkpoints, determinism, the thesis 5.4 convergence."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest
import torch
from rl_helpers import THESIS_DIR, THESIS_SELECTION, random_jobs, write_options, write_workload

from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training import load_checkpoint, log_header, run_learning, save_checkpoint

REPO = Path(__file__).resolve().parents[2]
REINFORCE = REPO / "agent_examples" / "reinforce.py"
ACTOR_CRITIC = REPO / "agent_examples" / "actor_critic.py"


def thesis_inputs(run_dir: Path, **changes):
    options = load_options(THESIS_DIR / "options.json")
    if changes:
        agent = dataclasses.replace(options.agent, **changes.pop("agent", {}))
        options = dataclasses.replace(options, agent=agent, **changes)
    return prepare_inputs(options, run_dir, custom_workload=THESIS_DIR / "workload.json")


def read_log(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("agent_file", [REINFORCE, ACTOR_CRITIC])
def test_examples_train_on_a_multi_step_workload(tmp_path: Path, agent_file: Path) -> None:
    options = write_options(
        tmp_path / "opt", objective="avg_job_slowdown", observation="small", void=True
    )
    workload = write_workload(tmp_path / "wl", random_jobs(25, seed=2))
    inputs = prepare_inputs(load_options(options), tmp_path / "run", custom_workload=workload)
    result = run_learning(
        inputs,
        agent_file=agent_file,
        in_model=None,
        out_model=tmp_path / "m.pt",
        nb_runs=3,
        progress=False,
    )
    rows = read_log(tmp_path / "run" / "training_log.csv")
    assert [r["episode"] for r in rows] == ["0", "1", "2"]
    assert list(rows[0]) == log_header(result.action_names)
    assert all(int(r["steps"]) > 1 for r in rows)
    probs = [float(v) for k, v in rows[-1].items() if k.startswith("prob_")]
    assert len(probs) == 37 and sum(probs) == pytest.approx(1.0, abs=1e-5)
    assert (tmp_path / "run" / "out_jobs.csv").is_file()  # Batsim outputs of the last episode
    assert "preferred action" in result.summary()


def test_same_seed_same_training(tmp_path: Path) -> None:
    logs = []
    for name in ("a", "b"):
        run_learning(
            thesis_inputs(tmp_path / name),
            agent_file=REINFORCE,
            in_model=None,
            out_model=None,
            nb_runs=20,
            progress=False,
            write_outputs=False,
        )
        logs.append((tmp_path / name / "training_log.csv").read_text())
    assert logs[0] == logs[1]


def test_checkpoint_round_trip_and_continuation(tmp_path: Path) -> None:
    run = tmp_path / "run"
    model = tmp_path / "model.pt"
    run_learning(
        thesis_inputs(run),
        agent_file=REINFORCE,
        in_model=None,
        out_model=model,
        nb_runs=5,
        progress=False,
        write_outputs=False,
    )
    state = torch.load(model, weights_only=True)
    assert state["episodes"] == 5 and state["optimizer"]["state"]  # Adam moments saved

    # load into a fresh agent + optimiser: every tensor equal
    from hdeeprm.agents import build_agent

    inputs = thesis_inputs(run)
    agent = build_agent(REINFORCE, inputs.options.agent, observation_size=21, action_size=5)
    optimizer = agent.configure_optimizer(0.005)
    episodes = load_checkpoint(
        model, agent, optimizer, action_names=state["action_names"], observation_size=21
    )
    assert episodes == 5
    for key, tensor in state["model"].items():
        assert torch.equal(agent.state_dict()[key], tensor)
    for key, moments in state["optimizer"]["state"].items():
        for name, tensor in moments.items():
            assert torch.equal(optimizer.state_dict()["state"][key][name], tensor)

    # continue training: episodes 5..7 appended to the same log, model count 8
    result = run_learning(
        inputs,
        agent_file=REINFORCE,
        in_model=model,
        out_model=model,
        nb_runs=3,
        progress=False,
        write_outputs=False,
    )
    assert result.first_episode == 5
    rows = read_log(run / "training_log.csv")
    assert [int(r["episode"]) for r in rows] == list(range(8))
    assert torch.load(model, weights_only=True)["episodes"] == 8


def test_test_run_changes_nothing(tmp_path: Path) -> None:
    model = tmp_path / "model.pt"
    run_learning(
        thesis_inputs(tmp_path / "train"),
        agent_file=REINFORCE,
        in_model=None,
        out_model=model,
        nb_runs=3,
        progress=False,
        write_outputs=False,
    )
    before = torch.load(model, weights_only=True)["model"]
    out = tmp_path / "after.pt"
    run_learning(
        thesis_inputs(tmp_path / "test", agent={"run": "test"}),
        agent_file=REINFORCE,
        in_model=model,
        out_model=out,
        nb_runs=3,
        progress=False,
        write_outputs=False,
    )
    after = torch.load(out, weights_only=True)["model"]
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_mismatched_model_is_a_clear_error(tmp_path: Path) -> None:
    model = tmp_path / "model.pt"
    run_learning(
        thesis_inputs(tmp_path / "a"),
        agent_file=REINFORCE,
        in_model=None,
        out_model=model,
        nb_runs=1,
        progress=False,
        write_outputs=False,
    )
    options = write_options(tmp_path / "opt", selection=[{"first": ["high_gflops"]}])
    inputs = prepare_inputs(
        load_options(options), tmp_path / "b", custom_workload=THESIS_DIR / "workload.json"
    )
    with pytest.raises(InputError, match="trained with actions") as info:
        run_learning(
            inputs, agent_file=REINFORCE, in_model=model, out_model=None, nb_runs=1, progress=False
        )
    assert info.value.path == str(model)
    with pytest.raises(InputError, match="actor-critic|agent class"):
        run_learning(
            thesis_inputs(tmp_path / "c"),
            agent_file=ACTOR_CRITIC,
            in_model=model,
            out_model=None,
            nb_runs=1,
            progress=False,
        )
    with pytest.raises(InputError) as info:
        run_learning(
            thesis_inputs(tmp_path / "f", agent={"hidden": 7}),
            agent_file=REINFORCE,
            in_model=model,
            out_model=None,
            nb_runs=1,
            progress=False,
        )
    assert "(option hidden, pybatsim.agent.hidden)" in str(info.value)
    assert "this run asks for 7" in str(info.value)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a model")
    with pytest.raises(InputError, match="not a readable hdeeprm model"):
        run_learning(
            thesis_inputs(tmp_path / "d"),
            agent_file=REINFORCE,
            in_model=junk,
            out_model=None,
            nb_runs=1,
            progress=False,
        )
    with pytest.raises(InputError, match="-a AGENT.py"):
        run_learning(
            thesis_inputs(tmp_path / "e"),
            agent_file=None,
            in_model=None,
            out_model=None,
            nb_runs=1,
            progress=False,
        )


def test_save_checkpoint_leaves_no_temporary_file(tmp_path: Path) -> None:
    from hdeeprm.agents import build_agent

    agent = build_agent(REINFORCE, {"gamma": 0.9, "hidden": 4}, observation_size=3, action_size=2)
    save_checkpoint(
        tmp_path / "m.pt", agent, None, episodes=0, action_names=["a", "b"], observation_size=3
    )
    assert [p.name for p in tmp_path.iterdir()] == ["m.pt"]


def test_thesis_5_4_reinforce_converges(tmp_path: Path) -> None:
    # Thesis 5.4: REINFORCE must prefer a high_mem_bw action (spreading the two jobs) with
    # probability above 0.9 within 350 single-step episodes.
    seen: list[float] = []
    result = run_learning(
        thesis_inputs(tmp_path),
        agent_file=REINFORCE,
        in_model=None,
        out_model=None,
        nb_runs=350,
        progress=False,
        write_outputs=False,
        on_episode=lambda e: seen.append(max(e.probabilities[1], e.probabilities[4])),
    )
    assert result.action_names[1] == "shortest-high_mem_bw"
    assert result.action_names[4] == "first-high_mem_bw"
    assert max(seen) > 0.9
    last = result.episodes[-1]
    assert last.total_reward == pytest.approx(8.0)  # spread: 42 GFLOP over 5.25 s
    assert last.objective == pytest.approx(5.25)


def test_selection_helper_matches_thesis_file() -> None:
    options = load_options(THESIS_DIR / "options.json")
    assert [f"{j}-{c}" for j, c in options.env.selection] == [
        f"{j}-{c}" for entry in THESIS_SELECTION for j, cs in entry.items() for c in cs
    ]
