"""Where a compiled kernel spends its time, function by function, under Linux ``perf``.

    perf record -F 999 -o run.data -- python benchmarks/perf_kernels.py TRACE SCHEDULER \
        [--warm SMALL_INSTANCE]
    perf report -i run.data --no-children --sort sym

numba's compiled functions are loaded from its cache into anonymous memory, so ``perf`` sees
addresses without names.  This script runs ``SCHEDULER`` once on a tiny instance (loading its
kernels), then writes ``/tmp/perf-<pid>.map`` (the file ``perf report`` reads for code it
cannot name) with every function of every loaded kernel, then runs ``SCHEDULER`` on
``TRACE`` (any trace or instance file ``coflowopt run`` reads) and prints its CPU time and
counters.

A kernel's functions are found in its cache entry (the ``.nbc`` file, an ELF object, that
defines the loaded overload's symbol): numba links the functions a kernel calls into the
kernel's object, so ``nm`` on that object lists them (``W``: weak symbols, numba's way of
linking them), and each one's address is the kernel's loaded address plus its offset from the
kernel in the object. Only kernels loaded in this process are mapped (the first run loads
them); the numbers after a kernel's name in ``perf report`` are its own time, its callees
inlined into it. Instruction level: ``objdump -d`` the same object and subtract the symbol's
address from a sample's (``perf script -F ip``). Needs ``perf`` and ``nm`` (binutils).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import coflowopt as co
from coflowopt.cli import load_any
from coflowopt.workloads.synthetic import synthetic_trace


def _symbols(obj: bytes) -> list[tuple[int, int, str]]:
    """``(offset, size, mangled name)`` of the functions (text and weak symbols) of an ELF
    object."""
    path = Path(f"/tmp/perf-kernels-{os.getpid()}.o")
    path.write_bytes(obj)
    try:
        out = subprocess.run(["nm", "--defined-only", "-S", str(path)],
                             capture_output=True, text=True, check=True).stdout
    finally:
        path.unlink()
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return syms


def _short(names: list[str]) -> list[str]:
    """The names demangled (one ``c++filt`` call), without ABI tags and argument types."""
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return [n.split("[abi")[0].split("(")[0].replace(" ", "_")[:100] for n in out]


def kernel_map() -> list[tuple[int, int, str]]:
    """``(address, size, name)`` of every function of the kernels loaded in this process."""
    from numba.core.registry import CPUDispatcher

    entries: set[tuple[int, int, str]] = set()
    for mname, mod in list(sys.modules.items()):
        if not mname.startswith("coflowopt") or not getattr(mod, "__file__", None):
            continue
        cache = Path(mod.__file__).parent / "__pycache__"
        for attr, disp in list(vars(mod).items()):
            if not isinstance(disp, CPUDispatcher) or not disp.overloads:
                continue
            mains = {cres.fndesc.llvm_func_name: cres for cres in disp.overloads.values()}
            # one entry per signature, stale ones from older sources beside them: each loaded
            # overload is the entry that defines its symbol
            for path in cache.glob(f"{mname.rsplit('.', 1)[-1]}.{attr}-*.nbc"):
                blob = path.read_bytes()
                start = blob.find(b"\x7fELF")
                syms = _symbols(blob[start:]) if start >= 0 else []
                hits = [(o, n) for o, _, n in syms if n in mains]
                if not hits:
                    continue
                off0, main = hits[0]
                addr = mains.pop(main).library.get_pointer_to_function(main)
                for (off, size, raw), name in zip(syms, _short([n for _, _, n in syms]),
                                                  strict=True):
                    if name.startswith("_ZN"):  # c++filt leaves numba's own names mangled
                        name = f"{mname}.{attr}" + ("" if raw == main else " (wrapper)")
                    entries.add((addr + off - off0, max(size, 1), name))
    return sorted(entries)


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="a trace or instance file (as coflowopt run --trace)")
    ap.add_argument("scheduler", help="a scheduler name (as coflowopt run -s)")
    ap.add_argument("--warm", metavar="FILE",
                    help="the small instance that loads the kernels (default: a synthetic "
                         "trace of 20 coflows; the DAG schedulers need jobs, e.g. coflowopt gen "
                         "fb2010_jobs on it)")
    ap.add_argument("--seed", type=int, default=0,
                    help="the run's seed, as coflowopt run's (default 0: the same schedule, "
                         "and so the same counters, at every run)")
    args = ap.parse_args(argv)
    inst = load_any(args.trace)
    warm = load_any(args.warm) if args.warm else synthetic_trace(20, seed=1, ports=10)
    co.run(warm, args.scheduler)  # loads the kernels
    entries = kernel_map()
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    path.write_text("".join(f"{a:x} {s:x} {n}\n" for a, s, n in entries))
    print(f"{path}: {len(entries)} functions", flush=True)
    t = time.process_time()
    res = co.run(inst, args.scheduler, seed=args.seed)
    print(f"{args.scheduler}: {time.process_time() - t:.2f} s CPU, counters {res.counters}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
