"""Optional compiled kernels, with the pure-Python reference always beside them.

Some hot loops (the core pool's takes, releases and settles, and the recounts of the fit
counts kept on it; the engine's per-host energy and P-state bookkeeping) exist twice: as
readable Python, the reference, and as C in an extension module built by ``pip install``
where a compiler exists (``setup.py``: optional, so an install without one still succeeds and
runs the Python). Both give the same results bit for bit (property-tested); the C only runs
faster.

``HDEEPRM_PURE_PYTHON=1`` turns every kernel off (to compare, or to debug in Python). A
kernel built from another version of its C source (an editable install not rebuilt after the
source changed) is not used: the Python runs instead, with one warning saying how to rebuild.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import warnings
from pathlib import Path
from types import ModuleType

#: Environment variable that disables every compiled kernel when set to a non-empty value
#: other than ``0``.
PURE_PYTHON = "HDEEPRM_PURE_PYTHON"

_loaded: dict[str, ModuleType | None] = {}
_why: dict[str, str] = {}


def source_digest(source: Path) -> str:
    """The SHA-256 of a kernel's C source, as ``setup.py`` compiles it into the module."""
    return hashlib.sha256(source.read_bytes()).hexdigest()


def disabled() -> bool:
    """Whether ``HDEEPRM_PURE_PYTHON`` asks for the pure-Python reference everywhere."""
    return os.environ.get(PURE_PYTHON, "") not in ("", "0")


def load(name: str) -> ModuleType | None:
    """The compiled module ``name`` (e.g. ``"hdeeprm.decision._pool_kernels"``), or ``None``
    when it is not built, is disabled, or was built from another version of its source."""
    if disabled():
        _why[name] = f"{PURE_PYTHON} is set"
        return None
    if name in _loaded:
        return _loaded[name]
    module: ModuleType | None
    try:
        module = importlib.import_module(name)
    except ImportError:
        module = None
        _why[name] = "not built (no C compiler at install time?)"
    else:
        source = Path(module.__file__ or "").parent / (name.rsplit(".", 1)[1] + ".c")
        if source.is_file() and getattr(module, "SOURCE_DIGEST", None) != source_digest(source):
            warnings.warn(
                f"{name} was compiled from another version of {source.name}: using the "
                "pure-Python code; rebuild it with `pip install -e .` (or `make install`)",
                RuntimeWarning,
                stacklevel=2,
            )
            _why[name] = f"stale: built from another version of {source.name}"
            module = None
        else:
            _why[name] = "compiled"
    _loaded[name] = module
    return module


def choose(
    name: str, native: bool | None, owner: str, error: type[Exception] = RuntimeError
) -> ModuleType | None:
    """The compiled module ``name`` an ``owner(native=...)`` runs: ``False`` never (the
    Python reference), ``None`` when it is usable (:func:`load`), ``True`` always, raising
    ``error`` (naming why and how to build it) when it is not."""
    if native is False:
        return None
    module = load(name)
    if module is None and native:
        raise error(
            f"{owner}(native=True): the compiled kernels {name} are not available "
            f"({_why.get(name, 'not loaded')}); build them with `pip install -e .` (or "
            "`python setup.py build_ext --inplace`), or use native=None to fall back to the "
            "pure-Python code"
        )
    return module


def report() -> dict[str, str]:
    """Each kernel asked for so far and whether it runs compiled (or why not)."""
    return dict(_why)


__all__ = ["PURE_PYTHON", "choose", "disabled", "load", "report", "source_digest"]
