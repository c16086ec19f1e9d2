"""The workloads a suite can name, and the per-process instance cache.

Suites name generators of the one table :mod:`coflowopt.workloads.registry` (``coflowopt gen``
uses the same names): ``synthetic``, ``trace``, ``ggen_fan_in_fan_out``, ``rooted_trees``,
``layered_dags``, ``tpcds_like``, ``fb2010_jobs`` (and the older aliases ``ggen``, ``fan-in``,
``fan-out``, ``layered``, ``tpcds``, ``fb2010``).  ``params`` are the generator's keyword
arguments, checked against its parameter dataclass when the suite is parsed; path parameters
(``trace``'s ``path``, ``fb2010_jobs``'s ``trace``) are relative to the suite's folder, or
``"fb2010"`` for :func:`~coflowopt.workloads.find_fb2010`.

Add one with :func:`coflowopt.workloads.registry.register`, or with the decorator
:func:`register_workload` below (kept for plugins written against it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from coflowopt.model import Instance
from coflowopt.workloads import registry
from coflowopt.workloads.registry import Generator

__all__ = [
    "WorkloadGenerator",
    "build_workload",
    "get_generator",
    "register_workload",
    "workload_generators",
]

#: The registry's entry type (the name this module gave it before the registry existed).
WorkloadGenerator = Generator


def register_workload(name: str, *, seeded: bool = True,
                      path_params: Mapping[str, str | None] | None = None,
                      convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                      summary: str = "", time_unit: str = "unit"
                      ) -> Callable[[Callable[..., Instance]], Callable[..., Instance]]:
    """Decorator: add ``func(seed=..., **params) -> Instance`` to the registry as ``name``
    (``seeded`` is read from whether ``func`` takes ``seed``; kept for the old signature)."""
    del seeded

    def deco(func: Callable[..., Instance]) -> Callable[..., Instance]:
        registry.register(name, func, summary=summary, time_unit=time_unit,
                          path_params=path_params, convert=convert)
        return func

    return deco


def workload_generators() -> dict[str, Generator]:
    """The registry's canonical generators by name (aliases not listed)."""
    return registry.generators()


def get_generator(name: str) -> Generator:
    """The registry entry for ``name`` (aliases resolve); ``KeyError`` lists the known names."""
    return registry.generator(name)


def build_workload(generator: str, params: Mapping[str, Any], seed: int,
                   base_dir: str | os.PathLike[str] = ".") -> Instance:
    """The instance of one workload spec and seed, through
    :func:`coflowopt.workloads.registry.build` (cached per process: schedulers that share a
    workload and seed in one worker build it once)."""
    return _build_cached(generator, json.dumps(dict(params), sort_keys=True), int(seed),
                         str(base_dir))


@lru_cache(maxsize=4)
def _build_cached(generator: str, params_json: str, seed: int, base_dir: str) -> Instance:
    return registry.build(generator, json.loads(params_json), seed, base_dir=base_dir)
