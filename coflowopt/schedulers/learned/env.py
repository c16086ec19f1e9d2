"""DeepWeave's RL interface (Sun et al., IJCAI 2020, Sec. 3.2) on the decision-epoch
stepper, as a gymnasium environment.

- **State** [R]: the flows of every coflow and the shape of the job DAG: the per-coflow
  features of :func:`coflowopt.schedulers.learned.features.job_batches` at the current
  :class:`~coflowopt.sim.stepper.DagState`, and the Starts-After edges.
- **Action** [R]: a priority list over the DAG's coflows, given as a ``Box`` of one priority
  per coflow, *higher served first* (the network's convention); only the order of the ready
  coflows matters (ties: the coflow ready first, then the lower position), so any real
  numbers are accepted (the box ``[-1, 1]`` is the nominal range).  A sampled priority list
  (a permutation of the ready coflows) is turned into such a vector by
  :func:`order_to_priority`.
- **Decision epochs** [C, Decima-style]: a coflow becomes ready or completes (and a job is
  released); in between the ready coflows are served in the chosen order by the shared
  order-preserving greedy allocation (:class:`~coflowopt.sim.stepper.Stepper`).
- **Reward** [C: the paper says only "from the job's completion time"]: ``r_t = -(t_{k+1} - t_k) *
  (number of unfinished jobs)``, so the episode's return is ``-sum_j JCT_j`` (``-JCT`` for one job).

:class:`DagEpisode` is the environment without gymnasium (the trainer runs it directly);
:class:`DeepWeaveEnv` wraps it in the gymnasium API with padded observations (gymnasium is an
optional dependency, imported when the class is first used).  Episodes draw instances from
a seeded generator (:func:`draw_instance`: GGen fan-in/fan-out, 4-64 coflows per job, and
TPC-DS-like query DAGs, the paper's two workloads, Sec. 4.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedulers.learned.features import DagBatch, gdm_positions, n_features
from coflowopt.schedulers.learned.live import LiveFeatures
from coflowopt.sim.stepper import DagState, Stepper

# DeepWeaveEnv is public too, built on first access (module __getattr__)
__all__ = ["WORKLOADS", "DagEpisode", "draw_instance", "order_to_priority"]

#: Instance families of :func:`draw_instance`.
WORKLOADS = ("ggen", "tpcds", "mixed")


def draw_instance(rng: np.random.Generator, *, workload: str = "mixed",
                  nodes: tuple[int, int] = (4, 64), ports: int = 50, n_jobs: int = 1,
                  v_max: int = 64) -> Instance:
    """A seeded training instance (the workloads of the paper's Sec. 4.1): ``"ggen"`` -- GGen
    fan-in/fan-out jobs with a node count uniform on ``nodes``; ``"tpcds"`` -- TPC-DS-like query
    DAGs (critical path 4-7, :func:`coflowopt.workloads.dags.tpcds_like`; ``nodes`` does not apply);
    ``"mixed"`` -- either, with probability 1/2 each [C].  Coflow contents: CoflowSim's default mix
    on ``ports`` x ``ports`` unit ports (time = normalised size).  Every job has at most
    ``v_max`` coflows (a TPC-DS draw over it is redrawn)."""
    from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like

    if workload not in WORKLOADS:
        raise ValueError(f"workload: must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    lo, hi = int(nodes[0]), int(nodes[1])
    if not 1 <= lo <= hi <= v_max:
        raise ValueError(f"nodes: need 1 <= low <= high <= v_max ({v_max}), got {nodes}")
    kind = workload
    if kind == "mixed":
        kind = "ggen" if rng.random() < 0.5 else "tpcds"
    for _ in range(100):
        seed = int(rng.integers(2**63 - 1))
        if kind == "ggen":
            inst = ggen_fan_in_fan_out(n_jobs, ports=ports, nodes=(lo, hi), seed=seed)
        else:
            inst = tpcds_like(n_jobs, ports=ports, seed=seed)
        if np.bincount(inst.coflow_job).max() <= v_max:
            return inst
    raise ValueError(f"draw_instance: no {kind} job within v_max = {v_max} coflows in 100 draws")


def order_to_priority(order: Sequence[int] | np.ndarray, n: int) -> np.ndarray:
    """A priority list (coflow positions, first served first) as one priority per coflow in
    ``[-1, 1]``, higher first; coflows not listed get ``-1`` (served after every listed one
    among the ready, which only happens when the list leaves a ready coflow out)."""
    o = np.asarray(order, dtype=np.int64).ravel()
    p = np.full(n, -1.0)
    if o.size:
        p[o] = 1.0 - np.arange(o.size) / max(n, 1)
    return p


class DagEpisode:
    """One instance run as an episode of decision epochs on :class:`~coflowopt.sim.stepper.
    Stepper` (the environment without gymnasium).

    ``reset()`` -> the first state; ``batches()`` -> the DeepWeave features of every job at
    the current state (:class:`~coflowopt.schedulers.learned.features.DagBatch`, one per job);
    ``step(priority)`` (higher first) -> ``(reward, done)``.  ``feature_set``: ``"v1"`` or
    ``"v2"`` (:data:`~coflowopt.schedulers.learned.features.FEATURE_SETS`); ``whole``:
    ``batches()`` is one batch of the whole instance
    (:func:`~coflowopt.schedulers.learned.features.instance_batch`, for ``head="attr"``).
    """

    def __init__(self, instance: Instance, feature_set: str = "v1", whole: bool = False):
        self.whole = whole
        # G-DM-BF's rank is static: computed once per episode, not at every epoch
        self.gdm = gdm_positions(instance) if feature_set == "v2" else None
        self.n_features = n_features(feature_set)
        self.feature_set = feature_set
        self.instance = instance
        self.stepper = Stepper(instance)
        # the per-coflow sums kept between epochs (exact for states in any order, so across
        # resets too): an epoch costs the coflows that changed, not every flow (issue 28)
        self.live = LiveFeatures(instance, feature_set, self.gdm)
        self.episode_return = 0.0
        self._batches: list[DagBatch] | None = None

    def reset(self) -> DagState:
        self.episode_return = 0.0
        self._batches = None
        return self.stepper.reset()

    @property
    def state(self) -> DagState:
        return self.stepper.state

    @property
    def done(self) -> bool:
        return self.stepper.done

    @property
    def ready(self) -> np.ndarray:
        """Per coflow, ready now (the coflows the action orders)."""
        return self.stepper._active.copy()

    @property
    def n_steps(self) -> int:
        return self.stepper.n_steps

    def batches(self) -> list[DagBatch]:
        """The features of every job at the current state (cached until the next step)."""
        if self._batches is None and self.whole:
            self._batches = [self.live.instance_batch(self.stepper.state)]
        elif self._batches is None:
            self._batches = self.live.job_batches(self.stepper.state)
        return self._batches

    def features(self) -> np.ndarray:
        """``(C, N_FEATURES)`` features, by coflow position."""
        x = np.zeros((self.instance.n_coflows, self.n_features))
        for b in self.batches():
            x[b.coflows] = b.x
        return x

    def step(self, priority: np.ndarray) -> tuple[float, bool]:
        """Serve the ready coflows by ``priority`` (one per coflow, higher first) to the next
        epoch; returns ``(r_t, done)`` with ``r_t = -(t_{k+1} - t_k) * unfinished jobs``."""
        p = np.asarray(priority, dtype=np.float64).ravel()
        elapsed, n_jobs, done = self.stepper.step(-p)
        self._batches = None
        r = -elapsed * n_jobs
        self.episode_return += r
        return r, done


def _make_env_class() -> type:
    import gymnasium as gym
    from gymnasium import spaces

    class _DeepWeaveEnv(gym.Env):
        """DeepWeave's environment (module docstring), gymnasium API.

        Observation (a ``Dict``, padded to ``v_max`` coflows): ``x`` ``(v_max, N_FEATURES)``
        features in ``[0, 1]``; ``children`` ``(v_max, v_max)`` 0/1, ``children[a, b] = 1``
        when ``b`` starts after ``a``; ``ready``, ``valid`` ``(v_max,)`` 0/1 (ready now; a
        real coflow, not padding); ``job`` ``(v_max,)`` each coflow's job position.  Action:
        ``Box(-1, 1, (v_max,))``, one priority per coflow, higher first (padding ignored).

        ``instance``: always run this instance; else each ``reset`` draws one with
        :func:`draw_instance` (``workload``, ``nodes``, ``ports``, ``n_jobs``) from the
        environment's seeded generator (``reset(seed=...)``).  ``reset(options={"instance":
        inst})`` runs ``inst`` for that episode.  ``max_steps``: truncate after that many
        decision epochs (``None``: run to the end).  ``feature_set``: the columns of ``x``
        (``"v1"``: 10, ``"v2"``: 14 with the heuristics' scores).
        """

        metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

        def __init__(self, instance: Instance | None = None, *, workload: str = "mixed",
                     nodes: tuple[int, int] = (4, 64), ports: int = 50, n_jobs: int = 1,
                     v_max: int = 64, max_steps: int | None = None,
                     feature_set: str = "v1"):
            super().__init__()
            nf = n_features(feature_set)
            self.feature_set = feature_set
            if instance is not None and instance.n_coflows > v_max:
                raise ValueError(f"DeepWeaveEnv: the instance has {instance.n_coflows} "
                                 f"coflows, more than v_max = {v_max}")
            if max_steps is not None and max_steps < 1:
                raise ValueError(f"DeepWeaveEnv: max_steps must be >= 1, got {max_steps}")
            self.fixed = instance
            self.draw = {"workload": workload, "nodes": tuple(nodes), "ports": int(ports),
                         "n_jobs": int(n_jobs)}
            if instance is None:  # check the draw options now, not at the first reset
                draw_instance(np.random.default_rng(0), v_max=v_max, **self.draw)
            self.v_max = int(v_max)
            self.max_steps = max_steps
            V = self.v_max
            self.observation_space = spaces.Dict({
                "x": spaces.Box(0.0, 1.0, (V, nf), dtype=np.float64),
                "children": spaces.MultiBinary([V, V]),
                "ready": spaces.MultiBinary(V),
                "valid": spaces.MultiBinary(V),
                "job": spaces.MultiDiscrete(np.full(V, V)),
            })
            self.action_space = spaces.Box(-1.0, 1.0, (V,), dtype=np.float64)
            self.episode: DagEpisode | None = None

        def _static(self, inst: Instance) -> None:
            if inst.n_coflows > self.v_max:
                raise ValueError(f"DeepWeaveEnv: the instance has {inst.n_coflows} coflows, "
                                 f"more than v_max = {self.v_max}")
            V = self.v_max
            ch = np.zeros((V, V), dtype=np.int8)
            e = inst.starts_after
            ch[e[:, 0], e[:, 1]] = 1
            valid = np.zeros(V, dtype=np.int8)
            valid[: inst.n_coflows] = 1
            job = np.zeros(V, dtype=np.int64)
            job[: inst.n_coflows] = inst.coflow_job
            self._children, self._valid, self._job = ch, valid, job

        def _obs(self) -> dict[str, np.ndarray]:
            ep = self.episode
            assert ep is not None
            x = np.zeros((self.v_max, ep.n_features))
            c = ep.instance.n_coflows
            x[:c] = np.clip(ep.features(), 0.0, 1.0)
            ready = np.zeros(self.v_max, dtype=np.int8)
            ready[:c] = ep.ready
            return {"x": x, "children": self._children.copy(), "ready": ready,
                    "valid": self._valid.copy(), "job": self._job.copy()}

        def _info(self) -> dict[str, Any]:
            ep = self.episode
            assert ep is not None
            return {"time": ep.stepper.time, "unfinished_jobs": ep.stepper.n_unfinished_jobs,
                    "steps": ep.n_steps, "episode_return": ep.episode_return}

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
            super().reset(seed=seed)
            inst = (options or {}).get("instance") or self.fixed
            if inst is None:
                inst = draw_instance(self.np_random, v_max=self.v_max, **self.draw)
            self._static(inst)
            self.episode = DagEpisode(inst, self.feature_set)
            self.episode.reset()
            return self._obs(), self._info()

        def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                             dict[str, Any]]:
            ep = self.episode
            if ep is None:
                raise RuntimeError("DeepWeaveEnv: call reset() before step()")
            if ep.done:
                raise RuntimeError("DeepWeaveEnv: the episode is over; call reset()")
            a = np.asarray(action, dtype=np.float64).ravel()
            if a.size != self.v_max:
                raise ValueError(f"DeepWeaveEnv: action needs {self.v_max} priorities, got "
                                 f"{a.size}")
            r, done = ep.step(a[: ep.instance.n_coflows])
            trunc = (not done and self.max_steps is not None
                     and ep.n_steps >= self.max_steps)
            return self._obs(), float(r), bool(done), bool(trunc), self._info()

    _DeepWeaveEnv.__name__ = _DeepWeaveEnv.__qualname__ = "DeepWeaveEnv"
    _DeepWeaveEnv.__module__ = __name__
    return _DeepWeaveEnv


_ENV_CLASS: type | None = None


def __getattr__(name: str) -> Any:
    # DeepWeaveEnv subclasses gymnasium.Env: built on first use so that importing this module
    # (the trainer does) needs no gymnasium
    global _ENV_CLASS
    if name == "DeepWeaveEnv":
        if _ENV_CLASS is None:
            try:
                _ENV_CLASS = _make_env_class()
            except ImportError as exc:
                raise ImportError("DeepWeaveEnv needs gymnasium: pip install "
                                  "'coflowopt[learn]' (or gymnasium>=1.0)") from exc
        return _ENV_CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
