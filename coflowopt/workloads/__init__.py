"""Workloads: trace files and seeded generators, all producing :class:`coflowopt.Instance`."""

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
    "TraceFormatError",
    "find_fb2010",
    "format_trace",
    "parse_trace",
    "read_trace",
    "write_trace",
]
