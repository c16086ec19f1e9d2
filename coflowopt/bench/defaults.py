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
The embedded FB-like synthetic workload (100 coflows on 150 ports of 1 Gb/s; MB and ms) at
load 0.7: the fitted FB2010 arrivals compressed (every gap scaled by one factor) until the
mean port utilisation over the arrival span, total MB / (ports x capacity x span), is 0.7.
The fitted arrivals alone give 0.22, 0.24 and 0.80 on seeds 0-2, where every coflow-aware
scheduler lands within 1-6% of the lower bound on average CCT. Beside it, multi-stage jobs:
10 TPC-DS-like query DAGs on 10 ports (normalized units), where the job-DAG algorithms (G-DM,
G-DM-BF, Tian et al.'s O(m) LP baseline, DeepWeave from its shipped checkpoint) run next to
the coflow schedulers. Slowdown (CCT over isolation time) is reported beside CCT; CoFair runs
at its default slowdown budget E = E_MPS. Three seeds. Each scheduler is compared with the
instance's lower bounds and its proven factor.'''
seeds = [0, 1, 2]
metrics = ["avg_cct", "weighted_completion", "avg_slowdown", "max_slowdown", "weighted_jct"]
# seconds per task; on a cold kernel cache the first task of each worker also compiles the
# kernels (about 100 s on two busy cores), which counts against this limit
timeout = 300

[[workloads]]
name = "fb-like-100-load0.7"
generator = "synthetic"
params = { n_coflows = 100, ports = 150, load = 0.7 }

[[workloads]]
name = "tpcds-jobs-10"
generator = "tpcds_like"
params = { n_jobs = 10, ports = 10, weight = "uniform" }

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

[[schedulers]]
name = "cofair"
workloads = ["fb-like-100-load0.7"]

[[schedulers]]
name = "utopia"

[[schedulers]]
name = "gdm"
workloads = ["tpcds-jobs-10"]

[[schedulers]]
name = "gdm-bf"
workloads = ["tpcds-jobs-10"]

[[schedulers]]
name = "om-lp"
workloads = ["tpcds-jobs-10"]

[[schedulers]]
name = "deepweave"
workloads = ["tpcds-jobs-10"]
"""


def default_suite() -> Suite:
    """The default suite (``benchmarks/default.toml``), checked."""
    return parse_suite(DEFAULT_SUITE_TOML, source="<default suite: benchmarks/default.toml>")
