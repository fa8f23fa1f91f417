"""Cyclic garbage collection around the big, long-lived heaps of whole-trace runs.

CPython's collector runs a *full* collection (the oldest generation: every tracked object in
the process) each time the long-lived heap has grown by a quarter. A whole-trace replay keeps
what it creates: jobs, their records and the output time series, millions of objects that form
no garbage cycles. Measured on the whole RICC trace (447,784 jobs), full collections took
4.5 s of CPU during the simulation and found nothing to free (0 objects collected in the
oldest generation); young collections, which catch the few short-lived cycles, took 1.3 s.

* :func:`gc_paused` switches the collector off while a trace or a platform becomes objects
  (they all stay alive: there is nothing to free); the first young collection after the block
  scans them once.
* :func:`young_collections_only` keeps young collections during a replay but suspends full
  ones; cyclic garbage that outlives two young collections waits for the first full
  collection after the block (when the collector's own thresholds say so). That first full
  collection scans whatever is still alive then: a run that writes its outputs inside the
  block (``run_classic``) lets its engine go before it, instead of paying a whole-heap scan
  between the simulation and the outputs.

Both restore the collector's previous state on exit, exceptions included, and nest.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Oldest generation's threshold inside :func:`young_collections_only`: never reached (it
#: counts young-generation collections since the last full one).
_NEVER = 1 << 30


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (reference counting still frees)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """Young-generation collections only inside the block; full collections are suspended."""
    thresholds = gc.get_threshold()
    young, middle = thresholds[0], thresholds[1] if len(thresholds) > 1 else 10
    gc.set_threshold(young, middle, _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
