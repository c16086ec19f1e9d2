"""The coflowopt command line, run in-process through main()."""

import json

import pytest
from strategies import example2

from coflowopt import load_instance, save_instance, save_schedule
from coflowopt.cli import main
from coflowopt.interchange import schedule_to_dict
from coflowopt.schedulers import sequential
from coflowopt.workloads import find_fb2010, parse_trace

TRACE = "4 2\n1 0 2 0 1 1 2:4.0\n2 100 1 3 2 0:2.0 1:3.0\n"


def test_info_trace(tmp_path, capsys) -> None:
    p = tmp_path / "t.txt"
    p.write_text(TRACE)
    assert main(["info", str(p)]) == 0
    out = capsys.readouterr().out
    assert "coflows" in out and "flows" in out
    # 2 flows of 2 MB + 2 flows of 2.0 and 3.0 MB = 4 + 5 = 9 MB over 4 flows
    assert "total volume (MB)" in out and " 9" in out


def test_convert_both_ways(tmp_path) -> None:
    p = tmp_path / "t.txt"
    p.write_text(TRACE)
    j = tmp_path / "t.json.gz"
    assert main(["convert", str(p), str(j)]) == 0
    assert load_instance(j) == parse_trace(TRACE)
    back = tmp_path / "back.txt"
    assert main(["convert", str(j), str(back)]) == 0
    assert back.read_text() == TRACE


def test_validate_exit_codes(tmp_path, capsys) -> None:
    inst = example2()
    ip, sp_ = tmp_path / "i.json", tmp_path / "s.json"
    save_instance(inst, ip)
    save_schedule(sequential(inst), sp_)
    assert main(["validate", str(ip), str(sp_)]) == 0
    assert "feasible" in capsys.readouterr().out
    d = schedule_to_dict(sequential(inst))
    d["intervals"][0]["rates"] = [r * 2 for r in d["intervals"][0]["rates"]]
    sp_.write_text(json.dumps(d))
    assert main(["validate", str(ip), str(sp_)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INFEASIBLE: capacity: port")


def test_bad_input_is_an_error_not_a_traceback(tmp_path, capsys) -> None:
    p = tmp_path / "bad.txt"
    p.write_text("4 1\n1 0 1 9 1 0:1.0\n")
    assert main(["info", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}:2: field map_loc_1" in err


def test_schedulers_lists_registry(capsys) -> None:
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    assert "sequential" in out and "clairvoyant" in out


@pytest.mark.parametrize("kind", ["ggen", "fan-in", "fan-out", "layered", "tpcds"])
def test_gen_dags(tmp_path, kind: str) -> None:
    out = tmp_path / f"{kind}.json"
    assert main(["gen", kind, "--jobs", "3", "--seed", "4", "-o", str(out)]) == 0
    inst = load_instance(out)
    assert inst.n_jobs == 3
    again = tmp_path / "again.json"
    main(["gen", kind, "--jobs", "3", "--seed", "4", "-o", str(again)])
    assert load_instance(again) == inst


def test_gen_fb2010_jobs(tmp_path) -> None:
    if find_fb2010() is None:
        pytest.skip("FB2010 trace not found")
    out = tmp_path / "jobs.json.gz"
    assert main(["gen", "fb2010", "--mean-coflows", "3", "-o", str(out)]) == 0
    inst = load_instance(out)
    assert inst.n_coflows == 526 and inst.n_jobs < 526


def test_gen_synthetic_and_info(tmp_path, capsys) -> None:
    out = tmp_path / "syn.txt"
    assert main(["gen", "synthetic", "--coflows", "40", "--seed", "3", "-o", str(out)]) == 0
    assert main(["info", str(out)]) == 0
    assert "coflows                      40" in capsys.readouterr().out


def test_run_prints_table_and_writes_csv(tmp_path, capsys) -> None:
    p = tmp_path / "t.txt"
    p.write_text(TRACE)
    out_csv = tmp_path / "cct.csv"
    sched = tmp_path / "s.json"
    assert main(["run", "--trace", str(p), "-s", "varys,fifo", "--csv", str(out_csv),
                 "--schedule-out", str(sched)]) == 0
    text = capsys.readouterr().out
    assert "varys" in text and "fifo" in text and "avg CCT" in text
    rows = out_csv.read_text().splitlines()
    assert rows[0].split(",")[:5] == ["scheduler", "coflow", "release", "completion", "cct"]
    assert len(rows) == 1 + 2 * 2
    # coflow 1: 2 mappers x 1 reducer of 4 MB: 2 MB per flow into one 0.125 MB/ms port = 32 ms
    first = rows[1].split(",")
    assert first[0] == "varys" and first[1] == "1" and float(first[4]) == 32.0
    # the schedules were written and validate from the command line
    for name in ("varys", "fifo"):
        assert main(["validate", str(p), str(tmp_path / f"s-{name}.json")]) == 0


def test_run_unknown_scheduler_fails_before_work(tmp_path, capsys) -> None:
    p = tmp_path / "t.txt"
    p.write_text(TRACE)
    assert main(["run", "--trace", str(p), "-s", "varys,nope"]) == 2
    captured = capsys.readouterr()
    assert "unknown scheduler 'nope'" in captured.err and "varys" not in captured.out


def test_run_coflowsim_semantics(tmp_path, capsys):
    trace = tmp_path / "t.txt"
    # two coflows: 1.5 MB -> 2 MiB (16 ms); a 3 MB flow arriving at 20,000 ms, admitted at
    # 10,240 and done 24 ms later
    trace.write_text("4 2\n1 0 1 0 1 1:1.5\n2 20000 1 2 1 3:3\n")
    out = tmp_path / "cct.csv"
    assert main(["run", "--trace", str(trace), "--semantics", "coflowsim", "-s", "sebf,fair",
                 "--csv", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "semantics: coflowsim" in text
    rows = [line.split(",") for line in out.read_text().splitlines()[1:]]
    assert [(r[0], r[1], float(r[2]), float(r[4])) for r in rows] == [
        ("sebf", "1", 0.0, 16.0), ("sebf", "2", 10240.0, 24.0),
        ("fair", "1", 0.0, 16.0), ("fair", "2", 10240.0, 24.0)]
    assert main(["run", "--trace", str(trace), "--semantics", "coflowsim", "-s", "sincronia"]) == 2


@pytest.mark.parametrize("command", ["schedulers", "info {trace}", "gen --list"])
def test_printing_commands_end_quietly_into_head(tmp_path, command: str) -> None:
    import subprocess
    import sys

    trace = tmp_path / "t.txt"
    trace.write_text("4 3\n1 0 1 0 1 1:2.0\n2 5 2 0 1 1 3:1.0\n3 9 1 2 2 0:1.0 1:3.0\n")
    # the reader is gone before the command prints (`true` exits at once; the interpreter
    # takes a second to start): every print meets a closed pipe
    cmd = f"{sys.executable} -m coflowopt.cli {command.format(trace=trace)} | true"
    out = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True,
                         timeout=120)
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr, out.stderr
    assert out.returncode == 0


def test_ctrl_c_stops_coflowopt_run_with_130_and_whole_outputs(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from interrupt import interactive_sigint

    # fair on a large synthetic workload runs for minutes; a CSV from before stays whole
    csv_path = tmp_path / "cct.csv"
    csv_path.write_text("scheduler,coflow\nold,1\n")
    cmd = [sys.executable, "-m", "coflowopt.cli", "run", "--synthetic", "--coflows", "526",
           "-s", "fair", "--csv", str(csv_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interactive_sigint)
    try:
        deadline = time.monotonic() + 120
        first = ""
        while time.monotonic() < deadline and not first:  # the instance line: it is running
            first = proc.stdout.readline()
        time.sleep(3.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Segmentation fault" not in err and "interrupted" in err
    # nothing finished: the old file is as it was, and no temporary file is left
    assert csv_path.read_text() == "scheduler,coflow\nold,1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cct.csv"]


def test_a_refused_run_leaves_an_existing_output_byte_identical(tmp_path, capsys) -> None:
    from coflowopt import CoflowSpec, JobSpec, build_instance, save_instance

    dag = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 1, 1.0)]), CoflowSpec([(1, 0, 1.0)])],
                                          starts_after=[(0, 1)], id="j")])
    save_instance(dag, tmp_path / "dag.json")
    out = tmp_path / "out.csv"
    out.write_bytes(b"precious,rows\n1,2\n")
    rc = main(["run", "--trace", str(tmp_path / "dag.json"), "--semantics", "coflowsim",
               "-s", "sebf", "--csv", str(out)])
    assert rc == 2 and "single-stage" in capsys.readouterr().err
    assert out.read_bytes() == b"precious,rows\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dag.json", "out.csv"]


def test_run_scheduler_params_and_a_proven_infeasible_result(tmp_path, capsys) -> None:
    """``-p KEY=VALUE`` (TOML values; ``NAME.KEY`` for one scheduler); CoFair below E_MPS is
    one line ``cofair: infeasible: ...`` (no traceback), exit 1; the other schedulers still
    run and print their rows."""
    from coflowopt.interchange import save_instance
    from coflowopt.proofs_check.instances import e2_instance

    path = tmp_path / "e2.json"
    save_instance(e2_instance(), path)
    assert main(["run", "--trace", str(path), "-s", "cofair", "-p", "E=1.5"]) == 1
    cap = capsys.readouterr()
    lines = [x for x in cap.out.splitlines() if "infeasible" in x]
    assert lines == ["cofair: infeasible: E = 1.5 is below E_MPS = 1.6: on port out 2 (load 8) "
                     "every coflow's deadline is earlier (coflow C3: 4.5, C4: 7.5); no "
                     "sigma-order meets them"]
    assert "Traceback" not in cap.err and "avg CCT" not in cap.out
    assert main(["run", "--trace", str(path), "-s", "cofair,sincronia", "-p", "cofair.E=1.5",
                 "--csv", str(tmp_path / "c.csv")]) == 1
    out = capsys.readouterr().out
    assert "cofair: infeasible" in out and "sincronia" in out.splitlines()[-1]
    assert main(["run", "--trace", str(path), "-s", "cofair", "-p", "E=inf", "-p",
                 "mode=online"]) == 0
    assert "cofair" in capsys.readouterr().out.splitlines()[-1]
    assert main(["run", "--trace", str(path), "-s", "cofair,sincronia", "-p", "E=2"]) == 2
    assert "sincronia.E: unknown parameter" in capsys.readouterr().err
    assert main(["run", "--trace", str(path), "-s", "cofair", "-p", "E"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
