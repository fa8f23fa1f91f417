"""Batsim output files: exact columns and values on a tiny case, evalys, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sim_helpers import GF, thesis_platform, workload

from hdeeprm.simulation import (
    Engine,
    ExecuteJob,
    FirstFitFCFS,
    RejectJob,
    SetResourceState,
    SimPlatform,
    format_interval_set,
    parse_interval_set,
    run,
    simulate,
    write_outputs,
)
from hdeeprm.workload.model import JobSpec, Profile, Workload


def thesis_run() -> Engine:
    """Thesis 4.1.4 plus a rejected job: job0 on core 0 in P0 for 5 s, core 1 in P2."""
    engine = Engine(
        thesis_platform(),
        workload(("job0", 0, 1, "parallel_homogeneous", 5 * GF), ("r", 0, 1, "delay", 1.0)),
    )
    engine.start()
    engine.proceed([])
    engine.proceed(
        [
            ExecuteJob("w0!job0", [0]),
            RejectJob("w0!r"),
            SetResourceState([0], 0),
            SetResourceState([1], 2),
        ]
    )
    engine.proceed([])  # t = 5: completion
    engine.proceed([SetResourceState([0, 1], 3)])
    engine.proceed([])
    assert engine.finished
    return engine


def test_tiny_case_files_are_batsim_exact(tmp_path: Path) -> None:
    paths = write_outputs(thesis_run(), tmp_path / "out")
    assert sorted(p.name for p in paths.values()) == [
        "out_consumed_energy.csv",
        "out_jobs.csv",
        "out_machine_states.csv",
        "out_pstate_changes.csv",
        "out_schedule.csv",
    ]
    jobs = paths["jobs"].read_text().splitlines()
    assert jobs[0] == (
        "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
        "requested_time,success,final_state,starting_time,execution_time,finish_time,"
        "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata"
    )
    # Rows in the order jobs ended: r rejected at t = 0 (empty timing fields), job0 at t = 5
    # (500 J = 100 W x 5 s, stretch = turnaround 5 / execution 5 = 1; no walltime -> -1).
    assert jobs[1:] == [
        'r,w0,r,0.000000,1,-1.000000,0,REJECTED,,,,,,,,,""',
        "job0,w0,job0,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,5.000000,"
        '5.000000,0.000000,5.000000,1.000000,0,500.000000,""',
    ]
    # P-states: the initial state of every host, then a -1 transition row before each change.
    assert paths["pstate_changes"].read_text().splitlines() == [
        "time,machine_id,new_pstate",
        "0,0-1,3",
        "0,0,-1",
        "0,0,0",
        "0,1,-1",
        "0,1,2",
        "5,0-1,-1",
        "5,0-1,3",
    ]
    # Energy rows at job start (s), job end (e) and two per P-state change (p): before it,
    # with the old wattmin, and after it, with the new one, as Batsim 4.2.1 (its %f format).
    # wattmin: 2 x 5 W (P3) = 10, then 100 + 5 = 105, then 100 + 25 = 125, at t = 5 back to 10.
    # At t = 5: 625 J = 500 + 125, epower = 625 J / 5 s = 125 W.
    assert paths["consumed_energy"].read_text().splitlines() == [
        "time,energy,event_type,wattmin,epower",
        "0.000000,0.000000,s,10.000000,NA",
        "0.000000,0.000000,p,10.000000,NA",
        "0.000000,0.000000,p,105.000000,NA",
        "0.000000,0.000000,p,105.000000,NA",
        "0.000000,0.000000,p,125.000000,NA",
        "5.000000,625.000000,e,125.000000,125.000000",
        "5.000000,625.000000,p,125.000000,NA",
        "5.000000,625.000000,p,10.000000,NA",
    ]
    assert paths["machine_states"].read_text().splitlines() == [
        "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing",
        "0,0,0,0,1,1",
        "0,0,0,0,1,1",
        "0,0,0,0,1,1",
        "5,0,0,0,2,0",
        "5,0,0,0,2,0",
    ]
    header, values = paths["schedule"].read_text().splitlines()
    schedule = dict(zip(header.split(","), values.split(",")))
    assert header.split(",") == sorted(header.split(","))
    assert len(schedule) == 26
    # Means over both jobs, rejected included (Batsim): turnaround (5 + 0) / 2 = 2.5.
    assert schedule == {
        "batsim_version": schedule["batsim_version"],
        "consumed_joules": "625.000000",
        "makespan": "5.000000",
        "max_slowdown": "1.000000",
        "max_turnaround_time": "5.000000",
        "max_waiting_time": "0.000000",
        "mean_slowdown": "0.500000",
        "mean_turnaround_time": "2.500000",
        "mean_waiting_time": "0.000000",
        "nb_computing_machines": "2",
        "nb_grouped_switches": "3",
        "nb_jobs": "2",
        "nb_jobs_finished": "1",
        "nb_jobs_killed": "0",
        "nb_jobs_rejected": "1",
        "nb_jobs_success": "1",
        "nb_machine_switches": "4",
        "scheduling_time": "0.000000",
        "simulation_time": "0.000000",
        "success_rate": "0.500000",
        "time_computing": "5.000000",
        "time_idle": "0.000000",
        "time_sleeping": "0.000000",
        "time_switching_off": "0.000000",
        "time_switching_on": "0.000000",
        "time_unavailable": "0.000000",
    }


def test_prefix(tmp_path: Path) -> None:
    paths = write_outputs(thesis_run(), tmp_path, prefix="run1_")
    assert paths["jobs"] == tmp_path / "run1_jobs.csv" and paths["jobs"].is_file()


def test_evalys_reads_out_jobs(tmp_path: Path) -> None:
    from evalys.jobset import JobSet

    engine = Engine(
        SimPlatform.homogeneous(4, [GF]),
        workload(
            ("1", 0, 2, "delay", 10.0),
            ("2", 0, 3, "delay", 4.0),
            ("3", 1, 5, "delay", 1.0),
        ),
    )
    run(engine, FirstFitFCFS())
    paths = write_outputs(engine, tmp_path)
    jobset = JobSet.from_csv(str(paths["jobs"]))
    df = jobset.df.set_index("jobID")
    assert list(df.index) == ["3", "1", "2"]  # 3 rejected first, 1 ends at 10, 2 at 14
    # Job 2 needs 3 hosts: waits for job 1 (t = 10), runs 4 s on hosts 0-2.
    assert df.loc["2", "starting_time"] == 10.0 and df.loc["2", "finish_time"] == 14.0
    assert str(df.loc["2", "allocated_resources"]) == "0-2"
    assert df.loc["3", "final_state"] == "REJECTED"
    assert jobset.MaxProcs == 3  # hosts 0-2 appear in allocations


def random_workload(seed: int, nb_jobs: int) -> Workload:
    rng = np.random.default_rng(seed)
    subtimes = np.sort(rng.integers(0, 500, nb_jobs)).astype(float)
    specs, profiles = [], {}
    for i, subtime in enumerate(subtimes):
        name = str(i)
        res = int(rng.integers(1, 6))
        if i % 2:
            profiles[name] = Profile(name, "delay", delay=float(rng.uniform(0, 60)))
        else:
            profiles[name] = Profile(
                name, "parallel_homogeneous", cpu=float(rng.uniform(1, 9)) * GF
            )
        walltime = 40.0 if i % 7 == 0 else None
        specs.append(JobSpec(name, float(subtime), res, name, walltime))
    return Workload(8, specs, profiles)


def heterogeneous_platform() -> SimPlatform:
    return SimPlatform.from_hosts(
        [(f"h{i}", [(1 + i % 3) * GF, 0.5 * GF], 0, [5.0, 2.0], [40.0 + i, 20.0]) for i in range(8)]
    )


def test_two_runs_give_byte_identical_files(tmp_path: Path) -> None:
    contents = []
    for attempt in range(2):
        engine = Engine(heterogeneous_platform(), random_workload(42, 300))
        run(engine, FirstFitFCFS())
        paths = write_outputs(engine, tmp_path / str(attempt))
        contents.append({kind: path.read_bytes() for kind, path in paths.items()})
    assert contents[0] == contents[1]
    assert contents[0]["jobs"].count(b"\n") == 301
    assert b"COMPLETED_WALLTIME_REACHED" in contents[0]["jobs"]


def test_simulate_from_files(tmp_path: Path) -> None:
    xml = tmp_path / "platform.xml"
    xml.write_text(
        '<platform version="4.1"><zone id="z" routing="Full">'
        '<host id="master_host" speed="1Gf"/>'
        '<host id="c1" speed="2Gf, 1Gf"><prop id="wattage_per_state" value="10:50, 5:20"/></host>'
        '<host id="c0" speed="2Gf, 1Gf"><prop id="wattage_per_state" value="10:50, 5:20"/></host>'
        "</zone></platform>"
    )
    wl_path = tmp_path / "workload.json"
    wl_path.write_text(
        json.dumps(
            {
                "nb_res": 2,
                "jobs": [
                    {"id": 1, "subtime": 0, "res": 2, "profile": "p"},
                    {"id": 2, "subtime": 1, "res": 1, "profile": "p"},
                ],
                "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 4e9, "com": 0}},
            }
        )
    )
    result = simulate(xml, wl_path, FirstFitFCFS(), tmp_path / "out")
    # Job 1: 4e9 flops at 2 GFLOPS on c0 and c1 (ids 0, 1 by name) -> t = 2; job 2: 2 to 4.
    assert result.makespan == 4.0
    assert [job.id for job in result.jobs] == ["w0!1", "w0!2"]
    # Energy: 0-2 both hosts at 50 W = 200 J; 2-4 one at 50 W, one idle at 10 W = 120 J.
    assert result.consumed_energy == pytest.approx(320.0)
    assert set(result.outputs) == {
        "jobs",
        "schedule",
        "machine_states",
        "pstate_changes",
        "consumed_energy",
    }
    assert "w0,p,1.000000,1" in result.outputs["jobs"].read_text()


def test_interval_sets() -> None:
    assert format_interval_set([7, 0, 1, 2, 3, 9, 10, 3]) == "0-3 7 9-10"
    assert format_interval_set([]) == ""
    assert parse_interval_set("0-3 7 9-10") == [0, 1, 2, 3, 7, 9, 10]
    with pytest.raises(ValueError, match="bad interval '3-1'"):
        parse_interval_set("3-1")


def test_files_are_streamed_in_chunks_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_outputs writes each file a chunk of rows at a time (never the whole text at
    once), and the bytes are those of the *_csv texts whatever the chunk size."""
    from hdeeprm.simulation import outputs

    engine = Engine(heterogeneous_platform(), random_workload(7, 40))
    run(engine, FirstFitFCFS())
    texts = {
        "jobs": outputs.jobs_csv(engine),
        "schedule": outputs.schedule_csv(engine),
        "machine_states": outputs.machine_states_csv(engine),
        "pstate_changes": outputs.pstate_changes_csv(engine),
        "consumed_energy": outputs.consumed_energy_csv(engine),
    }
    # 41 lines in out_jobs.csv (header + 40 jobs): chunks of 3 lines are 13 of 3 and 1 of 2.
    assert texts["jobs"].count("\n") == 41
    monkeypatch.setattr(outputs, "CHUNK_LINES", 3)
    writes: list[str] = []
    real_write_lines = outputs.write_lines

    def recording(handle, lines):  # noqa: ANN001, ANN202
        class Recorder:
            def write(self, text: str) -> int:
                writes.append(text)
                return handle.write(text)

        real_write_lines(Recorder(), lines)

    monkeypatch.setattr(outputs, "write_lines", recording)
    paths = outputs.write_outputs(engine, tmp_path)
    for kind, text in texts.items():
        assert paths[kind].read_text() == text
    jobs_writes = writes[:14]
    assert [w.count("\n") for w in jobs_writes] == [3] * 13 + [2]
    assert "".join(jobs_writes) == texts["jobs"]


def test_write_lines_joins_chunks_exactly() -> None:
    import io

    from hdeeprm.simulation.outputs import write_lines

    handle = io.StringIO()
    write_lines(handle, (f"{i}\n" for i in range(25_001)))
    assert handle.getvalue() == "".join(f"{i}\n" for i in range(25_001))
    empty = io.StringIO()
    write_lines(empty, iter(()))
    assert empty.getvalue() == ""
