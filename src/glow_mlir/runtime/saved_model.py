"""Saving a compiled model and loading it back without compiling (README, "Saving, loading
and the compile cache"):

    model.save("m.glow")            # CompiledModel.save
    model = glow_mlir.load("m.glow")
    model.run({"input": x})         # the same checks on inputs, bit-identical outputs

A saved model is one file (`section_file`: magic b"GLOWMLIR", format `FORMAT`, a sha256
of everything after the header) whose JSON manifest holds

    glow_mlir, llvmlite, llvm     the versions that wrote it
    backend, network              "cpu"; the entry point's name (the network)
    target                        triple, cpu, features, reloc, codemodel, loop_unrolling:
                                  what the objects were compiled for (`CompileSpec`)
    inputs, outputs               name, shape, dtype, offset and size in the mutable area
    areas                         constant_size, mutable_size, activations_size, alignment
    memory                        the `MemoryReport`
    num_threads                   the threads the code was compiled for (optional)
    objects                       the object sections in link order (entry point first)

and whose sections are the object files (`entry.o`, `kernel.N.o`: the JIT's code,
linked again by an MCJIT engine when loaded) and `constant`, the constant area (the
weights, packed as the code addresses them). Loading imports numpy and llvmlite, not
xDSL or onnx, and compiles nothing. It refuses, each with its own `UserError`: a file
that is not a saved model, a truncated or corrupted one, another format, a manifest that
fails its checks (`saved_manifest`: every field, before any is used), an object file
whose ELF tables do not hold together (`object_check`), another glow-mlir or LLVM
version (`IncompatibleModelError`), and code for a CPU whose features this host lacks
or another architecture.

Only native code is saved: the models of a backend whose `saves_code` says so, the `cpu`
backend's (a loaded model saves again); the interpreter and the accelerator's simulator
have no code to save (`SaveError`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from glow_mlir.backends import all_backends, backend_names, get_backend
from glow_mlir.ir.errors import UserError
from glow_mlir.ir.file_kinds import SAVED_MODEL_MAGIC, not_saved
from glow_mlir.runtime import section_file
from glow_mlir.runtime.saved_manifest import SavedManifest, Target
from glow_mlir.runtime.section_file import (
    DamagedError,
    OtherFormatError,
    WrongKindError,
)

if TYPE_CHECKING:
    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.targets.cpu.area_plan import AreaPlan
    from glow_mlir.targets.cpu.llvm_compile import CompileSpec

MAGIC = SAVED_MODEL_MAGIC  # in `ir`: the ONNX loader recognizes a saved model by it
FORMAT = 2  # 2: the digest covers the header; the section table is checked
KIND = "a glow-mlir saved model"

__all__ = [
    "save",
    "load",
    "to_bytes",
    "to_pieces",
    "from_bytes",
    "SaveError",
    "IncompatibleModelError",
    "WrongKindError",
    "OtherFormatError",
    "DamagedError",
]


class SaveError(UserError):
    """The model cannot be saved (its backend has no native code to save)."""


class IncompatibleModelError(UserError):
    """A saved model written by another glow-mlir or LLVM, or for a CPU this host is not."""


def saves_code(backend: str) -> bool:
    """Whether `backend` names a backend whose compiled models are native code to save
    (`Backend.saves_code`); an unknown name does not."""
    return backend in backend_names() and get_backend(backend).saves_code


def is_saved_model(path: object) -> bool:
    """Whether `path` names a saved model: a `.glow` file, or a file that starts as one
    (a `.glow` that does not is reported by `load`)."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    if os.fspath(path).endswith(".glow"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def to_pieces(model: CompiledModel) -> list[memoryview]:
    """The saved file's bytes (what `save` writes)."""
    from glow_mlir.targets import compile_cache
    from glow_mlir.targets.cpu.native_program import NativeProgram

    program = model.executor
    if not saves_code(model.backend) or not isinstance(program, NativeProgram):
        native = " or ".join(f"backend='{b.name}'" for b in all_backends() if b.saves_code)
        raise SaveError(f"only native code can be saved, and a model compiled for backend "
                        f"'{model.backend}' has none: compile it with {native}")
    areas, entry = program.areas, program.entry
    if areas.state_slots:
        raise SaveError(f"the model has state ({', '.join(areas.state_slots)}: mutable "
                        f"weights a run updates), which a saved model does not carry; a "
                        f"trained model is saved by Trainer.export()")
    spec = entry.spec
    import llvmlite.binding as llvm

    objects = {("entry.o" if i == 0 else f"kernel.{i - 1}.o"): obj
               for i, obj in enumerate(entry.object_code)}

    def slots(names, found):
        return [{"name": n, **s.as_dict()} for n, s in zip(names, found)]

    manifest = {
        **compile_cache.versions(),
        "backend": model.backend,
        "network": program.name,
        "target": {"triple": llvm.get_default_triple(), "cpu": spec.cpu,
                   "features": spec.features, "reloc": spec.reloc,
                   "codemodel": spec.codemodel, "loop_unrolling": spec.loop_unrolling},
        "inputs": slots(model.input_names, areas.input_slots),
        "outputs": slots(model.all_output_names, areas.output_slots),
        "areas": areas.sizes(),
        "memory": None if program.memory is None else program.memory.as_dict(),
        "objects": list(objects),
    }
    if getattr(program, "num_threads", None) is not None:
        manifest["num_threads"] = program.num_threads
    if model.value_checks:
        from glow_mlir.ir.input_checks import to_dict

        manifest["input_checks"] = [{"input": n, **to_dict(c)} for n, c in model.value_checks]
    # the array's buffer as such: numpy's stubs make an array a Buffer from Python 3.12 only
    constant = areas.constant[:areas.constant_size].data
    return section_file.pieces(MAGIC, FORMAT, manifest, {**objects, "constant": constant})


def to_bytes(model: CompiledModel) -> bytearray:
    """The saved model's file, in one buffer (`to_pieces` joined)."""
    return bytearray(b"".join(to_pieces(model)))


def save(model: CompiledModel, path: str | os.PathLike) -> None:
    """Write `model` to `path` (atomically: a failed save leaves no file)."""
    section_file.write_atomically(path, to_pieces(model))


def load(source: str | os.PathLike | bytes | bytearray | memoryview) -> CompiledModel:
    """The model saved in file `source` (a path), or whose saved file's bytes `source`
    is (fetched over a network, read from a database): those are copied, so the model
    owns its weights and the caller may reuse the buffer. Another type is a TypeError."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        from glow_mlir.ir.aligned_read import aligned_copy

        data = aligned_copy(source)
        hint = not_saved(data, f"the {type(source).__name__} given ({len(data)} bytes) are")
        if hint is not None:
            raise section_file.WrongKindError(hint)
        model = from_bytes(data, f"the saved model given as {type(source).__name__} "
                                 f"({len(data)} bytes)")
        model.origin = "memory"
        return model
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"glow_mlir.load takes a saved model's path (str or os.PathLike) "
                        f"or its bytes (bytes, bytearray, memoryview), not "
                        f"{type(source).__name__}")
    data = section_file.read_file(source)
    what = f"'{os.fspath(source)}'"
    hint = not_saved(data, f"{what} is", os.fspath(source))
    if hint is not None:  # before unpack's "does not start with b'GLOWMLIR'"
        raise section_file.WrongKindError(hint)
    model = from_bytes(data, what)
    model.origin = os.fspath(source)
    return model


def from_bytes(data: bytes | memoryview, what: str = "the saved model",
               check_digest: bool = True) -> CompiledModel:
    """The model whose saved file is `data` (`what` names it in messages). Every field of
    the manifest is checked (`saved_manifest`) and every object file (`object_check`)
    before any is used."""
    from glow_mlir.runtime.compiled_model import CompiledModel
    from glow_mlir.targets.cpu.native_program import NativeProgram

    raw, sections = section_file.unpack(data, MAGIC, FORMAT, what, KIND, check_digest)
    manifest = SavedManifest.parse(raw, sections, what)
    _check_versions(manifest, what)
    spec = _check_target(manifest.target, what)
    if not saves_code(manifest.backend):
        raise IncompatibleModelError(f"{what} holds code of backend '{manifest.backend}', "
                                     f"which this glow-mlir cannot load")
    areas = _areas(manifest, sections)
    from glow_mlir.analysis.memory_report import MemoryReport
    from glow_mlir.targets.cpu.engine import NativeEntry

    try:
        entry = NativeEntry([sections[name] for name in manifest.objects],
                            manifest.network, spec)
    except (RuntimeError, ValueError) as err:  # object_check's, llvmlite's
        raise DamagedError(f"{what} is damaged: its code cannot be linked ({err})") from None
    program = NativeProgram(manifest.network, areas, entry,
                            None if manifest.memory is None else MemoryReport(**manifest.memory))
    program.num_threads = manifest.num_threads
    return CompiledModel.restored(
        manifest.backend, program,
        inputs=[(s.name, s.slot.shape, s.slot.dtype) for s in manifest.inputs],
        outputs=[(s.name, s.slot.shape) for s in manifest.outputs],
        value_checks=manifest.input_checks)


def _check_versions(manifest: SavedManifest, what: str) -> None:
    from glow_mlir.targets import compile_cache

    mine = compile_cache.versions()
    for key, label in (("glow_mlir", "glow-mlir"), ("llvm", "LLVM")):
        if getattr(manifest, key) != mine[key]:
            raise IncompatibleModelError(
                f"{what} was saved by {label} {getattr(manifest, key)}; this is {label} "
                f"{mine[key]}: compile the model again and save it with this version")


def _check_target(target: Target, what: str) -> CompileSpec:
    """The `CompileSpec` of the saved code, if this host can run it."""
    import llvmlite.binding as llvm

    from glow_mlir.targets.cpu import engine
    from glow_mlir.targets.cpu.llvm_compile import CompileSpec

    triple = llvm.get_default_triple()
    if target.triple.split("-")[0] != triple.split("-")[0]:
        raise IncompatibleModelError(f"{what} holds code for {target.triple}; this host "
                                     f"is {triple}")
    host_name, host_features = engine.host_cpu()
    have = {f[1:] for f in host_features.split(",") if f.startswith("+")}
    lacking = [f[1:] for f in target.features.split(",")
               if f.startswith("+") and f[1:] not in have]
    if lacking:
        shown = ", ".join(f"+{f}" for f in lacking[:8]) + (", ..." if len(lacking) > 8 else "")
        raise IncompatibleModelError(
            f"{what} holds code compiled for CPU '{target.cpu}' with features this CPU "
            f"('{host_name}') lacks: {shown}; compile the model again on this machine")
    return CompileSpec(target.cpu, target.features, target.reloc, target.codemodel,
                       target.loop_unrolling)


def _areas(manifest: SavedManifest, sections: dict[str, memoryview]) -> AreaPlan:
    from glow_mlir.targets.cpu.area_plan import AreaPlan

    sizes = manifest.areas
    data = sections["constant"]  # its length checked against the manifest
    constant = np.frombuffer(data, np.uint8) if len(data) else np.zeros(1, np.uint8)
    if constant.ctypes.data % sizes.alignment or not constant.flags.writeable:
        constant = constant.copy()  # bytes given (not a file read aligned): an own array
    return AreaPlan(constant, sizes.constant_size, sizes.mutable_size,
                    sizes.activations_size, sizes.alignment,
                    [s.slot for s in manifest.inputs], [s.slot for s in manifest.outputs])
