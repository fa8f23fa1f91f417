"""Property-based checks of the size limits on inputs: JSON nesting in every JSON input kind,
host ids and numbers in protocol replies, platform sizes. Each ends in one clear error naming
the file (or the message) at once, never a traceback, a ``MemoryError`` or a run that never
ends; the console scripts turn it into one line and exit code 2.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hdeeprm._jsonfile as jsonfile
import hdeeprm.platform.loader as loader
import hdeeprm.simulation.platform_xml as platform_xml
from hdeeprm._jsonfile import MAX_JSON_DEPTH, json_depth, parse_json
from hdeeprm.errors import InputError
from hdeeprm.options import load_options
from hdeeprm.platform import load_platform, platform_from_json
from hdeeprm.protocol.codec import EventDecoder, decode_decisions, read_reply
from hdeeprm.protocol.errors import ProtocolError
from hdeeprm.simulation import load_platform_xml
from hdeeprm.sweep.spec import load_sweep
from hdeeprm.workload import load_workload

REPO = Path(__file__).resolve().parents[1]
GAIA = REPO / "platform_examples" / "gaia.json"
QUICKSTART = REPO / "data" / "quickstart" / "options.json"

BOUNDS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def nested(depth: int, kind: str) -> str:
    """A JSON document nested ``depth`` levels deep: arrays, objects or both alternating."""
    if kind == "array":
        return "[" * depth + "]" * depth
    if kind == "object":
        return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)
    opens = "".join('{"k":' if i % 2 else "[" for i in range(depth))
    closes = "".join("}" if i % 2 else "]" for i in reversed(range(depth)))
    return opens + ("0" if depth % 2 == 0 else "") + closes


def depth_of(value: Any) -> int:
    """Nesting of a parsed value (reference for :func:`json_depth`)."""
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


bracket_text = st.text(alphabet='[]{}"\\aé€', max_size=6)
json_trees = st.recursive(
    st.one_of(st.none(), st.integers(), bracket_text),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(bracket_text, inner, max_size=3)
    ),
    max_leaves=12,
)


@BOUNDS
@given(json_trees, st.integers(min_value=1, max_value=64), st.booleans())
def test_depth_ignores_brackets_in_strings(value: Any, chunk: int, ascii_only: bool) -> None:
    # Small chunks put string boundaries and escapes across the scan's chunk edges.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonfile, "_CHUNK", chunk)
        assert json_depth(json.dumps(value, ensure_ascii=ascii_only)) == depth_of(value)


#: Every user JSON input: how to read a file of it.
READERS = {
    "options": load_options,
    "sweep": load_sweep,
    "platform": load_platform,
    "workload": load_workload,
}
too_deep = st.integers(min_value=MAX_JSON_DEPTH + 1, max_value=100_000)
shapes = st.sampled_from(["array", "object", "mixed"])


@BOUNDS
@given(kind=st.sampled_from(sorted(READERS)), depth=too_deep, shape=shapes)
def test_deep_files_are_refused(tmp_path: Path, kind: str, depth: int, shape: str) -> None:
    path = tmp_path / f"{kind}.json"
    path.write_text(nested(depth, shape))
    with pytest.raises(InputError, match=rf"nested {depth:,} levels deep") as info:
        READERS[kind](path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@BOUNDS
@given(depth=st.integers(min_value=1, max_value=MAX_JSON_DEPTH), shape=shapes)
def test_nesting_within_the_limit_parses(depth: int, shape: str) -> None:
    assert depth_of(parse_json(nested(depth, shape), "f.json")) == depth


@BOUNDS
@given(depth=too_deep, shape=shapes, empty_first=st.booleans())
def test_deep_protocol_messages_are_protocol_errors(
    depth: int, shape: str, empty_first: bool
) -> None:
    raw = ('{"now": 1.0, "events": ' + nested(depth, shape) + "}").encode()
    with pytest.raises(ProtocolError, match=rf"^reply 7: JSON nested {depth + 1:,} levels"):
        read_reply(raw, "reply 7")
    with pytest.raises(ProtocolError, match="levels deep"):
        EventDecoder().decode(raw)


def execute(alloc: str, job_id: Any = "w0!1", stamp: Any = 1.0) -> bytes:
    event = {"timestamp": stamp, "type": "EXECUTE_JOB", "data": {"job_id": job_id, "alloc": alloc}}
    return json.dumps({"now": 1.0, "events": [event]}).encode()


@BOUNDS
@given(
    nb_hosts=st.integers(min_value=1, max_value=10**6),
    first=st.integers(min_value=0, max_value=10**6),
    size=st.integers(min_value=1, max_value=10**12),
)
def test_allocations_are_checked_before_expanding(nb_hosts: int, first: int, size: int) -> None:
    last = first + size - 1
    raw = execute(f"{first}-{last}" if size > 1 else str(first))
    if last < nb_hosts:
        _, decisions, _ = read_reply(raw, "reply 1", None, nb_hosts)
        assert decisions[0].alloc == tuple(range(first, last + 1))
    else:
        with pytest.raises(ProtocolError, match=rf"host id {last:,} .* out of range"):
            read_reply(raw, "reply 1", None, nb_hosts)
        with pytest.raises(ProtocolError, match="out of range"):
            decode_decisions(raw, nb_hosts=nb_hosts)


def test_allocations_at_the_bound() -> None:
    assert read_reply(execute("0-2279"), "r", None, 2280)[1][0].alloc == tuple(range(2280))
    assert read_reply(execute("5 0-3 2279"), "r", None, 2280)[1][0].alloc[-1] == 2279
    for alloc in ("0-2280", "2280", "1 0-2000000000", "3 2280-2281"):
        with pytest.raises(ProtocolError, match=r"the platform has 2,280 hosts \(ids 0-2279\)"):
            read_reply(execute(alloc), "r", None, 2280)
    # Without the platform (a decoder used alone): the most any platform may have.
    with pytest.raises(ProtocolError, match="at most 10,000,000 hosts"):
        decode_decisions(execute("0-2000000000"))


@pytest.mark.parametrize("job_id", [1, None, 1.5, ["w0!1"], True])
def test_job_ids_must_be_strings(job_id: Any) -> None:
    with pytest.raises(ProtocolError, match="job_id: expected a string"):
        read_reply(execute("0", job_id=job_id), "r", None, 4)


@pytest.mark.parametrize("stamp", [math.nan, math.inf, -math.inf, "1.0", None])
def test_times_must_be_finite_numbers(stamp: Any) -> None:
    with pytest.raises(ProtocolError, match="timestamp: expected a finite number"):
        read_reply(execute("0", stamp=stamp), "r", None, 4)
    call = {"timestamp": 1.0, "type": "CALL_ME_LATER", "data": {"timestamp": stamp}}
    with pytest.raises(ProtocolError, match="data.timestamp: expected a finite number"):
        read_reply(json.dumps({"now": 1.0, "events": [call]}).encode(), "r", None, 4)


def gaia_with(number: int) -> dict[str, Any]:
    raw = json.loads(GAIA.read_text())
    raw["clusters"][0]["nodes"] = [{"type": "Bullx B500 (0)", "number": number}]  # 12 cores
    return raw


@BOUNDS
@given(budget=st.integers(min_value=12, max_value=600), extra=st.integers(0, 10**12))
def test_platform_sizes_at_and_above_the_budget(budget: int, extra: int) -> None:
    nodes = budget // 12 + (1 if extra else 0) + extra
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "MAX_PLATFORM_CORES", budget)
        if nodes * 12 <= budget:
            assert len(platform_from_json(gaia_with(nodes), "p.json").cores) == nodes * 12
        else:
            with pytest.raises(InputError, match=rf"{nodes * 12:,} cores, more than the"):
                platform_from_json(gaia_with(nodes), "p.json")


def test_a_billion_nodes_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(gaia_with(10**9)))
    with pytest.raises(InputError, match=r"clusters\[0\]\.nodes\[0\]\.number: .*12,000,000,000"):
        load_platform(path)


def test_gpus_count_towards_the_budget() -> None:
    raw = json.loads((REPO / "platform_examples" / "cush_sierra.json").read_text())
    raw["types"]["node"]["Sierra node (CuSH)"]["gpus"][0]["number"] = 10**6
    with pytest.raises(InputError, match=r"nodes\[0\]\.number: .* 128,000,000 GPUs, more than"):
        platform_from_json(raw, "sierra.json")


XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="z" routing="Full">
<cluster id="c" prefix="h" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" lat="1us"/>
<host id="master_host" speed="1Gf"/></zone></platform>"""


def test_xml_radicals_at_and_above_the_budget(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(platform_xml, "MAX_PLATFORM_CORES", 10)
    path = tmp_path / "platform.xml"
    path.write_text(XML.format(radical="0-9"))
    assert load_platform_xml(path).nb_hosts == 10
    path.write_text(XML.format(radical="0-10"))
    with pytest.raises(InputError, match="makes 11 hosts, more than the 10 hosts"):
        load_platform_xml(path)


# --- console scripts: one line, exit code 2 ------------------------------------------------
def run_script(main, args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.output
    return lines[-1]


def options_with(tmp_path: Path, **changes: Any) -> Path:
    doc = json.loads(QUICKSTART.read_text())
    doc["platform_file_path"] = str(GAIA)
    doc["synthetic_workload"]["nb_jobs"] = 20
    doc.update(changes)
    path = tmp_path / "options.json"
    path.write_text(json.dumps(doc))
    return path


def test_launch_refuses_deep_and_huge_inputs(tmp_path: Path) -> None:
    from hdeeprm.cli.launch import main

    deep = tmp_path / "deep.json"
    deep.write_text(nested(100_000, "array"))
    out = str(tmp_path / "run")
    assert f"{deep}: JSON nested 100,000" in run_script(main, [str(deep), "-o", out])
    opts = options_with(tmp_path, platform_file_path=str(deep))
    assert f"{deep}: JSON nested 100,000" in run_script(main, [str(opts), "-o", out])
    opts = options_with(tmp_path)
    line = run_script(main, [str(opts), "-cw", str(deep), "-o", out])
    assert f"{deep}: JSON nested 100,000" in line
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(gaia_with(10**9)))
    opts = options_with(tmp_path, platform_file_path=str(huge))
    line = run_script(main, [str(opts), "-o", out])
    assert f"{huge}, clusters[0].nodes[0].number:" in line and "12,000,000,000 cores" in line


def test_sim_refuses_deep_workloads_and_huge_platforms(tmp_path: Path) -> None:
    from hdeeprm.cli.sim import main

    platform = tmp_path / "platform.xml"
    platform.write_text(XML.format(radical="0-3"))
    deep = tmp_path / "deep.json"
    deep.write_text(nested(100_000, "object"))
    line = run_script(main, ["-p", str(platform), "-w", str(deep), "-e", str(tmp_path / "out")])
    assert f"{deep}: JSON nested 100,000" in line
    platform.write_text(XML.format(radical="0-2000000000"))
    line = run_script(main, ["-p", str(platform), "-w", str(deep), "-e", str(tmp_path / "out")])
    assert f"{platform}" in line and "2,000,000,001 hosts" in line


def test_sweep_refuses_a_deep_sweep_file(tmp_path: Path) -> None:
    from hdeeprm.cli.sweep import main

    deep = tmp_path / "sweep.json"
    deep.write_text(nested(100_000, "mixed"))
    assert f"{deep}: JSON nested 100,000" in run_script(main, [str(deep), "--list"])


def test_clean_keeps_a_deep_record_of_generated_files(tmp_path: Path) -> None:
    # A record hdeeprm cannot read is kept, not followed: the run folder is left as it is.
    from hdeeprm.cli.clean import main

    (tmp_path / ".hdeeprm_inputs.json").write_text(nested(100_000, "array"))
    result = CliRunner().invoke(main, [str(tmp_path), "-n"])
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert "keeping .hdeeprm_inputs.json (not a record hdeeprm can read)" in result.output
