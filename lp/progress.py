"""Progress Scheduling (PS) and Static Progress Scheduling (SPS) of the CoFair paper (De
Pellegrini, Gupta, El Azouzi, Gueye, Richier, Leguay, "Fair Coflow Scheduling via Controlled
Slowdown", IEEE TPDS 2022): its MILP constraints (3)-(8) from the prose [R], the exact algebra
ours [C] (the displayed formulas were not recovered; docs/families/index.md for the tags).

- :func:`ps_model`: the time-indexed MILP PS(E) with the slowdown constraint (7)
  ``phi_j (C_j - r_j) <= E C_j^0``; ``E = inf`` is the plain weighted-CCT MILP.  Adding (7) can
  only increase the optimum.
- :func:`sps_model`: SPS, reconstructed ([C]: the paper's (1)-(2) were not recovered;
  HUG/Coflex-style): instead of (7) every flow gets a constant floor rate ``a_i = P_0 v_i / C_j^0``
  from its release until it finishes (``v_i x_i(t) >= a_i Delta (1 - Y_i(t))`` with a binary
  flow-completion indicator ``Y_i(t) <= Z_i(t)``); the floors fit on every port when ``P_0 <= P* = 1
  / max_l sum_j d_lj`` with ``d_lj = (p_lj / B_l) / C_j^0`` (:func:`static_progress`).

Both return a :class:`~coflowopt.lp.timeindexed.TimeIndexedModel`; its optimum is a slotted
optimum (an upper bound on the fluid optimum under the same constraint, see
:mod:`coflowopt.lp.timeindexed`), and its schedule must be validated before use.

Doubt (noted for the lead): in a slotted schedule a flow that runs at its floor from slot
``r_j + 1`` finishes by slot ``r_j + ceil(C_j^0 / (P_0 Delta))``, so the consequence "an
SPS-feasible schedule satisfies (7) with ``E = max_j phi_j / P_0``" (of our reconstruction of
(1)-(2)) holds only up to that rounding: ``S_j <= ceil(C_j^0 / (P_0 Delta)) Delta / C_j^0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from coflowopt.model import Instance

from .model import INF
from .timeindexed import TimeIndexedModel, TimeIndexedParams, time_indexed_model

__all__ = ["StaticProgress", "ps_model", "sps_model", "static_progress"]


def ps_model(instance: Instance, E: float = INF, phi: Any = None, *,
             horizon: int | None = None, slot: float = 1.0, cuts: bool = True) -> TimeIndexedModel:
    """PS(E): minimise ``sum_j w_j C_j`` subject to the paper's (3)-(8) (see
    :func:`~coflowopt.lp.timeindexed.time_indexed_model` for the rows).  ``phi`` defaults to
    1 per coflow ([C]); ``phi="volume"`` uses ``phi_j = V_j`` (the paper's example).  ``E``
    must be at least ``max_j phi_j`` for every bound ``E / phi_j`` to be >= 1."""
    ph = _resolve_phi(instance, phi)
    return time_indexed_model(instance, TimeIndexedParams(horizon=horizon, slot=slot, E=E,
                                                          phi=ph, cuts=cuts),
                              kind="PS MILP" if math.isfinite(E) else "slotted MILP")


def _resolve_phi(instance: Instance, phi: Any) -> Any:
    if isinstance(phi, str):
        if phi != "volume":
            raise ValueError(f"phi: expected an array, None or 'volume', got {phi!r}")
        return np.where(instance.coflow_size > 0, instance.coflow_size, 1.0)
    return phi


@dataclass(frozen=True)
class StaticProgress:
    """Static-progress data (SPS's (1)-(2) as we rebuild them [C]): ``d[l, j]`` normalised demand
    (``(2m, N)``, ingress then egress), ``P_star = 1 / max_l sum_j d_lj`` (the largest progress
    every coflow can get at once), and per flow with volume the floor ``a_i = P_0 v_i / C_j^0``."""

    d: np.ndarray
    P_star: float
    P0: float
    floor: np.ndarray


def static_progress(instance: Instance, P0: float | None = None) -> StaticProgress:
    """Normalised demands, ``P*`` and the per-flow floors for progress ``P0`` (default
    ``P*``)."""
    inst = instance
    c0 = inst.isolation_time
    li, lo = inst.port_loads
    pin = li.toarray() / inst.fabric.capacity_in[None, :]
    pout = lo.toarray() / inst.fabric.capacity_out[None, :]
    scale = np.divide(1.0, c0, out=np.zeros_like(c0), where=c0 > 0)
    d = np.hstack([pin, pout]).T * scale[None, :]
    tot = d.sum(axis=1).max(initial=0.0)
    p_star = 1.0 / tot if tot > 0 else INF
    p0 = p_star if P0 is None else float(P0)
    if not (p0 > 0 and math.isfinite(p0)):
        raise ValueError(f"P0: must be finite and > 0, got {p0}")
    wf = np.flatnonzero(inst.flow_volume > 0)
    fc = inst.flow_coflow[wf]
    floor = p0 * inst.flow_volume[wf] / c0[fc]
    return StaticProgress(d, p_star, p0, floor)


def sps_model(instance: Instance, P0: float | None = None, *, horizon: int | None = None,
              slot: float = 1.0, cuts: bool = True) -> TimeIndexedModel:
    """SPS: PS without (7), plus the static-progress floor rows (module docstring).  ``P0``
    defaults to ``P*``; a larger ``P0`` makes the floors overlap and the model may be
    infeasible."""
    sp_ = static_progress(instance, P0)
    return time_indexed_model(instance, TimeIndexedParams(horizon=horizon, slot=slot,
                                                          cuts=cuts),
                              floor=sp_.floor, kind="SPS MILP")
