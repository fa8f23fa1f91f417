"""``hdeeprm-launch`` with the workload manager's P-state decisions withheld: a diagnostic for
``benchmarks/fidelity/easy_equivalence.py``.

On a real Batsim every decision of a reply takes 1e-10 s of simulated time before the next one
(docs/batsim.md), so the ``SET_RESOURCE_STATE`` decisions hdeeprm sends before its
``EXECUTE_JOB`` s start its jobs a few 1e-10 s later than pybatsim's (which sends none), and two
jobs ending at the same nominal instant may then reach the scheduler in the other order, which
pybatsim's one-pass-per-event EASY is sensitive to. Without them, both schedulers receive the
very same messages. With delay profiles the cores' speed does not matter, so withholding them
changes nothing else.
"""

from __future__ import annotations

import sys

from hdeeprm.cli.launch import main
from hdeeprm.decision.resources import CorePool

_drain = CorePool.drain


def _withheld(self: CorePool) -> list:
    _drain(self)  # the pool's bookkeeping as usual; the decisions are dropped
    return []


if __name__ == "__main__":
    CorePool.drain = _withheld  # type: ignore[method-assign]
    sys.argv[0] = "hdeeprm-launch"
    main()
