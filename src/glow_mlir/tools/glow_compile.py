"""glow-compile: compile an ONNX model (or a Caffe2 one) and emit one of its stages.

    glow-compile model.onnx --emit graph -o model.mlir [--input-shape input=1x3x224x224]
    glow-compile --caffe2 predict_net.pb init_net.pb --input-shape data=1x3x224x224

`--emit partitions --num-devices N [--device-memory-kib M] [--partition load-balance]`
prints the device partitioner's DAG (each part's device, bytes, cost, inputs and outputs;
with `--dump-graph-dag`, the optimized graph with each part in its colour).
`--emit graph` prints the `glow` module as imported, `--emit optimized-graph` after the
whole graph pipeline for `--backend`, `--emit instr` the `glow_ir` instruction IR after
Glow's IR optimizer and memory planning, `--emit accel` the accelerator's program (tiled
to a `--scratchpad-kib` scratchpad, DMAs scheduled and double-buffered, scratchpad
planned), `--emit llvm` the LLVM-dialect module (of the cpu backend, or of the accel
program with `--backend accel`) and `--emit llvm-ir` its LLVM IR after O3 for this host's
CPU; weights are MLIR's `{-# dialect_resources #-}`
blobs, so the file is self-contained (glow-opt reads it back). `--dump-graph-dag FILE.dot`
writes the graph of the emitted stage as Graphviz dot. `--memory-report FILE.json` writes
how much memory the model needs (constants, inputs and outputs, the activation arena) and
the peak-live lower bound the arena is measured against. `--accel-report FILE.json` (with
`--backend accel`) writes the simulator's figures: DMA bytes and their lower bound,
cycles, compute and DMA cycles, scratchpad size and peak. `--emit-bundle DIR
[--network-name NET] [--cpu NAME] [--cpu-features +F,-G]` writes an AOT bundle for
this host's CPU or the one named (NET.o, NET.h,
NET.weights.bin, NET.weights.txt; see `glow_mlir.runtime.bundle`); without an explicit
`--emit`, only the bundle is written. `--save FILE.glow` compiles for the cpu backend and
saves the model (`glow-run FILE.glow` runs it without compiling); `--no-cache` neither
reads nor writes the compile cache. `--emit training-graph [--loss cross_entropy|mse]
[--learning-rate R] [--momentum M]` prints the graph `differentiate` makes of it: one SGD
step (the loss on the first output, the gradients, the updated weights), before the graph
pipeline; `--train` (same options) compiles that step, so `--emit instr` shows its weights
as mutable weights with their initial values, each updated in place.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from glow_mlir.backends import DEFAULT_BACKEND, backend_names
from glow_mlir.backends.registry import unknown_backend
from glow_mlir.ir.errors import UserError, check_readable, file_error
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.tools.errors import ArgumentParser, at_least, thread_count, user_errors_exit
from glow_mlir.tools.unbound_dims import unbound_dims_in_flags

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

EMITS = ("graph", "optimized-graph", "training-graph", "instr", "accel", "llvm", "llvm-ir",
         "partitions")
_CODE = ("llvm", "llvm-ir")  # the CPU code generator's stages


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`name=1x3x224x224` (an input's shape), `name=scalar`, or `batch=1` (a symbolic
    dimension). A bad dim is named by its input, its index and its value."""
    name, equals, dims = text.strip().partition("=")
    if not equals or not name or not dims:
        raise argparse.ArgumentTypeError(
            f"expected NAME=DIMS such as input=1x3x224x224 or batch=1, got '{text}'")
    if dims == "scalar":
        return name, ()
    parts = dims.split("x")
    for index, part in enumerate(parts):
        if re.fullmatch(r"\d+", part):
            continue
        where = f"'{name}', dim {index}" if len(parts) > 1 else f"'{name}'"
        what = ("an empty dim" if not part
                else f"{part} is negative" if re.fullmatch(r"-\d+", part)
                else f"'{part}' is not a whole number")
        raise argparse.ArgumentTypeError(
            f"{where}: {what}; a dim is a size, a whole number >= 0 (in '{text}')")
    return name, tuple(int(d) for d in parts)


def backend_name(text: str) -> str:
    """`--backend`: a registered name, else the registry's message (with its did-you-mean,
    which argparse's `choices` would not give)."""
    if text in backend_names():
        return text
    raise argparse.ArgumentTypeError(str(unknown_backend(text)))


def add_model_arguments(p: argparse.ArgumentParser, model_help: str = "ONNX model file",
                        caffe2: bool = False, emits: bool = True) -> None:
    """The model arguments glow-compile and glow-run share (`caffe2`: the model may be a
    Caffe2 pair, `--caffe2 PREDICT INIT`, instead; `emits`: the tool has --emit and
    --emit-bundle, whose default thread count --threads' help names)."""
    p.add_argument("model", help=model_help, nargs="?" if caffe2 else None)
    if caffe2:
        p.add_argument("--caffe2", nargs=2, metavar=("PREDICT", "INIT"),
                       help="a Caffe2 model instead of MODEL: its predict net and init net "
                            "(NetDef .pb or .pbtxt files); give every input's shape with "
                            "--input-shape or --value-info")
        p.add_argument("--value-info", metavar="FILE.json",
                       help="with --caffe2: the inputs' types and shapes as the Caffe2 model "
                            "zoo's value_info.json gives them ({\"data\": [1, [1, 3, 224, "
                            "224]]}); --input-shape overrides an entry")
    p.add_argument("--backend", default=None, type=backend_name,
                   help=f"what compiles and runs the model: {', '.join(backend_names())} "
                        f"(default: {DEFAULT_BACKEND}, native code)")
    p.add_argument("--input-shape", action="append", default=[], type=parse_input_shape,
                   metavar="NAME=DIMS",
                   help="bind an input's shape (input=1x3x224x224) or a symbolic dimension "
                        "(batch=1); repeatable")
    p.add_argument("--scratchpad-kib", type=at_least(1), default=None, metavar="KIB",
                   help="the accelerator's scratchpad size in KiB (--backend accel; "
                        "default 256)")
    p.add_argument("--threads", type=thread_count, default=None, metavar="N",
                   help="threads the cpu backend's kernels split their outer loops over, "
                        "1 to 256 (default: the cores this process may use"
                        + ("; 1 with --emit llvm-ir and --emit-bundle)" if emits else ")"))
    p.add_argument("--time-passes", action="store_true",
                   help="print the CPU and wall time of each stage and pass on stderr, "
                        "as a tree (MLIR's -mlir-timing), then the compile cache's hits "
                        "and misses")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the compile cache ($GLOW_MLIR_CACHE_DIR, "
                        "default ~/.cache/glow-mlir)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (it is drawn only when stderr is a terminal)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")


class BackendFlags(TypedDict, total=False):
    """The backend options a command line gives (`compile(..., **flags)` takes each as the
    backend's own, none as one of compile's parameters)."""

    num_threads: int
    trace: bool
    scratchpad_kib: int


def backend_options(args: argparse.Namespace) -> BackendFlags:
    """The backend's own options given on the command line."""
    options: BackendFlags = {}

    def cpu_only(flag: str, why: str) -> None:
        if args.backend not in (None, "cpu"):
            raise UserError(f"{flag} {why.format(backend=args.backend)} (drop {flag})")

    if getattr(args, "threads", None) is not None:
        cpu_only("--threads", "is an option of the cpu backend; backend '{backend}' runs "
                              "on one thread")
        options["num_threads"] = args.threads
    if getattr(args, "trace", None):
        cpu_only("--trace", "times the cpu backend's kernels; backend '{backend}' has none")
        options["trace"] = True
    if args.scratchpad_kib is None:
        return options
    if args.backend != "accel":
        raise UserError("--scratchpad-kib is an option of the accel backend: give "
                        "--backend accel")
    options["scratchpad_kib"] = args.scratchpad_kib
    return options


def resolve_model(args: argparse.Namespace, prog: str) -> None:
    """`args.model`: the MODEL argument, or the (predict, init) pair `--caffe2` gives."""
    caffe2 = getattr(args, "caffe2", None)
    if caffe2 and args.model:
        raise UserError(f"give either MODEL or --caffe2 PREDICT INIT, not both (see {prog} "
                        f"--help)")
    if getattr(args, "value_info", None) and not caffe2:
        raise UserError(f"--value-info gives a Caffe2 model's input shapes: give --caffe2 "
                        f"PREDICT INIT too (see {prog} --help)")
    if caffe2:
        args.model = tuple(caffe2)
    elif not args.model:
        raise UserError(f"the following arguments are required: model (or --caffe2 PREDICT "
                        f"INIT) (see {prog} --help)")


def model_path(model: object) -> str:
    """The file that names a model in reports and bundles (a Caffe2 pair: its predict net)."""
    return str(model[0] if isinstance(model, tuple) else model)


def import_model(model: object, shapes: dict[str, object] | None) -> ModuleOp:
    """An ONNX model or a Caffe2 (predict, init) pair as a `glow` module."""
    if isinstance(model, tuple):
        from glow_mlir.frontends.caffe2 import import_caffe2

        return import_caffe2(model[0], model[1], shapes)
    from glow_mlir.frontends.onnx import import_onnx

    return import_onnx(model, shapes)  # type: ignore[arg-type]


def input_shapes(args: argparse.Namespace) -> dict[str, object] | None:
    """--input-shape's bindings, over --value-info's entries (a Caffe2 model's)."""
    shapes: dict[str, object] = {}
    value_info = getattr(args, "value_info", None)
    if value_info:
        shapes.update(read_value_info(value_info))
    shapes.update(dict(args.input_shape))
    return shapes or None


def read_value_info(path: str) -> dict[str, object]:
    """A Caffe2 model zoo `value_info.json`: input name -> [data type, shape]."""
    import json

    try:
        with open(path) as f:
            info = json.load(f)
    except OSError as err:
        raise file_error(path, err, "value info") from None
    except ValueError as err:
        raise UserError(f"'{path}' is not JSON: {err}") from None
    if not isinstance(info, dict):
        raise UserError(f"'{path}' must map input names to [data type, shape], got "
                        f"{type(info).__name__}")
    return info


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="glow-compile", description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(p, caffe2=True)
    p.add_argument("--emit", default=None, choices=EMITS,
                   help="the stage to print (default: graph, optimized-graph with --load-profile, "
                        "none with --emit-bundle)")
    p.add_argument("--train", action="store_true",
                   help="compile one SGD training step of the model (differentiate first): "
                        "--emit optimized-graph, instr, llvm show the step, its weights "
                        "updated in place")
    # no defaults here (TrainingConfig's): a flag given without --train is an error
    p.add_argument("--loss", default=None,
                   help="with --train or --emit training-graph: cross_entropy (default) or mse")
    p.add_argument("--learning-rate", type=float, default=None, metavar="R",
                   help="with --train or --emit training-graph: the SGD step (default 0.01)")
    p.add_argument("--momentum", type=float, default=None, metavar="M",
                   help="with --train or --emit training-graph: SGD momentum (default 0)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("--num-devices", type=at_least(1), default=None, metavar="N",
                   help="with --emit partitions: devices of --backend's kind (default 1)")
    p.add_argument("--device-memory-kib", type=at_least(1), default=None, metavar="KIB",
                   help="with --emit partitions: each device's memory (default 16 GiB)")
    p.add_argument("--partition", choices=("memory", "load-balance"), default=None,
                   help="with --emit partitions: the fewest parts that fit (memory, the "
                        "default) or a part per device, costs balanced (load-balance)")
    p.add_argument("--dump-graph-dag", metavar="FILE.dot",
                   help="write the graph (as imported with --emit graph, else optimized) as dot")
    p.add_argument("--disable-pass", action="append", default=[], metavar="PASS",
                   help="skip a pass of the graph or instruction pipeline (repeatable)")
    p.add_argument("--print-ir-after-each", action="store_true",
                   help="print the IR to stderr after each pass")
    p.add_argument("--memory-report", metavar="FILE.json",
                   help="write the memory report (bytes of constants, inputs/outputs, "
                        "activations, peak-live lower bound, unshared) as JSON")
    p.add_argument("--accel-report", metavar="FILE.json",
                   help="with --backend accel: write the simulator's report (dma_bytes, "
                        "dma_lower_bound_bytes, cycles, compute_cycles, dma_cycles, "
                        "scratchpad_bytes, scratchpad_peak_bytes, ...) as JSON")
    p.add_argument("--emit-bundle", metavar="DIR",
                   help="write an AOT bundle for this host's CPU into DIR: NET.o, NET.h, "
                        "NET.weights.bin, NET.weights.txt (Glow's bundle API)")
    p.add_argument("--network-name", metavar="NET",
                   help="the bundle's entry point and file names, a C identifier "
                        "(default: the model file's name as a C identifier)")
    p.add_argument("--save", metavar="FILE.glow",
                   help="compile for the cpu backend and save the model (native code, "
                        "weights, memory plan): glow-run FILE.glow or glow_mlir.load runs it "
                        "without compiling")
    p.add_argument("--dump-profile", metavar="P.yaml",
                   help="run the model on the --inputs batches with every float edge "
                        "recorded (min, max, histogram) and write the profile (on the "
                        "--backend, interpreter or cpu)")
    p.add_argument("--inputs", action="append", default=[], metavar="X.npz",
                   help="one batch of inputs (name -> array) for --dump-profile; repeat "
                        "for more batches")
    p.add_argument("--load-profile", metavar="P.yaml",
                   help="quantize the model to int8 with this profile")
    p.add_argument("--quantization-schema", default="asymmetric", metavar="SCHEMA",
                   help="asymmetric, symmetric, symmetric_uint8 or symmetric_pow2 "
                        "(with --load-profile)")
    p.add_argument("--calibration", default="minmax", metavar="C",
                   help="minmax or kl (with --load-profile)")
    p.add_argument("--keep-float", action="append", default=[], metavar="NAME",
                   help="an op kind (relu, glow.relu), an ONNX op type (Conv: each of its "
                        "nodes), or a node by its ONNX node name or its output's name, to "
                        "leave in float (with --load-profile); comma-separated or repeated "
                        "for more")
    p.add_argument("--channelwise-conv", action="store_true",
                   help="quantize convolution filters per output channel (with "
                        "--load-profile)")
    p.add_argument("--rowwise-fc", action="store_true",
                   help="quantize fully-connected weights per row (with --load-profile)")
    p.add_argument("--cpu", metavar="NAME",
                   help="with --emit-bundle: the LLVM CPU name to compile for (x86-64, "
                        "x86-64-v3, znver4, ...; default: this host's)")
    p.add_argument("--cpu-features", metavar="+F,-G",
                   help="with --emit-bundle: LLVM CPU features to enable (+avx2) or "
                        "disable (-fma), comma-separated")
    return p


def _write(path: str, text: str) -> None:
    from glow_mlir.ir import progress

    try:
        with progress.stage("output"), open(path, "w") as f:
            f.write(text)
    except OSError as err:
        raise file_error(path, err, action="write") from None


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    from glow_mlir.ir import progress

    with user_errors_exit("glow-compile", args.debug):
        resolve_model(args, "glow-compile")
        # the cyclic collector paused, as in compile() (ir/gc_pause.py)
        with progress.recording(show=False if args.quiet else None) as recorder, paused_gc():
            # the importer's advice is compile()'s (input_shapes=, specialize=): told in
            # glow-compile's flags
            with unbound_dims_in_flags(inputs=()):
                compile_and_emit(args)
        if args.time_passes:
            recorder.print_report(sys.stderr)


def _check_output_places(args: argparse.Namespace) -> None:
    """Every file the command will write goes into a folder that exists: said before the
    compile, not after the IR has already been printed and the compile time spent."""
    for path in (args.output, args.memory_report, args.dump_graph_dag, args.accel_report,
                 args.save):
        if path:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise UserError(f"cannot write '{path}': no folder '{folder}'")


def compile_and_emit(args: argparse.Namespace) -> None:
    from glow_mlir.ir import progress

    _check_output_places(args)
    with ExitStack() as cleanup:
        from glow_mlir.runtime.compiled_model import optimize_graph, split_disabled
        from glow_mlir.runtime.ir_models import is_mlir_path
        from glow_mlir.targets.instructions import require_memory_plan

        caffe2 = isinstance(args.model, tuple)  # (predict net, init net)
        for path in args.model if caffe2 else (args.model,):
            check_readable(path)  # before saying what kind of file it is
        if not caffe2 and is_mlir_path(args.model):
            raise UserError(f"'{args.model}' is a model in IR: glow-compile takes an ONNX "
                            f"model (glow-opt transforms IR, glow-run runs it)")
        _check_quantization_flags(args)
        if args.train:
            refused = [f for f, v in (("--save", args.save), ("--emit-bundle", args.emit_bundle),
                                      ("--dump-profile", args.dump_profile),
                                      ("--load-profile", args.load_profile),
                                      ("--emit partitions", args.emit == "partitions"))
                       if v]
            if refused:
                raise UserError(f"--train compiles a training step, whose weights are state "
                                f"that {refused[0]} cannot carry: drop one of them")
        training = [f for f, v in (("--loss", args.loss), ("--learning-rate", args.learning_rate),
                                   ("--momentum", args.momentum)) if v is not None]
        if training and not (args.train or args.emit == "training-graph"):
            raise UserError(f"{training[0]} needs --train (or --emit training-graph): it "
                            f"describes a training step")
        if args.load_profile and args.emit == "partitions":
            raise UserError("--emit partitions partitions the float graph: --load-profile "
                            "would not quantize it; drop one of them")
        if args.dump_profile:
            return dump_profile(args)
        if args.save:
            return save_model(args)
        partition_flags = [f for f, v in (("--num-devices", args.num_devices),
                                          ("--device-memory-kib", args.device_memory_kib),
                                          ("--partition", args.partition)) if v is not None]
        if args.emit == "partitions":
            from glow_mlir.tools.partitions import emit_partitions

            return emit_partitions(args)
        if partition_flags:
            raise UserError(f"{partition_flags[0]} describes the devices to partition for: "
                            f"give --emit partitions too")
        if args.emit is None:  # only the bundle (or only the report) unless asked
            quiet = args.emit_bundle or args.accel_report
            # with --load-profile the graph worth seeing is the quantized one
            args.emit = None if quiet else "optimized-graph" if args.load_profile else "graph"
        if args.network_name is not None and not args.emit_bundle:
            raise UserError("--network-name names a bundle: give --emit-bundle DIR too")
        graph_disable, instr_disable = split_disabled(args.disable_pass)
        if args.emit in _CODE:
            require_memory_plan(instr_disable, f"--emit {args.emit}")
        if (args.cpu is not None or args.cpu_features is not None) and not args.emit_bundle:
            raise UserError("--cpu and --cpu-features choose a bundle's target: give "
                            "--emit-bundle DIR too")
        bundle_dir = None
        if args.emit_bundle:
            from glow_mlir.runtime import bundle

            if args.backend == "accel" or args.accel_report or args.emit == "accel":
                raise UserError("--emit-bundle writes the cpu backend's code; the accel "
                                "backend has no bundles (use --emit llvm --backend accel)")
            if args.emit == "llvm":  # the bundle lowers the module in place, another way
                raise UserError("--emit llvm prints the LLVM-dialect route, which a bundle "
                                "does not take (it is compiled as the JIT compiles, from "
                                "the loop IR): --emit llvm-ir shows the bundle's code")
            require_memory_plan(instr_disable, "an AOT bundle (--emit-bundle)")
            args.backend = "cpu"  # a bundle is the cpu backend's code
            args.network_name = bundle.check_network_name(
                args.network_name or bundle.default_network_name(model_path(args.model)))
            from glow_mlir.targets.cpu.jit import check_target

            check_target(args.cpu, args.cpu_features)  # before LLVM can abort on them
            bundle_dir = cleanup.enter_context(staged_directory(args.emit_bundle))
        options = backend_options(args)
        if args.emit == "accel" or args.accel_report:
            if args.backend == "cpu":
                raise UserError("--emit accel and --accel-report are the accel backend's; "
                                "drop --backend cpu")
            args.backend = "accel"
        accel = args.backend == "accel"
        if args.emit in _CODE and not accel:
            args.backend = "cpu"  # LLVM code is the cpu backend's
        args.backend = args.backend or DEFAULT_BACKEND  # not named, not implied by a flag
        with progress.stage("import"):  # the importer's modules load in it too
            module = import_model(args.model, input_shapes(args))
        if args.emit == "training-graph" or args.train:
            from glow_mlir.transforms.graph.differentiate import (
                TrainingConfig,
                differentiate_function,
            )

            for fn in list(module.ops):
                given = {k: v for k, v in (("loss", args.loss),
                                           ("learning_rate", args.learning_rate),
                                           ("momentum", args.momentum)) if v is not None}
                differentiate_function(fn, TrainingConfig(**given))  # type: ignore[arg-type]
            if args.emit == "training-graph":
                _emit(module, args.output)
                return
        optimized = args.emit != "graph"
        if args.load_profile and args.emit == "graph":
            raise UserError("--emit graph prints the graph as imported, before quantization: "
                            "with --load-profile give --emit optimized-graph, instr, llvm or "
                            "llvm-ir, or --save")
        quantize = _quantizer(args, module)
        if optimized:
            optimize_graph(module, args.backend, graph_disable, args.print_ir_after_each,
                           *quantize)
        if args.dump_graph_dag:
            from glow_mlir.analysis.graph_dot import graph_to_dot

            _write(args.dump_graph_dag, graph_to_dot(module))
        if args.emit in ("graph", "optimized-graph"):
            _emit(module, args.output)  # written before a memory report can fail
        to_accel = accel and (args.emit in ("accel", *_CODE) or args.accel_report)
        to_instr = args.emit in ("instr", *_CODE) or args.memory_report or args.emit_bundle
        if (to_accel or to_instr) and not optimized:  # --emit graph printed it as imported
            optimize_graph(module, args.backend, graph_disable, False, *quantize)
        if to_accel:
            with progress.stage("codegen"):
                _accel(module, args, options, instr_disable)
            return
        if to_instr:
            from glow_mlir.backends import get_backend

            report = get_backend(args.backend).lower_to_instructions(
                module, instr_disable, args.print_ir_after_each)
            if args.emit == "instr":
                _emit(module, args.output)
            _write_memory_report(args, report)
            if args.emit_bundle:  # the entry point is renamed: --emit llvm-ir shows it so
                from glow_mlir.runtime.bundle import write_bundle

                assert bundle_dir is not None  # staged above for --emit-bundle

                with progress.stage("codegen"):
                    write_bundle(module, bundle_dir, args.network_name,
                                 cpu=args.cpu, features=args.cpu_features,
                                 num_threads=args.threads or 1)
        if args.emit in _CODE:
            from glow_mlir.targets.cpu.executor import loop_steps, lower_to_llvm, lower_to_loops

            if args.emit == "llvm" and (args.threads or 1) > 1:
                raise UserError("--emit llvm prints the LLVM-dialect route, which runs the "
                                "kernels' parallel loops serially; --emit llvm-ir shows the "
                                "threaded code")

            with progress.stage("codegen"):  # llvm-ir: translated from the loop IR
                if args.emit == "llvm":
                    lower_to_llvm(module)
                else:  # the JIT's weight forms, so its kernels are the ones printed
                    from glow_mlir.targets.cpu.weight_forms import rewrite_weight_forms

                    rewrite_weight_forms(module)
                    lower_to_loops(module, loop_steps(args.threads or 1))
                _emit_code(module, args)


def _check_quantization_flags(args: argparse.Namespace) -> None:
    if args.inputs and not args.dump_profile:
        raise UserError("--inputs are the batches --dump-profile runs: give --dump-profile "
                        "P.yaml too")
    if args.dump_profile and args.load_profile:
        raise UserError("--dump-profile records a float model's profile; --load-profile "
                        "quantizes with one: give them in separate commands")
    given = [f for f, on in (("--quantization-schema", args.quantization_schema != "asymmetric"),
                             ("--calibration", args.calibration != "minmax"),
                             ("--keep-float", args.keep_float),
                             ("--channelwise-conv", args.channelwise_conv),
                             ("--rowwise-fc", args.rowwise_fc)) if on]
    if given and not args.load_profile:
        raise UserError(f"{', '.join(given)} choose how --load-profile quantizes: give "
                        f"--load-profile P.yaml too")


def _config(args: argparse.Namespace):
    from glow_mlir.transforms.graph.quantize_graph import QuantizationConfig

    return QuantizationConfig(schema=args.quantization_schema, calibration=args.calibration,
                              channelwise_conv=args.channelwise_conv,
                              rowwise_fc=args.rowwise_fc,
                              # each --keep-float may be a comma-separated list
                              keep_float=tuple(k.strip() for flag in args.keep_float
                                               for k in flag.split(",") if k.strip()))


def _quantizer(args: argparse.Namespace, module) -> tuple:
    """What `optimize_graph` runs between lowering and the rest (`phase`), for
    --load-profile: the profile checked against the imported graph first."""
    if not args.load_profile:
        return ()
    from glow_mlir.analysis.quant_profile import Profile
    from glow_mlir.backends import get_backend
    from glow_mlir.runtime.quantized import QUANTIZED_BACKENDS, onnx_keep_float_aliases
    from glow_mlir.transforms.graph.quantize_graph import quantize_function

    if args.backend not in QUANTIZED_BACKENDS:
        raise UserError(f"quantized models run on {' or '.join(QUANTIZED_BACKENDS)}; "
                        f"backend '{args.backend}' has no int8 path yet")
    config = onnx_keep_float_aliases(args.model, _config(args))
    profile = Profile.load(args.load_profile)
    profile.check_graph(module, f"'{args.model}'")
    return (lambda m: quantize_function(m, profile, config, get_backend(args.backend)),)


def dump_profile(args: argparse.Namespace) -> None:
    """--dump-profile P.yaml --inputs X.npz ...: `glow_mlir.profile`, then `save`."""
    from glow_mlir.runtime.profiling import load_inputs, profile_model

    if args.emit or args.save or args.emit_bundle or args.accel_report or args.memory_report:
        raise UserError("--dump-profile writes the profile alone: drop the other outputs")
    if not args.inputs:
        raise UserError("--dump-profile needs batches to run: give --inputs X.npz (one "
                        "batch per file)")
    backend = args.backend or DEFAULT_BACKEND
    profile = profile_model(args.model, load_inputs(args.inputs), backend, input_shapes(args),
                            batch_names=[f"inputs '{p}'" for p in args.inputs])
    profile.save(args.dump_profile)
    print(f"glow-compile: wrote '{args.dump_profile}': {len(profile.edges)} edges over "
          f"{profile.batches} batch(es) on {backend}", file=sys.stderr)


SAVE_ALONE = ("emit", "emit_bundle", "accel_report", "dump_graph_dag", "print_ir_after_each",
              "network_name", "cpu", "cpu_features")


def save_model(args: argparse.Namespace) -> None:
    """--save FILE.glow: `glow_mlir.compile` (through the compile cache unless
    --no-cache) and `CompiledModel.save`; with --memory-report, the model's report too."""
    import glow_mlir
    from glow_mlir.backends import all_backends, get_backend

    given = [f"--{name.replace('_', '-')}" for name in SAVE_ALONE if getattr(args, name)]
    if given:
        raise UserError(f"--save writes the compiled model alone: give {', '.join(given)} "
                        f"in a glow-compile command of its own")
    backend = args.backend or DEFAULT_BACKEND
    if not get_backend(backend).saves_code:  # Backend.saves_code: native code to save
        native = " or ".join(f"the {b.name} backend's" for b in all_backends() if b.saves_code)
        raise UserError(f"--save writes native code, {native}; backend '{backend}' has none "
                        f"(drop --backend)")
    quantized = ({"profile": args.load_profile, "quantization": _config(args)}
                 if args.load_profile else {})
    model = glow_mlir.compile(args.model, backend=backend, input_shapes=input_shapes(args),
                              disable_passes=args.disable_pass, cache=not args.no_cache,
                              progress=False if args.quiet else None, **quantized,
                              **({} if args.threads is None else {"num_threads": args.threads}))
    model.save(args.save)
    _write_memory_report(args, model.memory)


@contextmanager
def staged_directory(out_dir: str) -> Iterator[Path]:
    """A hidden directory inside `out_dir` to write the bundle into; its files move into
    `out_dir` only when the block succeeds. A compile that fails (bad model, a pass the
    bundle needs disabled, a full disk) thus leaves no half-written bundle, and no empty
    `out_dir` or parents if it created them. `out_dir` is created at once, so an
    unwritable place is reported before the (long) compilation."""
    from glow_mlir.runtime.bundle import prepare_directory

    path = Path(out_dir)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    directory = prepare_directory(path)
    staging = Path(tempfile.mkdtemp(prefix=".glow-bundle-", dir=directory))
    try:
        yield staging
        for f in sorted(staging.iterdir()):
            os.replace(f, directory / f.name)
    except BaseException:
        if missing:
            shutil.rmtree(missing[-1], ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _accel(module: ModuleOp, args: argparse.Namespace, options: BackendFlags,
           disable: Sequence[str]) -> None:
    """--backend accel: the accelerator program (--emit accel), its native code (--emit
    llvm / llvm-ir), its memory report and its simulator report (--accel-report: the
    simulator counts while it prepares the program, which has no branches, so nothing
    needs to run)."""
    from glow_mlir.backends import get_backend

    report = get_backend("accel").lower(module, disable, args.print_ir_after_each, **options)
    if args.emit == "accel":
        _emit(module, args.output)  # written before a report can fail
    _write_memory_report(args, report)
    if args.accel_report:
        import json

        from glow_mlir.targets.accel.simulator import AccelSimulator

        figures = {"model": model_path(args.model), **AccelSimulator(module).report.as_dict()}
        _write(args.accel_report, json.dumps(figures, indent=2) + "\n")
    if args.emit in _CODE:
        from glow_mlir.targets.accel.native import lower_accel_to_llvm, lower_accel_to_loops

        (lower_accel_to_llvm if args.emit == "llvm" else lower_accel_to_loops)(module)
        _emit_code(module, args)


def _emit_code(module, args: argparse.Namespace) -> None:
    """--emit llvm (the LLVM-dialect module) or llvm-ir (the LLVM IR of the loop IR, after
    O3)."""
    if args.emit == "llvm":
        _emit(module, args.output)
        return
    from glow_mlir.ir import progress

    with progress.timed_pass(progress.LLVM):  # the translation to LLVM IR and O3
        from glow_mlir.targets.cpu.jit import llvm_ir_text  # llvmlite loads in it

        text = llvm_ir_text(module)
    _output(text, args.output)


def _emit(module, output: str | None) -> None:
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir import progress
    from glow_mlir.ir.text import print_module

    text = io.StringIO()
    with progress.stage("output"):
        print_module(module, text, make_context())
    _output(text.getvalue(), output)


def _output(text: str, path: str | None) -> None:
    """`text` into file `path`, or on stdout."""
    if path:
        _write(path, text)
    else:
        sys.stdout.write(text)


def _write_memory_report(args: argparse.Namespace, report) -> None:
    """--memory-report FILE.json: `report` (a `MemoryReport`) as JSON, when asked."""
    if args.memory_report:
        _write(args.memory_report, report.to_json(model=model_path(args.model)) + "\n")


if __name__ == "__main__":
    main()
