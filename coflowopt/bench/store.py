"""The results folder: one CSV row per finished task, durable as soon as the task ends.

Layout of ``results/<suite>/``::

    results.csv          one row per finished task (appended, flushed and fsynced per row)
    results.parquet      the same table, rewritten at the end of a run when pyarrow is present
    suite.json           the suite that produced it (``coflowopt report`` reads it)
    coflows/<key>.npz    per-coflow ``cct`` and ``slowdown`` of each successful task
    errors/<key>.txt     the traceback of each failed task
    report/              summary.md, summary.csv, tidy.csv and the plots

A row is one line: text fields are kept on one line, so a crash can cut at most the last line,
which the next run drops before it appends.  A row with a column the file lacks rewrites the
file once with the wider header (atomically, through a temporary file).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["STRING_COLUMNS", "ResultsStore", "load_results"]

RESULTS_CSV = "results.csv"
RESULTS_PARQUET = "results.parquet"
SUITE_JSON = "suite.json"

#: Columns read back as text (everything else is parsed as numbers where it can be).
STRING_COLUMNS = ("key", "suite", "workload", "generator", "scheduler", "algorithm", "params",
                  "status", "error", "kind", "factor", "objective", "time_unit", "worker")


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else
                                                  ("inf" if v > 0 else "-inf"))
    if isinstance(v, int):
        return str(v)
    return " ".join(str(v).splitlines())


def _line(values: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


#: Seconds a run waits for a results folder held by another (or a dying) run.
LOCK_WAIT_S = 5.0

class ResultsStore:
    """Append-only result rows of one results folder.

    ``keys`` maps every recorded task key to its status (``ok``, ``error``, ``timeout``,
    ``infeasible``); a later row for the same key supersedes an earlier one.
    """

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / RESULTS_CSV
        self.columns: list[str] = []
        self.keys: dict[str, str] = {}
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            # the last row was cut short by a crash: drop it
            cut = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as fh:
                fh.truncate(cut)
                fh.flush()
                os.fsync(fh.fileno())
            data = data[:cut]
        reader = csv.DictReader(io.StringIO(data.decode()))
        self.columns = list(reader.fieldnames or [])
        for row in reader:
            if row.get("key"):
                self.keys[row["key"]] = row.get("status") or ""

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the folder for one run; a second concurrent run on it fails, naming the process
        that holds it.  The lock file records the holder's pid: when that process is gone, the
        lock can only be held for a moment by its pool workers on their way out (they die with
        their parent), so a rerun waits for them up to ``LOCK_WAIT_S``."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        path = self.folder / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        with os.fdopen(fd, "r+") as fh:
            give_up = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= give_up:
                        raise RuntimeError(self._busy_message(path)) from None
                    time.sleep(0.1)
            try:
                fh.seek(0)
                fh.truncate()
                fh.write(f"{os.getpid()}\n")
                fh.flush()
                yield
            finally:
                fh.seek(0)
                fh.truncate()
                fh.flush()
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _busy_message(self, path: Path) -> str:
        try:
            pid = int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pid = None
        if pid is not None and _alive(pid):
            return (f"{self.folder}: another run (pid {pid}) is writing to this results "
                    "folder")
        who = f"run pid {pid}, no longer alive" if pid is not None else "unknown process"
        return (f"{self.folder}: the results folder is still locked by processes of an ended "
                f"run ({who}) after {LOCK_WAIT_S:g} s; they may still be finishing a task: "
                f"wait, or end them (`fuser {path}` lists them)")

    def append(self, row: Mapping[str, Any]) -> None:
        """Write one row durably (flush and fsync before returning)."""
        new = [k for k in row if k not in self.columns]
        if new or not self.path.exists():
            self._rewrite(new, row)
        else:
            line = _line([_cell(row.get(c)) for c in self.columns])
            with open(self.path, "a", newline="") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        self.keys[str(row["key"])] = str(row.get("status", ""))

    def _rewrite(self, new: list[str], row: Mapping[str, Any]) -> None:
        old_rows: list[dict[str, str]] = []
        if self.path.exists():
            with open(self.path, newline="") as fh:
                old_rows = list(csv.DictReader(fh))
        self.columns = self.columns + new
        parts = [_line(self.columns)]
        parts += [_line([r.get(c) or "" for c in self.columns]) for r in old_rows]
        parts.append(_line([_cell(row.get(c)) for c in self.columns]))
        _atomic_write(self.path, "".join(parts).encode())

    def save_arrays(self, key: str, **arrays: np.ndarray) -> None:
        """Per-coflow arrays of one task, written atomically to ``coflows/<key>.npz``."""
        d = self.folder / "coflows"
        d.mkdir(exist_ok=True)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        _atomic_write(d / f"{key}.npz", buf.getvalue())

    def save_text(self, sub: str, key: str, text: str) -> None:
        d = self.folder / sub
        d.mkdir(exist_ok=True)
        _atomic_write(d / f"{key}.txt", text.encode())

    def save_suite(self, data: Mapping[str, Any]) -> None:
        _atomic_write(self.folder / SUITE_JSON, json.dumps(data, indent=2).encode())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def load_results(folder: str | os.PathLike[str]) -> Any:
    """The results table of a folder as a :class:`pandas.DataFrame`: one row per task (the
    last row of each key), sorted by workload, scheduler and seed."""
    import pandas as pd

    path = Path(folder) / RESULTS_CSV
    if not path.exists():
        raise FileNotFoundError(f"{path}: no results here (run `coflowopt bench` first)")
    ResultsStore(folder)  # drops a cut-short last line, if any
    with open(path, newline="") as fh:
        header = next(csv.reader(fh), [])
    dtype = {c: "string" for c in STRING_COLUMNS if c in header}
    # exact float round trip: pandas 3 parses so by default, pandas 2 needs asking
    exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
    df = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=["", "nan", "NaN"],
                     **exact)
    if df.empty:
        return df
    df = df.drop_duplicates("key", keep="last")
    sort = [c for c in ("workload", "scheduler", "seed") if c in df.columns]
    return df.sort_values(sort, kind="stable").reset_index(drop=True)
