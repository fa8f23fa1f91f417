"""thesis_experiments/extension: seed 003's realistic experiments (4.4.1 Gaia, 4.4.3 workload
change).

Pair values worked out by hand from the P-state model (docs/platform.md: P0 full speed and
power, P1 75 % speed at full power, P2 25 % power, P3 5 % power; a parallel job runs at the
pace of its slowest core and holds all its cores until it ends).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "thesis_experiments" / "extension"
sys.path.insert(0, str(EXTENSION))

import common  # noqa: E402

from hdeeprm.options import load_options  # noqa: E402


def _script(folder: str):
    spec = importlib.util.spec_from_file_location(
        f"s003_{folder}_reproduce_realistic", EXTENSION / folder / "reproduce.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- 4.4.3 workload change -----------------------------------------------------------------
def test_workload_change_options_and_inputs():
    options = load_options(EXTENSION / "workload_change" / "options.json")
    assert options.env.objective == "edp" and options.env.reward == "thesis"
    assert (options.agent.hidden, options.agent.lr, options.agent.gamma) == (16, 0.005, 0.99)
    # basic_4 as the other folders' options (real Batsim runs it); the script swaps in basic_8
    assert options.platform_file_path.name == "basic_4.platform.json"
    for name, jobs, seconds, mem_bw in [
        ("change_a_8", 2, 5.0, 24.0),
        ("change_b_8", 2, 40.0, 4.0),
        ("change_a_2816", 128, 1.0, 24.0),
        ("change_b_2816", 128, 40.0, 4.0),
    ]:
        document = json.loads((EXTENSION / "inputs" / f"{name}.workload.json").read_text())
        assert len(document["jobs"]) == jobs
        assert {job["subtime"] for job in document["jobs"]} == {0.0}
        (profile,) = document["profiles"].values()
        assert profile["cpu"] == pytest.approx(seconds * 4.2e9)
        assert (profile["req_time"], profile["mem_bw"]) == (seconds, mem_bw)


def test_workload_change_pairs_by_hand():
    """8 cores: two nodes, each a slow (4 GFLOPS, 40 W per core) and a fast (4.4 GFLOPS,
    50 W) dual-core processor, 32 GB/s each; two one-core jobs at t = 0, objective EDP."""
    pairs = _script("workload_change").fixed_pairs("basic_8")
    # Workload a: 21 GFLOP at 24 GB/s. Two on one processor over-subscribe it (P1).
    a = pairs["a"]
    idle_other_node = 2 * 2 + 2 * 2.5  # the second node in P3
    slow = (2 * 40 + 2 * 2.5 + idle_other_node) * 7.0  # both on a slow processor, 3 GFLOPS
    fast_time = 21 / 3.3
    fast = (2 * 50 + 2 * 2 + idle_other_node) * fast_time
    fast_alone = 21 / 4.4  # spread: one job per processor of node 0
    spread = (40 + 10 + 50 + 12.5 + idle_other_node) * fast_alone + (
        40 + 10 + 2 * 2.5 + idle_other_node
    ) * (5.25 - fast_alone)
    assert a["shortest-low_power"].objective == pytest.approx(slow * 7.0, rel=1e-9)
    assert a["shortest-high_gflops"].objective == pytest.approx(fast * fast_time, rel=1e-9)
    assert a["shortest-high_mem_bw"].objective == pytest.approx(spread * 5.25, rel=1e-9)
    assert common.optimal_pairs(a) == ["shortest-high_mem_bw", "first-high_mem_bw"]
    # Workload b: 168 GFLOP at 4 GB/s: never over-subscribed.
    b = pairs["b"]
    slow = (80 + 2 * 2.5 + idle_other_node) * 42.0  # the slow processor's cores both busy
    fast_time = 168 / 4.4
    fast = (100 + 2 * 2 + idle_other_node) * fast_time
    assert b["shortest-low_power"].objective == pytest.approx(slow * 42.0, rel=1e-9)
    assert b["shortest-high_gflops"].objective == pytest.approx(fast * fast_time, rel=1e-9)
    assert b["shortest-high_mem_bw"].makespan == pytest.approx(42.0)
    assert common.optimal_pairs(b) == ["shortest-high_gflops", "first-high_gflops"]


def test_continue_keeps_the_agent_across_the_change():
    """After 60 episodes on workload a the agent prefers a high_mem_bw pair; ``continue``
    starts workload b with that preference, ``reset`` with a new agent."""
    script = _script("workload_change")
    kept = script.run_seed("basic_8", 0, "continue", [60, 1, 1, 1])
    fresh = script.run_seed("basic_8", 0, "reset", [60, 1, 1, 1])
    spread = ["shortest-high_mem_bw", "first-high_mem_bw"]
    assert kept[0].optimal_probability(spread)[-1] > 0.9
    assert (kept[0].probabilities == fresh[0].probabilities).all()  # same seed, same phase 1
    assert kept[1].optimal_probability(spread)[0] > 0.9
    assert fresh[1].optimal_probability(spread)[0] < 0.6


def test_workload_change_script_short_run(capsys):
    assert _script("workload_change").main(["--phase-episodes", "2", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "basic_8: workload a" in out and "basic_8: workload b" in out
    assert out.count("<- optimal") == 4
    for mode in ("continue", "reset"):
        assert f"mode {mode}: phases of 2/2/2/2 episodes x 1 seeds" in out
    assert out.count("workload b, optimal shortest-high_gflops/first-high_gflops") == 4


# --- 4.4.1 Gaia ----------------------------------------------------------------------------
@pytest.fixture
def gaia(gaia_trace, monkeypatch):
    monkeypatch.setenv("HDEEPRM_TRACES", str(gaia_trace.parent))
    return _script("gaia")


def test_gaia_options_as_the_paper(gaia):
    options = load_options(EXTENSION / "gaia" / "options.json")
    assert (options.nb_jobs, options.start_job, options.nb_resources) == (932, 4, 2280)
    assert options.env.objective == "makespan" and options.env.reward == "thesis"
    assert options.env.action_names == list(common.ACTIONS)
    assert options.agent.lr == 0.005
    assert options.platform_file_path == (REPO / "platform_examples" / "gaia.json").resolve()


def test_gaia_single_job_by_hand(gaia):
    """The first job of the window: 24 cores at 19.69 GB/s each (the bandwidth drawn for this
    one-job window), 3.58e15 flop per core. ``high_gflops`` and ``low_power`` both take the
    Xeon E7-8880 v2 (20 GFLOPS and 6.5 W per core, the fastest and the most frugal core of
    Gaia): 15 + 9 tasks over-subscribe its 85 GB/s, so P1 at 15 GFLOPS. ``high_mem_bw`` puts
    two tasks on each of the 8 E7-8880 v2 (85 GB/s) and one on 8 of the 16 E5-4650 v2
    (59.7 GB/s, 19.2 GFLOPS, 7.125 W): the job runs at 19.2 GFLOPS."""
    options = gaia.gaia_options(1, 4)
    workload = common.convert_trace(options, common.temp_run_dir("t-gaia"))
    (job,) = json.loads(workload.read_text())["jobs"]
    (profile,) = json.loads(workload.read_text())["profiles"].values()
    assert (job["res"], profile["mem_bw"]) == (24, 19.69)
    flop = profile["cpu"]
    pairs = common.run_fixed_pairs(options, workload, common.temp_run_dir("t-gaia"))
    idle = 0.05 * 21217.5  # the whole platform in P3 (21,217.5 W at full load)
    packed = flop / 15e9
    # 24 busy E7 cores, 6 idle ones (P2) on the second processor.
    packed_w = 24 * 6.5 + 6 * 6.5 * 0.25 + idle - 0.05 * 2 * 97.5
    assert pairs["shortest-low_power"].makespan == pytest.approx(packed, rel=1e-9)
    assert pairs["shortest-high_gflops"].energy == pytest.approx(packed_w * packed, rel=1e-9)
    spread = flop / 19.2e9
    e7 = 8 * (2 * 6.5 + 13 * 6.5 * 0.25)
    sgi = 8 * (7.125 + 9 * 7.125 * 0.25)
    spread_w = e7 + sgi + idle - 0.05 * (8 * 97.5 + 8 * 71.25)
    assert pairs["shortest-high_mem_bw"].makespan == pytest.approx(spread, rel=1e-9)
    assert pairs["first-high_mem_bw"].energy == pytest.approx(spread_w * spread, rel=1e-9)
    assert common.optimal_pairs(pairs) == ["shortest-high_mem_bw", "first-high_mem_bw"]


def test_gaia_script_short_run(gaia, capsys):
    assert (
        gaia.main(["--jobs", "20", "--episodes", "2", "--seeds", "1", "--bandwidth-seeds", "1"])
        == 0
    )
    out = capsys.readouterr().out
    assert "gaia (2,280 cores), 20 jobs numbered 5-24 in the trace" in out
    # the window and one bandwidth redraw
    assert out.count("shortest-low_power       objective") == 2
    assert "bandwidth draw 1: optimal" in out
    assert "actor-critic (thesis rewards), 2 episodes x 1 seeds" in out
    assert "shortest-low_power alone:" in out


def test_gaia_script_names_a_missing_trace_folder(tmp_path, capsys):
    assert _script("gaia").main(["--traces", str(tmp_path)]) == 2
    assert f"no UniLu-Gaia-2014-1.swf.gz in {tmp_path}" in capsys.readouterr().err
