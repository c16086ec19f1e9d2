"""coflowopt: a research toolkit for coflow scheduling.

The data flow: a workload (trace or generator) gives an :class:`Instance`; an algorithm gives a
:class:`Schedule`; :func:`validate` checks it and returns a :class:`ValidSchedule`, the only
input the metrics accept.  :func:`run` does the last two steps in one call for any registered
scheduler, streaming the validation where a kernel can.
"""

from coflowopt import bounds, metrics, orders, schedulers, sim, workloads
from coflowopt.interchange import (
    InterchangeError,
    load_instance,
    load_schedule,
    save_instance,
    save_schedule,
)
from coflowopt.model import (
    CoflowSpec,
    Fabric,
    Instance,
    InstanceError,
    JobSpec,
    build_instance,
    from_networkx,
)
from coflowopt.params import Params, ParamsError
from coflowopt.schedule import Schedule, ScheduleError
from coflowopt.schedulers import NoFeasibleSchedule, UnsupportedInstance
from coflowopt.service import RunResult, run
from coflowopt.validate import (
    InfeasibleSchedule,
    Tolerance,
    ValidSchedule,
    Violation,
    check,
    check_all,
    schedule_changes,
    validate,
    validate_changes,
)

__all__ = [
    "CoflowSpec",
    "Fabric",
    "InfeasibleSchedule",
    "Instance",
    "InstanceError",
    "InterchangeError",
    "JobSpec",
    "NoFeasibleSchedule",
    "Params",
    "ParamsError",
    "RunResult",
    "Schedule",
    "ScheduleError",
    "Tolerance",
    "UnsupportedInstance",
    "ValidSchedule",
    "Violation",
    "bounds",
    "build_instance",
    "check",
    "check_all",
    "from_networkx",
    "load_instance",
    "load_schedule",
    "metrics",
    "orders",
    "run",
    "save_instance",
    "save_schedule",
    "schedule_changes",
    "schedulers",
    "sim",
    "validate",
    "validate_changes",
    "workloads",
]
__version__ = "0.1.0"
