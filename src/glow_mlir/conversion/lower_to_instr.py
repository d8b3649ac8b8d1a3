"""`lower-to-instr`: Glow's IRGen. Each `func.func` of `glow` ops becomes a `glow_ir.func`.

Why it looks the way it does:

- Weights (the function's global memory) are declared in Glow's order: one mutable `input`
  per argument, one `constant` per distinct `glow.constant` (its bytes stay in the module's
  resource table under the same handle; an inline `dense<...>` is moved there first, since
  a weight's value is always a `dense_resource`), one mutable `output` per result. Names
  come from the `glow.name` argument/result attributes (the ONNX names) and are made unique.
- Every other op becomes one instruction in program order (the graph is already scheduled),
  its results allocated by `alloc_activation` right before it, attributes copied verbatim.
  Graph ops without an instruction of their own: `glow.reshape` is a `tensor_view` (no
  copy), `glow.slice` an `extract_tensor`, `glow.insert_tensor` a copy then an
  `insert_tensor`, `glow.concat` one `insert_tensor` per input.
- A returned value computed by an instruction is written straight into its (first) output
  weight: no activation, no copy. A returned input, constant or view, and the second return
  of one value, are copied into their output weights at the end instead.
- Every activation is freed at the end, in reverse allocation order: lifetimes are made
  tight later by `hoist-dealloc` and `sink-alloc`, which keeps this pass simple.
- State (a training step's weights and momenta: an argument with `glow.initial`) is one
  `mutable` weight with that value, no placeholder. The result that `glow.updates` it is
  written straight into that weight (an SGD update's `@out` on the weight it reads, an
  in-place pair) when nothing reads the old value afterwards; else it is computed into
  an activation and copied into the weight at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from glow_mlir.dialects import glow, glow_ir
from glow_mlir.dialects.glow import INITIAL_ATTR, NAME_ATTR, UPDATES_ATTR
from glow_mlir.dialects.glow_ops.base import GlowOp
from glow_mlir.dialects.glow_ops.traits import NoInstruction
from glow_mlir.dialects.glow_ops.types import normalize_axis, shape_of
from glow_mlir.ir.element_types import numpy_dtype
from glow_mlir.ir.resources import add_resource, load_resource_dialect
from glow_mlir.ir.text import DiagnosticError, Diagnostics
from glow_mlir.transforms.graph.utils import constant_value


def memref_of(t: Attribute) -> MemRefType:
    """The buffer type holding a tensor of type `t`."""
    assert isinstance(t, TensorType)
    return MemRefType(t.get_element_type(), t.get_shape())


def placeholder_names(attrs: ArrayAttr | None, count: int, prefix: str) -> list[str]:
    """The `glow.name` of each of `count` arguments/results (`attrs`: arg_attrs or
    res_attrs), `{prefix}{i}` where one has none."""
    names = []
    for i in range(count):
        d = attrs.data[i] if attrs is not None and i < len(attrs.data) else None
        name = d.data.get(NAME_ATTR) if isinstance(d, DictionaryAttr) else None
        names.append(name.data if isinstance(name, StringAttr) else f"{prefix}{i}")
    return names


def _attr(attrs: ArrayAttr | None, i: int, key: str) -> Attribute | None:
    d = attrs.data[i] if attrs is not None and i < len(attrs.data) else None
    return d.data.get(key) if isinstance(d, DictionaryAttr) else None


def state_values(fn: func.FuncOp) -> dict[int, DenseResourceAttr]:
    """The state arguments of `fn` (`glow.initial`): index -> initial value."""
    out = {}
    for i in range(len(fn.function_type.inputs.data)):
        v = _attr(fn.arg_attrs, i, INITIAL_ATTR)
        if isinstance(v, DenseResourceAttr):
            out[i] = v
    return out


def state_updates(fn: func.FuncOp) -> dict[int, int]:
    """The results of `fn` that update a state argument (`glow.updates`): result index
    -> argument index. A name that is no state argument is a `DiagnosticError`."""
    states = state_values(fn)
    names = placeholder_names(fn.arg_attrs, len(fn.function_type.inputs.data), "input")
    by_name = {names[i]: i for i in states}
    out: dict[int, int] = {}
    for i in range(len(fn.function_type.outputs.data)):
        v = _attr(fn.res_attrs, i, UPDATES_ATTR)
        if v is None:
            continue
        if not isinstance(v, StringAttr) or v.data not in by_name:
            raise DiagnosticError.at(fn, f"result #{i} has {UPDATES_ATTR} = {v}, which names "
                                         f"no argument with {INITIAL_ATTR}")
        if by_name[v.data] in out.values():
            raise DiagnosticError.at(fn, f"state argument '{v.data}' is updated twice")
        out[i] = by_name[v.data]
    return out


def signature_indices(fn: func.FuncOp) -> tuple[list[int], list[int]]:
    """The indices of the arguments a caller passes and of the results it gets back (not
    the state and its updates)."""
    states, updates = state_values(fn), state_updates(fn)
    return ([i for i in range(len(fn.function_type.inputs.data)) if i not in states],
            [i for i in range(len(fn.function_type.outputs.data)) if i not in updates])


class _Names:
    """Unique weight names: a clash gets `_1`, `_2`, ..."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def claim(self, base: str) -> str:
        name, n = base, 0
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name


def _resource_of(op: glow.ConstantOp, module: ModuleOp) -> DenseResourceAttr:
    """The constant's value as a `dense_resource` (an inline dense<...> goes to the
    module's resource table)."""
    value = op.value
    if isinstance(value, DenseResourceAttr):
        return value
    assert isinstance(value, DenseIntOrFPElementsAttr)
    ttype = op.result.type
    assert isinstance(ttype, TensorType)
    array = constant_value(op.result)
    assert array is not None
    # order="C", not np.ascontiguousarray (which makes a 0-d array 1-d)
    array = np.asarray(array, dtype=numpy_dtype(ttype.get_element_type()), order="C")
    handle = add_resource(module, op.result.name_hint or "constant", array).resource_handle
    return DenseResourceAttr.from_params(handle, ttype)


class _FunctionLowering:
    """IRGen of one function; `run()` returns the new `glow_ir.func`."""

    def __init__(self, fn: func.FuncOp, module: ModuleOp):
        self.fn = fn
        self.module = module
        blocks = fn.body.blocks
        if len(blocks) != 1:
            what = "no body" if not blocks else f"{len(blocks)} blocks"
            raise DiagnosticError.at(fn, f"has {what}; a glow function is one block")
        self.block: Block = fn.body.block  # its one block (checked above)
        ret = self.block.last_op
        if not isinstance(ret, func.ReturnOp):
            raise DiagnosticError.at(fn, "does not end in func.return")
        self.ret: func.ReturnOp = ret
        ftype = fn.function_type
        found = Diagnostics()
        for what, types in (("argument", ftype.inputs.data), ("result", ftype.outputs.data)):
            for i, t in enumerate(types):
                if not isinstance(t, TensorType):
                    found.error(fn, f"{what} #{i} has type {t}; only tensors lower to buffers")
        found.check()
        _hoist_branch_constants(self.block)
        for op in self.block.walk():  # every op without an instruction, at once
            if op is not ret and not self.has_instruction(op):
                found.error(op, "has no instruction")
        found.check()
        self.buffer: dict[SSAValue, SSAValue] = {}  # graph value -> its memref
        self.allocs: list[glow_ir.AllocActivationOp] = []
        self.direct: dict[SSAValue, SSAValue] = {}  # returned value -> output weight written
        self.body: Block  # the program instructions go into (set by `run`; a branch's inside)

    # ------------------------------------------------------------------ weights
    def declare(self) -> glow_ir.FuncOp:
        names = _Names()
        weights: list[glow_ir.WeightOp] = []
        sources: list[list[SSAValue]] = []  # graph values each weight stands for
        ins = placeholder_names(self.fn.arg_attrs, len(self.block.args), "input")
        states = state_values(self.fn)
        updates = state_updates(self.fn)
        state_weight: dict[int, int] = {}  # argument index -> its weight's index
        for arg, name in zip(self.block.args, ins):
            if arg.index in states:
                state_weight[arg.index] = len(weights)
                w = glow_ir.WeightOp.make(names.claim(name), memref_of(arg.type), "mutable",
                                          value=states[arg.index])
            else:
                w = glow_ir.WeightOp.make(names.claim(name), memref_of(arg.type), "mutable",
                                          "input")
            weights.append(w)
            sources.append([arg])
        by_resource: dict[tuple[str, Attribute], int] = {}
        for op in self.block.ops:
            if not isinstance(op, glow.ConstantOp):
                continue
            resource = _resource_of(op, self.module)
            key = (resource.resource_handle.data, resource.type)
            if key in by_resource:  # the same bytes: one weight
                sources[by_resource[key]].append(op.result)
                continue
            by_resource[key] = len(weights)
            w = glow_ir.WeightOp.make(names.claim(resource.resource_handle.data),
                                      memref_of(op.result.type), "constant", value=resource)
            w.location = op.location
            weights.append(w)
            sources.append([op.result])
        outs = placeholder_names(self.fn.res_attrs, len(self.ret.arguments), "output")
        self.outputs: list[int] = []  # per result: the weight it is written into
        for i, (value, name) in enumerate(zip(self.ret.arguments, outs)):
            if i in updates:
                self.outputs.append(state_weight[updates[i]])
                continue
            self.outputs.append(len(weights))
            weights.append(glow_ir.WeightOp.make(names.claim(name), memref_of(value.type),
                                                 "mutable", "output"))
            sources.append([])
        ir_func = glow_ir.FuncOp.make(self.fn.sym_name.data, weights)
        ir_func.location = self.fn.location
        args = ir_func.body.args
        for values, arg in zip(sources, args):
            for v in values:
                self.buffer[v] = arg
        # Outputs written in place: a value an instruction computes goes straight to its
        # first output weight (a second return of it is a copy from there).
        for i, (value, index) in enumerate(zip(self.ret.arguments, self.outputs)):
            if value in self.direct or not self._computed(value):
                continue
            if i in updates and not self._in_place(value, self.block.args[updates[i]]):
                continue  # copied into the state at the end
            self.direct[value] = args[index]
        return ir_func

    def _in_place(self, value: SSAValue, state: SSAValue) -> bool:
        """May `value`'s instruction write it over `state`'s buffer? When no op after it
        reads `state` (through views too), and it reads `state` itself only through an
        in-place operand pair of equal types."""
        op = value.owner
        assert isinstance(op, Operation)
        if op.parent_block() is not self.block:
            return False
        readers = _viewers(state)
        order = {o: k for k, o in enumerate(self.block.ops)}
        at = order[op]
        if any(order.get(_top(r, self.block), -1) > at for r in readers if r is not op):
            return False
        instr = glow_ir.INSTRUCTION_OF.get(type(op)) if isinstance(op, GlowOp) else None
        if instr is None or len(op.results) != 1:
            return False
        pairs = set(getattr(instr, "INPLACE", ()))
        for k, operand in enumerate(op.operands):
            if operand is state:
                if (0, k + 1) not in pairs or operand.type != value.type:
                    return False
            elif isinstance(operand.owner, glow.ReshapeOp) and operand.owner in readers:
                return False  # a view of the state: another shape
        return True

    @staticmethod
    def _computed(value: SSAValue) -> bool:
        """Whether an instruction writes `value` (not an input, constant or view)."""
        op = value.owner
        return isinstance(op, Operation) and not isinstance(op, (glow.ConstantOp, glow.ReshapeOp))

    # ------------------------------------------------------------------ program
    def dest(self, value: OpResult) -> SSAValue:
        """The buffer `value` is written to: its output weight or a new activation."""
        buf = self.direct.get(value)
        if buf is None:
            alloc = glow_ir.AllocActivationOp.make(memref_of(value.type))
            alloc.location = value.owner.location
            self.emit(alloc)
            self.allocs.append(alloc)
            buf = alloc.result
            if value.name_hint:
                buf.name_hint = value.name_hint
        self.buffer[value] = buf
        return buf

    def emit(self, op: Operation, like: Operation | None = None) -> None:
        if like is not None:
            op.location = like.location
        self.body.add_op(op)

    @staticmethod
    def has_instruction(op: Operation) -> bool:
        return (type(op) in glow_ir.INSTRUCTION_OF or op.has_trait(NoInstruction)
                or isinstance(op, (glow.IfOp, glow.LoopOp, glow.YieldOp)))

    def lower(self, op: Operation) -> None:
        if not self.has_instruction(op):
            raise DiagnosticError.at(op, "has no instruction")
        instr = glow_ir.INSTRUCTION_OF.get(type(op)) if isinstance(op, GlowOp) else None
        if isinstance(op, glow.ConstantOp):
            return
        if isinstance(op, glow.IfOp):
            self.lower_if(op)
            return
        if isinstance(op, glow.LoopOp):
            self.lower_loop(op)
            return
        src = [self.buffer[v] for v in op.operands]
        if isinstance(op, glow.ReshapeOp):
            view = glow_ir.TensorViewOp.make(src[0], memref_of(op.result.type))
            if op.result.name_hint:
                view.result.name_hint = op.result.name_hint
            self.emit(view, op)
            self.buffer[op.result] = view.result
            return
        if isinstance(op, glow.SliceOp):
            d = self.dest(op.result)
            self.emit(glow_ir.ExtractTensorOp.make([d, src[0]], offsets=op.attributes["start"]),
                      op)
            return
        if isinstance(op, glow.InsertTensorOp):
            d = self.dest(op.result)
            self.emit(glow_ir.CopyOp.make([d, src[0]]), op)
            extra = {k: op.attributes[k] for k in ("count", "axis") if k in op.attributes}
            self.emit(glow_ir.InsertTensorOp.make([d, src[1]], offsets=op.attributes["start"],
                                                  **extra), op)
            return
        if isinstance(op, glow.ConcatOp):
            d = self.dest(op.result)
            shape = shape_of(op.result)
            dim = normalize_axis(op.int_attr("dim"), len(shape), "dim")
            at = 0
            for value, buf in zip(op.operands, src):
                offsets = [0] * len(shape)
                offsets[dim] = at
                self.emit(glow_ir.InsertTensorOp.make([d, buf], offsets=offsets), op)
                at += shape_of(value)[dim]
            return
        dests = [self.dest(r) for r in op.results]
        assert instr is not None
        self.emit(instr.make([*dests, *src], **op.attributes), op)

    def lower_if(self, op: glow.IfOp) -> None:
        """A `glow_ir.if` whose operands are the results' buffers, the condition and every
        buffer the branches read from outside; each branch is lowered into its program
        with those operands as its arguments, writes the results into them (an op that
        computes a yielded value writes it there directly) and frees what it allocated."""
        dests = [self.dest(r) for r in op.results]
        captured = _captured(op)
        instr = glow_ir.IfOp.make_if(dests, self.buffer[op.cond],
                                   [self.buffer[v] for v in captured])
        self.emit(instr, op)
        for block in instr.branches():
            _name_args(block, instr)
        saved = (self.body, self.buffer, self.allocs, self.direct)
        for taken, target in zip((True, False), instr.branches()):
            args = target.args
            results, sources = args[: len(dests)], args[len(dests) + 1:]
            source = op.branch(taken)
            yielded = glow.IfOp.yield_of(source)
            self.body, self.allocs = target, []
            self.buffer = {**saved[1], **dict(zip(captured, sources))}
            self.direct = {}
            for value, arg in zip(yielded.values, results):
                if (value not in self.direct and self._computed(value)
                        and value.owner.parent_block() is source):  # type: ignore[union-attr]
                    self.direct[value] = arg
            for inner in source.ops:
                if inner is not yielded:
                    self.lower(inner)
            for value, arg in zip(yielded.values, results):
                if self.direct.get(value) is not arg:
                    self.emit(glow_ir.CopyOp.make([arg, self.buffer[value]]), yielded)
            for alloc in reversed(self.allocs):
                self.emit(glow_ir.DeallocActivationOp.make(alloc.result), yielded)
        self.body, self.buffer, self.allocs, self.direct = saved

    def activation(self, t: Attribute, like: Operation) -> SSAValue:
        """A new activation of memref type `t`, freed at the end of the current program."""
        alloc = glow_ir.AllocActivationOp.make(t)  # type: ignore[arg-type]
        self.emit(alloc, like)
        self.allocs.append(alloc)
        return alloc.result

    def lower_loop(self, op: glow.LoopOp) -> None:
        """A `glow_ir.loop` on the results' buffers (given the initial values by copies
        before it), two activations for the iteration number and the condition, the trip
        count, the first condition and what the body reads from outside. The body
        computes into its own activations and copies the next values into the carried
        buffers at its end (through a copy of its own when one is another carried
        buffer, which the copies could overwrite first)."""
        carried = [self.dest(r) for r in op.results]
        for buf, init in zip(carried, op.inits):
            if buf is not self.buffer[init]:
                self.emit(glow_ir.CopyOp.make([buf, self.buffer[init]]), op)
        number = self.activation(memref_of(op.block.args[0].type), op)
        number.name_hint = op.block.args[0].name_hint or "iteration"
        cond_out = self.activation(memref_of(glow.IfOp.yield_of(op.block).values[0].type), op)
        cond_out.name_hint = "again"
        captured = _captured(op)
        instr = glow_ir.LoopOp.make_loop(carried, number, cond_out, self.buffer[op.max_trips],
                                         self.buffer[op.cond],
                                         [self.buffer[v] for v in captured])
        self.emit(instr, op)
        _name_args(instr.block, instr)
        args = instr.block.args
        n = len(carried)
        saved = (self.body, self.buffer, self.allocs, self.direct)
        self.body, self.allocs = instr.block, []
        self.buffer = {**saved[1], **dict(zip(captured, args[n + 4:])),
                       op.block.args[0]: args[n], **dict(zip(op.block.args[1:], args[:n]))}
        yielded = glow.IfOp.yield_of(op.block)
        again, *values = yielded.values
        self.direct = {}
        if self._computed(again) and again.owner.parent_block() is op.block:  # type: ignore[union-attr]
            self.direct[again] = args[n + 1]
        for inner in op.block.ops:
            if inner is not yielded:
                self.lower(inner)
        if self.direct.get(again) is not args[n + 1]:
            self.emit(glow_ir.CopyOp.make([args[n + 1], self.buffer[again]]), yielded)
        sources = []
        for k, value in enumerate(values):
            src = self.buffer[value]
            if src is not args[k] and glow_ir.root_buffer(src) in args[:n]:
                copy = self.activation(src.type, yielded)
                self.emit(glow_ir.CopyOp.make([copy, src]), yielded)
                src = copy
            sources.append(src)
        for arg, src in zip(args[:n], sources):
            if src is not arg:
                self.emit(glow_ir.CopyOp.make([arg, src]), yielded)
        for alloc in reversed(self.allocs):
            self.emit(glow_ir.DeallocActivationOp.make(alloc.result), yielded)
        self.body, self.buffer, self.allocs, self.direct = saved

    def run(self) -> glow_ir.FuncOp:
        ir_func = self.declare()
        self.body = ir_func.body
        for op in self.block.ops:
            if op is self.ret:
                break
            self.lower(op)
        args = ir_func.body.args
        for value, index in zip(self.ret.arguments, self.outputs):
            if self.direct.get(value) is not args[index]:
                self.emit(glow_ir.CopyOp.make([args[index], self.buffer[value]]), self.ret)
        for alloc in reversed(self.allocs):
            self.emit(glow_ir.DeallocActivationOp.make(alloc.result), self.ret)
        return ir_func


def _viewers(value: SSAValue) -> set[Operation]:
    """The ops that read `value`, directly or through reshapes (views of its buffer)."""
    found: set[Operation] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        for use in v.uses:
            found.add(use.operation)
            if isinstance(use.operation, glow.ReshapeOp):
                todo.append(use.operation.result)
    return found


def _top(op: Operation, block: Block) -> Operation:
    """`op`'s ancestor in `block` (an op of a branch or loop body: its if or loop)."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _name_args(block: Block, instr: Operation) -> None:
    """A program's arguments named after the operands they stand for (the printer makes
    them unique): cosmetic, it keeps the text readable."""
    for arg, outer in zip(block.args, instr.operands):
        arg.name_hint = outer.name_hint


def _hoist_branch_constants(block: Block) -> None:
    """Move the constants of `glow.if` branches and `glow.loop` bodies to the top of the
    function: they are weights, declared once for the whole function, and need no
    run-time decision."""
    first = block.first_op
    for op in [o for o in block.walk() if isinstance(o, glow.ConstantOp)
               and o.parent_block() is not block]:
        op.detach()
        if first is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, first)


def _captured(op: Operation) -> list[SSAValue]:
    """The values defined outside `op` that its regions (nested ones included) use, in
    first-use order."""
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            owner = v.owner
            defined_inside = (op.is_ancestor(owner) if isinstance(owner, Operation)
                              else owner.parent_op() is not None
                              and op.is_ancestor(owner.parent_op()))  # type: ignore[union-attr,arg-type]
            if not defined_inside:
                seen.setdefault(v, None)
    return list(seen)


def lower_function(fn: func.FuncOp, module: ModuleOp) -> glow_ir.FuncOp:
    """The `glow_ir.func` computing what `fn` computes (not inserted anywhere)."""
    return _FunctionLowering(fn, module).run()


@dataclass(frozen=True)
class LowerToInstrPass(ModulePass):
    """Replace every `func.func` of `glow` ops by its `glow_ir.func` (Glow's IRGen)."""

    name = "lower-to-instr"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        load_resource_dialect(ctx)  # its new weights must print in xdsl-opt
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        # Lower every function before replacing any: a failure leaves the module as it was.
        lowered = [lower_function(fn, op) for fn in functions]
        for fn, ir_func in zip(functions, lowered):
            parent = fn.parent_block()
            assert parent is not None
            parent.insert_op_before(ir_func, fn)
            fn.detach()
            fn.erase()


__all__ = ["LowerToInstrPass", "lower_function", "memref_of", "signature_indices",
           "state_updates", "state_values"]
