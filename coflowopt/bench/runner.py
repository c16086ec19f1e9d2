"""Run a suite on any :class:`concurrent.futures.Executor`.

One code path for every executor: :func:`run_suite` submits :func:`run_task` for each pending
task and writes each result the moment it arrives.  A local process pool is the default; a Dask
cluster is the same thing through ``distributed.Client(...).get_executor()`` (see
:func:`dask_executor`).

In the worker, :func:`run_task` builds the instance from the workload spec and seed, runs the
algorithm under the task's time limit, :func:`~coflowopt.validate` s the schedule, and returns
a row of metrics and lower bounds.  Whatever goes wrong in the task (an exception, an infeasible
schedule, the time limit) becomes a row with ``status`` and ``error``; the suite goes on.

A scheduler that *proves* no schedule meets its own constraints (it raises
:class:`~coflowopt.NoFeasibleSchedule`, e.g. CoFair with ``E`` below ``E_MPS``) gives a row with
status ``infeasible`` and error ``NoFeasibleSchedule: <its one-line reason>``: a result, not a
failed task (:func:`is_failure`); an invalid schedule (the validator's
:class:`~coflowopt.InfeasibleSchedule`) is status ``infeasible`` too, but a failure.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt._memory import fix_mmap_threshold
from coflowopt.bench.store import RESULTS_PARQUET, ResultsStore, load_results
from coflowopt.bench.suite import Suite, import_plugins, load_suite
from coflowopt.bench.tasks import Task, expand
from coflowopt.bench.timelimit import TaskTimeout, deadline

__all__ = [
    "NO_FEASIBLE_PREFIX",
    "VOLATILE_COLUMNS",
    "RunResult",
    "Warmup",
    "dask_executor",
    "is_failure",
    "run_suite",
    "run_task",
]

#: How a row's ``error`` starts when the scheduler proved that no schedule meets its
#: constraints (status ``infeasible``, not a failure).
NO_FEASIBLE_PREFIX = "NoFeasibleSchedule: "


def is_failure(status: Any, error: Any = "") -> bool:
    """Whether a row with this ``status`` and ``error`` is a failed task: anything but ``ok``,
    except a proven ``infeasible`` result (error starting with :data:`NO_FEASIBLE_PREFIX`)."""
    if str(status) == "ok":
        return False
    return not (str(status) == "infeasible" and isinstance(error, str)
                and error.startswith(NO_FEASIBLE_PREFIX))

#: Columns that describe how and where a task ran rather than what it computed; everything
#: else in a row is the same for the same task on any executor.
VOLATILE_COLUMNS: tuple[str, ...] = ("algo_seconds", "validate_seconds", "task_seconds",
                                     "compile_seconds", "lb_lp_seconds",
                                     "worker")


# -- the worker side ---------------------------------------------------------------------------


def _base_row(task: Task) -> dict[str, Any]:
    import json

    return {
        "key": task.key, "suite": task.suite, "workload": task.workload.name,
        "generator": task.workload.generator, "scheduler": task.scheduler.label,
        "algorithm": task.scheduler.name,
        "params": json.dumps(task.scheduler.params, sort_keys=True),
        "seed": task.seed, "algorithm_seed": task.algorithm_seed,
        "status": "error", "error": "",
    }


def run_task(task: Task, warmup: Warmup | None = None) -> dict[str, Any]:
    """Run one task; never raises for a problem of the task itself.

    ``warmup``: what the process running the task has already warmed up (:class:`Warmup`);
    ``None``: nothing known, so the task warms its scheduler up before the timed run.
    Returns ``{"row": dict, "arrays": {"cct": ..., "slowdown": ...} or None,
    "traceback": str or None}``.
    """
    if task.isolate:
        return _run_isolated(task)
    return run_here(task, warmup)


WarmKey = tuple[str, str, str]


class Warmup:
    """The (scheduler, semantics, parameters) that one process has already run once on a
    two-coflow instance, so that numba's compile (or cache load) of exactly the kernels each
    uses is done, and timed apart (``compile_seconds``), before its timed run: never counted in
    ``algo_seconds``.

    Compiled kernels belong to a process, so this record is only true of the process it
    describes, and whoever runs tasks there holds it: :func:`run_suite` keeps one for its own
    process (the warm-up before a local pool starts, and inline runs); a local pool's workers
    warm the suite's schedulers when they start (:func:`_start_worker`) and get their tasks
    with that record; a task run with none (a Dask worker, an isolated subprocess) warms up
    before its own run.
    """

    def __init__(self, keys: Iterable[WarmKey] = ()) -> None:
        self.keys: set[WarmKey] = set(keys)

    @staticmethod
    def key(info: Any, params: dict[str, Any]) -> WarmKey:
        import json

        return (info.name, info.semantics, json.dumps(params, sort_keys=True, default=str))

    def run(self, info: Any, params: dict[str, Any], inst: Any) -> float | None:
        """Run ``info`` with ``params`` once on a two-coflow instance of the same kind as
        ``inst`` unless this process did already; returns the seconds it took (``None`` when
        it did not run).  Built-in schedulers only (not plugins); one that refuses the tiny
        instance is not warmed (and not tried again)."""
        from coflowopt.model import Fabric, Instance
        from coflowopt.service import run

        if info.family == "plugin":  # a plugin may have side effects or be slow: not run twice
            return None
        key = self.key(info, params)
        if key in self.keys:
            return None
        self.keys.add(key)
        tiny = Instance.from_arrays(
            Fabric.uniform(2, float(inst.fabric.capacity_in[0]) if inst.ports else 1.0),
            np.array([0, 1, 0]), np.array([1, 0, 0]), np.array([2.0, 3.0, 1.0]),
            np.array([0, 0, 1]), coflow_release=np.array([0.0, 1.0]), n_coflows=2,
            time_unit=inst.time_unit)
        t0 = time.perf_counter()
        try:
            run(tiny, info, params=params, seed=0)
        except Exception:  # the real run will report whatever is wrong
            return None
        return time.perf_counter() - t0

    def run_tasks(self, tasks: Iterable[Task]) -> None:
        """:meth:`run` for each distinct scheduler of ``tasks`` (on a one-flow probe's
        units)."""
        from coflowopt.model import Instance

        probe = Instance.from_arrays(2, [0], [1], [1.0], [0])
        for t, info in _warmable(tasks):
            self.run(info, t.scheduler.params, probe)


def _warmable(tasks: Iterable[Task]) -> Iterator[tuple[Task, Any]]:
    """``(task, info)`` for each task of ``tasks`` whose scheduler :class:`Warmup` runs: a
    registered built-in (a plugin's name is unknown here or marked ``plugin``: its workers
    import it and warm it up themselves)."""
    from coflowopt.schedulers import get

    for t in tasks:
        try:
            info = get(t.scheduler.name, t.scheduler.semantics)
        except KeyError:
            continue
        if info.family != "plugin":
            yield t, info


#: Environment variable that adds the certified interval-LP bound to every row's ``lb_*``
#: columns: its value is the time limit in seconds of each LP solve (``inf``: none; the bound
#: stays certified when the solve stops early).  Unset or ``0``: combinatorial bounds only.
#: The LP is solved once per task (seconds on small instances, about a minute on FB2010).
LP_BOUND_ENV = "COFLOWOPT_LP_BOUND"


def _task_bounds(inst: Any, row: dict[str, Any]) -> dict[str, float]:
    """The row's lower bounds: combinatorial, or with :data:`LP_BOUND_ENV` set the best
    certified bound including the interval LP."""
    from coflowopt.bounds import lower_bounds

    limit = os.environ.get(LP_BOUND_ENV, "").strip()
    if not limit or limit == "0":
        return lower_bounds(inst)
    from coflowopt.lp import SolveParams

    t0 = time.perf_counter()
    sp = SolveParams(method="pdlp", tolerance=1e-4, presolve=False, time_limit=float(limit))
    out = lower_bounds(inst, lp=True, solve_params=sp)
    row["lb_lp"] = True
    row["lb_lp_seconds"] = time.perf_counter() - t0
    return out


def run_here(task: Task, warmup: Warmup | None = None) -> dict[str, Any]:
    """:func:`run_task` in this process (``warmup``: as there)."""
    from coflowopt.bench.workloads import build_workload
    from coflowopt.metrics import cct, slowdown, summary
    from coflowopt.schedulers import NoFeasibleSchedule, get
    from coflowopt.service import run
    from coflowopt.validate import InfeasibleSchedule

    row = _base_row(task)
    t0 = time.perf_counter()
    arrays = tb = None
    try:
        with deadline(task.timeout):
            import_plugins(task.imports)
            info = get(task.scheduler.name, task.scheduler.semantics)
            row.update(kind=info.kind, clairvoyant=info.clairvoyant, factor=info.factor or "",
                       objective=info.objective)
            inst = build_workload(task.workload.generator, task.workload.params, task.seed,
                                  task.base_dir)
            warm = (warmup if warmup is not None else Warmup()).run(
                info, task.scheduler.params, inst)
            if warm is not None:
                row["compile_seconds"] = warm
            res = run(inst, info, params=task.scheduler.params, seed=task.algorithm_seed)
            inst, valid = res.instance, res.valid  # coflowsim: what CoflowSim simulated
            # the metric the proven factor bounds, where its assumptions hold on this instance
            fm = info.factor_metric
            row["factor_metric"] = fm if fm and info.factor_for(fm, inst, res.params) else ""
            row.update(ports=inst.ports, n_coflows=inst.n_coflows, n_flows=inst.n_flows,
                       n_jobs=inst.n_jobs, time_unit=inst.time_unit)
            row.update({f"lb_{k}": v for k, v in _task_bounds(inst, row).items()})
            row["algo_seconds"] = res.simulate_seconds
            row["validate_seconds"] = res.validate_seconds
            row["streamed"] = res.streamed
            metrics = summary(valid)
            metrics.pop("coflows", None)  # n_coflows is already there
            row.update(metrics)
            if task.per_coflow:
                arrays = {"cct": np.asarray(cct(valid), dtype=np.float64),
                          "slowdown": np.asarray(slowdown(valid), dtype=np.float64)}
            row["status"] = "ok"
    except TaskTimeout:
        row["status"] = "timeout"
        row["error"] = f"TaskTimeout: ran past its time limit of {task.timeout:g} s"
    except NoFeasibleSchedule as exc:  # a proven result of the scheduler, no traceback
        row["status"] = "infeasible"
        row["error"] = f"{NO_FEASIBLE_PREFIX}{exc}"
    except InfeasibleSchedule as exc:
        row["status"] = "infeasible"
        row["error"] = f"InfeasibleSchedule: {exc}"
        tb = traceback.format_exc()
    except Exception as exc:
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}"
        tb = traceback.format_exc()
    row["task_seconds"] = time.perf_counter() - t0
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return {"row": row, "arrays": arrays, "traceback": tb}


def _run_isolated(task: Task) -> dict[str, Any]:
    """The task in a fresh ``python -m coflowopt.bench._child`` process, killed at the
    limit."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    child_task = replace(task, isolate=False, timeout=None)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "coflowopt.bench._child"],
                              input=pickle.dumps(child_task), capture_output=True, env=env,
                              timeout=task.timeout, check=False)
    except subprocess.TimeoutExpired:
        row = _base_row(task)
        row.update(status="timeout", task_seconds=time.perf_counter() - t0,
                   error=f"TaskTimeout: ran past its time limit of {task.timeout:g} s "
                         "(subprocess killed)",
                   worker=f"{socket.gethostname()}:{os.getpid()}")
        return {"row": row, "arrays": None, "traceback": None}
    if proc.returncode == 0:
        try:
            return pickle.loads(proc.stdout)
        except Exception:
            pass  # reported below as a broken child
    row = _base_row(task)
    code = proc.returncode
    how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
    stderr = proc.stderr.decode(errors="replace")
    row.update(status="error", error=f"ChildProcessError: the task's subprocess {how}",
               task_seconds=time.perf_counter() - t0,
               worker=f"{socket.gethostname()}:{os.getpid()}")
    return {"row": row, "arrays": None, "traceback": stderr[-20000:]}


# -- the parent side ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    """What one :func:`run_suite` call did.

    ``skipped``: tasks already in the results folder; ``ran``: rows written now (of which
    ``failed`` are errors, timeouts or invalid schedules, :func:`is_failure`; a proven
    ``infeasible`` result is not a failure); ``lost``: tasks whose worker
    failed without a row (they run again next time); ``remaining``: tasks still to run.
    """

    suite: str
    out: Path
    total: int
    skipped: int
    ran: int
    failed: int
    lost: int
    remaining: int
    interrupted: bool
    seconds: float
    problems: tuple[str, ...] = field(default=())

    def results(self) -> Any:
        """The results table (:func:`~coflowopt.bench.load_results`)."""
        return load_results(self.out)


def _die_with_parent() -> None:
    """A pool worker ends when the process that started it dies (a SIGKILLed ``coflowopt
    bench`` must not leave workers running its tasks and holding the results folder): the
    kernel's parent-death signal on Linux, else a watchdog thread polling the parent's pid."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="coflowopt-parent-watch", daemon=True).start()


def _start_worker(tasks: list[Task]) -> None:
    """Local pool worker initializer: Ctrl-C reaches the parent only (it stops the run), the
    worker dies with its parent, and it warms up the schedulers of ``tasks`` before its first
    task (a forked worker has their kernels from the parent already: milliseconds; a spawned
    one loads them from numba's cache)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    fix_mmap_threshold()
    try:
        Warmup().run_tasks(tasks)
    except Exception:  # only a head start: a failing initializer would break the whole pool
        pass


@contextmanager
def dask_executor(address: str = "local", *, n_workers: int = 2) -> Iterator[Executor]:
    """A Dask cluster as a :class:`concurrent.futures.Executor`.

    ``address``: a scheduler address (``tcp://host:8786``), or ``"local"`` to start a
    ``LocalCluster(n_workers, threads_per_worker=1, processes=True)`` for the duration.
    Needs ``dask[distributed]`` (``pip install "coflowopt[dist]"``).
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise RuntimeError("the Dask executor needs dask.distributed: "
                           "pip install \"coflowopt[dist]\"") from None
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _results(executor: Executor | None, tasks: list[Task], futures: dict[Future, Task],
             warmup: Warmup | None
             ) -> Iterator[tuple[Task, Future | None, dict[str, Any] | None]]:
    """Each task's result as it arrives: inline (``executor`` ``None``) or from
    ``executor``; ``warmup``: what the processes running the tasks have warmed up
    (:class:`Warmup`; ``None``: unknown, each task warms up itself)."""
    if executor is None:  # inline
        for t in tasks:
            yield t, None, run_task(t, warmup)
        return
    for t in tasks:
        futures[executor.submit(run_task, t, warmup)] = t
    for fut in as_completed(futures):
        yield futures[fut], fut, None


def run_suite(
    suite: Suite | str | os.PathLike[str],
    *,
    executor: Executor | str | None = None,
    out: str | os.PathLike[str] | None = None,
    jobs: int = 2,
    max_tasks: int | None = None,
    retry_errors: bool = False,
    progress: bool | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> RunResult:
    """Run every task of ``suite`` that the results folder does not have yet.

    ``executor``: ``None`` or ``"local"`` for a process pool of ``jobs`` workers (created and
    shut down here), ``"inline"`` to run in this process one task after another, or any
    :class:`~concurrent.futures.Executor` (e.g. from :func:`dask_executor`; not shut down).
    ``out``: the results folder (default ``results/<suite name>``).  ``max_tasks``: run at
    most that many of the pending tasks.  ``retry_errors``: run failed tasks again.
    ``progress``: a progress bar (``None``: when stderr is a terminal).  ``on_row``: called
    with each row as it is written.

    The suite is checked first (:meth:`Suite.check`), so a bad suite fails before anything
    runs.  Ctrl-C stops the run; finished rows are kept and a rerun resumes.
    """
    from tqdm import tqdm

    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    else:
        suite.check()
    t_start = time.perf_counter()
    tasks = expand(suite)
    folder = Path(out) if out is not None else Path("results") / suite.name
    if not (executor is None or executor in ("local", "inline")
            or isinstance(executor, Executor)):
        raise ValueError(f"executor: expected 'local', 'inline' or an Executor, got {executor!r}")
    store = ResultsStore(folder)
    ran = failed = lost = 0
    problems: list[str] = []
    interrupted = False
    futures: dict[Future, Task] = {}
    with store.lock():
        store.save_suite({**suite.to_dict(), "base_dir": suite.base_dir})
        done = {k for k, s in store.keys.items() if s == "ok" or not retry_errors}
        pending = [t for t in tasks if t.key not in done]
        skipped = len(tasks) - len(pending)
        if max_tasks is not None:
            pending = pending[:max(0, int(max_tasks))]
        own = None
        ex: Executor | None = None
        # what the processes that run the tasks have warmed up: this one for inline runs;
        # unknown on a caller's executor (each task warms up itself)
        warmup: Warmup | None = Warmup()
        if isinstance(executor, Executor):
            ex, warmup = executor, None
        elif executor != "inline" and pending:
            from concurrent.futures import ProcessPoolExecutor

            # compile the kernels the pending tasks need once, here (the DAG family's and
            # CoflowSim's in a helper process beside: _warm_up_beside), before the workers
            # start: they then load numba's cache instead of compiling the same kernels side
            # by side (a cold cache's first run); each worker warms the same schedulers up
            # when it starts, so its tasks go with this process's record
            assert warmup is not None
            _warm_up_beside(warmup, pending, jobs)
            own = ex = ProcessPoolExecutor(max_workers=max(1, int(jobs)),
                                           initializer=_start_worker,
                                           initargs=(_distinct_schedulers(pending),))
        bar = tqdm(total=len(pending), desc=suite.name, unit="task", leave=False,
                   disable=None if progress is None else not progress)
        try:
            for task, fut, res in _results(ex, pending, futures, warmup):
                if fut is not None:
                    try:
                        res = fut.result()
                    except Exception as exc:  # the worker failed, not the task
                        if type(exc).__name__ == "KilledWorker":
                            res = {"row": {**_base_row(task), "status": "error",
                                           "error": f"KilledWorker: {exc}"},
                                   "arrays": None, "traceback": None}
                        else:
                            lost += 1
                            problems.append(f"{task.workload.name}/{task.scheduler.label}/"
                                            f"seed {task.seed}: {type(exc).__name__}: {exc}")
                            bar.update(1)
                            continue
                assert res is not None
                row = res["row"]
                if res.get("arrays"):
                    store.save_arrays(task.key, **res["arrays"])
                if res.get("traceback"):
                    store.save_text("errors", task.key, res["traceback"])
                store.append(row)
                ran += 1
                failed += is_failure(row["status"], row.get("error", ""))
                if on_row is not None:
                    on_row(row)
                bar.update(1)
                bar.set_postfix(done=ran - failed, failed=failed,
                                remaining=len(pending) - ran - lost, refresh=False)
        except KeyboardInterrupt:
            interrupted = True
            for f in futures:
                f.cancel()
        finally:
            bar.close()
            if own is not None:
                if interrupted:
                    own.shutdown(wait=False, cancel_futures=True)
                    for p in list((getattr(own, "_processes", None) or {}).values()):
                        p.terminate()
                else:
                    own.shutdown(wait=True)
        _export_parquet(folder)
    remaining = sum(1 for t in tasks if t.key not in store.keys or
                    (retry_errors and store.keys[t.key] != "ok"))
    return RunResult(suite=suite.name, out=folder, total=len(tasks), skipped=skipped, ran=ran,
                     failed=failed, lost=lost, remaining=remaining, interrupted=interrupted,
                     seconds=time.perf_counter() - t_start, problems=tuple(problems))


def _beside_split(tasks: list[Task]) -> tuple[list[Task], list[Task]]:
    """``tasks`` split by the kernels their schedulers compile: ``(here, beside)``, where
    ``beside`` holds the DAG family's and the CoflowSim semantics' (their own kernels: the
    BvN peel, the merge sweep, the backfill, the quantum loops) and ``here`` the rest (the
    fluid engines, which the fluid single-stage, fair and learned schedulers share).  Plugins
    are left out (:func:`_warmable`)."""
    here: list[Task] = []
    beside: list[Task] = []
    for t, info in _warmable(_distinct_schedulers(tasks)):
        own = info.family == "dag" or str(t.scheduler.semantics) == "coflowsim"
        (beside if own else here).append(t)
    return here, beside


def _warm_up_beside(warmup: Warmup, tasks: list[Task], jobs: int) -> None:
    """``warmup.run_tasks(tasks)``, a cold cache's compiles on two cores: with ``jobs >= 2``
    and both halves of :func:`_beside_split` non-empty, a helper process compiles the
    ``beside`` half into numba's cache while this one warms up the rest, then this one loads
    the helper's from the cache.  A warm cache costs the helper's loads on the other core
    (the default suite warm: 21.7 s before, 20.7-21.9 s after).  The default suite's cold
    warm-up on a 2-core machine: 186 s in one process (the fluid engine 73 s, G-DM's merge
    sweep and G-DM-BF's backfill 74 s)."""
    here, beside = _beside_split(tasks)
    if jobs < 2 or not here or not beside:
        warmup.run_tasks(tasks)
        return
    import multiprocessing

    # the helper starts as a pool worker does (Ctrl-C reaches this process only, it dies
    # with it; a failure is only a lost head start: this process warms its half up below)
    helper = multiprocessing.Process(target=_start_worker, args=(beside,), daemon=True)
    helper.start()
    try:
        warmup.run_tasks(here)
        helper.join()
    finally:  # Ctrl-C here: the helper (which ignores it) stops too
        if helper.is_alive():
            helper.kill()
            helper.join()
    warmup.run_tasks(tasks)


def _distinct_schedulers(tasks: list[Task]) -> list[Task]:
    """One task per distinct (scheduler, semantics, parameters) of ``tasks``: what a worker
    warms up when it starts."""
    seen: dict[tuple[str, str, str], Task] = {}
    for t in tasks:
        seen.setdefault((t.scheduler.name, str(t.scheduler.semantics),
                         repr(sorted(t.scheduler.params.items()))), t)
    return list(seen.values())


def _export_parquet(folder: Path) -> None:
    """``results.parquet`` beside the CSV, when pyarrow is importable."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return
    try:
        df = load_results(folder)
    except FileNotFoundError:
        return
    df.to_parquet(folder / RESULTS_PARQUET, index=False)
