"""GPUs: accounting, depth- and breadth-first placement, locality penalties, outputs.

The tiny platform of every hand-worked case (inline types, one cluster):

====  ======  =====  ======
node  type    cores  GPUs
====  ======  =====  ======
0     A       0, 1   0-3
1     B       2, 3   4, 5
2     C       4, 5   none
====  ======  =====  ======
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from gpu_helpers import TINY

from hdeeprm.decision import ActionSpace, FixedPair, GpuPool, LocalityAllocator, WorkloadManager
from hdeeprm.decision.resources import CorePool
from hdeeprm.errors import InputError, SimulationError
from hdeeprm.platform import (
    hierarchy_from_dict,
    hierarchy_to_dict,
    platform_from_json,
    platform_xml,
)
from hdeeprm.platform.hierarchy import Platform
from hdeeprm.simulation import load_platform_xml
from hdeeprm.simulation.driver import run
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.events import ExecuteJob
from hdeeprm.simulation.outputs import write_outputs
from hdeeprm.simulation.service_time import ServiceTimeModel
from hdeeprm.workload.model import JobSpec, Profile, Workload, workload_from_json


def tiny() -> Platform:
    return platform_from_json(copy.deepcopy(TINY), "tiny.json")


# --- platform ---------------------------------------------------------------------------
def test_gpus_in_the_hierarchy_and_its_json() -> None:
    platform = tiny()
    assert [len(n.gpus) for n in platform.nodes] == [4, 2, 0]
    assert [g.id for g in platform.gpus] == list(range(6))
    assert [g.node.id for g in platform.gpus] == [0, 0, 0, 0, 1, 1]
    summary = platform.summary()
    assert summary["gpus"] == 6 and summary["gpu_peak_gflops"] == 6000.0
    assert summary["gpu_power_w"] == 600.0
    again = hierarchy_from_dict(hierarchy_to_dict(platform))
    assert [(g.id, g.node.id, g.gflops, g.power) for g in again.gpus] == [
        (g.id, g.node.id, g.gflops, g.power) for g in platform.gpus
    ]
    # GPU-less nodes write no "gpus" key (files of GPU-less platforms are unchanged).
    nodes = hierarchy_to_dict(platform)["clusters"][0]["nodes"]
    assert "gpus" in nodes[0] and "gpus" not in nodes[2]


def test_gpu_less_platform_has_no_gpu_summary() -> None:
    raw = copy.deepcopy(TINY)
    raw["clusters"][0]["nodes"] = [{"type": "C", "number": 2}]
    platform = platform_from_json(raw)
    assert platform.gpus == [] and "gpus" not in platform.summary()


def test_sierra_example() -> None:
    from hdeeprm.platform import load_platform

    platform = load_platform(
        Path(__file__).resolve().parents[2] / "platform_examples" / "cush_sierra.json"
    )
    assert len(platform.nodes) == 128 and len(platform.cores) == 256
    assert len(platform.gpus) == 512 and platform.gpus[0].type == "Tesla V100 SXM2"


@pytest.mark.parametrize(
    ("change", "where", "text"),
    [
        (
            lambda r: r["types"]["node"]["A"]["gpus"][0].update(type="H"),
            "types.node.A.gpus[0].type",
            "unknown GPU type 'H'",
        ),
        (
            lambda r: r["types"]["node"]["A"]["gpus"][0].update(number=0),
            "types.node.A.gpus[0].number",
            "",
        ),
        (lambda r: r["types"]["gpu"]["G"].update(gflops=-1), "types.gpu.G.gflops", ""),
        (
            lambda r: r["types"]["gpu"]["G"].pop("power"),
            "types.gpu.G",
            "missing required key 'power'",
        ),
        (lambda r: r["types"]["gpu"]["G"].update(cores=4), "types.gpu.G.cores", "unknown key"),
        (lambda r: r["types"]["node"]["B"].update(gpus="G"), "types.node.B.gpus", "expected"),
    ],
)
def test_bad_gpu_inputs_name_file_and_key(change, where: str, text: str) -> None:
    raw = copy.deepcopy(TINY)
    change(raw)
    with pytest.raises(InputError) as info:
        platform_from_json(raw, "tiny.json")
    assert info.value.where == where and text in info.value.message
    assert "tiny.json" in str(info.value)


# --- workload fields --------------------------------------------------------------------
def _workload(**job: Any) -> dict[str, Any]:
    return {
        "nb_res": 6,
        "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "p", **job}],
        "profiles": {"p": {"type": "delay", "delay": 1}},
    }


def test_job_gpu_fields() -> None:
    wl = workload_from_json(_workload(gpus=3, workload_type="network"), "w.json")
    assert wl.jobs[0].gpus == 3 and wl.jobs[0].workload_type == "network"
    assert wl.jobs[0].to_json()["gpus"] == 3
    plain = workload_from_json(_workload(), "w.json").jobs[0]
    assert plain.gpus == 0 and plain.workload_type is None


@pytest.mark.parametrize(
    ("job", "where"),
    [
        ({"gpus": -1}, "jobs[0].gpus"),
        ({"gpus": 1.5}, "jobs[0].gpus"),
        ({"gpus": True}, "jobs[0].gpus"),
        ({"workload_type": "dgemm"}, "jobs[0].workload_type"),
    ],
)
def test_bad_job_gpu_fields(job: dict[str, Any], where: str) -> None:
    with pytest.raises(InputError) as info:
        workload_from_json(_workload(**job), "w.json")
    assert info.value.where == where and info.value.path == "w.json"


# --- placement --------------------------------------------------------------------------
def allocator(platform: Platform) -> tuple[CorePool, GpuPool, LocalityAllocator]:
    pool, gpus = CorePool(platform), GpuPool(platform)
    return pool, gpus, LocalityAllocator(pool, gpus)


def test_depth_first_by_hand() -> None:
    pool, gpus, alloc = allocator(tiny())
    # 2 cores + 5 GPUs: node 0 covers 2 + 4 = 6 (node 1: 4, node 2: 2); then 1 GPU on node 1.
    plan = alloc.plan("depth_first", 2, 5, 0.0)
    assert plan == [(0, 2, 4), (1, 0, 1)]
    assert alloc.take_cores(plan, "j", 0.0, 0.0, 0.0) == [0, 1]
    assert alloc.take_gpus(plan, "j") == [0, 1, 2, 3, 4]
    assert gpus.free == [[], [5], []] and gpus.free_count == 1
    assert gpus.gpu_job[4] == "j" and pool.free_count == 4


def test_breadth_first_by_hand() -> None:
    pool, gpus, alloc = allocator(tiny())
    # GPUs first, one per node per round over nodes 0 and 1 (most free units first): 3 + 2.
    # Cores: node 2 (not used yet) first, then node 0 (6 free units) before node 1 (4).
    plan = alloc.plan("breadth_first", 2, 5, 0.0)
    assert plan == [(0, 1, 3), (1, 0, 2), (2, 1, 0)]
    assert alloc.take_cores(plan, "j", 0.0, 0.0, 0.0) == [0, 4]
    assert alloc.take_gpus(plan, "j") == [0, 1, 2, 4, 5]
    # Cores only: one per node.
    assert alloc.plan("breadth_first", 3, 0, 0.0) == [(0, 1, 0), (1, 1, 0), (2, 1, 0)]


def test_placement_respects_memory_and_refuses_what_does_not_fit() -> None:
    _, gpus, alloc = allocator(tiny())
    # 3,000 MB per task on 8 GB nodes: two tasks per node at most (8000 // 3000).
    assert alloc.plan("depth_first", 3, 0, 3000.0) == [(0, 2, 0), (1, 1, 0)]
    assert alloc.plan("depth_first", 2, 7, 0.0) is None  # 6 GPUs only
    assert alloc.plan("breadth_first", 7, 0, 0.0) is None  # 6 cores only
    assert alloc.plan("depth_first", 1, 0, 9000.0) is None  # no node has 9 GB
    with pytest.raises(ValueError, match="unknown locality policy"):
        alloc.plan("high_gflops", 1, 0, 0.0)
    assert gpus.free_count == 6


def test_gpus_near_a_core_policy_allocation() -> None:
    _, gpus, alloc = allocator(tiny())
    # A job on cores 4 and 2 (nodes 2, 1): node 1's GPUs first, then node 0's.
    assert alloc.gpus_near([4, 2], 3, "j") == [0, 4, 5]
    gpus.release([0, 4, 5])
    assert gpus.free == [[0, 1, 2, 3], [4, 5], []] and gpus.free_count == 6


def test_free_gpus_by_node_type() -> None:
    _, gpus, alloc = allocator(tiny())
    alloc.gpus_near([0], 1, "j")
    alloc.gpus_near([2], 1, "k")
    assert gpus.types == ["A", "B"]  # node types with GPUs only
    assert gpus.free_by_type().tolist() == [0.75, 0.5]


# --- service time -----------------------------------------------------------------------
def test_locality_penalties_by_hand() -> None:
    model = ServiceTimeModel.from_platform(tiny(), compute=0.5, network=1.0)
    # 2 cores + 5 GPUs: n_min = max(ceil(2/2), ceil(5/4)) = 2, n_max = min(3, 7) = 3.
    packed = ([0, 1], [0, 1, 2, 3, 4])  # nodes 0, 1
    spread = ([0, 4], [0, 1, 2, 4, 5])  # nodes 0, 1, 2
    assert model.bounds(2, 5) == (2, 3)
    assert model.spread(*packed) == 0.0 and model.spread(*spread) == 1.0
    assert model.penalty("compute", *packed) == 0.0
    assert model.penalty("compute", *spread) == 0.5
    assert model.penalty("network", *packed) == 1.0
    assert model.penalty("network", *spread) == 0.0
    assert model.factor(None, *spread) == 1.0
    # 1 core + 1 GPU: n_min 1, n_max 2; same node = packed, two nodes = spread.
    assert model.penalty("network", [0], [0]) == 1.0
    assert model.penalty("network", [4], [0]) == 0.0
    assert model.penalty("compute", [4], [0]) == 0.5
    # One core alone has no locality choice: no penalty either way.
    assert model.penalty("network", [0]) == 0.0 and model.penalty("compute", [0]) == 0.0
    with pytest.raises(InputError, match="service_time.network"):
        ServiceTimeModel.from_platform(tiny(), network=-1.0)


# --- simulation -------------------------------------------------------------------------
def _sim(platform: Platform, tmp_path: Path):
    path = tmp_path / "platform.xml"
    path.write_text(platform_xml(platform))
    return load_platform_xml(path)


def _jobs(*jobs: tuple[str, float, int, int, float, str | None]) -> Workload:
    specs, profiles = [], {}
    for job_id, sub, res, gpus, delay, kind in jobs:
        extra: dict[str, Any] = {"gpus": gpus}
        if kind:
            extra["workload_type"] = kind
        specs.append(JobSpec(job_id, sub, res, job_id, extra=extra))
        profiles[job_id] = Profile(job_id, "delay", delay=delay, extra={"req_time": delay})
    return Workload(6, specs, profiles)


def test_gpu_accounting_end_to_end(tmp_path: Path, caplog) -> None:
    """X takes 5 of the 6 GPUs from 0 to 10 s; Y (2 GPUs) arrives at 1 and waits for them;
    FCFS blocks Z (1 GPU) behind Y; both start at 10 when X releases its GPUs. W asks for 7
    GPUs, more than the platform has: rejected at submission."""
    platform = tiny()
    workload = _jobs(
        ("X", 0.0, 1, 5, 10.0, None),
        ("Y", 1.0, 1, 2, 5.0, None),
        ("Z", 2.0, 1, 1, 3.0, None),
        ("W", 3.0, 1, 7, 1.0, None),
    )
    actions = ActionSpace([("first", "depth_first")], void=False)
    manager = WorkloadManager(platform, actions, FixedPair(actions, "first-depth_first"))
    engine = Engine(_sim(platform, tmp_path), workload)
    run(engine, manager)
    times = {j.spec.id: (j.start_time, j.finish_time, j.gpus) for j in engine.finished_jobs}
    # X: node 0 (1 core, 4 GPUs) + node 1 (1 GPU). At 10: Y takes node 0's core 0 and GPUs
    # 0, 1 (tie of nodes 0 and 1 on 3 units: lowest id); Z then node 0 again (core 1, GPU 2).
    assert times["X"] == (0.0, 10.0, (0, 1, 2, 3, 4))
    assert times["Y"] == (10.0, 15.0, (0, 1))
    assert times["Z"] == (10.0, 13.0, (2,))
    assert times["W"][0] is None and manager.rejected == ["w0!W"]
    assert "job w0!W rejected: it asks for 7 GPU(s), the platform has 6" in caplog.text
    assert manager.gpu_pool.free_count == 6
    paths = write_outputs(engine, tmp_path / "out")
    assert paths["gpus"].read_text().splitlines() == [
        "job_id,workload_name,nb_gpus,allocated_gpus,service_factor",
        "W,w0,0,,1.0",
        "X,w0,5,0-4,1.0",
        "Z,w0,1,2,1.0",
        "Y,w0,2,0-1,1.0",
    ]


def test_gpu_less_runs_write_no_gpu_file(tmp_path: Path) -> None:
    platform = tiny()
    workload = _jobs(("X", 0.0, 2, 0, 10.0, None))
    actions = ActionSpace([("first", "high_gflops")], void=False)
    manager = WorkloadManager(platform, actions, FixedPair(actions, "first-high_gflops"))
    engine = Engine(_sim(platform, tmp_path), workload)
    run(engine, manager)
    assert "gpus" not in write_outputs(engine, tmp_path / "out")


@pytest.mark.parametrize(
    ("kind", "policy", "duration"),
    [
        ("compute", "depth_first", 10.0),
        ("compute", "breadth_first", 15.0),
        ("network", "depth_first", 20.0),
        ("network", "breadth_first", 10.0),
        (None, "breadth_first", 10.0),
    ],
)
def test_service_time_in_the_engine(tmp_path: Path, kind, policy: str, duration: float) -> None:
    """2 cores + 5 GPUs for 10 s: packed (depth-first) or spread (breadth-first), above."""
    platform = tiny()
    workload = _jobs(("X", 0.0, 2, 5, 10.0, kind))
    actions = ActionSpace([("first", policy)], void=False)
    manager = WorkloadManager(platform, actions, FixedPair(actions, f"first-{policy}"))
    model = ServiceTimeModel.from_platform(platform)
    engine = Engine(_sim(platform, tmp_path), workload, service_time=model)
    run(engine, manager)
    (job,) = engine.finished_jobs
    assert job.finish_time - job.start_time == duration
    assert job.service_factor == duration / 10.0


def test_engine_refuses_a_busy_gpu(tmp_path: Path) -> None:
    platform = tiny()
    engine = Engine(
        _sim(platform, tmp_path), _jobs(("X", 0.0, 1, 1, 5.0, None), ("Y", 0.0, 1, 1, 5.0, None))
    )
    engine.start()
    engine.proceed([])  # t = 0: both submitted
    with pytest.raises(SimulationError, match="GPU 3 is busy running job 'w0!X'"):
        engine.proceed([ExecuteJob("w0!X", [0], [3]), ExecuteJob("w0!Y", [1], [3])])


# --- observations -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "base"), [("minimal", 21), ("queue", 21 + 1 + 48 + 2), ("small", 21 + 3 + 3)]
)
def test_observations_show_free_gpus_per_node_type(kind: str, base: int) -> None:
    from hdeeprm.environment.observation import ObservationBuilder
    from hdeeprm.workload.limits import JobLimits

    platform = tiny()
    manager = WorkloadManager(platform)
    builder = ObservationBuilder(kind, manager, JobLimits(10.0, 6, 0.0, 0.0), 0.05)
    # Node types with GPUs: A (4) and B (2); C has none and gets no feature.
    assert builder.size == base + 2
    assert builder.build()[-2:].tolist() == [1.0, 1.0]
    manager.locality.gpus_near([0], 3, "j")  # 3 of A's 4 GPUs
    manager.locality.gpus_near([2], 1, "k")  # 1 of B's 2
    assert builder.build()[-2:].tolist() == [0.25, 0.5]
    # Without GPUs the sizes are what they always were.
    raw = copy.deepcopy(TINY)
    raw["clusters"][0]["nodes"] = [{"type": "C", "number": 3}]
    plain = ObservationBuilder(
        kind, WorkloadManager(platform_from_json(raw)), JobLimits(10.0, 6, 0.0, 0.0), 0.05
    )
    assert plain.size == base
