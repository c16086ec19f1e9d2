"""The Instance model: derived sizes against the spec's worked examples, and bad input."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from strategies import example2, instances

from coflowopt import (
    CoflowSpec,
    Fabric,
    Instance,
    InstanceError,
    JobSpec,
    build_instance,
    from_networkx,
)


def test_effective_size_example1() -> None:
    # dag-coflows spec Example 1: row sums (3,4,3), column sums (3,3,4) -> eff = 4
    d = np.array([[1, 2, 0], [0, 1, 3], [2, 0, 1]])
    inst = build_instance(3, coflows=[d])
    assert inst.effective_size.tolist() == [4.0]
    assert inst.n_flows == 6
    assert np.array_equal(inst.demand_matrix(0), d)


def test_example2_sizes() -> None:
    # dag-coflows spec Example 2, table of eff, Delta_j, T_j
    inst = example2()
    assert inst.effective_size.tolist() == [2, 3, 2, 2, 2]
    assert inst.aggregate_size.tolist() == [4, 2]
    assert inst.critical_path.tolist() == [5, 4]
    li, lo = inst.job_port_loads
    loads = np.hstack([li.toarray(), lo.toarray()])
    assert loads[0].tolist() == [4, 4, 1, 3, 2, 4]
    assert loads[1].tolist() == [1, 2, 2, 2, 2, 1]
    # effective release of J2's coflows is the job's release 1
    assert inst.release.tolist() == [0, 0, 0, 1, 1]
    assert inst.earliest_completion.tolist() == [2, 3, 5, 3, 5]


def test_capacity_scales_isolation_time() -> None:
    fab = Fabric(2, [2.0, 1.0], [1.0, 4.0])
    inst = build_instance(fab, coflows=[[(0, 0, 4.0), (1, 1, 2.0)]])
    # ingress 0: 4/2 = 2, ingress 1: 2/1 = 2, egress 0: 4/1 = 4, egress 1: 2/4
    assert inst.isolation_time.tolist() == [4.0]
    assert inst.effective_size.tolist() == [4.0]


def test_sizes_width_length() -> None:
    inst = build_instance(4, coflows=[[(0, 1, 2.0), (0, 2, 5.0)], [(3, 3, 1.0)]])
    assert inst.coflow_size.tolist() == [7.0, 1.0]
    assert inst.coflow_width.tolist() == [2, 1]
    assert inst.coflow_length.tolist() == [5.0, 1.0]


def test_immutable() -> None:
    inst = example2()
    with pytest.raises(ValueError):
        inst.flow_volume[0] = 3.0
    with pytest.raises(AttributeError):
        inst.time_unit = "ms"  # type: ignore[misc]


def test_unsorted_flows_grouped_by_coflow() -> None:
    inst = Instance.from_arrays(2, [0, 1, 0], [1, 0, 0], [1.0, 2.0, 3.0], [1, 0, 1])
    assert inst.flows_of(0).tolist() == [1]
    assert inst.flows_of(1).tolist() == [0, 2]


def test_merge_parallel_flows() -> None:
    inst = build_instance(2, coflows=[[(0, 1, 1.0), (0, 1, 2.0), (1, 0, 1.0)], [(0, 1, 4.0)]])
    merged = inst.merge_parallel_flows()
    assert merged.n_flows == 3
    assert merged.coflow_size.tolist() == inst.coflow_size.tolist()
    assert np.array_equal(merged.demand_matrix(0), inst.demand_matrix(0))


@settings(max_examples=40, deadline=None)
@given(instances())
def test_networkx_round_trip(inst: Instance) -> None:
    g = inst.to_networkx()
    assert nx.is_directed_acyclic_graph(g)
    back = from_networkx(g)
    assert back == inst


def test_from_networkx_one_graph_per_job() -> None:
    g = nx.DiGraph(weight=3.0, release=2.0, job_id="q1")
    g.add_node("scan", flows=[(0, 1, 1.0)])
    g.add_node("join", flows=[(1, 0, 2.0)])
    g.add_edge("scan", "join")
    inst = from_networkx([g], ports=2)
    assert inst.job_weight.tolist() == [3.0]
    assert inst.coflow_id.tolist() == ["scan", "join"]
    assert inst.starts_after.tolist() == [[0, 1]]
    assert inst.critical_path.tolist() == [3.0]


# -- bad input: each a clear error naming the id ---------------------------------------------

def _flows(**over):
    base = dict(src=[0, 1], dst=[1, 0], volume=[1.0, 2.0], coflow=[0, 1])
    base.update(over)
    return base


@pytest.mark.parametrize("field,value,pattern", [
    ("volume", [1.0, -2.0], r"flows\.volume: value -2\.0 for flow 1 of coflow 'b'"),
    ("volume", [np.nan, 2.0], r"flows\.volume: NaN for flow 0 of coflow 'a'"),
    ("src", [0, 5], r"flows\.src: port 5 out of range 0\.\.1 for flow 1 of coflow 'b'"),
    ("dst", [-1, 0], r"flows\.dst: port -1 out of range"),
])
def test_bad_flow_columns(field: str, value: list, pattern: str) -> None:
    f = _flows(**{field: value})
    with pytest.raises(InstanceError, match=pattern):
        Instance.from_arrays(2, f["src"], f["dst"], f["volume"], f["coflow"],
                             coflow_id=["a", "b"])


def test_cycle_named() -> None:
    c = [CoflowSpec([(0, 0, 1.0)], id=x) for x in ("x", "y", "z")]
    with pytest.raises(InstanceError, match=r"cycle through coflows .*'x'.*'y'.*job 'J'"):
        build_instance(1, jobs=[JobSpec(c, [(0, 1), (1, 2), (2, 0)], id="J")])


def test_cross_job_edge_named() -> None:
    with pytest.raises(InstanceError, match=r"edge between coflow 'a'.*coflow 'b'.*crosses jobs"):
        Instance.from_arrays(2, [0, 1], [1, 0], [1.0, 1.0], [0, 1], coflow_id=["a", "b"],
                             coflow_job=[0, 1], starts_after=[[0, 1]])


@pytest.mark.parametrize("kw,pattern", [
    (dict(coflow_id=["a", "a"]), r"coflows\.id: duplicate id 'a'"),
    (dict(coflow_job=[0, 0], job_id=[7, 7]), r"jobs\.id: expected 1 labels|duplicate id 7"),
    (dict(coflow_job=[0, 1], job_id=[7, 7]), r"jobs\.id: duplicate id 7"),
])
def test_duplicate_ids(kw: dict, pattern: str) -> None:
    with pytest.raises(InstanceError, match=pattern):
        Instance.from_arrays(2, [0, 1], [1, 0], [1.0, 1.0], [0, 1], **kw)


def test_other_errors() -> None:
    with pytest.raises(InstanceError, match=r"self-loop on coflow 0"):
        Instance.from_arrays(1, [0], [0], [1.0], [0], starts_after=[[0, 0]])
    with pytest.raises(InstanceError, match=r"coflows\.release: value -1\.0 for coflow 0"):
        Instance.from_arrays(1, [0], [0], [1.0], [0], coflow_release=[-1.0])
    with pytest.raises(InstanceError, match=r"capacity_in\[1\]"):
        Fabric(2, [1.0, 0.0])
    with pytest.raises(InstanceError, match=r"refers to a coflow outside"):
        build_instance(1, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)])], [(0, 3)])])
