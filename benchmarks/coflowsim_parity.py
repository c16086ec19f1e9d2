"""CoflowSim parity on FB2010: coflowsim-semantics runs against CoflowSim's own output, the
exact fluid simulator next to them, and which semantic rule moves the average CCT.

    python benchmarks/coflowsim_parity.py [--reference-dir DIR] [--skip-fluid] [--out DIR]

Reference per-coflow output: ``shared/data/fb2010/coflowsim/{sebf,dark}.csv`` (shipped with
the workspace) and, for the other schedulers, ``DIR/<NAME>.txt`` files in CoflowSim's own
print format (``JOB-<id> <start> <finish> ...``, one line per coflow, as
``java coflowsim.CoflowSim <NAME> ...`` prints them) if ``--reference-dir`` is given.

Writes ``results/coflowsim/parity.md`` (quoted in BENCHMARKS.md) and ``parity.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np

from coflowopt import metrics, validate
from coflowopt.schedulers import get
from coflowopt.sim.coflowsim import CoflowSimParams, coflowsim, coflowsim_instance
from coflowopt.workloads import find_fb2010, read_trace

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "fb2010" / "coflowsim"
SCHEDULERS = ("sebf", "dark", "fifo", "scf", "ncf", "lcf", "fair", "pfp")
# the toolkit's fluid scheduler closest to each CoflowSim scheduler, and how they differ
FLUID = {
    "sebf": ("varys", "remaining-volume SEBF, backfill in SEBF order"),
    "dark": ("aalo", "flows of a coflow served in order, not split equally"),
    "fifo": ("fifo", "greedy allocation instead of MADD"),
    "scf": ("lcf", "our `lcf`: smallest largest flow first, greedy allocation"),
    "ncf": ("ncf", "width = number of flows (CoflowSim: min(M, R)), greedy"),
    "lcf": ("scf", "our `scf`: smallest total size first, greedy allocation"),
    "fair": ("fair", "per-flow max-min fair, recomputed at every event"),
}
OFF = {  # rules turned off one at a time in coflowsim mode
    "8 ms quanta (1 ms instead)": {"quantum_ms": 1},
    "10,240 ms epochs (8 ms instead)": {"epoch_ms": 8},
    "volume rounding": {"round_volumes": False},
    "pseudo-deadline backfill (admission order instead)": {"pseudo_deadlines": False},
    "static keys (re-sorted on bytes left)": {"static_keys": False},
}


def _load_reference(name: str, ref_dir: Path | None) -> dict[int, float] | None:
    f = SHARED / f"{name}.csv"
    if f.exists():
        with open(f) as fh:
            return {int(r["coflow"]): float(r["cct_ms"]) for r in csv.DictReader(fh)}
    if ref_dir is not None:
        f = ref_dir / f"{name.upper()}.txt"
        if not f.exists():
            f = ref_dir / f"{name}.txt"
        if f.exists():
            out = {}
            for line in f.read_text().splitlines():
                p = line.split()
                if len(p) >= 3 and p[0].startswith("JOB-"):
                    out[int(p[0][4:])] = float(p[2]) - float(p[1])
            return out
    return None


def _avg_valid(res) -> tuple[float, float]:
    t0 = time.process_time()
    valid = validate(res.instance, res.schedule, res.tolerance)
    cct = metrics.cct(valid)
    assert np.allclose(cct, res.cct, atol=1e-6), "validated CCTs differ from the kernel's"
    return float(cct.mean()), time.process_time() - t0


def _fluid(inst, name: str, **kw) -> tuple[float, float]:
    t0 = time.process_time()
    sched = get(name)(inst, **kw)
    cpu = time.process_time() - t0
    valid = validate(inst, sched)
    return float(metrics.cct(valid).mean()), cpu


def _epoch_release(inst, epoch: int = 10240):
    """The instance with each release moved to its CoflowSim admission epoch."""
    rel = np.asarray(inst.coflow_release, dtype=float)
    adm = np.maximum(np.ceil(rel / epoch) - 1, 0) * epoch
    return inst.__class__.from_arrays(
        inst.fabric, inst.flow_src, inst.flow_dst, inst.flow_volume, inst.flow_coflow,
        coflow_id=inst.coflow_id, coflow_release=adm, n_coflows=inst.n_coflows,
        time_unit=inst.time_unit)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference-dir", type=Path, help="CoflowSim outputs <NAME>.txt")
    ap.add_argument("--skip-fluid", action="store_true",
                    help="no exact-fluid runs: reuse those of the last parity.json in --out")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "coflowsim")
    args = ap.parse_args()
    path = find_fb2010()
    if path is None:
        raise SystemExit("FB2010 trace not found (set COFLOWOPT_FB2010)")
    inst = read_trace(path)
    ids = [int(i) for i in inst.coflow_id]
    old: dict = {}
    if args.skip_fluid and (args.out / "parity.json").exists():
        old = json.loads((args.out / "parity.json").read_text())
    rows, data = [], {}
    for name in SCHEDULERS:
        res = coflowsim(inst, name)
        avg, vcpu = _avg_valid(res)
        ref = _load_reference(name, args.reference_dir)
        if ref is not None:
            same = float(np.mean([res.cct[k] == ref[c] for k, c in enumerate(ids)]))
            ref_avg = float(np.mean([ref[c] for c in ids]))
        else:
            same = ref_avg = float("nan")
        fl = fl_cpu = float("nan")
        if name in FLUID and not args.skip_fluid:
            fl, fl_cpu = _fluid(inst, FLUID[name][0])
        elif name in old.get("runs", {}):
            fl, fl_cpu = old["runs"][name]["fluid"], old["runs"][name]["fluid_cpu"]
        data[name] = {"coflowsim_avg": avg, "reference_avg": ref_avg, "match": same,
                      "cpu": res.runtime, "validate_cpu": vcpu, "fluid": fl,
                      "fluid_cpu": fl_cpu, "segments": int(res.schedule.flow.size)}
        rows.append(name)
        print(name, data[name], flush=True)
    ablation = {}
    for name in ("sebf", "dark"):
        base = data[name]["coflowsim_avg"]
        for rule, kw in OFF.items():
            if name == "dark" and set(kw) & {"pseudo_deadlines", "static_keys"}:
                continue
            res = coflowsim(inst, name, params=CoflowSimParams(**kw))
            ablation[(name, "off", rule)] = (res.average_cct, res.average_cct - base)
            print(name, "off", rule, res.average_cct, flush=True)
        if args.skip_fluid:
            for row in old.get("ablation", []):
                if row[0] == name and row[1] == "on":
                    ablation[(name, "on", row[2])] = (row[3], row[4])
        else:
            fname = FLUID[name][0]
            f0 = data[name]["fluid"]
            on = {"10,240 ms epochs": (_epoch_release(inst), {}),
                  "volume rounding": (coflowsim_instance(inst), {})}
            if name == "sebf":
                on["rates only at coflow events"] = (inst, {"refill": False})
            for rule, (ii, kw) in on.items():
                avg, _ = _fluid(ii, fname, **kw)
                ablation[(name, "on", rule)] = (avg, avg - f0)
                print(name, "on", rule, avg, flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = ["| CoflowSim scheduler | coflowsim mode (ms) | CoflowSim (ms) | same CCT | "
             "exact fluid (ms) | fluid - coflowsim | fluid counterpart | mode CPU s |",
             "|---|---|---|---|---|---|---|---|"]
    for name in rows:
        d = data[name]
        fl = d["fluid"]
        cp = f"`{FLUID[name][0]}` ({FLUID[name][1]})" if name in FLUID else "none"
        lines.append(
            f"| {name.upper()} | {d['coflowsim_avg']:,.1f} | "
            + ("—" if np.isnan(d["reference_avg"]) else f"{d['reference_avg']:,.1f}")
            + " | " + ("—" if np.isnan(d["match"]) else f"{100 * d['match']:.2f} %")
            + " | " + ("—" if np.isnan(fl) else f"{fl:,.1f}")
            + " | " + ("—" if np.isnan(fl) else f"{fl - d['coflowsim_avg']:+,.1f} "
                       f"({100 * (fl - d['coflowsim_avg']) / d['coflowsim_avg']:+.1f} %)")
            + f" | {cp} | {d['cpu']:.1f} |")
    lines += ["", "| scheduler | rule | direction | average CCT (ms) | change (ms) |",
              "|---|---|---|---|---|"]
    for (name, way, rule), (avg, delta) in ablation.items():
        frm = "coflowsim mode, rule off" if way == "off" else "exact fluid, rule on"
        lines.append(f"| {name.upper()} | {rule} | {frm} | {avg:,.1f} | {delta:+,.1f} |")
    text = "\n".join(lines) + "\n"
    (args.out / "parity.md").write_text(text)
    (args.out / "parity.json").write_text(json.dumps(
        {"runs": data, "ablation": [[*k, *v] for k, v in ablation.items()]}, indent=1))
    print(text)


if __name__ == "__main__":
    main()
