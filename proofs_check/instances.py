"""Seeded small instances and our worked examples, for the checks.

The worked examples are ours [C] (their numbers computed by us, by brute force and exact LPs),
built to exercise the papers' algorithms: Sincronia's BSSI (Agarwal et al., SIGCOMM 2018) and
the multi-stage model of Shafiee and Ghaderi (*Scheduling Coflows with Dependency Graph*,
IEEE/ACM ToN 2021).

Every generator takes a ``numpy.random.Generator`` and returns one instance (integer volumes,
unit-capacity ports, theory units), small enough for exact optima: order enumeration for the
fluid optimum and a slotted MILP with a horizon of a few dozen slots.
"""

from __future__ import annotations

import numpy as np

from coflowopt.model import CoflowSpec, Instance, JobSpec, build_instance

__all__ = [
    "e2_instance",
    "example2",
    "example4",
    "flow_order_ex4",
    "flow_order_found",
    "random_coflow",
    "random_dag_jobs",
    "random_single_stage",
    "size_grid",
    "sized_jobs",
    "sqrt_mu_fixture",
]

#: the (m, mu) grid the no-constant (report) checks sweep: instance ``i`` has
#: ``size_grid(i)``; quick mode covers it once (12 instances)
GRID_M = (2, 4, 8)
GRID_MU = (1, 2, 4, 8)


def _flows(rng: np.random.Generator, m: int, k: int, vmax: int) -> list[tuple[int, int, float]]:
    return [(int(rng.integers(m)), int(rng.integers(m)), float(rng.integers(1, vmax + 1)))
            for _ in range(k)]


def random_single_stage(rng: np.random.Generator, *, ports: tuple[int, int] = (2, 3),
                        coflows: tuple[int, int] = (2, 5), flows: tuple[int, int] = (1, 3),
                        vmax: int = 3, releases: bool = False, weights: bool = True) -> Instance:
    """``N`` single-stage coflows on ``m`` unit ports; integer volumes in ``1..vmax``; weights in
    ``{1, 2, 3}``; integer releases in ``{0, 1, 2}`` when ``releases``."""
    m = int(rng.integers(ports[0], ports[1] + 1))
    n = int(rng.integers(coflows[0], coflows[1] + 1))
    specs = []
    for j in range(n):
        k = int(rng.integers(flows[0], flows[1] + 1))
        specs.append(CoflowSpec(_flows(rng, m, k, vmax), id=f"c{j}",
                                release=float(rng.integers(0, 3)) if releases else 0.0,
                                weight=float(rng.integers(1, 4)) if weights else 1.0))
    return build_instance(m, coflows=specs)


def random_dag_jobs(rng: np.random.Generator, *, ports: tuple[int, int] = (2, 3),
                    jobs: tuple[int, int] = (1, 3), per_job: tuple[int, int] = (1, 3),
                    max_coflows: int = 5, flows: tuple[int, int] = (1, 2), vmax: int = 3,
                    releases: bool = True) -> Instance:
    """A few jobs, each a random DAG (edge ``a -> b`` for ``a < b`` with probability 1/2) of
    small coflows; job releases in ``{0, 1}``, weights in ``{1, 2, 3}``; at most
    ``max_coflows`` coflows in all."""
    m = int(rng.integers(ports[0], ports[1] + 1))
    nj = int(rng.integers(jobs[0], jobs[1] + 1))
    budget = max_coflows
    specs = []
    for j in range(nj):
        if budget <= 0:
            break
        k = min(budget, int(rng.integers(per_job[0], per_job[1] + 1)))
        budget -= k
        cfs = [CoflowSpec(_flows(rng, m, int(rng.integers(flows[0], flows[1] + 1)), vmax),
                          id=f"j{j}c{c}") for c in range(k)]
        edges = [(a, b) for a in range(k) for b in range(a + 1, k) if rng.random() < 0.5]
        specs.append(JobSpec(cfs, edges, id=f"j{j}", weight=float(rng.integers(1, 4)),
                             release=float(rng.integers(0, 2)) if releases else 0.0))
    return build_instance(m, jobs=specs)


def random_coflow(rng: np.random.Generator, *, ports: tuple[int, int] = (2, 5),
                  vmax: int = 4, density: float = 0.5) -> Instance:
    """One coflow: a random integer ``m x m`` demand matrix (at least one nonzero entry)."""
    m = int(rng.integers(ports[0], ports[1] + 1))
    D = rng.integers(1, vmax + 1, size=(m, m)) * (rng.random((m, m)) < density)
    if not D.any():
        D[int(rng.integers(m)), int(rng.integers(m))] = 1
    return build_instance(m, coflows=[CoflowSpec(D.astype(float), id="D")])


def e2_instance() -> Instance:
    """Worked example E2 (a BSSI trace, ours [C]): 3 x 3, C4 has weight 2.  Ports 1..3 of the
    example are 0..2 here."""
    return build_instance(3, coflows=[
        CoflowSpec([(0, 0, 4.0)], id="C1"),
        CoflowSpec([(0, 1, 2.0), (1, 1, 2.0)], id="C2"),
        CoflowSpec([(1, 2, 3.0), (2, 0, 1.0)], id="C3"),
        CoflowSpec([(2, 2, 5.0)], id="C4", weight=2.0),
    ])


def example2() -> Instance:
    """Worked example 2 of the multi-stage model (ours [C]): J1 (w = 2) fan-in c1, c2 -> c3; J2 (w =
    1, rho = 1) chain c4 -> c5; m = 3.  LP (3) optimum 15, Tian LP 18.5."""
    j1 = JobSpec([CoflowSpec(np.array([[2, 0, 0], [0, 1, 0], [0, 0, 0]]), id="c1"),
                  CoflowSpec(np.array([[0, 0, 0], [0, 0, 3], [0, 0, 0]]), id="c2"),
                  CoflowSpec(np.array([[1, 1, 0], [0, 0, 0], [0, 0, 1]]), id="c3")],
                 [(0, 2), (1, 2)], id="J1", weight=2.0)
    j2 = JobSpec([CoflowSpec(np.array([[0, 0, 0], [2, 0, 0], [0, 0, 0]]), id="c4"),
                  CoflowSpec(np.array([[0, 0, 1], [0, 0, 0], [0, 2, 0]]), id="c5")],
                 [(0, 1)], id="J2", weight=1.0, release=1.0)
    return build_instance(3, jobs=[j1, j2])


def example4() -> Instance:
    """Worked example 4 of the multi-stage model (ours [C]): three jobs on m = 2.  LP (3) optimum
    19; primal-dual order (job1, job2, job0) with dual 19."""
    def one(*rows: list[int]) -> CoflowSpec:
        return CoflowSpec(np.array(rows, dtype=float))

    return build_instance(2, jobs=[
        JobSpec([one([2, 0], [0, 0]), one([2, 0], [0, 0])], id="job0", weight=1.0),
        JobSpec([one([1, 0], [0, 0]), one([1, 0], [0, 0]), one([0, 0], [0, 1])], id="job1",
                weight=3.0),
        JobSpec([one([0, 1], [0, 0]), one([0, 0], [1, 0])], [(0, 1)], id="job2", weight=2.0,
                release=1.0),
    ])


def sqrt_mu_fixture(k: int) -> Instance:
    """The ``Omega(sqrt(mu))`` optimality gap that Shafiee and Ghaderi (ToN 2021) state [R], on our
    instance [C] (the paper's was not recovered): one job, ``m = k`` servers, ``mu = k^2`` coflows
    in ``k`` layers of ``k``; every coflow of layer ``l`` is one unit flow ``l -> l``; complete
    bipartite Starts-After edges between consecutive layers.  ``Delta = T = k`` and
    ``OPT = k^2`` (makespan)."""
    if k < 1:
        raise ValueError(f"k: need k >= 1, got {k}")
    cfs = [CoflowSpec([(layer, layer, 1.0)], id=f"L{layer}_{i}")
           for layer in range(k) for i in range(k)]
    edges = [(layer * k + a, (layer + 1) * k + b)
             for layer in range(k - 1) for a in range(k) for b in range(k)]
    return build_instance(k, jobs=[JobSpec(cfs, edges, id="gap")])


def size_grid(index: int) -> tuple[int, int]:
    """``(m, mu)`` of instance ``index`` of a report check: ``m`` cycles fastest."""
    k = index % (len(GRID_M) * len(GRID_MU))
    return GRID_M[k % len(GRID_M)], GRID_MU[k // len(GRID_M)]


def _tree_edges(rng: np.random.Generator, n: int, kind: str) -> list[tuple[int, int]]:
    """A random recursive tree on ``n`` coflows (node ``i`` hangs from a uniform earlier node)
    with positions topological: fan-out edges parent -> child (root first), fan-in edges
    child -> parent (root last)."""
    parent = [int(rng.integers(i)) for i in range(1, n)]
    if kind == "fan-out":
        return [(p, i) for i, p in enumerate(parent, start=1)]
    return [(n - 1 - i, n - 1 - p) for i, p in enumerate(parent, start=1)]


def sized_jobs(rng: np.random.Generator, m: int, mu: int, *, jobs: tuple[int, int] = (1, 3),
               shape: str = "dag", vmax: int = 3, releases: bool = False) -> Instance:
    """Jobs on ``m`` ports whose largest has exactly ``mu`` coflows (the others uniform on
    ``1..mu``); each coflow has ``1..m`` flows of volume ``1..vmax``.  ``shape``: ``"dag"``
    (edge ``a -> b``, ``a < b``, with probability 1/2), ``"fan-in"`` / ``"fan-out"`` rooted
    trees, or ``"tree"`` (fan-in or fan-out per job, by a coin).  Weights in ``{1, 2, 3}``;
    job releases in ``{0, 1, 2}`` when ``releases``."""
    if shape not in ("dag", "fan-in", "fan-out", "tree"):
        raise ValueError(f"shape: expected dag, fan-in, fan-out or tree, got {shape!r}")
    if m < 1 or mu < 1:
        raise ValueError(f"m and mu: need >= 1, got m = {m}, mu = {mu}")
    nj = int(rng.integers(jobs[0], jobs[1] + 1))
    specs = []
    for j in range(nj):
        k = mu if j == 0 else int(rng.integers(1, mu + 1))
        cfs = [CoflowSpec(_flows(rng, m, int(rng.integers(1, m + 1)), vmax), id=f"j{j}c{c}")
               for c in range(k)]
        if shape == "dag":
            edges = [(a, b) for a in range(k) for b in range(a + 1, k) if rng.random() < 0.5]
        else:
            kind = shape if shape != "tree" else ("fan-in", "fan-out")[int(rng.integers(2))]
            edges = _tree_edges(rng, k, kind)
        specs.append(JobSpec(cfs, edges, id=f"j{j}", weight=float(rng.integers(1, 4)),
                             release=float(rng.integers(0, 3)) if releases else 0.0))
    return build_instance(m, jobs=specs)


def flow_order_ex4(W: float = 1000.0) -> Instance:
    """Our counterexample [C] (found by a hill-climb) to the ``2 + 1/LB`` that Chen claims for
    ordering flows by a time-indexed LP (arXiv 2311.11296, abstract [R]): ``m = 3``, all
    releases 0, coflow ``c1`` of weight ``W``, the others of weight 1.  ``LB = min_k rho_k =
    5``, so the claim is 2.2; our reconstruction of the flow order (with the LB cut) completes
    the coflows at (5, 19, 13, 9) while a slotted schedule reaches (11, 8, 14, 6): ALG / OPT
    >= (19 W + 27) / (8 W + 31), 2.37 at ``W = 1000``.  A start for
    ``coflowopt verify --worst lp-flow-order``."""
    return build_instance(3, coflows=[
        CoflowSpec([(1, 0, 3.0), (2, 0, 2.0)], id="c0"),
        CoflowSpec([(2, 0, 6.0), (2, 2, 2.0)], id="c1", weight=W),
        CoflowSpec([(0, 0, 2.0), (0, 2, 3.0), (2, 2, 4.0)], id="c2"),
        CoflowSpec([(1, 1, 2.0), (1, 2, 4.0)], id="c3"),
    ])


def flow_order_found() -> Instance:
    """A second counterexample [C] to Chen's claimed ``2 + 1/LB`` (arXiv 2311.11296), found
    by ``coflowopt verify --worst lp-flow-order --claim "2 + 1/LB" --assume "release 0"
    --evaluations 2130`` (seed 0) on our reconstruction of the flow order: three coflows, all
    releases 0, weights (1, 1, 50), every coflow's isolation time 10, so ``LB = 10`` and the
    claim is 2.1; measured ALG = 1174 against the fluid optimum 533, a ratio of 2.203.
    Ingress 2 carries parallel flows; port 3 is unused (as found)."""
    return build_instance(4, coflows=[
        CoflowSpec([(0, 0, 5.0), (1, 0, 5.0), (2, 1, 1.0)], id="c0"),
        CoflowSpec([(0, 2, 3.0), (2, 1, 4.0), (2, 2, 3.0), (2, 2, 3.0)], id="c1"),
        CoflowSpec([(0, 1, 3.0), (0, 1, 3.0), (0, 2, 4.0), (2, 2, 5.0)], id="c2", weight=50.0),
    ])
