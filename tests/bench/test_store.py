"""The results file: durable rows, a cut-short last line dropped, new columns added."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import pytest

from coflowopt.bench import ResultsStore, TaskTimeout, deadline, load_results


def test_append_reload_and_widen(tmp_path: Path) -> None:
    s = ResultsStore(tmp_path)
    s.append({"key": "00ab", "status": "ok", "workload": "w", "scheduler": "a", "seed": 0,
              "x": 0.1 + 0.2, "error": "two\nlines"})
    s.append({"key": "0001", "status": "error", "workload": "w", "scheduler": "b", "seed": 0,
              "y": math.nan})
    again = ResultsStore(tmp_path)
    assert again.keys == {"00ab": "ok", "0001": "error"}
    df = load_results(tmp_path)
    assert list(df["key"]) == ["00ab", "0001"]  # text keys stay text
    assert df.loc[0, "x"] == 0.1 + 0.2  # exact float round trip
    assert df.loc[0, "error"] == "two lines" and math.isnan(df.loc[1, "y"])


def test_cut_short_last_line_is_dropped(tmp_path: Path) -> None:
    s = ResultsStore(tmp_path)
    s.append({"key": "k1", "status": "ok", "workload": "w", "scheduler": "a", "seed": 0})
    with open(s.path, "a") as fh:
        fh.write("k2,o")  # a crash in the middle of a row
    again = ResultsStore(tmp_path)
    assert again.keys == {"k1": "ok"}
    again.append({"key": "k3", "status": "ok", "workload": "w", "scheduler": "a", "seed": 1})
    assert list(load_results(tmp_path)["key"]) == ["k1", "k3"]


def test_second_run_on_a_folder_is_refused(tmp_path: Path) -> None:
    s = ResultsStore(tmp_path)
    with s.lock(), pytest.raises(RuntimeError, match="another run"), ResultsStore(tmp_path).lock():
        pass


@pytest.mark.parametrize("where", ["main", "thread"])
def test_deadline_interrupts(where: str) -> None:
    caught: list[BaseException] = []

    def body() -> None:
        try:
            with deadline(0.2):
                end = time.monotonic() + 30
                while time.monotonic() < end:
                    time.sleep(0.01)
        except TaskTimeout as exc:
            caught.append(exc)
        with deadline(5):  # a deadline that does not fire leaves nothing behind
            pass

    if where == "main":
        body()
    else:
        t = threading.Thread(target=body)
        t.start()
        t.join(60)
    assert len(caught) == 1
