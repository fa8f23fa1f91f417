"""The optional compiled kernels: how they are found, turned off, refused when stale, and that
an install without a compiler still works (hdeeprm/_native.py, setup.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hdeeprm import _native

REPO = Path(__file__).resolve().parents[1]
KERNELS = ("hdeeprm.decision._pool_kernels", "hdeeprm.simulation._engine_kernels")


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test looks its modules up again, with the kernels allowed (a run of the suite under
    ``HDEEPRM_PURE_PYTHON=1`` too)."""
    monkeypatch.setattr(_native, "_loaded", {})
    monkeypatch.setattr(_native, "_why", {})
    monkeypatch.delenv(_native.PURE_PYTHON, raising=False)


@pytest.mark.parametrize(("value", "off"), [("", False), ("0", False), ("1", True), ("yes", True)])
def test_pure_python_variable(
    monkeypatch: pytest.MonkeyPatch, fresh_cache: None, value: str, off: bool
) -> None:
    monkeypatch.setenv(_native.PURE_PYTHON, value)
    assert _native.disabled() is off
    if off:
        assert _native.load(KERNELS[0]) is None
        assert _native.report()[KERNELS[0]] == "HDEEPRM_PURE_PYTHON is set"


def test_a_module_that_is_not_built_is_none(fresh_cache: None) -> None:
    assert _native.load("hdeeprm.decision._no_such_kernel") is None
    assert "not built" in _native.report()["hdeeprm.decision._no_such_kernel"]


def _fake_kernel(folder: Path, digest_of: bytes, source: bytes) -> str:
    """A package ``fakekernels`` with a module built (in spirit) from ``digest_of`` beside the
    C source ``source``."""
    package = folder / "fakekernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_k.c").write_bytes(source)
    digest = _native.source_digest(package / "_k.c") if digest_of == source else "0" * 64
    (package / "_k.py").write_text(f"SOURCE_DIGEST = {digest!r}\n")
    return "fakekernels._k"


@pytest.mark.parametrize("stale", [False, True])
def test_a_build_of_another_source_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: None, stale: bool
) -> None:
    monkeypatch.delenv(_native.PURE_PYTHON, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    name = _fake_kernel(tmp_path, b"int old;" if stale else b"int x;", b"int x;")
    if stale:
        with pytest.warns(RuntimeWarning, match="pip install -e"):
            assert _native.load(name) is None
        assert _native.report()[name].startswith("stale")
    else:
        assert _native.load(name) is not None
        assert _native.report()[name] == "compiled"
    sys.modules.pop(name, None)
    sys.modules.pop("fakekernels", None)


@pytest.mark.skipif(
    os.environ.get("HDEEPRM_REQUIRE_KERNELS", "") in ("", "0"),
    reason="HDEEPRM_REQUIRE_KERNELS is not set (CI sets it: its machine has a C compiler)",
)
def test_kernels_are_built_where_required(
    fresh_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_native.PURE_PYTHON, raising=False)
    for name in KERNELS:
        assert _native.load(name) is not None, _native.report()


@pytest.mark.slow
def test_an_install_without_a_compiler_still_works(tmp_path: Path) -> None:
    """The wheel of a machine without a C compiler has no kernel and the pure-Python code."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    clone = tmp_path / "clone"
    shutil.copytree(
        REPO,
        clone,
        ignore=shutil.ignore_patterns(".git", "*.so", "build", "*.egg-info", "runs", "__pycache__"),
    )
    env = dict(os.environ, CC="false", CXX="false")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "wheels"),
            str(clone),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "wheels").glob("hdeeprm-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hdeeprm/_native.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
