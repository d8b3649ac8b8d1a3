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
from collections.abc import Mapping, Sequence

from glow_mlir.frontends.torch.errors import (
    EXPORTERS,
    TorchDynamicError,
    TorchExportError,
    TorchInputError,
    choose_dynamic,
    first_line,
)
from glow_mlir.frontends.torch.loading import require_onnxscript, require_torch

BATCH = "batch"
"""The symbolic name of dimension 0 of the dynamic inputs (`dynamic=True`: every input with
a dimension 0; `dynamic=["x", ...]`: those named)."""


@dataclasses.dataclass
class ExportedModel:
    """What the exporter gave: the ONNX model and its inputs' and outputs' names, and the
    inputs whose dim 0 it made the symbolic `BATCH`, with the example's size of it."""

    proto: object  # onnx.ModelProto
    input_names: list[str]
    output_names: list[str]
    exporter: str
    dynamic_inputs: list[str] = dataclasses.field(default_factory=list)
    example_batch: int | None = None

    def made_dynamic(self) -> str:
        """Which inputs were made dynamic on which dim, in words."""
        return made_dynamic(self.dynamic_inputs, self.example_batch)


def export_to_onnx(module, example_inputs, *, exporter: str = "dynamo",
                   dynamic: bool | Sequence[str] = False,
                   input_names: Sequence[str] | None = None,
                   output_names: Sequence[str] | None = None,
                   opset: int | None = None) -> ExportedModel:
    """`module` exported with `example_inputs` (a tensor, a tuple or list of tensors passed
    positionally, or a dict passed as keyword arguments). `dynamic=True` makes dimension 0
    of every input (that has one) the symbolic dimension `batch`; `dynamic=["x", ...]`,
    of the inputs named. A failed export is a `TorchExportError` naming the exporter and
    torch's reason; a dim 0 made dynamic that the model fixes, a `TorchDynamicError`."""
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
    tensors = dict(zip(names, (*args, *kwargs.values())))
    chosen = dynamic_inputs(tensors, dynamic)
    what = type(module).__name__
    try:
        with _eval_mode(module), torch.no_grad(), _quiet():
            if EXPORTERS[exporter]:
                proto = _export_dynamo(torch, module, args, kwargs, tensors, chosen, opset)
            else:
                proto = _export_torchscript(torch, module, args, kwargs, names, chosen, opset)
    except Exception as err:  # noqa: BLE001 - whatever torch raises, the user gets one line
        eager = _eager_failure(torch, module, args, kwargs)
        if eager is not None:  # no exporter can trace it: not the other one either
            raise TorchInputError(
                f"{what} fails on the example inputs when torch runs it ({first_line(eager)}),"
                f" so no exporter can trace it: give example inputs of the shapes and types "
                f"the model takes") from err
        batch = int(tensors[chosen[0]].shape[0]) if chosen else None
        raise _export_error(exporter, what, err, chosen, batch) from err
    outputs = _name_outputs(proto, output_names)
    inputs = [i.name for i in proto.graph.input]
    batch = int(tensors[chosen[0]].shape[0]) if chosen else None
    return ExportedModel(proto, inputs, outputs, exporter, chosen, batch)


def made_dynamic(inputs: Sequence[str], batch: int | None) -> str:
    """`dim 0 of inputs 'x', 'w' was made the dimension 'batch' (4 in the example)`."""
    which = ", ".join(f"'{n}'" for n in inputs)
    plural = "s" if len(inputs) > 1 else ""
    return (f"dim 0 of input{plural} {which} was made the dimension '{BATCH}' ({batch} in "
            f"the example)")


def dynamic_inputs(tensors: Mapping[str, object], dynamic: bool | Sequence[str]) -> list[str]:
    """The inputs whose dim 0 becomes `BATCH`: with `True`, every input that has a dim 0
    (a scalar has none), which must then agree on its size; with names, those (each an
    input with a dim 0). A dim 0 that differs says which inputs to name instead."""
    if dynamic is False:
        return []
    shapes = {name: tuple(getattr(t, "shape", ())) for name, t in tensors.items()}
    if dynamic is True:
        chosen = [n for n, shape in shapes.items() if shape]
    else:
        if isinstance(dynamic, str):
            raise TorchInputError(f"dynamic takes True or a list of input names, got the "
                                  f"string {dynamic!r} (write dynamic=[{dynamic!r}])")
        chosen = [str(n) for n in dynamic]
        unknown = [n for n in chosen if n not in shapes]
        if unknown:
            raise TorchInputError(f"dynamic names {', '.join(map(repr, unknown))}, not an "
                                  f"input; the inputs are {', '.join(map(repr, shapes))}")
        scalars = [n for n in chosen if not shapes[n]]
        if scalars:
            raise TorchInputError(f"dynamic names input {scalars[0]!r}, a scalar: it has no "
                                  f"dim 0 to make the batch")
    sizes = {n: shapes[n][0] for n in chosen}
    if len(set(sizes.values())) > 1:
        first = sizes[chosen[0]]
        same = [n for n in chosen if sizes[n] == first]
        listed = ", ".join(f"'{n}' {'x'.join(map(str, shapes[n]))}" for n in chosen)
        asked = "dynamic=True" if dynamic is True else f"dynamic={chosen}"
        raise TorchDynamicError(
            f"{asked} makes dim 0 of inputs {', '.join(map(repr, chosen))} one dimension "
            f"'{BATCH}', but their sizes in the example differ ({listed}): name the inputs "
            f"whose dim 0 is the batch, e.g. dynamic={same}")
    return chosen


def _eager_failure(torch, module, args, kwargs) -> BaseException | None:
    """What the module raises when torch runs it on the example inputs (a shape mismatch
    in the model itself), or None when it runs: then the export is what failed."""
    try:
        with _eval_mode(module), torch.no_grad(), _quiet():
            module(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - any failure of the model's own code
        return err
    return None


def _export_error(exporter: str, what: str, err: BaseException, chosen: list[str],
                  batch: int | None) -> Exception:
    """The error for a failed export: with dynamic inputs, torch.export's complaint that
    the model fixes one of their dims names it (`inputs['w'].shape[0]`), and the user
    learns which inputs were made dynamic and how to choose them."""
    import re

    if not chosen:
        return TorchExportError(exporter, what, err)
    text = str(err.__cause__ or err) + str(err)
    fixed = [m.group(1) for m in re.finditer(r"inputs\['([^']+)'\]\.shape\[0\]", text)]
    fixed = [n for n in dict.fromkeys(fixed) if n in chosen]
    if fixed:
        keep = [n for n in chosen if n not in fixed]
        return TorchDynamicError(
            f"{made_dynamic(chosen, batch)}, but {what} fixes dim 0 of "
            f"{', '.join(map(repr, fixed))} (torch.export traced a static size): it is "
            f"not a batch; name the inputs whose dim 0 is, e.g. dynamic={keep}")
    return TorchExportError(exporter, what, err,
                            note=choose_dynamic(made_dynamic(chosen, batch)) + "; or ")


def _example_inputs(torch, example) -> tuple[tuple, dict]:
    """(positional, keyword) inputs, each a tensor (numpy arrays are converted)."""
    args: tuple[object, ...]
    kwargs: dict[str, object]
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


def _input_names(module, args: tuple, kwargs: dict,
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
def _eval_mode(module):
    """The module in eval mode for the block; each submodule's flag restored after."""
    flags = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        yield
    finally:
        for m, training in flags:
            m.training = training


@contextlib.contextmanager
def _quiet():
    """The exporters' progress lines (stdout), their dumps of the graph on failure
    (stderr; the error says why) and warnings (deprecation of the TorchScript exporter,
    tracer warnings) would bury the caller's output."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _quiet_native_output():
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


def _export_torchscript(torch, module, args, kwargs, names, chosen, opset):
    import onnx

    buffer = io.BytesIO()
    dynamic_axes = {n: {0: BATCH} for n in chosen} or None
    with _quiet_native_output():
        torch.onnx.export(module, args, buffer, kwargs=kwargs or None, dynamo=False,
                          input_names=names, opset_version=opset, do_constant_folding=True,
                          dynamic_axes=dynamic_axes)
    return onnx.load_from_string(buffer.getvalue())


def _export_dynamo(torch, module, args, kwargs, tensors, chosen, opset):
    dynamic_shapes = None
    if chosen:
        dynamic = {id(tensors[n]) for n in chosen}
        dynamic_shapes = _dynamo_dynamic_shapes(module, args, kwargs, dynamic,
                                                torch.export.Dim.DYNAMIC)
    program = torch.onnx.export(module, args, kwargs=kwargs or None, dynamo=True,
                                input_names=list(tensors), opset_version=opset,
                                verbose=False, dynamic_shapes=dynamic_shapes,
                                external_data=False)
    proto = program.model_proto
    if chosen:
        _rename_dim(proto, BATCH)
    return proto


def _dynamo_dynamic_shapes(module, args, kwargs, dynamic: set[int], batch):
    """`dynamic_shapes` for torch.export: dimension 0 of each input in `dynamic` (by the
    tensor's id), keyed by the name of forward's parameter that receives it (what
    torch.export matches them by); None for the others."""
    def spec(x):
        return {0: batch} if id(x) in dynamic else None

    try:
        sig = inspect.signature(module.forward)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return tuple(spec(x) for x in args)
    return {name: spec(value) for name, value in bound.arguments.items()}


def _rename_dim(proto, name: str) -> None:
    """The dynamo exporter names the symbolic dimensions `s0`, `s1`, ...: the inputs'
    dimension 0 (and every dim with the same symbol) becomes `name`."""
    symbols = {i.type.tensor_type.shape.dim[0].dim_param for i in proto.graph.input
               if i.type.tensor_type.shape.dim and i.type.tensor_type.shape.dim[0].dim_param}
    for value in [*proto.graph.input, *proto.graph.output, *proto.graph.value_info]:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param in symbols:
                dim.dim_param = name


def _name_outputs(proto, names: Sequence[str] | None) -> list[str]:
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
