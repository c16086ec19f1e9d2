"""Suite files: parsed into dataclasses, and rejected before anything runs, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tiny_suite, write

from coflowopt.bench import (
    DEFAULT_SUITE_TOML,
    SuiteError,
    default_suite,
    expand,
    load_suite,
    parse_suite,
    run_suite,
    task_key,
)
from coflowopt.workloads import find_fb2010

ROOT = Path(__file__).resolve().parents[2]


def test_default_suite_is_benchmarks_default_toml() -> None:
    assert (ROOT / "benchmarks" / "default.toml").read_text() == DEFAULT_SUITE_TOML
    s = default_suite()
    assert s.name == "default" and s.n_tasks == len(expand(s)) >= 3
    assert "sequential" in [x.name for x in s.schedulers]


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks").glob("*.toml")),
                         ids=lambda p: p.stem)
def test_shipped_suites_parse(path: Path) -> None:
    needs_trace = "fb2010" in path.read_text()
    s = load_suite(path, check=not needs_trace or find_fb2010() is not None)
    assert s.workloads and s.schedulers


def test_parsed_fields(tmp_path: Path) -> None:
    text = tiny_suite(seeds="2", extra="timeout = 5\nisolate = true",
                      schedulers='[[schedulers]]\nname = "sequential"\nlabel = "seq"\n'
                                 "timeout = 1.5\n")
    s = load_suite(write(tmp_path, text))
    assert s.seeds == (0, 1) and s.timeout == 5.0 and s.isolate
    assert s.schedulers[0].label == "seq" and s.schedulers[0].timeout == 1.5
    assert s.workloads[0].params == {"n_coflows": 12, "ports": 8}
    tasks = expand(s)
    assert len(tasks) == s.n_tasks == 4
    assert tasks[0].timeout == 1.5 and tasks[0].isolate
    # round trip through the folder's suite.json shape
    again = parse_suite(text, source="again")
    assert again.to_dict() == s.to_dict()


def test_task_keys_are_stable_and_change_with_params(tmp_path: Path) -> None:
    s = load_suite(write(tmp_path, tiny_suite()))
    keys = [t.key for t in expand(s)]
    assert len(set(keys)) == len(keys)
    assert keys == [t.key for t in expand(load_suite(write(tmp_path, tiny_suite())))]
    w, sch = s.workloads[0], s.schedulers[0]
    assert task_key(w, sch, 0) != task_key(w, sch, 1)
    s2 = load_suite(write(tmp_path, tiny_suite().replace("n_coflows = 12", "n_coflows = 13")))
    assert task_key(s2.workloads[0], sch, 0) != task_key(w, sch, 0)


def test_workload_seeds_override(tmp_path: Path) -> None:
    text = tiny_suite(workloads='[[workloads]]\nname = "a"\ngenerator = "synthetic"\n'
                                "params = { n_coflows = 5, ports = 4 }\nseeds = [7]\n")
    s = load_suite(write(tmp_path, text))
    assert [t.seed for t in expand(s)] == [7]


def test_a_scheduler_may_run_on_some_workloads_only(tmp_path: Path) -> None:
    text = tiny_suite(schedulers='[[schedulers]]\nname = "sequential"\n\n'
                                 '[[schedulers]]\nname = "fifo"\nworkloads = ["tpcds-3"]\n')
    s = load_suite(write(tmp_path, text))
    pairs = [(t.workload.name, t.scheduler.label) for t in expand(s)]
    assert pairs.count(("syn-12", "sequential")) == pairs.count(("tpcds-3", "sequential")) == 3
    assert pairs.count(("tpcds-3", "fifo")) == 3 and ("syn-12", "fifo") not in pairs
    assert s.n_tasks == len(pairs) == 9
    assert parse_suite(text, source="again", base_dir=tmp_path).to_dict() == s.to_dict()


def _rejected(tmp_path: Path, text: str, *fragments: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    msg = str(info.value)
    assert msg.startswith(str(path)), msg
    for f in fragments:
        assert f in msg, msg
    # run_suite refuses it too, before creating anything
    out = tmp_path / "out"
    with pytest.raises(SuiteError):
        run_suite(path, out=out, executor="inline")
    assert not out.exists()


def test_unknown_workload_of_a_scheduler_rejected(tmp_path: Path) -> None:
    text = tiny_suite(schedulers='[[schedulers]]\nname = "sequential"\nworkloads = ["syn-13"]\n')
    _rejected(tmp_path, text, "schedulers[0].workloads", "'syn-13'", "syn-12, tpcds-3")


def test_unknown_scheduler_rejected(tmp_path: Path) -> None:
    text = tiny_suite(schedulers='[[schedulers]]\nname = "sequential"\n\n'
                                 '[[schedulers]]\nname = "no-such-scheduler"\n')
    _rejected(tmp_path, text, "schedulers[1].name", "'no-such-scheduler'", "sequential")


@pytest.mark.parametrize(("old", "new", "field"), [
    ('name = "tiny"\n', "", "name: missing"),
    ('generator = "synthetic"\n', "", "workloads[0].generator: missing"),
    ('[[schedulers]]\nname = "sequential"\n', '[[schedulers]]\nlabel = "x"\n',
     "schedulers[0].name: missing"),
    ('[[schedulers]]\nname = "sequential"\n', "", "schedulers: missing"),
])
def test_missing_field_rejected(tmp_path: Path, old: str, new: str, field: str) -> None:
    text = tiny_suite()
    assert old in text
    _rejected(tmp_path, text.replace(old, new, 1), field)


@pytest.mark.parametrize(("old", "new", "fragments"), [
    ("n_coflows = 12", "n_coflowz = 12", ("workloads[0].params.n_coflowz", "unknown parameter")),
    ('name = "sequential"\n', 'name = "sequential"\nparams = { speed = 2 }\n',
     ("schedulers[0].params.speed", "unknown parameter")),
    ('generator = "synthetic"', 'generator = "nope"', ("workloads[0].generator", "'nope'")),
    ('metrics = ["avg_cct", "weighted_completion"]', 'metrics = ["avg_ccct"]',
     ("metrics[0]", "avg_ccct")),
    ("seeds = [0, 1, 2]", "seeds = [0, -1]", ("seeds[1]",)),
    ("seeds = [0, 1, 2]", 'seeds = [0]\ncolour = "red"', ("colour: unknown field",)),
    ('name = "sequential"\n', 'name = "sequential"\ntimeout = -1\n', ("schedulers[0].timeout",)),
    ('name = "sequential"\n', 'name = "sequential"\n\n[[schedulers]]\nname = "sequential"\n',
     ("schedulers[1].label", "duplicate")),
    ('name = "tpcds-3"', 'name = "syn-12"', ("workloads[1].name", "duplicate")),
    ('imports = ["bench_plugins"]', 'imports = ["no_such_module_xyz"]', ("imports[0]",)),
    ('params = { n_jobs = 3, ports = 6, weight = "uniform" }', "params = { ports = 6 }",
     ("workloads[1].params.n_jobs", "missing")),
])
def test_bad_field_rejected(tmp_path: Path, old: str, new: str, fragments: tuple[str, ...]
                            ) -> None:
    text = tiny_suite()
    assert old in text
    _rejected(tmp_path, text.replace(old, new, 1), *fragments)


def test_missing_trace_file_rejected(tmp_path: Path) -> None:
    text = tiny_suite(workloads='[[workloads]]\nname = "t"\ngenerator = "trace"\n'
                                'params = { path = "missing.txt" }\n')
    _rejected(tmp_path, text, "workloads[0].params.path", "missing.txt")


def test_trace_path_relative_to_suite(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("4 2\n1 0 2 0 1 1 2:4.0\n2 100 1 3 2 0:2.0 1:3.0\n")
    text = tiny_suite(workloads='[[workloads]]\nname = "t"\ngenerator = "trace"\n'
                                'params = { path = "t.txt" }\n', seeds="[0]")
    run = run_suite(write(tmp_path, text), out=tmp_path / "out", executor="inline")
    df = run.results()
    assert list(df["status"]) == ["ok"] and int(df["n_coflows"].iloc[0]) == 2


def test_references_and_optimum_checked(tmp_path: Path) -> None:
    ref = ('\n[[references]]\nscheduler = "varys"\nworkload = "nope"\nmetric = "avg_cct"\n'
           "value = 1.0\n")
    _rejected(tmp_path, tiny_suite() + ref, "references[0].workload")
    _rejected(tmp_path, tiny_suite(extra='optimum = "lp"'), "optimum", "'lp'")


def test_not_toml(tmp_path: Path) -> None:
    _rejected(tmp_path, "name = \n", "not valid TOML")


def test_coflowsim_semantics_entries(tmp_path: Path) -> None:
    single = ('[[workloads]]\nname = "syn-12"\ngenerator = "synthetic"\n'
              "params = { n_coflows = 12, ports = 8 }\n")
    text = tiny_suite(seeds="[0]", workloads=single, schedulers=(
        '[[schedulers]]\nname = "varys"\n\n'
        '[[schedulers]]\nname = "sebf"\nlabel = "sebf-coflowsim"\nsemantics = "coflowsim"\n\n'
        '[[schedulers]]\nname = "dark"\nsemantics = "coflowsim"\n'
        'params = { quantum_ms = 1 }\n'))
    s = load_suite(write(tmp_path, text))
    assert [x.semantics for x in s.schedulers] == ["fluid", "coflowsim", "coflowsim"]
    assert parse_suite(text, source="again").to_dict() == s.to_dict()
    # the semantics is part of what a task is
    keys = {t.scheduler.label: t.key for t in expand(s)}
    assert len(set(keys.values())) == 3
    run = run_suite(s, out=tmp_path / "out", executor="inline")
    df = run.results()
    assert set(df["status"]) == {"ok"}
    sim = df[df["scheduler"] == "sebf-coflowsim"].iloc[0]
    # coflowsim times are whole 8 ms quanta, measured from the admission epoch
    assert sim["avg_cct"] * sim["n_coflows"] % 8 == pytest.approx(0, abs=1e-6)


@pytest.mark.parametrize(("entry", "field", "fragment"), [
    ('name = "sebf"\nsemantics = "java"', "schedulers[0].semantics", "unknown semantics"),
    ('name = "sincronia"\nsemantics = "coflowsim"', "schedulers[0].name", "(coflowsim)"),
    ('name = "sebf"\nsemantics = "coflowsim"\nparams = { quantum = 3 }',
     "schedulers[0].params.quantum", "unknown parameter"),
    ('name = "sebf"\nsemantics = "coflowsim"\nparams = { quantum_ms = 3 }',
     "schedulers[0].params", "multiple of quantum_ms"),
])
def test_coflowsim_semantics_rejected(tmp_path: Path, entry: str, field: str,
                                      fragment: str) -> None:
    text = tiny_suite(schedulers=f"[[schedulers]]\n{entry}\n")
    with pytest.raises(SuiteError) as err:
        load_suite(write(tmp_path, text))
    assert field in str(err.value) and fragment in str(err.value)


# -- workload generators: the registry's names and parameter types, checked at parse time -----


@pytest.mark.parametrize(("old", "new", "fragments"), [
    ("n_coflows = 12", 'n_coflows = "ten"',
     ("workloads[0].params.n_coflows: expected int, got 'ten'", "'synthetic'")),
    ("n_coflows = 12", "n_coflows = 12, load = \"high\"",
     ("workloads[0].params.load: expected float or None, got 'high'",)),
    ('weight = "uniform"', 'weight = "heavy"',
     ("workloads[1].params.weight: expected one of 'unit', 'uniform', got 'heavy'",)),
    ("ports = 6,", 'ports = 6, mix = { shares = [1, "a"] },',
     ("workloads[1].params.mix.shares[1]: expected float, got 'a'",)),
    ("ports = 6,", "ports = 6, seed = 3,", ("workloads[1].params.seed", "not a parameter")),
])
def test_mistyped_workload_parameter_rejected_at_parse_time(
        tmp_path: Path, old: str, new: str, fragments: tuple[str, ...]) -> None:
    text = tiny_suite()
    assert old in text
    _rejected(tmp_path, text.replace(old, new, 1), *fragments)


def test_int_accepted_for_float_parameter(tmp_path: Path) -> None:
    text = tiny_suite().replace("n_coflows = 12", "n_coflows = 12, load = 1, capacity = 1")
    s = load_suite(write(tmp_path, text))
    assert s.workloads[0].params["load"] == 1  # kept as written (task keys stay stable)


def test_alias_generator_names_still_parse_and_build(tmp_path: Path) -> None:
    from coflowopt.bench.workloads import build_workload

    text = tiny_suite().replace('generator = "tpcds_like"', 'generator = "tpcds"')
    s = load_suite(write(tmp_path, text))
    w = s.workloads[1]
    assert w.generator == "tpcds"  # as written
    assert build_workload(w.generator, w.params, 0) == build_workload("tpcds_like", w.params, 0)
    trees = ('[[workloads]]\nname = "f"\ngenerator = "fan-out"\nparams = { n_jobs = 2 }\n')
    load_suite(write(tmp_path, tiny_suite(workloads=trees)))
    clash = trees.replace("n_jobs = 2", 'n_jobs = 2, kind = "fan-in"')
    _rejected(tmp_path, tiny_suite(workloads=clash), "workloads[0].params.kind", "conflicts")


def test_default_suite_runs_at_a_stated_load() -> None:
    from coflowopt.bench.workloads import build_workload

    w, jobs = default_suite().workloads
    assert jobs.generator == "tpcds_like"  # the multi-stage workload beside it
    load = w.params["load"]
    assert w.generator == "synthetic" and 0 < load and f"load{load}" in w.name
    assert f"load {load}" in default_suite().description
    inst = build_workload(w.generator, w.params, 0)
    span = float(inst.coflow_release.max() - inst.coflow_release.min())
    util = float(inst.flow_volume.sum()) / (inst.ports * inst.fabric.capacity_in[0] * span)
    assert util == pytest.approx(load, rel=1e-3)


def test_algorithm_seeds_run_one_instance_with_several_algorithm_seeds(tmp_path: Path) -> None:
    """``algorithm_seeds = n``: n tasks per (workload, seed), the same instance seed, the
    algorithm seeds SeedSequence(seed).spawn(n)[k] (run 0: the usual seed and key)."""
    import numpy as np

    from coflowopt.bench import load_results
    from coflowopt.bench.tasks import algorithm_seed

    text = tiny_suite(seeds="[4]", schedulers='[[schedulers]]\nname = "sequential"\n'
                                               "algorithm_seeds = 3\n"
                                               'workloads = ["syn-12"]\n')
    s = load_suite(write(tmp_path, text))
    tasks = expand(s)
    assert s.n_tasks == len(tasks) == 3
    assert [t.seed for t in tasks] == [4, 4, 4] and [t.run for t in tasks] == [0, 1, 2]
    expected = [int(c.generate_state(1, dtype=np.uint32)[0])
                for c in np.random.SeedSequence(4).spawn(3)]
    assert [t.algorithm_seed for t in tasks] == expected
    assert algorithm_seed(4) == int(np.random.SeedSequence(4).spawn(1)[0]
                                    .generate_state(1, dtype=np.uint32)[0]) == expected[0]
    assert tasks[0].key == task_key(s.workloads[0], s.schedulers[0], 4)
    assert len({t.key for t in tasks}) == 3
    assert parse_suite(text, source="again", base_dir=tmp_path).to_dict() == s.to_dict()
    out = tmp_path / "out"
    run_suite(write(tmp_path, text), out=out, executor="inline")
    rows = load_results(out)
    assert len(rows) == 3 and set(rows["seed"]) == {4}
    assert sorted(rows["algorithm_seed"].astype(int)) == sorted(expected)


@pytest.mark.parametrize("value", ["0", "1.5", "true", '"3"'])
def test_bad_algorithm_seeds_rejected(tmp_path: Path, value: str) -> None:
    text = tiny_suite(schedulers=f'[[schedulers]]\nname = "sequential"\n'
                                 f"algorithm_seeds = {value}\n")
    _rejected(tmp_path, text, "schedulers[0].algorithm_seeds", "integer >= 1")
