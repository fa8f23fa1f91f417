"""A scripted stand-in for Batsim 4.x, for the client tests (run as a program).

It takes Batsim's flags (``-p``, ``-w``, ``-e``, ``-s``, ``-E``), records them in
``{export}_argv.json``, then behaves as ``FAKE_BATSIM_MODE`` says:

* ``normal``: thesis 4.1.4 as Batsim would play it (one job of 5 s on core 0 of two cores),
  checking the scheduler's replies, then writes ``{export}_jobs.csv`` and exits 0;
* ``exit``: prints an error on stderr and exits 3 before sending anything;
* ``silent``: connects and never sends;
* ``garbage``: sends bytes that are not JSON;
* ``bad_exit``: plays ``normal`` but exits 5 after the simulation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import zmq


def _exchange(socket: zmq.Socket, now: float, events: list[dict]) -> dict:
    socket.send_string(json.dumps({"now": now, "events": events}))
    return json.loads(socket.recv_string())


def _play(socket: zmq.Socket, workload: str) -> list[dict]:
    replies = []
    begins = {
        "nb_resources": 2,
        "nb_compute_resources": 2,
        "nb_storage_resources": 0,
        "allow_compute_sharing": False,
        "allow_storage_sharing": False,
        "config": {"redis-enabled": False, "profiles-forwarded-on-submission": False},
        "compute_resources": [
            {"id": 0, "name": "cor_0", "state": "idle", "properties": {}},
            {"id": 1, "name": "cor_1", "state": "idle", "properties": {}},
        ],
        "storage_resources": [],
        "workloads": {"62b680": workload},
        "profiles": {"62b680": {"A": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0}}},
    }
    replies.append(_exchange(socket, 0.0, [_ev(0.0, "SIMULATION_BEGINS", begins)]))
    job = {"id": "62b680!job0", "subtime": 0, "res": 1, "profile": "A"}
    replies.append(
        _exchange(
            socket,
            0.0,
            [
                _ev(0.0, "JOB_SUBMITTED", {"job_id": "62b680!job0", "job": job}),
                _ev(0.0, "NOTIFY", {"type": "no_more_static_job_to_submit"}),
            ],
        )
    )
    execute = replies[-1]["events"]
    assert [e["type"] for e in execute] == ["EXECUTE_JOB"], execute
    assert execute[0]["data"] == {"job_id": "62b680!job0", "alloc": "0"}, execute
    completed = {
        "job_id": "62b680!job0",
        "job_state": "COMPLETED_SUCCESSFULLY",
        "return_code": 0,
        "alloc": "0",
    }
    replies.append(_exchange(socket, 5.0, [_ev(5.0, "JOB_COMPLETED", completed)]))
    replies.append(_exchange(socket, 5.0, [_ev(5.0, "SIMULATION_ENDS", {})]))
    return replies


def _ev(t: float, kind: str, data: dict) -> dict:
    return {"timestamp": t, "type": kind, "data": data}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-p", "--platform", required=True)
    parser.add_argument("-w", "--workload", action="append", required=True)
    parser.add_argument("-e", "--export", default="out")
    parser.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000")
    parser.add_argument("-E", "--energy", action="store_true")
    args, _ = parser.parse_known_args()
    mode = os.environ.get("FAKE_BATSIM_MODE", "normal")
    with open(args.export + "_argv.json", "w") as handle:
        json.dump(sys.argv[1:], handle)
    if mode == "exit":
        print("[batsim] reading platform...", flush=True)
        print("fatal: simulated Batsim failure", file=sys.stderr, flush=True)
        return 3
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(args.socket_endpoint)
    try:
        if mode == "silent":
            time.sleep(60)
            return 0
        if mode == "garbage":
            socket.send(b"\x00\x01BATSIM5-BINARY")
            time.sleep(60)
            return 0
        replies = _play(socket, args.workload[0])
        with open(args.export + "_jobs.csv", "w") as handle:
            handle.write("job_id,workload_name,final_state\njob0,62b680,COMPLETED_SUCCESSFULLY\n")
        with open(args.export + "_replies.json", "w") as handle:
            json.dump(replies, handle)
        return 5 if mode == "bad_exit" else 0
    finally:
        socket.close(linger=0)
        context.term()


if __name__ == "__main__":
    sys.exit(main())
