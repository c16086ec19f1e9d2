"""The kernel-cache guard: numba's cache indexes are dropped when a kernel module changes."""

from pathlib import Path

from coflowopt._kernel_cache import KERNEL_MODULES, refresh


def _tree(root: Path) -> list[Path]:
    (root / "sim" / "__pycache__").mkdir(parents=True)
    (root / "__pycache__").mkdir()
    (root / "a.py").write_text("x = 1\n")
    (root / "sim" / "b.py").write_text("y = 2\n")
    return [root / "__pycache__" / "a._f-3.py311.nbi", root / "sim" / "__pycache__" / "b.nbi"]


def test_refresh_drops_indexes_when_a_source_changes(tmp_path: Path) -> None:
    idx = _tree(tmp_path)
    mods = ("a.py", "sim/b.py")
    for p in idx:
        p.write_text("index")
    code = tmp_path / "__pycache__" / "a._f-3.py311.1.nbc"
    code.write_text("code")
    # no stamp yet: the caches may predate the guard, so they go
    assert refresh(tmp_path, mods)
    assert not any(p.exists() for p in idx) and code.exists()
    # nothing changed: kept
    for p in idx:
        p.write_text("index")
    assert not refresh(tmp_path, mods)
    assert all(p.exists() for p in idx)
    # a callee's module changes (same size, other content): every index goes
    (tmp_path / "sim" / "b.py").write_text("y = 3\n")
    assert refresh(tmp_path, mods)
    assert not any(p.exists() for p in idx)
    assert not refresh(tmp_path, mods)


def _jitted_names(tree) -> set[str]:
    """Names used inside the module's numba-compiled functions (decorated with ``njit`` or
    ``numba.njit``/``jit``, with or without arguments)."""
    import ast

    def is_jit(dec) -> bool:
        dec = dec.func if isinstance(dec, ast.Call) else dec
        name = dec.attr if isinstance(dec, ast.Attribute) else getattr(dec, "id", "")
        return name in ("njit", "jit")

    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(is_jit(d) for d in node.decorator_list):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name):
                    used.add(sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                    used.add(sub.value.id)
    return used


def _dispatchers_imported(path: Path, pkg: Path) -> set[str]:
    """The package modules (relative paths) whose numba-compiled functions ``path``'s compiled
    functions call (a compiled caller embeds such a callee), directly or through the module
    object."""
    import ast
    import importlib
    import types

    from numba.core.registry import CPUDispatcher

    def has_kernels(mod: types.ModuleType) -> bool:
        return any(isinstance(v, CPUDispatcher) for v in vars(mod).values())

    def rel(modname: str) -> str:
        parts = modname.split(".")[1:]
        sub = pkg.joinpath(*parts)
        return str((sub / "__init__.py" if sub.is_dir() else sub.with_suffix(".py"))
                   .relative_to(pkg))

    tree = ast.parse(path.read_text())
    used = _jitted_names(tree)
    out = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module
                and node.module.startswith("coflowopt.") and node.level == 0):
            continue
        if node.module.startswith(("coflowopt.lp", "coflowopt.proofs_check")):
            continue
        src = importlib.import_module(node.module)
        for alias in node.names:
            if (alias.asname or alias.name) not in used:
                continue
            obj = getattr(src, alias.name, None)
            if isinstance(obj, CPUDispatcher):
                out.add(rel(node.module))
            elif isinstance(obj, types.ModuleType) and has_kernels(obj):
                out.add(rel(obj.__name__))
    return out


def test_kernel_modules_listed() -> None:
    # a module whose compiled functions call another module's compiled functions embeds them,
    # and numba's own cache would not notice the callee change: both are under the guard.  A
    # module whose kernels call only its own is left to numba's per-file cache.
    pkg = Path(__file__).resolve().parents[1] / "coflowopt"
    need = set()
    for p in pkg.rglob("*.py"):
        if p.name == "_kernel_cache.py" or "njit" not in p.read_text():
            continue
        callees = _dispatchers_imported(p, pkg)
        if callees:
            need |= callees | {str(p.relative_to(pkg))}
    assert need <= set(KERNEL_MODULES), sorted(need - set(KERNEL_MODULES))
    assert all((pkg / m).exists() for m in KERNEL_MODULES)


def test_pipeline_users_listed() -> None:
    # a kernel compiled through coflowopt._jit's pipeline changes when that module does, which
    # numba's per-file cache cannot see
    pkg = Path(__file__).resolve().parents[1] / "coflowopt"
    users = {str(p.relative_to(pkg)) for p in pkg.rglob("*.py")
             if "from coflowopt._jit import njit" in p.read_text()}
    assert len(users) >= 10  # the simulators, the validator and the families' kernels
    assert users | {"_jit.py"} <= set(KERNEL_MODULES), sorted(users - set(KERNEL_MODULES))
    plain = [str(p.relative_to(pkg)) for p in pkg.rglob("*.py")
             if "from numba import njit" in p.read_text() or "numba.njit(" in p.read_text()]
    assert plain == [p for p in plain if p == "_jit.py"], plain
