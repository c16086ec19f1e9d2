"""Griffe extensions for the API reference (``docs/api.md``, loaded by mkdocs.yml).

* :class:`MappedSubpackages`: setup.cfg installs ``coflowopt.lp`` and ``coflowopt.proofs_check``
  from the top-level ``lp/`` and ``proofs_check/`` folders (``package_dir``), so a static
  reading of ``coflowopt/`` does not find them.  Once the ``coflowopt`` package is loaded, this
  loads each of them from where Python imports it and attaches it as a submodule, so
  ``::: coflowopt.lp`` works like any other module.
* :class:`SphinxRoles`: the docstrings are reStructuredText-flavoured; a role such as
  ``:class:`~coflowopt.model.Instance``` would show its markup, so it is rendered as the code
  span ``Instance`` (the name Sphinx would show).  Only the rendering changes.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import griffe

MAPPED = ("lp", "proofs_check")
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|obj|exc|const):`(~?)([^`]+)`")


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


def _role(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"``{target.rsplit('.', 1)[-1] if match.group(1) else target}``"


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_role, obj.docstring.value)
