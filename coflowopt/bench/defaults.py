"""The default suite, embedded so that ``coflowopt bench`` runs on a fresh install.

:data:`DEFAULT_SUITE_TOML` is the text of ``benchmarks/default.toml``, character for character
(a test checks it); edit both together.
"""

from __future__ import annotations

from coflowopt.bench.suite import Suite, parse_suite

__all__ = ["DEFAULT_SUITE_TOML", "default_suite"]

DEFAULT_SUITE_TOML = """\
# The default suite: `coflowopt bench` with no arguments runs exactly this text, which is also
# embedded in coflowopt/bench/defaults.py (tests/bench/test_suite.py checks the two agree).
# Format: see `coflowopt.bench.suite` (field paths in errors are 0-based: schedulers[2].name).
name = "default"
description = '''
The embedded FB-like synthetic workload (100 coflows on 150 ports of 1 Gb/s; MB and ms),
three seeds. Each scheduler is compared with the instance's lower bounds and its proven
factor.'''
seeds = [0, 1, 2]
metrics = ["avg_cct", "weighted_completion"]
timeout = 120

[[workloads]]
name = "fb-like-100"
generator = "synthetic"
params = { n_coflows = 100, ports = 150 }

[[schedulers]]
name = "varys"

[[schedulers]]
name = "sincronia"

[[schedulers]]
name = "aalo"

[[schedulers]]
name = "a-sebf"

[[schedulers]]
name = "fifo"

[[schedulers]]
name = "fair"

[[schedulers]]
name = "sequential"
"""


def default_suite() -> Suite:
    """The default suite (``benchmarks/default.toml``), checked."""
    return parse_suite(DEFAULT_SUITE_TOML, source="<default suite: benchmarks/default.toml>")
