"""Helpers for the tests that press Ctrl-C in a child process."""

from __future__ import annotations

import signal


def interactive_sigint() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C: a shell's background job inherits
    SIGINT ignored, and Python then installs no KeyboardInterrupt handler, so restore the
    default disposition an interactive process has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
