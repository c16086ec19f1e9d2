"""The feasibility validator every schedule passes through before a metric is reported.

It checks a schedule against its :class:`~coflowopt.Instance`: well-formed, non-negative rates,
port capacity, releases, volumes, Starts-After and Finishes-Before precedence (the constraints
of the fluid coflow model: De Pellegrini et al., IEEE TPDS 2022, Sec. III; Shafiee & Ghaderi,
IEEE/ACM ToN 2021, Sec. III; Sun et al., IJCAI 2020).  Three parts, one public object each:

- :mod:`coflowopt.validate.report`: :class:`Tolerance`, :class:`Violation`,
  :class:`InfeasibleSchedule`, :class:`ValidSchedule`, and the :class:`Report` that collects a
  schedule's violations in check order and checks the outcome (coflow and job times, release,
  volume, precedence) from the per-flow times;
- :mod:`coflowopt.validate.stored`: a stored :class:`~coflowopt.Schedule` (:func:`validate`,
  :func:`check`, :func:`check_all`, :func:`analyse`), and rate changes given as arrays
  (:func:`schedule_changes`, :func:`validate_changes`);
- :mod:`coflowopt.validate.streamed`: the :class:`StreamValidator` that compiled simulators
  feed with rate changes as they make them (:func:`stream_push`, :func:`stream_consume`, and
  the grouped :func:`group_push`, :func:`member_push`, :func:`own_push`,
  :func:`group_consume`), in memory proportional to the flows and ports.

Both checkers report to a :class:`Report`, so the same schedule gets the same violations and
messages, stored or streamed: :func:`validate` and :meth:`StreamValidator.result` return a
:class:`ValidSchedule` with the completion times that the metrics use, or raise
:class:`InfeasibleSchedule` naming the first violation.
"""

from coflowopt.validate.report import (
    InfeasibleSchedule,
    Report,
    Tolerance,
    ValidSchedule,
    Violation,
)
from coflowopt.validate.stored import (
    analyse,
    check,
    check_all,
    schedule_changes,
    validate,
    validate_changes,
)
from coflowopt.validate.streamed import (
    StreamGroups,
    StreamState,
    StreamValidator,
    group_consume,
    group_push,
    member_push,
    own_push,
    readonly,
    stream_consume,
    stream_push,
)

__all__ = [
    "InfeasibleSchedule",
    "Report",
    "StreamGroups",
    "StreamState",
    "StreamValidator",
    "Tolerance",
    "ValidSchedule",
    "Violation",
    "analyse",
    "check",
    "check_all",
    "group_consume",
    "group_push",
    "member_push",
    "own_push",
    "readonly",
    "schedule_changes",
    "stream_consume",
    "stream_push",
    "validate",
    "validate_changes",
]
