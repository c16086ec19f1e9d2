"""The one table of workload generators (coflowopt.workloads.registry)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from coflowopt.bench.workloads import build_workload, get_generator, workload_generators
from coflowopt.model import Instance
from coflowopt.workloads import (
    ParamError,
    build,
    dags,
    find_fb2010,
    generator,
    generators,
    read_trace,
    registry,
    synthetic_trace,
)

TRACE = "4 3\n1 0 2 0 1 1 2:4.0\n2 100 1 3 2 0:2.0 1:3.0\n3 250 1 2 1 3:1.0\n"


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    p = tmp_path / "t.txt"
    p.write_text(TRACE)
    return p


def cases(trace: Path) -> dict[str, tuple[dict[str, Any], Any]]:
    """Per canonical generator: small parameters, and the direct call they stand for."""
    return {
        "synthetic": ({"n_coflows": 12, "ports": 8, "load": 0.5},
                      lambda s: synthetic_trace(12, seed=s, ports=8, load=0.5)),
        "trace": ({"path": str(trace)}, lambda s: read_trace(trace)),
        "ggen_fan_in_fan_out": ({"n_jobs": 2, "ports": 6, "nodes": [4, 6]},
                                lambda s: dags.ggen_fan_in_fan_out(2, ports=6, nodes=(4, 6),
                                                                   seed=s)),
        "rooted_trees": ({"n_jobs": 3, "ports": 5, "kind": "fan-out"},
                         lambda s: dags.rooted_trees(3, ports=5, kind="fan-out", seed=s)),
        "layered_dags": ({"n_jobs": 2, "ports": 6, "weight": "uniform", "arrival_rate": 1},
                         lambda s: dags.layered_dags(2, ports=6, weight="uniform",
                                                     arrival_rate=1.0, seed=s)),
        "tpcds_like": ({"n_jobs": 2, "ports": 6, "mix": {"shares": [1, 1, 1, 1]}},
                       lambda s: dags.tpcds_like(2, ports=6, seed=s, mix=dags.CoflowClassMix(
                           shares=(1.0, 1.0, 1.0, 1.0)))),
        "fb2010_jobs": ({"trace": str(trace), "mean_coflows": 2, "shape": "fan-in"},
                        lambda s: dags.fb2010_jobs(trace, mean_coflows=2, shape="fan-in",
                                                   seed=s)),
    }


def check_valid(inst: Instance) -> None:
    from coflowopt.schedulers import get
    from coflowopt.validate import validate

    assert inst.n_coflows > 0 and inst.n_flows > 0
    assert np.all(inst.flow_volume > 0)
    assert 0 <= inst.flow_src.min() and inst.flow_src.max() < inst.ports
    assert 0 <= inst.flow_dst.min() and inst.flow_dst.max() < inst.ports
    assert np.all(inst.release >= 0)
    validate(inst, get("sequential")(inst))  # raises when infeasible


def test_table_lists_canonical_names_only(trace_file: Path) -> None:
    names = set(generators())
    assert names == set(cases(trace_file))
    assert not names & set(registry.aliases())
    assert set(workload_generators()) == names
    for name, gen in generators().items():
        assert gen.name == name and gen.summary and gen.time_unit in ("ms", "unit")
        assert dataclasses.is_dataclass(gen.params)


@pytest.mark.parametrize("name", ["synthetic", "trace", "ggen_fan_in_fan_out", "rooted_trees",
                                  "layered_dags", "tpcds_like", "fb2010_jobs"])
def test_every_generator_builds_the_direct_call(name: str, trace_file: Path) -> None:
    params, direct = cases(trace_file)[name]
    for seed in (0, 3):
        inst = build(name, params, seed)
        check_valid(inst)
        assert inst == direct(seed)
        assert build_workload(name, params, seed) == inst
    if generator(name).seeded and name != "fb2010_jobs":  # 3 trace coflows: few shuffles
        assert build(name, params, 1) != build(name, params, 2)
    assert inst.time_unit == generator(name).time_unit


def test_params_dataclass_mirrors_the_signature() -> None:
    for gen in generators().values():
        sig = inspect.signature(gen.func)
        expected = {p.name: p.default for p in sig.parameters.values() if p.name != "seed"}
        got = {f.name: f.default for f in gen.fields}
        assert got.keys() == expected.keys()
        for k, v in expected.items():
            if v is inspect.Parameter.empty:
                assert got[k] is dataclasses.MISSING
            else:
                assert got[k] == v
        assert gen.seeded == ("seed" in sig.parameters)
        obj = gen.parse({k: v for k, v in gen.defaults().items()}
                        | {k: 1 for k in gen.required() if k == "n_jobs"}
                        | ({"path": "x"} if gen.name == "trace" else {}))
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.ports = 3  # type: ignore[misc]


def test_build_equals_direct_call_defaults() -> None:
    assert build("synthetic", {"n_coflows": 30}, 1) == synthetic_trace(30, seed=1)
    assert build("synthetic", {"n_coflows": 30, "capacity": 1}, 1) == \
        synthetic_trace(30, seed=1, capacity=1.0)  # int accepted for float
    assert build("tpcds_like", {"n_jobs": 2}, 4) == dags.tpcds_like(2, seed=4)


@pytest.mark.parametrize(("alias", "canonical", "fixed"), [
    ("ggen", "ggen_fan_in_fan_out", {}),
    ("fan-in", "rooted_trees", {"kind": "fan-in"}),
    ("fan-out", "rooted_trees", {"kind": "fan-out"}),
    ("layered", "layered_dags", {}),
    ("tpcds", "tpcds_like", {}),
    ("fb2010", "fb2010_jobs", {}),
    ("synthetic_trace", "synthetic", {}),
    ("read_trace", "trace", {}),
])
def test_aliases_resolve(alias: str, canonical: str, fixed: dict[str, Any],
                         trace_file: Path) -> None:
    assert registry.aliases()[alias] == canonical
    assert registry.canonical_name(alias) == canonical
    gen = generator(alias)
    assert gen.name == canonical and dict(gen.fixed) == fixed
    assert get_generator(alias).name == canonical
    params = dict(cases(trace_file)[canonical][0])
    params.pop("kind", None)
    assert build(alias, params, 5) == build(canonical, {**params, **fixed}, 5)
    assert alias not in generators()


def test_alias_fixed_parameter_conflict() -> None:
    assert build("fan-in", {"n_jobs": 2, "kind": "fan-in"}, 0) == \
        dags.rooted_trees(2, kind="fan-in", seed=0)
    with pytest.raises(ParamError, match=r"params\.kind: 'fan-out' conflicts with the "
                                         r"generator name 'fan-in'"):
        build("fan-in", {"n_jobs": 2, "kind": "fan-out"}, 0)


def test_unknown_generator_lists_names() -> None:
    with pytest.raises(KeyError) as info:
        generator("nope")
    msg = info.value.args[0]
    assert "'nope'" in msg and "synthetic" in msg and "ggen" in msg


@pytest.mark.parametrize(("name", "params", "field", "fragment"), [
    ("synthetic", {"n_coflows": "ten"}, "n_coflows", "expected int, got 'ten'"),
    ("synthetic", {"n_coflows": 2.0}, "n_coflows", "expected int, got 2.0"),
    ("synthetic", {"n_coflows": True}, "n_coflows", "expected int, got True"),
    ("synthetic", {"load": "high"}, "load", "expected float or None, got 'high'"),
    ("synthetic", {"n_coflowz": 3}, "n_coflowz", "unknown parameter (known: n_coflows,"),
    ("synthetic", {"seed": 3}, "seed", "not a parameter"),
    ("synthetic", {"params": {"interarrival_shape": "x"}}, "params.interarrival_shape",
     "expected float, got 'x'"),
    ("synthetic", {"params": {"interarrival_scale": -1}}, "params", "must be > 0"),
    ("tpcds_like", {}, "n_jobs", "missing (required parameter)"),
    ("tpcds_like", {"n_jobs": 2, "weight": "heavy"}, "weight",
     "expected one of 'unit', 'uniform', got 'heavy'"),
    ("tpcds_like", {"n_jobs": 2, "scans": [2, "x"]}, "scans[1]", "expected int, got 'x'"),
    ("tpcds_like", {"n_jobs": 2, "scans": [2, 3, 4]}, "scans",
     "expected int or a list [int, int]"),
    ("tpcds_like", {"n_jobs": 2, "mix": {"shares": [1, "a"]}}, "mix.shares[1]",
     "expected float, got 'a'"),
    ("tpcds_like", {"n_jobs": 2, "mix": {"colours": 1}}, "mix.colours", "unknown field"),
    ("tpcds_like", {"n_jobs": 2, "mix": {"shares": [1, 2]}}, "mix", "4 classes but 2 shares"),
    ("trace", {}, "path", "missing"),
    ("trace", {"path": "no/such/file.txt"}, "path", "file not found"),
])
def test_mistyped_parameter_names_the_field(name: str, params: dict[str, Any], field: str,
                                            fragment: str) -> None:
    with pytest.raises(ParamError) as info:
        build(name, params, 0)
    err = info.value
    assert err.generator == name and err.field == field
    assert fragment in err.problem, err.problem
    assert str(err).startswith(f"workload generator {name!r}: params.{field}: ")


def test_parse_without_base_dir_checks_no_files() -> None:
    p = generator("trace").parse({"path": "not-there.txt"})
    assert p.path == "not-there.txt"
    with pytest.raises(ParamError, match="file not found"):
        generator("trace").parse({"path": "not-there.txt"}, base_dir=".")


def test_relative_paths_resolve_against_base_dir(trace_file: Path) -> None:
    inst = build("trace", {"path": trace_file.name}, 0, base_dir=trace_file.parent)
    assert inst == read_trace(trace_file)


def test_fb2010_path_value() -> None:
    if find_fb2010() is None:
        pytest.skip("FB2010 trace not found")
    p = generator("fb2010_jobs").parse({}, base_dir=".")
    assert Path(p.trace) == find_fb2010()


def test_register_a_plugin_generator() -> None:
    def tiny(n: int = 2, *, seed: int | None = None, scale: float = 1.0) -> Instance:
        """Two-port instance of n coflows."""
        rng = np.random.default_rng(seed)
        vol = rng.uniform(1, 2, n) * scale
        return Instance.from_arrays(2, [0] * n, [1] * n, vol, list(range(n)))

    gen = registry.register("test-registry-tiny", tiny, aliases=("test-registry-tiny-old",))
    assert gen.summary == "Two-port instance of n coflows." and gen.seeded
    assert build("test-registry-tiny-old", {"n": 3, "scale": 2}, 7) == tiny(3, seed=7, scale=2.0)
    with pytest.raises(ParamError, match=r"params\.n: expected int"):
        build("test-registry-tiny", {"n": "3"}, 0)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("test-registry-tiny", tiny)
