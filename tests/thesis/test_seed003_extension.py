"""thesis_experiments/extension: seed 003's scaling, energy/EDP and objective-change experiments.

Each experiment folder's options load and a short run of its reproduce script completes; the
committed inputs are what the generator writes; the fixed-pair values of the small scenarios
match values worked out by hand from the P-state model (docs/platform.md: P0 full speed and
power, P1 75 % speed at full power, P2 25 % power, P3 5 % power) and the per-core power of the
learning cores (40 W at 4 GFLOPS, 50 W at 4.4 GFLOPS).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "thesis_experiments" / "extension"
sys.path.insert(0, str(EXTENSION))

import common  # noqa: E402

from hdeeprm.options import load_options  # noqa: E402

JOB_FLOP = 21.0  # GFLOP per job


def _script(folder: str):
    """Import ``<folder>/reproduce.py`` under a unique module name."""
    spec = importlib.util.spec_from_file_location(
        f"s003_{folder}_reproduce", EXTENSION / folder / "reproduce.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("folder", ["scaling", "energy_edp", "objective_change", "workload_change"])
def test_options_load_as_the_paper_set_them(folder):
    options = load_options(EXTENSION / folder / "options.json")
    assert options.env.action_names == list(common.ACTIONS)
    assert options.env.observation == "minimal"
    assert options.env.reward == "thesis"
    assert (options.agent.type, options.agent.hidden, options.agent.lr, options.agent.gamma) == (
        "LEARNING",
        16,
        0.005,
        0.99,
    )
    assert options.platform_file_path.is_file()


def test_committed_inputs_are_the_generators_output():
    files = common.input_files()
    assert len(files) == (
        2 * len(common.BASIC_NODES)
        + 2 * len(common.HETERO_COPIES)
        + 3
        + 2 * len(common.WORKLOAD_CHANGE)
    )
    for path, document in files.items():
        assert path.read_text() == common.render(document), path.name


def test_platform_sizes():
    from hdeeprm.platform import load_platform

    big = load_platform(EXTENSION / "inputs" / "hetero_5632.platform.json")
    assert len(big.cores) == 5632
    assert len(load_platform(EXTENSION / "inputs" / "basic_2048.platform.json").cores) == 2048


def _pairs(platform: str, workload: str, objective: str, folder: str = "scaling"):
    options = common.scenario_options(
        EXTENSION / folder / "options.json", platform, objective=objective
    )
    return common.run_fixed_pairs(
        options, EXTENSION / "inputs" / f"{workload}.workload.json", common.temp_run_dir("t")
    )


def test_four_core_pairs_by_hand():
    """Two 24 GB/s jobs on two 32 GB/s dual-core processors (40 W and 50 W cores)."""
    pairs = _pairs("basic_4", "basic_4", "energy_consumption")
    fast_alone = JOB_FLOP / 4.4  # 4.7727 s
    # Spread (high_mem_bw): one job per processor, both at P0; the other core of each in P2.
    spread = (40 + 10 + 50 + 12.5) * fast_alone + (40 + 10 + 2.5 + 2.5) * (5.25 - fast_alone)
    # Both on the fast processor, over-subscribed (P1, 3.3 GFLOPS); slow cores idle (P3).
    fast = (2 * 50 + 2 * 2) * JOB_FLOP / 3.3
    # Both on the slow processor (low_power), P1 at 3 GFLOPS; fast cores in P3.
    slow = (2 * 40 + 2 * 2.5) * 7.0
    expected = {
        "high_gflops": (JOB_FLOP / 3.3, fast),
        "high_mem_bw": (5.25, spread),
        "low_power": (7.0, slow),
    }
    for name, result in pairs.items():
        makespan, energy = expected[name.split("-", 1)[1]]
        assert result.makespan == pytest.approx(makespan, rel=1e-9)
        assert result.energy == pytest.approx(energy, rel=1e-6)
        assert result.objective == pytest.approx(energy, rel=1e-6)
        assert result.ret == pytest.approx(-energy, rel=1e-6)  # one step: the thesis's -E
    assert common.optimal_pairs(pairs) == ["shortest-high_mem_bw", "first-high_mem_bw"]


def test_four_core_thesis_makespan_returns_by_hand():
    """The thesis's makespan reward is the GFLOPS delivered over the step's span (one step
    here): 42 GFLOP / 5.25 s spread, 2 x 3.3 packed fast, 2 x 3 packed slow."""
    pairs = _pairs("basic_4", "basic_4", "makespan")
    expected = {"high_mem_bw": 8.0, "high_gflops": 6.6, "low_power": 6.0}
    for name, result in pairs.items():
        assert result.ret == pytest.approx(expected[name.split("-", 1)[1]], rel=1e-9)


def test_heterogeneous_88_pairs_by_hand():
    """4 jobs on the 88-core platform: spreading keeps all processors out of P3, packing on
    the slow 16-core processor leaves 72 of the 88 cores in P3."""
    pairs = _pairs("hetero_88", "hetero_88", "energy_consumption")
    # low_power: 4 jobs on the 16-core slow processor (P1, 7 s): 4 x 40 W busy, 12 x 10 W
    # (P2), the 20-core processor 20 x 2 W and the 52 fast cores 52 x 2.5 W (P3).
    assert pairs["shortest-low_power"].energy == pytest.approx(
        (4 * 40 + 12 * 10 + 20 * 2 + 52 * 2.5) * 7.0, rel=1e-9
    )
    # high_mem_bw: one job per processor; fast jobs end at 21 / 4.4 s, slow ones at 5.25 s.
    fast_alone = JOB_FLOP / 4.4
    before = (40 + 15 * 10) + (40 + 19 * 10) + (50 + 23 * 12.5) + (50 + 27 * 12.5)
    after = (40 + 15 * 10) + (40 + 19 * 10) + 52 * 2.5
    assert pairs["shortest-high_mem_bw"].energy == pytest.approx(
        before * fast_alone + after * (5.25 - fast_alone), rel=1e-9
    )
    assert common.optimal_pairs(pairs) == ["shortest-low_power"]
    makespan = _pairs("hetero_88", "hetero_88", "makespan")
    assert common.optimal_pairs(makespan) == ["shortest-high_mem_bw", "first-high_mem_bw"]


def test_sequential_two_jobs_by_hand():
    """Second job at t = 10 s, after the first ended: each job runs alone on a slow core."""
    pairs = _pairs("basic_4", "two_jobs_sequential", "energy_consumption", "energy_edp")
    alone = (40 + 10 + 2 * 2.5) * 5.25  # job on a slow core, fast processor in P3
    idle = (2 * 2 + 2 * 2.5) * (10 - 5.25)
    assert pairs["shortest-low_power"].energy == pytest.approx(2 * alone + idle, rel=1e-9)
    edp = _pairs("basic_4", "two_jobs_sequential", "edp", "energy_edp")
    assert edp["shortest-low_power"].objective == pytest.approx(
        (2 * alone + idle) * 15.25, rel=1e-9
    )


def test_converged_at_reads_the_last_dip():
    run = common.TrainingRun(
        names=list(common.ACTIONS),
        probabilities=np.array(
            [
                [0.2, 0.2, 0.2, 0.2, 0.2],
                [0.0, 0.95, 0.0, 0.0, 0.05],
                [0.1, 0.5, 0.0, 0.0, 0.3],
                [0.0, 0.7, 0.0, 0.0, 0.3],
                [0.0, 0.99, 0.0, 0.0, 0.01],
            ]
        ),
        objectives=np.zeros(5),
        seconds=0.0,
    )
    both = ["shortest-high_mem_bw", "first-high_mem_bw"]
    assert run.converged_at(both) == 3  # episode 2 sums to 0.8
    assert run.converged_at(["shortest-high_mem_bw"]) == 4
    assert run.converged_at(["shortest-low_power"]) is None


def test_scaling_converges_on_four_cores():
    """The paper's basic experiment (4.2.1): the actor-critic prefers a high_mem_bw pair."""
    result = _script("scaling").run_scenario("basic_4", episodes=80, seeds=1, ppo_decisions=32)
    (run,) = result["runs"]
    at = run.converged_at(result["optimal"])
    assert at is not None and at < 80
    assert run.objectives[-1] == pytest.approx(5.25)
    assert len(result["ppo"]) == 1 and result["ppo"][0].frequencies.shape == (2, 5)


def test_scaling_script_prints_each_size(capsys):
    assert (
        _script("scaling").main(
            ["--sizes", "basic_8", "hetero_176", "--episodes", "2", "--seeds", "1"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "basic_8: 8 cores" in out and "hetero_176: 176 cores" in out
    assert out.count("<- optimal") == 4


def test_energy_edp_script_short_run(capsys):
    assert (
        _script("energy_edp").main(
            ["--part", "small", "--episodes", "2", "--seeds", "1", "--ppo-decisions", "16"]
        )
        == 0
    )
    out = capsys.readouterr().out
    for name in common.TWO_JOB_WORKLOADS:
        assert f"two_jobs_{name}: objective energy_consumption" in out
        assert f"two_jobs_{name}: objective edp" in out
    assert out.count("PPO, 16 decisions x 1 seeds: greedy action optimal in") == 6


def test_objective_change_both_modes_short_run():
    """Four phases, reset and continue (the continue mode carries the checkpoint from one
    objective to the next)."""
    script = _script("objective_change")
    for mode in ("reset", "continue"):
        runs = script.run_seed("hetero_88", 0, mode, phase_episodes=2)
        assert len(runs) == len(script.PHASES)
        assert [r.probabilities.shape for r in runs] == [(2, 5)] * 4
    # makespan phases report seconds, energy phases joules
    assert runs[1].objectives.max() <= 7.0 and runs[0].objectives.min() > 1000
