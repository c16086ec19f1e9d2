"""Workloads: trace files and seeded generators, all producing :class:`coflowopt.Instance`."""

from coflowopt.workloads import dags, synthetic
from coflowopt.workloads.synthetic import FBLikeParams, synthetic_trace, trace_statistics
from coflowopt.workloads.trace import (
    GBPS_MB_PER_MS,
    TraceFormatError,
    find_fb2010,
    format_trace,
    parse_trace,
    read_trace,
    write_trace,
)

__all__ = [
    "GBPS_MB_PER_MS",
    "FBLikeParams",
    "TraceFormatError",
    "dags",
    "find_fb2010",
    "format_trace",
    "parse_trace",
    "read_trace",
    "synthetic",
    "synthetic_trace",
    "trace_statistics",
    "write_trace",
]
