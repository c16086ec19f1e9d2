"""Shared helpers of the bench tests: the test-only scheduler module on the path, tiny suites."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

#: bench_plugins' bench-test-count appends "algorithm_seed:n_flows" to this file per call.
MARKER_ENV = "COFLOWOPT_BENCH_MARKER"


@pytest.fixture(autouse=True)
def _forget_test_schedulers():
    """The test-only schedulers leave the registry after each test, so that no other test
    (one that runs every registered scheduler, say) meets them."""
    yield
    reg = importlib.import_module("coflowopt.schedulers.registry")
    for name in [n for n in reg.registry() if n.startswith("bench-test-")]:
        reg.unregister(name)
    sys.modules.pop("bench_plugins", None)


@pytest.fixture(autouse=True)
def _plugins_on_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    """Subprocesses (isolated tasks, `coflowopt bench` runs) import bench_plugins too."""
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(HERE), old) if p))


def tiny_suite(name: str = "tiny", *, schedulers: str = '[[schedulers]]\nname = "sequential"\n',
               seeds: str = "[0, 1, 2]", extra: str = "", workloads: str | None = None) -> str:
    """Suite TOML: one or two small synthetic workloads and the given scheduler tables."""
    workloads = workloads or (
        '[[workloads]]\nname = "syn-12"\ngenerator = "synthetic"\n'
        "params = { n_coflows = 12, ports = 8 }\n\n"
        '[[workloads]]\nname = "tpcds-3"\ngenerator = "tpcds_like"\n'
        'params = { n_jobs = 3, ports = 6, weight = "uniform" }\n')
    return (f'name = "{name}"\nseeds = {seeds}\nmetrics = ["avg_cct", "weighted_completion"]\n'
            f'imports = ["bench_plugins"]\n{extra}\n{workloads}\n{schedulers}')


def write(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p
