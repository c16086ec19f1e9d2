"""Workloads: trace files and seeded generators, all producing :class:`coflowopt.Instance`.

Every generator is in one table, :mod:`coflowopt.workloads.registry` (``generator(name)``,
``generators()``, ``build(name, params, seed)``), which ``coflowopt gen`` and bench suites use.
"""

from coflowopt.workloads import dags, registry, synthetic
from coflowopt.workloads.registry import (
    Generator,
    ParamError,
    build,
    generator,
    generators,
)
from coflowopt.workloads.synthetic import FBLikeParams, synthetic_trace, trace_statistics
from coflowopt.workloads.trace import (
    GBPS_MB_PER_MS,
    TraceFormatError,
    find_fb2010,
    format_trace,
    parse_trace,
    read_trace,
    require_fb2010,
    resolve_trace,
    write_trace,
)

__all__ = [
    "GBPS_MB_PER_MS",
    "FBLikeParams",
    "Generator",
    "ParamError",
    "TraceFormatError",
    "build",
    "dags",
    "find_fb2010",
    "format_trace",
    "generator",
    "generators",
    "parse_trace",
    "read_trace",
    "registry",
    "require_fb2010",
    "resolve_trace",
    "synthetic",
    "synthetic_trace",
    "trace_statistics",
    "write_trace",
]
