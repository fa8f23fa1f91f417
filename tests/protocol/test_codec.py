"""Batsim 4.x JSON <-> typed messages and decisions, with thesis appendix D's values."""

from __future__ import annotations

import json

import pytest

from hdeeprm.protocol.codec import (
    EventDecoder,
    EventEncoder,
    alloc_text,
    decode_decisions,
    dumps,
    empty_reply_now,
    encode_decisions,
    normalise,
    read_reply,
)
from hdeeprm.protocol.errors import ProtocolError
from hdeeprm.simulation import (
    COMPLETED_KILLED,
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
    Engine,
    Event,
    ExecuteJob,
    KillJobs,
    Message,
    RejectJob,
    SetResourceState,
    SimPlatform,
)
from hdeeprm.simulation.intervals import format_interval_set, parse_interval_set
from hdeeprm.workload.model import JobSpec, Profile, Workload

# --- thesis appendix D, as Batsim 4.x sends it (the thesis's copies have typos) ----------
D1 = """{"now": 0.000000, "events": [{"timestamp": 0.000000, "type": "SIMULATION_BEGINS",
  "data": {"nb_resources": 2, "nb_compute_resources": 2, "nb_storage_resources": 0,
    "allow_compute_sharing": false, "allow_storage_sharing": false, "config": {},
    "compute_resources": [
      {"id": 0, "name": "cor_0", "state": "idle", "properties": {"role": ""}},
      {"id": 1, "name": "cor_1", "state": "idle", "properties": {"role": ""}}],
    "storage_resources": [],
    "workloads": {"62b680": "/workspace/workload.json"},
    "profiles": {"62b680": {"A": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0,
                                  "mem": 8000, "mem_bw": 2}}}}}]}"""
D2 = """{"now": 0.000000, "events": [{"timestamp": 0.000000, "type": "JOB_SUBMITTED",
  "data": {"job_id": "62b680!job0",
           "job": {"id": "62b680!job0", "subtime": 0, "res": 1, "profile": "A"}}}]}"""
D4 = """{"now": 0.000000, "events": [
  {"timestamp": 0.000000, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}},
  {"timestamp": 0.000000, "type": "RESOURCE_STATE_CHANGED",
   "data": {"resources": "0", "state": "0"}},
  {"timestamp": 0.000000, "type": "RESOURCE_STATE_CHANGED",
   "data": {"resources": "1", "state": "2"}}]}"""
D5 = """{"now": 5.000000, "events": [{"timestamp": 5.000000, "type": "JOB_COMPLETED",
  "data": {"job_id": "62b680!job0", "job_state": "COMPLETED_SUCCESSFULLY",
           "return_code": 0, "alloc": "0"}},
  {"timestamp": 5.000000, "type": "SIMULATION_ENDS", "data": {}}]}"""


def test_appendix_d_decodes_to_typed_events() -> None:
    decoder = EventDecoder()
    begins = decoder.decode(D1)
    assert (begins.now, [e.type for e in begins.events]) == (0.0, [SIMULATION_BEGINS])
    data = begins.events[0].data
    assert data["nb_resources"] == 2 and data["compute_resources"][1]["name"] == "cor_1"
    profile = data["profiles"]["62b680"]["A"]
    assert (profile.type, profile.cpu, profile.extra) == (
        "parallel_homogeneous",
        5e9,
        {"mem": 8000, "mem_bw": 2},
    )

    submitted = decoder.decode(D2).events[0]
    job = submitted.data["job"]
    assert submitted.type == JOB_SUBMITTED and submitted.data["job_id"] == "62b680!job0"
    assert (job.id, job.workload, job.name, job.subtime, job.res, job.walltime) == (
        "62b680!job0",
        "62b680",
        "job0",
        0.0,
        1,
        None,
    )
    assert job.profile is profile  # profile found by workload id and profile name (4.1.4)

    notify = decoder.decode(D4)
    assert [e.type for e in notify.events] == [
        NO_MORE_STATIC_JOB_TO_SUBMIT,
        RESOURCE_STATE_CHANGED,
        RESOURCE_STATE_CHANGED,
    ]
    assert [(e.data["resources"], e.data["state"]) for e in notify.events[1:]] == [
        ((0,), 0),
        ((1,), 2),
    ]

    end = decoder.decode(D5)
    assert end.now == 5.0 and [e.type for e in end.events] == [JOB_COMPLETED, SIMULATION_ENDS]
    done = end.events[0].data
    assert done["job"] is job and done["job_state"] == COMPLETED_SUCCESSFULLY
    assert done["alloc"] == (0,) and done["return_code"] == 0


def test_appendix_d3_decisions_encode_exactly() -> None:
    decisions = [
        ExecuteJob("62b680!job0", [0]),
        SetResourceState([0], 0),
        SetResourceState([1], 2),
    ]

    def event(kind: str, data: dict) -> dict:
        return {"timestamp": 0.0, "type": kind, "data": data}

    assert encode_decisions(0.0, decisions) == {
        "now": 0.0,
        "events": [
            event("EXECUTE_JOB", {"job_id": "62b680!job0", "alloc": "0"}),
            event("SET_RESOURCE_STATE", {"resources": "0", "state": "0"}),
            event("SET_RESOURCE_STATE", {"resources": "1", "state": "2"}),
        ],
    }


def test_every_decision_round_trips() -> None:
    decisions = [
        ExecuteJob("w0!7", [5, 3, 4, 9]),
        SetResourceState((0, 1, 2, 7), 3),
        CallMeLater(12.5),
        RejectJob("w0!8"),
        KillJobs(["w0!1", "w0!2"]),
    ]
    raw = dumps(encode_decisions(10.0, decisions))
    # Host sets travel as interval sets: "3-5 9" and "0-2 7".
    assert b'"alloc":"3-5 9"' in raw and b'"resources":"0-2 7","state":"3"' in raw
    back = decode_decisions(raw, at=10.0)
    assert back == normalise(decisions)
    assert back[0] == ExecuteJob("w0!7", (3, 4, 5, 9))
    assert back[4] == KillJobs(("w0!1", "w0!2"))


def _thesis_engine() -> Engine:
    # Thesis 4.1.4: two 1 GFLOPS cores, a 5e9-flop job at t = 0 (5 s), plus a 100 s delay job
    # at t = 1 to exercise CALL_ME_LATER and KILL_JOB.
    platform = SimPlatform.homogeneous(
        2, (1e9, 0.75e9), (100.0, 100.0), (100.0, 100.0), name_format="cor_{}"
    )
    workload = Workload(
        2,
        [JobSpec("job0", 0.0, 1, "A"), JobSpec("long", 1.0, 1, "B", 200.0, {"user": "u1"})],
        {
            "A": Profile("A", "parallel_homogeneous", cpu=5e9, extra={"mem_bw": 2}),
            "B": Profile("B", "delay", delay=100.0),
        },
        "62b680",
    )
    return Engine(platform, workload)


def _same(a: Message, b: Message) -> None:
    assert (a.now, [e.type for e in a.events]) == (b.now, [e.type for e in b.events])
    for x, y in zip(a.events, b.events):
        assert x.timestamp == y.timestamp
        if x.type == SIMULATION_BEGINS:
            assert y.data["nb_resources"] == x.data["nb_resources"]
            assert y.data["compute_resources"] == x.data["compute_resources"]
            continue
        for key in ("job_id", "job_state", "alloc", "resources", "state"):
            if key in x.data:
                assert y.data[key] == x.data[key], key
        if "job_ids" in x.data:
            assert y.data["job_ids"] == tuple(x.data["job_ids"])
        if x.type == JOB_SUBMITTED:
            assert y.data["job"].spec == x.data["job"].spec
        if x.type == REQUESTED_CALL:
            assert y.data["requested_at"] == x.data["requested_at"]
        if x.type == JOB_KILLED:
            assert y.data["job_progress"] == pytest.approx(x.data["job_progress"])
            assert [j.id for j in y.data["jobs"]] == [j.id for j in x.data["jobs"]]


def test_every_engine_event_round_trips() -> None:
    engine = _thesis_engine()
    encoder = EventEncoder({"62b680": "/workspace/workload.json"})
    decoder = EventDecoder()
    script = {
        1: [ExecuteJob("62b680!job0", [0]), SetResourceState([0, 1], 0)],
        3: [ExecuteJob("62b680!long", [1]), CallMeLater(2.0)],
        4: [KillJobs(["62b680!long"])],  # at t = 2, answering the REQUESTED_CALL
    }
    message = engine.start()
    seen: set[str] = set()
    step = 0
    while True:
        decoded = decoder.decode(dumps(encoder.encode(message)))
        _same(message, decoded)
        seen.update(e.type for e in message.events)
        if engine.finished:
            break
        message = engine.proceed(script.get(step, []))
        step += 1
    assert seen == {
        SIMULATION_BEGINS,
        JOB_SUBMITTED,
        NO_MORE_STATIC_JOB_TO_SUBMIT,
        RESOURCE_STATE_CHANGED,
        REQUESTED_CALL,
        JOB_COMPLETED,
        JOB_KILLED,
        SIMULATION_ENDS,
    }
    killed = engine.jobs["62b680!long"]
    # Started at t = 1, killed at t = 2 (the requested call): 1 s of 100 s done.
    assert killed.state == COMPLETED_KILLED and killed.progress(2.0) == pytest.approx(0.01)


def test_simulation_begins_has_batsim_4_keys() -> None:
    engine = _thesis_engine()
    doc = EventEncoder({"62b680": "/w.json"}, forward_profiles=True).encode(engine.start())
    data = doc["events"][0]["data"]
    # The keys pybatsim 3.2.1 reads (KeyError there otherwise).
    for key in (
        "nb_resources",
        "nb_compute_resources",
        "nb_storage_resources",
        "compute_resources",
        "storage_resources",
        "allow_compute_sharing",
        "allow_storage_sharing",
        "workloads",
        "profiles",
    ):
        assert key in data
    for key in (
        "profiles-forwarded-on-submission",
        "dynamic-jobs-enabled",
        "dynamic-jobs-acknowledged",
        "forward-unknown-events",
    ):
        assert key in data["config"]
    assert data["config"]["profiles-forwarded-on-submission"] is True
    assert data["workloads"] == {"62b680": "/w.json"}
    assert data["profiles"]["62b680"]["A"] == {
        "type": "parallel_homogeneous",
        "cpu": 5e9,
        "com": 0.0,
        "mem_bw": 2,
    }
    assert data["compute_resources"][0] == {
        "id": 0,
        "name": "cor_0",
        "state": "idle",
        "properties": {},
    }
    submitted = EventEncoder(forward_profiles=True).encode(engine.proceed([]))["events"][0]
    assert submitted["data"]["job"] == {
        "id": "62b680!job0",
        "subtime": 0.0,
        "res": 1,
        "profile": "A",
    }
    assert submitted["data"]["profile"]["cpu"] == 5e9


def test_floats_cross_the_wire_exactly() -> None:
    t = 0.1 + 0.2  # 0.30000000000000004
    decoded = decode_decisions(dumps(encode_decisions(t, [CallMeLater(t + 1e-9)])), at=t)
    assert decoded == [CallMeLater(t + 1e-9)]
    message = EventDecoder().decode(json.dumps({"now": t, "events": []}))
    assert message.now == t


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"\x00\x01binary", "not a JSON message"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"events": []}', r"message\.now: expected a finite number"),
        (b'{"now": 0, "events": {}}', "expected a list of events"),
        (b'{"now": 0, "events": [{"type": "X", "timestamp": "0"}]}', "events\\[0\\].timestamp"),
        (b'{"now": 0, "events": [{"timestamp": 0, "data": {}}]}', "missing or non-string 'type'"),
    ],
)
def test_malformed_envelopes(raw: bytes, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        decode_decisions(raw, where="message")


def _reply(kind: str, data: dict, t: float = 0.0) -> bytes:
    return dumps({"now": t, "events": [{"timestamp": t, "type": kind, "data": data}]})


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (_reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "3-1"}), r"data\.alloc: bad interval"),
        (_reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": ""}), "empty allocation"),
        (_reply("EXECUTE_JOB", {"alloc": "0"}), r"data\.job_id: expected a string"),
        (_reply("SET_RESOURCE_STATE", {"resources": "0", "state": "fast"}), "P-state number"),
        (_reply("CALL_ME_LATER", {"timestamp": "soon"}), r"data\.timestamp"),
        (_reply("KILL_JOB", {"job_ids": []}), "non-empty list of job ids"),
        (_reply("QUERY", {"requests": {"consumed_energy": {}}}), "not supported by hdeeprm-sim"),
        (_reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0"}, t=3.0), "timestamped 3.0"),
    ],
)
def test_bad_decisions_name_the_field(raw: bytes, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        decode_decisions(raw, at=0.0)


def test_metadata_and_notify_are_accepted_and_ignored() -> None:
    ignored: list[dict] = []
    raw = dumps(
        {
            "now": 1.0,
            "events": [
                {"timestamp": 1.0, "type": "SET_JOB_METADATA", "data": {"job_id": "w0!1"}},
                {"timestamp": 1.0, "type": "NOTIFY", "data": {"type": "registration_finished"}},
                {"timestamp": 1.0, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}},
            ],
        }
    )
    assert decode_decisions(raw, at=1.0, ignored=ignored) == [RejectJob("w0!1")]
    assert [e["type"] for e in ignored] == ["SET_JOB_METADATA", "NOTIFY"]


def test_decoder_errors() -> None:
    decoder = EventDecoder()
    with pytest.raises(ProtocolError, match="completed but was never submitted"):
        decoder.decode(D5)
    bad_job = D2.replace('"res": 1', '"res": 0')
    with pytest.raises(ProtocolError, match=r"job\.res: expected a positive integer"):
        decoder.decode(bad_job)
    no_job = _reply("JOB_SUBMITTED", {"job_id": "w!1"})
    with pytest.raises(ProtocolError, match="without Redis"):
        decoder.decode(no_job)
    # Unknown Batsim events pass through untouched.
    other = decoder.decode(_reply("ANSWER", {"consumed_energy": 12.5}))
    assert other.events[0].type == "ANSWER" and other.events[0].data == {"consumed_energy": 12.5}


# --- the server's fast paths give exactly what the general ones give -----------------------
def test_encode_bytes_is_dumps_of_encode() -> None:
    # Every message of the thesis engine's run (all event types), plus job ids that JSON must
    # escape, and a ``now`` replacing the message's: byte for byte the general path's output.
    engine = _thesis_engine()
    encoder = EventEncoder({"62b680": "/workspace/workload.json"})
    message = engine.start()
    step = 0
    script = {
        1: [ExecuteJob("62b680!job0", [0]), SetResourceState([0, 1], 0)],
        3: [ExecuteJob("62b680!long", [1]), CallMeLater(2.0)],
        4: [KillJobs(["62b680!long"])],
    }
    while True:
        assert encoder.encode_bytes(message) == dumps(encoder.encode(message))
        doc = encoder.encode(message)
        doc["now"] = message.now + 1e-21
        assert encoder.encode_bytes(message, message.now + 1e-21) == dumps(doc)
        if engine.finished:
            break
        message = engine.proceed(script.get(step, []))
        step += 1
    odd = Message(
        7.25,
        [
            Event(
                7.25,
                JOB_COMPLETED,
                {
                    "job_id": 'w0!"é\\n',
                    "job_state": COMPLETED_KILLED,
                    "alloc": (9, 3, 4, 5, 3),
                },
            )
        ],
    )
    assert encoder.encode_bytes(odd) == dumps(encoder.encode(odd))
    assert b'"return_code":-1,"alloc":"3-5 9"' in encoder.encode_bytes(odd)
    with pytest.raises(ProtocolError, match="cannot encode"):
        encoder.encode_bytes(Message(float("nan"), []))


@pytest.mark.parametrize(
    "ids",
    [
        (),
        (4,),
        (3, 4, 5),
        (5, 3, 4, 4),
        (0, 2),
        (7, 1, 2, 3, 9, 10),
        # the in-order fast path must not take these: out of order, or a duplicate that
        # makes last - first == count - 1 without being a run
        (3, 5, 4),
        (3, 3, 5),
        [3, 4, 5],
        tuple(range(104, 264)),
    ],
)
def test_alloc_text_is_format_interval_set(ids: tuple[int, ...]) -> None:
    assert alloc_text(ids) == format_interval_set(ids)


@pytest.mark.parametrize(
    ("raw", "now"),
    [
        (b'{"now":5.0,"events":[]}', 5.0),
        (b'{"now": 1e-21, "events": []}', 1e-21),
        (b'{ "now" : 12.5 , "events" : [ ] }\n', 12.5),
        (b'{"now":5.0,"events":[{"timestamp":5.0,"type":"NOTIFY","data":{}}]}', None),
        (b'{"now":NaN,"events":[]}', None),
        (b'{"now":"5","events":[]}', None),
        (b'{"now":5.0.1,"events":[]}', None),
        (b'{"events":[],"now":5.0}', None),  # other key order: the general parser
    ],
)
def test_empty_reply_fast_path(raw: bytes, now: float | None) -> None:
    assert empty_reply_now(raw) == now


@pytest.mark.parametrize("alloc", ["0", "0-3", "7 1-2", "3 3 1", "1-2 2-4", "10-12 0"])
def test_execute_job_fast_path_is_the_checked_path(alloc: str) -> None:
    raw = _reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": alloc}, t=2.0)
    fast = decode_decisions(raw)
    checked = decode_decisions(raw, at=2.0)  # ``at`` takes the general path
    assert fast == checked
    assert fast[0].alloc == tuple(sorted(set(parse_interval_set(alloc))))


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (_reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "3-1"}), r"data\.alloc: bad interval"),
        (_reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": ""}), "empty allocation"),
        (_reply("EXECUTE_JOB", {"job_id": 5, "alloc": "0"}), r"data\.job_id: expected a string"),
        (_reply("EXECUTE_JOB", {"job_id": "w0!1", "alloc": "0,1"}), r"data\.alloc: bad interval"),
    ],
)
def test_bad_execute_job_named_without_at(raw: bytes, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        decode_decisions(raw)


def test_read_reply_is_loads_decode_and_reply_time_in_one() -> None:
    ignored: list[dict] = []
    assert read_reply(b'{"now": 7.5, "events": []}', "reply 3", ignored) == (7.5, [], [])
    raw = (
        b'{"now": 9.0, "events": [{"timestamp": 8.0, "type": "EXECUTE_JOB", "data": {"job_id":'
        b' "w0!1", "alloc": "4-6 2"}}, {"timestamp": 9.0, "type": "NOTIFY", "data": {}},'
        b' {"timestamp": 9.0, "type": "REJECT_JOB", "data": {"job_id": "w0!2"}}]}'
    )
    now, decisions, stamps = read_reply(raw, "reply 3", ignored)
    assert now == 9.0 and stamps == [8.0, 9.0]
    assert decisions == [ExecuteJob("w0!1", (2, 4, 5, 6)), RejectJob("w0!2")]
    assert [e["type"] for e in ignored] == ["NOTIFY"]
    late = _reply("REJECT_JOB", {"job_id": "w0!2"}, t=10.0).replace(b'"now":10.0', b'"now":9.0')
    with pytest.raises(ProtocolError, match=r"reply 4\.events: decision 0 is timestamped 10\.0"):
        read_reply(late, "reply 4")
    with pytest.raises(ProtocolError, match="reply 5: not a JSON message"):
        read_reply(b'{"now": 1.0, "events": [', "reply 5")
    # a UTF-16 message (json.loads sniffs the encoding) still parses
    assert read_reply('{"now": 2.0, "events": []} '.encode("utf-16-le"), "r")[0] == 2.0
