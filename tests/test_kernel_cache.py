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


def test_kernel_modules_listed() -> None:
    # every package module that compiles with numba is under the guard
    pkg = Path(__file__).resolve().parents[1] / "coflowopt"
    found = {str(p.relative_to(pkg)) for p in pkg.rglob("*.py") if "njit" in p.read_text()}
    found.discard("_kernel_cache.py")
    assert found == set(KERNEL_MODULES)
