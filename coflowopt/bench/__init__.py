"""The benchmark harness: suites as data, any executor, resumable results, reports.

The main job of the toolkit::

    from coflowopt.bench import default_suite, run_suite, write_report

    run = run_suite(default_suite(), jobs=2)         # local process pool; results/default/
    report = write_report(run.out)                    # report/summary.md, plots
    print(report.markdown)

A suite (:class:`Suite`, read by :func:`load_suite` from TOML) is workloads x schedulers x
seeds x metrics, with the references each result is compared with.  :func:`run_suite` expands
it into tasks (:func:`expand`), runs them on any :class:`concurrent.futures.Executor` (a process
pool by default, a Dask cluster through :func:`dask_executor`), validates every schedule in the
worker, and appends each row to ``results/<suite>/results.csv`` the moment it finishes, so a
rerun resumes.  :func:`write_report` turns a results folder into a tidy table, a Markdown
summary and plots.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coflowopt.bench.defaults import DEFAULT_SUITE_TOML, default_suite
    from coflowopt.bench.report import (
        Report,
        format_table,
        plot_bars,
        plot_cdf,
        plot_ratios,
        summarize,
        tidy,
        to_markdown,
        write_report,
    )
    from coflowopt.bench.runner import (
        VOLATILE_COLUMNS,
        RunResult,
        dask_executor,
        run_suite,
        run_task,
    )
    from coflowopt.bench.store import ResultsStore, load_results
    from coflowopt.bench.suite import (
        Reference,
        SchedulerSpec,
        Suite,
        SuiteError,
        WorkloadSpec,
        known_metrics,
        load_suite,
        parse_suite,
        suite_from_dict,
    )
    from coflowopt.bench.tasks import Task, algorithm_seed, expand, task_key
    from coflowopt.bench.timelimit import TaskTimeout, deadline
    from coflowopt.bench.workloads import (
        WorkloadGenerator,
        build_workload,
        register_workload,
        workload_generators,
    )

__all__ = [
    "DEFAULT_SUITE_TOML",
    "VOLATILE_COLUMNS",
    "Reference",
    "Report",
    "ResultsStore",
    "RunResult",
    "SchedulerSpec",
    "Suite",
    "SuiteError",
    "Task",
    "TaskTimeout",
    "WorkloadGenerator",
    "WorkloadSpec",
    "algorithm_seed",
    "build_workload",
    "dask_executor",
    "deadline",
    "default_suite",
    "expand",
    "format_table",
    "known_metrics",
    "load_results",
    "load_suite",
    "parse_suite",
    "plot_bars",
    "plot_cdf",
    "plot_ratios",
    "register_workload",
    "run_suite",
    "run_task",
    "suite_from_dict",
    "summarize",
    "task_key",
    "tidy",
    "to_markdown",
    "workload_generators",
    "write_report",
]

# Submodules load on first use, so that ``import coflowopt.bench`` (which every ``coflowopt``
# command does, to add the ``bench`` and ``report`` subcommands) stays cheap.
_WHERE = {
    "DEFAULT_SUITE_TOML": "coflowopt.bench.defaults",
    "Reference": "coflowopt.bench.suite",
    "Report": "coflowopt.bench.report",
    "ResultsStore": "coflowopt.bench.store",
    "RunResult": "coflowopt.bench.runner",
    "SchedulerSpec": "coflowopt.bench.suite",
    "Suite": "coflowopt.bench.suite",
    "SuiteError": "coflowopt.bench.suite",
    "Task": "coflowopt.bench.tasks",
    "TaskTimeout": "coflowopt.bench.timelimit",
    "VOLATILE_COLUMNS": "coflowopt.bench.runner",
    "WorkloadGenerator": "coflowopt.bench.workloads",
    "WorkloadSpec": "coflowopt.bench.suite",
    "algorithm_seed": "coflowopt.bench.tasks",
    "build_workload": "coflowopt.bench.workloads",
    "dask_executor": "coflowopt.bench.runner",
    "deadline": "coflowopt.bench.timelimit",
    "default_suite": "coflowopt.bench.defaults",
    "expand": "coflowopt.bench.tasks",
    "format_table": "coflowopt.bench.report",
    "known_metrics": "coflowopt.bench.suite",
    "load_results": "coflowopt.bench.store",
    "load_suite": "coflowopt.bench.suite",
    "parse_suite": "coflowopt.bench.suite",
    "plot_bars": "coflowopt.bench.report",
    "plot_cdf": "coflowopt.bench.report",
    "plot_ratios": "coflowopt.bench.report",
    "register_workload": "coflowopt.bench.workloads",
    "run_suite": "coflowopt.bench.runner",
    "run_task": "coflowopt.bench.runner",
    "suite_from_dict": "coflowopt.bench.suite",
    "summarize": "coflowopt.bench.report",
    "task_key": "coflowopt.bench.tasks",
    "tidy": "coflowopt.bench.report",
    "to_markdown": "coflowopt.bench.report",
    "workload_generators": "coflowopt.bench.workloads",
    "write_report": "coflowopt.bench.report",
}


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'coflowopt.bench' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
