"""Tables, a Markdown summary and plots from a results folder.

- :func:`tidy`: one row per (task, metric): the value, the instance's lower bound, the
  measured ratio to it, the ratio to the exact optimum (when the suite names one), the proven
  factor and the published reference.
- :func:`summarize`: per workload, scheduler and metric: the mean over seeds and its spread
  (std, min, max), the mean lower bound, the mean and worst measured ratio, next to the
  proven factor and the reference.
- :func:`to_markdown`, :func:`plot_bars`, :func:`plot_cdf`, :func:`plot_ratios`, and
  :func:`write_report`, which writes them all to ``<results>/report/``.

A scheduler's proven ``infeasible`` result (it raised :class:`~coflowopt.NoFeasibleSchedule`:
no schedule meets its own constraints, e.g. CoFair with ``E`` below ``E_MPS``) is counted and
listed as infeasible, apart from the failed tasks.

A note on reading the ratios: the bound is at most the optimum, so ``measured / bound`` is at
least ``measured / optimum``.  It can exceed an algorithm's proven factor without contradicting
the theorem; ``measured / optimum`` cannot.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from coflowopt.bench.store import SUITE_JSON, load_results
from coflowopt.bench.suite import Suite, bound_names, load_suite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "Report",
    "format_table",
    "plot_bars",
    "plot_cdf",
    "plot_ratios",
    "summarize",
    "tidy",
    "to_markdown",
    "write_report",
]

#: Metrics measured in the instance's time unit (the others are counts, ratios or indices).
_TIME_METRICS = ("avg_cct", "sum_cct", "weighted_completion", "weighted_cct", "makespan",
                 "avg_jct", "weighted_jct")


def _factor_value(f: Any) -> float:
    try:
        return float(f)
    except (TypeError, ValueError):
        return math.nan


def _order(values: Sequence[str], preferred: Sequence[str]) -> list[str]:
    seen = [v for v in preferred if v in set(values)]
    return seen + [v for v in dict.fromkeys(values) if v not in seen]


def tidy(results: pd.DataFrame, suite: Suite | None = None,
         metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Long table: one row per task and metric (``metrics`` default: the suite's).

    Columns: workload, scheduler, algorithm, seed, status, metric, unit, value, lower_bound,
    ratio_to_bound, optimum, ratio_to_optimum, factor, objective, proven_infeasible.  Failed
    tasks have ``value`` NaN and their status; ``proven_infeasible``: the scheduler proved that
    no schedule meets its constraints (status ``infeasible``, not a failure).
    """
    metrics = list(metrics or (suite.metrics if suite else ("avg_cct",)))
    cols = ["workload", "scheduler", "algorithm", "seed", "status", "metric", "unit", "value",
            "lower_bound", "ratio_to_bound", "optimum", "ratio_to_optimum", "factor",
            "objective", "proven_infeasible"]
    if results.empty:
        return pd.DataFrame(columns=cols)
    bounds = set(bound_names())
    parts = []
    for m in metrics:
        d = pd.DataFrame({
            "workload": results["workload"].astype(str),
            "scheduler": results["scheduler"].astype(str),
            "algorithm": results["algorithm"].astype(str),
            "seed": results["seed"].astype(int),
            "status": results["status"].astype(str),
            "metric": m,
        })
        ok = (d["status"] == "ok").to_numpy()
        unit = results.get("time_unit", pd.Series([""] * len(results), index=results.index))
        timed = m in _TIME_METRICS or m.startswith(("cct_", "jct_"))
        d["unit"] = [str(u) if (timed and isinstance(u, str)) else ""
                     for u in unit.astype(object).where(unit.notna(), "")]
        val = results[m].astype(float) if m in results else pd.Series(np.nan, results.index)
        d["value"] = np.where(ok, val.to_numpy(), np.nan)
        lb_col = f"lb_{m}"
        if m in bounds and lb_col in results:
            d["lower_bound"] = results[lb_col].astype(float).to_numpy()
        else:
            d["lower_bound"] = np.nan
        with np.errstate(divide="ignore", invalid="ignore"):
            d["ratio_to_bound"] = np.where(d["lower_bound"] > 0, d["value"] / d["lower_bound"],
                                           np.nan)
        d["optimum"] = np.nan
        if suite is not None and suite.optimum is not None:
            opt = d[(d["scheduler"] == suite.optimum) & (d["status"] == "ok")]
            look = dict(zip(zip(opt["workload"], opt["seed"], strict=True), opt["value"],
                            strict=True))
            d["optimum"] = [look.get((w, s), np.nan) for w, s in zip(d["workload"], d["seed"],
                                                                       strict=True)]
        with np.errstate(divide="ignore", invalid="ignore"):
            d["ratio_to_optimum"] = np.where(d["optimum"] > 0, d["value"] / d["optimum"], np.nan)
        factor = results.get("factor", pd.Series("", index=results.index)).astype(object) \
            .where(lambda s: s.notna(), "").astype(str)
        if "factor_metric" in results:
            # shown only beside the metric it bounds, where its assumptions held (rows of
            # older results folders have no factor_metric: shown as before)
            fmetric = results["factor_metric"].astype(object).where(lambda s: s.notna(), "")
            factor = factor.where(fmetric.astype(str) == m, "")
        d["factor"] = factor.to_numpy()
        d["objective"] = results.get("objective", pd.Series("", index=results.index)) \
            .astype(object).where(lambda s: s.notna(), "").astype(str).to_numpy()
        d["proven_infeasible"] = _proven_infeasible(results).to_numpy()
        # a metric no run of a workload reports does not apply to it (weighted_jct on a
        # single-stage workload): no rows for it there, not rows of dashes
        applies = d["value"].notna().groupby(d["workload"]).transform("any").to_numpy()
        parts.append(d.loc[applies | ~ok, cols])
    out = pd.concat(parts, ignore_index=True)
    wl = _order(out["workload"].tolist(), [w.name for w in suite.workloads] if suite else [])
    sc = _order(out["scheduler"].tolist(), [s.label for s in suite.schedulers] if suite else [])
    out["_w"] = out["workload"].map({w: i for i, w in enumerate(wl)})
    out["_s"] = out["scheduler"].map({s: i for i, s in enumerate(sc)})
    out["_m"] = out["metric"].map({m: i for i, m in enumerate(metrics)})
    out = out.sort_values(["_m", "_w", "_s", "seed"], kind="stable")
    return out.drop(columns=["_w", "_s", "_m"]).reset_index(drop=True)


def _proven_infeasible(results: pd.DataFrame) -> pd.Series:
    """Per row: the scheduler proved no schedule meets its constraints (not a failure)."""
    from coflowopt.bench.runner import is_failure

    err = results.get("error", pd.Series("", index=results.index)).astype(object) \
        .where(lambda s: s.notna(), "")
    return pd.Series([str(st) == "infeasible" and not is_failure(st, e)
                      for st, e in zip(results["status"], err, strict=True)],
                     index=results.index, dtype=bool)


def summarize(tidy_df: pd.DataFrame, suite: Suite | None = None) -> pd.DataFrame:
    """Per (metric, workload, scheduler): seeds, failed, infeasible (proven), mean, std, min,
    max, lower_bound, ratio_to_bound (mean), ratio_to_bound_max, ratio_to_optimum (mean),
    factor, objective, reference, ratio_to_reference (mean / reference), reference_source.

    Published references for schedulers that did not run in the suite appear as rows with
    ``seeds`` 0 and no measurement.
    """
    cols = ["metric", "workload", "scheduler", "unit", "seeds", "failed", "infeasible", "mean",
            "std", "min", "max", "lower_bound", "ratio_to_bound", "ratio_to_bound_max",
            "ratio_to_optimum", "factor", "objective", "reference", "ratio_to_reference",
            "reference_source"]
    rows: list[dict[str, Any]] = []
    for (m, w, s), g in tidy_df.groupby(["metric", "workload", "scheduler"], sort=False):
        ok = g[g["status"] == "ok"]
        v = ok["value"].astype(float)
        proven = int(g["proven_infeasible"].astype(bool).sum()) if "proven_infeasible" in g \
            else 0
        rows.append({
            "metric": m, "workload": w, "scheduler": s,
            "unit": next((u for u in g["unit"] if u), ""),
            "seeds": len(ok), "failed": int(len(g) - len(ok) - proven), "infeasible": proven,
            "mean": v.mean() if len(v) else np.nan,
            "std": v.std(ddof=1) if len(v) > 1 else np.nan,
            "min": v.min() if len(v) else np.nan, "max": v.max() if len(v) else np.nan,
            "lower_bound": g["lower_bound"].astype(float).mean(),
            "ratio_to_bound": ok["ratio_to_bound"].astype(float).mean(),
            "ratio_to_bound_max": ok["ratio_to_bound"].astype(float).max(),
            "ratio_to_optimum": ok["ratio_to_optimum"].astype(float).mean(),
            "factor": next((f for f in g["factor"] if f), ""),
            "objective": next((o for o in g["objective"] if o), ""),
            "algorithm": g["algorithm"].iloc[0],
        })
    out = pd.DataFrame(rows, columns=[*cols, "algorithm"])
    out["reference"] = np.nan
    out["reference_source"] = ""
    if suite is not None:
        for r in suite.references:
            sel = (out["metric"] == r.metric) & (out["workload"] == r.workload) & (
                (out["scheduler"] == r.scheduler) | (out["algorithm"] == r.scheduler))
            if sel.any():
                out.loc[sel, "reference"] = r.value
                out.loc[sel, "reference_source"] = r.source
            elif r.metric in set(tidy_df["metric"]):
                unit = out.loc[out["workload"] == r.workload, "unit"]
                out.loc[len(out)] = {
                    "metric": r.metric, "workload": r.workload, "scheduler": r.scheduler,
                    "unit": unit.iloc[0] if len(unit) else "", "seeds": 0, "failed": 0,
                    "infeasible": 0,
                    "mean": np.nan, "std": np.nan, "min": np.nan, "max": np.nan,
                    "lower_bound": np.nan, "ratio_to_bound": np.nan,
                    "ratio_to_bound_max": np.nan, "ratio_to_optimum": np.nan, "factor": "",
                    "objective": "", "reference": r.value, "ratio_to_reference": np.nan,
                    "reference_source": r.source, "algorithm": r.scheduler,
                }
    with np.errstate(divide="ignore", invalid="ignore"):
        out["ratio_to_reference"] = out["mean"] / out["reference"]
    return out[cols].reset_index(drop=True)


# -- text --------------------------------------------------------------------------------------


def _num(x: Any, ratio: bool = False) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(x):
        return "–"
    if ratio:
        return f"{x:.2f}"
    if x != 0 and (abs(x) >= 1e4 or x == int(x)):
        return f"{x:,.0f}"
    return f"{x:,.4g}" if abs(x) < 1 else f"{x:,.2f}"


_SHOW = [("workload", "workload", False), ("scheduler", "scheduler", False),
         ("seeds", "seeds", False), ("mean", "mean", False), ("std", "std", False),
         ("min", "min", False), ("max", "max", False), ("lower_bound", "lower bound", False),
         ("ratio_to_bound", "mean/LB", True), ("ratio_to_bound_max", "max/LB", True),
         ("ratio_to_optimum", "mean/OPT", True), ("factor", "proven factor", False),
         ("reference", "reference", False), ("ratio_to_reference", "mean/ref", True)]


def _columns(block: pd.DataFrame) -> list[tuple[str, str, bool]]:
    keep = []
    for col, title, ratio in _SHOW:
        if col in ("ratio_to_optimum", "reference", "ratio_to_reference", "lower_bound",
                   "ratio_to_bound", "ratio_to_bound_max") and block[col].isna().all():
            continue
        keep.append((col, title, ratio))
    return keep


def _cells(block: pd.DataFrame, cols: list[tuple[str, str, bool]]) -> list[list[str]]:
    out = []
    for _, r in block.iterrows():
        row = []
        for col, _, ratio in cols:
            v = r[col]
            if col == "factor":
                row.append(str(v) if v else "–")
            elif col == "seeds":
                n_inf = int(r.get("infeasible", 0) or 0)
                row.append(f"{int(v)}" + (f" (+{int(r['failed'])} failed)" if r["failed"] else "")
                           + (f" (+{n_inf} infeasible)" if n_inf else ""))
            elif col in ("workload", "scheduler"):
                row.append(str(v))
            else:
                row.append(_num(v, ratio))
        out.append(row)
    return out


def to_markdown(summary: pd.DataFrame, suite: Suite | None = None,
                results: pd.DataFrame | None = None) -> str:
    """The Markdown summary: one table per metric, then the failed tasks."""
    lines = [f"# Benchmark suite `{suite.name}`" if suite else "# Benchmark results", ""]
    if suite is not None and suite.description:
        lines += [suite.description.strip(), ""]
    proven = _proven_infeasible(results) if results is not None and not results.empty \
        else None
    if results is not None and not results.empty:
        n_ok = int((results["status"] == "ok").sum())
        n_inf = int(proven.sum())
        lines += [f"{len(results)} tasks: {n_ok} ok, {len(results) - n_ok - n_inf} failed"
                  + (f", {n_inf} infeasible (the scheduler proved no schedule meets its "
                     "constraints)" if n_inf else "") + ".", ""]
    lines += [
        "mean, std, min, max: over seeds. LB: the instance's best certified lower bound "
        "(`coflowopt.bounds.lower_bounds`" + (
            "; the certified interval-LP bound included, solved by PDLP" if results is not None
            and "lb_lp" in results and results["lb_lp"].fillna(False).astype(bool).any()
            else "; combinatorial only: set COFLOWOPT_LP_BOUND=<seconds> to add the certified "
            "interval-LP bound") + "); mean/LB and max/LB: measured / LB per seed. Since "
        "LB <= OPT, measured/LB over-estimates measured/OPT, so it may exceed a proven factor "
        "without contradicting it. Proven factor: from the scheduler registry, for the "
        "objective it names.", ""]
    for m, block in summary.groupby("metric", sort=False):
        unit = next((u for u in block["unit"] if u), "")
        lines += [f"## {m}" + (f" ({unit})" if unit else ""), ""]
        cols = _columns(block)
        lines.append("| " + " | ".join(t for _, t, _ in cols) + " |")
        lines.append("|" + "|".join("---" for _ in cols) + "|")
        lines += ["| " + " | ".join(c) + " |" for c in _cells(block, cols)]
        src = sorted({s for s in block["reference_source"] if s})
        if src:
            lines += ["", "References: " + "; ".join(src) + "."]
        lines.append("")
    if results is not None and not results.empty:
        inf = results[proven]
        if len(inf):
            lines += ["## Infeasible (proven by the scheduler)", "",
                      "| workload | scheduler | seed | why |", "|---|---|---|---|"]
            for _, r in inf.iterrows():
                why = str(r.get("error", "")).removeprefix("NoFeasibleSchedule: ")
                why = why.replace("|", "\\|")
                lines.append(f"| {r['workload']} | {r['scheduler']} | {int(r['seed'])} | "
                             f"{why} |")
            lines.append("")
        bad = results[(results["status"] != "ok") & ~proven]
        if len(bad):
            lines += ["## Failed tasks", "", "| workload | scheduler | seed | status | error |",
                      "|---|---|---|---|---|"]
            for _, r in bad.iterrows():
                err = str(r.get("error", "")).replace("|", "\\|")
                err = err if len(err) <= 160 else err[:157] + "..."
                lines.append(f"| {r['workload']} | {r['scheduler']} | {int(r['seed'])} | "
                             f"{r['status']} | {err} |")
            lines.append("")
    return "\n".join(lines)


def format_table(summary: pd.DataFrame) -> str:
    """A plain-text table of the summary (what ``coflowopt bench`` prints)."""
    cols = [("metric", "metric", False), *[c for c in _SHOW if c[0] not in ("min", "max")]]
    cols = [c for c in cols if c[0] in ("metric", "workload", "scheduler") or
            not (c[0] in summary and summary[c[0]].isna().all())]
    body = []
    for _, r in summary.iterrows():
        cells = _cells(pd.DataFrame([r]), [c for c in cols if c[0] != "metric"])[0]
        unit = r.get("unit", "")
        label = f"{r['metric']} ({unit})" if isinstance(unit, str) and unit else str(r["metric"])
        body.append([label, *cells])
    head = [t for _, t, _ in cols]
    widths = [max(len(head[i]), *(len(b[i]) for b in body)) if body else len(head[i])
              for i in range(len(head))]

    def fmt(i: int, s: str) -> str:
        return s.ljust(widths[i]) if i < 3 else s.rjust(widths[i])

    lines = ["  ".join(fmt(i, h) for i, h in enumerate(head))]
    lines += ["  ".join(fmt(i, c) for i, c in enumerate(b)) for b in body]
    return "\n".join(lines)


# -- plots -------------------------------------------------------------------------------------


def _figure(n: int, width: float = 5.0, height: float = 3.6) -> tuple[Figure, list[Any]]:
    from matplotlib.figure import Figure

    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _figure_legend(fig: Figure, axes: Sequence[Any]) -> None:
    """One legend for the whole figure, outside the panels (to their right), so that it
    covers no bar or point; each label once (every panel colours a label alike)."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="outside right upper", fontsize="small")


def _slanted_ticks(ax: Any, labels: Sequence[str]) -> None:
    """Tick labels slanted and anchored at their tick, so that long scheduler names in a
    narrow panel do not run into each other."""
    ax.set_xticks(np.arange(len(labels)), labels, rotation=40, ha="right",
                  rotation_mode="anchor")


def _palette(names: Sequence[str]) -> dict[str, Any]:
    """One colour per scheduler label, by sorted label, so every plot of a report colours a
    scheduler alike."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(set(names)) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(sorted(set(names)))}


def plot_bars(summary: pd.DataFrame, metrics: Sequence[str] | None = None) -> Figure:
    """Bars of the mean per workload and scheduler, whiskers from min to max over seeds, and
    the lower bound as a black tick; one panel per metric."""
    summary = summary[summary["seeds"] > 0]
    metrics = list(metrics or dict.fromkeys(summary["metric"]))
    colour = _palette(summary["scheduler"].astype(str).tolist())
    fig, axes = _figure(max(1, len(metrics)))
    for ax, m in zip(axes, metrics, strict=False):
        b = summary[summary["metric"] == m]
        wl = list(dict.fromkeys(b["workload"]))
        sc = list(dict.fromkeys(b["scheduler"]))
        width = 0.8 / max(1, len(sc))
        for j, s in enumerate(sc):
            sb = b[b["scheduler"] == s].set_index("workload").reindex(wl)
            x = np.arange(len(wl)) + (j - (len(sc) - 1) / 2) * width
            mean = sb["mean"].to_numpy(float)
            err = np.vstack([mean - sb["min"].to_numpy(float), sb["max"].to_numpy(float) - mean])
            ax.bar(x, mean, width, yerr=np.nan_to_num(err), capsize=3, label=s,
                   color=colour[str(s)])
        for i, w in enumerate(wl):
            lb = b.loc[b["workload"] == w, "lower_bound"].mean()
            if np.isfinite(lb):
                ax.hlines(lb, i - 0.45, i + 0.45, colors="black", linewidth=2,
                          label="lower bound" if i == 0 else None)
        vals = b["max"].to_numpy(float)
        vals = vals[np.isfinite(vals) & (vals > 0)]
        # a log axis as soon as one bar would flatten the others (a baseline 10x the rest)
        if vals.size and vals.max() / max(vals.min(), 1e-300) > 10:
            ax.set_yscale("log")
        units = [next((u for u in b.loc[b["workload"] == w, "unit"] if u), "") for w in wl]
        if len(set(units)) > 1:
            ax.set_xticks(np.arange(len(wl)), [f"{w}\n({u})" if u else w
                                               for w, u in zip(wl, units, strict=True)])
            ax.set_title(m)
        else:
            ax.set_xticks(np.arange(len(wl)), wl)
            ax.set_title(m + (f" ({units[0]})" if units and units[0] else ""))
        ax.set_ylabel("mean over seeds (whiskers: min to max)")
    _figure_legend(fig, axes)
    return fig


def plot_cdf(folder: str | os.PathLike[str], results: pd.DataFrame | None = None,
             quantity: str = "cct") -> Figure:
    """CDF of per-coflow ``quantity`` (``cct`` or ``slowdown``) per scheduler, pooled over
    seeds; one panel per workload.  Reads ``coflows/<key>.npz`` of the results folder."""
    folder = Path(folder)
    results = load_results(folder) if results is None else results
    ok = results[results["status"] == "ok"]
    colour = _palette(ok["scheduler"].astype(str).tolist())
    wl = list(dict.fromkeys(ok["workload"])) or ["(no results)"]
    fig, axes = _figure(len(wl))
    for ax, w in zip(axes, wl, strict=True):
        sub = ok[ok["workload"] == w]
        for s in dict.fromkeys(sub["scheduler"]):
            xs = []
            for key in sub.loc[sub["scheduler"] == s, "key"]:
                p = folder / "coflows" / f"{key}.npz"
                if p.exists():
                    with np.load(p) as z:
                        xs.append(z[quantity])
            if not xs:
                continue
            x = np.sort(np.concatenate(xs))
            y = np.arange(1, x.size + 1) / x.size
            ax.step(x, y, where="post", label=s, color=colour[str(s)])
            if (x > 0).all():
                ax.set_xscale("log")
        unit = next((u for u in sub.get("time_unit", []) if isinstance(u, str)), "")
        ax.set_xlabel(quantity + (f" ({unit})" if quantity == "cct" and unit else ""))
        ax.set_ylabel("fraction of coflows")
        ax.set_title(w)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    return fig


def plot_ratios(tidy_df: pd.DataFrame) -> Figure:
    """Measured / lower bound per seed (dots, one colour per workload) for each scheduler,
    with its proven factor as a red bar; one panel per metric that has a bound."""
    d = tidy_df[np.isfinite(tidy_df["ratio_to_bound"].astype(float))]
    metrics = list(dict.fromkeys(d["metric"])) or ["(no bounds)"]
    # a workload keeps its colour in every panel (the figure has one legend)
    colour = _palette(d["workload"].astype(str).tolist())
    fig, axes = _figure(len(metrics))
    for ax, m in zip(axes, metrics, strict=True):
        b = d[d["metric"] == m]
        sc = list(dict.fromkeys(b["scheduler"]))
        wl = list(dict.fromkeys(b["workload"]))
        for k, w in enumerate(wl):
            bw = b[b["workload"] == w]
            x = bw["scheduler"].map({s: i for i, s in enumerate(sc)}).to_numpy(float)
            x = x + (k - (len(wl) - 1) / 2) * 0.8 / max(1, len(wl))
            ax.plot(x, bw["ratio_to_bound"], "o", alpha=0.7, label=w, color=colour[str(w)])
        labelled = False
        for i, s in enumerate(sc):
            f = _factor_value(b.loc[b["scheduler"] == s, "factor"].iloc[0])
            if np.isfinite(f):
                ax.hlines(f, i - 0.4, i + 0.4, colors="red", linewidth=2,
                          label=None if labelled else "proven factor")
                labelled = True
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        vals = b["ratio_to_bound"].to_numpy(float)
        if vals.size and vals.max() > 20:
            ax.set_yscale("log")
        _slanted_ticks(ax, sc)
        ax.set_ylabel("measured / lower bound")
        ax.set_title(m)
    _figure_legend(fig, axes)
    return fig


# -- everything at once ------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """What :func:`write_report` wrote, and the tables it wrote them from."""

    folder: Path
    results: pd.DataFrame
    tidy: pd.DataFrame
    summary: pd.DataFrame
    markdown: str
    files: tuple[Path, ...] = field(default=())
    #: files that could not be written, one ``"PATH: reason"`` each (a full disk, a read-only
    #: folder); the tables above are complete all the same
    failed: tuple[str, ...] = field(default=())


def write_report(folder: str | os.PathLike[str], suite: Suite | None = None, *,
                 plots: bool = True) -> Report:
    """Rebuild the tables, the Markdown summary and the plots of a results folder into
    ``<folder>/report/``.  The suite defaults to the ``suite.json`` saved in the folder; rows
    of tasks no longer in it are left out."""
    from coflowopt.bench.tasks import expand

    folder = Path(folder)
    if suite is None and (folder / SUITE_JSON).exists():
        suite = load_suite(folder / SUITE_JSON, check=False)
    results = load_results(folder)
    if suite is not None and not results.empty:
        keys = {t.key for t in expand(suite)}
        results = results[results["key"].isin(keys)].reset_index(drop=True)
    td = tidy(results, suite)
    sm = summarize(td, suite)
    md = to_markdown(sm, suite, results)
    out = folder / "report"
    files: list[Path] = []
    failed: list[str] = []

    def attempt(path: Path, write: Any) -> None:
        # an OS error on one file (a full disk) is reported, and the other files still tried
        try:
            write(path)
        except OSError as exc:
            failed.append(f"{path}: {exc.strerror or exc}")
        else:
            files.append(path)

    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        return Report(folder, results, td, sm, md, (), (f"{out}: {exc.strerror or exc}",))
    attempt(out / "summary.md", lambda p: p.write_text(md))
    attempt(out / "summary.csv", lambda p: sm.to_csv(p, index=False))
    attempt(out / "tidy.csv", lambda p: td.to_csv(p, index=False))
    if plots and not results.empty:
        for name, fig in (("bars.png", plot_bars(sm)), ("cdf_cct.png", plot_cdf(folder, results)),
                          ("ratios.png", plot_ratios(td))):
            attempt(out / name, lambda p, fig=fig: fig.savefig(p, dpi=110))
    return Report(folder, results, td, sm, md, tuple(files), tuple(failed))
