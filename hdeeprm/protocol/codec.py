"""Batsim 4.x JSON messages <-> hdeeprm's typed messages and decisions.

Batsim and its schedulers exchange one JSON object per ZeroMQ message::

    {"now": 5.0, "events": [{"timestamp": 5.0, "type": "JOB_COMPLETED",
                             "data": {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY",
                                      "return_code": 0, "alloc": "0-3"}}]}

Four translations, one per direction and side:

* simulator side (``hdeeprm-sim``): :class:`EventEncoder` turns the engine's
  :class:`~hdeeprm.simulation.events.Message` into that JSON, and :func:`decode_decisions` reads
  the scheduler's reply into typed decisions;
* scheduler side (hdeeprm on a real Batsim): :class:`EventDecoder` turns Batsim's JSON into a
  typed ``Message`` whose events carry :class:`BatsimJob` objects that quack like the engine's
  ``SimJob`` (``id``, ``spec``, ``profile``, ``res``...), and :func:`encode_decisions` writes the
  reply.

So the decision system cannot tell the embedded engine from a Batsim process. Batsim's names are
kept: ``NO_MORE_STATIC_JOB_TO_SUBMIT`` travels as ``NOTIFY`` with
``{"type": "no_more_static_job_to_submit"}``, ``KillJobs`` as ``KILL_JOB``, host sets as
interval-set strings (``"0-3 7"``) and P-states as strings. Floats are written with Python's
shortest round-trip form, so times and amounts cross the wire exactly.
"""

from __future__ import annotations

import json
import json.encoder
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hdeeprm._jsonfile import too_deep
from hdeeprm.errors import InputError
from hdeeprm.platform.loader import MAX_PLATFORM_CORES
from hdeeprm.protocol.errors import ProtocolError
from hdeeprm.simulation.engine import JobView
from hdeeprm.simulation.events import (
    COMPLETED_SUCCESSFULLY,
    JOB_COMPLETED,
    JOB_KILLED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    REQUESTED_CALL,
    RESOURCE_STATE_CHANGED,
    SIMULATION_BEGINS,
    SIMULATION_ENDS,
    CallMeLater,
    Decision,
    Event,
    ExecuteJob,
    KillJobs,
    Message,
    RejectJob,
    SetResourceState,
)
from hdeeprm.simulation.intervals import format_interval_set
from hdeeprm.workload.model import JobSpec, Profile, parse_profile

#: A JSON string as ``json.dumps`` writes it (ASCII, escaped), with its quotes.
_STRING_ASCII = json.encoder.encode_basestring_ascii

# --- Batsim protocol names that have no typed counterpart ---------------------------------
NOTIFY = "NOTIFY"
#: ``NOTIFY`` type Batsim sends after the last static job submission.
NOTIFY_NO_MORE_STATIC_JOBS = "no_more_static_job_to_submit"
EXECUTE_JOB = "EXECUTE_JOB"
SET_RESOURCE_STATE = "SET_RESOURCE_STATE"
CALL_ME_LATER = "CALL_ME_LATER"
REJECT_JOB = "REJECT_JOB"
KILL_JOB = "KILL_JOB"
SET_JOB_METADATA = "SET_JOB_METADATA"
#: Scheduler-to-Batsim event types a decision system may send that hdeeprm-sim accepts and
#: ignores: job metadata (the ``metadata`` column stays empty) and the dynamic-registration
#: notifications (registration is never enabled, so they change nothing).
IGNORED_DECISION_TYPES = frozenset({SET_JOB_METADATA, NOTIFY})

#: The ``config`` object of ``SIMULATION_BEGINS``, with Batsim 4.x's keys. hdeeprm-sim never
#: uses Redis nor dynamic job registration.
DEFAULT_CONFIG: dict[str, Any] = {
    "redis-enabled": False,
    "redis-hostname": "127.0.0.1",
    "redis-port": 6379,
    "redis-prefix": "default",
    "profiles-forwarded-on-submission": False,
    "dynamic-jobs-enabled": False,
    "dynamic-jobs-acknowledged": False,
    "profile-reuse-enabled": False,
    "forward-unknown-events": False,
}

#: Decisions at a time further than this from the message they answer are refused (s).
TIME_TOLERANCE = 1e-6


#: One encoder for every message: ``json.dumps`` with non-default options builds a new
#: ``JSONEncoder`` per call, a measurable share of a protocol message's CPU cost.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_C_ENCODE = getattr(json.encoder, "c_make_encoder", None)
if _C_ENCODE is not None:
    # ``JSONEncoder.encode`` builds its C encoder again on every call (0.6 of its 1.5 us for a
    # job description); this one is built once, with the same options and therefore the same
    # text. No circular-reference check: protocol messages are trees (a cycle would end in
    # RecursionError instead of ValueError).
    _C_ENCODE = _C_ENCODE(
        None, _ENCODER.default, _STRING_ASCII, None, ":", ",", False, False, False
    )

    def _ENCODE(doc: Any) -> str:  # noqa: N802 (a constant-like module function)
        # _C_ENCODE is set above; the checker does not carry that into the function
        return "".join(_C_ENCODE(doc, 0))  # type: ignore[misc]

else:  # pragma: no cover (CPython always has the C encoder)

    def _ENCODE(doc: Any) -> str:  # noqa: N802 (a constant-like module function)
        return _ENCODER.encode(doc)


def dumps(doc: Mapping[str, Any]) -> bytes:
    """One protocol message as compact UTF-8 JSON (NaN and infinities refused)."""
    try:
        return _ENCODE(doc).encode("utf-8")
    except ValueError as exc:
        raise ProtocolError(f"cannot encode message: {exc}") from None


def _number(value: float) -> str:
    """A time as the JSON encoder writes it (``float.__repr__``); NaN and infinities
    refused."""
    if not isinstance(value, float):
        return _ENCODE(value)
    text = float.__repr__(value)
    if text in _NOT_FINITE:
        raise ValueError(f"Out of range float values are not JSON compliant: {text}")
    return text


_NOT_FINITE = frozenset({"nan", "inf", "-inf"})
_STRING = _STRING_ASCII


def alloc_text(ids: Sequence[int]) -> str:
    """:func:`format_interval_set` with fast paths for one run of consecutive ids (the usual
    allocation: a Python loop over 160 hosts costs ~9 us per completion otherwise): a tuple
    already in order (the engine keeps the decoded allocation) is compared with its range
    in C, without building a set and sorting it (1.4 against 3.0 us for 160 hosts)."""
    count = len(ids)
    if count and type(ids) is tuple:
        first, last = ids[0], ids[-1]
        if last - first == count - 1 and ids == tuple(range(first, last + 1)):
            return str(first) if count == 1 else f"{first}-{last}"
    ordered = sorted(set(ids))
    count = len(ordered)
    if count and ordered[-1] - ordered[0] == count - 1:
        return str(ordered[0]) if count == 1 else f"{ordered[0]}-{ordered[-1]}"
    return format_interval_set(ordered)


#: A reply without events, as hdeeprm's client (``{"now":5.0,"events":[]}``) or pybatsim
#: (``{"now": 5.0, "events": []}``) writes it: most replies; parsed without ``json.loads``.
_EMPTY_REPLY = re.compile(
    rb'\{\s*"now"\s*:\s*(-?[0-9][0-9.eE+-]*)\s*,\s*"events"\s*:\s*\[\s*\]\s*\}\s*'
)


#: An allocation of single ids and increasing ``a-b`` ranges (``"0-3 7 9-10"``), the form
#: :func:`alloc_text` and pybatsim write, parsed by :func:`_alloc_ids` without checks.
_SIMPLE_ALLOC = re.compile(r"[0-9]+(?:-[0-9]+)?(?: [0-9]+(?:-[0-9]+)?)*")


def _alloc_ids(text: str, nb_hosts: int) -> tuple[int, ...] | None:
    """The host ids of an allocation matching :data:`_SIMPLE_ALLOC`, sorted, no duplicates
    (as :func:`parse_interval_set`); None for a reversed range or an id from ``nb_hosts`` on
    (:func:`_bounded_ids` then reports it), before any range is expanded."""
    ids: list[int] = []
    for part in text.split(" "):
        low, _, high = part.partition("-")
        if high:
            first, last = int(low), int(high)
            if last < first or last >= nb_hosts:
                return None
            ids.extend(range(first, last + 1))
        else:
            first = int(low)
            if first >= nb_hosts:
                return None
            ids.append(first)
    if " " in text:
        return tuple(sorted(set(ids)))
    return tuple(ids)


def empty_reply_now(raw: bytes) -> float | None:
    """The ``now`` of a reply that has no events, or None (any other reply, or a ``now`` that
    is not a finite number: the full parser then reports it)."""
    match = _EMPTY_REPLY.fullmatch(raw)
    if match is None:
        return None
    try:
        now = float(match.group(1))
    except ValueError:
        return None
    return now if math.isfinite(now) else None


_DECODE = json.JSONDecoder().decode


def loads(raw: bytes | str, where: str = "message") -> dict[str, Any]:
    """Parse one protocol message and check its envelope (``now``, ``events``); a message
    nested deeper than :data:`~hdeeprm._jsonfile.MAX_JSON_DEPTH` levels is refused."""
    try:
        # What json.loads does for a message that starts with "{" and no NUL (its encoding
        # sniffing then says UTF-8), without the sniffing.
        fast = isinstance(raw, bytes) and raw[:1] == b"{" and raw[1:2] != b"\x00"
        if isinstance(raw, str):
            text = raw
        elif fast:
            text = raw.decode("utf-8", "surrogatepass")
        else:
            text = raw.decode(json.detect_encoding(raw), "surrogatepass")
        deep = too_deep(text)
        if deep is not None:
            raise ProtocolError(deep, where)
        doc = _DECODE(text) if fast else json.loads(text)
    except RecursionError:
        raise ProtocolError("JSON nested too deeply to parse", where) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        shown = raw if isinstance(raw, str) else raw[:200].decode("utf-8", "replace")
        raise ProtocolError(
            f"not a JSON message ({exc}); received {shown[:120]!r}. Expected Batsim 4.x's JSON "
            'protocol {"now": t, "events": [...]} (Batsim 5 speaks a binary protocol, which '
            "hdeeprm does not support)",
            where,
        ) from None
    return check_envelope(doc, where)


def check_envelope(doc: Any, where: str = "message") -> dict[str, Any]:
    """Check a parsed message: an object with a numeric ``now`` and a list of events, each with
    a string ``type``, a numeric ``timestamp`` and an object ``data`` (missing: ``{}``)."""
    if not isinstance(doc, dict):
        raise ProtocolError(f"expected a JSON object, got {type(doc).__name__}", where)
    _time(doc.get("now"), f"{where}.now")
    events = doc.get("events")
    if not isinstance(events, list):
        raise ProtocolError(f"expected a list of events, got {events!r}", f"{where}.events")
    for index, event in enumerate(events):  # locations are only formatted on error
        if not isinstance(event, dict):
            raise ProtocolError(
                f"expected an event object, got {event!r}", f"{where}.events[{index}]"
            )
        if not isinstance(event.get("type"), str):
            raise ProtocolError(
                f"missing or non-string 'type': {event.get('type')!r}",
                f"{where}.events[{index}]",
            )
        stamp = event.get("timestamp")
        if type(stamp) is not float or not math.isfinite(stamp):
            _time(stamp, f"{where}.events[{index}].timestamp")
        data = event.get("data", {})
        if data is None:
            event["data"] = {}
        elif not isinstance(data, dict):
            raise ProtocolError(
                f"expected an object, got {data!r}", f"{where}.events[{index}].data"
            )
    return doc


def _time(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ProtocolError(f"expected a finite number (seconds), got {value!r}", where)
    return float(value)


def _string(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ProtocolError(f"expected a string, got {value!r}", f"{where}.{key}")
    return value


def _hosts(
    data: Mapping[str, Any], key: str, where: str, nb_hosts: int | None = None
) -> tuple[int, ...]:
    return _bounded_ids(_string(data, key, where), nb_hosts, f"{where}.{key}")


def _bounded_ids(text: str, nb_hosts: int | None, where: str) -> tuple[int, ...]:
    """:func:`parse_interval_set` with every interval checked against ``nb_hosts`` (None: the
    most any platform may have, :data:`MAX_PLATFORM_CORES`) before it is expanded: a
    ``"0-2000000000"`` is refused at once instead of filling the memory."""
    limit = MAX_PLATFORM_CORES if nb_hosts is None else nb_hosts
    ranges: list[range] = []
    for part in text.split():
        low, dash, high = part.partition("-")
        try:
            first = int(low)
            last = int(high) if dash else first
            if last < first or first < 0:
                raise ValueError
        except ValueError:
            raise ProtocolError(
                f"bad interval {part!r} in {text!r}; expected 'a-b' ranges or single ids", where
            ) from None
        if last >= limit:
            platform = (
                f"any platform may have at most {limit:,} hosts"
                if nb_hosts is None
                else f"the platform has {limit:,} hosts (ids 0-{limit - 1})"
            )
            raise ProtocolError(f"host id {last:,} in {part!r} is out of range: {platform}", where)
        ranges.append(range(first, last + 1))
    if len(ranges) == 1:
        return tuple(ranges[0])
    return tuple(sorted({host for hosts in ranges for host in hosts}))


def _pstate(data: Mapping[str, Any], where: str) -> int:
    value = data.get("state")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise ProtocolError(f"expected a P-state number as a string, got {value!r}", f"{where}.state")


# =========================================================================================
# Scheduler side: Batsim's events -> typed events
# =========================================================================================
class BatsimJob(JobView):
    """A job as a scheduler learns it from Batsim's ``JOB_SUBMITTED``.

    Mirrors the read-only part of the engine's ``SimJob`` so that decision systems written for
    the embedded engine (they read ``id``, ``spec``, ``profile``, ``res``, ``subtime``,
    ``walltime``) work unchanged on a real Batsim. ``json`` is Batsim's job description as sent.
    """

    __slots__ = ("id", "workload", "spec", "profile", "json")

    def __init__(
        self, job_id: str, spec: JobSpec, profile: Profile | None, raw: dict[str, Any]
    ) -> None:
        self.id = job_id
        self.workload = job_id.split("!", 1)[0] if "!" in job_id else ""
        self.spec = spec
        self.profile = profile
        self.json = raw

    def __repr__(self) -> str:
        return f"BatsimJob({self.id!r}, res={self.spec.res}, subtime={self.spec.subtime})"


def _lenient_profile(name: str, raw: Any, where: str) -> Profile:
    """Profiles of any Batsim type: the engine's types are validated, others kept as they are
    (a scheduler only reads their extra fields)."""
    if not isinstance(raw, dict):
        raise ProtocolError(f"expected a profile object, got {raw!r}", where)
    try:
        return parse_profile(name, raw, "<protocol>", where)
    except InputError:
        extra = {k: v for k, v in raw.items() if k != "type"}
        return Profile(name, str(raw.get("type")), extra=extra)


class EventDecoder:
    """Turns Batsim's messages into typed :class:`Message` objects, keeping what a scheduler
    must remember between messages: the profiles of ``SIMULATION_BEGINS`` and every submitted
    job (so ``JOB_COMPLETED`` events carry the job object, as the engine's do)."""

    def __init__(self) -> None:
        #: Profiles by workload name, then profile name.
        self.profiles: dict[str, dict[str, Profile]] = {}
        #: Submitted jobs by Batsim id (``"workload!job"``).
        self.jobs: dict[str, BatsimJob] = {}
        self.nb_messages = 0
        #: Batsim's resource count (``nb_resources`` of ``SIMULATION_BEGINS``): host ids in
        #: later events are checked against it.
        self.nb_hosts: int | None = None

    def decode(self, raw: bytes | str | Mapping[str, Any]) -> Message:
        """One Batsim message (raw bytes or an already parsed object) as a typed message."""
        self.nb_messages += 1
        where = f"message {self.nb_messages}"
        doc = loads(raw, where) if isinstance(raw, (bytes, str)) else check_envelope(raw, where)
        events = [
            self._event(event, f"{where}.events[{index}]")
            for index, event in enumerate(doc["events"])
        ]
        return Message(float(doc["now"]), events)

    def _event(self, raw: dict[str, Any], where: str) -> Event:
        kind = raw["type"]
        when = float(raw["timestamp"])
        data: dict[str, Any] = raw.get("data") or {}
        at = f"{where}.data"
        if kind == JOB_SUBMITTED:
            return Event(when, kind, self._submitted(data, when, at))
        if kind == JOB_COMPLETED:
            job_id = _string(data, "job_id", at)
            job = self.jobs.get(job_id)
            if job is None:
                raise ProtocolError(f"job {job_id!r} completed but was never submitted", at)
            return Event(
                when,
                kind,
                {
                    "job_id": job_id,
                    "job": job,
                    "job_state": _string(data, "job_state", at),
                    "alloc": _hosts(data, "alloc", at, self.nb_hosts),
                    "return_code": data.get("return_code", 0),
                },
            )
        if kind == RESOURCE_STATE_CHANGED:
            return Event(
                when,
                kind,
                {
                    "resources": _hosts(data, "resources", at, self.nb_hosts),
                    "state": _pstate(data, at),
                },
            )
        if kind == NOTIFY and data.get("type") == NOTIFY_NO_MORE_STATIC_JOBS:
            return Event(when, NO_MORE_STATIC_JOB_TO_SUBMIT, {})
        if kind == REQUESTED_CALL:
            return Event(when, kind, {"requested_at": when})
        if kind == JOB_KILLED:
            return Event(when, kind, self._killed(data, at))
        if kind == SIMULATION_BEGINS:
            return Event(when, kind, self._begins(data, at))
        if kind == SIMULATION_ENDS:
            return Event(when, kind, {})
        return Event(when, kind, dict(data))  # other Batsim events: passed through untouched

    def _begins(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        out = dict(data)
        for key in ("nb_resources", "nb_compute_resources"):
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProtocolError(
                    f"expected a non-negative integer, got {value!r}", f"{where}.{key}"
                )
        resources = data.get("compute_resources", [])
        if not isinstance(resources, list):
            raise ProtocolError("expected a list", f"{where}.compute_resources")
        raw_profiles = data.get("profiles", {})
        if not isinstance(raw_profiles, dict):
            raise ProtocolError("expected an object", f"{where}.profiles")
        self.profiles = {}
        self.jobs = {}
        self.nb_hosts = data.get("nb_resources")
        for workload, profiles in raw_profiles.items():
            if not isinstance(profiles, dict):
                raise ProtocolError("expected an object", f"{where}.profiles.{workload}")
            self.profiles[workload] = {
                name: _lenient_profile(name, prof, f"{where}.profiles.{workload}.{name}")
                for name, prof in profiles.items()
            }
        out["profiles"] = self.profiles
        out.setdefault("config", {})
        out.setdefault("workloads", {})
        return out

    def _submitted(self, data: dict[str, Any], when: float, where: str) -> dict[str, Any]:
        job_id = _string(data, "job_id", where)
        raw = data.get("job")
        if not isinstance(raw, dict):
            raise ProtocolError(
                "expected the job's description in 'job' (hdeeprm needs Batsim without Redis)",
                f"{where}.job",
            )
        res = raw.get("res")
        if isinstance(res, bool) or not isinstance(res, int) or res < 1:
            raise ProtocolError(f"expected a positive integer, got {res!r}", f"{where}.job.res")
        profile_name = raw.get("profile")
        if not isinstance(profile_name, str):
            raise ProtocolError(
                f"expected a profile name, got {profile_name!r}", f"{where}.job.profile"
            )
        subtime = raw.get("subtime", when)
        subtime = _time(subtime, f"{where}.job.subtime")
        walltime = raw.get("walltime")
        if walltime is not None:
            walltime = _time(walltime, f"{where}.job.walltime")
            if walltime <= 0:
                walltime = None  # Batsim's -1: no walltime
        workload = job_id.split("!", 1)[0] if "!" in job_id else ""
        local_id = job_id.split("!", 1)[1] if "!" in job_id else job_id
        profiles = self.profiles.setdefault(workload, {})
        if "profile" in data:  # Batsim's --forward-profiles-on-submission
            profiles[profile_name] = _lenient_profile(
                profile_name, data["profile"], f"{where}.profile"
            )
        extra = {
            k: v for k, v in raw.items() if k not in ("id", "subtime", "res", "profile", "walltime")
        }
        spec = JobSpec(local_id, subtime, res, profile_name, walltime, extra)
        job = BatsimJob(job_id, spec, profiles.get(profile_name), raw)
        self.jobs[job_id] = job
        return {"job_id": job_id, "job": job}

    def _killed(self, data: dict[str, Any], where: str) -> dict[str, Any]:
        ids = data.get("job_ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ProtocolError(f"expected a list of job ids, got {ids!r}", f"{where}.job_ids")
        progress: dict[str, float] = {}
        raw_progress = data.get("job_progress") or {}
        if not isinstance(raw_progress, dict):
            raise ProtocolError("expected an object", f"{where}.job_progress")
        for job_id, info in raw_progress.items():
            value = info.get("progress", 0.0) if isinstance(info, dict) else info
            progress[job_id] = float(value) if isinstance(value, (int, float)) else 0.0
        jobs = [self.jobs[i] for i in progress if i in self.jobs]
        return {"job_ids": tuple(ids), "jobs": jobs, "job_progress": progress}


def encode_decisions(now: float, decisions: Iterable[Decision]) -> dict[str, Any]:
    """A scheduler's reply: ``decisions``, all taking effect at ``now``."""
    events: list[dict[str, Any]] = []
    append = events.append
    for decision in decisions:
        if type(decision) is ExecuteJob:
            data: dict[str, Any] = {
                "job_id": decision.job_id,
                "alloc": format_interval_set(decision.alloc),
            }
            append({"timestamp": now, "type": EXECUTE_JOB, "data": data})
        elif type(decision) is SetResourceState:
            data = {
                "resources": format_interval_set(decision.resources),
                "state": str(int(decision.state)),
            }
            append({"timestamp": now, "type": SET_RESOURCE_STATE, "data": data})
        elif type(decision) is CallMeLater:
            data = {"timestamp": float(decision.timestamp)}
            append({"timestamp": now, "type": CALL_ME_LATER, "data": data})
        elif type(decision) is RejectJob:
            data = {"job_id": decision.job_id}
            append({"timestamp": now, "type": REJECT_JOB, "data": data})
        elif type(decision) is KillJobs:
            data = {"job_ids": list(decision.job_ids)}
            append({"timestamp": now, "type": KILL_JOB, "data": data})
        else:
            raise ProtocolError(f"cannot encode decision {decision!r}")
    return {"now": now, "events": events}


# =========================================================================================
# Simulator side: typed events -> Batsim's events, and the scheduler's decisions back
# =========================================================================================
class EventEncoder:
    """Turns the engine's messages into Batsim 4.x JSON.

    Args:
        workload_paths: workload name -> absolute file path, for ``SIMULATION_BEGINS``'s
            ``workloads`` object (Batsim sends the files' paths).
        forward_profiles: put each job's profile in its ``JOB_SUBMITTED`` event (Batsim's
            ``--forward-profiles-on-submission``).
        config: overrides of :data:`DEFAULT_CONFIG`.
    """

    def __init__(
        self,
        workload_paths: Mapping[str, str] | None = None,
        *,
        forward_profiles: bool = False,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.workload_paths = dict(workload_paths or {})
        self.forward_profiles = forward_profiles
        self.config = dict(DEFAULT_CONFIG)
        self.config["profiles-forwarded-on-submission"] = forward_profiles
        self.config.update(config or {})

    def encode(self, message: Message) -> dict[str, Any]:
        """The whole message as a JSON-ready object."""
        return {"now": message.now, "events": [self.event(e) for e in message.events]}

    def encode_bytes(self, message: Message, now: float | None = None) -> bytes:
        """``dumps(encode(message))`` (with ``now`` in place of the message's, if given), the
        same bytes, written directly for the events of every message (completions,
        submissions): no intermediate objects for the JSON encoder to walk."""
        try:
            return self._encode_bytes(message, now)
        except ValueError as exc:  # NaN or infinity, as dumps()
            raise ProtocolError(f"cannot encode message: {exc}") from None

    def _encode_bytes(self, message: Message, now: float | None) -> bytes:
        parts = []
        for event in message.events:
            kind = event.type
            data = event.data
            if kind == JOB_COMPLETED:
                state = data["job_state"]
                code = "0" if state == COMPLETED_SUCCESSFULLY else "-1"
                parts.append(
                    f'{{"timestamp":{_number(event.timestamp)},"type":"JOB_COMPLETED",'
                    f'"data":{{"job_id":{_STRING(data["job_id"])},"job_state":{_STRING(state)},'
                    f'"return_code":{code},"alloc":"{alloc_text(data["alloc"])}"}}}}'
                )
            elif kind == JOB_SUBMITTED and not self.forward_profiles:
                job = data["job"]
                desc = job.spec.to_json()
                desc["id"] = job.id
                parts.append(
                    f'{{"timestamp":{_number(event.timestamp)},"type":"JOB_SUBMITTED",'
                    f'"data":{{"job_id":{_STRING(job.id)},"job":{_ENCODE(desc)}}}}}'
                )
            else:
                parts.append(_ENCODE(self.event(event)))
        stamp = _number(message.now if now is None else now)
        return f'{{"now":{stamp},"events":[{",".join(parts)}]}}'.encode()

    def event(self, event: Event) -> dict[str, Any]:
        """One event as a JSON-ready object."""
        kind = event.type
        data = event.data
        if kind == JOB_SUBMITTED:
            job = data["job"]
            spec = job.spec
            desc = spec.to_json()
            desc["id"] = job.id
            out: dict[str, Any] = {"job_id": job.id, "job": desc}
            if self.forward_profiles:
                out["profile"] = job.profile.to_json()
            return {"timestamp": event.timestamp, "type": kind, "data": out}
        if kind == JOB_COMPLETED:
            state = data["job_state"]
            out = {
                "job_id": data["job_id"],
                "job_state": state,
                "return_code": 0 if state == COMPLETED_SUCCESSFULLY else -1,
                "alloc": alloc_text(data["alloc"]),
            }
            return {"timestamp": event.timestamp, "type": kind, "data": out}
        if kind == RESOURCE_STATE_CHANGED:
            out = {
                "resources": format_interval_set(data["resources"]),
                "state": str(int(data["state"])),
            }
            return {"timestamp": event.timestamp, "type": kind, "data": out}
        if kind == NO_MORE_STATIC_JOB_TO_SUBMIT:
            out = {"type": NOTIFY_NO_MORE_STATIC_JOBS}
            return {"timestamp": event.timestamp, "type": NOTIFY, "data": out}
        if kind in (REQUESTED_CALL, SIMULATION_ENDS):
            return {"timestamp": event.timestamp, "type": kind, "data": {}}
        if kind == JOB_KILLED:
            jobs = {job.id: job for job in data.get("jobs", ())}
            progress = {
                job_id: {
                    "profile": jobs[job_id].spec.profile if job_id in jobs else "",
                    "progress": float(value),
                }
                for job_id, value in data.get("job_progress", {}).items()
            }
            out = {"job_ids": list(data["job_ids"]), "job_progress": progress}
            return {"timestamp": event.timestamp, "type": kind, "data": out}
        if kind == SIMULATION_BEGINS:
            return {"timestamp": event.timestamp, "type": kind, "data": self._begins(data)}
        raise ProtocolError(f"cannot encode event type {kind!r}")

    def _begins(self, data: Mapping[str, Any]) -> dict[str, Any]:
        workloads = data.get("workloads", {})
        profiles = {}
        for name, workload in workloads.items():
            profs = getattr(workload, "profiles", None)
            if profs is None:  # already a {profile name: profile} mapping
                profs = data.get("profiles", {}).get(name, {})
            profiles[name] = {
                pname: (prof.to_json() if isinstance(prof, Profile) else dict(prof))
                for pname, prof in profs.items()
            }
        return {
            "nb_resources": data["nb_resources"],
            "nb_compute_resources": data.get("nb_compute_resources", data["nb_resources"]),
            "nb_storage_resources": data.get("nb_storage_resources", 0),
            "allow_compute_sharing": data.get("allow_time_sharing_on_compute", False),
            "allow_storage_sharing": data.get("allow_time_sharing_on_storage", False),
            "config": self.config,
            "compute_resources": [
                {
                    "id": r["id"],
                    "name": r["name"],
                    "state": r.get("state", "idle"),
                    "properties": dict(r.get("properties", {})),
                }
                for r in data.get("compute_resources", [])
            ],
            "storage_resources": list(data.get("storage_resources", [])),
            "workloads": {name: self.workload_paths.get(name, "") for name in workloads},
            "profiles": profiles,
        }


def decode_decisions(
    raw: bytes | str | Mapping[str, Any],
    *,
    at: float | None = None,
    where: str = "reply",
    ignored: list[dict[str, Any]] | None = None,
    stamps: list[float] | None = None,
    nb_hosts: int | None = None,
) -> list[Decision]:
    """A scheduler's reply as typed decisions, in order.

    Args:
        raw: the reply (bytes, text or parsed object).
        at: if given, every decision must be for that time (within :data:`TIME_TOLERANCE`).
        where: prefix of error locations.
        ignored: if given, receives the events accepted but ignored
            (:data:`IGNORED_DECISION_TYPES`).
        stamps: if given, receives each returned decision's timestamp (same order).
        nb_hosts: the platform's host count: host ids from it on are refused (default: the
            most any platform may have).

    Raises:
        ProtocolError: malformed reply or event type hdeeprm-sim does not support.
    """
    doc = loads(raw, where) if isinstance(raw, (bytes, str)) else check_envelope(raw, where)
    return _decisions(doc, at, where, ignored, stamps, nb_hosts)


def read_reply(
    raw: bytes,
    where: str,
    ignored: list[dict[str, Any]] | None = None,
    nb_hosts: int | None = None,
) -> tuple[float, list[Decision], list[float]]:
    """A scheduler's reply as the server reads it: ``(now, decisions, their timestamps)``.

    The same checks as :func:`loads` + :func:`decode_decisions` + :func:`reply_time`, each
    done once: a reply without events is read without ``json.loads``
    (:func:`empty_reply_now`), and the envelope is checked once, not again by the decoder.

    Raises:
        ProtocolError: malformed reply, unsupported event, or a decision after ``now``.
    """
    now = empty_reply_now(raw)
    if now is not None:
        return now, [], []
    doc = loads(raw, where)
    stamps: list[float] = []
    decisions = _decisions(doc, None, where, ignored, stamps, nb_hosts)
    return reply_time(doc, stamps, where), decisions, stamps


def reply_time(doc: Mapping[str, Any], stamps: Sequence[float], where: str) -> float:
    """The ``now`` of a (parsed) scheduler reply; as Batsim, refuse a decision timestamped
    after it (Batsim aborts: "timestamp ... should be lower than or equal to now")."""
    reply_now = float(doc["now"])
    for index, stamp in enumerate(stamps):
        if stamp - reply_now > TIME_TOLERANCE:
            raise ProtocolError(
                f"decision {index} is timestamped {stamp!r}, after the reply's now "
                f"({reply_now!r}); timestamps must be <= now",
                f"{where}.events",
            )
    return reply_now


def _decisions(
    doc: Mapping[str, Any],
    at: float | None,
    where: str,
    ignored: list[dict[str, Any]] | None,
    stamps: list[float] | None,
    nb_hosts: int | None = None,
) -> list[Decision]:
    """:func:`decode_decisions` of a reply whose envelope is checked."""
    decisions: list[Decision] = []
    limit = MAX_PLATFORM_CORES if nb_hosts is None else nb_hosts
    for index, event in enumerate(doc["events"]):
        kind = event["type"]
        stamp = float(event["timestamp"])
        data = event.get("data") or {}
        if kind == EXECUTE_JOB and at is None:
            # The hot case, without building error locations: a well-formed EXECUTE_JOB
            # (anything else goes through the checks below, which name what is wrong).
            job_id, alloc = data.get("job_id"), data.get("alloc")
            if (
                type(job_id) is str
                and type(alloc) is str
                and data.get("additional_io_job") is None
                and _SIMPLE_ALLOC.fullmatch(alloc)
                and (hosts := _alloc_ids(alloc, limit)) is not None
            ):
                decisions.append(ExecuteJob(job_id, hosts))
                if stamps is not None:
                    stamps.append(stamp)
                continue
        ev_where = f"{where}.events[{index}]"
        if at is not None and abs(stamp - at) > TIME_TOLERANCE:
            raise ProtocolError(
                f"{kind} is timestamped {stamp!r} but answers the message of t={at!r}",
                f"{ev_where}.timestamp",
            )
        before = len(decisions)
        at_data = f"{ev_where}.data"
        if kind == EXECUTE_JOB:
            if data.get("additional_io_job") is not None:
                raise ProtocolError("'additional_io_job' is not supported", at_data)
            hosts = _hosts(data, "alloc", at_data, nb_hosts)
            if not hosts:
                raise ProtocolError("empty allocation", f"{at_data}.alloc")
            decisions.append(ExecuteJob(_string(data, "job_id", at_data), hosts))
        elif kind == SET_RESOURCE_STATE:
            hosts = _hosts(data, "resources", at_data, nb_hosts)
            decisions.append(SetResourceState(hosts, _pstate(data, at_data)))
        elif kind == CALL_ME_LATER:
            decisions.append(CallMeLater(_time(data.get("timestamp"), f"{at_data}.timestamp")))
        elif kind == REJECT_JOB:
            decisions.append(RejectJob(_string(data, "job_id", at_data)))
        elif kind == KILL_JOB:
            ids = data.get("job_ids")
            if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
                raise ProtocolError(
                    f"expected a non-empty list of job ids, got {ids!r}", f"{at_data}.job_ids"
                )
            decisions.append(KillJobs(tuple(ids)))
        elif kind in IGNORED_DECISION_TYPES:
            if ignored is not None:
                ignored.append(event)
        else:
            raise ProtocolError(
                f"event type {kind!r} is not supported by hdeeprm-sim (supported: EXECUTE_JOB, "
                "SET_RESOURCE_STATE, CALL_ME_LATER, REJECT_JOB, KILL_JOB; SET_JOB_METADATA and "
                "NOTIFY are accepted and ignored)",
                f"{ev_where}.type",
            )
        if stamps is not None and len(decisions) > before:
            stamps.append(stamp)
    return decisions


def normalise(decisions: Sequence[Decision]) -> list[Decision]:
    """Decisions as they look after a trip over the wire: host sets sorted and deduplicated,
    ids as tuples (for comparing an in-process run with a remote one)."""
    out: list[Decision] = []
    for d in decisions:
        if isinstance(d, ExecuteJob):
            out.append(ExecuteJob(d.job_id, tuple(sorted(set(d.alloc)))))
        elif isinstance(d, SetResourceState):
            out.append(SetResourceState(tuple(sorted(set(d.resources))), int(d.state)))
        elif isinstance(d, KillJobs):
            out.append(KillJobs(tuple(d.job_ids)))
        else:
            out.append(d)
    return out


__all__ = [
    "CALL_ME_LATER",
    "DEFAULT_CONFIG",
    "EXECUTE_JOB",
    "IGNORED_DECISION_TYPES",
    "KILL_JOB",
    "NOTIFY",
    "NOTIFY_NO_MORE_STATIC_JOBS",
    "REJECT_JOB",
    "SET_JOB_METADATA",
    "SET_RESOURCE_STATE",
    "TIME_TOLERANCE",
    "BatsimJob",
    "EventDecoder",
    "EventEncoder",
    "check_envelope",
    "decode_decisions",
    "dumps",
    "encode_decisions",
    "loads",
    "normalise",
    "read_reply",
    "reply_time",
]
