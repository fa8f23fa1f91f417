"""The shipped examples load with the figures worked out by hand from thesis Table 5.1 / 5.4.1."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hdeeprm.platform import TypeLibrary, load_platform

EXAMPLES = Path(__file__).resolve().parents[2] / "platform_examples"


@pytest.fixture(scope="module")
def gaia():
    return load_platform(EXAMPLES / "gaia.json")


def test_gaia_totals(gaia) -> None:
    # nodes: 60 + 2 + 10 + 1 + 1 + 5 + 72 + 1 + 1 = 153
    # processors: 120 + 4 + 20 + 16 + 4 + 10 + 144 + 8 + 16 = 342
    # cores: 720 + 24 + 120 + 160 + 32 + 80 + 864 + 120 + 160 = 2,280
    assert len(gaia.clusters) == 1
    assert len(gaia.nodes) == 153
    assert len(gaia.processors) == 342
    assert len(gaia.cores) == 2280


def test_gaia_peak_power_memory_reference(gaia) -> None:
    # L5640: (720 + 24 + 120) = 864 cores x 9.04 = 7,810.56
    # X5670: 864 cores x 11.72 = 10,126.08
    # E7-4850: 160 x 8 = 1,280;  E5-4640: 32 x 19.2 = 614.4;  E5-2660: 80 x 17.6 = 1,408
    # E7-8880 v2: 120 x 20 = 2,400;  E5-4650 v2: 160 x 19.2 = 3,072
    # total = 26,711.04 GFLOPS; reference = 26,711.04 / 2,280 = 11.71536842... GFLOPS
    assert gaia.peak_gflops == pytest.approx(26711.04, rel=1e-12)
    assert gaia.reference_speed == pytest.approx(26711.04 / 2280, rel=1e-12)
    # power: 144 x 45 + 144 x 71.25 + 16 x 97.5 + 4 x 71.25 + 10 x 71.25 + 8 x 97.5
    #        + 16 x 71.25 = 6,480 + 10,260 + 1,560 + 285 + 712.5 + 780 + 1,140 = 21,217.5 W
    assert gaia.peak_power == pytest.approx(21217.5, rel=1e-12)
    # memory: 60x48 + 2x96 + 10x96 + 1024 + 1024 + 5x64 + 72x48 + 3072 + 4096 = 17,024 GB
    assert gaia.summary()["memory_gb"] == pytest.approx(17024.0)


def test_gaia_layout_in_file_order(gaia) -> None:
    # Bullx B500 (0): nodes 0-59, processors 0-119, cores 0-719; core 0 is an L5640 core:
    # 2.26 GHz x 4 = 9.04 GFLOPS, 45 W / 6 cores = 7.5 W.
    core0 = gaia.cores[0]
    assert (core0.node.type, core0.processor.type) == ("Bullx B500 (0)", "Xeon L5640")
    assert core0.peak_gflops == pytest.approx(9.04)
    assert core0.power == pytest.approx(7.5)
    # Bullx B500 (1) starts after 60 + 2 + 10 + 1 + 1 + 5 = 79 nodes, 174 processors and
    # 720 + 24 + 120 + 160 + 32 + 80 = 1,136 cores: X5670, 71.25 W / 6 = 11.875 W.
    core = gaia.cores[1136]
    assert (core.node.id, core.processor.id, core.node.type) == (79, 174, "Bullx B500 (1)")
    assert gaia.cores[1135].node.type == "Dell R720"
    assert core.power == pytest.approx(11.875)
    # The SGI UV-2000 is last: node 152, processors 326-341, cores 2,120-2,279, 10 per socket.
    last = gaia.cores[-1]
    assert (last.id, last.node.id, last.processor.id, last.name) == (2279, 152, 341, "cor_2279")
    assert gaia.nodes[152].memory_gb == 4096
    assert gaia.nodes[152].memory_mb == 4_096_000
    assert [len(p.cores) for p in gaia.nodes[152].processors] == [10] * 16
    assert gaia.processors[341].mem_bw == 59.7
    # E7-4850 at 51.2 GB/s as printed in Table 5.1 (node 72 is the Bullx S6030).
    assert {p.mem_bw for p in gaia.nodes[72].processors} == {51.2}


def test_ids_and_names_agree(gaia) -> None:
    assert [c.id for c in gaia.cores] == list(range(2280))
    assert [n.id for n in gaia.nodes] == list(range(153))
    assert [p.id for p in gaia.processors] == list(range(342))
    names = [c.name for c in gaia.cores]
    assert names[0] == "cor_0000" and sorted(names) == names
    # Every core sits in the list of its processor, which sits in its node.
    assert all(c in c.processor.cores and c.processor in c.node.processors for c in gaia.cores)


def test_learning_platform() -> None:
    # Two dual-core processors: 1.0 GHz x 4 = 4 GFLOPS at 80 W (40 W per core) and
    # 1.1 GHz x 4 = 4.4 GFLOPS at 100 W (50 W per core); reference = (2x4 + 2x4.4) / 4 = 4.2.
    p = load_platform(EXAMPLES / "learning.json")
    assert (len(p.nodes), len(p.processors), len(p.cores)) == (1, 2, 4)
    assert [c.peak_gflops for c in p.cores] == pytest.approx([4.0, 4.0, 4.4, 4.4])
    assert [c.power for c in p.cores] == pytest.approx([40.0, 40.0, 50.0, 50.0])
    assert [proc.mem_bw for proc in p.processors] == [32, 32]
    assert p.reference_speed == pytest.approx(4.2)
    assert [c.name for c in p.cores] == ["cor_0", "cor_1", "cor_2", "cor_3"]


def test_kth_sp2_is_homogeneous_100_cores() -> None:
    # 100 thin nodes, one POWER2 each: 0.0667 GHz x 4 flops/cycle = 0.2668 GFLOPS.
    p = load_platform(EXAMPLES / "kth_sp2.json")
    assert (len(p.nodes), len(p.processors), len(p.cores)) == (100, 100, 100)
    assert p.reference_speed == 0.2668  # fsum makes a homogeneous mean exact
    assert math.isclose(p.peak_gflops, 26.68)


@pytest.mark.parametrize(
    ("name", "cores", "reference"),
    [("lublin_256.json", 256, 0.2668), ("ricc.json", 8192, 11.72)],  # RICC: 2.93 x 4
)
def test_other_examples(name: str, cores: int, reference: float) -> None:
    p = load_platform(EXAMPLES / name)
    assert len(p.cores) == cores
    assert p.reference_speed == pytest.approx(reference, rel=1e-12)


def test_lcg_grid_pool() -> None:
    # 12,257 dual-socket nodes + 1 single-socket node = 12,258 nodes, 24,515 single-core
    # processors (the trace's MaxProcs). Nocona 2.8 GHz x 2 flops/cycle = 5.6 GFLOPS per core:
    # peak = 24,515 x 5.6 = 137,284 GFLOPS; power = 24,515 x 0.75 x 103 W = 1,893,783.75 W;
    # memory = 12,257 x 2 + 1 = 24,515 GB (1 GB per processor).
    p = load_platform(EXAMPLES / "lcg.json")
    assert (len(p.nodes), len(p.processors), len(p.cores)) == (12258, 24515, 24515)
    assert p.reference_speed == pytest.approx(5.6, rel=1e-12)
    assert p.peak_gflops == pytest.approx(137284.0, rel=1e-12)
    assert p.peak_power == pytest.approx(1893783.75, rel=1e-12)
    assert p.summary()["memory_gb"] == pytest.approx(24515.0)
    assert [len(n.processors) for n in p.nodes[-2:]] == [2, 1]
    assert p.nodes[-1].memory_gb == 1 and p.nodes[0].memory_gb == 2
    assert p.processors[0].mem_bw == 6.4
    assert p.cores[-1].name == "cor_24514"


def test_shipped_library_power_is_three_quarters_of_tdp() -> None:
    lib = TypeLibrary.shipped()
    tdp = {
        "Xeon L5640": 60,
        "Xeon X5670": 95,
        "Xeon E7-4850": 130,
        "Xeon E5-4640": 95,
        "Xeon E5-2660": 95,
        "Xeon E7-8880 v2": 130,
        "Xeon E5-4650 v2": 95,
    }
    for name, watts in tdp.items():
        assert lib.processors[name].power == pytest.approx(0.75 * watts), name
    llc = [lib.processors[n].llc_size for n in tdp]
    assert llc == [12, 12, 24, 20, 20, 37.5, 25]
    gflops = [lib.processors[n].gflops_per_core for n in tdp]
    assert gflops == pytest.approx([9.04, 11.72, 8, 19.2, 17.6, 20, 19.2])
