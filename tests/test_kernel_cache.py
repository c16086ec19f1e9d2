"""The kernel-cache key: a cached kernel is never read once any kernel module changed."""

import subprocess
import sys
import textwrap
from pathlib import Path

from coflowopt._kernel_cache import KERNEL_MODULES, sources_digest

_PROBE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from numba import njit
    from numba.core import caching
    from coflowopt._kernel_cache import StampedLocator

    root = Path(sys.argv[1])

    class Here(StampedLocator):  # the package's locator, for this folder's two modules
        pass

    Here.root, Here.modules = root, ("k.py", "dep.py")
    caching.CacheImpl._locator_classes.insert(0, Here)
    sys.path.insert(0, str(root))
    import k

    k.f(1.0)
    print(sum(k.f.stats.cache_hits.values()), sum(k.f.stats.cache_misses.values()))
""")


def _probe(root: Path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", _PROBE, str(root)], capture_output=True,
                         text=True, check=True, cwd=root)
    hits, misses = out.stdout.split()
    return int(hits), int(misses)


def test_a_change_in_any_kernel_module_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text("from numba import njit\n\n@njit(cache=True)\n"
                                   "def f(x):\n    return x + 1.0\n")
    (tmp_path / "dep.py").write_text("y = 2\n")
    assert _probe(tmp_path) == (0, 1)  # compiled and cached
    assert _probe(tmp_path) == (1, 0)  # read back
    index = sorted((tmp_path / "__pycache__").glob("k.f-*.nbi"))
    assert index
    # a module the kernel does not even import changes (same size, other content): the
    # cached entry is not read, and nothing was deleted to achieve it
    (tmp_path / "dep.py").write_text("y = 3\n")
    assert _probe(tmp_path) == (0, 1)
    assert _probe(tmp_path) == (1, 0)
    assert all(p.exists() for p in index)


def test_the_digest_follows_every_listed_source(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    mods = ("a.py", "b.py")
    before = sources_digest(tmp_path, mods)  # b.py missing counts as missing
    (tmp_path / "b.py").write_text("y = 2\n")
    assert sources_digest(tmp_path, mods) != before
    assert sources_digest(tmp_path, mods) == sources_digest(tmp_path, mods)


def test_kernels_of_the_package_use_the_stamped_locator() -> None:
    from coflowopt.sim import fast
    from coflowopt.sim.policy import by_priority

    for fn in (fast._run, by_priority):
        loc = fn._cache._impl._locator
        assert type(loc).__name__ == "StampedLocator"
        assert loc.get_source_stamp()[1] == sources_digest()
        # numba's "cannot cache" warning names the locator's file
        assert loc._py_file == fast.__file__ or loc._py_file.endswith("policy.py")


def test_the_package_deletes_no_cache_file() -> None:
    # the key replaces the old guard, which dropped numba's indexes at import and kept a stamp
    # file inside the package
    src = (Path(__file__).resolve().parents[1] / "coflowopt" / "_kernel_cache.py").read_text()
    assert "unlink" not in src and "write_text" not in src
    assert "refresh" not in (Path(__file__).resolve().parents[1] / "coflowopt"
                             / "__init__.py").read_text()


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
