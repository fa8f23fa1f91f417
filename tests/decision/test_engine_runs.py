"""End-to-end runs of the workload manager on the embedded engine, outputs checked."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from decision_helpers import make_platform

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.simulation import simulate
from hdeeprm.workload.model import JobSpec, Profile, Workload

REPO = Path(__file__).resolve().parents[2]


def _workload(jobs: list[tuple[str, float, int, float, dict]], name: str = "w0") -> Workload:
    """jobs: (id, subtime, res, cpu flops per core, extra profile fields)."""
    specs, profiles = [], {}
    for jid, subtime, res, cpu, extra in jobs:
        profiles[f"p{jid}"] = Profile(f"p{jid}", "parallel_homogeneous", cpu=cpu, extra=extra)
        specs.append(JobSpec(jid, subtime, res, f"p{jid}"))
    return Workload(max(r for _, _, r, _, _ in jobs), specs, profiles, name)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _run(platform, workload: Workload, pair: str, out: Path, selection=None, seed: int = 0):
    xml = out / "platform.xml"
    write_platform_xml(platform, xml)
    actions = ActionSpace(selection, void=True)
    manager = WorkloadManager(platform, actions, FixedPair(actions, pair), seed=seed)
    result = simulate(xml, workload, manager, out)
    return manager, result


LEARNING_PAIRS = [
    ("shortest", "high_gflops"),
    ("shortest", "high_mem_bw"),
    ("shortest", "low_power"),
    ("first", "high_gflops"),
    ("first", "high_mem_bw"),
]


@pytest.mark.parametrize(
    ("pair", "alloc", "finish"),
    [
        # both on the 4 GFLOPS processor (40 W per core < 50 W): 48 > 32 GB/s -> P1, 75% speed:
        # 20 GFLOP / (0.75 x 4 GFLOPS) = 6.667 s for both
        ("shortest-low_power", ["0", "1"], [20 / 3.0, 20 / 3.0]),
        # both on the 4.4 GFLOPS processor in P1: 20 / 3.3 = 6.061 s
        ("shortest-high_gflops", ["2", "3"], [20 / 3.3, 20 / 3.3]),
        # spread: core 0 at 4 GFLOPS (5 s) and core 2 at 4.4 GFLOPS (4.545 s)
        ("first-high_mem_bw", ["0", "2"], [5.0, 20 / 4.4]),
    ],
)
def test_thesis_5_4_on_the_engine(tmp_path: Path, pair: str, alloc, finish) -> None:
    platform = load_platform(REPO / "platform_examples" / "learning.json")
    assert [c.peak_gflops for c in platform.cores] == pytest.approx([4.0, 4.0, 4.4, 4.4])
    # two one-core jobs at t=0, 24 GB/s each, 5 s at 4 GFLOPS = 20 GFLOP
    extra = {"req_time": 5.0, "mem": 1000.0, "mem_bw": 24.0}
    workload = _workload([("1", 0.0, 1, 20e9, extra), ("2", 0.0, 1, 20e9, extra)])
    manager, result = _run(platform, workload, pair, tmp_path, LEARNING_PAIRS)
    rows = sorted(_rows(tmp_path / "out_jobs.csv"), key=lambda r: r["job_id"])
    assert [r["allocated_resources"] for r in rows] == alloc
    assert [float(r["finish_time"]) for r in rows] == pytest.approx(finish, rel=1e-6)
    assert result.makespan == pytest.approx(max(finish), rel=1e-6)
    assert manager.nb_decisions == 1 and manager.nb_completed == 2
    over = alloc[0] != "0" or alloc[1] != "2"
    assert len(manager.episodes) == (1 if over else 0)
    if over:
        assert manager.episodes[0][1:] == [0.0, pytest.approx(max(finish), rel=1e-6)]


def test_consolidation_saves_energy_spreading_saves_time(tmp_path: Path) -> None:
    platform = load_platform(REPO / "platform_examples" / "learning.json")
    extra = {"req_time": 5.0, "mem": 1000.0, "mem_bw": 24.0}
    workload = _workload([("1", 0.0, 1, 20e9, extra), ("2", 0.0, 1, 20e9, extra)])
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, packed = _run(platform, workload, "shortest-low_power", tmp_path / "a", LEARNING_PAIRS)
    _, spread = _run(platform, workload, "first-high_mem_bw", tmp_path / "b", LEARNING_PAIRS)
    # packed: 2 x 40 W (P1) + 2 x 2.5 W (P3 of 50 W) for 6.667 s = 85 x 6.667 = 566.7 J
    assert packed.consumed_energy == pytest.approx(85.0 * 20 / 3.0, rel=1e-6)
    # spread: 0 - 4.545 s: 40 + 10 (P2) + 50 + 12.5 (P2) = 112.5 W -> 511.36 J;
    #         4.545 - 5 s: 40 + 10 + 2.5 + 2.5 (proc 1 idle, P3) = 55 W -> 25 J
    t1 = 20 / 4.4
    assert spread.consumed_energy == pytest.approx(112.5 * t1 + 55.0 * (5.0 - t1), rel=1e-6)
    assert spread.makespan < packed.makespan


def test_queue_blocking_and_releases_on_the_engine(tmp_path: Path) -> None:
    # one node (8 GB), one dual-core processor at 1 GFLOPS, 100 GB/s
    platform = make_platform([(8.0, [(1.0, 1.0, 100.0, 20.0, 2)])])
    workload = _workload(
        [
            ("a", 0.0, 1, 4e9, {"req_time": 4.0, "mem": 1000.0}),  # 4 s
            ("b", 1.0, 2, 2e9, {"req_time": 2.0, "mem": 1000.0}),  # needs both cores
            ("c", 2.0, 1, 1e9, {"req_time": 1.0, "mem": 1000.0}),  # waits behind b (first)
            ("d", 2.0, 1, 1e9, {"req_time": 1.0, "mem": 7000.0}),  # node memory: waits too
        ]
    )
    manager, _ = _run(platform, workload, "first-high_gflops", tmp_path)
    rows = {r["job_id"]: r for r in _rows(tmp_path / "out_jobs.csv")}
    # a: 0-4; b: 4-6 (both cores); c and d: 6-7 side by side (1000 + 7000 MB = 8 GB)
    assert {j: (float(r["starting_time"]), float(r["finish_time"])) for j, r in rows.items()} == {
        "a": (0.0, 4.0),
        "b": (4.0, 6.0),
        "c": (6.0, 7.0),
        "d": (6.0, 7.0),
    }
    assert rows["b"]["allocated_resources"] == "0-1"
    changes = _rows(tmp_path / "out_pstate_changes.csv")
    assert changes  # P-states were switched on the engine side
    assert manager.stats()["completed"] == 4 and manager.pool.pstate == [3, 3]


def test_rejected_job_reported_by_the_engine(tmp_path: Path) -> None:
    platform = make_platform([(8.0, [(1.0, 1.0, 100.0, 20.0, 2)])])
    workload = _workload(
        [("ok", 0.0, 1, 1e9, {"mem": 1000.0}), ("fat", 0.0, 1, 1e9, {"mem": 9000.0})]
    )
    manager, _ = _run(platform, workload, "first-high_gflops", tmp_path)
    rows = {r["job_id"]: r for r in _rows(tmp_path / "out_jobs.csv")}
    assert rows["fat"]["final_state"] == "REJECTED"
    assert rows["ok"]["final_state"] == "COMPLETED_SUCCESSFULLY"
    assert manager.rejected == ["w0!fat"]


def test_void_then_wakeup_on_the_engine(tmp_path: Path) -> None:
    # the void agent never schedules; a scripted agent voids twice, then schedules
    platform = make_platform([(8.0, [(1.0, 1.0, 100.0, 20.0, 2)])])
    workload = _workload([("a", 0.0, 1, 1e9, {})])
    xml = tmp_path / "platform.xml"
    write_platform_xml(platform, xml)
    actions = ActionSpace([("first", "high_gflops")], void=True)

    class Scripted:
        def __init__(self) -> None:
            self.script = [1, 1, 0]

        def observe(self, env):
            return None

        def decide(self, observation) -> int:
            return self.script.pop(0)

    manager = WorkloadManager(platform, actions, Scripted(), void_wakeup=2.5)
    simulate(xml, workload, manager, tmp_path)
    row = _rows(tmp_path / "out_jobs.csv")[0]
    # t=0: the only job arrives with the "no more jobs" notice; void with nothing running ->
    # call at 2.5; void again -> call at 5.0; the pair starts it at 5.0 and it ends at 6.0
    # (1 GFLOP at 1 GFLOPS)
    assert float(row["starting_time"]) == 5.0 and float(row["finish_time"]) == 6.0
    assert manager.action_counts == [1, 2]


def test_same_seed_same_outputs(tmp_path: Path) -> None:
    platform = load_platform(REPO / "platform_examples" / "learning.json")
    jobs = [
        (
            str(i),
            float(i // 3),
            1 + i % 2,
            4e9 * (1 + i % 4),
            {"req_time": float(9 - i), "mem": 100.0 * i, "mem_bw": 4.0 + 2 * i},
        )
        for i in range(9)
    ]
    texts = []
    for run in range(2):
        out = tmp_path / str(run)
        out.mkdir()
        _run(platform, _workload(jobs), "random-random", out, seed=42)
        texts.append(
            {
                name: (out / name).read_text()
                for name in ("out_jobs.csv", "out_pstate_changes.csv", "out_consumed_energy.csv")
            }
        )
    assert texts[0] == texts[1]


def test_walltime_and_kills_release_cores(tmp_path: Path) -> None:
    platform = make_platform([(8.0, [(1.0, 1.0, 100.0, 20.0, 2)])])
    workload = _workload(
        [("long", 0.0, 2, 10e9, {"req_time": 3.0}), ("next", 1.0, 2, 1e9, {"req_time": 1.0})]
    )
    workload.jobs[0].walltime = 3.0  # 10 s of work cut at 3 s
    xml = tmp_path / "platform.xml"
    write_platform_xml(platform, xml)
    actions = ActionSpace()
    manager = WorkloadManager(platform, actions, FixedPair(actions, "first-high_gflops"))
    result = simulate(xml, workload, manager, tmp_path)
    rows = {r["job_id"]: r for r in _rows(tmp_path / "out_jobs.csv")}
    assert rows["long"]["final_state"] == "COMPLETED_WALLTIME_REACHED"
    # next waits for both cores: starts when long is cut at 3 s, runs 1 s
    assert float(rows["next"]["starting_time"]) == 3.0
    assert result.makespan == 4.0 and manager.busy_cores == 0


def test_gaia_first_100_jobs_consolidation_vs_spreading(gaia_trace: Path, tmp_path: Path) -> None:
    """Thesis 5.3 on the real trace: high_gflops packs onto the fastest cores and saves energy."""
    from hdeeprm.workload.convert import convert_swf

    platform = load_platform(REPO / "platform_examples" / "gaia.json")
    workload = convert_swf(
        gaia_trace,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=20091995,
        nb_jobs=100,
    ).workload
    results = {}
    for pair in ("shortest-high_gflops", "shortest-high_mem_bw"):
        out = tmp_path / pair
        out.mkdir()
        manager, result = _run(platform, workload, pair, out)
        assert manager.nb_completed == 100 and manager.pool.busy_count == 0
        results[pair] = (manager, result)
    packed, spread = results["shortest-high_gflops"], results["shortest-high_mem_bw"]
    # the first job (160 cores) takes all 120 cores at 20 GFLOPS (Xeon E7-8880 v2, the fastest
    # in Gaia), then 40 at 19.2 GFLOPS
    first = min(packed[1].jobs, key=lambda j: (j.start_time, j.id))
    peaks = [platform.cores[c].peak_gflops for c in first.alloc]
    assert first.spec.res == 160 and sorted(peaks) == [19.2] * 40 + [20.0] * 120
    # measured: 37% less energy (thesis: about 43%)
    assert packed[1].consumed_energy < 0.7 * spread[1].consumed_energy
    # spreading touches many more processors
    used = {
        name: {platform.cores[c].processor.id for j in r.jobs for c in j.alloc}
        for name, (_, r) in results.items()
    }
    assert len(used["shortest-high_mem_bw"]) > 2 * len(used["shortest-high_gflops"])
