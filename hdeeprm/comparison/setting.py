"""A trace on a platform, split into a training part and a held-out part, cut into windows.

The setting is the literature's (seed ``001``, RLScheduler, RLBackfilling): user estimates
(the trace's requested times) are what a scheduler knows of a job's length, each job runs its
recorded time (no walltime kill), and the memory-bandwidth model is off (every job gets
0.001 GB/s per core, so no processor is ever slowed down). A window is ``window_jobs``
consecutive jobs of the trace, submitted from an idle platform (its first job at t = 0).

The parts are job-index ranges. Training and validation windows are drawn from the training
range only; the held-out windows from the test range only. Each range's windows are drawn
with their own seed: the held-out windows are the same for every training seed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hdeeprm.environment.episodes import window_workload
from hdeeprm.errors import InputError
from hdeeprm.platform import Platform, load_platform, write_platform_xml
from hdeeprm.simulation import SimPlatform, load_platform_xml
from hdeeprm.workload.convert import convert_swf
from hdeeprm.workload.model import Workload

#: Memory bandwidth per core of every job: the bandwidth model plays no part.
NO_BANDWIDTH = (0.001, 0.001)


@dataclass(frozen=True)
class TraceSetting:
    """A converted trace and the platform it runs on (both parsed once)."""

    trace: Path
    platform_path: Path
    platform: Platform
    sim_platform: SimPlatform
    workload: Workload

    @property
    def nb_jobs(self) -> int:
        return len(self.workload.jobs)

    @property
    def nb_cores(self) -> int:
        return len(self.platform.cores)


def load_setting(
    trace: str | Path, platform: str | Path, *, nb_jobs: int | None = None
) -> TraceSetting:
    """Convert ``trace`` (SWF, plain or gzip) for ``platform`` (a platform JSON).

    Jobs wider than the platform are dropped by the conversion (it logs how many).

    Raises:
        InputError: a missing or malformed file, naming it.
    """
    trace, platform_path = Path(trace), Path(platform)
    for path, what in ((trace, "trace"), (platform_path, "platform")):
        if not path.is_file():
            raise InputError(f"the {what} file does not exist", path)
    plat = load_platform(platform_path)
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "platform.xml"
        write_platform_xml(plat, xml)
        sim_platform = load_platform_xml(xml)
    workload = convert_swf(
        trace,
        reference_speed=plat.reference_speed,
        max_cores=len(plat.cores),
        seed=1,
        nb_jobs=nb_jobs,
        mem_bw_range=NO_BANDWIDTH,
    ).workload
    if not workload.jobs:
        raise InputError("no job of the trace fits the platform", trace)
    return TraceSetting(trace, platform_path, plat, sim_platform, workload)


@dataclass(frozen=True)
class JobRange:
    """Job indices ``[first, stop)`` of the trace."""

    first: int
    stop: int

    def check(self, name: str, nb_jobs: int, window_jobs: int) -> None:
        """Raise :class:`InputError` naming ``name`` unless a window fits in the range."""
        if not 0 <= self.first < self.stop <= nb_jobs:
            raise InputError(
                f"{name} [{self.first}, {self.stop}) must lie within the trace's {nb_jobs} jobs",
                where=name,
            )
        if self.stop - self.first < window_jobs:
            raise InputError(
                f"{name} [{self.first}, {self.stop}) holds fewer jobs than one window "
                f"({window_jobs})",
                where=name,
            )


def draw_windows(span: JobRange, window_jobs: int, count: int, seed: int) -> list[int]:
    """``count`` window starts drawn uniformly (with ``seed``) so that every window lies in
    ``span``; sorted. Draws are without replacement when the range holds enough starts."""
    starts = span.stop - window_jobs - span.first + 1
    if starts <= 0 or count <= 0:
        raise ValueError(f"no window of {window_jobs} jobs in [{span.first}, {span.stop})")
    rng = np.random.default_rng(seed)
    picked = rng.choice(starts, size=count, replace=count > starts)
    return sorted(span.first + int(s) for s in picked)


@dataclass(frozen=True)
class Windows:
    """Named window starts over one setting."""

    setting: TraceSetting
    window_jobs: int
    starts: tuple[int, ...]

    def workload(self, k: int) -> Workload:
        return window_workload(self.setting.workload, self.starts[k], self.window_jobs)

    def __len__(self) -> int:
        return len(self.starts)


def windows_of(
    setting: TraceSetting, span: JobRange, window_jobs: int, count: int, seed: int
) -> Windows:
    """``count`` windows of ``span`` drawn with ``seed`` (:func:`draw_windows`)."""
    return Windows(setting, window_jobs, tuple(draw_windows(span, window_jobs, count, seed)))
