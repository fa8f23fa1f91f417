"""Helpers of the protocol tests: platforms, free ports, executables wrapping Python programs."""

from __future__ import annotations

import socket
import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Two 1 GFLOPS hosts plus the master host, P-states as thesis 4.1.4 (P0 100 W ... P3 5 W),
#: starting in P3; idle P-states at 1e-6 GFLOPS, as hdeeprm's generator writes them.
THESIS_XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="cor_0" speed="1Gf,0.75Gf,0.000001Gf,0.000001Gf" pstate="3">
      <prop id="wattage_per_state" value="100:100,100:100,25:25,5:5"/>
    </host>
    <host id="cor_1" speed="1Gf,0.75Gf,0.000001Gf,0.000001Gf" pstate="3">
      <prop id="wattage_per_state" value="100:100,100:100,25:25,5:5"/>
    </host>
  </zone>
</platform>
"""

#: Four 1 GFLOPS hosts without energy, for delay-profile schedulers.
FOUR_HOSTS_XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="node_0" speed="1Gf"/>
    <host id="node_1" speed="1Gf"/>
    <host id="node_2" speed="1Gf"/>
    <host id="node_3" speed="1Gf"/>
  </zone>
</platform>
"""


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_executable(folder: Path, name: str, python_args: list[str]) -> Path:
    """A shell script ``folder/name`` that execs this Python with ``python_args`` plus its own
    arguments (``exec``: the script's pid is the program's, so stopping it stops the program)."""
    quoted = " ".join(f'"{a}"' for a in [sys.executable, *python_args])
    path = folder / name
    path.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_batsim_exe(folder: Path) -> Path:
    """An executable fake Batsim (see fake_batsim.py; FAKE_BATSIM_MODE picks its behaviour)."""
    return make_executable(folder, "fake-batsim", [str(HERE / "fake_batsim.py")])


def hdeeprm_sim_exe(folder: Path, *, batsim_timing: bool = False) -> Path:
    """An executable running ``hdeeprm-sim`` from this source tree (no reinstall needed),
    with Batsim's timing if asked, ``--instant`` otherwise."""
    extra = [] if batsim_timing else ["--instant"]
    return make_executable(folder, "hdeeprm-sim", ["-m", "hdeeprm.cli.sim", *extra])
