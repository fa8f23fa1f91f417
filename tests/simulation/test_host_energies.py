"""``Engine(..., host_energies=False)`` drops only the per-host energies, and an ``ExecuteJob``
whose hosts are :class:`HostIds` (the workload manager's) starts the job exactly as a plain
list does: every output, the total energy and the jobs' energies are the same, bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_helpers import GF, drain, thesis_platform, workload

from hdeeprm.errors import SimulationError
from hdeeprm.simulation import (
    Engine,
    ExecuteJob,
    HostIds,
    SetResourceState,
    load_platform_xml,
    run,
    write_outputs,
)

GAIA_JSON = Path(__file__).resolve().parents[2] / "platform_examples" / "gaia.json"


def _hand_run(host_energies: bool, alloc) -> Engine:  # type: ignore[no-untyped-def]
    # Thesis 4.1.4 cores (sim_helpers): 100 W in P0, 25 W in P2, 5 W in P3; 1 GFLOPS in P0.
    # Three cores in P3 from t = 0; at t = 2 the job (4e9 flops on cores 0 and 2) starts with
    # both in P0 and core 1 in P2: it ends at 2 + 4 = 6 s; then every core goes back to P3.
    engine = Engine(
        thesis_platform(3),
        workload(("j", 2, 2, "parallel_homogeneous", 4 * GF)),
        host_energies=host_energies,
    )
    engine.start()
    engine.proceed([])  # at t = 2: the submission
    engine.proceed(
        [SetResourceState([0, 2], 0), SetResourceState([1], 2), ExecuteJob("w0!j", alloc)]
    )
    completed = engine.proceed([])
    assert completed.now == 6.0
    drain(engine, [SetResourceState([0, 1, 2], 3)])
    return engine


def test_hand_worked_energies_without_per_host_ones() -> None:
    kept = _hand_run(True, [2, 0])
    dropped = _hand_run(False, HostIds([0, 2]))
    job_kept, job_dropped = kept.finished_jobs[0], dropped.finished_jobs[0]
    assert (job_dropped.start_time, job_dropped.finish_time) == (2.0, 6.0)
    assert job_dropped.alloc == (0, 2) == job_kept.alloc
    # Each host: 5 W x 2 s in P3 until t = 2, then cores 0 and 2 100 W x 4 s, core 1 25 W x
    # 4 s: 410 + 110 + 410 = 930 J until t = 6 (no time passes after it). The job: 800 J.
    assert kept.host_energy() == [410.0, 110.0, 410.0]
    assert dropped.consumed_energy == kept.consumed_energy == 930.0
    assert job_dropped.energy == job_kept.energy == 800.0
    assert dropped.time_idle == kept.time_idle and dropped.time_computing == kept.time_computing
    assert list(dropped.energy_trace) == list(kept.energy_trace)
    assert list(dropped.pstate_trace) == list(kept.pstate_trace)
    assert list(dropped.machine_state_trace) == list(kept.machine_state_trace)
    with pytest.raises(SimulationError, match="host_energies=True"):
        dropped.host_energy()


def test_host_ids_allocation_is_still_checked_for_busy_and_missing_hosts() -> None:
    engine = Engine(
        thesis_platform(2),
        workload(("a", 0, 1, "delay", 5.0), ("b", 0, 1, "delay", 5.0)),
    )
    engine.start()
    engine.proceed([])
    with pytest.raises(SimulationError, match="busy"):
        engine.proceed([ExecuteJob("w0!a", HostIds([1])), ExecuteJob("w0!b", HostIds([1]))])
    with pytest.raises(SimulationError, match="does not exist"):
        engine.proceed([ExecuteJob("w0!b", HostIds([2]))])
    with pytest.raises(SimulationError, match="empty allocation"):
        engine.proceed([ExecuteJob("w0!b", HostIds([]))])


def test_gaia_prefix_outputs_identical_without_per_host_energies(
    gaia_trace: Path, tmp_path: Path
) -> None:
    # The first 1,500 Gaia jobs, decided by the workload manager (shortest-high_gflops:
    # HostIds allocations, P-state switches), with and without per-host energies.
    platform_mod = pytest.importorskip("hdeeprm.platform")
    workload_mod = pytest.importorskip("hdeeprm.workload")
    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager

    hierarchy = platform_mod.load_platform(GAIA_JSON)
    platform_mod.write_platform_xml(hierarchy, tmp_path / "gaia.xml")
    platform = load_platform_xml(tmp_path / "gaia.xml")
    jobs = workload_mod.convert_swf(
        gaia_trace,
        reference_speed=hierarchy.reference_speed,
        max_cores=platform.nb_hosts,
        seed=1,
        nb_jobs=1500,
    ).workload
    files: dict[bool, dict[str, bytes]] = {}
    energies: dict[bool, tuple[float, list[float]]] = {}
    for keep in (True, False):
        actions = ActionSpace()
        manager = WorkloadManager(
            hierarchy, actions, FixedPair(actions, "shortest-high_gflops"), seed=1
        )
        engine = Engine(platform, jobs, host_energies=keep)
        run(engine, manager)
        paths = write_outputs(engine, tmp_path / f"out_{keep}")
        files[keep] = {name: path.read_bytes() for name, path in paths.items()}
        energies[keep] = (engine.consumed_energy, [job.energy for job in engine.finished_jobs])
        if keep:
            assert sum(engine.host_energy()) == pytest.approx(engine.consumed_energy, rel=1e-9)
    assert files[True] == files[False] and len(files[True]) >= 4
    assert energies[True] == energies[False]
