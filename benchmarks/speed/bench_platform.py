"""Platform pipeline timings: load, platform.xml, hierarchy JSON write and read.

Run: ``python benchmarks/speed/bench_platform.py``. Prints one line per platform and step (best of
three runs, in milliseconds). Platforms: the shipped Gaia (2,280 cores) and RICC (8,192
cores) examples, and a synthetic 100,000-core platform for scale.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hdeeprm.platform import (
    Platform,
    load_hierarchy_json,
    load_platform,
    platform_from_json,
    write_hierarchy_json,
    write_platform_xml,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "platform_examples"

SYNTHETIC = {
    "types": {
        "processor": {
            "Bench CPU": {
                "type": "CPU",
                "cores": 8,
                "clock_rate": 2.5,
                "mem_bw": 50,
                "llc_size": 20,
                "power": 80,
                "dpflops_per_cycle": 16,
            }
        },
        "node": {
            "Bench node": {
                "processors": [{"type": "Bench CPU", "number": 2}],
                "memory": {"type": "DDR3-1600", "capacity": 128},
            }
        },
    },
    "clusters": [
        {
            "id": f"c{i}",
            "nodes": [{"type": "Bench node", "number": 625}],
            "local_links": [{"type": "InfiniBand FDR", "latency": "1us"}],
        }
        for i in range(10)
    ],
    "global_links": [{"type": "10 Gigabit Ethernet", "latency": "100us"}],
}


def best_ms(step: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best * 1000.0


def bench(name: str, load: Callable[[], Platform], folder: Path) -> None:
    platform = load()
    xml, hierarchy = folder / f"{name}.xml", folder / f"{name}.json"
    steps = {
        "load": best_ms(load),
        "write_platform_xml": best_ms(lambda: write_platform_xml(platform, xml)),
        "write_hierarchy_json": best_ms(lambda: write_hierarchy_json(platform, hierarchy)),
        "load_hierarchy_json": best_ms(lambda: load_hierarchy_json(hierarchy)),
    }
    for step, ms in steps.items():
        print(f"{name:>10} {len(platform.cores):>7} cores  {step:<21} {ms:9.1f} ms")
    print(
        f"{name:>10} {'':>13}  xml {xml.stat().st_size / 1e6:.1f} MB, "
        f"hierarchy {hierarchy.stat().st_size / 1e6:.1f} MB"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bench("gaia", lambda: load_platform(EXAMPLES / "gaia.json"), folder)
        bench("ricc", lambda: load_platform(EXAMPLES / "ricc.json"), folder)
        bench("synthetic", lambda: platform_from_json(SYNTHETIC), folder)


if __name__ == "__main__":
    main()
