"""A `PartitionPlan` as a DAG of sub-functions, one module per part (Glow's partitioner
output: a function per partition plus the DAG that connects them).

Each part's module holds one `func.func` whose arguments are the part's inputs and whose
results are its outputs, named (`glow.name`) so the runtime can move an output of one part
to the input of the same name of the next: a graph input or output keeps its own name, a
value between parts its name hint when that is free, else `part{P}_{k}`. The constants a
part reads are cloned into it, their weights shared (not copied) through the new module's
resource table.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from glow_mlir.analysis.graph_memory import tensor_bytes
from glow_mlir.dialects.glow import NAME_ATTR
from glow_mlir.ir.resources import ResourceTable, attach_table, resource_value
from glow_mlir.transforms.partition.plan import PartitionPlan


@dataclass
class SubFunction:
    """One part as a module, with what the runtime needs to wire it."""

    index: int
    device: int
    module: ModuleOp
    input_names: list[str]
    output_names: list[str]
    deps: list[int]
    bytes: int
    cost: float
    transfer_in_bytes: int
    """Bytes of its inputs that another part computes (they cross a link)."""


@dataclass
class PartitionDag:
    """The sub-functions in a topological order, and the whole graph's names."""

    parts: list[SubFunction]
    input_names: list[str]
    output_names: list[str]
    strategy: str


def _placeholder_name(attrs: ArrayAttr | None, i: int, default: str) -> str:
    if attrs is not None and i < len(attrs.data):
        d = attrs.data[i]
        if isinstance(d, DictionaryAttr):
            n = d.data.get(NAME_ATTR)
            if isinstance(n, StringAttr):
                return n.data
    return f"{default}{i}"


def _named(names: list[str]) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(n)}) for n in names])


def split(plan: PartitionPlan) -> PartitionDag:
    """One module per part of `plan` (module docstring)."""
    fn = plan.fn
    block = fn.body.blocks.first
    assert block is not None
    terminator = block.last_op
    n_in = len(fn.function_type.inputs.data)
    n_out = len(fn.function_type.outputs.data)
    in_names = [_placeholder_name(fn.arg_attrs, i, "input") for i in range(n_in)]
    out_names = [_placeholder_name(fn.res_attrs, i, "output") for i in range(n_out)]
    names: dict[SSAValue, str] = {a: in_names[i] for i, a in enumerate(block.args)}
    if terminator is not None:
        for i, v in enumerate(terminator.operands):
            names.setdefault(v, out_names[i])
    taken = set(names.values())
    for part in plan.parts:
        for k, v in enumerate(part.outputs):
            if v in names:
                continue
            name = v.name_hint if v.name_hint and v.name_hint not in taken else \
                f"part{part.index}_{k}"
            names[v] = name
            taken.add(name)
    subs = []
    for part in plan.parts:
        module = _module(fn.sym_name.data, part.constants, part.ops, part.inputs,
                         part.outputs, names)
        subs.append(SubFunction(
            index=part.index, device=part.device, module=module,
            input_names=[names[v] for v in part.inputs],
            output_names=[names[v] for v in part.outputs],
            deps=list(part.deps), bytes=part.bytes, cost=part.cost,
            transfer_in_bytes=sum(tensor_bytes(v.type) for v in part.inputs
                                  if not isinstance(v, BlockArgument))))
    return PartitionDag(subs, in_names, out_names, plan.strategy)


def _module(name: str, constants: list[Operation], ops: list[Operation],
            inputs: list[SSAValue], outputs: list[SSAValue],
            names: dict[SSAValue, str]) -> ModuleOp:
    """A module with one function computing `outputs` from `inputs` by clones of `ops`."""
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    table = ResourceTable()
    for op in [*constants, *ops]:  # constants first: they have no operands
        new = op.clone(value_mapper=mapping)
        for old, res in zip(op.results, new.results):
            mapping[old] = res
        block.add_op(new)
        for attr in (*op.attributes.values(), *op.properties.values()):
            if isinstance(attr, DenseResourceAttr):
                table.set(attr.resource_handle.data, resource_value(attr, op))
    block.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    out_types: list[Attribute] = [v.type for v in outputs]
    fn = func.FuncOp(name, FunctionType.from_lists([v.type for v in inputs], out_types),
                     Region(block), arg_attrs=_named([names[v] for v in inputs]),
                     res_attrs=_named([names[v] for v in outputs]))
    module = ModuleOp([fn])
    attach_table(module, table)
    return module


__all__ = ["PartitionDag", "SubFunction", "split"]
