"""What CPython's cyclic garbage collector costs a classic replay, with and without
:func:`hdeeprm._gc.young_collections_only` (full collections suspended during the replay).

Usage: ``python benchmarks/speed/gc_replay.py [--trace ricc] [--size all] [--rounds 1]
[--traces-dir DIR]``

Each run is a subprocess (same trace, pair ``shortest-high_gflops``, seed 1) that converts the
trace, then builds the engine, replays and writes the outputs as ``benchmarks/speed/scaling.py``
does; ``default`` runs replace the policy by a no-op, so the collector keeps CPython's
thresholds throughout. Printed per run: CPU seconds of the replay phase (engine build,
simulation, outputs; ``time.process_time``), the CPU seconds spent inside the collector during
that phase (``gc.callbacks``) and the number of collections per generation. The two policies
alternate round by round, so a busy machine inflates both alike.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling import DEFAULT_TRACES, TRACES, load_inputs  # noqa: E402


class GcClock:
    """CPU time inside the collector and collections per generation, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.counts = [0, 0, 0]
        self._start = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.cpu += time.process_time() - self._start
            self.counts[info["generation"]] += 1


def child(trace: str, size: str, policy: str, traces_dir: Path | None) -> dict:
    import hdeeprm._gc
    from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
    from hdeeprm.experiment.run import write_overutilization
    from hdeeprm.simulation import Engine, run, write_outputs

    if policy == "default":  # a no-op in place of the policy, where the replay looks it up
        hdeeprm._gc.young_collections_only = contextlib.nullcontext  # type: ignore[assignment]
        import hdeeprm.simulation.driver as driver

        driver.young_collections_only = contextlib.nullcontext  # type: ignore[assignment]
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        platform, sim_platform, workload = load_inputs(trace, size, traces_dir, out)
        actions = ActionSpace()
        manager = WorkloadManager(
            platform, actions, FixedPair(actions, "shortest-high_gflops"), seed=1
        )
        clock = GcClock()
        gc.callbacks.append(clock)
        start = time.process_time()
        with hdeeprm._gc.young_collections_only():
            engine = Engine(sim_platform, workload, trace=True)
            run(engine, manager)
            write_outputs(engine, out / "out")
            write_overutilization(out / "out", manager)
        cpu = time.process_time() - start
        gc.callbacks.remove(clock)
    return {"jobs": len(workload.jobs), "cpu": cpu, "gc_cpu": clock.cpu, "counts": clock.counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="ricc", choices=sorted(TRACES))
    parser.add_argument("--size", default="all", help="first N usable jobs, or all")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--traces-dir", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.trace, args.size, args.child, args.traces_dir)))
        return 0
    print(f"{args.trace} {args.size}: replay phase = engine build + simulation + outputs")
    for round_ in range(args.rounds):
        for policy in ("default", "young-only"):
            command = [sys.executable, __file__, "--child", policy, "--trace", args.trace]
            command += ["--size", args.size]
            if args.traces_dir is not None:
                command += ["--traces-dir", str(args.traces_dir)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                sys.exit(f"{policy} run failed:\n{done.stderr}")
            row = json.loads(done.stdout.splitlines()[-1])
            gen0, gen1, gen2 = row["counts"]
            print(
                f"round {round_ + 1} {policy:<10} {row['jobs']} jobs: replay phase "
                f"{row['cpu']:.2f} s CPU, in the collector {row['gc_cpu']:.2f} s "
                f"(collections: {gen0} young, {gen1} middle, {gen2} full)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
