"""DeepWeave's networks in torch, for training (Sun et al., IJCAI 2020, Sec. 3.2-3.3, Alg. 1).
Needs the ``learn`` extra; nothing in the base install imports this module.

:class:`DeepWeaveNet` computes exactly :func:`coflowopt.schedulers.learned.network.forward`
(same stages, same parameter names; float64 by default so the two agree to rounding), and
converts to and from the numpy parameter dict without loss (``to_numpy`` / ``load_numpy``).
Every torch ``nn.Linear`` holds ``W^T`` of the numpy ``(in, out)`` weight.

Stochastic policy for REINFORCE [C] (not recovered from the paper): Plackett-Luce.
The priority list is drawn without replacement over the ready nodes, each draw with
probabilities ``softmax(p)`` over the nodes still undrawn; ``log mu_theta(s, a)`` is the sum
of the draws' log-probabilities.  :func:`plackett_luce_sample` draws by the Gumbel-max
construction (sort ``p_i + G_i``, ``G_i`` standard Gumbel), which has exactly that law.
Greedy (sorted by ``p``) at evaluation: :func:`greedy_order`.

Speed: the graphs are tiny, so torch's per-operation overhead dominates; with
``torch.set_num_threads(1)`` a 64-node DAG's forward takes about 9 ms and forward + backward
about 20 ms on a shared 2-core machine (about 60 / 190 ms with two intra-op threads).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

import numpy as np
import torch
from torch import nn

from coflowopt.schedulers.learned.features import DagBatch
from coflowopt.schedulers.learned.network import DeepWeaveConfig, mlp_dims, param_shapes

__all__ = ["DeepWeaveNet", "greedy_order", "plackett_luce_log_prob", "plackett_luce_sample"]


class _MLP(nn.Module):
    def __init__(self, dims: list[int], leaky: float, dtype: torch.dtype):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b, dtype=dtype)
                                    for a, b in pairwise(dims))
        self.leaky = leaky

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        n = len(self.layers)
        for k, layer in enumerate(self.layers):
            z = layer(z)
            if k < n - 1:
                z = nn.functional.leaky_relu(z, self.leaky)
        return z


class DeepWeaveNet(nn.Module):
    """The torch twin of :mod:`coflowopt.schedulers.learned.network` (same maths)."""

    def __init__(self, config: DeepWeaveConfig, dtype: torch.dtype = torch.float64):
        super().__init__()
        self.config = config
        self.dtype = dtype
        self.nets = nn.ModuleDict({name: _MLP(d, config.leaky, dtype)
                                   for name, d in mlp_dims(config).items()})
        self.register_buffer("norm_shift", torch.zeros(config.n_features, dtype=dtype))
        self.register_buffer("norm_scale", torch.ones(config.n_features, dtype=dtype))

    # -- conversion ---------------------------------------------------------------------------

    def load_numpy(self, params: Mapping[str, np.ndarray]) -> DeepWeaveNet:
        """Copy the numpy parameter dict in (shapes checked against the config)."""
        shapes = param_shapes(self.config)
        missing = sorted(set(shapes) - set(params))
        if missing:
            raise ValueError(f"DeepWeaveNet.load_numpy: missing parameter {missing[0]!r}")
        with torch.no_grad():
            for name, shape in shapes.items():
                a = np.asarray(params[name], dtype=np.float64)
                if a.shape != shape:
                    raise ValueError(f"DeepWeaveNet.load_numpy: {name} has shape {a.shape}, "
                                     f"expected {shape}")
                t = torch.from_numpy(a.copy()).to(self.dtype)
                if name == "norm.shift":
                    self.norm_shift.copy_(t)
                elif name == "norm.scale":
                    self.norm_scale.copy_(t)
                else:
                    net, _, part = name.partition(".")
                    layer = self.nets[net].layers[int(part[1:])]
                    if part[0] == "w":
                        layer.weight.copy_(t.T)
                    else:
                        layer.bias.copy_(t)
        return self

    def to_numpy(self) -> dict[str, np.ndarray]:
        """The numpy parameter dict (float64 copies)."""
        out: dict[str, np.ndarray] = {}
        for name in param_shapes(self.config):
            if name == "norm.shift":
                t = self.norm_shift
            elif name == "norm.scale":
                t = self.norm_scale
            else:
                net, _, part = name.partition(".")
                layer = self.nets[net].layers[int(part[1:])]
                t = layer.weight.T if part[0] == "w" else layer.bias
            out[name] = t.detach().cpu().to(torch.float64).numpy().copy()
        return out

    # -- forward ------------------------------------------------------------------------------

    def forward_details(self, batch: DagBatch) -> dict[str, torch.Tensor]:
        """Every stage, as in :func:`~coflowopt.schedulers.learned.network.forward_details`."""
        c = self.config
        v = batch.n_nodes
        if c.head != "attr" and v > c.v_max:  # as the numpy forward: the policy head's width
            raise ValueError(f"DeepWeave: job {batch.job} has {v} coflows, more than the "
                             f"network's v_max = {c.v_max}")
        if batch.x.shape != (v, c.n_features):
            raise ValueError(f"DeepWeave: job {batch.job}: features of shape {batch.x.shape}, "
                             f"the network takes ({v}, {c.n_features})")
        dev = self.norm_shift.device
        x = torch.as_tensor(batch.x, dtype=self.dtype, device=dev)
        x = (x - self.norm_shift) / self.norm_scale
        lifted = self.nets["prep"](x)
        e = lifted
        lp, ln, ep = batch.level_ptr, batch.level_nodes, batch.level_edge_ptr
        nch = batch.n_children
        for lev in range(1, min(batch.n_levels, c.passes + 1)):
            nodes_np = ln[lp[lev]:lp[lev + 1]]
            nodes = torch.as_tensor(nodes_np, device=dev)
            child = torch.as_tensor(batch.edge_child[ep[lev]:ep[lev + 1]], device=dev)
            msg = self.nets["f"](e[child])
            seg = torch.as_tensor(np.repeat(np.arange(nodes_np.size), nch[nodes_np]),
                                  device=dev)
            agg = torch.zeros(nodes_np.size, c.out_gnn, dtype=self.dtype, device=dev)
            agg = agg.index_add(0, seg, msg)
            e = e.index_copy(0, nodes, self.nets["g"](agg) + lifted[nodes])
        attr = self.nets["attr"](torch.cat([e, x], dim=1))[:, 0]
        order = torch.argsort(-attr, stable=True)
        if c.head == "attr":
            return {"x": x, "lifted": lifted, "e": e, "attr": attr, "order": order,
                    "y": torch.zeros(c.out_gnn, dtype=self.dtype, device=dev),
                    "priorities": attr}
        sorted_attr = torch.cat([attr[order],
                                 torch.zeros(c.v_max - v, dtype=self.dtype, device=dev)])
        if c.summary:
            y = self.nets["job"](torch.cat([x, attr[:, None]], dim=1)).sum(dim=0)
            inp = torch.cat([sorted_attr, y])
        else:
            y = torch.zeros(c.out_gnn, dtype=self.dtype, device=dev)
            inp = sorted_attr
        p = self.nets["policy"](inp[None, :])[0]
        pri = torch.empty(v, dtype=self.dtype, device=dev).index_copy(0, order, p[:v])
        return {"x": x, "lifted": lifted, "e": e, "attr": attr, "order": order, "y": y,
                "priorities": pri}

    def forward(self, batch: DagBatch) -> torch.Tensor:  # type: ignore[override]
        """``(V,)`` priorities (higher = served first), differentiable in the parameters."""
        return self.forward_details(batch)["priorities"]


def _ready_index(priorities: torch.Tensor, ready_mask: object) -> torch.Tensor:
    if ready_mask is None:
        return torch.arange(priorities.shape[0], device=priorities.device)
    mask = torch.as_tensor(np.asarray(ready_mask, dtype=bool) if not isinstance(
        ready_mask, torch.Tensor) else ready_mask, device=priorities.device).to(torch.bool)
    if mask.shape != priorities.shape:
        raise ValueError(f"ready_mask: expected shape {tuple(priorities.shape)}, "
                         f"got {tuple(mask.shape)}")
    return torch.nonzero(mask, as_tuple=False)[:, 0]


def plackett_luce_log_prob(priorities: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """``log mu(order)``: the sum over the draws ``k`` of ``p_{o_k} - log sum_{j >= k}
    exp(p_{o_j})`` (the Plackett-Luce law of drawing ``order`` without replacement)."""
    o = torch.as_tensor(order, device=priorities.device, dtype=torch.long)
    if o.numel() == 0:
        return priorities.sum() * 0.0
    p = priorities[o]
    tail = torch.logcumsumexp(p.flip(0), dim=0).flip(0)
    return (p - tail).sum()


def plackett_luce_sample(priorities: torch.Tensor, ready_mask: object,
                         generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw a priority list over the ready nodes (``ready_mask``: ``(V,)`` bools, ``None`` =
    all) by Plackett-Luce on ``softmax(priorities)``.  Returns ``(order, log_prob)``: the ready
    node ids, first drawn first, and the differentiable log-probability of that list."""
    idx = _ready_index(priorities, ready_mask)
    u = torch.rand(idx.shape[0], generator=generator, dtype=torch.float64)
    u = u.clamp(1e-300, 1.0 - 1e-16).to(priorities.device)
    gumbel = -torch.log(-torch.log(u))
    perm = torch.argsort(priorities.detach()[idx].to(torch.float64) + gumbel,
                         descending=True, stable=True)
    order = idx[perm]
    return order, plackett_luce_log_prob(priorities, order)


def greedy_order(priorities: torch.Tensor, ready_mask: object = None) -> torch.Tensor:
    """The ready node ids by decreasing priority (ties: lower id first): the evaluation
    policy."""
    idx = _ready_index(priorities, ready_mask)
    return idx[torch.argsort(-priorities.detach()[idx], stable=True)]
