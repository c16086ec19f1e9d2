"""Fit the FB-like synthetic generator to the FB2010 trace and compare real vs synthetic.

Usage::

    python benchmarks/fit_fb2010.py [TRACE] [--seeds 5] [--md benchmarks/fit_fb2010.md]

``TRACE`` defaults to :func:`coflowopt.workloads.find_fb2010`.  Prints the fitted constants as
Python source (paste them between the "fitted constants" markers of
``coflowopt/workloads/synthetic.py``), says whether they equal the embedded defaults, and prints
a table of :func:`~coflowopt.workloads.synthetic.trace_statistics` for the real trace and for
synthetic traces of the same number of coflows (mean and standard deviation over the seeds).
Only summary statistics are printed or written, never trace lines.

Fitting (see the module docstring of ``synthetic.py`` for the model):

* classes by ``M == 1``, ``R == 1`` and "every flow 1 MB"; class probability = its share of
  the coflows (empty classes are left out);
* per class and free variable, quantile-table knots at ``GRID`` plus the empirical CDF at the
  smallest value, values by the inverted empirical CDF;
* copula correlation of each pair: the latent normal correlation whose discretized simulation
  (``N_CAL`` common random pairs) has the trace's Spearman rank correlation; the matrix is then
  projected to the nearest positive-definite correlation matrix if needed;
* reducer skew ``sigma`` per coflow: ``sqrt(log(1 + cv^2))``, ``cv`` the coefficient of variation
  of its per-reducer MB;
* inter-arrival: maximum likelihood Weibull (location 0); exponential, gamma and lognormal are
  fitted too and the AIC and Kolmogorov-Smirnov distance of all four are reported.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, stats
from scipy.special import ndtr

from coflowopt.workloads.synthetic import (
    CoflowClass,
    FBLikeParams,
    Marginal,
    coflow_features,
    synthetic_trace,
    trace_statistics,
)
from coflowopt.workloads.trace import find_fb2010, read_trace

GRID = (*np.round(np.arange(0, 0.951, 0.05), 2).tolist(), 0.98, 0.99, 0.995, 1.0)
N_CAL = 20000
CAL_SEED = 2010
CLASSES = tuple((f"{'1' if one_m else 'M'}x{'1' if one_r else 'R'}{' unit' if unit else ''}",
                 one_m, one_r, unit)
                for unit in (True, False) for one_r in (True, False) for one_m in (True, False))


def _r(x: float) -> float:
    """Round a fitted number to 6 significant digits (whole numbers are kept as they are)."""
    x = float(x)
    return x if x.is_integer() else float(f"{x:.6g}")


def fit_marginal(x: np.ndarray, *, log: bool = True, integer: bool = False) -> Marginal:
    """Quantile table of ``x`` at ``GRID`` plus the CDF at the smallest value."""
    x = np.asarray(x, dtype=float)
    knots = set(GRID)
    p_min = float(np.mean(x <= x.min()))
    if 0 < p_min < 1:
        knots.add(_r(p_min))
    probs = np.array(sorted(knots))
    values = np.quantile(x, probs, method="inverted_cdf")
    return Marginal(tuple(_r(p) for p in probs), tuple(_r(v) for v in values), log=log,
                    integer=integer)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def calibrate_pair(ma: Marginal, mb: Marginal, target: float, z: np.ndarray) -> float:
    """Latent correlation whose discretized pair has Spearman correlation ``target``."""
    if not np.isfinite(target):
        return 0.0

    def gap(rho: float) -> float:
        z2 = rho * z[:, 0] + np.sqrt(1 - rho * rho) * z[:, 1]
        s = _spearman(ma.ppf(ndtr(z[:, 0])), mb.ppf(ndtr(z2)))
        return (0.0 if not np.isfinite(s) else s) - target

    lo, hi = -0.999, 0.999
    if gap(lo) >= 0:
        return lo
    if gap(hi) <= 0:
        return hi
    return float(optimize.brentq(gap, lo, hi, xtol=1e-6))


def nearest_correlation(c: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    """Clip eigenvalues at ``floor`` and rescale to unit diagonal."""
    w, v = np.linalg.eigh(c)
    if w.size == 0 or w[0] >= floor:
        return c
    c = (v * np.maximum(w, floor)) @ v.T
    d = np.sqrt(np.diag(c))
    return c / np.outer(d, d)


def fit_class(name: str, one_m: bool, one_r: bool, unit: bool, feats: dict[str, np.ndarray],
              sel: np.ndarray, z: np.ndarray) -> CoflowClass:
    """Fit one width class to the coflows ``sel``."""
    data = {"mappers": feats["mappers"][sel], "reducers": feats["reducers"][sel],
            "size": feats["size"][sel],
            # lognormal sigma with the coflow's coefficient of variation of per-reducer MB
            "skew": np.sqrt(np.log1p(feats["reducer_cv"][sel] ** 2))}
    margs: dict[str, Marginal | None] = {
        "mappers": None if one_m else fit_marginal(data["mappers"], integer=True),
        "reducers": None if one_r else fit_marginal(data["reducers"], integer=True),
        "size": None if unit else fit_marginal(data["size"], integer=one_m),
        "skew": None if one_r or unit else fit_marginal(data["skew"], log=False),
    }
    names = [k for k, v in margs.items() if v is not None]
    d = len(names)
    c = np.eye(d)
    for i in range(d):
        for j in range(i + 1, d):
            target = _spearman(data[names[i]], data[names[j]])
            c[i, j] = c[j, i] = calibrate_pair(margs[names[i]], margs[names[j]], target, z)
    c = nearest_correlation(c)
    corr = tuple(tuple(1.0 if i == j else round(float(c[i, j]), 4) for j in range(d))
                 for i in range(d))
    return CoflowClass(name=name, prob=_r(np.mean(sel)), mappers=margs["mappers"],
                       reducers=margs["reducers"], size=margs["size"], skew=margs["skew"],
                       corr=corr, unit=unit)


def interarrival_fits(gaps: np.ndarray) -> list[dict[str, float | str]]:
    """ML fits (location 0) of four candidate laws with AIC and KS distance."""
    rows: list[dict[str, float | str]] = []
    for name, dist in (("exponential", stats.expon), ("gamma", stats.gamma),
                       ("lognormal", stats.lognorm), ("weibull", stats.weibull_min)):
        par = dist.fit(gaps, floc=0)
        k = len(par) - 1  # location fixed
        ll = float(dist.logpdf(gaps, *par).sum())
        rows.append({"law": name, "params": par, "aic": 2 * k - 2 * ll,
                     "ks": float(stats.kstest(gaps, dist.cdf, args=par).statistic),
                     "mean": float(dist.mean(*par)),
                     "cv": float(dist.std(*par) / dist.mean(*par))})
    return rows


def fit_params(inst_features: dict[str, np.ndarray], gaps: np.ndarray) -> FBLikeParams:
    """Fit :class:`FBLikeParams` to per-coflow features and inter-arrival gaps."""
    z = np.random.default_rng(CAL_SEED).standard_normal((N_CAL, 2))
    m1 = inst_features["mappers"] == 1
    r1 = inst_features["reducers"] == 1
    u1 = inst_features["unit_flows"]
    classes = []
    for name, one_m, one_r, unit in CLASSES:
        sel = (m1 == one_m) & (r1 == one_r) & (u1 == unit)
        if sel.any():
            classes.append(fit_class(name, one_m, one_r, unit, inst_features, sel, z))
    wb = next(r for r in interarrival_fits(gaps) if r["law"] == "weibull")
    shape, _, scale = wb["params"]  # type: ignore[misc]
    return FBLikeParams(classes=tuple(classes), interarrival_shape=_r(shape),
                        interarrival_scale=_r(scale))


def _tuple_src(xs: tuple[float, ...], indent: int) -> str:
    pad = " " * indent
    lines, cur = [], ""
    for tok in (repr(x) + "," for x in xs):
        if cur and len(pad) + len(cur) + 1 + len(tok) > 98:
            lines.append(pad + cur)
            cur = tok
        else:
            cur = f"{cur} {tok}" if cur else tok
    lines.append(pad + cur)
    return "(\n" + "\n".join(lines) + "\n" + " " * (indent - 4) + ")"


def _marginal_src(m: Marginal | None, indent: int) -> str:
    if m is None:
        return "None"
    flags = "".join([", log=False" if not m.log else "", ", integer=True" if m.integer else ""])
    inner = indent + 4
    return (f"_m(\n{' ' * inner}{_tuple_src(m.probs, inner + 4)},\n"
            f"{' ' * inner}{_tuple_src(m.values, inner + 4)}{flags},\n{' ' * indent})")


def params_source(p: FBLikeParams) -> str:
    """``p`` as the Python source of the fitted-constants block of ``synthetic.py``."""
    out = ["FB2010_CLASSES: tuple[CoflowClass, ...] = ("]
    for c in p.classes:
        corr = "(\n" + "".join(f"            {row!r},\n" for row in c.corr) + "        )"
        corr = corr if c.corr else "()"
        out += [
            "    CoflowClass(",
            f'        name="{c.name}",',
            f"        prob={c.prob!r},",
            f"        mappers={_marginal_src(c.mappers, 8)},",
            f"        reducers={_marginal_src(c.reducers, 8)},",
            f"        size={_marginal_src(c.size, 8)},",
            f"        skew={_marginal_src(c.skew, 8)},",
            f"        corr={corr},",
            f"        unit={c.unit!r},",
            "    ),",
        ]
    out += [")", f"FB2010_INTERARRIVAL_SHAPE = {p.interarrival_shape!r}",
            f"FB2010_INTERARRIVAL_SCALE = {p.interarrival_scale!r}"]
    return "\n".join(out)


def _fmt(x: float) -> str:
    if not np.isfinite(x):
        return "nan"
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.4g}"
    if float(x).is_integer():
        return f"{int(x)}"
    return f"{x:.4g}" if abs(x) >= 100 else f"{x:.3f}"


def comparison_table(real: dict[str, float], synth: list[dict[str, float]]) -> str:
    """Markdown table: statistic, real value, synthetic mean and sd over seeds."""
    lines = [f"| statistic | FB2010 | synthetic mean ({len(synth)} seeds) | synthetic sd |",
             "|---|---:|---:|---:|"]
    for k, v in real.items():
        vals = np.array([s[k] for s in synth])
        lines.append(f"| {k} | {_fmt(v)} | {_fmt(float(vals.mean()))} | "
                     f"{_fmt(float(vals.std()))} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", help="trace file (default: find_fb2010())")
    ap.add_argument("--seeds", type=int, default=5, help="synthetic traces to average")
    ap.add_argument("--md", help="also write the statistics tables to this Markdown file")
    args = ap.parse_args(argv)
    path = Path(args.trace) if args.trace else find_fb2010()
    if path is None:
        print("FB2010 trace not found; pass its path or set COFLOWOPT_FB2010", file=sys.stderr)
        return 2
    inst = read_trace(path)
    feats = coflow_features(inst)
    gaps = np.diff(np.sort(inst.release))
    params = fit_params(feats, gaps)

    print("# --- fitted constants " + "-" * 75)
    print("# Fitted to FB2010-1Hr-150-0 by benchmarks/fit_fb2010.py (paste its output here when "
          "refitting).")
    print(params_source(params))
    print("# --- end of fitted constants " + "-" * 68)
    try:
        same = params == FBLikeParams()
    except ValueError:  # no constants embedded yet
        same = False
    print(f"\nembedded defaults in synthetic.py equal this fit: {same}\n")

    ia = interarrival_fits(gaps)
    ia_lines = ["| law | AIC | KS distance | mean (ms) | CV |", "|---|---:|---:|---:|---:|"]
    for row in ia:
        ia_lines.append(f"| {row['law']} | {row['aic']:.1f} | {row['ks']:.4f} | "
                        f"{row['mean']:.0f} | {row['cv']:.3f} |")
    ia_table = "\n".join(ia_lines)
    n = inst.n_coflows
    real = trace_statistics(inst)
    synth = [trace_statistics(synthetic_trace(n, seed=s, ports=inst.ports, params=params))
             for s in range(args.seeds)]
    table = comparison_table(real, synth)
    print(f"Inter-arrival fits ({gaps.size} gaps, trace mean {gaps.mean():.0f} ms, "
          f"CV {gaps.std() / gaps.mean():.3f}):\n")
    print(ia_table)
    print(f"\nReal vs synthetic ({n} coflows, {inst.ports} ports, seeds 0..{args.seeds - 1}):\n")
    print(table)
    if args.md:
        text = (
            "# FB2010 fit: real vs synthetic statistics\n\n"
            "Output of `python benchmarks/fit_fb2010.py --md benchmarks/fit_fb2010.md` "
            "(summary statistics only; the trace itself is not redistributable).\n"
            "Model: `coflowopt/workloads/synthetic.py`.  Embedded defaults equal this fit: "
            f"{same}.\n\n"
            f"## Inter-arrival law ({gaps.size} gaps; trace mean {gaps.mean():.0f} ms, "
            f"CV {gaps.std() / gaps.mean():.3f})\n\n{ia_table}\n\n"
            "Chosen: Weibull (lowest AIC and KS distance).\n\n"
            f"## Statistics ({n} coflows, {inst.ports} ports; synthetic = "
            f"`synthetic_trace({n}, seed=s)` for s in 0..{args.seeds - 1})\n\n"
            "Width: `mappers` M, `reducers` R, `flows` M*R per coflow.  Size in MB.  Skew: "
            "`skew_cv` = coefficient of variation of per-reducer MB (0 when R = 1), "
            "`skew_max_mean` = max/mean of it.  `frac_unit_flows`: coflows whose flows are all "
            "1 MB.  Correlations: Pearson on logs.  Inter-arrival in ms.\n\n"
            f"{table}\n"
        )
        Path(args.md).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
