"""Seeded synthetic coflow traces shaped like the Facebook 2010 trace (FB2010-1Hr-150-0).

Model
-----
Coflows are drawn independently; their arrivals form a renewal process.

*Classes.*  Each coflow first draws a class with the fitted class frequencies.  A class is fixed
by three yes/no features: one mapper (``M = 1``)?  one reducer (``R = 1``)?  every flow exactly
1 MB ("unit")?  FB2010 has all eight combinations (``1xR unit`` only once).  These atoms carry
much of the trace's structure: a third of its coflows have ``M = 1``, almost two thirds
``R = 1``, 56% move exactly 1 MB per flow (the trace rounds shuffles up to whole MB), the ``1xR``
coflows are ~30-50 reducers of ~1 MB each, and ~40 coflows wider than 60 x 60 carry 80% of the
flows.  One copula over ``(M, R, size)`` for all coflows misses the atoms and this upper-tail
dependence (tried: ~40% too few flows per coflow, or 29% too few bytes when size is modelled
per flow), so the atoms are classes and a copula only works inside a class.

*Within a class: a Gaussian copula* over the class's free variables, in this order: ``M``
(mappers, unless fixed at 1), ``R`` (reducers, unless fixed at 1), ``S`` (total coflow MB, unless
the class is unit, where ``S = M R``) and ``sigma`` (reducer skew, below; only non-unit classes
with ``R > 1``).  Each variable has an empirical marginal stored as a compact quantile table
(:class:`Marginal`; knots at the probabilities 0, 0.05, ..., 0.95, 0.98, 0.99, 0.995, 1 plus the
probability of the smallest value, so atoms keep their mass), interpolated linearly in ``log``
space (linearly for ``sigma``, which can be 0).  Integer variables are rounded *up* after
interpolation, which keeps the CDF exact at every knot.  The copula correlations are fitted pair
by pair so that the Spearman rank correlation of the discretized synthetic pair equals the
trace's.

*Size and skew.*  ``S`` becomes ``K`` "units" of ``M`` MB (1 MB per mapper): ``K = R`` in a unit
class, else ``K = max(R + 1, round(S / M))``.  So every reducer gets a whole multiple of ``M`` MB
and every flow a whole number of MB, as in the trace.  Every reducer gets one unit; the other
``K - R`` units are dealt multinomially with probabilities proportional to i.i.d. lognormal
weights ``exp(sigma * N(0, 1))``.  A coflow a little above 1 MB per flow thus gets the trace's
"most reducers 1 MB per flow, a few 2-3" pattern from the multinomial noise, and a large one
gets lognormal per-reducer skew.  ``sigma`` is fitted per coflow as the lognormal ``sigma`` with
the coflow's coefficient of variation of per-reducer MB, ``sqrt(log(1 + cv^2))`` (this matches
the trace's skew tail better than the standard deviation of log MB, which misses coflows with
one dominant reducer).

*Arrivals.*  Inter-arrival times are i.i.d. Weibull (maximum likelihood; on the trace's 525 gaps
it beats exponential, gamma and lognormal on both AIC and the Kolmogorov-Smirnov distance: KS
0.046 against 0.166, 0.067 and 0.053); the first coflow arrives at 0 and arrival times are the
running sums rounded to whole ms.

*Load.*  ``load=rho`` scales every inter-arrival gap by one factor (drawn the same way, so only
the arrival times change) such that the offered load, the **mean port utilisation over the
arrival span**, is ``rho``::

    rho = V / (m * B * T)        V = total MB of all flows, m = ports, B = capacity (MB/ms),
                                 T = last release - first release (ms)

Each flow crosses one ingress and one egress port, so this is the mean over the ``2 m`` ports
of (MB through the port) / (``B * T``): the fraction of the arrival span an average port would
be busy at full rate.  It says nothing about skew: the busiest ports of an FB-like instance are
loaded far more than the mean (with ``rho = 1`` some are overloaded several times over).
Without ``load`` the Weibull arrivals of FB2010 give ``rho`` of 0.2-0.8 for 100 coflows on 150
ports (the total MB is heavy-tailed, the span is not).

*Ports.*  ``M`` mapper ports and ``R`` reducer ports are drawn uniformly without replacement from
``range(ports)``, independently for the two sides (a mapper and a reducer may share an index).
``M`` and ``R`` are capped at ``ports``.

The default :class:`FBLikeParams` are the numbers fitted by ``benchmarks/fit_fb2010.py``
(real-vs-synthetic statistics in ``benchmarks/fit_fb2010.md``); the trace itself is not part of
this package.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coflowopt.model import Fabric, Instance
from coflowopt.workloads.trace import GBPS_MB_PER_MS, parse_trace

__all__ = [
    "CoflowClass",
    "FBLikeParams",
    "Marginal",
    "coflow_features",
    "synthetic_trace",
    "trace_statistics",
]


@dataclass(frozen=True)
class Marginal:
    """A marginal distribution as a quantile table.

    ``probs`` (strictly increasing, from 0 to 1) and ``values`` (non-decreasing) are knots of the
    quantile function; between knots it is interpolated linearly in ``log(value)`` when ``log``
    (values must then be > 0), else linearly.  ``integer``: round the result up to a whole number.
    """

    probs: tuple[float, ...]
    values: tuple[float, ...]
    log: bool = True
    integer: bool = False

    def __post_init__(self) -> None:
        p, v = np.asarray(self.probs, float), np.asarray(self.values, float)
        if p.ndim != 1 or p.shape != v.shape or p.size < 2:
            raise ValueError("Marginal: probs and values must be 1-D of equal length >= 2")
        if p[0] != 0.0 or p[-1] != 1.0 or np.any(np.diff(p) <= 0):
            raise ValueError("Marginal: probs must increase strictly from 0 to 1")
        if np.any(np.diff(v) < 0) or not np.all(np.isfinite(v)):
            raise ValueError("Marginal: values must be finite and non-decreasing")
        if self.log and v[0] <= 0:
            raise ValueError("Marginal: log interpolation needs values > 0")

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Quantile function at probabilities ``u`` (in ``[0, 1]``)."""
        p, v = np.asarray(self.probs), np.asarray(self.values)
        x = np.exp(np.interp(u, p, np.log(v))) if self.log else np.interp(u, p, v)
        if self.integer:
            # a hair of tolerance so that exp(log(k)) == k(1 + eps) still gives k
            x = np.ceil(x * (1 - 1e-12))
        return x


@dataclass(frozen=True)
class CoflowClass:
    """One class of coflows: its probability, the marginals of its free variables, their copula.

    ``mappers`` / ``reducers`` are ``None`` when fixed at 1.  ``unit``: every flow is exactly
    1 MB (so ``size`` and ``skew`` are ``None``).  Otherwise ``size`` is the total MB and ``skew``
    the per-reducer lognormal ``sigma`` (``None`` when ``R = 1``).  ``corr`` is the
    Gaussian-copula correlation matrix over the free variables in the order ``mappers, reducers,
    size, skew`` (the ``None`` ones left out; ``()`` when there are none).
    """

    name: str
    prob: float
    mappers: Marginal | None
    reducers: Marginal | None
    size: Marginal | None
    skew: Marginal | None
    corr: tuple[tuple[float, ...], ...]
    unit: bool = False

    @property
    def variables(self) -> tuple[str, ...]:
        """Names of the free variables, in copula order."""
        names = ("mappers", "reducers", "size", "skew")
        return tuple(n for n in names if getattr(self, n) is not None)

    def __post_init__(self) -> None:
        d = len(self.variables)
        if self.unit != (self.size is None) or (self.unit and self.skew is not None):
            raise ValueError(f"CoflowClass {self.name}: a unit class has no size and no skew, "
                             "any other class has a size")
        c = np.asarray(self.corr, float)
        if c.size == 0:
            c = c.reshape(0, 0)
        if (c.shape != (d, d) or not np.allclose(c, c.T)
                or not np.allclose(np.diag(c), 1.0)):
            raise ValueError(f"CoflowClass {self.name}: corr must be a {d}x{d} correlation matrix")
        if d and np.linalg.eigvalsh(c)[0] <= 0:
            raise ValueError(f"CoflowClass {self.name}: corr is not positive definite")


def _m(probs: tuple[float, ...], values: tuple[float, ...], *, log: bool = True,
       integer: bool = False) -> Marginal:
    return Marginal(probs, values, log=log, integer=integer)


# --- fitted constants ---------------------------------------------------------------------------
# Fitted to FB2010-1Hr-150-0 by benchmarks/fit_fb2010.py (paste its output here when refitting).
FB2010_CLASSES: tuple[CoflowClass, ...] = (
    CoflowClass(
        name="1x1 unit",
        prob=0.205323,
        mappers=None,
        reducers=None,
        size=None,
        skew=None,
        corr=(),
        unit=True,
    ),
    CoflowClass(
        name="Mx1 unit",
        prob=0.28327,
        mappers=_m(
            (
                0.0, 0.05, 0.0939597, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                2.0, 2.0, 2.0, 3.0, 3.0, 4.0, 7.0, 7.0, 7.0, 7.0, 7.0, 11.0, 13.0, 13.0, 14.0,
                14.0, 15.0, 26.0, 27.0, 27.0, 28.0, 30.0, 110.0, 137.0, 137.0,
            ), integer=True,
        ),
        reducers=None,
        size=None,
        skew=None,
        corr=(
            (1.0,),
        ),
        unit=True,
    ),
    CoflowClass(
        name="1xR unit",
        prob=0.00190114,
        mappers=None,
        reducers=_m(
            (
                0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7,
                0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0,
                30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0,
            ), integer=True,
        ),
        size=None,
        skew=None,
        corr=(
            (1.0,),
        ),
        unit=True,
    ),
    CoflowClass(
        name="MxR unit",
        prob=0.0684411,
        mappers=_m(
            (
                0.0, 0.0277778, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                3.0, 4.0, 4.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 10.0, 23.0, 32.0, 58.0, 99.0, 113.0,
                121.0, 122.0, 134.0, 146.0, 147.0, 147.0, 147.0, 147.0, 147.0, 147.0,
            ), integer=True,
        ),
        reducers=_m(
            (
                0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.333333, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0, 5.0, 14.0, 14.0, 25.0, 29.0, 44.0,
                46.0, 47.0, 64.0, 82.0, 133.0, 135.0, 136.0, 136.0, 136.0, 136.0,
            ), integer=True,
        ),
        size=None,
        skew=None,
        corr=(
            (1.0, 0.8616),
            (0.8616, 1.0),
        ),
        unit=True,
    ),
    CoflowClass(
        name="1x1",
        prob=0.0285171,
        mappers=None,
        reducers=None,
        size=_m(
            (
                0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7,
                0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                2.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0, 6.0, 6.0, 6.0, 7.0, 7.0, 7.0, 11.0, 18.0, 59.0,
                59.0, 423.0, 583.0, 638.0, 638.0, 638.0, 638.0, 638.0,
            ), integer=True,
        ),
        skew=None,
        corr=(
            (1.0,),
        ),
        unit=False,
    ),
    CoflowClass(
        name="Mx1",
        prob=0.117871,
        mappers=_m(
            (
                0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.612903,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0,
                3.0, 3.0, 3.0, 3.0, 4.0, 14.0, 73.0, 73.0, 73.0,
            ), integer=True,
        ),
        reducers=None,
        size=_m(
            (
                0.0, 0.0322581, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                4.0, 6.0, 6.0, 6.0, 10.0, 30.0, 40.0, 42.0, 44.0, 44.0, 48.0, 50.0, 62.0, 90.0,
                102.0, 128.0, 159.0, 180.0, 189.0, 222.0, 276.0, 837.0, 1180.0, 1180.0, 1180.0,
            ),
        ),
        skew=None,
        corr=(
            (1.0, 0.1723),
            (0.1723, 1.0),
        ),
        unit=False,
    ),
    CoflowClass(
        name="1xR",
        prob=0.0969582,
        mappers=None,
        reducers=_m(
            (
                0.0, 0.0196078, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                11.0, 11.0, 18.0, 21.0, 24.0, 28.0, 31.0, 33.0, 33.0, 35.0, 35.0, 36.0, 38.0,
                38.0, 42.0, 43.0, 45.0, 48.0, 50.0, 52.0, 55.0, 56.0, 62.0, 62.0, 62.0,
            ), integer=True,
        ),
        size=_m(
            (
                0.0, 0.0196078, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                20.0, 20.0, 29.0, 38.0, 40.0, 42.0, 43.0, 47.0, 51.0, 59.0, 59.0, 64.0, 69.0,
                72.0, 79.0, 110.0, 170.0, 180.0, 204.0, 290.0, 674.0, 1189.0, 2251.0, 2251.0,
                2251.0,
            ), integer=True,
        ),
        skew=_m(
            (
                0.0, 0.0196078, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                0.209802, 0.209802, 0.272525, 0.316843, 0.326419, 0.338108, 0.351857, 0.366388,
                0.375021, 0.379606, 0.387189, 0.406662, 0.421294, 0.427897, 0.441221, 0.449167,
                0.469068, 0.479855, 0.511198, 0.554141, 1.19761, 1.75877, 1.78694, 1.78694,
                1.78694,
            ), log=False,
        ),
        corr=(
            (1.0, 0.267, 0.429),
            (0.267, 1.0, 0.2535),
            (0.429, 0.2535, 1.0),
        ),
        unit=False,
    ),
    CoflowClass(
        name="MxR",
        prob=0.197719,
        mappers=_m(
            (
                0.0, 0.0384615, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                2.0, 2.0, 3.0, 4.0, 5.0, 8.0, 13.0, 15.0, 16.0, 27.0, 29.0, 32.0, 48.0, 55.0,
                63.0, 65.0, 117.0, 137.0, 145.0, 146.0, 147.0, 147.0, 147.0, 147.0, 147.0,
            ), integer=True,
        ),
        reducers=_m(
            (
                0.0, 0.0288462, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                2.0, 3.0, 3.0, 5.0, 7.0, 9.0, 13.0, 15.0, 29.0, 54.0, 62.0, 67.0, 73.0, 84.0,
                112.0, 116.0, 119.0, 121.0, 122.0, 139.0, 141.0, 143.0, 144.0, 145.0, 145.0,
            ), integer=True,
        ),
        size=_m(
            (
                0.0, 0.00961538, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                12.0, 12.0, 195.0, 308.0, 470.0, 1935.0, 2916.0, 3316.0, 3968.0, 4224.0, 5193.0,
                7172.0, 11268.0, 13320.0, 22236.0, 26172.0, 52668.0, 182208.0, 416768.0,
                1218870.0, 1618764.0, 3442680.0, 4999600.0, 8501205.0, 8501205.0,
            ),
        ),
        skew=_m(
            (
                0.0, 0.05, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0,
            ),
            (
                0.0, 0.0, 0.0, 0.0, 0.0141698, 0.0834459, 0.12077, 0.218533, 0.224861, 0.238831,
                0.277419, 0.315125, 0.39295, 0.444547, 0.466292, 0.476636, 0.484404, 0.511558,
                0.526908, 0.614668, 0.738063, 1.43499, 1.91348, 1.96123, 1.96123,
            ), log=False,
        ),
        corr=(
            (1.0, 0.435, 0.6527, 0.1638),
            (0.435, 1.0, 0.7932, 0.7237),
            (0.6527, 0.7932, 1.0, 0.6052),
            (0.1638, 0.7237, 0.6052, 1.0),
        ),
        unit=False,
    ),
)
FB2010_INTERARRIVAL_SHAPE = 0.732668
FB2010_INTERARRIVAL_SCALE = 5653.75
# --- end of fitted constants --------------------------------------------------------------------


@dataclass(frozen=True)
class FBLikeParams:
    """Parameters of the FB-like generator (see the module docstring for the model).

    ``classes``: the width classes (their ``prob`` must sum to 1).  Inter-arrival times (ms) are
    Weibull with ``interarrival_shape`` and ``interarrival_scale``.  Defaults: fitted to FB2010.
    """

    classes: tuple[CoflowClass, ...] = FB2010_CLASSES
    interarrival_shape: float = FB2010_INTERARRIVAL_SHAPE
    interarrival_scale: float = FB2010_INTERARRIVAL_SCALE

    def __post_init__(self) -> None:
        if not self.classes:
            raise ValueError("FBLikeParams: need at least one class")
        probs = np.array([c.prob for c in self.classes])
        if np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-6:
            raise ValueError("FBLikeParams: class probabilities must be >= 0 and sum to 1")
        if not (self.interarrival_shape > 0 and self.interarrival_scale > 0):
            raise ValueError("FBLikeParams: Weibull shape and scale must be > 0")


def _sample_class(cls: CoflowClass, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw ``n`` coflows' (M, R, S, sigma) from one class."""
    names = cls.variables
    out = {"mappers": np.ones(n), "reducers": np.ones(n), "size": np.zeros(n),
           "skew": np.zeros(n)}
    if not names:
        return out
    chol = np.linalg.cholesky(np.asarray(cls.corr, float))
    from scipy.special import ndtr  # lazily: importing scipy costs ~25 MB

    u = ndtr(rng.standard_normal((n, len(names))) @ chol.T)
    for j, name in enumerate(names):
        out[name] = getattr(cls, name).ppf(u[:, j])
    return out


def synthetic_trace(
    n_coflows: int = 526,
    *,
    seed: int | np.random.Generator | None = None,
    ports: int = 150,
    params: FBLikeParams | None = None,
    capacity: float = GBPS_MB_PER_MS,
    load: float | None = None,
) -> Instance:
    """A synthetic FB-like trace of ``n_coflows`` coflows on ``ports`` ports.

    The result is what :func:`~coflowopt.workloads.trace.parse_trace` would build from the
    corresponding trace text: MB and ms, one job per coflow, coflow ids ``1..n``, releases the
    whole-ms arrival times, each reducer's MB split evenly over the coflow's mappers (flows
    reducer-major within a coflow).  The same ``seed`` gives the same instance; all randomness
    comes from ``numpy.random.default_rng(seed)``.

    ``load``: ``None`` (default) keeps the fitted FB2010 arrivals; a number ``rho > 0`` scales
    all inter-arrival gaps by one factor so that the offered load, ``V / (m * B * T)`` (total MB
    over ports x capacity in MB/ms x arrival span in ms; the mean port utilisation over the
    arrival span, see the module docstring), is ``rho``.  Flows and the seeded draws are the
    same as without it; arrivals are still rounded to whole ms, so the load is ``rho`` up to a
    relative ``0.5 / T``.  Needs ``n_coflows >= 2``.
    """
    if isinstance(n_coflows, bool) or not isinstance(n_coflows, int | np.integer):
        raise TypeError(f"n_coflows: expected an integer, got {n_coflows!r}")
    if n_coflows < 0:
        raise ValueError(f"n_coflows: must be >= 0, got {n_coflows}")
    if isinstance(ports, bool) or not isinstance(ports, int | np.integer) or ports < 1:
        raise ValueError(f"ports: expected an integer >= 1, got {ports!r}")
    if load is not None:
        if isinstance(load, bool) or not isinstance(load, int | float | np.number) \
                or not (np.isfinite(load) and load > 0):
            raise ValueError(f"load: expected a number > 0 (or None), got {load!r}")
        if n_coflows < 2:
            raise ValueError(f"load: needs n_coflows >= 2 (an arrival span), got {n_coflows}")
    n, ports = int(n_coflows), int(ports)
    params = FBLikeParams() if params is None else params
    rng = np.random.default_rng(seed)
    if n == 0:
        return parse_trace(f"{ports} 0\n", capacity=capacity)

    # 1. width class, then (M, R, S, sigma) from the class copula
    probs = np.array([c.prob for c in params.classes])
    label = rng.choice(len(probs), size=n, p=probs / probs.sum())
    m = np.ones(n, dtype=np.int64)
    r = np.ones(n, dtype=np.int64)
    size = np.zeros(n)
    sigma = np.zeros(n)
    unit = np.zeros(n, dtype=bool)
    for k, cls in enumerate(params.classes):
        idx = np.flatnonzero(label == k)
        if idx.size == 0:
            continue
        draw = _sample_class(cls, idx.size, rng)
        m[idx] = draw["mappers"]
        r[idx] = draw["reducers"]
        size[idx] = draw["size"]
        sigma[idx] = draw["skew"]
        unit[idx] = cls.unit
    m = np.clip(m, 1, ports)
    r = np.clip(r, 1, ports)
    # K units of M MB each: K = R (1 MB per flow) in a unit class, else at least R + 1
    units = np.where(unit, r, np.maximum(r + 1, np.rint(size / m).astype(np.int64)))

    # 2. per-reducer units: one each, the rest multinomial over lognormal weights.  Rows are
    # right-aligned in a (n, max R) table because multinomial gives the leftover probability
    # mass to the last column, which must be a real reducer.
    width = int(r.max())
    col = np.arange(width)
    real = col[None, :] >= (width - r)[:, None]
    w = np.where(real, np.exp(sigma[:, None] * rng.standard_normal((n, width))), 0.0)
    w /= w.sum(axis=1, keepdims=True)
    red_units = 1 + rng.multinomial(units - r, w)
    red_units = red_units[real]  # row-major: coflow by coflow, its R reducers in order

    # 3. ports: the first M (R) entries of a uniformly random permutation of range(ports)
    map_perm = np.argsort(rng.random((n, ports)), axis=1)
    red_perm = np.argsort(rng.random((n, ports)), axis=1)
    map_ports = map_perm[np.arange(ports)[None, :] < m[:, None]]
    red_ports = red_perm[np.arange(ports)[None, :] < r[:, None]]

    # 4. arrivals: first at 0, then Weibull gaps, rounded to whole ms
    gaps = params.interarrival_scale * rng.weibull(params.interarrival_shape, max(n - 1, 0))
    if load is None:
        arrival = np.rint(np.concatenate([[0.0], np.cumsum(gaps)]))[:n]
    else:
        # rho = V / (m B T): the span T that gives the target, reached by scaling every gap
        total_mb = float((red_units * np.repeat(m, r)).sum())
        cum = np.concatenate([[0.0], np.cumsum(gaps)])[:n]
        arrival = np.rint(cum * (total_mb / (ports * capacity * float(load)) / cum[-1]))
        if arrival[-1] <= 0:
            raise ValueError(f"load: {load} compresses all arrivals into 0 ms "
                             f"({total_mb:g} MB on {ports} ports); ask for a lower load")

    # 5. expand to M x R flows exactly as parse_trace does (reducer-major, MB_r / M per flow)
    flows = m * r
    total = int(flows.sum())
    coflow = np.repeat(np.arange(n, dtype=np.int64), flows)
    map_off = np.repeat(np.cumsum(m) - m, flows)
    red_off = np.repeat(np.cumsum(r) - r, flows)
    local = np.arange(total) - np.repeat(np.cumsum(flows) - flows, flows)
    r_idx = local // m[coflow]
    m_idx = local % m[coflow]
    red_mb = (red_units * np.repeat(m, r)).astype(np.float64)
    src = map_ports[map_off + m_idx]
    dst = red_ports[red_off + r_idx]
    vol = red_mb[red_off + r_idx] / m[coflow]
    return Instance.from_arrays(
        Fabric.uniform(ports, capacity), src, dst, vol, coflow,
        coflow_id=np.arange(1, n + 1, dtype=np.int64), coflow_release=arrival, n_coflows=n,
        job_release=arrival, time_unit="ms",
    )


def coflow_features(inst: Instance) -> dict[str, np.ndarray]:
    """Per-coflow shape of a trace-like instance (arrays of length ``n_coflows``).

    ``mappers`` / ``reducers``: distinct source / destination ports; ``flows``: number of flows;
    ``size``: total volume; ``reducer_cv``: coefficient of variation (population) of the
    volume received per destination port (0 when ``R = 1``); ``reducer_max_mean``: largest over
    mean of the same (1 when the coflow has no volume); ``unit_flows``: every flow is exactly
    1 (MB).
    """
    n, ports = inst.n_coflows, inst.ports
    fc = inst.flow_coflow.astype(np.int64)

    def distinct(port: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keys, inv = np.unique(fc * ports + port, return_inverse=True)
        return keys // ports, inv

    map_cf, _ = distinct(inst.flow_src.astype(np.int64))
    red_cf, red_inv = distinct(inst.flow_dst.astype(np.int64))
    mappers = np.bincount(map_cf, minlength=n).astype(float)
    reducers = np.bincount(red_cf, minlength=n).astype(float)
    size = np.asarray(inst.coflow_size, dtype=float)
    red_mb = np.bincount(red_inv, weights=inst.flow_volume, minlength=red_cf.size)
    safe_r = np.maximum(reducers, 1)
    mean = size / safe_r
    dev = red_mb - mean[red_cf]
    std = np.sqrt(np.bincount(red_cf, weights=dev * dev, minlength=n) / safe_r)
    with np.errstate(invalid="ignore", divide="ignore"):
        cv = np.where(mean > 0, std / mean, 0.0)
        red_max = np.zeros(n)
        np.maximum.at(red_max, red_cf, red_mb)
        max_mean = np.where(mean > 0, red_max / mean, 1.0)
    vmin = np.full(n, np.inf)
    vmax = np.full(n, -np.inf)
    np.minimum.at(vmin, fc, inst.flow_volume)
    np.maximum.at(vmax, fc, inst.flow_volume)
    return {
        "mappers": mappers,
        "reducers": reducers,
        "flows": np.asarray(inst.coflow_width, dtype=float),
        "size": size,
        "reducer_cv": cv,
        "reducer_max_mean": max_mean,
        "unit_flows": (vmin == 1.0) & (vmax == 1.0),
    }


_STAT_PCTS = (("mean", None), ("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))


def trace_statistics(inst: Instance) -> dict[str, float]:
    """Summary statistics used to compare real and synthetic traces.

    Width (``mappers``, ``reducers``, ``flows``), size (MB) and reducer skew (``skew_cv``: the
    coefficient of variation of per-reducer MB; ``skew_max_mean``: max over mean of it) each get
    ``_mean``, ``_p50``, ``_p90``, ``_p99`` and ``_max``; also the fractions of coflows with one
    mapper, one reducer, both, and with every flow exactly 1 MB; the share of bytes in the 10
    largest coflows; Pearson correlations of ``log M``, ``log R`` and ``log size``; the mean, CV
    (population) and median of inter-arrival times (sorted releases) and the release span.
    """
    n = inst.n_coflows
    out: dict[str, float] = {"n_coflows": float(n), "n_flows": float(inst.n_flows),
                             "total_mb": float(inst.flow_volume.sum())}
    nan = float("nan")
    f = coflow_features(inst) if n else None
    for key, name in (("mappers", "mappers"), ("reducers", "reducers"), ("flows", "flows"),
                      ("size", "size_mb"), ("reducer_cv", "skew_cv"),
                      ("reducer_max_mean", "skew_max_mean")):
        for suffix, q in _STAT_PCTS:
            if f is None:
                out[f"{name}_{suffix}"] = nan
            elif q is None:
                out[f"{name}_{suffix}"] = float(np.mean(f[key]))
            else:
                out[f"{name}_{suffix}"] = float(np.percentile(f[key], q))
    if f is None:
        for k in ("size_mb_min", "frac_m1", "frac_r1", "frac_m1_r1", "frac_unit_flows",
                  "top10_share", "corr_log_m_r", "corr_log_m_size", "corr_log_r_size"):
            out[k] = nan
    else:
        m, r, s = f["mappers"], f["reducers"], f["size"]
        out["size_mb_min"] = float(s.min())
        out["frac_m1"] = float(np.mean(m == 1))
        out["frac_r1"] = float(np.mean(r == 1))
        out["frac_m1_r1"] = float(np.mean((m == 1) & (r == 1)))
        out["frac_unit_flows"] = float(np.mean(f["unit_flows"]))
        total = s.sum()
        out["top10_share"] = float(np.sort(s)[::-1][:10].sum() / total) if total > 0 else nan
        logs = np.log(np.maximum(np.vstack([m, r, s]), 1e-300))
        with np.errstate(invalid="ignore", divide="ignore"):
            c = np.corrcoef(logs) if n > 1 else np.full((3, 3), nan)
        out["corr_log_m_r"] = float(c[0, 1])
        out["corr_log_m_size"] = float(c[0, 2])
        out["corr_log_r_size"] = float(c[1, 2])
    rel = np.sort(np.asarray(inst.release, dtype=float))
    gaps = np.diff(rel)
    if gaps.size:
        mu = float(gaps.mean())
        out["interarrival_mean"] = mu
        out["interarrival_cv"] = float(gaps.std() / mu) if mu > 0 else nan
        out["interarrival_p50"] = float(np.median(gaps))
    else:
        out["interarrival_mean"] = out["interarrival_cv"] = out["interarrival_p50"] = nan
    out["span_ms"] = float(rel[-1] - rel[0]) if n else nan
    return out
