"""AOT bundles (Glow's `model-compiler -emit-bundle`, docs/AOT.md): a model compiled
ahead of time into files a C or C++ program links and includes, without Python.

    info = write_bundle(glow_mlir.compile("model.onnx", backend="cpu"), "out/", "NET")
    info = write_bundle("model.onnx", "out/", "NET")   # the same, compiled here

writes into `out/`:

- `NET.o`: the compiled code for the host CPU (position independent), one entry point

      int NET(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);

  returning 0 on success (Glow's static bundle API);
- `NET.h`: the entry point's prototype and the layout of the three areas: the byte offset
  of each input and output placeholder in the mutable area (`#define NET_<name> <offset>`,
  with the macro prefix the network name in upper case, as Glow writes it),
  `NET_CONSTANT_MEM_SIZE`, `NET_MUTABLE_MEM_SIZE`, `NET_ACTIVATIONS_MEM_SIZE` and
  `NET_MEM_ALIGN`;
- `NET.weights.bin`: the constant area, exactly `NET_CONSTANT_MEM_SIZE` bytes;
- `NET.weights.txt`: the same bytes as the body of a C initializer list, as Glow writes it
  (` 0X1F, 0X00, ...`, 20 per line, no braces), to be included inside braces:

      GLOW_MEM_ALIGN(NET_MEM_ALIGN) uint8_t constantWeight[NET_CONSTANT_MEM_SIZE] = {
      #include "NET.weights.txt"
      };

The three areas are all the memory a call needs: the kernels' scratch (im2col columns,
accumulation tiles) is in the activation area, past the planned activations, so the code
needs little stack and runs on small thread stacks. Each area must be aligned to
`NET_MEM_ALIGN` bytes. The mutable and activation areas
belong to one call at a time; the constant area may be shared by concurrent calls.

It lives in `runtime`, not `targets/cpu`, because it takes what `glow_mlir.compile`
returns and compiles a model itself (docs/architecture.md §2); the code it writes is the
cpu target's (`targets/cpu/jit.py`, `executor.py`, `areas.py`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from onnx import ModelProto
from xdsl.dialects.builtin import ModuleOp, StringAttr

from glow_mlir.ir import progress
from glow_mlir.ir.errors import UserError

C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto
    if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex
    _Generic _Imaginary _Noreturn _Static_assert _Thread_local alignas alignof bool
    constexpr false nullptr static_assert thread_local true typeof typeof_unqual
    asm class delete explicit friend mutable namespace new operator private protected
    public template this throw try typename using virtual
""".split())
RESERVED_NAMES = frozenset({"main"})  # the C program's own entry point
BYTES_PER_LINE = 20  # Glow's serializeBinaryToText


class BundleError(UserError):
    """The bundle cannot be written (bad network name, unwritable directory)."""


@dataclass(frozen=True)
class PlaceholderInfo:
    """An input or output placeholder of the bundle's mutable area."""

    name: str  # as in the model
    macro: str  # the header's `#define` giving its byte offset
    role: str  # "input" or "output"
    offset: int
    size: int
    shape: tuple[int, ...]
    element_type: str  # MLIR spelling: f32, i64, ...


@dataclass
class BundleInfo:
    """What `write_bundle` wrote."""

    network_name: str
    directory: Path
    object_file: Path
    header: Path
    weights_bin: Path
    weights_txt: Path
    constant_size: int
    mutable_size: int
    activations_size: int
    alignment: int
    num_threads: int = 1
    inputs: list[PlaceholderInfo] = field(default_factory=list)
    outputs: list[PlaceholderInfo] = field(default_factory=list)

    @property
    def files(self) -> list[Path]:
        return [self.object_file, self.header, self.weights_bin, self.weights_txt]


def check_network_name(name: str) -> str:
    """`name` if it can name the entry point (a C identifier that is not a keyword)."""
    if not isinstance(name, str) or not C_IDENTIFIER.fullmatch(name):
        raise BundleError(
            f"network name '{name}' is not a C identifier: it names the entry point "
            f"and the bundle's macros, so use letters, digits and '_', not starting with "
            f"a digit (e.g. '{sanitize_identifier(str(name))}')")
    if name in C_KEYWORDS or name in RESERVED_NAMES:
        raise BundleError(f"network name '{name}' is reserved in C (a keyword or 'main'); "
                          f"choose another, e.g. '{name}_net'")
    return name


def sanitize_identifier(name: str) -> str:
    """`name` made a C identifier: every other character becomes '_', and a leading
    digit (or an empty name) gets a '_' in front."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not out or out[0].isdigit():
        out = "_" + out
    return out


def default_network_name(model_path: str | os.PathLike) -> str:
    """The network name `glow-compile` uses without `--network-name`: the model file's
    stem as a C identifier."""
    name = sanitize_identifier(Path(model_path).stem)
    return name + "_net" if name in C_KEYWORDS or name in RESERVED_NAMES else name


def prepare_directory(out_dir: str | os.PathLike) -> Path:
    path = Path(out_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise BundleError(f"cannot create the bundle directory '{out_dir}': "
                          f"{err.strerror or err}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BundleError(f"cannot write the bundle into '{out_dir}': permission denied")
    return path


def _planned_module(model, input_shapes) -> ModuleOp:
    """A module holding one planned `glow_ir.func`, from an ONNX model (path, bytes or
    ModelProto), a `glow` graph module or a planned `glow_ir` module (the modules are
    lowered in place)."""
    from glow_mlir.dialects import glow_ir
    from glow_mlir.runtime.compiled_model import optimize_graph
    from glow_mlir.targets.instructions import lower_to_instructions

    if isinstance(model, ModuleOp):
        module = model
    elif isinstance(model, (ModelProto, str, os.PathLike, bytes)):
        from glow_mlir.frontends.onnx import import_onnx

        module = import_onnx(model, dict(input_shapes) if input_shapes else None)
    else:
        raise BundleError(f"write_bundle takes what glow_mlir.compile(..., backend=\"cpu\") "
                          f"returns, an ONNX model or a module, not {type(model).__name__}")
    if not any(isinstance(op, glow_ir.FuncOp) for op in module.walk()):
        optimize_graph(module, "cpu")
        lower_to_instructions(module)
    return module


def _placeholders(areas, role: str, prefix: str, taken: set[str]) -> list[PlaceholderInfo]:
    pairs = areas.inputs if role == "input" else areas.outputs
    out = []
    for w, place in pairs:
        name = w.sym_name.data
        macro = f"{prefix}_{sanitize_identifier(name)}"
        base, n = macro, 1
        while macro in taken:
            macro, n = f"{base}_{n}", n + 1
        taken.add(macro)
        out.append(PlaceholderInfo(name, macro, role, place.offset, place.size,
                                   tuple(w.type.get_shape()),
                                   str(w.type.get_element_type())))
    return out


_C_TYPES = {"f32": "float", "f64": "double", "f16": "_Float16 / uint16_t", "bf16": "uint16_t",
            "i1": "bool (1 byte)", "i8": "int8_t", "ui8": "uint8_t", "si8": "int8_t",
            "i16": "int16_t", "si16": "int16_t", "ui16": "uint16_t", "i32": "int32_t",
            "si32": "int32_t", "ui32": "uint32_t", "i64": "int64_t", "si64": "int64_t",
            "ui64": "uint64_t"}


def _comment_text(text: str) -> str:
    """`text` safe inside a `//` comment (no line breaks, no trailing backslash)."""
    return re.sub(r"[\r\n\\]", "?", text)


def header_text(info: BundleInfo) -> str:
    net = info.network_name
    prefix = net.upper()
    guard = f"_GLOW_BUNDLE_{prefix}_H"
    lines = [
        f"// Bundle of network '{net}' generated by glow-mlir (glow-compile --emit-bundle).",
        f"// Link {net}.o; the constant area's bytes are in {net}.weights.bin (or, as a C",
        f"// initializer list body, {net}.weights.txt). Every area must be aligned to",
        f"// {prefix}_MEM_ALIGN bytes.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        "// Placeholder address offsets within the mutable area (bytes). Macro names are the",
        "// placeholder names made C identifiers (other characters become '_').",
    ]
    width = max([len(p.macro) for p in info.inputs + info.outputs] + [0]) + 2
    for p in info.inputs + info.outputs:
        shape = "x".join(map(str, p.shape)) or "scalar"
        ctype = _C_TYPES.get(p.element_type, p.element_type)
        lines.append(f"// {p.role} '{_comment_text(p.name)}': {shape} {p.element_type} "
                     f"({ctype}), {p.size} bytes")
        lines.append(f"#define {p.macro:<{width}}{p.offset}")
    lines += [
        "",
        "// Memory sizes (bytes).",
        f"#define {prefix}_CONSTANT_MEM_SIZE     {info.constant_size}",
        f"#define {prefix}_MUTABLE_MEM_SIZE      {info.mutable_size}",
        f"#define {prefix}_ACTIVATIONS_MEM_SIZE  {info.activations_size}",
        "",
        "// Memory alignment (bytes).",
        f"#define {prefix}_MEM_ALIGN  {info.alignment}",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "// Runs the network once: inputs are read from and outputs written to mutableWeight",
        "// at the offsets above; activations is scratch memory (the kernels' own scratch",
        "// included: the code needs little stack). Returns 0 on success.",
        f"int {net}(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);",
        "",
        *_threads_lines(info),
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "",
        f"#endif // {guard}",
        "",
    ]
    return "\n".join(lines)


def _threads_lines(info: BundleInfo) -> list[str]:
    """The header's part about threads: nothing for a one-thread bundle (Glow's API as it
    is); else the thread count and the pool hook."""
    if info.num_threads <= 1:
        return []
    from glow_mlir.targets.cpu.thread_pool import LINGER_NS

    linger_ms = LINGER_NS / 1e6
    prefix = info.network_name.upper()
    return [
        f"// Compiled for {info.num_threads} threads: the large kernels split their outer",
        "// loops into that many parts, run by glow_parallel_for. "
        f"{info.network_name}.o holds a default",
        "// (weak symbol: a pthread pool started on first use; link with -pthread); a",
        "// program may define its own, e.g. on its own pool. The default pool's workers",
        "// spin through a call (from glow_pool_begin to glow_pool_end, which the entry",
        "// point calls; weak, they do nothing to a program's own pool) and for",
        f"// glow_pool_linger_ns after it (default {linger_ms:g} ms: the next call often "
        "comes soon),",
        "// then sleep. A program sets that time by defining its own",
        "// `int64_t glow_pool_linger_ns = ...;` (0: never spin beyond a short wait).",
        "// It must run chunk(ctx, lo_w, hi_w, w) for parts w = 0 .. parts-1 of [lo, hi)",
        "// (parts <= threads; any split into contiguous parts, any order, any threads) and",
        "// return when all are done; running all of [lo, hi) as worker 0 is always right.",
        f"#define {prefix}_NUM_THREADS  {info.num_threads}",
        "void glow_parallel_for(void (*chunk)(void *ctx, int64_t lo, int64_t hi,",
        "                                     int64_t worker),",
        "                       void *ctx, int64_t lo, int64_t hi, int64_t threads);",
        "void glow_pool_begin(int64_t threads);",
        "void glow_pool_end(int64_t threads);",
        "extern int64_t glow_pool_linger_ns;",
        "",
    ]


_HEX_BYTES = [f" 0X{b:02X}," for b in range(256)]


def weights_text(data: bytes) -> str:
    """Glow's text form of the weights: ` 0XHH,` per byte, 20 bytes per line, a final
    newline; the body of a C initializer list."""
    hex_ = _HEX_BYTES
    lines = []
    for i in range(0, len(data), BYTES_PER_LINE):
        lines.append("".join([hex_[b] for b in data[i:i + BYTES_PER_LINE]]) + "\n")
    return "".join(lines) + "\n"


def _write(path: Path, data: bytes | str) -> None:
    try:
        if isinstance(data, str):
            path.write_text(data)
        else:
            path.write_bytes(data)
    except OSError as err:
        raise BundleError(f"cannot write '{path}': {err.strerror or err}") from None


def write_bundle(model, out_dir: str | os.PathLike, network_name: str,
                 input_shapes=None, cpu: str | None = None,
                 features: str | None = None, num_threads: int | None = None) -> BundleInfo:
    """Write the bundle of network `network_name` into `out_dir` (created if missing):
    `model` is what `glow_mlir.compile(..., backend="cpu")` returned, an ONNX model (path,
    bytes or ModelProto; `input_shapes` binds its symbolic dimensions) or a `glow` /
    planned `glow_ir` module (lowered in place). The code is for this host's CPU, or for
    LLVM CPU name `cpu` (e.g. "x86-64-v3", for other machines) with `features`
    ("+avx2,-fma"); unknown names are a CpuTargetError before anything is compiled.
    `num_threads`: the threads an ONNX model or module is compiled for (default 1); a
    compiled model keeps the count it was compiled for (`model.num_threads`), and another
    count given with it is a BundleError; above 1 the object holds the default pool
    (`NET.h` says how to replace it). See the module docstring for the files."""
    from glow_mlir.backends.cpu import check_num_threads
    from glow_mlir.targets.cpu import jit

    check_network_name(network_name)
    num_threads = check_num_threads(num_threads)
    jit.check_target(cpu, features)
    directory = prepare_directory(out_dir)  # before the (long) compilation
    # the int8 kernels' steps and the float gemm's vectors as the target has them
    with jit.kernel_switches(cpu, features):
        module, entry, areas, num_threads = _lowered(model, input_shapes, network_name,
                                                     num_threads)
    if areas.state_slots:  # a bundle's mutable area starts zeroed: no initial state
        raise BundleError(f"the model has state ({', '.join(areas.state_slots)}: mutable "
                          f"weights a run updates), which a bundle does not carry")
    layout = areas.layout
    prefix = network_name.upper()
    info = BundleInfo(
        network_name=network_name, directory=directory,
        object_file=directory / f"{network_name}.o",
        header=directory / f"{network_name}.h",
        weights_bin=directory / f"{network_name}.weights.bin",
        weights_txt=directory / f"{network_name}.weights.txt",
        constant_size=layout.constant_size, mutable_size=layout.mutable_size,
        activations_size=layout.activations_size, alignment=layout.alignment,
        num_threads=num_threads)
    taken = {f"{prefix}_{s}" for s in ("CONSTANT_MEM_SIZE", "MUTABLE_MEM_SIZE",
                                       "ACTIVATIONS_MEM_SIZE", "MEM_ALIGN")}
    info.inputs = _placeholders(areas, "input", prefix, taken)
    info.outputs = _placeholders(areas, "output", prefix, taken)
    constant = areas.constant[:layout.constant_size].tobytes()

    with progress.timed_pass(progress.LLVM):  # translation to LLVM IR, O3, object code
        tm = jit.target_machine(cpu, features, reloc="pic", codemodel="default")
        text = jit.unoptimized_ir(module)
        foreign = (jit.foreign_intrinsics(text, cpu, features)
                   if cpu is not None or features is not None else [])
        if foreign:  # LLVM would abort on them
            raise BundleError(
                f"this compiled model's int8 kernels use {', '.join(foreign)} (AVX-512 "
                f"VNNI or BW), which CPU '{cpu or 'host'}' with features "
                f"'{features or ''}' lacks: give write_bundle the ONNX model (compiled "
                f"then for that CPU)")
        code = jit.optimize(text, tm)
        code.get_function(entry).name = network_name  # a compiled model's keeps its own
        if any(f"@{name}" in text
               for name in ("glow_parallel_for", "glow_clock_ns", "glow_cpu_clock_ns",
                            "glow_pool_begin")):
            from glow_mlir.targets.cpu.thread_pool import runtime_ir

            code.link_in(jit.optimize(runtime_ir(tm.triple), tm))  # weak: one per program
        obj = tm.emit_object(code)
    _write(info.object_file, obj)
    _write(info.header, header_text(info))
    _write(info.weights_bin, constant)
    _write(info.weights_txt, weights_text(constant))
    return info


def _lowered(model, input_shapes, network_name: str, num_threads: int | None = None):
    """(loop-IR module, its entry point's name, its Areas) of what `write_bundle`
    was given. A compiled model's module is the one its JIT compiled, left unchanged; a
    model or module is compiled here with the entry point named `network_name` (so
    `glow-compile --emit llvm-ir` after the bundle shows that name)."""
    from glow_mlir.dialects import glow_ir
    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.targets.cpu.areas import Areas
    from glow_mlir.targets.cpu.executor import (
        CpuExecutor,
        loop_steps,
        lower_to_loops,
    )
    from glow_mlir.targets.cpu.weight_forms import rewrite_weight_forms

    if isinstance(model, CompiledModel) and model.module is None and model.backend == "cpu":
        if model.source is None:  # loaded from a file: JIT code only, no module
            raise BundleError(
                f"this model was loaded from {model.origin} and holds JIT-compiled code, "
                f"not the program a bundle is compiled from: give write_bundle the ONNX "
                f"model")
        # From the model cache: its JIT code is not a bundle's (position independent,
        # one object); compile the model it was made from again.
        from glow_mlir.runtime.compiled_model import compile_model

        model = compile_model(**model.source, backend="cpu", cache=False)
    if isinstance(model, CompiledModel):
        executor = model.executor
        if not isinstance(executor, CpuExecutor):
            raise BundleError(
                f"a bundle holds the cpu backend's code, and this model was compiled for "
                f"backend '{model.backend}': compile it with backend=\"cpu\" (or give "
                f"write_bundle the ONNX model itself)")
        if input_shapes:
            raise BundleError("input_shapes cannot change a compiled model: give them to "
                              "glow_mlir.compile, or give write_bundle the ONNX model")
        compiled_for = executor.num_threads or 1
        if num_threads is not None and num_threads != compiled_for:
            # silently keeping the model's count wrote a 2-thread bundle for num_threads=3
            raise BundleError(
                f"this model was compiled for {compiled_for} thread"
                f"{'s' if compiled_for > 1 else ''} and its code is what the bundle holds: "
                f"drop num_threads={num_threads}, compile with "
                f"glow_mlir.compile(..., num_threads={num_threads}), or give write_bundle "
                f"the ONNX model")
        return executor.module, executor.name, executor.areas, compiled_for
    module = _planned_module(model, input_shapes)
    funcs = [op for op in module.walk() if isinstance(op, glow_ir.FuncOp)]
    if len(funcs) != 1:
        raise BundleError(f"a bundle holds one network; the module has {len(funcs)} "
                          f"glow_ir functions")
    funcs[0].sym_name = StringAttr(network_name)
    # The JIT's route at every thread count: its weight forms (Winograd's U, gemm panels,
    # ...; without them a convolution took another kernel than the JIT's and gave other
    # bits), then the loop IR (the parallel loops outlined by its translator): the
    # LLVM-dialect route (`lower_to_llvm`) has no vector kernels, so a one-thread bundle
    # taken through it ran other kernels (summing in another order) than the JIT and the
    # threaded bundles
    rewrite_weight_forms(module)
    areas = Areas(funcs[0])
    num_threads = num_threads or 1
    lower_to_loops(module, loop_steps(num_threads))
    areas.fit_lowered(module, network_name)
    return module, network_name, areas, num_threads
