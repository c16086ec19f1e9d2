"""The command line's memory setting (``coflowopt._memory``)."""

from __future__ import annotations

import platform

import numpy as np

from coflowopt._memory import fix_mmap_threshold


def test_fix_mmap_threshold_takes_on_glibc() -> None:
    ok = fix_mmap_threshold()
    if platform.libc_ver()[0] == "glibc":
        assert ok is True  # mallopt accepted the parameter
    else:
        assert ok is False  # no mallopt: left alone
    # allocation and numpy work as before
    a = np.ones(1 << 20)
    assert float(a.sum()) == float(1 << 20)
