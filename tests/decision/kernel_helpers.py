"""What the tests of the compiled pool kernel share: the kernel allowed whatever
``HDEEPRM_PURE_PYTHON`` says, the module loaded or the test file skipped (failed under
``HDEEPRM_REQUIRE_KERNELS=1``), and the same random operation played on a native and a
reference pool."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import pytest

from hdeeprm import _native
from hdeeprm.decision import CorePool

KERNELS = "hdeeprm.decision._pool_kernels"


@contextmanager
def kernel_allowed() -> Iterator[None]:
    """``HDEEPRM_PURE_PYTHON`` lifted (the kernel is what is tested)."""
    saved = os.environ.pop(_native.PURE_PYTHON, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[_native.PURE_PYTHON] = saved


def require_kernel() -> ModuleType:
    """The compiled pool kernel; else the calling test module is skipped, saying how to build
    it, or fails when ``HDEEPRM_REQUIRE_KERNELS`` is set (CI: its machine has a compiler)."""
    with kernel_allowed():
        module = _native.load(KERNELS)
    if module is None:
        why = f"the compiled pool kernel is not usable: {_native.report().get(KERNELS)}"
        if os.environ.get("HDEEPRM_REQUIRE_KERNELS", "") not in ("", "0"):
            raise RuntimeError(f"HDEEPRM_REQUIRE_KERNELS is set but {why}")
        pytest.skip(
            f"{why} (build it with `python setup.py build_ext --inplace`)",
            allow_module_level=True,
        )
    return module


def play_on_both(
    pools: tuple[CorePool, CorePool],
    op: tuple[str, int, float],
    step: int,
    running: list[list[int]],
) -> bool:
    """Play a random ``take`` (1-3 free cores from ``pick``, then settled), ``release`` (one
    of ``running``) or ``reset`` on both pools alike; False for any other kind of operation."""
    kind, pick, mem = op
    pool = pools[0]
    now = float(step)
    if kind == "take":
        free = [c for c in range(pool.nb_cores) if pool.core_job[c] is None]
        if free:
            cores = free[pick % len(free) : pick % len(free) + 1 + pick % 3]
            for p in pools:
                for core in cores:
                    p.take(core, f"j{step}", mem, 0.0)
                p.settle(cores, now)
            running.append(cores)
    elif kind == "release":
        if running:
            cores = running.pop(pick % len(running))
            for p in pools:
                p.release(cores, now)
    elif kind == "reset":
        running.clear()
        for p in pools:
            p.reset()
    else:
        return False
    return True
