"""CuSH's Sierra-like scenario: its platform, job sets, heuristics and metrics in one place.

The platform is ``platform_examples/cush_sierra.json`` (128 nodes of 2 CPUs and 4 GPUs), the
job sets come from :func:`hdeeprm.workload.cush.generate_cush_jobset`, durations follow the
service-time model (:mod:`hdeeprm.simulation.service_time`) and the heuristics are CuSH's
FCFS, SJF, DRF and Rand (:class:`hdeeprm.environment.job_pickers.CushPicker`), each placing jobs
depth-first (``DF``) or breadth-first (``BF``). At every decision point the heuristic starts
jobs one at a time, each chosen among the first ``queue_slots`` queued jobs (CuSH: Q = 5, the
rest wait in a FIFO backlog) that fit now, until none fits.

Metrics (CuSH section 4.1): the service time is what the job ran (requested time plus locality
penalty), the turnaround ``wait + service``, **NTAT** the mean of ``turnaround / service`` (the
mean slowdown of :func:`hdeeprm.analysis.metrics.job_metrics`) and **wait** the mean waiting
time in time units ``t``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hdeeprm._jsonfile import read_json
from hdeeprm.analysis.metrics import ended_job_metrics
from hdeeprm.decision.workload_manager import WorkloadManager
from hdeeprm.environment.job_pickers import CUSH_HEURISTICS, CushPicker
from hdeeprm.platform import load_platform, platform_from_json, platform_xml
from hdeeprm.platform.hierarchy import Platform
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.events import ExecuteJob
from hdeeprm.simulation.platform_xml import SimPlatform, load_platform_xml
from hdeeprm.simulation.service_time import ServiceTimeModel
from hdeeprm.workload.cush import generate_cush_jobset
from hdeeprm.workload.model import Workload

#: CuSH's allocation policies by their table names.
CUSH_POLICIES = {"DF": "depth_first", "BF": "breadth_first"}
#: The platform file of the Sierra-like scenario, relative to the repository root.
SIERRA_PLATFORM = Path("platform_examples") / "cush_sierra.json"
#: Paper's Table 1, Summit columns (2 CPUs + 6 GPUs per node).
PAPER_TABLE1_SUMMIT: dict[str, tuple[float, float]] = {
    "CuSH": (3.8, 11.79),
    "FCFS DF": (6.54, 20.90),
    "FCFS BF": (7.07, 19.45),
    "SJF DF": (5.23, 18.37),
    "SJF BF": (5.14, 15.33),
    "DRF DF": (6.40, 19.59),
    "DRF BF": (6.69, 17.86),
    "Rand DF": (7.01, 22.39),
    "Rand BF": (6.46, 16.38),
}
#: Paper's Table 1, Sierra columns: (NTAT, wait time in t) per heuristic and policy.
PAPER_TABLE1_SIERRA: dict[str, tuple[float, float]] = {
    "CuSH": (3.33, 11.09),
    "FCFS DF": (7.13, 22.68),
    "FCFS BF": (5.71, 15.58),
    "SJF DF": (5.19, 18.53),
    "SJF BF": (4.13, 12.07),
    "DRF DF": (7.43, 21.45),
    "DRF BF": (5.54, 12.76),
    "Rand DF": (7.17, 23.62),
    "Rand BF": (5.42, 13.53),
}


@dataclass(frozen=True, slots=True)
class CushResult:
    """One heuristic on one job set."""

    ntat: float
    wait: float  # mean waiting time in time units
    penalty: float  # mean service time / requested time - 1


class CushScenario:
    """A platform ready for CuSH runs: hierarchy, simulated hosts and service-time model.

    Args:
        platform_file: a platform JSON with GPUs (default: the Sierra-like example).
        gpus_per_node: replace the GPU count of every node type of the file (6: the paper's
            Summit-like configuration); ``None`` keeps the file's.
        compute, network: the service-time model's penalties at the worst locality.
        queue_slots: jobs visible to the heuristics (CuSH: 5).
        time_unit: seconds per time unit ``t`` of the job sets.
    """

    def __init__(
        self,
        platform_file: str | os.PathLike[str] = SIERRA_PLATFORM,
        *,
        compute: float = 0.5,
        network: float = 1.0,
        queue_slots: int = 5,
        time_unit: float = 1.0,
        gpus_per_node: int | None = None,
    ) -> None:
        if gpus_per_node is None:
            self.platform: Platform = load_platform(platform_file)
        else:
            raw = read_json(platform_file, "platform file")
            for node in raw.get("types", {}).get("node", {}).values():
                for entry in node.get("gpus", []):
                    entry["number"] = gpus_per_node
            self.platform = platform_from_json(raw, os.fspath(platform_file))
        self.sim_platform: SimPlatform = _sim_platform(self.platform)
        self.model = ServiceTimeModel.from_platform(self.platform, compute=compute, network=network)
        self.queue_slots = queue_slots
        self.time_unit = time_unit

    def jobset(self, seed: int) -> Workload:
        """The job set of ``seed`` for this platform's CPU and GPU totals."""
        return generate_cush_jobset(
            cpus=len(self.platform.cores),
            gpus=len(self.platform.gpus),
            seed=seed,
            time_unit=self.time_unit,
        )

    def run(self, workload: Workload, heuristic: str, policy: str, seed: int = 0) -> CushResult:
        """Simulate ``workload`` with ``heuristic`` placing by ``policy`` (``DF``/``BF`` or a
        policy name)."""
        policy = CUSH_POLICIES.get(policy, policy)
        picker = CushPicker(heuristic, seed)
        engine = Engine(self.sim_platform, workload, trace=False, service_time=self.model)
        manager = WorkloadManager(self.platform, seed=seed)
        nb_cores, nb_gpus = manager.pool.nb_cores, manager.gpu_pool.nb_gpus
        message = engine.start()
        while not engine.finished:
            point = manager.ingest(message)
            decisions = manager.flush()
            if point:
                started = []
                queue = manager.job_queue
                while queue:
                    visible = sorted(queue.jobs, key=lambda job: job.seq)[: self.queue_slots]
                    fit = [j for j in visible if manager.fits_now(j.res, j.mem, j.gpus)]
                    if not fit:
                        break
                    job = fit[picker.choose(fit, nb_cores, nb_gpus)]
                    if not manager.start_job(job, policy):  # pragma: no cover - fits_now said so
                        raise AssertionError(f"job {job.id} fits but could not be placed")
                    started.append(job)
                decisions.extend(manager.flush())
                decisions.extend(ExecuteJob(j.id, j.alloc, j.gpu_alloc) for j in started)
            message = engine.proceed(decisions)
        jobs = engine.finished_jobs
        metrics = ended_job_metrics(jobs)
        penalty = sum(j.service_factor - 1.0 for j in jobs) / len(jobs)
        return CushResult(metrics.mean_slowdown, metrics.mean_waiting / self.time_unit, penalty)


def _sim_platform(platform: Platform) -> SimPlatform:
    """The simulated hosts of ``platform`` (its ``platform.xml``, parsed in memory)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "platform.xml"
        path.write_text(platform_xml(platform))
        return load_platform_xml(path)


__all__ = [
    "CUSH_HEURISTICS",
    "CUSH_POLICIES",
    "PAPER_TABLE1_SIERRA",
    "PAPER_TABLE1_SUMMIT",
    "SIERRA_PLATFORM",
    "CushResult",
    "CushScenario",
]
