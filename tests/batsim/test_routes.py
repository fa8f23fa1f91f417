"""The routes hdeeprm-sim's timing model reads from ``platform.xml`` (no Batsim needed), and
the inputs it refuses because Batsim aborts on them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from routing_platforms import clusters, linked, no_network, write

from hdeeprm.cli.sim import main
from hdeeprm.errors import InputError
from hdeeprm.protocol.batsim_timing import PlatformRoutes, check_batsim_accepts, message_routes
from hdeeprm.simulation import load_platform_xml


def test_no_network_platforms_take_no_time(tmp_path: Path) -> None:
    routes = PlatformRoutes(write(tmp_path, "v", no_network(2)))
    assert routes.route("master_host", "master_host") == (math.inf, 0.0)
    assert routes.route("h0000", "master_host") == (math.inf, 0.0)
    # A Full zone adds SimGrid's loopback from a host to itself, and nothing between two hosts
    # without a declared route.
    routes = PlatformRoutes(write(tmp_path, "f", no_network(2, "Full")))
    assert routes.route("master_host", "master_host") == (1e10, 0.0)
    assert routes.route("h0000", "master_host") == (math.inf, 0.0)


@pytest.mark.parametrize("routing", ["Full", "Floyd", "Dijkstra"])
def test_routes_of_graph_zones(tmp_path: Path, routing: str) -> None:
    xml = write(tmp_path, routing, linked(2, routing, latency="10us"))
    loopback, hosts = message_routes(xml, ["h0000", "h0001"])
    assert loopback == (1e10, 0.0)
    # Its own link and the router's, 10 us each.
    assert hosts == [(40e6, pytest.approx(2e-5)), (40e6, pytest.approx(2e-5))]


def test_routes_of_clusters_and_vivaldi_coordinates(tmp_path: Path) -> None:
    routes = PlatformRoutes(write(tmp_path, "c", clusters(2)))
    # The master's own cluster: up its private link, the backbone, down the same link.
    bw, lat = routes.route("master_host0", "master_host0")
    assert bw == 125e6 and lat == pytest.approx(600e-6)
    # h0 -> its router, the backbone between routers, the router -> master_host0.
    bw, lat = routes.route("h0", "master_host0")
    assert bw == 125e6 and lat == pytest.approx(50e-6 + 500e-6 + 500e-6 + 500e-6 + 50e-6)
    text = no_network(1).replace(
        'id="h0000" speed="1Gf" coordinates="0 0 0"', ('id="h0000" speed="1Gf" coordinates="3 4 1"')
    )
    routes = PlatformRoutes(write(tmp_path, "v", text))
    assert routes.route("h0000", "master_host") == (math.inf, pytest.approx(6e-3))  # (5+1) ms


def _workload(tmp_path: Path) -> Path:
    path = tmp_path / "workload.json"
    jobs = [{"id": "1", "subtime": 1.0, "walltime": 100.0, "res": 1, "profile": "d"}]
    doc = {"nb_res": 1, "jobs": jobs, "profiles": {"d": {"type": "delay", "delay": 10.0}}}
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("text", "flags", "message"),
    [
        (no_network(1, "None"), [], "There can't be route in an Empty zone"),
        (no_network(1, power=False), ["-E"], "No power range properties"),
        (linked(2, "Floyd", unrouted=("h0000",)), [], "No route from"),
        (linked(2, "Dijkstra", unrouted=("h0000",)), [], "No route from"),
    ],
    ids=["routing-none", "no-power-with-E", "floyd-no-route", "dijkstra-no-route"],
)
def test_hdeeprm_sim_refuses_what_batsim_aborts_on(
    tmp_path: Path, text: str, flags: list[str], message: str
) -> None:
    xml = write(tmp_path, "platform", text)
    args = ["-p", str(xml), "-w", str(_workload(tmp_path)), "-e", str(tmp_path / "out"), *flags]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not list(tmp_path.glob("out_*"))
    if not flags:  # also with --instant: Batsim aborts whatever the timing
        assert CliRunner().invoke(main, [*args, "--instant"]).exit_code == 2
    # The same check through the API.
    with pytest.raises(InputError, match="Batsim"):
        check_batsim_accepts(xml, load_platform_xml(xml), energy=bool(flags))


def test_instant_and_batsim_timing_flags(tmp_path: Path) -> None:
    help_text = CliRunner().invoke(main, ["--help"]).output
    assert "--batsim-timing / --instant" in help_text and "By default" in help_text
