"""Platform pipeline: cluster description (JSON) to resource hierarchy and platform.xml.

Typical use::

    from hdeeprm.platform import load_platform, write_platform_xml, write_hierarchy_json

    platform = load_platform("platform_examples/gaia.json")
    write_platform_xml(platform, "platform.xml")        # for the engine / Batsim
    write_hierarchy_json(platform, "res_hierarchy.json")  # for tools that want the tree

See ``docs/platform.md`` for the file formats and the type library.
"""

from hdeeprm.platform.hierarchy import (
    INITIAL_PSTATE,
    P0,
    P1,
    P2,
    P3,
    PSTATE_POWER_FRACTION,
    PSTATE_SPEED_FRACTION,
    Cluster,
    Core,
    Gpu,
    Node,
    Platform,
    Processor,
)
from hdeeprm.platform.library import (
    GpuType,
    MemoryType,
    NetworkType,
    NodeType,
    ProcessorType,
    TypeLibrary,
    shipped_type_file,
)
from hdeeprm.platform.loader import core_name, load_platform, platform_from_json
from hdeeprm.platform.serialize import (
    hierarchy_from_dict,
    hierarchy_to_dict,
    load_hierarchy_json,
    write_hierarchy_json,
)
from hdeeprm.platform.simgrid import (
    IDLE_SPEED_GFLOPS,
    MASTER_HOST,
    platform_xml,
    pstate_speeds,
    pstate_watts,
    write_platform_xml,
)

__all__ = [
    "IDLE_SPEED_GFLOPS",
    "INITIAL_PSTATE",
    "MASTER_HOST",
    "P0",
    "P1",
    "P2",
    "P3",
    "PSTATE_POWER_FRACTION",
    "PSTATE_SPEED_FRACTION",
    "Cluster",
    "Core",
    "Gpu",
    "GpuType",
    "MemoryType",
    "NetworkType",
    "Node",
    "NodeType",
    "Platform",
    "Processor",
    "ProcessorType",
    "TypeLibrary",
    "core_name",
    "hierarchy_from_dict",
    "hierarchy_to_dict",
    "load_hierarchy_json",
    "load_platform",
    "platform_from_json",
    "platform_xml",
    "pstate_speeds",
    "pstate_watts",
    "shipped_type_file",
    "write_hierarchy_json",
    "write_platform_xml",
]
