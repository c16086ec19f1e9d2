"""Keep a long command's resident memory near what it uses.

glibc serves a large allocation (numpy's arrays of flows) with its own ``mmap`` and returns it
to the system when freed, but each such free raises the threshold above which it does so (to
the freed size, up to 32 MB), so later arrays of a few MB come from the heap, which does not
shrink.  A command that runs several schedulers on FB2010 in one process then kept 70 MB more
than it used (fair, both semantics: 370 MB peak RSS instead of 342).  Fixing the threshold at
glibc's default stops the drift.  Only the command line and the bench's worker processes call
this; a notebook's process is left as it is.
"""

from __future__ import annotations

import ctypes

__all__ = ["fix_mmap_threshold"]

_M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)


def fix_mmap_threshold(threshold: int = 128 * 1024) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes (its default, which disables the
    dynamic raise); ``False`` where the C library has no ``mallopt`` (not glibc)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, int(threshold)))
