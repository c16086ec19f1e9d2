"""Seeded generators of multi-stage jobs (coflow DAGs with Starts-After edges).

Every generator takes ``seed`` (an ``int``, a ``numpy.random.Generator`` or ``None``), draws all
randomness from ``numpy.random.default_rng(seed)`` and returns an :class:`~coflowopt.Instance`;
the same integer seed gives an equal (``==``) instance.  Within each job the coflow positions
are a topological order (every Starts-After edge goes from a lower to a higher position) and
coflows are grouped by job in job order.

Coflow contents of the synthetic generators come from one sampler, :func:`random_coflow_flows`
(CoflowSim's ``CustomTraceProducer`` rule), with the class mix :class:`CoflowClassMix`.
:func:`fb2010_jobs` instead groups the coflows of the FB2010 trace into jobs.

Common options of the synthetic generators (defaults in brackets):

* ``ports`` -- fabric size ``m``; ``capacity`` [1.0] per port; ``time_unit`` ["unit"].
* ``mix`` -- the :class:`CoflowClassMix` used for every coflow [the CoflowSim default mix].
* ``weight`` -- ``"unit"`` [all job weights 1] or ``"uniform"`` (``w_j`` uniform on ``(0, 1]``).
* ``arrival_rate`` -- ``None`` [every job released at 0] or a rate ``lambda > 0``: jobs arrive
  as a Poisson process, ``rho_j = E_1 + ... + E_j`` with ``E_i`` exponential of mean
  ``1 / lambda`` (job order = arrival order).  A coflow's own release is its job's release.

Draw order (part of the seeded contract): per job, its structure and then its coflows' flows in
position order; then the job weights (if ``"uniform"``); then the release gaps (if any).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from coflowopt.model import Fabric, Instance, topological_order
from coflowopt.workloads.trace import read_trace, require_fb2010

__all__ = [
    "DEFAULT_COFLOW_CLASSES",
    "DEFAULT_COFLOW_SHARES",
    "CoflowClassMix",
    "critical_path_length",
    "fb2010_jobs",
    "ggen_fan_in_fan_out",
    "is_rooted_tree",
    "layered_dags",
    "random_coflow_flows",
    "rooted_trees",
    "tpcds_like",
]

Seed = int | np.random.Generator | None
Range = int | tuple[int, int]
WeightRule = Literal["unit", "uniform"]

#: CoflowSim's default job classes ``(min_width, max_width, min_length, max_length)``; a
#: ``max_width`` of ``None`` means "the number of ports".
DEFAULT_COFLOW_CLASSES: tuple[tuple[int, int | None, int, int], ...] = (
    (1, 5, 1, 10),
    (1, 5, 10, 1000),
    (5, None, 1, 10),
    (5, None, 10, 1000),
)
#: Shares of :data:`DEFAULT_COFLOW_CLASSES` (41 / 29 / 9 / 21 %).
DEFAULT_COFLOW_SHARES: tuple[float, ...] = (0.41, 0.29, 0.09, 0.21)


# -- coflow sampler --------------------------------------------------------------------------


def _width_bounds(ports: int, min_width: int, max_width: int | None) -> tuple[int, int]:
    if min_width < 1:
        raise ValueError(f"min_width: must be >= 1, got {min_width}")
    if max_width is not None and max_width < min_width:
        raise ValueError(f"max_width: must be >= min_width ({min_width}), got {max_width}")
    hi = ports if max_width is None else min(int(max_width), ports)
    return min(int(min_width), hi), hi


def _coflow_arrays(
    rng: np.random.Generator,
    ports: int,
    min_width: int,
    max_width: int | None,
    min_length: float,
    max_length: float,
    integer: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi = _width_bounds(ports, min_width, max_width)
    if min_length < 0 or max_length < min_length:
        raise ValueError(
            f"lengths: need 0 <= min_length <= max_length, got {min_length}, {max_length}"
        )
    n_map = int(rng.integers(lo, hi + 1))
    mappers = rng.choice(ports, size=n_map, replace=False)
    n_red = int(rng.integers(lo, hi + 1))
    reducers = rng.choice(ports, size=n_red, replace=False)
    if integer:
        length = rng.integers(int(min_length), int(max_length) + 1, size=n_red).astype(np.float64)
    else:
        length = rng.uniform(min_length, max_length, size=n_red)
    # reducer-major: the n_map flows into reducer r are contiguous, each of volume length[r]
    src = np.tile(mappers, n_red).astype(np.int64)
    dst = np.repeat(reducers, n_map).astype(np.int64)
    vol = np.repeat(length, n_map)
    return src, dst, vol


def random_coflow_flows(
    rng: np.random.Generator | int | None,
    ports: int,
    *,
    min_width: int = 1,
    max_width: int | None = None,
    min_length: float = 1,
    max_length: float = 10,
    integer: bool = True,
) -> list[tuple[int, int, float]]:
    """One random coflow by CoflowSim's ``CustomTraceProducer`` rule.

    Rule: the number of mappers and, independently, the number of reducers are uniform on
    ``{min_width..max_width}``; mappers sit on distinct ingress ports and reducers on distinct
    egress ports (uniform without replacement; a mapper and a reducer may share a port number,
    which are different ports).  Each reducer ``r`` draws ``L_r`` uniform on
    ``{min_length..max_length}`` (continuous on ``[min_length, max_length]`` when ``integer`` is
    false) and receives ``L_r x #mappers`` split equally over the mappers, so every flow into
    ``r`` has volume ``L_r``.  ``max_width=None`` means ``ports``; widths are clipped to
    ``ports`` (so the ``(5, N)`` classes still work on fewer than 5 ports).

    Returns ``(src, dst, volume)`` triples, reducer-major (the flows into one reducer are
    contiguous).
    """
    gen = np.random.default_rng(rng)
    src, dst, vol = _coflow_arrays(gen, int(ports), min_width, max_width, min_length,
                                   max_length, integer)
    return list(zip(src.tolist(), dst.tolist(), vol.tolist(), strict=True))


@dataclass(frozen=True)
class CoflowClassMix:
    """A mixture of coflow classes for :func:`random_coflow_flows`.

    ``classes``: ``(min_width, max_width, min_length, max_length)`` per class (``max_width``
    ``None`` = the number of ports); ``shares``: relative class frequencies (normalized).  The
    default is CoflowSim's mix: ``(1,5,1,10)``, ``(1,5,10,1000)``, ``(5,N,1,10)``,
    ``(5,N,10,1000)`` with shares 41/29/9/21 %.

    Rule: each coflow draws its class independently with probabilities ``shares`` (CoflowSim
    instead takes exactly ``floor(n * share)`` jobs per class; an independent draw per coflow
    keeps the mix meaningful for the handful of coflows of one job).
    """

    classes: tuple[tuple[int, int | None, float, float], ...] = DEFAULT_COFLOW_CLASSES
    shares: tuple[float, ...] = DEFAULT_COFLOW_SHARES
    integer: bool = True

    def __post_init__(self) -> None:
        classes = tuple(tuple(c) for c in self.classes)
        shares = tuple(float(s) for s in self.shares)
        if not classes:
            raise ValueError("CoflowClassMix: need at least one class")
        if len(shares) != len(classes):
            raise ValueError(f"CoflowClassMix: {len(classes)} classes but {len(shares)} shares")
        if any(s < 0 for s in shares) or sum(shares) <= 0:
            raise ValueError(f"CoflowClassMix: shares must be >= 0 with a positive sum: {shares}")
        for k, c in enumerate(classes):
            if len(c) != 4:
                raise ValueError(f"CoflowClassMix: class {k}: expected 4 numbers, got {c!r}")
            min_w, max_w, min_l, max_l = c
            if min_w < 1 or (max_w is not None and max_w < min_w):
                raise ValueError(f"CoflowClassMix: class {k}: bad widths {min_w}, {max_w}")
            if min_l < 0 or max_l < min_l:
                raise ValueError(f"CoflowClassMix: class {k}: bad lengths {min_l}, {max_l}")
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "shares", shares)

    @classmethod
    def single(cls, min_width: int = 1, max_width: int | None = None, min_length: float = 1,
               max_length: float = 10, *, integer: bool = True) -> CoflowClassMix:
        """A mix of one class."""
        return cls(((min_width, max_width, min_length, max_length),), (1.0,), integer)

    @property
    def probabilities(self) -> np.ndarray:
        p = np.asarray(self.shares, dtype=np.float64)
        return p / p.sum()

    def _sample(self, rng: np.random.Generator, ports: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = int(rng.choice(len(self.classes), p=self.probabilities)) if len(self.classes) > 1 \
            else 0
        min_w, max_w, min_l, max_l = self.classes[k]
        return _coflow_arrays(rng, ports, int(min_w), max_w, min_l, max_l, self.integer)

    def sample(self, rng: np.random.Generator | int | None, ports: int
               ) -> list[tuple[int, int, float]]:
        """One coflow: draw a class, then :func:`random_coflow_flows` with its bounds."""
        src, dst, vol = self._sample(np.random.default_rng(rng), int(ports))
        return list(zip(src.tolist(), dst.tolist(), vol.tolist(), strict=True))


# -- shared plumbing -------------------------------------------------------------------------


def _bounds(value: Range, name: str, minimum: int = 1) -> tuple[int, int]:
    """``int`` -> ``(v, v)``; ``(lo, hi)`` inclusive; both checked against ``minimum``."""
    if isinstance(value, int | np.integer):
        lo = hi = int(value)
    else:
        try:
            lo, hi = (int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected an int or a (low, high) pair, got {value!r}") \
                from None
    if lo < minimum or hi < lo:
        raise ValueError(f"{name}: need {minimum} <= low <= high, got ({lo}, {hi})")
    return lo, hi


def _draw(rng: np.random.Generator, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    return lo if lo == hi else int(rng.integers(lo, hi + 1))


def _check_common(n_jobs: int, ports: int, weight: str, arrival_rate: float | None) -> None:
    if n_jobs < 0:
        raise ValueError(f"n_jobs: must be >= 0, got {n_jobs}")
    if ports < 1:
        raise ValueError(f"ports: must be >= 1, got {ports}")
    if weight not in ("unit", "uniform"):
        raise ValueError(f"weight: expected 'unit' or 'uniform', got {weight!r}")
    if arrival_rate is not None and not arrival_rate > 0:
        raise ValueError(f"arrival_rate: must be > 0 (or None), got {arrival_rate}")


def _cat(xs: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(xs) if xs else np.zeros(0, dtype=dtype)


class _JobsBuilder:
    """Accumulates jobs (a node count, local edges) and samples each coflow's flows."""

    def __init__(self, rng: np.random.Generator, ports: int, mix: CoflowClassMix | None):
        self.rng, self.ports = rng, ports
        self.mix = CoflowClassMix() if mix is None else mix
        self.src: list[np.ndarray] = []
        self.dst: list[np.ndarray] = []
        self.vol: list[np.ndarray] = []
        self.width: list[int] = []
        self.coflow_job: list[int] = []
        self.edges: list[np.ndarray] = []
        self.n_jobs = 0

    def add_job(self, n_nodes: int, edges: Sequence[tuple[int, int]] | np.ndarray) -> None:
        base = len(self.coflow_job)
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        assert np.all(e[:, 0] < e[:, 1]), "generator must emit edges in topological positions"
        self.edges.append(e + base)
        for _ in range(n_nodes):
            s, d, v = self.mix._sample(self.rng, self.ports)
            self.src.append(s)
            self.dst.append(d)
            self.vol.append(v)
            self.width.append(s.size)
            self.coflow_job.append(self.n_jobs)
        self.n_jobs += 1

    def build(self, weight: str, arrival_rate: float | None, capacity: float,
              time_unit: str) -> Instance:
        n = self.n_jobs
        w = 1.0 - self.rng.random(n) if weight == "uniform" else np.ones(n)
        if arrival_rate is None:
            rho = np.zeros(n)
        else:
            rho = np.cumsum(self.rng.exponential(1.0 / arrival_rate, size=n))
        cjob = np.asarray(self.coflow_job, dtype=np.int64)
        return Instance.from_arrays(
            Fabric.uniform(self.ports, capacity),
            _cat(self.src, np.int64), _cat(self.dst, np.int64), _cat(self.vol, np.float64),
            np.repeat(np.arange(cjob.size), np.asarray(self.width, dtype=np.int64)),
            coflow_release=rho[cjob], coflow_job=cjob, n_coflows=cjob.size,
            job_release=rho, job_weight=w, n_jobs=n,
            starts_after=_cat(self.edges, np.int64).reshape(-1, 2), time_unit=time_unit,
        )


# -- structure generators --------------------------------------------------------------------


def _ggen_fifo(rng: np.random.Generator, n: int, max_out: int, max_in: int
               ) -> list[tuple[int, int]]:
    out_deg = [0]
    edges: list[tuple[int, int]] = []
    while len(out_deg) < n:
        count = len(out_deg)
        avail = max_out - np.asarray(out_deg)
        if rng.random() < 0.5:  # fan-out
            top = int(avail.max())
            cand = np.flatnonzero(avail == top)
            v = int(cand[rng.integers(cand.size)])
            k = int(rng.integers(1, min(top, n - count) + 1))
            for c in range(count, count + k):
                edges.append((v, c))
                out_deg.append(0)
            out_deg[v] += k
        else:  # fan-in
            cand = np.flatnonzero(avail > 0)
            k = int(rng.integers(1, min(cand.size, max_in) + 1))
            chosen = np.sort(rng.choice(cand, size=k, replace=False))
            for u in chosen.tolist():
                edges.append((u, count))
                out_deg[u] += 1
            out_deg.append(0)
    return edges


def ggen_fan_in_fan_out(
    n_jobs: int,
    *,
    ports: int = 50,
    nodes: Range = (4, 64),
    max_out: int = 3,
    max_in: int = 3,
    seed: Seed = None,
    mix: CoflowClassMix | None = None,
    weight: WeightRule = "unit",
    arrival_rate: float | None = None,
    capacity: float = 1.0,
    time_unit: str = "unit",
) -> Instance:
    """Jobs whose DAGs follow GGen's fan-in/fan-out method (``ggen_generate_fifo``).

    Rule (per job): the node count ``n`` is uniform on ``nodes`` (an ``int`` = exactly that);
    DeepWeave uses 4 to 64.  Start from one node; while fewer than ``n`` nodes exist, with
    probability 1/2 do a *fan-out* step, else a *fan-in* step.  Let ``avail(v) = max_out -
    outdeg(v)`` (max out-degree minus the current out-degree).

    * fan-out: among the nodes with the largest ``avail`` pick one uniformly; give it ``k``
      new children, ``k`` uniform on ``1..avail``;
    * fan-in: among the nodes with ``avail > 0`` pick ``k`` distinct ones uniformly, ``k``
      uniform on ``1..min(#such nodes, max_in)``, and add one new node with an edge from each.

    Deviation from GGen: ``k`` of a fan-out step is also capped at ``n - #nodes`` so the job has
    exactly ``n`` coflows (GGen may overshoot).  Every new node hangs below existing ones, so
    each job is weakly connected with a single source (node 0).  Defaults ``max_out = max_in =
    3`` and ``ports = 50`` (DeepWeave's 50 x 50 fabric) are our choices.
    """
    _check_common(n_jobs, ports, weight, arrival_rate)
    nb = _bounds(nodes, "nodes")
    if max_out < 1 or max_in < 1:
        raise ValueError(f"max_out and max_in must be >= 1, got {max_out}, {max_in}")
    rng = np.random.default_rng(seed)
    b = _JobsBuilder(rng, ports, mix)
    for _ in range(n_jobs):
        n = _draw(rng, nb)
        b.add_job(n, _ggen_fifo(rng, n, max_out, max_in))
    return b.build(weight, arrival_rate, capacity, time_unit)


def rooted_trees(
    n_jobs: int,
    *,
    ports: int = 50,
    kind: Literal["fan-in", "fan-out"] = "fan-in",
    nodes: Range = (2, 10),
    seed: Seed = None,
    mix: CoflowClassMix | None = None,
    weight: WeightRule = "unit",
    arrival_rate: float | None = None,
    capacity: float = 1.0,
    time_unit: str = "unit",
) -> Instance:
    """Jobs whose DAGs are rooted trees built by uniformly random attachment.

    Rule (per job): ``n`` uniform on ``nodes``; tree node 0 is the root and node ``i = 1..n-1``
    picks its parent uniformly among nodes ``0..i-1`` (a random recursive tree).  ``"fan-out"``:
    every edge points away from the root (parent -> child; root at position 0).  ``"fan-in"``:
    every edge points toward the root (child -> parent); positions are reversed (tree node ``i``
    at position ``n-1-i``) so the root is the last coflow and positions stay topological.
    :func:`is_rooted_tree` recognises every job with the requested kind (a path is both).
    """
    _check_common(n_jobs, ports, weight, arrival_rate)
    if kind not in ("fan-in", "fan-out"):
        raise ValueError(f"kind: expected 'fan-in' or 'fan-out', got {kind!r}")
    nb = _bounds(nodes, "nodes")
    rng = np.random.default_rng(seed)
    b = _JobsBuilder(rng, ports, mix)
    for _ in range(n_jobs):
        n = _draw(rng, nb)
        child = np.arange(1, n)
        parent = rng.integers(child)  # uniform on 0..i-1 for node i
        if kind == "fan-out":
            edges = np.column_stack([parent, child])
        else:
            edges = np.column_stack([n - 1 - child, n - 1 - parent])
        b.add_job(n, edges)
    return b.build(weight, arrival_rate, capacity, time_unit)


def layered_dags(
    n_jobs: int,
    *,
    ports: int = 50,
    layers: Range = (2, 6),
    width: Range = (1, 4),
    edge_prob: float = 0.5,
    seed: Seed = None,
    mix: CoflowClassMix | None = None,
    weight: WeightRule = "unit",
    arrival_rate: float | None = None,
    capacity: float = 1.0,
    time_unit: str = "unit",
) -> Instance:
    """Jobs whose DAGs are layered (stage-by-stage) graphs.

    Rule (per job): the layer count ``L`` is uniform on ``layers`` and each layer's size
    uniform on ``width``.  Each node of layer ``l > 0`` gets one mandatory parent drawn
    uniformly from layer ``l-1``, and every other node of layers ``0..l-1`` becomes an extra
    parent independently with probability ``edge_prob``.  Hence every job's longest
    Starts-After path has exactly ``L`` coflows, and every node of layer ``l > 0`` has a
    predecessor in layer ``l-1``.  Positions are layer by layer.
    """
    _check_common(n_jobs, ports, weight, arrival_rate)
    lb = _bounds(layers, "layers")
    wb = _bounds(width, "width")
    if not 0.0 <= edge_prob <= 1.0:
        raise ValueError(f"edge_prob: must be in [0, 1], got {edge_prob}")
    rng = np.random.default_rng(seed)
    b = _JobsBuilder(rng, ports, mix)
    for _ in range(n_jobs):
        n_layers = _draw(rng, lb)
        sizes = [_draw(rng, wb) for _ in range(n_layers)]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        edges: list[tuple[int, int]] = []
        for layer in range(1, n_layers):
            prev_lo, lo, hi = int(starts[layer - 1]), int(starts[layer]), int(starts[layer + 1])
            for v in range(lo, hi):
                must = prev_lo + int(rng.integers(lo - prev_lo))
                extra = rng.random(lo) < edge_prob
                extra[must] = True
                edges.extend((int(u), v) for u in np.flatnonzero(extra))
        b.add_job(int(starts[-1]), edges)
    return b.build(weight, arrival_rate, capacity, time_unit)


def tpcds_like(
    n_jobs: int,
    *,
    ports: int = 50,
    critical_path: Range = (4, 7),
    scans: Range = (2, 6),
    seed: Seed = None,
    mix: CoflowClassMix | None = None,
    weight: WeightRule = "unit",
    arrival_rate: float | None = None,
    capacity: float = 1.0,
    time_unit: str = "unit",
) -> Instance:
    """TPC-DS-like query DAGs: scans feeding a join tree feeding a chain of aggregations.

    Our reconstruction; the DeepWeave paper gives only the critical-path lengths 4 to 7.

    Rule (per job): draw the critical-path length ``L`` uniformly from ``critical_path``
    (``L >= 3``) and the number of scan coflows ``s`` uniformly from ``scans`` clipped to
    ``[1, 2^(L-2)]``.  Build a binary join tree over the ``s`` scans of height ``h <= L-2``:
    repeatedly join two current subtrees, the pair drawn uniformly among the pairs after whose
    join the rest can still be finished within height ``L-2`` (Kraft test: ``sum 2^(h_i) <=
    2^(L-2)`` over the subtree heights ``h_i``); a join's height is ``max(h_a, h_b) + 1``.  Then
    append a chain of ``L - 1 - h >= 1`` aggregate/sort coflows after the root join (or after
    the lone scan).  The longest Starts-After path (scan, ``h`` joins, the chain) has exactly
    ``L`` coflows; a job has ``s + (s - 1) + (L - 1 - h)`` coflows.  Positions: scans, joins in
    creation order, then the chain.
    """
    _check_common(n_jobs, ports, weight, arrival_rate)
    cb = _bounds(critical_path, "critical_path", minimum=3)
    sb = _bounds(scans, "scans")
    rng = np.random.default_rng(seed)
    b = _JobsBuilder(rng, ports, mix)
    for _ in range(n_jobs):
        length = _draw(rng, cb)
        h_max = length - 2
        cap = 2 ** h_max
        s = _draw(rng, (min(sb[0], cap), min(sb[1], cap)))
        trees = [(v, 0) for v in range(s)]  # (node, height)
        edges: list[tuple[int, int]] = []
        nxt = s
        while len(trees) > 1:
            total = sum(2 ** h for _, h in trees)
            pairs = [
                (i, j)
                for i in range(len(trees))
                for j in range(i + 1, len(trees))
                if total - 2 ** trees[i][1] - 2 ** trees[j][1]
                + 2 ** (max(trees[i][1], trees[j][1]) + 1) <= cap
            ]
            i, j = pairs[int(rng.integers(len(pairs)))]
            (a, ha), (c, hc) = trees[i], trees[j]
            edges += [(a, nxt), (c, nxt)]
            trees = [t for k, t in enumerate(trees) if k not in (i, j)] + [(nxt, max(ha, hc) + 1)]
            nxt += 1
        root, h = trees[0]
        prev = root
        for _ in range(length - 1 - h):
            edges.append((prev, nxt))
            prev = nxt
            nxt += 1
        b.add_job(nxt, edges)
    return b.build(weight, arrival_rate, capacity, time_unit)


# -- jobs from the FB2010 trace --------------------------------------------------------------


def fb2010_jobs(
    trace: Instance | str | os.PathLike[str] | None = None,
    *,
    mean_coflows: int = 5,
    shape: Literal["dag", "fan-in"] = "dag",
    seed: Seed = None,
    ports: int | None = None,
    slots: bool = False,
    offline: bool = False,
    edge_prob: float = 0.5,
    coflows: int | None = None,
) -> Instance:
    """Multi-stage jobs made of the coflows of a single-stage trace (FB2010 by default).

    Rule [C] (Shafiee and Ghaderi, IEEE/ACM ToN 2021, build their multi-stage jobs from this trace
    with the mean number of coflows per job as a knob; how, was not recovered, so the rule is
    ours): shuffle the trace's coflows with the
    seeded RNG; draw ``mu_j`` uniform on ``{1..2*mean_coflows-1}`` and cut the shuffled list
    into consecutive chunks of those sizes (the last job takes what is left, so it may be
    smaller than drawn).  In each chunk, the shuffled order is the coflow order.  ``"dag"``: an
    edge ``(a, b)`` for every ``a < b`` independently with probability ``edge_prob`` (0.5).
    ``"fan-in"``: the last coflow is the root and every other coflow ``a`` picks its parent
    uniformly among the coflows after it (edge ``a -> parent``).  ``rho_j`` = the smallest
    arrival in the chunk (0 for every job when ``offline``); each coflow's release is set to
    ``rho_j``; ``w_j`` uniform on ``(0, 1]``.  Coflows keep their trace ids; job ids are
    ``0..J-1``.

    Options: ``ports=m`` down-scales the fabric: port ``k`` -> ``k mod m``, then same-pair
    flows inside a coflow are merged (:meth:`Instance.merge_parallel_flows`).  ``slots=True``
    converts to the slotted model: every trace flow is rounded up to whole MB *before*
    down-scaling, capacity becomes 1 (one MB per slot), ``time_unit="unit"`` and releases
    become ``ceil(arrival_ms * capacity_MB_per_ms)`` slots.  Otherwise the trace's units (MB,
    ms) and capacity are kept.

    ``trace``: an :class:`Instance` (single-stage: no Starts-After/Finishes-Before edges), a
    trace file path, or ``None`` for :func:`~coflowopt.workloads.trace.find_fb2010`.
    ``coflows=N`` keeps only the trace's first ``N`` coflows by arrival (ties: position) before
    anything else [C]: the O(m) LP baseline has ``C(C-1)`` ordering variables, so its experiments
    cap the coflows per instance.

    Draw order: permutation, chunk sizes (one draw per trace coflow, the unused tail
    discarded), edges (``"dag"``: one uniform per pair, chunk by chunk; ``"fan-in"``: one parent
    per non-root coflow), then weights.
    """
    if trace is None:
        trace = read_trace(require_fb2010())
    elif not isinstance(trace, Instance):
        trace = read_trace(trace)
    if trace.starts_after.size or trace.finishes_before.size:
        raise ValueError("fb2010_jobs: the trace must be single-stage (it has dependency edges)")
    if isinstance(mean_coflows, bool) or int(mean_coflows) != mean_coflows or mean_coflows < 1:
        raise ValueError(f"mean_coflows: expected an integer >= 1, got {mean_coflows!r}")
    if shape not in ("dag", "fan-in"):
        raise ValueError(f"shape: expected 'dag' or 'fan-in', got {shape!r}")
    if ports is not None and ports < 1:
        raise ValueError(f"ports: must be >= 1, got {ports}")
    if not 0.0 <= edge_prob <= 1.0:
        raise ValueError(f"edge_prob: must be in [0, 1], got {edge_prob}")
    if coflows is not None:
        if isinstance(coflows, bool) or int(coflows) != coflows or coflows < 1:
            raise ValueError(f"coflows: expected an integer >= 1, got {coflows!r}")
        if coflows < trace.n_coflows:
            first = np.lexsort((np.arange(trace.n_coflows), trace.release))[:int(coflows)]
            trace = _subset_coflows(trace, np.sort(first))
    fab = trace.fabric
    if (ports is not None or slots) and not fab.is_uniform:
        raise ValueError("fb2010_jobs: ports= and slots= need a trace with uniform capacity")
    mean_coflows = int(mean_coflows)
    rng = np.random.default_rng(seed)
    n_c = trace.n_coflows

    # shuffle and cut into chunks
    perm = rng.permutation(n_c)
    sizes = rng.integers(1, 2 * mean_coflows, size=n_c)  # uniform on {1..2*mean-1}
    ends = np.cumsum(sizes)
    n_jobs = int(np.searchsorted(ends, n_c)) + 1 if n_c else 0
    sizes = sizes[:n_jobs].copy()
    if n_jobs:
        sizes[-1] -= int(ends[n_jobs - 1]) - n_c
    starts = (np.cumsum(sizes) - sizes).astype(np.int64)
    cjob = np.repeat(np.arange(n_jobs), sizes)
    local = np.arange(n_c) - starts[cjob]  # position inside the chunk
    mu = sizes[cjob]  # chunk size of each position

    # edges, in chunk-local order (a < b always)
    if shape == "dag":
        n_pairs = sizes * (sizes - 1) // 2
        pa = [np.triu_indices(int(k), 1) for k in sizes]
        a = np.concatenate([p[0] for p in pa]).astype(np.int64) if n_jobs else np.zeros(0, int)
        b = np.concatenate([p[1] for p in pa]).astype(np.int64) if n_jobs else np.zeros(0, int)
        off = np.repeat(starts, n_pairs)
        keep = rng.random(a.size) < edge_prob
        edges = np.column_stack([a[keep] + off[keep], b[keep] + off[keep]])
    else:
        child = np.flatnonzero(local < mu - 1)
        parent = rng.integers(local[child] + 1, mu[child]) + starts[cjob[child]]
        edges = np.column_stack([child, parent])
    weight = 1.0 - rng.random(n_jobs)

    # releases
    arrival = trace.release[perm].astype(np.float64)
    if offline or not n_jobs:
        rho = np.zeros(n_jobs)
    else:
        rho = np.minimum.reduceat(arrival, starts)

    # flows: relabel to the new coflow positions, ordered by new position (stable)
    inv = np.empty(n_c, dtype=np.int64)
    inv[perm] = np.arange(n_c)
    new_fc = inv[trace.flow_coflow]
    order = np.argsort(new_fc, kind="stable")
    src = trace.flow_src[order].astype(np.int64)
    dst = trace.flow_dst[order].astype(np.int64)
    vol = trace.flow_volume[order]
    fc = new_fc[order]
    if slots:
        vol = np.ceil(vol)
        rho = np.ceil(rho * fab.capacity_in[0])
        fabric = Fabric.uniform(trace.ports if ports is None else ports, 1.0)
        time_unit = "unit"
    else:
        fabric = fab if ports is None else Fabric.uniform(ports, fab.capacity_in[0])
        time_unit = trace.time_unit
    if ports is not None:
        src %= ports
        dst %= ports
    inst = Instance.from_arrays(
        fabric, src, dst, vol, fc,
        coflow_id=trace.coflow_id[perm], coflow_release=rho[cjob], coflow_job=cjob,
        n_coflows=n_c, job_release=rho, job_weight=weight, n_jobs=n_jobs,
        starts_after=edges, time_unit=time_unit,
    )
    return inst.merge_parallel_flows() if ports is not None else inst


def _subset_coflows(trace: Instance, keep: np.ndarray) -> Instance:
    """The single-stage instance of the coflows at positions ``keep`` (sorted), in that order."""
    new = np.full(trace.n_coflows, -1, dtype=np.int64)
    new[keep] = np.arange(keep.size)
    fl = np.flatnonzero(new[trace.flow_coflow] >= 0)
    return Instance.from_arrays(
        trace.fabric, trace.flow_src[fl], trace.flow_dst[fl], trace.flow_volume[fl],
        new[trace.flow_coflow[fl]], coflow_id=trace.coflow_id[keep],
        coflow_release=trace.release[keep], coflow_weight=trace.coflow_weight[keep],
        n_coflows=keep.size, time_unit=trace.time_unit)


# -- analysis helpers ------------------------------------------------------------------------


def job_graph(instance: Instance, job: int) -> tuple[np.ndarray, np.ndarray]:
    """Coflow positions of ``job`` (sorted) and its Starts-After edges in local indices."""
    if not 0 <= job < instance.n_jobs:
        raise IndexError(f"job position {job} out of range 0..{instance.n_jobs - 1}")
    nodes = np.flatnonzero(instance.coflow_job == job)
    sa = instance.starts_after
    e = sa[instance.coflow_job[sa[:, 0]] == job] if sa.size else sa.reshape(0, 2)
    return nodes, np.searchsorted(nodes, e.astype(np.int64))


def critical_path_length(instance: Instance, job: int) -> int:
    """Number of coflows on the longest Starts-After path of job position ``job`` (0 for a job
    without coflows)."""
    nodes, e = job_graph(instance, job)
    n = nodes.size
    if n == 0:
        return 0
    depth = np.ones(n, dtype=np.int64)
    if e.size:
        order = topological_order(n, e)
        assert order is not None
        preds: list[list[int]] = [[] for _ in range(n)]
        for a, b in e.tolist():
            preds[b].append(a)
        for v in order.tolist():
            if preds[v]:
                depth[v] = 1 + max(depth[p] for p in preds[v])
    return int(depth.max())


def is_rooted_tree(instance: Instance, job: int) -> Literal["fan-in", "fan-out"] | None:
    """Whether job position ``job``'s Starts-After DAG is a rooted tree, and which kind.

    Rule [C] (rooted trees as Definition 5 of Shafiee and Ghaderi, ToN 2021, defines them; the
    test is ours): fan-in iff ``|E| = mu - 1``, the graph is weakly connected,
    exactly one node has out-degree 0 and all others out-degree 1; fan-out is the same with
    in-degrees.  A path (including a single coflow) satisfies both and is reported as
    ``"fan-in"``.  Finishes-Before edges are ignored; a job without coflows is no tree.
    """
    nodes, e = job_graph(instance, job)
    n = nodes.size
    if n == 0 or e.shape[0] != n - 1:
        return None
    # weak connectivity by union-find
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    comps = n
    for a, b in e.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            comps -= 1
    if comps != 1:
        return None
    for kind, col in (("fan-in", 0), ("fan-out", 1)):
        deg = np.bincount(e[:, col], minlength=n)
        if int(np.count_nonzero(deg == 0)) == 1 and int(np.count_nonzero(deg == 1)) == n - 1:
            return kind  # type: ignore[return-value]
    return None
