"""`CompiledModel`: a compiled network that runs on numpy arrays (README: ONNX models from Python).

It knows its inputs' names, shapes and dtypes from the module (the ONNX names are kept as
`glow.name` argument and result attributes; a `glow_ir` program names its input and output
weights), and checks every input before anything runs:
a missing input, an unknown name, a wrong shape or dtype is an `InputError` that gives the
expected and the given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from glow_mlir.backends import DEFAULT_BACKEND, Executor, get_backend
from glow_mlir.ir import progress as progress_hooks
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.gc_pause import paused_gc

if TYPE_CHECKING:
    from onnx import ModelProto
    from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType

    from glow_mlir.analysis.quant_profile import Profile
    from glow_mlir.ir.input_checks import InputCheck
    from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig

# xDSL, onnx and the dialects are imported where they are used, not here: a saved model
# (`glow_mlir.load`) makes a CompiledModel without them, in a fraction of their import
# time.


class InputError(UserError, ValueError):
    """Inputs that do not fit the model. A `UserError` (the tools report it in one line,
    exit 1) and a `ValueError`, which is what Python code calling `run` expects to catch
    for a wrong value (numpy, onnxruntime's bindings and the ONNX backend tests do)."""


@runtime_checkable
class _TensorLike(Protocol):
    """A torch tensor as `as_array` sees it (the runtime does not import torch)."""

    def detach(self) -> _TensorLike: ...

    def numpy(self) -> np.ndarray: ...


def as_array(x: object) -> np.ndarray:
    """An input as a numpy array. A torch tensor (duck-typed: anything with `detach` and
    `numpy`; the runtime does not import torch) goes through its CPU numpy view without
    autograd, which `np.asarray` alone refuses for a tensor that requires grad or lives
    on a GPU."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, _TensorLike):
        t = x.detach()
        return (t.cpu() if hasattr(t, "cpu") else t).numpy()
    return np.asarray(x)


def fmt_dtype(dtype: object) -> str:
    """An element type as input errors name it: numpy's name (`float32`, `int64`), for a
    model compiled or compiled at the call alike."""
    return str(np.dtype(dtype))  # type: ignore[call-overload]


def _describe(shape: Sequence[int], dtype: np.dtype) -> str:
    from glow_mlir.dialects.glow_ops.types import fmt_shape

    return f"shape {fmt_shape(shape)}, dtype {fmt_dtype(dtype)}"


class CompiledModel:
    """A model compiled for one backend: `run({"name": x})` or `model(x, ...)`.
    `save(path)` writes its native code and weights (`runtime/saved_model.py`);
    `origin` says where the code came from: "compiled", "cache" (the model cache) or the
    path of the saved model it was loaded from, or "memory" when `glow_mlir.load` was
    given its bytes (then `module` is None)."""

    origin = "compiled"
    source: dict | None = None  # from the model cache: what compile() was given

    def __init__(self, module: ModuleOp, backend: str = "interpreter",
                 executor: Executor | None = None, disable_passes: Sequence[str] = (),
                 backend_options: Mapping[str, object] | None = None):
        """`module` is the optimized graph (or a `glow_ir` program); the backend lowers it
        in place (afterwards `self.module` is what the backend runs, e.g. the planned
        instruction IR)."""
        from glow_mlir.ir.element_types import numpy_dtype

        self.module: ModuleOp | None = module
        self.backend = backend
        self.input_names, ins, names, outs = _signature(module)
        self.input_shapes: dict[str, tuple[int, ...]] = {
            n: tuple(t.get_shape()) for n, t in zip(self.input_names, ins)}
        self.input_dtypes: dict[str, np.dtype] = {
            n: numpy_dtype(t.get_element_type()) for n, t in zip(self.input_names, ins)}
        self._set_outputs([(n, tuple(t.get_shape())) for n, t in zip(names, outs)])
        self.value_checks = _value_checks(module, self.input_names)
        with progress_hooks.stage("codegen"):  # the instruction passes mark their own
            self._executor = executor if executor is not None else get_backend(backend).compile(
                module, tuple(disable_passes), **dict(backend_options or {}))

    @classmethod
    def restored(cls, backend: str, executor: Executor,
                 inputs: Sequence[tuple[str, tuple[int, ...], np.dtype]],
                 outputs: Sequence[tuple[str, tuple[int, ...]]],
                 value_checks: Sequence[tuple[str, InputCheck]] = ()) -> CompiledModel:
        """A model whose code was compiled before (a saved model): its signature (name,
        shape, dtype of each input; name, shape of each output) and what runs it, with
        no module; `value_checks` are the saved input value checks."""
        model = cls.__new__(cls)
        model.module, model.backend, model._executor = None, backend, executor
        model.input_names = [n for n, _, _ in inputs]
        model.input_shapes = {n: tuple(s) for n, s, _ in inputs}
        model.input_dtypes = {n: np.dtype(d) for n, _, d in inputs}
        model._set_outputs([(n, tuple(s)) for n, s in outputs])
        model.value_checks = list(value_checks)
        return model

    def _set_outputs(self, outputs: Sequence[tuple[str, tuple[int, ...]]]) -> None:
        """The outputs the executor gives (`all_output_names`) and those a run returns:
        without the run-time lengths of bounded outputs (ir/bounded_outputs.py), whose
        `output_shapes` are their upper bounds."""
        from glow_mlir.ir.bounded_outputs import bounded_outputs

        self.all_output_names = [n for n, _ in outputs]
        self._bounded = bounded_outputs(self.all_output_names)
        counts = {c for _, c, _ in self._bounded}
        self.output_names = [n for i, (n, _) in enumerate(outputs) if i not in counts]
        self.output_shapes = {n: tuple(s) for i, (n, s) in enumerate(outputs)
                              if i not in counts}

    def save(self, path: str | os.PathLike) -> None:
        """Write the compiled code, the weights, the memory plan and the signature to
        `path`; `glow_mlir.load(path)` runs it without compiling (the cpu backend only:
        the others have no native code)."""
        from glow_mlir.runtime.saved_model import save

        save(self, path)

    @property
    def executor(self) -> Executor:
        """What runs the compiled code (the cpu backend's `CpuExecutor` holds its LLVM
        module and memory areas, which `runtime.bundle.write_bundle` writes out)."""
        return self._executor

    @property
    def num_threads(self) -> int | None:
        """The threads the cpu backend's code was compiled for (`compile(...,
        num_threads=N)`; its default, the cores this process may run on); None for a
        backend without native code, or a model saved before the count was recorded."""
        return getattr(self._executor, "num_threads", None)

    @property
    def state(self) -> dict[str, np.ndarray]:
        """The model's state by weight name: its mutable weights with a value (a training
        step's weights and momenta), which each run reads and updates in place and which
        keep their values between runs. Live arrays: write into one to set it, copy one
        to keep it. Empty for a model without state."""
        get = getattr(self._executor, "state", None)
        return get() if get is not None else {}

    @property
    def memory(self):
        """The `MemoryReport` (constant, mutable, activation bytes, the peak-live lower
        bound and the unshared total), or None for a backend without planned memory."""
        return getattr(self._executor, "memory", None)

    @property
    def trace(self) -> dict:
        """The Chrome trace (`{"traceEvents": [...]}`) of this model's runs so far: one
        complete event per kernel call, with `compile(..., trace=True)` (cpu backend);
        a UserError otherwise."""
        tracer = getattr(self._executor, "tracer", None)
        if tracer is None:
            raise UserError("this model was compiled without tracing: compile it with "
                            "glow_mlir.compile(..., trace=True) (backend cpu)")
        return tracer.trace()

    def write_trace(self, path: str | os.PathLike) -> None:
        """Write `trace` as JSON to `path` (open it in ui.perfetto.dev or
        chrome://tracing)."""
        import json

        trace = self.trace
        try:
            with open(path, "w") as f:
                json.dump(trace, f)
        except OSError as err:
            raise UserError(f"cannot write the trace to '{path}': "
                            f"{err.strerror or err}") from None

    @property
    def accel_report(self):
        """The accelerator's `AccelReport` (DMA bytes each way and their lower bound,
        cycles, compute and DMA cycles and their overlap, scratchpad size and peak; the same
        for every run), or None for another backend."""
        return getattr(self._executor, "report", None) if self.backend == "accel" else None

    def __repr__(self) -> str:
        from glow_mlir.dialects.glow_ops.types import fmt_shape

        ins = ", ".join(f"{n}: {fmt_shape(self.input_shapes[n])} {self.input_dtypes[n]}"
                        for n in self.input_names)
        return (
            f"CompiledModel(backend={self.backend!r}, inputs=[{ins}], outputs={self.output_names})"
        )

    def check_inputs(self, inputs: Mapping[str, object]) -> list[np.ndarray]:
        """The inputs as arrays in argument order, or one InputError listing every problem."""
        if not isinstance(inputs, Mapping):
            raise InputError(f"inputs must be a dict of name -> array, got {type(inputs).__name__}")
        problems = []
        for name in inputs:
            if name not in self.input_shapes:
                expected = ", ".join(f"'{n}'" for n in self.input_names) or "none"
                problems.append(f"unknown input '{name}' (the model's inputs: {expected})")
        arrays = []
        for name in self.input_names:
            shape, dtype = self.input_shapes[name], self.input_dtypes[name]
            if name not in inputs:
                problems.append(f"missing input '{name}' (expected {_describe(shape, dtype)})")
                continue
            x = as_array(inputs[name])
            if x.dtype != dtype or x.shape != shape:
                problems.append(f"input '{name}' has {_describe(x.shape, x.dtype)}; expected "
                                f"{_describe(shape, dtype)}")
            arrays.append(x)
        if not problems:
            # one problem per input: the importer's check, named after the user's op, comes
            # first; the lowered ops' checks on the same values (a Gather of
            # RotaryEmbedding's position_ids) would only say it again in our terms
            reported = set()
            for name, check in self.value_checks:
                if name in reported:
                    continue
                problem = check.problem(name, arrays[self.input_names.index(name)])
                if problem is not None:
                    problems.append(problem)
                    reported.add(name)
        if problems:
            raise InputError("; ".join(problems))
        return arrays

    def run(self, inputs: Mapping[str, object]) -> list[np.ndarray]:
        """Outputs (numpy arrays) in the graph's output order. Inputs are numpy arrays or
        anything `np.asarray` takes, torch tensors included (`as_array`)."""
        outputs = self._executor.run(self.check_inputs(inputs))
        if not self._bounded:
            return outputs
        return _trimmed(outputs, self._bounded)

    def __call__(self, *inputs: object, **named: object) -> list[np.ndarray]:
        """Positional inputs in the graph's input order, one dict of named inputs (as
        onnxruntime's `run` takes them) or the inputs by keyword; same result as `run`."""
        return self.run(call_feeds(self.input_names, inputs, named))


def call_feeds(input_names: Sequence[str], inputs: tuple[object, ...],
               named: Mapping[str, object] | None = None) -> Mapping[str, object]:
    """The named inputs of `model(*inputs, **named)`: keywords are the names themselves,
    and so is one mapping (no model input is a dict, so `model({"image": x})` can only
    mean that), otherwise the positional inputs in the graph's order, as many as it has."""
    if named:
        if inputs:
            raise InputError("give the model's inputs by position or by name, not both")
        return named
    if len(inputs) == 1 and isinstance(inputs[0], Mapping):
        return inputs[0]
    if len(inputs) != len(input_names):
        names = ", ".join(input_names) or "none"
        raise InputError(f"the model takes {len(input_names)} input(s) ({names}), "
                         f"got {len(inputs)}")
    return dict(zip(input_names, inputs))


def _trimmed(outputs: list[np.ndarray], bounded: list[tuple[int, int, int]]) -> list[np.ndarray]:
    """Each bounded output cut to its run-time length; the lengths themselves dropped."""
    outputs = list(outputs)
    for out, count, dim in bounded:
        index = [slice(None)] * outputs[out].ndim
        index[dim] = slice(0, int(outputs[count]))
        outputs[out] = np.ascontiguousarray(outputs[out][tuple(index)])
    counts = {c for _, c, _ in bounded}
    return [y for i, y in enumerate(outputs) if i not in counts]


def _value_checks(module: ModuleOp, names: Sequence[str]) -> list[tuple[str, InputCheck]]:
    """(input name, check) recorded on the function's arguments (`ir/input_checks.py`)
    and for each operand that an op checks (`input_checks()`, e.g. Gather's indices,
    RoiAlign's rois) and that is a model input itself; found on the graph before the
    backend lowers it."""
    from xdsl.dialects import func
    from xdsl.ir import BlockArgument

    fn = next((op for op in module.ops if isinstance(op, func.FuncOp)), None)
    if fn is None or not fn.body.blocks:
        return []
    from glow_mlir.ir.input_checks import arg_checks

    args = fn.body.blocks[0].args
    checks: list[tuple[str, InputCheck]] = [(names[i], c) for i, c in arg_checks(fn)]
    for op in fn.walk():
        declared = getattr(op, "input_checks", None)
        if declared is None:
            continue
        for value, check in declared():
            if isinstance(value, BlockArgument) and value.owner is fn.body.blocks[0]:
                entry = (names[args.index(value)], check)
                if entry not in checks:
                    checks.append(entry)
    return checks


def _signature(module: ModuleOp) -> tuple[list[str], list[TensorType | MemRefType],
                                          list[str], list[TensorType | MemRefType]]:
    """Input names and types, output names and types of the module's first function: a
    graph's arguments and results, or a `glow_ir` program's input and output weights."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import TensorType

    from glow_mlir.conversion.lower_to_instr import placeholder_names, signature_indices
    from glow_mlir.dialects import glow_ir

    fn = next((op for op in module.ops if isinstance(op, (func.FuncOp, glow_ir.FuncOp))), None)
    if fn is None:
        raise UserError("the module has no function to run")
    if isinstance(fn, glow_ir.FuncOp):
        weights_in, weights_out = fn.placeholders("input"), fn.placeholders("output")
        return ([w.sym_name.data for w, _ in weights_in], [w.type for w, _ in weights_in],
                [w.sym_name.data for w, _ in weights_out], [w.type for w, _ in weights_out])
    ins, outs = fn.function_type.inputs.data, fn.function_type.outputs.data
    tensors: list[TensorType | MemRefType] = []
    for t in (*ins, *outs):
        if not isinstance(t, TensorType):
            raise UserError(f"@{fn.sym_name.data} has a {t} input or output; a model's inputs "
                            f"and outputs are tensors")
        tensors.append(t)
    in_names = placeholder_names(fn.arg_attrs, len(ins), "input")
    out_names = placeholder_names(fn.res_attrs, len(outs), "output")
    passed, returned = signature_indices(fn)  # not the state and its updates
    return ([in_names[i] for i in passed], [tensors[i] for i in passed],
            [out_names[i] for i in returned], [tensors[len(ins) + i] for i in returned])


def compile_model(model: ModelProto | str | os.PathLike | bytes | ModuleOp | tuple,
                  backend: str = DEFAULT_BACKEND,
                  input_shapes: Mapping[str, Sequence[int] | int] | None = None,
                  optimize: bool = True,
                  disable_passes: Sequence[str] = (),
                  verbose: bool = False,
                  progress: bool | None = None,
                  cache: bool = True,
                  profile: Profile | str | os.PathLike | None = None,
                  quantization: QuantizationConfig | None = None,
                  **backend_options: object) -> CompiledModel:
    """Import and compile `model` for `backend`: an ONNX model (ModelProto, bytes, a path),
    a Caffe2 model (a (predict net, init net) pair of paths, bytes or NetDefs), or a model
    in IR (a `.mlir` path or a parsed ModuleOp, lowered in place), whose one
    function is a `glow` graph or a `glow_ir` program (`runtime.ir_models`).

    `optimize` runs the whole graph pipeline for the backend (glow-graph-pipeline);
    `disable_passes` names passes of it (or of the instruction or accelerator pipeline) to
    skip. `backend_options` are the backend's own (accel: `scratchpad_kib`). `progress`
    draws a bar of the stages on stderr (None: when stderr is a terminal); `verbose`
    prints the time of each stage and pass on stderr when done, then the compile cache's
    hits and misses. `cache=False` neither reads nor writes the compile cache
    (`targets/compile_cache.py`: `$GLOW_MLIR_CACHE_DIR`).

    `profile` (a `Profile` or its file) quantizes the graph to int8 between lowering and
    the rest of the graph pipeline, as `quantization` (a `QuantizationConfig`) says
    (`runtime/quantized.py`); such a model is not stored in the whole-model cache."""
    from glow_mlir.targets import compile_cache

    if profile is not None or quantization is not None:
        from glow_mlir.runtime.quantized import compile_quantized

        if not optimize:
            raise UserError("quantization runs inside the graph pipeline: drop "
                            "optimize=False to compile with a profile")
        return compile_quantized(model, backend, input_shapes, profile, quantization,
                                 disable_passes, verbose, progress, cache, backend_options)

    backend_options, (graph_disable, instr_disable) = checked_options(
        backend, disable_passes, backend_options)
    with progress_hooks.recording(show=progress) as recorder:
        store = compile_cache.open_cache(cache)
        key = compiled = None
        if store is not None and not backend_options.get("trace"):
            # a traced model is compiled (its kernel objects cached): a saved model
            # carries no tracer
            from glow_mlir.runtime import model_cache

            with progress_hooks.stage("model cache"):
                key = model_cache.model_key(model, backend, input_shapes, optimize,
                                            disable_passes, backend_options)
                compiled = model_cache.lookup(store, key) if key is not None else None
            if compiled is not None:
                compiled.source = {"model": model, "input_shapes": input_shapes,
                                   "optimize": optimize,
                                   "disable_passes": tuple(disable_passes),
                                   **backend_options}
        if compiled is None:
            # the cyclic collector paused (ir/gc_pause.py): the compile builds and drops
            # millions of IR objects, and the collector's passes over them were a quarter
            # of the CPU time of a DenseNet-201 compile (33.6 -> 24.2 s)
            with compile_cache.using(store), paused_gc():
                module, is_graph = _import(model, input_shapes)
                if optimize and is_graph:
                    module = optimize_graph(module, backend, graph_disable)
                compiled = CompiledModel(module, backend, disable_passes=instr_disable,
                                         backend_options=backend_options)
            # a model with state (a training step) is never stored, so never found: a
            # saved model does not carry state (`saved_model.to_pieces`)
            if store is not None and key is not None and not compiled.state:
                with progress_hooks.stage("model cache"):
                    model_cache.store(store, key, compiled)
    if verbose:
        recorder.print_report(sys.stderr)
    return compiled


def is_caffe2_model(model: object) -> bool:
    """A Caffe2 model: a (predict net, init net) pair of paths, bytes or NetDefs."""
    return isinstance(model, (tuple, list)) and len(model) == 2


def _import(model, input_shapes) -> tuple[ModuleOp, bool]:
    """The module to compile, and whether it is a graph (else a `glow_ir` program)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    from glow_mlir.runtime.ir_models import is_mlir_path, load_mlir, runnable_function

    if input_shapes is not None and not isinstance(input_shapes, Mapping):
        raise UserError(f"input_shapes must be a dict of name -> shape (or dimension name "
                        f"-> size), got {type(input_shapes).__name__} {input_shapes!r}")
    with progress_hooks.stage("import"):
        if is_caffe2_model(model):
            from glow_mlir.frontends.caffe2 import import_caffe2

            predict, init = model
            return import_caffe2(predict, init, dict(input_shapes or {})), True
        if not isinstance(model, ModuleOp) and not is_mlir_path(model):
            from glow_mlir.frontends.onnx import import_onnx

            return import_onnx(model, dict(input_shapes) if input_shapes else None), True
        if input_shapes:
            raise UserError("input shapes bind an ONNX model's symbolic dimensions; a model "
                            "in IR has its shapes in its types")
        if isinstance(model, ModuleOp):
            from glow_mlir.ir.text import verify_module

            module, source = model, None
            verify_module(module)  # a module built in Python was never verified
        else:
            module, source = load_mlir(model), os.fspath(model)
        return module, isinstance(runnable_function(module, source), func.FuncOp)


def checked_options(backend: str, disable_passes: Sequence[str],
                    backend_options: Mapping[str, object]
                    ) -> tuple[dict[str, object], tuple[tuple[str, ...], tuple[str, ...]]]:
    """The backend's options as the model cache keys them, and the disabled passes split
    (`split_disabled`), checked before the import: fail fast. specialize='first-call'
    makes these checks at compile() too, long before its first compile."""
    target = get_backend(backend)
    target.check_options(backend_options)
    # No names, nothing to check: the pipelines (and xDSL) are not imported for a cache hit.
    disabled = split_disabled(disable_passes) if disable_passes else ((), ())
    return target.keyed_options(backend_options), disabled


def split_disabled(names: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Disabled pass names for the graph pipeline and for what follows it (the instruction
    pipeline and a backend's lowering steps); a name none knows is an error that lists
    them all."""
    from glow_mlir.backends import all_backends
    from glow_mlir.transforms.graph.pipelines import PIPELINE_PASS_NAMES

    INSTR_PIPELINE_PASS_NAMES = tuple(dict.fromkeys(
        n for b in all_backends() for n in b.pass_names()))
    graph = tuple(n for n in names if n not in INSTR_PIPELINE_PASS_NAMES)
    instr = tuple(n for n in names if n in INSTR_PIPELINE_PASS_NAMES)
    unknown = [n for n in graph if n not in PIPELINE_PASS_NAMES]
    if unknown:
        known = sorted(set(PIPELINE_PASS_NAMES) | set(INSTR_PIPELINE_PASS_NAMES))
        raise UserError(f"cannot disable unknown pass(es) {', '.join(map(repr, unknown))}; "
                        f"the passes are: {', '.join(known)}")
    return graph, instr


def optimize_graph(module: ModuleOp, backend: str, disable: tuple[str, ...] = (),
                   print_ir_after_each: bool = False,
                   between: Callable[[ModuleOp], object] | None = None,
                   phase: str = "all", check_supported: bool = True) -> ModuleOp:
    """Run the backend's graph pipeline in place (`phase`: all of it, or the part before
    or after quantization; `between`, e.g. quantization, runs between those parts;
    `check_supported=False`: ops the backend does not run are left for another device);
    an op the backend cannot run is a UserError (a `DiagnosticError`: every unsupported
    op kind, each at an op)."""
    if between is not None:
        optimize_graph(module, backend, disable, print_ir_after_each, phase="lower",
                       check_supported=check_supported)
        with progress_hooks.stage("quantize-graph"):
            between(module)
        return optimize_graph(module, backend, disable, print_ir_after_each, phase="finish",
                              check_supported=check_supported)
    from xdsl.utils.exceptions import PassFailedException

    from glow_mlir.conversion.pass_runner import run_pipeline
    from glow_mlir.ir.text import verify_each_step

    spec = get_backend(backend).graph_pipeline(
        disable, print_ir_after_each, verify_each=print_ir_after_each or verify_each_step(),
        phase=phase, check_supported=check_supported)
    try:
        with progress_hooks.stage("graph passes"):
            # verified once, after the pipeline (each step too when printing after each)
            run_pipeline(module, spec)
    except PassFailedException as err:
        if isinstance(err, UserError):
            raise
        raise UserError(str(err)) from None
    return module
