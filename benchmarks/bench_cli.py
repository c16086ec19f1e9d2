"""What a user waits for: the whole ``coflowopt run`` command per scheduler, both semantics.

Each scheduler runs in a fresh process under ``/usr/bin/time -v`` (wall seconds, peak RSS of
the whole process), after one warm-up run of the same command so the numba kernels are cached
(a cold cache compiles for up to a minute; that is reported apart, not counted).  Beside it:
the command's own CPU column (simulation and validation, from its table), the trace load
alone (a fresh process that reads the trace), and the ratio of CoflowSim's CPU time to ours
where a figure is given (``--coflowsim-seconds NAME=S,...``).

    python benchmarks/bench_cli.py [--trace PATH] [--only fluid|coflowsim] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

FLUID = ["varys", "sincronia", "aalo", "a-sebf", "fifo", "scf", "ncf", "lcf", "fair"]
COFLOWSIM = ["sebf", "dark", "fifo", "scf", "ncf", "lcf", "fair", "pfp"]
TIME = "/usr/bin/time"


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall s, peak RSS MB, stdout) of ``cmd`` in a fresh process."""
    out = subprocess.run([TIME, "-v", *cmd], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", out.stderr)
    h, m, sec = wall.groups()
    seconds = (int(h) * 3600 if h else 0) + int(m) * 60 + float(sec)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    return seconds, rss / 1024, out.stdout


def _cpu_column(stdout: str, name: str) -> float:
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == name:
            return float(parts[-1])
    raise ValueError(f"no row for {name} in:\n{stdout}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=None)
    ap.add_argument("--only", choices=("fluid", "coflowsim"), default=None)
    ap.add_argument("--coflowsim-seconds", default="",
                    help="CoflowSim's CPU seconds per scheduler, NAME=S,... (for the ratio)")
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    args = ap.parse_args(argv)
    from coflowopt.workloads import find_fb2010

    trace = args.trace or find_fb2010()
    if trace is None:
        print("FB2010 trace not found (set COFLOWOPT_FB2010 or pass --trace)", file=sys.stderr)
        return 2
    cs_seconds = dict(kv.split("=") for kv in args.coflowsim_seconds.split(",") if kv)
    load_wall, load_rss, _ = timed([sys.executable, "-c", "import coflowopt, sys; "
                                     "coflowopt.workloads.read_trace(sys.argv[1])", str(trace)])
    rows = [f"trace load alone (import + read, fresh process): {load_wall:.2f} s wall, "
            f"{load_rss:.0f} MB", "",
            "| semantics | scheduler | wall s (whole command) | peak RSS MB | cpu s (its table) "
            "| wall / (cpu + load) | CoflowSim s / ours |",
            "|---|---|---|---|---|---|---|"]
    plan = [("fluid", n) for n in FLUID] + [("coflowsim", n) for n in COFLOWSIM]
    for sem, name in plan:
        if args.only and sem != args.only:
            continue
        cmd = [sys.executable, "-m", "coflowopt.cli", "run", "--trace", str(trace), "-s", name,
               "--no-progress",
               "--semantics", sem]
        timed(cmd)  # warm-up: load (or compile) the kernels
        wall, rss, out = timed(cmd)
        cpu = _cpu_column(out, name)
        ratio = wall / (cpu + load_wall)
        cs = cs_seconds.get(name) if sem == "coflowsim" else None
        rows.append(f"| {sem} | {name} | {wall:.2f} | {rss:.0f} | {cpu:.2f} | {ratio:.2f} | "
                    f"{float(cs) / wall:.0f}x |" if cs else
                    f"| {sem} | {name} | {wall:.2f} | {rss:.0f} | {cpu:.2f} | {ratio:.2f} | - |")
        print(rows[-1], flush=True)
    text = "\n".join(rows)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
