"""The command line's output files and its messages (issue 26, items 3, 8, 9, 10): CoflowSim
schedules that can be checked, output errors that lose no work, conversions that lose no data
silently, and what a newcomer reads."""

from __future__ import annotations

import errno
import os
import re
import sys
from pathlib import Path

import pytest

from coflowopt import CoflowSpec, JobSpec, build_instance, load_instance, save_instance
from coflowopt.cli import main

#: two coflows of 4 ports: coflow 1 (2 mappers -> port 2, 4 MB), coflow 2 at 100 ms
TRACE = "4 2\n1 0 2 0 1 1 2:4.0\n2 100 1 3 2 0:2.0 1:3.0\n"


def _trace(tmp_path: Path) -> Path:
    p = tmp_path / "t.txt"
    p.write_text(TRACE)
    return p


def _dag():
    """Two jobs of two coflows each, one Starts-After edge per job, normalized units, ports
    of capacity 1."""
    job = [JobSpec([CoflowSpec([(0, 1, 1.0)]), CoflowSpec([(1, 0, 1.0)])], starts_after=[(0, 1)],
                   id=f"j{k}") for k in range(2)]
    return build_instance(2, jobs=job)


# -- item 3: a CoflowSim-mode schedule and the instance it schedules ---------------------------


def test_coflowsim_schedule_out_writes_the_simulated_instance_beside_it(tmp_path, capsys):
    # 1.5 MB rounds up to 2 MB in CoflowSim mode and the second coflow's release moves to the
    # admission epoch 10,240 ms: the schedule does not fit the input trace, only the pair
    trace = tmp_path / "t.txt"
    trace.write_text("4 2\n1 0 1 0 1 1:1.5\n2 20000 1 2 1 3:3\n")
    sched = tmp_path / "s.json"
    assert main(["run", "--trace", str(trace), "--semantics", "coflowsim", "-s", "sebf",
                 "--schedule-out", str(sched)]) == 0
    inst_path = tmp_path / "s.instance.json"
    assert str(inst_path) in capsys.readouterr().out
    simulated = load_instance(inst_path)
    assert simulated.flow_volume.tolist() == [2.0, 3.0]
    assert simulated.release.tolist() == [0.0, 10240.0]
    assert main(["validate", str(inst_path), str(sched)]) == 0
    assert main(["validate", str(trace), str(sched)]) == 1  # why the pair is needed
    capsys.readouterr()
    # several schedulers: one pair each, NAME before the extension (a .json.gz stays gzip)
    assert main(["run", "--trace", str(trace), "--semantics", "coflowsim", "-s", "fifo,fair",
                 "--schedule-out", str(tmp_path / "m.json.gz")]) == 0
    for name in ("fifo", "fair"):
        assert main(["validate", str(tmp_path / f"m-{name}.instance.json.gz"),
                     str(tmp_path / f"m-{name}.json.gz")]) == 0


# -- item 8: output errors ---------------------------------------------------------------------


def _bad_outputs(tmp_path: Path) -> list[tuple[str, str]]:
    (tmp_path / "adir").mkdir()
    bad = [(str(tmp_path / "missing" / "x.csv"), "does not exist"),
           (str(tmp_path / "adir"), "is a directory")]
    if Path("/proc/self").is_dir():  # a pseudo file system takes no new files
        bad.append(("/proc/x.csv", "cannot write in /proc"))
    return bad


@pytest.mark.parametrize("option", ["--csv", "--schedule-out"])
def test_run_checks_output_paths_before_any_work(tmp_path, capsys, option):
    trace = _trace(tmp_path)
    for path, why in _bad_outputs(tmp_path):
        assert main(["run", "--trace", str(trace), "-s", "varys", option, path]) == 2
        cap = capsys.readouterr()
        assert cap.out == ""  # refused before the instance was even read
        assert cap.err.count("\n") == 1 and why in cap.err and path in cap.err, cap.err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes in a read-only folder")
def test_run_refuses_a_read_only_folder(tmp_path, capsys):
    trace = _trace(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["run", "--trace", str(trace), "-s", "varys", "--csv", str(ro / "x.csv")]) == 2
        assert "Permission denied" in capsys.readouterr().err
    finally:
        ro.chmod(0o755)


def test_run_refuses_a_folder_the_os_will_not_write(tmp_path, capsys, monkeypatch):
    """As above for any user: the check's probe file meets EACCES, as in a read-only folder."""
    import coflowopt.interchange as ic

    trace = _trace(tmp_path)
    real = os.open

    def deny(path, *a, **kw):
        if str(path).endswith(".check"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(ic.os, "open", deny)
    out = tmp_path / "x.csv"
    assert main(["run", "--trace", str(trace), "-s", "varys", "--csv", str(out)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == (f"coflowopt run: error: {out}: cannot write in "
                                         f"{tmp_path} (Permission denied)\n")


def _full_disk_on(monkeypatch, names: set[str]) -> None:
    """write_atomic fails with ENOSPC for files called one of ``names``."""
    import coflowopt.interchange as ic

    real = ic.write_atomic

    def write_atomic(path, chunks):
        if Path(path).name in names:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, chunks)

    monkeypatch.setattr(ic, "write_atomic", write_atomic)


def test_a_full_disk_keeps_the_results_and_the_other_schedulers(tmp_path, capsys, monkeypatch):
    trace = _trace(tmp_path)
    _full_disk_on(monkeypatch, {"s-varys.json", "c.csv"})
    rc = main(["run", "--trace", str(trace), "-s", "varys,fifo", "--schedule-out",
               str(tmp_path / "s.json"), "--csv", str(tmp_path / "c.csv")])
    cap = capsys.readouterr()
    assert rc == 1
    table = cap.out.splitlines()
    assert table[-2].startswith("varys") and table[-1].startswith("fifo")
    assert cap.err.splitlines() == [
        f"coflowopt run: cannot write {tmp_path / 's-varys.json'}: No space left on device",
        f"coflowopt run: cannot write {tmp_path / 'c.csv'}: No space left on device"]
    # the scheduler after the failure still ran and wrote its schedule
    assert main(["validate", str(trace), str(tmp_path / "s-fifo.json")]) == 0
    assert not (tmp_path / "s-varys.json").exists() and not (tmp_path / "c.csv").exists()


def test_gen_and_convert_check_their_output_first(tmp_path, capsys):
    trace = _trace(tmp_path)
    for path, why in _bad_outputs(tmp_path):
        assert main(["gen", "synthetic", "--coflows", "5", "-o", path]) == 2
        assert main(["convert", str(trace), path]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 2 and all(why in line and path in line for line in err), err


def test_an_os_error_is_one_line_not_a_traceback(tmp_path, capsys):
    # a directory given as the instance: IsADirectoryError, an OSError
    assert main(["info", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(tmp_path) in err


# -- item 9: convert refuses to lose data ------------------------------------------------------


def test_convert_refuses_a_lossy_trace_and_names_the_losses(tmp_path, capsys):
    src = tmp_path / "dag.json"
    save_instance(_dag(), src)
    out = tmp_path / "dag.txt"
    assert main(["convert", str(src), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not out.exists()
    # the hand-built instance: 2 edges, 2 jobs over 4 coflows, unit time, capacity 1
    for lost in ("2 Starts-After edges", "2 jobs (the 4 coflows become 4 one-coflow jobs)",
                 "time unit 'unit'", "capacity 1 (read back as 0.125 MB/ms)", "--lossy"):
        assert lost in err, (lost, err)
    assert main(["convert", str(src), str(out), "--lossy"]) == 0
    assert "lost: 2 Starts-After edges" in capsys.readouterr().out
    back = load_instance(src)
    assert main(["convert", str(out), str(tmp_path / "back.json")]) == 0
    again = load_instance(tmp_path / "back.json")
    assert (again.n_jobs, len(again.starts_after), again.n_coflows) == (4, 0, back.n_coflows)


def test_convert_without_loss_needs_no_flag(tmp_path):
    trace = _trace(tmp_path)
    assert main(["convert", str(trace), str(tmp_path / "t.json")]) == 0
    assert main(["convert", str(tmp_path / "t.json"), str(tmp_path / "t2.txt")]) == 0
    assert (tmp_path / "t2.txt").read_text() == TRACE


# -- item 10: what a newcomer reads ------------------------------------------------------------


def test_run_shows_job_columns_on_a_multi_stage_instance(tmp_path, capsys):
    # one job: coflow a (port 0 -> 1, 1 unit), then coflow b (1 -> 0, 1 unit) after it, at
    # capacity 1: a ends at 1, b at 2, so CCTs 1 and 2 (avg 1.5), JCT 2, weight 1: wtd JCT 2
    inst = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 1, 1.0)]),
                                            CoflowSpec([(1, 0, 1.0)])], starts_after=[(0, 1)])])
    save_instance(inst, tmp_path / "j.json")
    assert main(["run", "--trace", str(tmp_path / "j.json"), "-s", "gdm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head, row = lines[-2].split(), lines[-1].split()
    assert "JCT" in lines[-2] and lines[-2].index("avg JCT") < lines[-2].index("wtd JCT")
    assert row[0] == "gdm" and float(row[1]) == 1.5
    assert [float(x) for x in row[-3:-1]] == [2.0, 2.0]
    # the job's critical path is 1 + 1 = 2: the bound on sum_j w_j C_j, met here
    assert "on wtd JCT: 2;" in lines[-3]
    # six two-word headings: avg CCT, avg slowdown, wtd compl., avg JCT, wtd JCT, cpu s
    assert len(head) == len(row) + 6
    # a single-stage instance keeps the old columns
    assert main(["run", "--trace", str(_trace(tmp_path)), "-s", "varys"]) == 0
    assert "JCT" not in capsys.readouterr().out


def test_progress_bar_only_on_a_terminal_and_without_an_eta(monkeypatch):
    import io
    from argparse import Namespace
    from types import SimpleNamespace

    from coflowopt.cli_run import _progress_bar

    big = SimpleNamespace(n_flows=10**6)
    args = Namespace(no_progress=False)
    log = io.StringIO()  # a log file or pipe: no bar at all
    monkeypatch.setattr(sys, "stderr", log)
    with _progress_bar("varys", big, args) as tick:
        assert tick is None
    assert log.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with _progress_bar("varys", big, args) as tick:
        tick(500.0, 1000.0)
    shown = term.getvalue()
    assert "50%" in shown and "of the estimated horizon" in shown
    # tqdm's default would end "[00:01<00:09, ...]": a time left it cannot know
    assert "<" not in shown and "remaining" not in shown


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"coflowopt {version('coflowopt')}"


@pytest.mark.parametrize("command", [[], ["run"], ["bench"], ["convert"], ["gen"], ["verify"]])
def test_help_has_no_rst_markup(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert "usage: coflowopt" in out and "``" not in out


def test_schedulers_columns_are_aligned(capsys):
    assert main(["schedulers"]) == 0
    lines = capsys.readouterr().out.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]  # one-word headings
    assert len(starts) == 9
    from coflowopt.schedulers import registry

    rows = [x for x in lines[1:] if x.split(" ", 1)[0] in registry(None)]  # not a footnote
    assert len(rows) > 20
    for line in rows:
        for s in starts[1:]:  # every cell begins under its heading, after a blank
            assert line[s - 1] == " " and line[s] != " ", (s, line)


def test_info_labels_follow_the_time_unit(tmp_path, capsys):
    save_instance(_dag(), tmp_path / "d.json")
    assert main(["info", str(tmp_path / "d.json")]) == 0
    out = capsys.readouterr().out
    assert "_mb" not in out and "_ms" not in out and "MB" not in out
    assert "total_volume" in out and "size_mean" in out and re.search(r"\n\s+span\s", out)
    assert main(["info", str(_trace(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "total_mb" in out and "span_ms" in out and "total volume (MB)" in out


def test_aalo_parameter_error_names_the_field(tmp_path, capsys):
    trace = _trace(tmp_path)
    assert main(["run", "--trace", str(trace), "-s", "aalo", "-p", "first=-5"]) == 2
    err = capsys.readouterr().err
    assert "AaloParams.first: must be > 0, got -5" in err
    assert main(["run", "--trace", str(trace), "-s", "aalo", "-p", "growth=1"]) == 2
    assert "AaloParams.growth: must be > 1" in capsys.readouterr().err
