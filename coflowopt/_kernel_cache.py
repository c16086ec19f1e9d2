"""Keep numba's on-disk kernel cache consistent across modules.

numba caches each compiled function next to its module (``__pycache__/*.nbi`` index,
``*.nbc`` code) and invalidates the entry only when *that* module's file changes.  A kernel
that calls a compiled function of another module (the simulators call the validator's
``_stream_consume`` and the segment store's ``_put``) embeds the callee, so after the callee's
module changes the cached kernel would keep running the old callee: an editable install that
pulls an update could run stale code without a sign.  At import, :func:`refresh` hashes the
sources of the modules with compiled functions and, when the hash differs from the one stored
beside the cache, drops their cache indexes, so every kernel is compiled afresh once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

__all__ = ["KERNEL_MODULES", "refresh"]

# the modules with compiled functions, relative to the package folder
KERNEL_MODULES = (
    "_jit.py",
    "validate.py",
    "sim/allocate.py",
    "sim/coflowsim.py",
    "sim/engine.py",
    "sim/fast.py",
    "sim/fastfair.py",
    "sim/kernel.py",
    "sim/policy.py",
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
    "schedulers/learned/converter.py",
)
_STAMP = "coflowopt-kernels.sha1"


def refresh(root: Path | None = None, modules: Sequence[str] = KERNEL_MODULES) -> bool:
    """Drop the numba cache indexes of ``modules`` (paths under ``root``, the package folder by
    default) when their sources changed since the last call, or when no hash was stored yet.
    Returns whether it dropped them.  A folder that cannot be written is left alone (numba then
    caches elsewhere or not at all)."""
    root = Path(__file__).resolve().parent if root is None else Path(root)
    digest = hashlib.sha1()
    for rel in modules:
        digest.update(rel.encode())
        try:
            digest.update((root / rel).read_bytes())
        except OSError:
            digest.update(b"<missing>")
    value = digest.hexdigest()
    stamp = root / "__pycache__" / _STAMP
    try:
        if stamp.read_text() == value:
            return False
    except OSError:
        pass
    try:
        for folder in {(root / rel).parent / "__pycache__" for rel in modules}:
            for index in folder.glob("*.nbi"):
                index.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(value)
    except OSError:
        return False
    return True
