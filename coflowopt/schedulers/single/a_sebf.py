"""A-SEBF (a Chinese-language journal paper on width-aware non-clairvoyant coflow scheduling,
compared with Aalo and Varys on the FB2010 trace): Aalo's D-CLAS queues on ``lambda = S / W``,
the bytes sent divided by the coflow's number of receiver ports (the paper's Sec. 3.2 [R]),
base-10 thresholds [R]; first threshold and queue count as Aalo's [C: the paper gives none]."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from coflowopt.model import Instance
from coflowopt.schedulers.single.aalo import AaloParams, DCLASPolicy
from coflowopt.sim.drive import run_policy
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["ASEBFParams", "run_a_sebf"]


@dataclass(frozen=True)
class ASEBFParams(AaloParams):
    """Aalo's parameters plus ``per``: ``receiver`` (A-SEBF: bytes sent over receiver ports) or
    ``flow`` (over the number of flows)."""

    per: Literal["receiver", "flow"] = "receiver"


def run_a_sebf(instance: Instance, params: ASEBFParams, sink: RateSink, *, seed: Any = None,
               progress: Any = None) -> Outcome:
    """A-SEBF: D-CLAS on bytes sent per receiver port.  Deterministic."""
    kw = params.policy_args()
    meta = {"scheduler": "a-sebf", "params": kw}
    return run_policy(instance, DCLASPolicy(**kw), sink, engine=params.engine, meta=meta,
                      progress=progress)
