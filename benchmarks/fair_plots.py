"""Plots and tables of the fair family's trade-off suite (``benchmarks/fair_tradeoff.toml`` or
its reduced form ``fair_tradeoff_quick.toml``) from a results folder of ``coflowopt bench``.

For every workload of the folder:

- ``tradeoff_<workload>.png``, left: every scheduler's average CCT normalised to Sincronia's
  (mean over seeds of the per-seed ratio) against its max slowdown (mean over seeds); CoFair's
  labels ``cofair-<s>`` / ``cofair-online-<s>`` (``s``: the slowdown factor over ``E_MPS``,
  or ``inf``) are joined into one curve per mode, in increasing ``E``.  Right: the slowdown
  CDF of each scheduler (all coflows of all seeds pooled, from ``coflows/<key>.npz``), log x.
- a Markdown table (stdout, and ``fair_tables.md`` in the folder): average and p99 CCT
  normalised to Sincronia, average / p95 / max slowdown (means over seeds), seeds, and the
  mean wall seconds of a task.

The PNGs go to the results folder (not to the repository)::

    python benchmarks/fair_plots.py /tmp/fair_tradeoff_quick [--no-png]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt.bench.store import load_results

CCT = ("avg_cct", "cct_p99")
SLOW = ("avg_slowdown", "slowdown_p95", "max_slowdown")


def _factor(label: str) -> tuple[str, float] | None:
    """``("offline" | "online", factor)`` of a CoFair label, else ``None``."""
    if not label.startswith("cofair"):
        return None
    rest = label[len("cofair"):].lstrip("-")
    mode = "offline"
    if rest.startswith("online"):
        mode, rest = "online", rest[len("online"):].lstrip("-")
    if not rest:
        return mode, 1.0
    try:
        return mode, float(rest)
    except ValueError:
        return None


def _label_column(df: Any) -> str:
    return "label" if "label" in df.columns else "scheduler"


def summarise(df: Any) -> dict[str, list[dict[str, Any]]]:
    """Per workload, one row per scheduler label: the metrics of the module docstring."""
    lab = _label_column(df)
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    out: dict[str, list[dict[str, Any]]] = {}
    for wl, g in ok.groupby("workload", sort=True):
        ref = g[g[lab] == "sincronia"].set_index("seed")
        rows = []
        for name, h in g.groupby(lab, sort=False):
            h = h.set_index("seed")
            row: dict[str, Any] = {"scheduler": name, "seeds": len(h)}
            for m in CCT:
                common = h.index.intersection(ref.index)
                row[m + "_norm"] = (float((h.loc[common, m] / ref.loc[common, m]).mean())
                                    if len(common) and m in h else math.nan)
                row[m] = float(h[m].mean()) if m in h else math.nan
            for m in SLOW:
                row[m] = float(h[m].mean()) if m in h else math.nan
            wall = next((c for c in ("task_seconds", "algo_seconds", "wall_s") if c in h), None)
            row["wall_s"] = float(h[wall].mean()) if wall else math.nan
            row["keys"] = list(h["key"]) if "key" in h else []
            rows.append(row)
        rows.sort(key=lambda r: (_factor(r["scheduler"]) is not None,
                                 r["scheduler"] != "sincronia",
                                 (_factor(r["scheduler"]) or ("", 0))[0],
                                 (_factor(r["scheduler"]) or ("", 0.0))[1], r["scheduler"]))
        out[str(wl)] = rows
    return out


def markdown(tables: dict[str, list[dict[str, Any]]]) -> str:
    lines = []
    for wl, rows in tables.items():
        lines += [f"**{wl}**", "",
                  "| scheduler | seeds | avg CCT / Sincronia | p99 CCT / Sincronia | avg CCT | "
                  "avg slowdown | p95 slowdown | max slowdown | task s |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {r['scheduler']} | {r['seeds']} | {r['avg_cct_norm']:.3f} | "
                f"{r['cct_p99_norm']:.3f} | {r['avg_cct']:,.1f} | {r['avg_slowdown']:.2f} | "
                f"{r['slowdown_p95']:.2f} | {r['max_slowdown']:.2f} | {r['wall_s']:.1f} |")
        lines.append("")
    return "\n".join(lines)


def _slowdowns(folder: Path, keys: list[str]) -> np.ndarray:
    parts = []
    for k in keys:
        f = folder / "coflows" / f"{k}.npz"
        if f.exists():
            with np.load(f) as z:
                if "slowdown" in z:
                    parts.append(np.asarray(z["slowdown"], dtype=float))
    return np.concatenate(parts) if parts else np.zeros(0)


def plot(folder: Path, tables: dict[str, list[dict[str, Any]]]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def tradeoff(ax: Any, rows: list[dict[str, Any]], wl: str, zoom: float | None) -> None:
        """The trade-off panel; ``zoom``: only points within that factor of Sincronia's
        average CCT (fair sharing and Approximate sit far off and squash the rest)."""
        keep = [r for r in rows if zoom is None or r["avg_cct_norm"] <= zoom]
        curves: dict[str, list[tuple[float, float, float]]] = {}
        for r in keep:
            f = _factor(r["scheduler"])
            if f is not None:
                curves.setdefault(f[0], []).append((f[1], r["max_slowdown"], r["avg_cct_norm"]))
                continue
            ax.scatter(r["max_slowdown"], r["avg_cct_norm"], s=40, zorder=3)
            ax.annotate(r["scheduler"], (r["max_slowdown"], r["avg_cct_norm"]),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
        for mode, pts in curves.items():
            pts.sort()
            xs, ys = [p[1] for p in pts], [p[2] for p in pts]
            ax.plot(xs, ys, "o-" if mode == "offline" else "s--", label=f"CoFair {mode}")
            for sv, x, y in pts:
                ax.annotate("inf" if math.isinf(sv) else f"{sv:g}", (x, y),
                            textcoords="offset points", xytext=(3, -10), fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("max slowdown (mean over seeds)")
        ax.set_ylabel("average CCT / Sincronia's")
        ax.set_title(f"{wl}: trade-off (CoFair: E / E_MPS)" if zoom is None
                     else f"zoom: avg CCT <= {zoom:g} x Sincronia's")
        ax.grid(True, which="both", alpha=0.3)
        if curves:
            ax.legend(fontsize=8)

    written = []
    for wl, rows in tables.items():
        fig, (ax, zx, bx) = plt.subplots(1, 3, figsize=(19, 5))
        tradeoff(ax, rows, wl, None)
        tradeoff(zx, rows, wl, 1.15)
        for r in rows:
            f = _factor(r["scheduler"])
            if f is not None and f[1] not in (1.0, math.inf):
                continue  # CDFs of CoFair at E_MPS and inf only: the curve's two ends
            s = np.sort(_slowdowns(folder, r["keys"]))
            if s.size:
                bx.step(s, np.arange(1, s.size + 1) / s.size, where="post",
                        label=r["scheduler"])
        bx.set_xscale("log")
        bx.set_xlabel("slowdown (CCT / isolation time)")
        bx.set_ylabel("fraction of coflows")
        bx.set_title(f"{wl}: slowdown CDF (all seeds pooled)")
        bx.grid(True, which="both", alpha=0.3)
        bx.legend(fontsize=7)
        fig.tight_layout()
        out = folder / f"tradeoff_{wl}.png"
        fig.savefig(out, dpi=110)
        plt.close(fig)
        written.append(out)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="results folder of coflowopt bench")
    ap.add_argument("--no-png", action="store_true", help="tables only")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    df = load_results(folder)
    if df.empty:
        print(f"{folder}: no results yet", file=sys.stderr)
        return 1
    tables = summarise(df)
    text = markdown(tables)
    (folder / "fair_tables.md").write_text(text)
    print(text)
    if not args.no_png:
        for p in plot(folder, tables):
            print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
