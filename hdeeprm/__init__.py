"""hdeeprm: deep-reinforcement-learning workload management for heterogeneous HPC clusters.

The package is split by concern, and data flows one way through it:

* :mod:`hdeeprm.platform`   -- cluster description (JSON) -> resource hierarchy, ``platform.xml``
* :mod:`hdeeprm.workload`   -- SWF traces / synthetic models -> Batsim ``workload.json``
* :mod:`hdeeprm.simulation` -- the embedded Batsim-compatible discrete-event engine
* :mod:`hdeeprm.cli`        -- the ``hdeeprm-*`` console scripts
"""

import logging

from hdeeprm.errors import HDeepRMError, InputError

# A library installs no handler: without one configured by the application, hdeeprm's records
# go nowhere (instead of Python's last-resort handler printing warnings on stderr).
logging.getLogger("hdeeprm").addHandler(logging.NullHandler())

__version__ = "0.1.0"

__all__ = ["HDeepRMError", "InputError", "__version__"]
