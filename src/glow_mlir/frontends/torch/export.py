"""A `torch.nn.Module` and example inputs -> an `onnx.ModelProto`, in memory.

Both exporters of `torch.onnx.export` are used as they are: `"dynamo"` (`dynamo=True`,
torch.export then onnxscript's translation; the default of torch >= 2.9) and
`"torchscript"` (`dynamo=False`, tracing). Nothing is written to disk: the TorchScript
exporter writes into a `BytesIO`, the dynamo one gives an `ONNXProgram` whose
`model_proto` holds the weights. The module is exported in eval mode (batch norm with its
running statistics, no dropout), its training flags restored afterwards, and without
autograd. Inputs are named after `forward`'s parameters (or the keys of a dict of
inputs), outputs `output` or `output_0`, `output_1`, ... unless named.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import io
import warnings
from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from glow_mlir.frontends.torch.errors import EXPORTERS, TorchExportError, TorchInputError
from glow_mlir.frontends.torch.loading import require_onnxscript, require_torch

if TYPE_CHECKING:  # torch is an optional extra (and onnx slow to import): imported when used
    import torch
    from onnx import ModelProto

Args = tuple[object, ...]
"""Example inputs passed positionally."""
Kwargs = dict[str, object]
"""Example inputs passed by keyword."""

BATCH = "batch"
"""The symbolic name of dimension 0 of every input when exporting with `dynamic=True`."""


@dataclasses.dataclass
class ExportedModel:
    """What the exporter gave: the ONNX model and its inputs' and outputs' names."""

    proto: object  # onnx.ModelProto
    input_names: list[str]
    output_names: list[str]
    exporter: str


def export_to_onnx(module: torch.nn.Module, example_inputs: object, *,
                   exporter: str = "dynamo", dynamic: bool = False,
                   input_names: Sequence[str] | None = None,
                   output_names: Sequence[str] | None = None,
                   opset: int | None = None) -> ExportedModel:
    """`module` exported with `example_inputs` (a tensor, a tuple or list of tensors passed
    positionally, or a dict passed as keyword arguments). `dynamic=True` makes dimension 0
    of every input the symbolic dimension `batch`. A failed export is a
    `TorchExportError` naming the exporter and torch's reason."""
    torch = require_torch()
    if exporter not in EXPORTERS:
        raise TorchInputError(f"unknown exporter {exporter!r}; the exporters are "
                              f"{', '.join(map(repr, EXPORTERS))}")
    if not isinstance(module, torch.nn.Module):
        raise TorchInputError(f"from_torch takes a torch.nn.Module, got "
                              f"{type(module).__name__}")
    if EXPORTERS[exporter]:
        require_onnxscript()
    args, kwargs = _example_inputs(torch, example_inputs)
    names = _input_names(module, args, kwargs, input_names)
    what = type(module).__name__
    try:
        with _eval_mode(module), torch.no_grad(), _quiet():
            if EXPORTERS[exporter]:
                proto = _export_dynamo(torch, module, args, kwargs, names, dynamic, opset)
            else:
                proto = _export_torchscript(torch, module, args, kwargs, names, dynamic, opset)
    except Exception as err:  # noqa: BLE001 - whatever torch raises, the user gets one line
        raise TorchExportError(exporter, what, err) from err
    outputs = _name_outputs(proto, output_names)
    inputs = [i.name for i in proto.graph.input]
    return ExportedModel(proto, inputs, outputs, exporter)


def _example_inputs(torch: ModuleType, example: object) -> tuple[Args, Kwargs]:
    """(positional, keyword) inputs, each a tensor (numpy arrays are converted)."""
    args: Args
    kwargs: Kwargs
    if isinstance(example, Mapping):
        args, kwargs = (), {str(k): v for k, v in example.items()}
    elif isinstance(example, (tuple, list)):
        args, kwargs = tuple(example), {}
    else:
        args, kwargs = (example,), {}

    def tensor(where: str, x: object) -> object:
        if isinstance(x, torch.Tensor):
            return x.detach()
        import numpy as np

        if isinstance(x, np.ndarray):
            return torch.from_numpy(x)
        raise TorchInputError(f"example input {where} is a {type(x).__name__}; expected a "
                              f"torch.Tensor (or a numpy array)")

    return (tuple(tensor(f"#{i}", x) for i, x in enumerate(args)),
            {k: tensor(repr(k), v) for k, v in kwargs.items()})


def _input_names(module: torch.nn.Module, args: Args, kwargs: Kwargs,
                 given: Sequence[str] | None) -> list[str]:
    count = len(args) + len(kwargs)
    if given is not None:
        given = [str(n) for n in given]
        if len(given) != count:
            raise TorchInputError(f"input_names has {len(given)} name(s) for {count} "
                                  f"example input(s)")
        return given
    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    plain = [p.name for p in params
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    positional = [plain[i] if i < len(plain) else f"input_{i}" for i in range(len(args))]
    return positional + list(kwargs)


@contextlib.contextmanager
def _eval_mode(module: torch.nn.Module) -> Iterator[None]:
    """The module in eval mode for the block; each submodule's flag restored after."""
    flags = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        yield
    finally:
        for m, training in flags:
            m.training = training


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The exporters' progress lines (stdout), their dumps of the graph on failure
    (stderr; the error says why) and warnings (deprecation of the TorchScript exporter,
    tracer warnings) would bury the caller's output."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _quiet_native_output() -> Iterator[None]:
    """File descriptors 1 and 2 to /dev/null for the block. The TorchScript exporter
    prints the whole TorchScript graph with C++'s std::cout when an op fails to convert
    (torch 2.14's `setup_onnx_logging` tests the function `_jit_is_onnx_log_enabled`
    instead of calling it, so its log is always on); the error says what failed.
    Other threads' output is muted meanwhile."""
    import os
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    saved = []
    try:
        with open(os.devnull, "w") as null:
            for fd in (1, 2):
                try:
                    saved.append((fd, os.dup(fd)))
                    os.dup2(null.fileno(), fd)
                except OSError:  # no such descriptor (an embedded interpreter)
                    pass
        yield
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)


def _export_torchscript(torch: ModuleType, module: torch.nn.Module, args: Args, kwargs: Kwargs,
                        names: list[str], dynamic: bool, opset: int | None) -> ModelProto:
    import onnx

    buffer = io.BytesIO()
    dynamic_axes = {n: {0: BATCH} for n in names} if dynamic else None
    with _quiet_native_output():
        torch.onnx.export(module, args, buffer, kwargs=kwargs or None, dynamo=False,
                          input_names=names, opset_version=opset, do_constant_folding=True,
                          dynamic_axes=dynamic_axes)
    return onnx.load_from_string(buffer.getvalue())


def _export_dynamo(torch: ModuleType, module: torch.nn.Module, args: Args, kwargs: Kwargs,
                   names: list[str], dynamic: bool, opset: int | None) -> ModelProto:
    dynamic_shapes = None
    if dynamic:
        dynamic_shapes = _dynamo_dynamic_shapes(module, args, kwargs, torch.export.Dim.DYNAMIC)
    program = torch.onnx.export(module, args, kwargs=kwargs or None, dynamo=True,
                                input_names=names, opset_version=opset, verbose=False,
                                dynamic_shapes=dynamic_shapes, external_data=False)
    proto = program.model_proto
    if dynamic:
        _rename_dim(proto, BATCH)
    return proto


def _dynamo_dynamic_shapes(module: torch.nn.Module, args: Args, kwargs: Kwargs, batch: object
                           ) -> tuple[dict[int, object], ...] | dict[str, dict[int, object]]:
    """`dynamic_shapes` for torch.export: dimension 0 of each input, keyed by the name
    of forward's parameter that receives it (what torch.export matches them by)."""
    try:
        sig = inspect.signature(module.forward)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return tuple({0: batch} for _ in args)
    return {name: {0: batch} for name in bound.arguments}


def _rename_dim(proto: ModelProto, name: str) -> None:
    """The dynamo exporter names the symbolic dimensions `s0`, `s1`, ...: the inputs'
    dimension 0 (and every dim with the same symbol) becomes `name`."""
    symbols = {i.type.tensor_type.shape.dim[0].dim_param for i in proto.graph.input
               if i.type.tensor_type.shape.dim and i.type.tensor_type.shape.dim[0].dim_param}
    for value in [*proto.graph.input, *proto.graph.output, *proto.graph.value_info]:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param in symbols:
                dim.dim_param = name


def _name_outputs(proto: ModelProto, names: Sequence[str] | None) -> list[str]:
    """Gives the graph outputs `names` (default `output`, or `output_<i>`) through an
    Identity each, which the importer folds away: an output may also be an input, an
    initializer or another output, so renaming in place could clash."""
    from onnx import helper

    outputs = proto.graph.output
    if names is None:
        names = ["output"] if len(outputs) == 1 else [f"output_{i}" for i in range(len(outputs))]
    names = [str(n) for n in names]
    if len(names) != len(outputs):
        raise TorchInputError(f"output_names has {len(names)} name(s); the exported model "
                              f"has {len(outputs)} output(s)")
    taken = {i.name for i in proto.graph.input} | {i.name for i in proto.graph.initializer}
    taken |= {o for n in proto.graph.node for o in n.output} | {o.name for o in outputs}
    clash = [n for value, n in zip(outputs, names) if n != value.name and n in taken]
    if clash or len(set(names)) != len(names):
        raise TorchInputError(f"output_names {names} repeat a name or reuse one of the "
                              f"exported graph's values ({', '.join(map(repr, clash))})")
    for i, (value, name) in enumerate(zip(outputs, names)):
        if value.name == name:
            continue
        proto.graph.node.append(helper.make_node("Identity", [value.name], [name],
                                                 name=f"output_identity_{i}"))
        value.name = name
    return names
