"""glow-mlir: a Glow-style neural-network compiler on xDSL.

    import glow_mlir
    model = glow_mlir.compile("model.onnx", backend="cpu",
                              input_shapes={"input": (1, 3, 224, 224)})
    outputs = model.run({"input": x})   # list of numpy arrays, in the graph's output order
    outputs = model(x)                  # positional inputs
    model.save("m.glow"); model = glow_mlir.load("m.glow")   # native code + weights
    model = glow_mlir.from_torch(torch_module, (x,))       # a PyTorch module, via ONNX
    torch.compile(torch_module, backend="glow")            # supported ops compiled, rest eager

The dialects live in `glow_mlir.dialects`, the ONNX importer in `glow_mlir.frontends.onnx`,
the reference evaluator in `glow_mlir.semantics`. Imports are lazy, so
`import glow_mlir` stays cheap for the tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from glow_mlir.ir.version import __version__

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from glow_mlir.analysis.quant_profile import Profile
    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.runtime.specialized import SpecializingModel


@overload
def compile(model: Any, backend: str = ..., input_shapes: Any = ..., optimize: bool = ...,
            disable_passes: Any = ..., verbose: bool = ..., progress: bool | None = ...,
            cache: bool = ..., profile: Any = ..., quantization: Any = ...,
            specialize: None = ..., max_specializations: int | None = ...,
            **backend_options: Any) -> CompiledModel: ...
@overload
def compile(model: Any, backend: str = ..., input_shapes: Any = ..., optimize: bool = ...,
            disable_passes: Any = ..., verbose: bool = ..., progress: bool | None = ...,
            cache: bool = ..., profile: Any = ..., quantization: Any = ..., *,
            specialize: str, max_specializations: int | None = ...,
            **backend_options: Any) -> SpecializingModel: ...
def compile(model, backend: str = "cpu", input_shapes=None, optimize: bool = True,
            disable_passes=(), verbose: bool = False, progress: bool | None = None,
            cache: bool = True, profile=None, quantization=None, specialize=None,
            max_specializations: int | None = None,
            **backend_options) -> CompiledModel | SpecializingModel:  # noqa: A001
    """Compile a model for `backend`: "cpu" (native x86 code, the default,
    `backends.DEFAULT_BACKEND`), "interpreter" (the instruction IR on numpy) or
    "accel" (the accelerator's program on its simulator;
    `scratchpad_kib=256` sets the scratchpad size, and `model.accel_report` gives DMA
    bytes, cycles and scratchpad use). The cpu backend takes `num_threads=N` (its large
    kernels split over N threads of a native pool; default: the cores this process may
    use; the outputs are the same bits for any N) and `trace=True` (every kernel call
    timed: `model.trace`, `model.write_trace("trace.json")`, Chrome trace events).

    `model` is an ONNX model (ModelProto, file path or bytes), a Caffe2 model (a
    `(predict_net, init_net)` pair of paths, bytes or NetDefs; `input_shapes` then gives
    every input's shape, which a NetDef does not declare), or a model in IR: a `.mlir`
    path or a parsed ModuleOp with one function, a `glow` graph (it goes through the same
    pipelines) or a `glow_ir` program (a planned one runs as it is); its weights are the
    module's `dense_resource` blobs. `input_shapes` binds an ONNX model's symbolic
    dimensions: `{"input": (1, 3, 224, 224)}` or `{"batch": 1}`. The graph goes through
    the whole graph pipeline (`optimize=False` skips it; `disable_passes` skips some of its
    passes, or of the instruction or accelerator pipeline). `progress` shows the stages
    on stderr as they run (default: when stderr is a terminal); `verbose=True` prints the
    time of each stage and pass there when the compile is done, and the compile cache's
    hits and misses. Compiled code is cached on disk (`$GLOW_MLIR_CACHE_DIR`, default
    `~/.cache/glow-mlir`; `glow_mlir.targets.compile_cache`): the same kernel or the same
    model compiled again is read back; `cache=False` neither reads nor writes it.

    `profile=P` (a `Profile` from `glow_mlir.profile`, or its file) quantizes the model to
    int8 as `quantization=glow_mlir.QuantizationConfig(...)` says (schema, calibration,
    ops kept in float); `model.quantization` then tells which ops were quantized.

    `specialize="first-call"` compiles an ONNX model at its first call instead, and again
    at each new input signature (the inputs' shapes, and the values of inputs the graph
    needs as constants: Reshape's shape, Slice's starts, TopK's K, ...), each compile
    static as usual; the returned `SpecializingModel` keeps the last
    `max_specializations` of them (default 8; `model.cache_info()`: hits, misses, entries;
    `model.last`, `model.input_shapes`, `model.memory`, ...: the last run's function)."""
    from glow_mlir.runtime.compiled_model import compile_model

    if specialize is not None:
        from glow_mlir.runtime.specialized import (
            DEFAULT_MAX_ENTRIES,
            SpecializeError,
            SpecializingModel,
        )

        if specialize != "first-call":
            raise SpecializeError(f"specialize must be 'first-call' or None, got {specialize!r}")
        if input_shapes or profile is not None or quantization is not None:
            raise SpecializeError("specialize='first-call' takes the shapes from each call: "
                                  "it cannot be combined with input_shapes, profile or "
                                  "quantization")
        from xdsl.dialects.builtin import ModuleOp

        from glow_mlir.runtime.ir_models import is_mlir_path

        if isinstance(model, ModuleOp | tuple) or is_mlir_path(model):
            what = "a Caffe2 model" if isinstance(model, tuple) else "a model in IR"
            raise SpecializeError(f"specialize='first-call' compiles ONNX models; {what} "
                                  f"is compiled without it (its shapes are given once)")
        return SpecializingModel(model, DEFAULT_MAX_ENTRIES if max_specializations is None
                                 else max_specializations,
                                 backend=backend,
                                 optimize=optimize, disable_passes=disable_passes,
                                 verbose=verbose, progress=progress, cache=cache,
                                 **backend_options)

    if max_specializations is not None:
        from glow_mlir.runtime.specialized import SpecializeError

        raise SpecializeError("max_specializations bounds the compiles of "
                              "specialize='first-call'; give that too")
    try:
        return compile_model(model, backend, input_shapes, optimize, disable_passes,
                             verbose=verbose, progress=progress, cache=cache, profile=profile,
                             quantization=quantization, **backend_options)
    except Exception as err:
        # imported only on a failure: a cache hit imports neither onnx nor xDSL
        from glow_mlir.frontends.onnx.errors import UnsupportedOnnxError

        if isinstance(err, UnsupportedOnnxError):
            _hint_specialize(err)
        raise


def _hint_specialize(err) -> None:
    """A value the importer needs as a constant (Reshape's shape, Trilu's k, OneHot's
    depth, ...) that the model computes from its inputs is what specialize='first-call'
    is for: the message says so, as the one for an unbound dimension does."""
    from glow_mlir.runtime.specialized import RUNTIME_VALUE

    if any(RUNTIME_VALUE.search(e.why) for e in err.entries):
        err.args = (f"{err.args[0]}\n(values computed at run time from the model's inputs: "
                    "compile with specialize='first-call' (glow-run --specialize first-call "
                    "--inputs x.npz) to compile for each call's values)",) + err.args[1:]


def profile(model, batches, backend: str = "cpu", input_shapes=None) -> Profile:
    """Run `model` on `batches` (an iterable of input dicts) with every float edge of its
    lowered graph recorded (min, max, histogram), on "cpu" (as `compile`'s default) or
    "interpreter" (a backend lowers the graph its own way: quantize for the backend the
    profile was recorded on); the
    `Profile` saves to a readable file (`save(path)`, `Profile.load(path)`) and feeds
    `compile(model, profile=..., quantization=...)`. It carries the graph's hash: using
    it for another model is an error."""
    from glow_mlir.runtime.profiling import profile_model

    return profile_model(model, batches, backend, input_shapes)


def from_torch(module, example_inputs, *, backend: str = "cpu",
               dynamic: bool | Sequence[str] = False,
               exporter: str = "dynamo", input_shapes=None, input_names=None,
               output_names=None, opset: int | None = None,
               **compile_options) -> CompiledModel:
    """Compile a `torch.nn.Module`: it is exported to ONNX in memory by
    `torch.onnx.export` (`exporter="dynamo"`, torch.export-based, or `"torchscript"`, the
    tracing one) with `example_inputs` (a tensor, a tuple of tensors for `forward`'s
    positional parameters, or a dict of keyword arguments), in eval mode, then imported
    and compiled as `compile` does (`backend`, `verbose`, `cache`, ... as there). Returns
    the same `CompiledModel`: its inputs are named after `forward`'s parameters, its
    outputs `output` (or `output_0`, ...; `output_names=` renames them); it takes numpy
    arrays or torch tensors and returns numpy arrays.

    `dynamic=True` exports dimension 0 of every input as the symbolic dimension `batch`,
    bound to the example's batch unless `input_shapes={"batch": 8}` says otherwise (each
    compiled model has static shapes); `dynamic=["x", ...]` names the inputs whose dim 0
    is the batch, when another's is not (a `TorchDynamicError` says which were made
    dynamic when the model disagrees). A module neither exporter takes is a
    `TorchExportError` with torch's reason and the other exporter to try; without torch
    installed, a `MissingTorchError` naming the `torch` extra."""
    from glow_mlir.runtime.torch_models import compile_torch

    return compile_torch(module, example_inputs, backend=backend, dynamic=dynamic,
                         exporter=exporter, input_shapes=input_shapes,
                         input_names=input_names, output_names=output_names, opset=opset,
                         **compile_options)


def train(model, loss: str = "cross_entropy", learning_rate: float = 0.01,
          momentum: float = 0.0, batch_size: int | None = None, trainable=None,
          backend: str = "cpu", l1: float = 0.0, l2: float = 0.0, cache: bool = True,
          batch_norm: str = "train", **backend_options):
    """Train an ONNX model (ModelProto, path or bytes) by SGD: returns a `Trainer` whose
    `step(inputs, labels)` runs one compiled training step and returns the batch's loss.
    The model's first output is the loss's input: `loss="cross_entropy"` reads it as class
    scores (the logits, or a final Softmax's input) against integer labels, `"mse"` against
    targets of its shape; both are batch means. `batch_size` binds the inputs' first dim;
    `trainable` names the initializers to train (default: every float initializer the
    loss depends on). SGD as `torch.optim.SGD`: `momentum`, `l2` (weight decay), and `l1`.
    Batch norms train on the batch's statistics and update their running ones
    (`batch_norm="frozen"`: the running ones, fixed).
    `trainer.weights` gives the trained initializers, `trainer.export()` the inference
    model with them (an `onnx.ModelProto`). `backend_options` go to the backend as in
    `compile` (`num_threads=1`)."""
    from glow_mlir.runtime.training import train as train_model

    return train_model(model, loss, learning_rate, momentum, batch_size, trainable, backend,
                       l1, l2, cache, batch_norm, **backend_options)


def load(source: str | os.PathLike | bytes | bytearray | memoryview) -> CompiledModel:
    """A model saved by `CompiledModel.save(path)`, ready to run without compiling (and
    without the ONNX file): `source` is the file's path, or its bytes (a model fetched
    over the network: `glow_mlir.load(response.content)`; then `model.origin` is
    "memory"). A file that is not a saved model, is damaged, or was saved by another
    glow-mlir or LLVM version or for a CPU this host is not, is a `UserError` that says
    which; a `source` of another type is a TypeError."""
    from glow_mlir.runtime.saved_model import load as load_saved

    return load_saved(source)


def __getattr__(name: str):
    if name == "torch_backend":  # torch.compile(m, backend=glow_mlir.torch_backend)
        from glow_mlir.runtime.torch_backend import torch_backend

        return torch_backend
    if name == "CompiledModel":
        from glow_mlir.runtime.compiled_model import CompiledModel

        return CompiledModel
    if name == "Profile":
        from glow_mlir.analysis.quant_profile import Profile

        return Profile
    if name == "QuantizationConfig":
        from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig

        return QuantizationConfig
    if name == "model_zoo":  # `glow_mlir.model_zoo.resnet18()` after `import glow_mlir`
        # importlib, not `from glow_mlir import model_zoo`: that asks this __getattr__
        # for the name before importing the submodule, and would recurse
        import importlib

        return importlib.import_module("glow_mlir.model_zoo")
    raise AttributeError(f"module 'glow_mlir' has no attribute {name!r}")


__all__ = ["compile", "from_torch", "load", "profile", "train", "torch_backend", "CompiledModel",
           "Profile", "QuantizationConfig", "model_zoo", "__version__"]
