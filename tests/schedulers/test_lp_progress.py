"""LP-based schedulers (``om-lp``, ``approximate``) say their phases and the LP's size, stop at
their ``time_limit`` with one line, and name the parameter that lifts a size refusal (issue 26,
item 6)."""

from __future__ import annotations

import numpy as np
import pytest

import coflowopt as co
from coflowopt.cli import main
from coflowopt.interchange import save_instance
from coflowopt.model import CoflowSpec, Instance, JobSpec, build_instance
from coflowopt.schedulers import SolverStopped
from coflowopt.schedulers.lp_phases import value_above


class Collect:
    """A progress callback that also hears phase lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ticks = 0

    def __call__(self, done: float, total: float) -> None:
        self.ticks += 1

    def phase(self, text: str) -> None:
        self.lines.append(text)


def _batch(n: int, ports: int, seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    return build_instance(ports, coflows=[
        CoflowSpec([(int(rng.integers(ports)), int(rng.integers(ports)),
                     float(rng.integers(1, 5))) for _ in range(3)]) for _ in range(n)])


def _loaded_ports(inst: Instance) -> int:
    return len(set(inst.flow_src.tolist()) | {inst.ports + d for d in inst.flow_dst.tolist()})


def test_approximate_reports_model_size_and_phases() -> None:
    inst = _batch(6, 4, seed=1)
    got = Collect()
    co.run(inst, "approximate", progress=got)
    text = "\n".join(got.lines)
    n, P = inst.n_coflows, _loaded_ports(inst)
    # hand count of the ordering LP: f_k per coflow plus one delta per pair of coflows; one
    # row per loaded port and coflow
    assert f"{n + n * (n - 1) // 2:,} variables" in text
    assert f"{P * n:,} constraints" in text and "nonzeros" in text
    for phase in ("building", "solving", "rounding", "time limit 600 s"):
        assert phase in text, (phase, text)


def test_om_lp_reports_model_size_and_phases() -> None:
    job = JobSpec([CoflowSpec([(0, 1, 2.0)]), CoflowSpec([(1, 0, 1.0)]),
                   CoflowSpec([(1, 1, 1.0)])], starts_after=[(0, 1)])
    inst = build_instance(2, jobs=[job, JobSpec([CoflowSpec([(0, 0, 1.0)])])])
    got = Collect()
    co.run(inst, "om-lp", progress=got)
    text = "\n".join(got.lines)
    n, J, P = inst.n_coflows, inst.n_jobs, _loaded_ports(inst)
    # C_c, C_j and one delta per pair; rows: one T2 per edge, one T3 per loaded port and
    # coflow, one T5 per coflow
    assert f"{n + J + n * (n - 1) // 2:,} variables" in text
    assert f"{1 + P * n + n:,} constraints" in text
    for phase in ("building", "solving", "rounding"):
        assert phase in text, (phase, text)


def test_small_lps_are_quiet_without_a_phase_sink(capsys) -> None:
    co.run(_batch(6, 4, seed=1), "approximate")
    assert capsys.readouterr().err == ""  # 6 coflows: far below LOUD_NONZEROS


def test_tiny_time_limit_stops_with_one_line() -> None:
    inst = _batch(80, 10, seed=2)
    for name in ("approximate", "om-lp"):
        with pytest.raises(SolverStopped) as exc:
            co.run(inst, name, params={"time_limit": 0.001})
        msg = str(exc.value)
        assert "\n" not in msg and msg.startswith(f"{name}: ") and "80 coflows" in msg, msg
        assert "time_limit = 0.001 s" in msg and "raise time_limit" in msg, msg


def test_cli_prints_the_stop_without_traceback(tmp_path, capsys) -> None:
    path = tmp_path / "batch.json"
    save_instance(_batch(80, 10, seed=2), path)
    assert main(["run", "--trace", str(path), "-s", "approximate",
                 "-p", "time_limit=0.001"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("coflowopt run: error: approximate: the ordering LP on 80 coflows")


@pytest.mark.parametrize("name", ["approximate", "om-lp"])
def test_size_refusal_names_the_parameter(name: str) -> None:
    inst = _batch(10, 4, seed=3)
    got = Collect()
    with pytest.raises(SolverStopped) as exc:
        co.run(inst, name, params={"max_nonzeros": 10.0}, progress=got)
    msg = str(exc.value)
    assert "\n" not in msg and "over max_nonzeros" in msg and "-p max_nonzeros=" in msg
    assert got.lines == []  # refused before building anything
    # the value it suggests lifts the refusal
    lift = float(msg.split("-p max_nonzeros=")[1].rstrip(")"))
    assert co.run(inst, name, params={"max_nonzeros": lift}).valid is not None


def test_suggested_values_round_up() -> None:
    assert value_above(81_342_744) == "8.2e+07"  # FB2010's ordering LP; 8.1e+07 is below it
    assert value_above(99.1) == "1e+02" and value_above(12) == "12"


def test_om_lp_methods_reach_the_same_lp_value() -> None:
    """HiGHS's interior point (``lp_solver=ipm``) and its default choice solve the same LP."""
    inst = _batch(12, 4, seed=4)
    a = co.run(inst, "om-lp").valid.meta["lp_value"]
    b = co.run(inst, "om-lp", params={"lp_solver": "ipm"}).valid.meta["lp_value"]
    assert a == pytest.approx(b, rel=1e-7)
