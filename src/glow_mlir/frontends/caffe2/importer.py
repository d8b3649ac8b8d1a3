"""A Caffe2 model (predict net + init net) -> `glow` module: one `func.func @main` whose
arguments are the predict net's external inputs that the init net does not fill and whose
results are its external outputs.

The init net's ops run first (its fills become known arrays: the weights), then the
predict net's, through one converter table (`table.py`) and the ONNX importer's builder.
A NetDef declares no input shapes, so each input's shape is given (`input_shapes`); its
element type is float32, as a Caffe2 net's data input is, unless a `value_info.json`
entry (`[data_type, shape]`, the Caffe2 model zoo's) says otherwise. As the ONNX importer does, the
translation records every unsupported op type and argument value and raises one
`UnsupportedCaffe2Error` listing them all.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute

from glow_mlir.dialects.glow import NAME_ATTR
from glow_mlir.frontends.caffe2 import table
from glow_mlir.frontends.caffe2.errors import Caffe2ImportError, UnsupportedCaffe2Error
from glow_mlir.frontends.caffe2.loading import NetSource, load_net
from glow_mlir.frontends.caffe2.op import C2Op
from glow_mlir.frontends.caffe2.schema import DATA_TYPES
from glow_mlir.frontends.onnx.builder import GraphBuilder, Value, valid_name
from glow_mlir.frontends.onnx.errors import OnnxImportError, Unsupported, UnsupportedFeature
from glow_mlir.frontends.onnx.importer import bind_output, check_fits, erase_dead_ops
from glow_mlir.ir.element_types import element_type
from glow_mlir.ir.resources import resource_table

InputShapes = Mapping[str, Any]
"""Input name -> its shape, or a `value_info.json` entry `[data_type, shape]`."""


def import_caffe2(predict_net: NetSource, init_net: NetSource | None = None,
                  input_shapes: InputShapes | None = None) -> ModuleOp:
    """Translate a Caffe2 model: its predict net and init net (NetDef messages, their bytes,
    or `.pb`/`.pbtxt` paths). `input_shapes` gives each external input the init net does
    not fill its shape, `{"data": (1, 3, 224, 224)}` (float32), or its type and shape as
    the Caffe2 model zoo's `value_info.json` does, `{"data": [1, [1, 3, 224, 224]]}`."""
    predict = load_net(predict_net, "predict net")
    init = load_net(init_net, "init net") if init_net is not None else None
    try:
        return Caffe2Importer(predict, init).run(input_shapes or {})
    except OnnxImportError as err:  # the shared builder's errors, which name the op
        raise Caffe2ImportError(str(err)) from None


def op_label(op: Any, index: int, net: str) -> str:
    """How messages name an op: its name, or its position and first output."""
    if op.name:
        return op.name
    where = f"{net} op #{index}"
    return f"{where} (output '{op.output[0]}')" if op.output else where


class Caffe2Builder(GraphBuilder):
    """The ONNX importer's builder, whose messages name Caffe2 ops as ops."""

    def context(self) -> str:
        return f"op '{self.node_label}' ({self.node_op})" if self.node_op else "the model"


class Caffe2Importer:
    """One translation: the builder, the blob map (name -> Value, or None when downstream
    of something unsupported), and the problems found so far."""

    def __init__(self, predict: Any, init: Any | None):
        self.predict = predict
        self.init = init
        self.problems: list[Unsupported] = []
        self.values: dict[str, Value | None] = {}
        self.used: set[str] = set()

    def _nets(self) -> list[tuple[str, Any]]:
        return ([("init net", self.init)] if self.init is not None else []) + [
            ("predict net", self.predict)]

    # ------------------------------------------------------------------ driver
    def run(self, input_shapes: InputShapes) -> ModuleOp:
        if not self.predict.external_output:
            swapped = self.init is not None and len(self.init.external_output) > 0
            raise Caffe2ImportError(
                "the predict net has no external outputs: nothing to compute"
                + ("; the init net has some: are the two swapped? (the predict net comes "
                   "first: (predict_net, init_net), --caffe2 PREDICT INIT)" if swapped
                   else " (is the file truncated?)"))
        converters = {net: [self._lookup(op, i, net) for i, op in enumerate(proto.op)]
                      for net, proto in self._nets()}
        inputs = self._inputs(input_shapes)
        arg_types = [TensorType(elem, shape) for elem, shape in inputs.values()]
        fn = func.FuncOp("main", (arg_types, []), arg_attrs=ArrayAttr(
            [DictionaryAttr({NAME_ATTR: StringAttr(name)}) for name in inputs]))
        module = ModuleOp([fn])
        self.b = Caffe2Builder(module, fn)
        for name, arg in zip(inputs, fn.body.block.args):
            check_fits(f"input '{name}'", cast(TensorType, arg.type))
            arg.name_hint = valid_name(name)
            self.values[name] = self.b.from_ssa(arg)
        self.used = {n for _, net in self._nets() for op in net.op for n in op.input}
        self.used |= set(self.predict.external_output)
        for net, proto in self._nets():
            self._convert_ops(net, proto.op, converters[net])
        if self.problems:
            raise UnsupportedCaffe2Error(self.problems)
        self._finish(fn)
        return module

    def _lookup(self, op: Any, index: int, net: str) -> table.Converter | None:
        converter, why = table.lookup(op.type)
        if converter is None:
            self.problems.append(Unsupported(op.type, op_label(op, index, net), why))
        return converter

    def _inputs(self, given: InputShapes) -> dict[str, tuple[Attribute, tuple[int, ...]]]:
        """The function's inputs and their shapes: the predict net's external inputs that
        no init-net op fills, each with its shape from `given` (a NetDef has none)."""
        filled = {o for op in (self.init.op if self.init is not None else []) for o in op.output}
        defined = set(filled)
        readers: dict[str, str] = {}
        undefined: list[str] = []
        external = [n for n in dict.fromkeys(self.predict.external_input) if n not in filled]
        defined |= set(external)
        for index, op in enumerate(self.predict.op):
            label = f"op '{op_label(op, index, 'predict net')}' ({op.type})"
            for name in op.input:
                readers.setdefault(name, label)
                if name not in defined:
                    undefined.append(f"{label} reads '{name}'")
            defined |= set(op.output)
        for name in self.predict.external_output:
            if name not in defined:
                undefined.append(f"external output '{name}'")
        if undefined:
            shown = "; ".join(undefined[:5]) + (
                f"; and {len(undefined) - 5} more" if len(undefined) > 5 else "")
            raise Caffe2ImportError(
                f"the predict net is inconsistent: {shown}, which no init-net fill, external "
                f"input or earlier op defines (is a file truncated, or the init net missing?)")
        unknown = [k for k in given if k not in external]
        if unknown:
            weights = [k for k in unknown if k in filled]
            if weights:
                raise Caffe2ImportError(f"a shape is given for '{weights[0]}', which the init "
                                        f"net fills (a weight, not an input)")
            names = ", ".join(f"'{n}'" for n in external) or "none"
            raise Caffe2ImportError(f"a shape is given for '{unknown[0]}', which is not an "
                                    f"external input of the predict net (inputs: {names})")
        needed = [n for n in external if n in readers or n in given
                  or n in self.predict.external_output]
        missing = [n for n in needed if n not in given]
        if missing:
            what = "; ".join(f"'{n}'" + (f" (read by {readers[n]})" if n in readers else "")
                             for n in missing)
            raise Caffe2ImportError(
                f"no shape for the external input(s) {what}: a NetDef declares no input "
                f"shapes, and the init net fills none of them. Give each input's shape, "
                f"e.g. input_shapes={{'{missing[0]}': (1, ...)}} (glow-run/glow-compile: "
                f"--input-shape {missing[0]}=1x...); a weight missing from the init net "
                f"means the init net is not this predict net's, or is truncated")
        return {n: _given_type(n, given[n]) for n in needed}

    def _convert_ops(self, net: str, ops: Any, converters: list[table.Converter | None]) -> None:
        b, values = self.b, self.values
        for index, (op, converter) in enumerate(zip(ops, converters)):
            label = op_label(op, index, net)
            missing = [n for n in op.input if n not in values]
            if missing:  # in the init net (the predict net was checked in _inputs)
                raise Caffe2ImportError(f"{net} op '{label}' ({op.type}) reads '{missing[0]}', "
                                        f"which nothing defines before it")
            if converter is None or any(values[n] is None for n in op.input):
                for name in op.output:
                    values[name] = None
                continue
            b.node_label, b.node_op = label, op.type
            try:
                # no input is None here (checked above)
                known = cast(dict[str, Value], values)
                outs = converter(C2Op(op, label, b, known, self.used))
            except UnsupportedFeature as err:
                self.problems.append(Unsupported(op.type, label, err.why))
                for name in op.output:
                    values[name] = None
                continue
            except OnnxImportError:
                if self.problems:  # most likely a consequence of something unsupported
                    return
                raise
            self._bind_outputs(op, outs)
        b.node_label = b.node_op = ""

    def _bind_outputs(self, op: Any, outs: Any) -> None:
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for i, name in enumerate(op.output):
            out = outs[i] if i < len(outs) else None
            if out is None:
                if name in self.used and not self.problems:
                    self.b.fail(f"output #{i} '{name}' is read, but this importer does not "
                                f"compute it")
                self.values[name] = None
                continue
            self.values[name] = bind_output(self.b, name, out)

    def _finish(self, fn: func.FuncOp) -> None:
        results = []
        for name in self.predict.external_output:
            value = self.values[name]
            assert value is not None
            results.append(value.ssa)
        fn.body.block.add_op(func.ReturnOp(*results))
        fn.function_type = FunctionType.from_lists(
            [a.type for a in fn.body.block.args], [r.type for r in results])
        fn.res_attrs = ArrayAttr([DictionaryAttr({NAME_ATTR: StringAttr(name)})
                                  for name in self.predict.external_output])
        erase_dead_ops(fn)
        handles = {a.resource_handle.data for op in fn.walk() for a in op.attributes.values()
                   if isinstance(a, DenseResourceAttr)}
        resource_table(self.b.module).retain(handles)


_INPUT_DTYPES = {DATA_TYPES["FLOAT"]: np.float32, DATA_TYPES["INT32"]: np.int32,
                 DATA_TYPES["INT64"]: np.int64, DATA_TYPES["BOOL"]: np.bool_,
                 DATA_TYPES["UINT8"]: np.uint8, DATA_TYPES["INT8"]: np.int8,
                 DATA_TYPES["FLOAT16"]: np.float16, DATA_TYPES["DOUBLE"]: np.float64}


def _given_type(name: str, value: Any) -> tuple[Attribute, tuple[int, ...]]:
    """An input's element type and shape: a shape (float32), or a Caffe2 model zoo
    `value_info.json` entry, `[data_type, shape]` (TensorProto.DataType: 1 is FLOAT)."""
    elem: Attribute = f32
    if (isinstance(value, (list, tuple)) and len(value) == 2
            and isinstance(value[1], (list, tuple))):
        code, value = value
        dtype = _INPUT_DTYPES.get(code) if isinstance(code, int) else None
        if dtype is None:
            names = ", ".join(f"{c} ({k})" for k, c in DATA_TYPES.items()
                              if c in _INPUT_DTYPES)
            raise Caffe2ImportError(f"the value info given for input '{name}' has data type "
                                    f"{code!r}; supported: {names}")
        elem = element_type(np.dtype(dtype))
    # int() would take "3" and truncate 8.5: only whole numbers (numpy's too), not bools
    if (not isinstance(value, (list, tuple))
            or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and int(d) >= 0
                       for d in value)):
        raise Caffe2ImportError(f"the shape given for input '{name}' must be a sequence of "
                                f"non-negative ints, got {value!r}")
    shape = tuple(int(d) for d in value)
    return elem, shape
