"""Workload pipeline: SWF traces and synthetic models to Batsim workloads."""

from hdeeprm.workload.archive import (
    CATALOGUE,
    ChecksumMismatch,
    FetchError,
    TraceInfo,
    TraceNotFound,
    cache_dir,
    fetch_trace,
    find_trace,
    search_folders,
    trace_path,
)
from hdeeprm.workload.bandwidth import BandwidthCheck, check_bandwidth, default_mem_bw_range
from hdeeprm.workload.convert import (
    DROP_REASONS,
    ConversionResult,
    ConversionSummary,
    convert_records,
    convert_swf,
    select_jobs,
)
from hdeeprm.workload.limits import (
    JOB_LIMITS_FILENAME,
    JobLimits,
    compute_job_limits,
    job_limits_path,
    load_job_limits,
    save_job_limits,
)
from hdeeprm.workload.lublin import (
    LublinParams,
    generate_lublin,
    lublin_header,
    lublin_workload,
    write_lublin_swf,
)
from hdeeprm.workload.model import JobSpec, Profile, Workload, load_workload
from hdeeprm.workload.swf import SWF_FIELDS, UNKNOWN, SwfJob, SwfReader, read_swf, write_swf

__all__ = [
    "CATALOGUE",
    "ChecksumMismatch",
    "FetchError",
    "TraceInfo",
    "TraceNotFound",
    "cache_dir",
    "fetch_trace",
    "find_trace",
    "search_folders",
    "trace_path",
    "BandwidthCheck",
    "check_bandwidth",
    "default_mem_bw_range",
    "DROP_REASONS",
    "JOB_LIMITS_FILENAME",
    "SWF_FIELDS",
    "UNKNOWN",
    "ConversionResult",
    "ConversionSummary",
    "JobLimits",
    "JobSpec",
    "LublinParams",
    "Profile",
    "SwfJob",
    "SwfReader",
    "Workload",
    "compute_job_limits",
    "convert_records",
    "convert_swf",
    "generate_lublin",
    "job_limits_path",
    "load_job_limits",
    "load_workload",
    "lublin_header",
    "lublin_workload",
    "read_swf",
    "save_job_limits",
    "select_jobs",
    "write_lublin_swf",
    "write_swf",
]
