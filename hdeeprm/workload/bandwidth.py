"""Per-job memory bandwidth that fits the platform a workload is converted for.

SWF traces record no memory bandwidth, so the converter draws each job's ``mem_bw`` (GB/s per
task, i.e. per core it runs on) uniformly from a range. The thesis drew 4-24 GB/s, "from 5% to
75% of offered bandwidths, which are typically 32 to 51.2 GB/s" (thesis 3.1.3): 24 GB/s is 75%
of its slowest processor's 32 GB/s, 4 GB/s one eighth of it. A fixed 4-24 GB/s is not
physical on other machines: an SP2 thin node offers about 1.07 GB/s, so every task would
over-subscribe its processor wherever it ran, and every job would run at 75% speed.

**Rule** (used whenever the options do not set ``mem_bw_range``): with ``B`` the memory
bandwidth of the platform's *slowest* processor,

    mem_bw_range = [B / 8, 3 B / 4]

* It is the thesis's range wherever the slowest processor offers 32 GB/s (Gaia, RICC, the
  learning scenario): 4-24 GB/s exactly, so the thesis's experiments are unchanged.
* A task never needs more than 75% of any processor's bandwidth, so no job over-subscribes a
  processor by itself: over-subscription only comes from placing several demanding tasks on one
  processor, the interference the model (thesis 3.1.2) and the bandwidth-aware policies are
  about. A per-core share (``B / cores``) was rejected as the upper end: a fully packed
  processor could then never be over-subscribed and the interference model would be moot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: The rule's fractions of the slowest processor's bandwidth (thesis: 4 and 24 of 32 GB/s).
LOW_FRACTION = 1 / 8
HIGH_FRACTION = 3 / 4


def default_mem_bw_range(processor_bandwidths: Iterable[float]) -> tuple[float, float]:
    """``[B / 8, 3 B / 4]`` GB/s with ``B`` the smallest of ``processor_bandwidths`` (GB/s)."""
    slowest = min(processor_bandwidths, default=None)
    if slowest is None or slowest <= 0:
        raise ValueError("a platform needs at least one processor with a positive mem_bw")
    return (slowest * LOW_FRACTION, slowest * HIGH_FRACTION)


@dataclass(frozen=True, slots=True)
class BandwidthCheck:
    """How many jobs over-subscribe every processor by construction."""

    nb_jobs: int
    #: Jobs whose per-task ``mem_bw`` exceeds the bandwidth of every processor.
    nb_over: int
    #: Largest processor bandwidth of the platform, GB/s.
    max_processor_bw: float
    #: Smallest per-task demand among those jobs, GB/s (0 when there is none).
    min_over_demand: float

    @property
    def share(self) -> float:
        """Fraction of the jobs that over-subscribe wherever they run."""
        return self.nb_over / self.nb_jobs if self.nb_jobs else 0.0

    def message(self, platform_name: str) -> str:
        """The warning text (call only when ``nb_over`` > 0)."""
        every = "every job" if self.nb_over == self.nb_jobs else f"{self.nb_over:,} jobs"
        return (
            f"{every} of {self.nb_jobs:,} ({self.share:.0%}) need more memory bandwidth per "
            f"task (from {self.min_over_demand:g} GB/s) than any processor of {platform_name} "
            f"offers (at most {self.max_processor_bw:g} GB/s): they run over-subscribed, at 75% "
            "speed, wherever they are placed. Remove mem_bw_range from the options to draw a "
            "range fitted to the platform, or give one below the processors' bandwidth"
        )


def check_bandwidth(
    job_demands: Iterable[float], processor_bandwidths: Iterable[float]
) -> BandwidthCheck:
    """Count the jobs whose per-task demand exceeds every processor's bandwidth."""
    max_bw = max(processor_bandwidths)
    nb = over = 0
    low = 0.0
    for demand in job_demands:
        nb += 1
        if demand > max_bw:
            low = demand if over == 0 else min(low, demand)
            over += 1
    return BandwidthCheck(nb, over, max_bw, low)
