"""Starting or joining Ray the same way for sweeps and vector environments."""

from __future__ import annotations

import os
from typing import Any

from hdeeprm.errors import InputError


def import_ray() -> Any:
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise InputError(
            "this needs Ray: pip install 'hdeeprm[ray]' (or pip install 'ray[default]')"
        ) from None
    return ray


def package_root() -> str:
    """The folder holding the ``hdeeprm`` package being run (a source checkout too)."""
    import hdeeprm

    return os.path.dirname(os.path.dirname(os.path.abspath(hdeeprm.__file__)))


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to Ray unless already connected; return whether this call connected.

    ``address=None`` starts a local instance (``num_cpus`` caps it); otherwise joins the
    cluster at ``address`` (``"auto"``: the one ``ray start`` runs on this machine). Workers
    get this process's ``PYTHONPATH`` plus hdeeprm's folder, so a source checkout works too.
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False}
    if address is None:
        if num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
    else:
        kwargs["address"] = address
    pythonpath = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), package_root()) if p)
    try:
        ray.init(runtime_env={"env_vars": {"PYTHONPATH": pythonpath}}, **kwargs)
    except (ConnectionError, TimeoutError) as exc:
        if address is None:
            raise
        raise no_cluster(address, exc) from None
    return True


def no_cluster(address: str, exc: BaseException) -> InputError:
    """The one-line error for a Ray address where no cluster answers (``--ray auto`` with no
    ``ray start`` on this machine, a wrong host or port)."""
    # Ray's first sentence; the rest is advice about its own flags, not hdeeprm's.
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(". ")[0]
    where = "on this machine" if address == "auto" else f"at {address}"
    return InputError(
        f"no Ray cluster is running {where} ({reason.rstrip('.')}); start one with "
        "'ray start --head' (docs/sweep.md), or use --ray alone for a local instance"
    )
