"""``bench`` / ``report`` output errors and the report's plots (issue 26, items 8 and 10)."""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import tiny_suite, write

from coflowopt.bench.report import plot_bars, plot_ratios
from coflowopt.cli import main

ONE_RUN = tiny_suite(seeds="[0]", workloads=(
    '[[workloads]]\nname = "syn-12"\ngenerator = "synthetic"\n'
    "params = { n_coflows = 12, ports = 8 }\n"))


def test_bench_refuses_an_unwritable_results_folder_before_any_task(tmp_path, capsys):
    path = write(tmp_path, ONE_RUN)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    cases = [(blocker, "is not a folder"), (blocker / "res", "is not a folder")]
    if Path("/proc/self").is_dir():
        cases.append((Path("/proc/res"), "cannot write in /proc"))
    for out, why in cases:
        assert main(["bench", str(path), "--out", str(out), "--executor", "inline"]) == 2
        cap = capsys.readouterr()
        assert "task" not in cap.out.split("\n", 1)[-1]  # only the suite line, no run
        assert cap.err.count("\n") == 1 and why in cap.err and str(out) in cap.err, cap.err
    assert not (tmp_path / "res").exists()


def test_a_full_disk_while_writing_the_report_is_one_line_each(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, ONE_RUN)
    out = tmp_path / "res"
    assert main(["bench", str(path), "--out", str(out), "--executor", "inline",
                 "--no-plots"]) == 0
    capsys.readouterr()

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    assert main(["report", str(out), "--no-plots"]) == 1
    cap = capsys.readouterr()
    assert "sequential" in cap.out  # the table is printed all the same
    assert cap.err.splitlines() == [
        f"coflowopt report: cannot write {out / 'report' / name}: No space left on device"
        for name in ("summary.csv", "tidy.csv")]
    # and bench: its rows are kept, the report's failure is one line per file, exit 1
    (out / "results.csv").rename(out / "old.csv")
    rc = main(["bench", str(path), "--out", str(out), "--executor", "inline", "--no-plots"])
    cap = capsys.readouterr()
    assert rc == 1 and "Traceback" not in cap.err
    assert "coflowopt bench: cannot write" in cap.err and "1 task ran (0 failed)" in cap.out


# -- the plots: no overlapping labels, no legend over the data --------------------------------

SCHEDULERS = ["varys", "sincronia", "aalo", "a-sebf", "fifo", "fair", "sequential", "cofair",
              "utopia", "gdm", "gdm-bf", "om-lp", "deepweave"]  # the default suite's


def _tidy() -> pd.DataFrame:
    rows = [dict(workload=w, scheduler=s, metric=m, seed=k, ratio_to_bound=1.0 + i + k / 10,
                 factor="4" if s == "cofair" else "")
            for w in ("fb-like-100-load0.7", "tpcds-jobs-10")
            for i, s in enumerate(SCHEDULERS) for m in ("avg_cct", "weighted_completion",
                                                        "weighted_jct") for k in range(3)]
    return pd.DataFrame(rows)


def _summary() -> pd.DataFrame:
    rows = [dict(workload=w, scheduler=s, metric=m, seeds=3, mean=10.0 + i, min=9.0 + i,
                 max=11.0 + i, lower_bound=8.0, unit="ms" if w.startswith("fb") else "unit")
            for w in ("fb-like-100-load0.7", "tpcds-jobs-10")
            for i, s in enumerate(SCHEDULERS) for m in ("avg_cct", "avg_slowdown")]
    return pd.DataFrame(rows)


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def test_ratio_tick_labels_do_not_overlap():
    fig = plot_ratios(_tidy())
    renderer = _drawn(fig)
    for ax in fig.axes:
        if not ax.get_visible() or not ax.get_xticklabels():
            continue
        labels = ax.get_xticklabels()
        angle = math.radians(labels[0].get_rotation())
        # adjacent labels are parallel lines of text: apart by the tick spacing times the sine
        # of their slant (the full spacing when flat, then against their widths)
        xs = ax.transData.transform([(x, 0) for x in ax.get_xticks()])[:, 0]
        gap = float(np.diff(xs).min())
        if angle == 0:
            widths = [t.get_window_extent(renderer).width for t in labels]
            assert gap >= max(widths)
        else:
            height = max(t.get_size() for t in labels) * fig.dpi / 72  # one line, in pixels
            assert gap * math.sin(angle) > height, (gap, height)


def test_bar_legend_covers_no_panel():
    fig = plot_bars(_summary())
    renderer = _drawn(fig)
    assert all(ax.get_legend() is None for ax in fig.axes)
    assert len(fig.legends) == 1
    box = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        if ax.get_visible():
            assert not box.overlaps(ax.get_window_extent(renderer))
    # every label once, though each panel draws every scheduler
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == sorted(["lower bound", *SCHEDULERS])


@pytest.mark.parametrize("plot", [plot_bars, plot_ratios])
def test_plots_without_data_have_no_legend(plot):
    empty = _summary().iloc[:0] if plot is plot_bars else _tidy().iloc[:0]
    fig = plot(empty)
    _drawn(fig)
    assert fig.legends == []
