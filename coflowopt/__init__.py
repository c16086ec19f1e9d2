"""coflowopt: coflow scheduling research toolkit."""

from coflowopt.model import (
    CoflowSpec,
    Fabric,
    Instance,
    InstanceError,
    JobSpec,
    build_instance,
    from_networkx,
)

__all__ = [
    "CoflowSpec",
    "Fabric",
    "Instance",
    "InstanceError",
    "JobSpec",
    "build_instance",
    "from_networkx",
]
__version__ = "0.1.0"
