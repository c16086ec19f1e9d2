"""The DAG, fair and learned families give the same per-coflow CCTs as before issue 28's
changes to their kernels (DeepWeave's live features, the sparse BvN peel of BNA / DMA /
G-DM): digests stored from main at 1ded3f9 (``tests/data/family_cct_digests.json``, each
computed there by running the scheduler through the validator), compared bit for bit.
The single-stage schedulers' digests are :mod:`test_same_schedules`'s."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from strategies import fb2010_prefix

import coflowopt as co
from coflowopt import metrics
from coflowopt.workloads.dags import fb2010_jobs, ggen_fan_in_fan_out, tpcds_like

DIGESTS = json.loads((Path(__file__).parent / "data" / "family_cct_digests.json").read_text())
#: a name with a ``+`` runs with these parameters
PARAMS = {"deepweave+static": {"rerank": "static"}}


def _workload(name: str) -> co.Instance:
    if name == "tpcds3":
        return tpcds_like(3, ports=6, seed=1)
    if name == "ggen2":
        return ggen_fan_in_fan_out(2, ports=6, nodes=(4, 16), seed=2, arrival_rate=1e-3)
    if name == "fb12":
        return fb2010_prefix(12)
    fb = fb2010_prefix(526)
    kw = {"fbjobs40_slots": {},
          "fbjobs40_slots_offline": {"offline": True},
          "fbjobs40_fanin_offline": {"offline": True, "shape": "fan-in"}}
    if name in kw:
        return fb2010_jobs(fb, coflows=40, slots=True, ports=20, seed=3, **kw[name])
    assert name == "fbjob8_fanin_one"
    return fb2010_jobs(fb, coflows=8, slots=True, ports=20, seed=1, offline=True,
                       shape="fan-in", mean_coflows=50)


@pytest.mark.parametrize("workload", [k for k in DIGESTS if k != "comment"])
def test_family_digests(workload: str) -> None:
    inst = _workload(workload)
    moved = []
    for name, want in DIGESTS[workload].items():
        res = co.run(inst, name.split("+")[0], params=PARAMS.get(name), seed=0)
        cct = np.ascontiguousarray(metrics.cct(res.valid), dtype="<f8")
        if hashlib.sha256(cct.tobytes()).hexdigest() != want:
            moved.append(name)
    assert not moved, f"{workload}: CCTs moved for {moved}"
