"""The tiny GPU platform of the GPU tests (nodes of 2 cores and 4, 2 and 0 GPUs)."""

from __future__ import annotations

from typing import Any

CPU = {
    "type": "CPU",
    "cores": 2,
    "clock_rate": 1.0,
    "mem_bw": 10,
    "llc_size": 1,
    "power": 20,
    "dpflops_per_cycle": 4,
}
TINY: dict[str, Any] = {
    "types": {
        "processor": {"P": CPU},
        "gpu": {"G": {"gflops": 1000, "power": 100}},
        "node": {
            "A": {
                "processors": [{"type": "P", "number": 1}],
                "memory": {"type": "DDR4-2400", "capacity": 8},
                "gpus": [{"type": "G", "number": 4}],
            },
            "B": {
                "processors": [{"type": "P", "number": 1}],
                "memory": {"type": "DDR4-2400", "capacity": 8},
                "gpus": {"type": "G", "number": 2},
            },
            "C": {
                "processors": [{"type": "P", "number": 1}],
                "memory": {"type": "DDR4-2400", "capacity": 8},
            },
        },
        "network": {"N": {"bandwidth": "10Gbps"}},
    },
    "clusters": [
        {
            "id": "tiny",
            "nodes": [
                {"type": "A", "number": 1},
                {"type": "B", "number": 1},
                {"type": "C", "number": 1},
            ],
            "local_links": [{"type": "N", "latency": "1us"}],
        }
    ],
    "global_links": [{"type": "N", "latency": "1us"}],
}
