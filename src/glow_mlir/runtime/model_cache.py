"""The whole-model cache: `compile()` of the same model with the same options loads the
model compiled before (a saved model, `saved_model.py`, kept in the compile cache,
`targets/compile_cache.py`) instead of importing and compiling it again.

The key is sha256 of the model's bytes (a ModelProto serialized, the bytes given, or the
file a path names; a `.mlir` file's text) and of every external-data file it names,
the backend, `input_shapes`, `optimize`, the disabled passes, the backend options, the
host CPU and its features, the versions of glow-mlir, llvmlite and LLVM, and a digest
of glow-mlir's own sources (a changed compiler, even at the same version number, must
not serve the old one's code). Nothing is imported to compute it: hashing ResNet-18's
45 MB takes about 30 ms, importing it seconds. A parsed `ModuleOp` is not cached (it
would have to be printed to be hashed, and compiling lowers it in place, which a hit
could not do).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from glow_mlir.ir import progress
from glow_mlir.targets import compile_cache
from glow_mlir.targets.compile_cache import CompileCache

if TYPE_CHECKING:
    from glow_mlir.runtime.compiled_model import CompiledModel


@functools.cache
def sources_digest() -> str:
    """sha256 of every Python source of the glow_mlir package (about 8 ms)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def model_key(model: object, backend: str, input_shapes: Mapping | None, optimize: bool,
              disable_passes: Sequence[str], backend_options: Mapping) -> bytes | None:
    """The model cache's key for this compile, or None when it is not cached (a backend
    without native code to save, a ModuleOp, a file that cannot be read: the compile
    then reports what is wrong)."""
    from glow_mlir.runtime.saved_model import saves_code
    from glow_mlir.targets.cpu import engine

    if not saves_code(backend):
        return None
    found = _model_bytes(model)
    if found is None:
        return None
    kind, data, base_dir = found
    externals = [] if kind in ("mlir", "caffe2") else external_data_locations(data)
    if externals is None:
        return None
    blobs: list[bytes | str] = [data]
    for location in sorted(set(externals)):
        try:
            blobs += [location, (Path(base_dir) / location).read_bytes()]
        except OSError:
            return None
    jit = sys.modules.get("glow_mlir.targets.cpu.jit")  # not imported: its defaults hold
    fields = {
        **compile_cache.versions(), "sources": sources_digest(), "kind": kind,
        "host": jit.target_cpu() if jit is not None else engine.host_cpu(),
        "backend": backend, "optimize": bool(optimize),
        "input_shapes": sorted((str(k), _shape(v)) for k, v in (input_shapes or {}).items()),
        "disable_passes": sorted(set(disable_passes)),
        "backend_options": sorted((k, repr(v)) for k, v in backend_options.items()),
        "loop_unrolling": bool(getattr(jit, "LOOP_UNROLLING", False)),
    }
    return compile_cache.make_key("model", fields, *blobs)


def _shape(value) -> object:
    return list(value) if isinstance(value, (tuple, list)) else value


def _model_bytes(model: object) -> tuple[str, bytes, str] | None:
    """(kind, bytes, the folder external data is relative to) of what compile() got."""
    if isinstance(model, (tuple, list)) and len(model) == 2:  # a Caffe2 (predict, init) pair
        parts = [_model_bytes(m) for m in model]
        if any(p is None for p in parts):
            return None
        blob = b"".join(len(p[1]).to_bytes(8, "little") + p[1] for p in parts if p)
        return "caffe2", blob, os.getcwd()
    if isinstance(model, (bytes, bytearray)):
        return "onnx", bytes(model), os.getcwd()
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        kind = "mlir" if os.fspath(model).endswith(".mlir") else "onnx"
        return kind, data, str(path.resolve().parent)
    serialize = getattr(model, "SerializeToString", None)  # a ModelProto (or a NetDef)
    if serialize is not None and type(model).__name__ in ("ModelProto", "NetDef"):
        return "onnx", serialize(deterministic=True), os.getcwd()
    return None


def external_data_locations(data: bytes) -> list[str] | None:
    """The external-data files the main graph's initializers name (the ones the
    importer reads), from the protobuf wire format of a ModelProto, without onnx (its
    import alone takes longer than a whole cache hit); None when `data` is not a
    well-formed message. ModelProto.graph is field 7, GraphProto.initializer 5,
    TensorProto.external_data 13 (StringStringEntryProto: key 1, value 2) and
    data_location 14 (EXTERNAL = 1), as onnx.proto numbers them."""
    try:
        found = []
        for field, graph in _fields(data):
            if field != 7:
                continue
            for gfield, tensor in _fields(graph):
                if gfield != 5:
                    continue
                external, location = False, None
                for tfield, value in _fields(tensor):
                    if tfield == 14:
                        external = value == 1
                    elif tfield == 13:
                        entry = dict(_fields(value))
                        if entry.get(1) == b"location":
                            location = bytes(entry.get(2, b"")).decode()
                if external and location is not None:
                    found.append(location)
        return found
    except (ValueError, IndexError, UnicodeDecodeError, TypeError):
        return None


def _fields(data):
    """(field number, value) of a protobuf message: an int for varints and fixed-width
    fields, a memoryview for length-delimited ones."""
    view, i = memoryview(data), 0
    while i < len(view):
        key, i = _varint(view, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(view, i)
        elif wire == 2:
            n, i = _varint(view, i)
            if i + n > len(view):
                raise ValueError("truncated")
            value, i = view[i:i + n], i + n
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, i = int.from_bytes(view[i:i + width], "little"), i + width
        else:
            raise ValueError(f"wire type {wire}")
        yield field, value


def _varint(view: memoryview, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = view[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def lookup(cache: CompileCache, key: bytes) -> CompiledModel | None:
    """The model stored under `key`, or None (absent, or bad: then removed)."""
    from glow_mlir.ir.errors import SettingError, UserError
    from glow_mlir.runtime.saved_model import from_bytes

    payload = cache.get("models", key)
    if payload is None:
        progress.count("model cache misses")
        return None
    try:  # the cache checked the digest of these bytes
        model = from_bytes(payload, "a model cache entry", check_digest=False)
    except SettingError:  # the user's environment, not the entry: keep it, say so
        raise
    except UserError:  # another version, another CPU (a key mismatch): compile again
        cache.rebuilt += 1
        cache.remove("models", key)
        progress.count("model cache misses")
        return None
    model.origin = "cache"
    progress.count("model cache hits")
    return model


def store(cache: CompileCache, key: bytes, model: CompiledModel) -> None:
    from glow_mlir.runtime.saved_model import to_pieces

    if cache.put("models", key, to_pieces(model)):
        cache.trim()
