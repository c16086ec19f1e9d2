"""Griffe extension for the API reference: ``coflowopt.lp`` and ``coflowopt.proofs_check``.

setup.cfg installs them from the top-level ``lp/`` and ``proofs_check/`` folders
(``package_dir``), so a static reading of ``coflowopt/`` does not find them.  Once the
``coflowopt`` package is loaded, this loads each of them from where Python imports it and
attaches it as a submodule, so ``::: coflowopt.lp`` works like any other module.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import griffe

MAPPED = ("lp", "proofs_check")


class MappedSubpackages(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != "coflowopt":
            return
        for name in MAPPED:
            spec = importlib.util.find_spec(f"coflowopt.{name}")
            if spec is None or spec.origin is None or name in pkg.members:
                continue
            # griffe has no public call that loads a module under a given parent
            module = loader._load_module(name, Path(spec.origin), parent=pkg)
            pkg.set_member(name, module)
