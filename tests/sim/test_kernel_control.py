"""Compiled kernels: progress, stopping (a stop flag, Ctrl-C) and compile feedback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from interrupt import interactive_sigint
from numba import njit

from coflowopt import Tolerance
from coflowopt.schedulers.single.varys import varys_engine_policy
from coflowopt.sim.coflowsim import coflowsim
from coflowopt.sim.fast import fast_simulate
from coflowopt.sim.fastfair import fast_fair
from coflowopt.sim.kernel import (
    CTL_STATUS,
    CTL_STOP,
    CTL_TIME,
    STORED_HINT,
    STORED_SHARE,
    KernelMemoryError,
    available_memory,
    new_control,
    prepare,
    run_kernel,
    stop_requested,
    will_compile,
)
from coflowopt.sim.warmup import warm_up
from coflowopt.workloads.synthetic import synthetic_trace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def big():
    """Long enough that a run spans several progress polls (0.1 s)."""
    return synthetic_trace(300, seed=3, ports=60)


def _runs(inst):
    """The three kinds of kernels, stored and streamed."""
    return {
        "fast": lambda **kw: fast_simulate(inst, varys_engine_policy(inst), **kw),
        "fair": lambda **kw: fast_fair(inst, check=Tolerance(), **kw),
        "coflowsim": lambda **kw: coflowsim(inst, "fair", check=True, **kw),
    }


@pytest.mark.parametrize("which", ["fast", "fair", "coflowsim"])
def test_progress_is_reported_and_non_decreasing(big, which) -> None:
    seen: list[tuple[float, float]] = []
    _runs(big)[which](progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 2
    done = [d for d, _ in seen]
    assert done == sorted(done) and all(d <= t for d, t in seen)
    assert seen[-1][0] == seen[-1][1] > 0  # the last call says complete


def test_progress_is_an_explicit_argument_only() -> None:
    # no ambient channel (the engine's former PROGRESS context variable): the reference
    # engine reports completed coflows to the callback its caller passes, and to nothing else
    import coflowopt.sim.engine as engine
    from coflowopt.schedulers.single.varys import VarysPolicy
    from coflowopt.sim.drive import run_policy

    assert not hasattr(engine, "PROGRESS")
    inst = synthetic_trace(30, seed=3, ports=10)
    seen: list[tuple[int, int]] = []
    sched = run_policy(inst, VarysPolicy(), engine="reference",
                       progress=lambda done, total: seen.append((done, total)))
    assert sched.meta["engine"] == "reference"
    assert seen and seen[-1] == (inst.n_coflows, inst.n_coflows)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


@pytest.mark.parametrize("which", ["fast", "fair", "coflowsim"])
def test_stop_flag_stops_the_kernel_and_the_process_stays_healthy(big, which) -> None:
    run = _runs(big)[which]
    want = run()
    ctl = new_control()

    def stop(done: float, total: float) -> None:
        ctl[CTL_STOP] = 1.0  # as another thread would

    with pytest.raises(KeyboardInterrupt):
        run(progress=stop, control=ctl)
    assert ctl[CTL_STATUS] == 1.0  # the kernel itself saw the flag and returned early
    ctl[CTL_STOP] = 0.0
    again = run(control=ctl)
    assert ctl[CTL_STATUS] == 0.0
    if which == "fast":  # the same segments, bit for bit
        for name in ("breakpoints", "flow", "rate", "first", "last"):
            np.testing.assert_array_equal(getattr(again, name), getattr(want, name))
    elif which == "fair":
        np.testing.assert_array_equal(again.coflow_completion, want.coflow_completion)
        np.testing.assert_array_equal(again.flow_completion, want.flow_completion)
    else:
        assert again.finish.tolist() == want.finish.tolist()
        np.testing.assert_array_equal(again.valid.flow_completion, want.valid.flow_completion)


def test_interrupt_from_the_callback_stops_a_streamed_run(big) -> None:
    calls = []

    def interrupt(done: float, total: float) -> None:
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        coflowsim(big, "sebf", check=True, progress=interrupt)
    assert len(calls) == 1
    res = coflowsim(big, "sebf", check=True)
    assert res.valid is not None and np.isfinite(res.valid.coflow_completion).all()


@njit(nogil=True)
def _spin(ctl):
    """A kernel that runs until told to stop."""
    n = 0
    while not stop_requested(ctl):
        n += 1
        ctl[CTL_TIME] = min(n * 1e-6, 1.0)
    ctl[CTL_STATUS] = 1.0
    return n


def test_run_kernel_from_another_thread_and_errors() -> None:
    ctl = new_control(horizon=1.0)
    threading.Timer(0.3, lambda: ctl.__setitem__(CTL_STOP, 1.0)).start()
    with pytest.raises(KeyboardInterrupt):
        run_kernel(_spin, ctl, control=ctl)

    def broken(ctl):
        raise ValueError("kernel failed")

    with pytest.raises(ValueError, match="kernel failed"):
        run_kernel(broken, new_control(), control=new_control())
    with pytest.raises(ValueError, match="units"):
        run_kernel(_spin, ctl, control=ctl, units="bytes")


def test_sigint_interrupts_a_running_kernel() -> None:
    """Ctrl-C in a process running the fair kernel on a large instance: a KeyboardInterrupt
    traceback, no segmentation fault."""
    code = (
        "import sys\n"
        "from coflowopt import Tolerance\n"
        "from coflowopt.sim.fastfair import fast_fair\n"
        "from coflowopt.workloads.synthetic import synthetic_trace\n"
        "inst = synthetic_trace(2000, seed=0)\n"
        "def tick(done, total):\n"
        "    print('tick', done, flush=True)\n"
        "fast_fair(inst, check=Tolerance(), progress=tick)\n"
        "print('finished', flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONFAULTHANDLER": "1"},
                            preexec_fn=interactive_sigint)
    try:
        deadline = time.monotonic() + 600  # a cold cache compiles first
        line = ""
        # the first tick (time 0) can come while the kernel still compiles: wait for time
        # to advance, so the interrupt reaches a running kernel
        while not (line.startswith("tick") and float(line.split()[1]) > 0) \
                and "finished" not in line:
            line = proc.stdout.readline()
            assert line and time.monotonic() < deadline, "no progress from the kernel"
        assert "tick" in line  # the kernel is running
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "finished" not in out
    assert proc.returncode not in (0, -signal.SIGSEGV, 139)
    assert "Segmentation fault" not in err and "Fatal Python error" not in err
    assert proc.returncode in (-signal.SIGINT, 130, 1) and "KeyboardInterrupt" in err


def test_compile_feedback() -> None:
    @njit
    def fresh(a):
        return a.sum() + 1.0

    said: list[str] = []
    x = np.arange(3.0)
    assert will_compile(fresh, x) is not False
    prepare(fresh, x, notify=said.append)
    assert said[0] == "compiling kernels (first run only) ..."
    assert re.fullmatch(r"compiled in \d+\.\d s", said[1]) and len(said) == 2
    assert will_compile(fresh, x) is False
    said.clear()
    assert prepare(fresh, x, notify=said.append) == 0.0 and said == []


def test_warm_up_then_nothing_compiles(capsys) -> None:
    assert warm_up() >= 0.0
    assert capsys.readouterr().err == ""  # silent unless verbose
    said: list[str] = []
    assert warm_up(verbose=True, notify=said.append) >= 0.0
    inst = synthetic_trace(5, seed=1, ports=4)
    fast_simulate(inst, varys_engine_policy(inst), notify=said.append)
    fast_fair(inst, check=Tolerance(), notify=said.append)
    coflowsim(inst, "dark", check=True, notify=said.append)
    assert said == []  # every kernel was compiled or loaded by the first warm_up


@njit(nogil=True)
def _hog(ctl, mib):
    """Take ``mib`` MiB (touched), then wait for the stop flag (a bounded wait)."""
    keep = []
    for _ in range(mib):
        keep.append(np.ones(1 << 17))  # 1 MiB
    n = 0
    while not stop_requested(ctl) and n < 300_000_000:
        n += 1
    if stop_requested(ctl):
        ctl[CTL_STATUS] = 1.0
    return len(keep)


def test_a_kernel_growing_past_its_memory_share_is_stopped_with_a_clear_error() -> None:
    avail = available_memory()
    if avail is None:
        pytest.skip("no /proc/meminfo here: memory is not watched")
    ctl = new_control()
    # a share of about 64 MiB: the kernel's 256 MiB pass it, and it is stopped while waiting
    share = 64 * 2**20 / avail
    with pytest.raises(KernelMemoryError, match="stream it instead") as err:
        run_kernel(_hog, ctl, 256, control=ctl, poll=0.02, memory_share=share,
                   hint=STORED_HINT)
    assert err.value.grown > err.value.limit > 0
    assert ctl[CTL_STOP] == 1.0 and ctl[CTL_STATUS] == 1.0  # told to stop, and it did
    # within its share the same kernel runs to its end (its bounded wait)
    ctl = new_control()
    assert run_kernel(_hog, ctl, 8, control=ctl, memory_share=0.9) == 8


def test_stored_runs_take_the_stored_share(monkeypatch) -> None:
    import coflowopt.sim.coflowsim.run as csim_run
    import coflowopt.sim.fast as fast_mod

    seen = []

    def spy(fn, *args, **kw):
        seen.append(kw.get("memory_share"))
        return run_kernel(fn, *args, **kw)

    monkeypatch.setattr(csim_run, "run_kernel", spy)
    monkeypatch.setattr(fast_mod, "run_kernel", spy)
    inst = synthetic_trace(20, seed=1, ports=8)
    coflowsim(inst, "sebf")
    coflowsim(inst, "sebf", check=True)
    fast_simulate(inst, varys_engine_policy(inst))
    fast_simulate(inst, varys_engine_policy(inst), check=Tolerance())
    assert seen == [STORED_SHARE, None, STORED_SHARE, None]
