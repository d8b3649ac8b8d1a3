"""glow-compile: compile an ONNX model and emit one of its stages.

    glow-compile model.onnx --emit graph -o model.mlir [--input-shape input=1x3x224x224]

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
pipeline.
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

from glow_mlir.backends import DEFAULT_BACKEND, backend_names
from glow_mlir.backends.registry import unknown_backend
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.gc_pause import paused_gc
from glow_mlir.tools.errors import ArgumentParser, at_least, thread_count, user_errors_exit

EMITS = ("graph", "optimized-graph", "training-graph", "instr", "accel", "llvm", "llvm-ir")
_CODE = ("llvm", "llvm-ir")  # the CPU code generator's stages


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`name=1x3x224x224` (an input's shape) or `batch=1` (a symbolic dimension)."""
    m = re.fullmatch(r"([^=]+)=(\d+(?:x\d+)*|scalar)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(
            f"expected NAME=DIMS such as input=1x3x224x224 or batch=1, got '{text}'")
    dims = () if m.group(2) == "scalar" else tuple(int(d) for d in m.group(2).split("x"))
    return m.group(1), dims


def backend_name(text: str) -> str:
    """`--backend`: a registered name, else the registry's message (with its did-you-mean,
    which argparse's `choices` would not give)."""
    if text in backend_names():
        return text
    raise argparse.ArgumentTypeError(str(unknown_backend(text)))


def add_model_arguments(p: argparse.ArgumentParser, model_help: str = "ONNX model file") -> None:
    """The model arguments glow-compile and glow-run share."""
    p.add_argument("model", help=model_help)
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
                   help="threads the cpu backend's kernels split their outer loops over "
                        "(default: the cores this process may use; 1 with --emit llvm-ir "
                        "and --emit-bundle)")
    p.add_argument("--time-passes", action="store_true",
                   help="print the wall time of each stage and pass on stderr, then the "
                        "compile cache's hits and misses")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the compile cache ($GLOW_MLIR_CACHE_DIR, "
                        "default ~/.cache/glow-mlir)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (it is drawn only when stderr is a terminal)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")


def backend_options(args: argparse.Namespace) -> dict[str, object]:
    """The backend's own options given on the command line."""
    options: dict[str, object] = {}
    if getattr(args, "threads", None) is not None:
        if args.backend not in (None, "cpu"):
            raise UserError(f"--threads is an option of the cpu backend; backend "
                            f"'{args.backend}' runs on one thread (drop --threads)")
        options["num_threads"] = args.threads
    if getattr(args, "trace", None):
        if args.backend not in (None, "cpu"):
            raise UserError(f"--trace times the cpu backend's kernels; backend "
                            f"'{args.backend}' has none (drop --trace)")
        options["trace"] = True
    if args.scratchpad_kib is None:
        return options
    if args.backend != "accel":
        raise UserError("--scratchpad-kib is an option of the accel backend: give "
                        "--backend accel")
    return {**options, "scratchpad_kib": args.scratchpad_kib}


def input_shapes(args: argparse.Namespace) -> dict[str, tuple[int, ...]] | None:
    return dict(args.input_shape) or None


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="glow-compile", description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_arguments(p)
    p.add_argument("--emit", default=None, choices=EMITS,
                   help="the stage to print (default: graph, unless --emit-bundle is given)")
    p.add_argument("--loss", default="cross_entropy",
                   help="with --emit training-graph: cross_entropy (default) or mse")
    p.add_argument("--learning-rate", type=float, default=0.01, metavar="R",
                   help="with --emit training-graph: the SGD step (default 0.01)")
    p.add_argument("--momentum", type=float, default=0.0, metavar="M",
                   help="with --emit training-graph: SGD momentum (default 0)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
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
    p.add_argument("--cpu", metavar="NAME",
                   help="with --emit-bundle: the LLVM CPU name to compile for (x86-64, "
                        "x86-64-v3, znver4, ...; default: this host's)")
    p.add_argument("--cpu-features", metavar="+F,-G",
                   help="with --emit-bundle: LLVM CPU features to enable (+avx2) or "
                        "disable (-fma), comma-separated")
    return p


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as err:
        raise UserError(f"cannot write '{path}': {err.strerror}") from None


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    from glow_mlir.ir import progress

    with user_errors_exit("glow-compile", args.debug):
        # the cyclic collector paused, as in compile() (ir/gc_pause.py)
        with progress.recording(show=False if args.quiet else None) as recorder, paused_gc():
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

        if is_mlir_path(args.model):
            raise UserError(f"'{args.model}' is a model in IR: glow-compile takes an ONNX "
                            f"model (glow-opt transforms IR, glow-run runs it)")
        if args.save:
            return save_model(args)
        if args.emit is None:  # only the bundle (or only the report) unless asked
            quiet = args.emit_bundle or args.accel_report
            args.emit = None if quiet else "graph"
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
            require_memory_plan(instr_disable, "an AOT bundle (--emit-bundle)")
            args.backend = "cpu"  # a bundle is the cpu backend's code
            args.network_name = bundle.check_network_name(
                args.network_name or bundle.default_network_name(args.model))
            from glow_mlir.targets.cpu.jit import check_target

            check_target(args.cpu, args.cpu_features)  # before LLVM can abort on them
            bundle_dir = cleanup.enter_context(staged_directory(args.emit_bundle))
        from glow_mlir.frontends.onnx import import_onnx

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
        with progress.stage("import"):
            module = import_onnx(args.model, input_shapes(args))
        if args.emit == "training-graph":
            from glow_mlir.transforms.graph.differentiate import (
                TrainingConfig,
                differentiate_function,
            )

            for fn in list(module.ops):
                differentiate_function(fn, TrainingConfig(  # type: ignore[arg-type]
                    args.loss, args.learning_rate, args.momentum))
            _emit(module, args.output)
            return
        optimized = args.emit != "graph"
        if optimized:
            optimize_graph(module, args.backend, graph_disable, args.print_ir_after_each)
        if args.dump_graph_dag:
            from glow_mlir.analysis.graph_dot import graph_to_dot

            _write(args.dump_graph_dag, graph_to_dot(module))
        if args.emit in ("graph", "optimized-graph"):
            _emit(module, args.output)  # written before a memory report can fail
        if accel and (args.emit in ("accel", *_CODE) or args.accel_report):
            if not optimized:
                optimize_graph(module, args.backend, graph_disable)
            with progress.stage("codegen"):
                _accel(module, args, options, instr_disable)
            return
        if args.emit in ("instr", *_CODE) or args.memory_report or args.emit_bundle:
            from glow_mlir.backends import get_backend

            if not optimized:
                optimize_graph(module, args.backend, graph_disable)
            report = get_backend(args.backend).lower_to_instructions(
                module, instr_disable, args.print_ir_after_each)
            if args.emit == "instr":
                _emit(module, args.output)
            if args.memory_report:
                _write(args.memory_report, report.to_json(model=args.model) + "\n")
            if args.emit_bundle:  # the entry point is renamed: --emit llvm shows it so
                from glow_mlir.runtime.bundle import write_bundle

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
                else:
                    lower_to_loops(module, loop_steps(args.threads or 1))
                _emit_code(module, args)


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
    model = glow_mlir.compile(args.model, backend=backend, input_shapes=input_shapes(args),
                              disable_passes=args.disable_pass, cache=not args.no_cache,
                              progress=False if args.quiet else None,
                              **({} if args.threads is None else {"num_threads": args.threads}))
    model.save(args.save)
    if args.memory_report:
        _write(args.memory_report, model.memory.to_json(model=args.model) + "\n")


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


def _accel(module, args: argparse.Namespace, options: dict, disable) -> None:
    """--backend accel: the accelerator program (--emit accel), its native code (--emit
    llvm / llvm-ir), its memory report and its simulator report (--accel-report: the
    simulator counts while it prepares the program, which has no branches, so nothing
    needs to run)."""
    from glow_mlir.backends import get_backend

    report = get_backend("accel").lower(module, disable, args.print_ir_after_each, **options)
    if args.emit == "accel":
        _emit(module, args.output)  # written before a report can fail
    if args.memory_report:
        _write(args.memory_report, report.to_json(model=args.model) + "\n")
    if args.accel_report:
        import json

        from glow_mlir.targets.accel.simulator import AccelSimulator

        figures = {"model": args.model, **AccelSimulator(module).report.as_dict()}
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
    from glow_mlir.targets.cpu.jit import llvm_ir_text

    text = llvm_ir_text(module)
    _write(args.output, text) if args.output else sys.stdout.write(text)


def _emit(module, output: str | None) -> None:
    from glow_mlir.dialects.context import make_context
    from glow_mlir.ir.text import print_module

    text = io.StringIO()
    print_module(module, text, make_context())
    if output:
        _write(output, text.getvalue())
    else:
        sys.stdout.write(text.getvalue())


if __name__ == "__main__":
    main()
