"""DeepWeave's networks, numpy forward pass (Sun et al., IJCAI 2020, Sec. 3.3).

The scheduler infers with this module; :mod:`.torch_net` is its torch twin for training (the
same maths, the same parameter names; ``DeepWeaveNet.to_numpy`` / ``load_numpy`` convert
exactly).  The paper's symbols; [R: Decima] marks what we took from the public code of Decima
(Mao et al., SIGCOMM 2019, hongzimao/decima-sim), on which the paper builds:

1. Lift [R: Decima's extra MLP]: ``x'_i = h_prep(n(x_i))`` where ``n(x) = (x - norm.shift) /
   norm.scale`` is the checkpoint's feature normalisation (identity by default).
2. Message passing, leaves first [R; Decima's published aggregation]: ``e_i = x'_i`` for a
   leaf, and one level at a time ``e_i = g( sum_{u in child(i)} f(e_u) ) + x'_i`` (the ``g``
   term masked for leaves).  ``f`` and ``g`` have two hidden layers each [R].  With
   ``passes = P`` only levels ``1..P`` are updated [R: Decima's ``max_depth = 8``]: a node
   more than ``P`` levels above its deepest leaf keeps ``e_i = x'_i``.
3. Scalar attribute [R; the network is ours, C]: ``attr_i = h_attr([e_i, n(x_i)])``; the attributes
   are sorted in decreasing order (stable) and the node order ``o`` recorded.
4. Job summary [C, Decima's form]: ``y = sum_i h_job([n(x_i), attr_i])``.
5. Policy network [R; widths C]: one hidden layer of 32 over the sorted attributes
   zero-padded to ``V_max``, followed by ``y``: ``P = h_pi([attr_o(1) .. attr_o(V), 0 .. 0,
   y])``, ``(V_max,)``; node ``o(k)`` gets priority ``P_k``.  Higher = served first.

Head [C] (issue 30): ``head="policy"`` is the above; ``head="attr"`` takes the attribute itself
as the priority (``P_i = attr_i``; no ``h_job``, no ``h_pi``, needs ``summary=False``), so that
with the instance-normalised feature set ``"v2"`` (:mod:`.features`) the priorities of different
jobs are on one scale and one Plackett-Luce law orders the ready coflows of every job.

Every MLP is ``z -> z W_0 + b_0 -> leaky -> ... -> z W_L + b_L`` (leaky-ReLU slope
``leaky`` [R: Decima], linear output).  Hidden sizes ``hidden_gnn = (16, 8)`` for ``h_prep,
f, g, h_attr, h_job``, output ``out_gnn = 8`` [R: Decima]; ablations [R] (the paper's Sec. 4):
``hidden_policy`` of 2 or 3 layers, ``summary=False`` (no ``y``), ``hidden_gnn`` of 1 or 3 layers.

Parameters are a flat ``dict[str, ndarray]``: ``"{net}.w{k}"`` ``(in, out)`` and
``"{net}.b{k}"`` ``(out,)`` for ``net`` in ``prep, f, g, attr, job, policy`` (``job`` only
with ``summary``), plus ``"norm.shift"``, ``"norm.scale"`` ``(n_features,)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from coflowopt.schedulers.learned.features import N_FEATURES, DagBatch, n_features

__all__ = ["DeepWeaveConfig", "forward", "forward_details", "init_params", "mlp_dims",
           "param_shapes"]


@dataclass(frozen=True)
class DeepWeaveConfig:
    """Network sizes (the paper's Sec. 3.3; defaults [C] from Decima and DeepWeave's chosen design).

    ``n_features``: columns of ``x``; ``hidden_gnn``: hidden layer widths of ``h_prep, f, g,
    h_attr, h_job``; ``out_gnn``: width of ``x'``, ``e`` and ``y``; ``hidden_policy``: hidden
    widths of the policy network; ``v_max``: the largest DAG (number of coflows of one job)
    the policy network takes; ``summary``: use the job summary ``y``; ``passes``: message
    passing levels; ``leaky``: leaky-ReLU slope; ``feature_set``: ``"v1"`` or ``"v2"``
    (:data:`~coflowopt.schedulers.learned.features.FEATURE_SETS`; with ``"v2"``
    ``n_features`` must be its 14 columns);
    ``head``: ``"policy"`` or ``"attr"`` (module docstring).
    """

    n_features: int = N_FEATURES
    hidden_gnn: tuple[int, ...] = (16, 8)
    out_gnn: int = 8
    hidden_policy: tuple[int, ...] = (32,)
    v_max: int = 64
    summary: bool = True
    passes: int = 8
    leaky: float = 0.01
    feature_set: str = "v1"
    head: str = "policy"

    @classmethod
    def heuristic(cls, **kw: Any) -> DeepWeaveConfig:
        """The issue-30 network: feature set ``"v2"``, ``head="attr"``, no summary."""
        # v_max only bounds the policy head's input; the attribute head takes any DAG size
        d: dict[str, Any] = {"feature_set": "v2", "n_features": n_features("v2"),
                             "head": "attr", "summary": False, "v_max": 4096}
        d.update(kw)
        return cls(**d)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden_gnn", tuple(int(h) for h in self.hidden_gnn))
        object.__setattr__(self, "hidden_policy", tuple(int(h) for h in self.hidden_policy))
        for name in ("n_features", "out_gnn", "v_max", "passes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"DeepWeaveConfig.{name}: must be an integer >= 1, got {v!r}")
        for name in ("hidden_gnn", "hidden_policy"):
            if any(h < 1 for h in getattr(self, name)):
                raise ValueError(f"DeepWeaveConfig.{name}: widths must be >= 1, "
                                 f"got {getattr(self, name)}")
        if not isinstance(self.summary, bool):
            raise ValueError(f"DeepWeaveConfig.summary: must be a bool, got {self.summary!r}")
        if not (isinstance(self.leaky, (int, float)) and 0 <= self.leaky < 1):
            raise ValueError(f"DeepWeaveConfig.leaky: must be in [0, 1), got {self.leaky!r}")
        try:
            nf = n_features(self.feature_set)
        except ValueError as exc:
            raise ValueError(f"DeepWeaveConfig.{exc}") from None
        # v1 networks may be hand-built on any columns (tests, E5); v2 reads exactly its own
        if self.feature_set != "v1" and self.n_features != nf:
            raise ValueError(f"DeepWeaveConfig.n_features: feature set {self.feature_set!r} has "
                             f"{nf} columns, got n_features = {self.n_features}")
        if self.head not in ("policy", "attr"):
            raise ValueError(f"DeepWeaveConfig.head: must be 'policy' or 'attr', got "
                             f"{self.head!r}")
        if self.head == "attr" and self.summary:
            raise ValueError("DeepWeaveConfig.summary: head='attr' has no job summary; set "
                             "summary=False")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden_gnn"], d["hidden_policy"] = list(self.hidden_gnn), list(self.hidden_policy)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DeepWeaveConfig:
        """From :meth:`to_dict`'s form; an unknown key is a :class:`ValueError` naming it."""
        known = {f.name for f in dataclasses.fields(cls)}
        bad = sorted(set(d) - known)
        if bad:
            raise ValueError(f"DeepWeaveConfig: unknown field {bad[0]!r}; known: "
                             f"{', '.join(sorted(known))}")
        return cls(**dict(d))


def mlp_dims(config: DeepWeaveConfig) -> dict[str, list[int]]:
    """Layer widths ``[in, hidden..., out]`` of every MLP, by name."""
    c = config
    dims = {
        "prep": [c.n_features, *c.hidden_gnn, c.out_gnn],
        "f": [c.out_gnn, *c.hidden_gnn, c.out_gnn],
        "g": [c.out_gnn, *c.hidden_gnn, c.out_gnn],
        "attr": [c.out_gnn + c.n_features, *c.hidden_gnn, 1],
    }
    if c.head == "attr":
        return dims
    if c.summary:
        dims["job"] = [c.n_features + 1, *c.hidden_gnn, c.out_gnn]
    dims["policy"] = [c.v_max + (c.out_gnn if c.summary else 0), *c.hidden_policy, c.v_max]
    return dims


def param_shapes(config: DeepWeaveConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every parameter array, by name (the checkpoint's contract)."""
    out: dict[str, tuple[int, ...]] = {}
    for net, d in mlp_dims(config).items():
        for k in range(len(d) - 1):
            out[f"{net}.w{k}"] = (d[k], d[k + 1])
            out[f"{net}.b{k}"] = (d[k + 1],)
    out["norm.shift"] = (config.n_features,)
    out["norm.scale"] = (config.n_features,)
    return out


def init_params(config: DeepWeaveConfig, rng: np.random.Generator | int | None = None
                ) -> dict[str, np.ndarray]:
    """Seeded initial parameters: Glorot-uniform weights ``U(-a, a)``, ``a = sqrt(6 / (in +
    out))``, zero biases, identity normalisation.  ``rng``: a Generator or a seed."""
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    out: dict[str, np.ndarray] = {}
    for name, shape in param_shapes(config).items():
        if name == "norm.shift" or ".b" in name:
            out[name] = np.zeros(shape)
        elif name == "norm.scale":
            out[name] = np.ones(shape)
        else:
            a = np.sqrt(6.0 / (shape[0] + shape[1]))
            out[name] = gen.uniform(-a, a, size=shape)
    return out


def _mlp(params: Mapping[str, np.ndarray], net: str, z: np.ndarray, n_layers: int,
         leaky: float) -> np.ndarray:
    for k in range(n_layers):
        z = z @ params[f"{net}.w{k}"] + params[f"{net}.b{k}"]
        if k < n_layers - 1:
            z = np.where(z > 0, z, leaky * z)
    return z


def forward_details(params: Mapping[str, np.ndarray], config: DeepWeaveConfig,
                    batch: DagBatch) -> dict[str, np.ndarray]:
    """Every stage of the forward pass: ``x`` (normalised), ``lifted`` (``x'``), ``e``,
    ``attr``, ``order`` (node ids by decreasing attribute), ``y`` (zeros without summary) and
    ``priorities``."""
    c = config
    v = batch.n_nodes
    # v_max is the policy head's input width; the attribute head scores any number of nodes
    # (an instance batch holds every coflow of the instance)
    if c.head != "attr" and v > c.v_max:
        raise ValueError(f"DeepWeave: job {batch.job} has {v} coflows, more than the network's "
                         f"v_max = {c.v_max}")
    if batch.x.shape != (v, c.n_features):
        raise ValueError(f"DeepWeave: job {batch.job}: features of shape {batch.x.shape}, the "
                         f"network takes ({v}, {c.n_features})")
    depth = {net: len(d) - 1 for net, d in mlp_dims(c).items()}
    lk = c.leaky
    x = (batch.x - params["norm.shift"]) / params["norm.scale"]
    lifted = _mlp(params, "prep", x, depth["prep"], lk)
    e = lifted.copy()
    lp, ln, ep = batch.level_ptr, batch.level_nodes, batch.level_edge_ptr
    nch = batch.n_children
    for lev in range(1, min(batch.n_levels, c.passes + 1)):
        nodes = ln[lp[lev]:lp[lev + 1]]
        msg = _mlp(params, "f", e[batch.edge_child[ep[lev]:ep[lev + 1]]], depth["f"], lk)
        starts = np.zeros(nodes.size, dtype=np.int64)
        np.cumsum(nch[nodes][:-1], out=starts[1:])
        agg = np.add.reduceat(msg, starts, axis=0)  # every node above level 0 has a child
        e[nodes] = _mlp(params, "g", agg, depth["g"], lk) + lifted[nodes]
    attr = _mlp(params, "attr", np.concatenate([e, x], axis=1), depth["attr"], lk)[:, 0]
    order = np.argsort(-attr, kind="stable")
    if c.head == "attr":
        return {"x": x, "lifted": lifted, "e": e, "attr": attr, "order": order,
                "y": np.zeros(c.out_gnn), "priorities": attr.copy()}
    sorted_attr = np.zeros(c.v_max)
    sorted_attr[:v] = attr[order]
    if c.summary:
        y = _mlp(params, "job", np.concatenate([x, attr[:, None]], axis=1), depth["job"],
                 lk).sum(axis=0)
        inp = np.concatenate([sorted_attr, y])
    else:
        y = np.zeros(c.out_gnn)
        inp = sorted_attr
    p = _mlp(params, "policy", inp[None, :], depth["policy"], lk)[0]
    pri = np.empty(v)
    pri[order] = p[:v]
    return {"x": x, "lifted": lifted, "e": e, "attr": attr, "order": order, "y": y,
            "priorities": pri}


def forward(params: Mapping[str, np.ndarray], config: DeepWeaveConfig,
            batch: DagBatch) -> np.ndarray:
    """``(V,)`` priorities of the nodes of ``batch`` (higher = served first)."""
    return forward_details(params, config, batch)["priorities"]
