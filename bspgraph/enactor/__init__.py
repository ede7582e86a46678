"""The BSP enactor: runs a primitive's step on one device until it converges, or lifts it to
several (partition, exchange, combine) by the contract in :mod:`.contract`.

``contract`` (what a primitive declares), ``combiners`` (how values from several devices
combine), ``state`` (allocation and gathering), ``stats``, ``loop`` (``enact`` and the one-device
loop), ``cluster`` (worker processes for runs from one call; ``running``: where a context's runs go), ``layout`` (cuts and parts), ``distributed`` (the superstep on P devices), ``checks``
(a checked run).
"""

from . import combiners
from .cluster import Cluster, cluster
from .combiners import Add, Combiner, Follow, Max, Min, Replace
from .contract import Primitive, Scalar, State
from .distributed import run_backend
from .layout import distribute
from .loop import Chain, enact, enact_chain
from .state import allocate, gather
from .stats import Stats, Superstep, watching

__all__ = [
    "Add",
    "Chain",
    "Cluster",
    "Combiner",
    "Follow",
    "Max",
    "Min",
    "Primitive",
    "Replace",
    "Scalar",
    "State",
    "Stats",
    "Superstep",
    "allocate",
    "cluster",
    "combiners",
    "distribute",
    "enact",
    "enact_chain",
    "gather",
    "run_backend",
    "watching",
]
