"""Keep numba's on-disk kernel cache consistent across modules.

numba caches each compiled function next to its module (``__pycache__/*.nbi`` index,
``*.nbc`` code) and keys the entry on *that* module's source only.  A kernel that calls a
compiled function of another module (the simulators call the validator's ``stream_consume``
and the segment store's ``_put``, the engine a policy's key) embeds the callee, so after the
callee's module changed the cached kernel would keep running the old callee: an editable
install that pulls an update could run stale code without a sign.

So the cache entries of the kernel modules (:data:`KERNEL_MODULES`) are keyed on the sources of
*all* of them: :class:`StampedLocator` is numba's own cache locator (same folder, same files)
whose source stamp also holds :func:`sources_digest` of those modules.  numba compares the
stamp when it reads an index and treats a mismatch as a miss, so a stale entry is never read;
nothing is deleted, and the digest is computed once per process, when the first kernel module
is loaded (numba hashes each module's own source at that point anyway).  :func:`install` puts
the locator first in numba's list; :mod:`coflowopt._jit`, which every kernel module imports
before it defines a kernel, calls it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from numba.core import caching

__all__ = ["KERNEL_MODULES", "StampedLocator", "install", "sources_digest"]

# the modules with compiled functions, relative to the package folder
KERNEL_MODULES = (
    "_jit.py",
    "_prefetch.py",
    "validate/__init__.py",
    "validate/stored.py",
    "validate/streamed.py",
    "sim/allocate.py",
    "sim/coflowsim/fair.py",
    "sim/coflowsim/javafloat.py",
    "sim/coflowsim/loop.py",
    "sim/coflowsim/ordered.py",
    "sim/coflowsim/orders.py",
    "sim/coflowsim/pfp.py",
    "sim/coflowsim/rates.py",
    "sim/coflowsim/run.py",
    "sim/coflowsim/stream.py",
    "sim/engine.py",
    "sim/events.py",
    "sim/fast.py",
    "sim/fastfair.py",
    "sim/kernel.py",
    "sim/policy.py",
    "sim/ready.py",
    "orders.py",
    "sim/segstore.py",
    "sim/stepper.py",
    "schedulers/single/aalo.py",
    "schedulers/single/sincronia.py",
    "schedulers/single/varys.py",
    "schedulers/fair/cofair.py",
    "schedulers/fair/utopia.py",
    "schedulers/fair/approximate.py",
    "schedulers/fair/static_progress_kernel.py",
    "schedulers/dag/backfill.py",
    "schedulers/dag/dma.py",
    "schedulers/dag/slots.py",
    "schedulers/dag/bna.py",
    "schedulers/dag/merge_stream.py",
    "schedulers/learned/converter.py",
    "schedulers/learned/features.py",
)
ROOT = Path(__file__).resolve().parent


def sources_digest(root: Path = ROOT, modules: Sequence[str] = KERNEL_MODULES) -> str:
    """SHA-1 of the names and sources of ``modules`` (paths under ``root``); a missing file
    counts as such."""
    digest = hashlib.sha1()
    for rel in modules:
        digest.update(rel.encode())
        try:
            digest.update((root / rel).read_bytes())
        except OSError:
            digest.update(b"<missing>")
    return digest.hexdigest()


_DIGESTS: dict[tuple[Path, tuple[str, ...]], str] = {}


class StampedLocator(caching._CacheLocator):
    """numba's locator for a kernel module's function (the one numba would pick: the
    in-tree ``__pycache__``, or ``NUMBA_CACHE_DIR``), with :func:`sources_digest` added to
    its source stamp.  ``root`` and ``modules`` say which files are kernel modules."""

    root: Path = ROOT
    modules: tuple[str, ...] = KERNEL_MODULES

    def __init__(self, inner: Any):
        self._inner = inner
        # numba's "cannot cache" warning reads the locator's file: without it the warning
        # became an AttributeError that hid the reason
        self._py_file = getattr(inner, "_py_file", "")

    def ensure_cache_path(self) -> None:
        self._inner.ensure_cache_path()

    def get_cache_path(self) -> str:
        return self._inner.get_cache_path()

    def get_disambiguator(self) -> str:
        return self._inner.get_disambiguator()

    def get_source_stamp(self) -> Any:
        key = (self.root, tuple(self.modules))
        if key not in _DIGESTS:
            _DIGESTS[key] = sources_digest(self.root, self.modules)
        return (self._inner.get_source_stamp(), _DIGESTS[key])

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> StampedLocator | None:
        try:
            rel = Path(py_file).resolve().relative_to(cls.root).as_posix()
        except ValueError:
            return None
        if rel not in cls.modules:
            return None
        for base in caching.CacheImpl._locator_classes:
            if isinstance(base, type) and issubclass(base, StampedLocator):
                continue
            inner = base.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner)
        return None


def install() -> None:
    """Put :class:`StampedLocator` first in numba's locator list (once)."""
    classes = caching.CacheImpl._locator_classes
    if StampedLocator not in classes:
        classes.insert(0, StampedLocator)
