"""A Batsim 4.x process behind the embedded engine's pull API.

:class:`BatsimSimulation` binds the scheduler's REP socket (a free port by default, so parallel
runs never collide), starts the ``batsim`` executable with the platform, the workloads and that
endpoint, and then offers the same verbs as :class:`~hdeeprm.simulation.Engine`::

    with BatsimSimulation("platform.xml", ["workload.json"], "run/out") as sim:
        message = sim.start()                      # SIMULATION_BEGINS
        while not sim.finished:
            message = sim.proceed(decide(message))
    # Batsim has exited cleanly here; its out_*.csv files are at run/out_*

so a decision system driven by the engine's loop runs on a real Batsim unchanged. Any executable
that speaks Batsim 4.x's protocol and takes Batsim's flags works: ``hdeeprm-sim`` does, which is
how this is tested without Batsim.

Nothing can hang: every wait is bounded by ``timeout`` and checks every 50 ms that the process is
still alive; on any error both the process and the socket are stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

import zmq

from hdeeprm.errors import SimulationError
from hdeeprm.protocol.codec import EventDecoder, dumps, encode_decisions
from hdeeprm.protocol.errors import BatsimExitedError, BatsimNotFoundError, PeerTimeoutError
from hdeeprm.protocol.transport import bind, check_endpoint, receive
from hdeeprm.simulation.events import SIMULATION_ENDS, Decision, Message

#: Default longest wait for one Batsim message, and for Batsim to exit at the end (s).
DEFAULT_CLIENT_TIMEOUT = 60.0
#: Output lines quoted when the process fails.
TAIL_LINES = 15
#: Longest output line quoted (Batsim logs whole JSON messages on one line).
TAIL_LINE_CHARS = 300


#: Environment variable naming the Batsim executable, or the prefix it is installed in.
BATSIM_ENV = "HDEEPRM_BATSIM"


def build_cache() -> Path:
    """Where ``../shared/batsim/build.sh`` installs Batsim by default (its PREFIX)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hdeeprm-batsim"


def default_batsim() -> str:
    """The Batsim to use when none is named: ``$HDEEPRM_BATSIM`` (an executable, or a prefix
    holding ``bin/batsim``), else ``batsim`` on ``PATH``, else the one ``build.sh`` installs
    (``~/.cache/hdeeprm-batsim/bin/batsim``), else ``"batsim"`` (which
    :func:`find_executable` then reports as missing, saying how to get one)."""
    named = os.environ.get(BATSIM_ENV, "").strip()
    if named:
        path = Path(os.path.expanduser(named))
        return os.fspath(path / "bin" / "batsim" if path.is_dir() else path)
    if shutil.which("batsim") is not None:
        return "batsim"
    cached = build_cache() / "bin" / "batsim"
    if cached.is_file() and os.access(cached, os.X_OK):
        return os.fspath(cached)
    return "batsim"


def find_executable(executable: str | os.PathLike[str] = "batsim") -> str:
    """Absolute path of the Batsim executable: a path, or a name looked up on ``PATH``.

    Raises:
        BatsimNotFoundError: with what to do about it.
    """
    name = os.fspath(executable)
    if os.sep in name or (os.altsep and os.altsep in name):
        if os.path.isfile(name) and os.access(name, os.X_OK):
            return os.path.abspath(name)
        problem = "does not exist" if not os.path.exists(name) else "is not an executable file"
        raise BatsimNotFoundError(
            f"Batsim executable {name} {problem}; pass the path of a Batsim 4.x executable "
            "(or of hdeeprm-sim) with --batsim, or drop --simulator batsim to use the embedded "
            "engine"
        )
    found = shutil.which(name)
    if found is None:
        raise BatsimNotFoundError(
            f"Batsim executable {name!r} not found on PATH (nor {BATSIM_ENV} set, nor "
            f"{build_cache() / 'bin' / 'batsim'} built); install Batsim 4.x (see "
            "docs/batsim.md: `make batsim` builds 4.2.1), pass its path with --batsim PATH, or "
            "drop --simulator batsim to use the embedded engine (no installation needed)"
        )
    return found


def batsim_command(
    executable: str,
    platform_xml: str | os.PathLike[str],
    workloads: Sequence[str | os.PathLike[str]],
    export_prefix: str | os.PathLike[str],
    endpoint: str,
    *,
    energy: bool = True,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """Batsim 4.x's command line: ``-p``, one ``-w`` per workload, ``-e``, ``-s``, ``-E``."""
    command = [executable, "-p", os.fspath(platform_xml)]
    for workload in workloads:
        command += ["-w", os.fspath(workload)]
    command += ["-e", os.fspath(export_prefix), "-s", endpoint]
    if energy:
        command.append("-E")
    command.extend(extra_args)
    return command


def _tail(path: Path | None, lines: int = TAIL_LINES) -> str:
    if path is None:
        return ""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 8192))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join(
        line if len(line) <= TAIL_LINE_CHARS else line[: TAIL_LINE_CHARS - 3] + "..."
        for line in kept
    )


class BatsimSimulation:
    """One simulation run by a Batsim process, driven with ``start()`` / ``proceed()``.

    Args:
        platform_xml: the SimGrid platform (Batsim's ``-p``).
        workloads: Batsim workload files (one ``-w`` each).
        export_prefix: Batsim's ``-e``: outputs are written as ``{prefix}_jobs.csv``...
        executable: ``batsim`` (looked up on ``PATH``) or a path; ``hdeeprm-sim`` works too.
        timeout: longest wait for one message, and for the process to exit at the end (s).
        endpoint: endpoint to bind (default: a free TCP port on 127.0.0.1).
        energy: pass ``-E`` (energy plugin and energy outputs).
        extra_args: more command-line arguments for the executable.
        log_path: file receiving the process's stdout and stderr (default: a file next to
            the outputs, ``{export_prefix}_batsim.log``).
        log_shown_as: the path error messages give for the log, when the caller moves it
            elsewhere once the run is over (default: ``log_path``).
    """

    def __init__(
        self,
        platform_xml: str | os.PathLike[str],
        workloads: Sequence[str | os.PathLike[str]],
        export_prefix: str | os.PathLike[str],
        *,
        executable: str | os.PathLike[str] = "batsim",
        timeout: float | None = DEFAULT_CLIENT_TIMEOUT,
        endpoint: str | None = None,
        energy: bool = True,
        extra_args: Sequence[str] = (),
        log_path: str | os.PathLike[str] | None = None,
        log_shown_as: str | os.PathLike[str] | None = None,
    ) -> None:
        self.platform_xml = os.path.abspath(platform_xml)
        self.workloads = [os.path.abspath(w) for w in workloads]
        self.export_prefix = os.path.abspath(export_prefix)
        self.executable = executable
        self.timeout = timeout
        self.requested_endpoint = None if endpoint is None else check_endpoint(endpoint)
        self.energy = energy
        self.extra_args = tuple(extra_args)
        self.log_path = (
            Path(log_path) if log_path is not None else Path(self.export_prefix + "_batsim.log")
        )
        self.log_shown_as = Path(log_shown_as) if log_shown_as is not None else self.log_path
        #: The endpoint bound (known after ``start()``).
        self.endpoint: str | None = None
        self.command: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.decoder = EventDecoder()
        self._context: zmq.Context | None = None
        self._socket: zmq.Socket | None = None
        self._log: IO[bytes] | None = None
        self._now = 0.0
        self._finished = False
        self._owes_reply = False
        self.nb_messages = 0

    # --- engine-like views ----------------------------------------------------------------
    @property
    def now(self) -> float:
        return self._now

    @property
    def started(self) -> bool:
        return self.process is not None

    @property
    def finished(self) -> bool:
        """True once ``SIMULATION_ENDS`` has been received."""
        return self._finished

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    # --- protocol -----------------------------------------------------------------------------
    def start(self) -> Message:
        """Bind, launch the executable, and return its first message (``SIMULATION_BEGINS``)."""
        if self.process is not None:
            raise SimulationError("start() called twice")
        executable = find_executable(self.executable)
        try:
            self._context = zmq.Context()
            self._socket = self._context.socket(zmq.REP)
            self._socket.setsockopt(zmq.LINGER, 0)
            self.endpoint = bind(self._socket, self.requested_endpoint)
            self.command = batsim_command(
                executable,
                self.platform_xml,
                self.workloads,
                self.export_prefix,
                self.endpoint,
                energy=self.energy,
                extra_args=self.extra_args,
            )
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            # Batsim aborts ("Cannot write file") when its export folder does not exist.
            Path(self.export_prefix).parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop())
            try:
                self.process = subprocess.Popen(
                    self.command,
                    stdin=subprocess.DEVNULL,
                    stdout=self._log,
                    stderr=subprocess.STDOUT,
                )
            except OSError as exc:
                raise BatsimNotFoundError(f"cannot start {executable}: {exc}") from None
            return self._receive()
        except BaseException:
            self.stop()
            raise

    def proceed(self, decisions: Sequence[Decision] = ()) -> Message:
        """Send ``decisions`` (effective at ``now``) and return Batsim's next message."""
        if self.process is None:
            raise SimulationError("proceed() before start()")
        if self._finished:
            raise SimulationError("the simulation has ended (SIMULATION_ENDS was received)")
        try:
            assert self._socket is not None
            self._socket.send(dumps(encode_decisions(self._now, decisions)))
            return self._receive()
        except BaseException:
            self.stop()
            raise

    def _receive(self) -> Message:
        assert self._socket is not None
        raw = receive(
            self._socket, self.timeout, peer=f"{self.command[0]}", check=self._check_alive
        )
        self.nb_messages += 1
        self._owes_reply = True
        message = self.decoder.decode(raw)
        self._now = message.now
        if any(event.type == SIMULATION_ENDS for event in message.events):
            self._finished = True
        return message

    def _check_alive(self) -> None:
        assert self.process is not None
        code = self.process.poll()
        if code is not None:
            raise BatsimExitedError(
                f"{self.command[0]} exited with code {code} before the simulation ended "
                f"(after {self.nb_messages} message(s)); full output in {self.log_shown_as}",
                code,
                _tail(self.log_path),
            )

    # --- ending -------------------------------------------------------------------------------
    def close(self) -> int:
        """After ``SIMULATION_ENDS``: answer it, wait for the process to exit, check its status.

        Returns the exit status (0). Called before the end, it stops everything instead and
        raises :class:`SimulationError`.

        Raises:
            PeerTimeoutError: the process did not exit within ``timeout``.
            BatsimExitedError: it exited with a non-zero status.
        """
        if self.process is None:
            raise SimulationError("close() before start()")
        try:
            if not self._finished:
                raise SimulationError("close() before SIMULATION_ENDS; use stop() to abort")
            if self._owes_reply:
                assert self._socket is not None
                self._socket.send(dumps({"now": self._now, "events": []}))
                self._owes_reply = False
            wait = None if self.timeout is None or self.timeout <= 0 else self.timeout
            try:
                code = self.process.wait(wait)
            except subprocess.TimeoutExpired:
                raise PeerTimeoutError(
                    f"{self.command[0]} did not exit within {wait:g} s after SIMULATION_ENDS"
                ) from None
            if code != 0:
                raise BatsimExitedError(
                    f"{self.command[0]} exited with code {code} after the simulation; full "
                    f"output in {self.log_shown_as}",
                    code,
                    _tail(self.log_path),
                )
            return code
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop the process (if still running) and close the socket; safe to call twice."""
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(2.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._socket is not None:
            self._socket.close(linger=0)
            self._socket = None
        if self._context is not None:
            self._context.term()
            self._context = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def output_tail(self) -> str:
        """The process's last output lines."""
        return _tail(self.log_path)

    def __enter__(self) -> BatsimSimulation:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None and self._finished and self.process is not None:
            self.close()
        else:
            self.stop()

    def __del__(self) -> None:  # last resort: never leave a process behind
        with contextlib.suppress(Exception):
            self.stop()


__all__ = [
    "BATSIM_ENV",
    "DEFAULT_CLIENT_TIMEOUT",
    "build_cache",
    "default_batsim",
    "BatsimSimulation",
    "batsim_command",
    "find_executable",
]
