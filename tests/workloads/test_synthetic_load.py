"""The ``load`` knob of the FB-like generator: arrivals compressed to a target port utilisation."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from coflowopt.model import Instance
from coflowopt.workloads import synthetic_trace

# sha256 of the flow and release arrays of synthetic_trace(n, seed=s, ports=p), computed with
# the generator as it was before `load` existed: load=None must keep these instances.
DIGESTS = {
    (30, 1, 150): "f52e890f381b7791bf6eac15180573080c1ee66ec37d7e51d8ba3e37776ad23d",
    (100, 0, 150): "f03a867919e6803e86672012b259518281ef8d07bec18e9f7132f4c11364c726",
    (12, 3, 8): "1e74ddf1aa96c1c3684e34cd1feafeebaef84d54b3ef8a5d28e413abd5ffbc54",
}


def digest(inst: Instance) -> str:
    h = hashlib.sha256()
    for a in (inst.flow_src, inst.flow_dst, inst.flow_volume, inst.flow_coflow,
              inst.coflow_release, inst.job_release):
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def utilisation(inst: Instance) -> float:
    """Mean over the 2m ports of (MB through the port) / (capacity x arrival span)."""
    m = inst.ports
    vol = np.asarray(inst.flow_volume, dtype=float)
    through = np.concatenate([np.bincount(inst.flow_src, weights=vol, minlength=m),
                              np.bincount(inst.flow_dst, weights=vol, minlength=m)])
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    rel = np.asarray(inst.coflow_release, dtype=float)
    return float(np.mean(through / (cap * (rel.max() - rel.min()))))


@pytest.mark.parametrize("key", sorted(DIGESTS))
def test_load_none_leaves_instances_unchanged(key: tuple[int, int, int]) -> None:
    n, seed, ports = key
    assert digest(synthetic_trace(n, seed=seed, ports=ports)) == DIGESTS[key]
    assert digest(synthetic_trace(n, seed=seed, ports=ports, load=None)) == DIGESTS[key]


@pytest.mark.parametrize("load", [0.05, 0.4, 0.7, 1.0, 3.0])
@pytest.mark.parametrize(("n", "seed", "ports"), [(100, 0, 150), (100, 2, 150), (40, 5, 10)])
def test_measured_utilisation_is_the_requested_load(load: float, n: int, seed: int,
                                                    ports: int) -> None:
    inst = synthetic_trace(n, seed=seed, ports=ports, load=load)
    span = float(inst.coflow_release.max() - inst.coflow_release.min())
    # arrivals stay whole ms: the span is off by at most half a ms
    assert utilisation(inst) == pytest.approx(load, rel=0.5 / span + 1e-12)
    assert utilisation(inst) == pytest.approx(load, rel=1e-3)


@pytest.mark.parametrize("load", [0.2, 2.0])
def test_only_arrivals_change(load: float) -> None:
    base = synthetic_trace(60, seed=7, ports=20)
    inst = synthetic_trace(60, seed=7, ports=20, load=load)
    for name in ("flow_src", "flow_dst", "flow_volume", "flow_coflow", "coflow_id"):
        assert np.array_equal(getattr(inst, name), getattr(base, name)), name
    rel, rel0 = np.asarray(inst.coflow_release), np.asarray(base.coflow_release)
    assert np.array_equal(inst.job_release, rel)
    assert rel[0] == 0 and np.all(rel >= 0) and np.all(np.diff(rel) >= 0)
    assert np.array_equal(rel, np.rint(rel))
    # one factor for every gap (up to the rounding of both to whole ms)
    f = rel[-1] / rel0[-1]
    assert np.all(np.abs(rel - f * rel0) <= 1 + f + 1e-9)
    assert synthetic_trace(60, seed=7, ports=20, load=load) == inst  # seeded


def test_higher_load_means_shorter_span() -> None:
    spans = [synthetic_trace(50, seed=3, load=x).coflow_release.max() for x in (0.1, 0.5, 2.0)]
    assert spans[0] > spans[1] > spans[2] > 0


@pytest.mark.parametrize("bad", [0, -0.5, float("nan"), float("inf"), "high", True])
def test_bad_load_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="load"):
        synthetic_trace(10, seed=0, load=bad)  # type: ignore[arg-type]


def test_load_needs_two_coflows() -> None:
    with pytest.raises(ValueError, match="n_coflows >= 2"):
        synthetic_trace(1, seed=0, load=0.5)
    with pytest.raises(ValueError, match="lower load"):
        synthetic_trace(2, seed=0, ports=150, load=1e9)
