"""A hand-written run folder on the thesis 5.4.1 learning platform, whose figures are known.

Platform: one node (32 GB), two dual-core processors (ids 0-1 and 2-3).

Jobs (cores, submit, start, finish; memory per core from the profile):

    job 1: 2 cores, submit 0,  start 0,   finish 100  (p1: 1000 MB/core -> 2000 MB)
    job 2: 2 cores, submit 0,  start 0,   finish 4    (p2:  500 MB/core -> 1000 MB)
    job 3: 4 cores, submit 10, start 100, finish 105  (p3:  250 MB/core -> 1000 MB)
    job 4: 1 core,  submit 20, start 20,  finish 60   (p4: 3000 MB/core -> 3000 MB)
    job 5: 8 cores, submit 30, rejected (no start, no finish)

Energy (out_schedule.csv consumed_joules): 7,200,000 J = 2 kWh.
"""

from __future__ import annotations

import json
from pathlib import Path

from hdeeprm.platform import load_platform, write_hierarchy_json

REPO = Path(__file__).resolve().parents[2]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"

JOB_HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata"
)
JOB_ROWS = (
    "1,w0,p1,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,100.000000,100.000000,"
    '0.000000,100.000000,1.000000,0-1,9000.000000,""',
    "2,w0,p2,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,4.000000,4.000000,"
    '0.000000,4.000000,1.000000,2-3,400.000000,""',
    "4,w0,p4,20.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,20.000000,40.000000,60.000000,"
    '0.000000,40.000000,1.000000,2,1600.000000,""',
    "3,w0,p3,10.000000,4,-1.000000,1,COMPLETED_SUCCESSFULLY,100.000000,5.000000,105.000000,"
    '90.000000,95.000000,19.000000,0-3,800.000000,""',
    '5,w0,p5,30.000000,8,-1.000000,0,REJECTED,,,,,,,,,""',
)
SCHEDULE = (
    "batsim_version,consumed_joules,makespan,max_slowdown,mean_slowdown\n"
    "test,7200000.000000,105.000000,19.000000,4.4\n"
)
MEM_PER_CORE = {"p1": 1000.0, "p2": 500.0, "p3": 250.0, "p4": 3000.0, "p5": 100.0}


def write_jobs(path: Path, order: list[int] | None = None) -> None:
    """Write out_jobs.csv, optionally with its columns permuted by ``order``."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO("\n".join((JOB_HEADER, *JOB_ROWS)))))
    if order is not None:
        rows = [[row[i] for i in order] for row in rows]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def _workload() -> dict:
    jobs = [
        {"id": "1", "subtime": 0, "res": 2, "profile": "p1"},
        {"id": "2", "subtime": 0, "res": 2, "profile": "p2"},
        {"id": "3", "subtime": 10, "res": 4, "profile": "p3"},
        {"id": "4", "subtime": 20, "res": 1, "profile": "p4"},
        {"id": "5", "subtime": 30, "res": 8, "profile": "p5"},
    ]
    profiles = {
        name: {"type": "delay", "delay": 1.0, "mem": mem, "mem_bw": 8.0}
        for name, mem in MEM_PER_CORE.items()
    }
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles}


def make_run(folder: Path, *, training: bool = True) -> Path:
    """Write the hand-made run folder described in the module docstring."""
    folder.mkdir(parents=True, exist_ok=True)
    write_jobs(folder / "out_jobs.csv")
    (folder / "out_schedule.csv").write_text(SCHEDULE)
    (folder / "workload.json").write_text(json.dumps(_workload()))
    write_hierarchy_json(load_platform(LEARNING_PLATFORM), folder / "res_hierarchy.json")
    # Processor 0 over-subscribed on [0, 50]; processor 1 from 20 to the end (open span).
    (folder / "hdeeprm_mem_bw_overutilization.csv").write_text(
        "processor_id,start,end\n0,0.0,50.0\n1,20.0,\n"
    )
    if training:
        (folder / "training_log.csv").write_text(
            "episode,loss,total_reward,objective,steps,prob_first-high_gflops,"
            "prob_shortest-high_mem_bw\n"
            "0,1.5,6.0,7.0,1,0.5,0.5\n"
            "1,0.8,6.6,6.36,1,0.4,0.6\n"
            "2,0.2,8.4,5.25,1,0.2,0.8\n"
            "3,0.0,8.4,5.25,1,0.1,0.9\n"
        )
    return folder
