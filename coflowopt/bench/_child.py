"""``python -m coflowopt.bench._child``: run one pickled task (``isolate = true``).

Reads a pickled :class:`~coflowopt.bench.tasks.Task` on stdin and writes the pickled result of
:func:`~coflowopt.bench.runner.run_task` on stdout; whatever the algorithm prints goes to
stderr so it cannot corrupt the result.
"""

from __future__ import annotations

import os
import pickle
import sys


def main() -> None:
    from coflowopt._memory import fix_mmap_threshold
    from coflowopt.bench.runner import run_here

    fix_mmap_threshold()
    task = pickle.loads(sys.stdin.buffer.read())
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    result = run_here(task)
    out.write(pickle.dumps(result))
    out.flush()


if __name__ == "__main__":
    main()
