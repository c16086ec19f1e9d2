"""The layering the package promises, read from the import statements of its source files.

- the LP layer (``lp/``) and the engines (``coflowopt/sim/``) import no scheduler module;
- a scheduler family (``coflowopt/schedulers/<family>/``) imports no other family;
- ``import coflowopt`` in a fresh interpreter loads neither torch, nor the bench harness, nor
  any scheduler module (the registry names them lazily).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "coflowopt"
FAMILIES = sorted(p.name for p in (PKG / "schedulers").iterdir()
                  if p.is_dir() and (p / "__init__.py").exists())


def _module_name(path: Path) -> str:
    if path.is_relative_to(ROOT / "lp"):
        rel = path.relative_to(ROOT / "lp").with_suffix("")
        parts = ["coflowopt", "lp", *rel.parts]
    else:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append(mod)
            out += [f"{mod}.{a.name}" for a in node.names]
    return out


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_families_exist() -> None:
    assert "single" in FAMILIES


@pytest.mark.parametrize("folder", [ROOT / "lp", PKG / "sim"], ids=["lp", "sim"])
def test_lp_and_engines_import_no_scheduler(folder: Path) -> None:
    bad = [(p.relative_to(ROOT).as_posix(), m) for p in _sources(folder) for m in _imports(p)
           if m == "coflowopt.schedulers" or m.startswith("coflowopt.schedulers.")]
    assert not bad, f"imports of scheduler modules below {folder.name}/: {bad}"


def test_no_family_imports_another() -> None:
    bad = []
    for fam in FAMILIES:
        for p in _sources(PKG / "schedulers" / fam):
            for m in _imports(p):
                for other in FAMILIES:
                    if other != fam and (m == f"coflowopt.schedulers.{other}"
                                         or m.startswith(f"coflowopt.schedulers.{other}.")):
                        bad.append((p.relative_to(ROOT).as_posix(), m))
    assert not bad, f"cross-family imports: {bad}"


def test_import_reads_the_files_it_claims() -> None:
    # the checks above would pass on an empty tree: make sure they read real imports
    imps = _imports(PKG / "schedulers" / "single" / "sincronia.py")
    assert "coflowopt.orders.bssi" in imps and "coflowopt.sim.drive" in imps
    assert "coflowopt.orders.bssi_trace" in _imports(ROOT / "lp" / "ordering.py")


def test_import_coflowopt_stays_light() -> None:
    code = ("import sys, coflowopt\n"
            "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')\n"
            "    or m.startswith('coflowopt.bench') or m.startswith('coflowopt.schedulers.')\n"
            "    and m != 'coflowopt.schedulers.registry')\n"
            "print(';'.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"import coflowopt loaded: {out.stdout.strip()}"


def test_every_package_is_listed_for_installation() -> None:
    # a plain (non-editable) install ships only the packages setup.cfg names
    import configparser

    root = Path(__file__).resolve().parents[1]
    cfg = configparser.ConfigParser()
    cfg.read(root / "setup.cfg")
    listed = set(cfg["options"]["packages"].split())
    found = {".".join(p.parent.relative_to(root).parts)
             for p in (root / "coflowopt").rglob("__init__.py")}
    found |= {"coflowopt.lp", "coflowopt.proofs_check"}
    assert found <= listed, sorted(found - listed)


def test_the_engine_holds_no_policy() -> None:
    # the compiled engine is open: policies hand it their order as compiled code
    # (coflowopt.sim.policy), so no kind switch names a built-in scheduler
    import re

    kinds = re.compile(r"\bKIND_[A-Z]+\b")
    bad = [p.relative_to(ROOT).as_posix() for d in (PKG, ROOT / "lp", ROOT / "proofs_check")
           for p in _sources(d) if kinds.search(p.read_text())]
    assert not bad, f"KIND_ switches in: {bad}"
    # and the built-ins' compiled rules sit in their family modules, not in the engine
    fast = (PKG / "sim" / "fast.py").read_text()
    for rule in ("sebf_key", "bssi_rank", "dclas_key", "cofair_rank", "bssi_order",
                 "cofair_online"):
        assert rule not in fast, rule


def _package_modules() -> dict[str, Path]:
    return {_module_name(p): p for d in (PKG, ROOT / "lp", ROOT / "proofs_check")
            for p in _sources(d)}


def test_no_private_name_crosses_a_module() -> None:
    # a name with a leading underscore is its module's own; what another module needs is
    # public there.  The package's infrastructure modules (_jit, _memory, _kernel_cache) are
    # private to the package, not to one module, so importing them is fine.
    bad = []
    for mod, path in _package_modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__") \
                            and a.name not in ("_jit", "_memory", "_kernel_cache"):
                        bad.append(f"{mod}: from {node.module or '.'} import {a.name}")
    assert not bad, bad


def test_no_import_circles() -> None:
    # every import statement counts, at module level or inside a function: a circle through a
    # function-level import is still two modules that need each other
    mods = _package_modules()
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps = set()
        for name in _imports(path):
            while name and name not in mods:
                name = name.rpartition(".")[0]
            if name and name != mod:
                deps.add(name)
        graph[mod] = deps

    def package_of(name: str) -> bool:
        return (mods[name].name == "__init__.py")

    # a package's __init__ importing its own submodules is how a package exposes them: only
    # circles among modules (or a module and another package) count
    seen: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        seen[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if package_of(w) and v.startswith(w + "."):
                continue
            if seen.get(w) == 1:
                circles.append([*stack[stack.index(w):], w])
            elif w not in seen:
                visit(w)
        stack.pop()
        seen[v] = 2

    for v in sorted(graph):
        if v not in seen:
            visit(v)
    assert not circles, circles[:3]
