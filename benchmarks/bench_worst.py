"""Worst ratios found by the worst-case finder (``coflowopt verify --worst``) for every registered
algorithm with a factor, beside its proven factor and any claimed one.

One row per search, run one after another in this process, each with the same budget
(``--seconds``, a wall cap, and/or ``--evaluations``, the reproducible budget):

- every fluid registry entry whose factor has a constant and bounds a metric the finder computes
  (``factor_metric``), searched in the class its factor is stated for (``factor_assumes``,
  ``factor_params``);
- :data:`EXTRA`: proven factors the registry text does not carry (Approximate's 5 with
  releases: Shafiee and Ghaderi, ToN 2018 [R], against our reconstructed LP [C]; Yosemite's
  realised weighted CCT within 4 x OPT [C], where its registered 2 bounds the relaxed order
  cost of Zhang et al.'s draft);
- :data:`REPORTED`: entries with no factor at all (IAOA), whose worst ratio is reported;
- :data:`CLAIMS`: claimed, unproven factors of registered entries, as findings (Chen, arXiv
  2311.11296: 3 with releases and 2 + 1/LB without, for ordering flows by the LP; Rohwedder and
  Schnaars, ICALP 2025: 140/41 without releases and 4.36 with them, for the paper's own
  algorithm, of which ``iterated-rounding`` is our reconstruction).  A row whose entry is not
  registered in this tree is listed as such, so the table picks new algorithms up by name.

Entries whose factor is ``O(.)`` (no constant) or bounds no metric are listed, not searched
(``--include-no-constant`` searches them too, reporting the ratio with nothing to break).

    python benchmarks/bench_worst.py [--seconds 300] [--evaluations N] [--seed 0]
        [--only NAME ...] [--json benchmarks/results/worst.json] [--md PATH]
        [--out-dir benchmarks/results/worst]

The JSON (rows, the command, the machine load) is what ``notebooks/09-worst-case.ipynb``
plots.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from coflowopt.proofs_check.worst import (
    METRICS,
    find_worst,
    parse_factor,
    summary_dict,
    write_worst,
)
from coflowopt.schedulers import registry

#: proven factors the registry's text does not carry: (name, factor, assumes, note)
EXTRA: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("approximate", "5", (), "with releases (ToN 2018 [R], LP ours [C])"),
    # its registered 2 bounds the relaxed order cost, not a schedule's metric
    ("yosemite", "4", ("release 0",), "realised weighted CCT [C]"),
)
#: entries without a factor whose worst ratio is worth a row: (name, note)
REPORTED: tuple[tuple[str, str], ...] = (
    ("iaoa", "none (online, information-agnostic: no constant factor exists)"),
)
#: claimed, unproven factors: (name, claim, assumes, who)
CLAIMS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("lp-flow-order", "3", (), "Chen, arXiv 2311.11296 (contested)"),
    ("lp-flow-order", "2 + 1/LB", ("release 0",), "Chen, arXiv 2311.11296 (contested)"),
    ("iterated-rounding", "140/41", ("release 0",), "Rohwedder-Schnaars, ICALP 2025 (paper)"),
    ("iterated-rounding", "4.36", (), "Rohwedder-Schnaars, ICALP 2025 (paper)"),
)


def plan(include_no_constant: bool = False, only: list[str] | None = None
         ) -> list[dict[str, Any]]:
    """The rows to run: ``{"name", "factor_text", "claim_text", "assumes", "note", "skip"}``
    (``factor_text``: replaces the registry's factor; ``skip``: why the row is not searched)."""
    reg = registry()
    rows: list[dict[str, Any]] = []
    for name, info in reg.items():
        if info.factor is None:
            continue
        f = parse_factor(info.factor, "proven", info.factor_source)
        skip = None
        if info.factor_metric not in METRICS:
            skip = "no factor_metric: its factor is about " + info.objective
        elif f is not None and f.expr is None and not include_no_constant:
            skip = "no constant (O(.) only): nothing to break"
        rows.append({"name": name, "factor_text": None, "claim_text": None, "assumes": (),
                     "note": info.factor_label, "skip": skip})
    for name, factor, assumes, note in EXTRA:
        rows.append({"name": name, "factor_text": factor, "claim_text": None, "assumes": assumes,
                     "note": note, "skip": None if name in reg else "not registered in this "
                     "tree"})
    for name, note in REPORTED:
        rows.append({"name": name, "factor_text": None, "claim_text": None, "assumes": (),
                     "note": note, "skip": None if name in reg else "not registered in this "
                     "tree"})
    for name, claim, assumes, note in CLAIMS:
        rows.append({"name": name, "factor_text": None, "claim_text": claim, "assumes": assumes,
                     "note": note, "skip": None if name in reg else "not registered in this "
                     "tree"})
    # an entry whose registered factor is not searchable but has an extra factor is listed once
    searched = {r["name"] for r in rows if r["skip"] is None}
    rows = [r for r in rows if r["skip"] is None or r["name"] not in searched]
    if only:
        rows = [r for r in rows if r["name"] in only]
    return rows


def run_row(row: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    out = dict(row, assumes=list(row["assumes"]))
    if row["skip"]:
        return out
    t0 = time.perf_counter()
    res = find_worst(row["name"], evaluations=args.evaluations, seconds=args.seconds,
                     seed=args.seed, factor=row["factor_text"], claim=row["claim_text"],
                     assumes=tuple(row["assumes"]))
    out.update(summary_dict(res))
    out["wall"] = time.perf_counter() - t0
    if args.out_dir and res.worst is not None:
        tag = row["name"] + (f"-claim-{row['claim_text']}" if row["claim_text"] else "") + (
            f"-factor-{row['factor_text']}" if row["factor_text"] else "")
        safe = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in tag)
        Path(args.out_dir).mkdir(parents=True, exist_ok=True)
        out["files"] = write_worst(res, Path(args.out_dir) / f"{safe}.json")
    return out


def _cell(x: Any, fmt: str = ".4f") -> str:
    return "-" if x is None else format(x, fmt) if isinstance(x, float) else str(x)


def markdown(rows: list[dict[str, Any]], command: str, load: str) -> str:
    lines = [
        "## Worst ratios found by the worst-case finder",
        "",
        f"`{command}` (one search per row, one after another; machine load: {load}).",
        "Ratio: ALG / OPT on the worst instance found; *exact* against the fluid optimum, "
        "*lower estimate* against OPT_slot (a feasible schedule, so >= OPT: the true ratio "
        "is at least this). A ratio above a proven factor would be a defect; above a claim, "
        "a finding.",
        "",
        "| algorithm | class searched | proven factor | claim | worst ratio | against | "
        "verdict | evaluations (distinct) | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    skipped: dict[str, list[str]] = {}
    for r in rows:
        if r["skip"]:
            what = r["name"] + (f" (claim {r['claim_text']})" if r["claim_text"] else "")
            skipped.setdefault(r["skip"], []).append(what)
            continue
        f = r.get("factor") if isinstance(r.get("factor"), dict) else None
        short = f and (f"{f['expr']} / {f['with_releases']}" if f["with_releases"] else f["text"])
        proven = (f"{short} [{f['source']}]" if f else r["note"] if not r["claim_text"]
                  else "-")
        if r.get("factor_value") is not None and f and short != _cell(r["factor_value"], "g"):
            proven += f" ({r['factor_value']:.4g} here)"
        claim = "-" if not r["claim_text"] else f"{r['claim_text']} ({r['note']})"
        lines.append(
            f"| {r['name']} | {r['class']} | {proven} | {claim} | {_cell(r['ratio'])} | "
            f"{r['estimate']} | {r['verdict']} | {r['evaluations']} ({r['distinct_instances']})"
            f" | {r['seconds']:.0f} |")
    if skipped:
        lines.append("")
        lines += [f"Not searched ({why}): {', '.join(names)}." for why, names in skipped.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0, help="wall cap per row")
    ap.add_argument("--evaluations", type=int, default=None, help="budget per row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", help="only these algorithms")
    ap.add_argument("--include-no-constant", action="store_true")
    ap.add_argument("--json", default="benchmarks/results/worst.json")
    ap.add_argument("--md", default=None, help="also write the markdown table here")
    ap.add_argument("--out-dir", default="benchmarks/results/worst",
                    help="the worst instance of each row (and its schedules)")
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_worst.py " + " ".join(argv if argv is not None
                                                             else sys.argv[1:])
    rows = []
    for row in plan(args.include_no_constant, args.only):
        r = run_row(row, args)
        rows.append(r)
        print(f"{r['name']:<20} {r['claim_text'] or r['factor_text'] or '':<10} "
              + (f"skipped: {r['skip']}" if r["skip"] else
                 f"worst {r['ratio']:.4f} ({r['estimate']}), {r['verdict']}, "
                 f"{r['evaluations']} evaluations in {r['seconds']:.0f}s"), flush=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    doc = {"command": command, "load": load, "rows": rows,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(doc, indent=1, default=str))
    table = markdown(rows, command, load)
    print(table)
    if args.md:
        Path(args.md).write_text(table)
    bad = [r["name"] for r in rows if r.get("verdict") in ("defect", "violation")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
