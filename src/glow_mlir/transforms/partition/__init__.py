"""The device partitioner (Glow's lib/Partitioner): which ops of an optimized graph run on
which device (`plan.py`; load-balanced: `balance.py`), the plan as a DAG of
sub-functions (`split.py`), and the plan marked in the IR by the glow-opt `partition`
pass (`annotate.py`)."""

from glow_mlir.transforms.partition.balance import load_balanced_plan
from glow_mlir.transforms.partition.plan import (
    Part,
    PartDevice,
    PartitionError,
    PartitionPlan,
    memory_plan,
    user_plan,
    validate,
)
from glow_mlir.transforms.partition.split import PartitionDag, SubFunction, split

__all__ = ["Part", "PartDevice", "PartitionDag", "PartitionError", "PartitionPlan",
           "SubFunction", "load_balanced_plan", "memory_plan", "split", "user_plan",
           "validate"]
