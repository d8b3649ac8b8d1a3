"""The manifest of a saved model (`saved_model.py`), every field checked before any is
used: its type, its range, and that the fields agree with one another and with the
sections (the signature with the memory plan, the objects with the sections), so that
a file whose manifest was edited, by hand or by a bug, is one `DamagedError` naming the
field rather than an exception from deep inside, or native code reading past an area.

Explicit checks on frozen dataclasses, standard library and numpy only: loading stays
free of the compiler and of a schema package (jsonschema would check the types but not
the cross-field rules below, which are most of the work). What this cannot check is the
machine code itself: its area offsets are compiled in (a file edited on purpose with a
consistent manifest and digest is code someone else wrote: load only files you trust).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from glow_mlir.ir.input_checks import InputCheck
from glow_mlir.runtime.section_file import DamagedError
from glow_mlir.targets.cpu.area_plan import Slot, dtype_named

MAX_BYTES = 1 << 48
"""No area or slot is larger (the x86-64 and AArch64 virtual address spaces): a larger
size is a damaged manifest, not a model too big for this host."""

MAX_ALIGNMENT = 1 << 16
MAX_RANK = 64
CONSTANT_SECTION = "constant"
MEMORY_FIELDS = ("constant_bytes", "mutable_bytes", "activations_bytes",
                 "peak_live_bytes", "unshared_bytes")


class _Bad(Exception):
    """A field that fails its check (`path`: where, in the manifest)."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"'{path}' {problem}")


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _field(obj: Mapping, key: str, path: str) -> object:
    if key not in obj:
        raise _Bad(f"{path}{key}", "is missing")
    return obj[key]


def _object(value: object, path: str, keys: tuple[str, ...],
            optional: tuple[str, ...] = ()) -> dict:
    """`value` as a JSON object with exactly `keys`, and maybe `optional` ones (an unknown
    key is damage too: the format version says which fields there are)."""
    if not isinstance(value, dict):
        raise _Bad(path, f"is {_describe(value)}, not an object")
    for key in keys:
        _field(value, key, f"{path}." if path else "")
    unknown = [k for k in value if k not in keys and k not in optional]
    if unknown:
        raise _Bad(f"{path}.{unknown[0]}" if path else unknown[0], "is not a field of "
                   "this format")
    return value


def _str(value: object, path: str, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise _Bad(path, f"is {_describe(value)}, not a string")
    if not empty and not value:
        raise _Bad(path, "is empty")
    if "\0" in value:
        raise _Bad(path, "holds a NUL character")
    return value


def _int(value: object, path: str, high: int = MAX_BYTES) -> int:
    if type(value) is not int:  # bool is an int to Python, not to us
        raise _Bad(path, f"is {_describe(value)}, not an integer")
    if not 0 <= value <= high:
        raise _Bad(path, f"is {value}, not in [0, {high}]")
    return value


def _list(value: object, path: str) -> list:
    if not isinstance(value, list):
        raise _Bad(path, f"is {_describe(value)}, not a list")
    return value


def _dtype(value: object, path: str) -> np.dtype:
    """A numeric dtype (numpy's, or ml_dtypes' low-precision ones): an object, string
    or structured dtype would make the area's bytes into Python objects."""
    name = _str(value, path)
    try:
        dtype = dtype_named(name)
    except (TypeError, AttributeError, ValueError):
        raise _Bad(path, f"is '{name}', not a dtype") from None
    if dtype.name != name or dtype.hasobject or not (
            dtype.kind in "biufc" or dtype.type.__module__.startswith("ml_dtypes")):
        raise _Bad(path, f"is '{name}', not a numeric dtype")
    return dtype


@dataclass(frozen=True)
class Signature:
    """An input or output: its name and where it sits in the mutable area."""

    name: str
    slot: Slot

    @classmethod
    def parse(cls, value: object, path: str) -> Signature:
        d = _object(value, path, ("name", "dtype", "shape", "offset", "size"))
        dtype = _dtype(d["dtype"], f"{path}.dtype")
        shape = tuple(_int(n, f"{path}.shape[{i}]")
                      for i, n in enumerate(_list(d["shape"], f"{path}.shape")))
        if len(shape) > MAX_RANK:
            raise _Bad(f"{path}.shape", f"has {len(shape)} dimensions")
        size = _int(d["size"], f"{path}.size")
        want = math.prod(shape) * dtype.itemsize
        if size != want:
            raise _Bad(f"{path}.size", f"is {size}: a {dtype.name} array of shape "
                       f"{list(shape)} has {want} bytes")
        return cls(_str(d["name"], f"{path}.name"),
                   Slot(dtype, shape, _int(d["offset"], f"{path}.offset"), size))


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str
    reloc: str
    codemodel: str
    loop_unrolling: bool

    @classmethod
    def parse(cls, value: object) -> Target:
        d = _object(value, "target", ("triple", "cpu", "features", "reloc", "codemodel",
                                      "loop_unrolling"))
        if not isinstance(d["loop_unrolling"], bool):
            raise _Bad("target.loop_unrolling",
                       f"is {_describe(d['loop_unrolling'])}, not a boolean")
        features = _str(d["features"], "target.features", empty=True)
        if any(f[:1] not in "+-" or len(f) < 2 for f in features.split(",") if features):
            raise _Bad("target.features", "is not a list of +feature,-feature")
        return cls(_str(d["triple"], "target.triple"), _str(d["cpu"], "target.cpu"),
                   features, _str(d["reloc"], "target.reloc"),
                   _str(d["codemodel"], "target.codemodel"), d["loop_unrolling"])


@dataclass(frozen=True)
class Areas:
    constant_size: int
    mutable_size: int
    activations_size: int
    alignment: int

    @classmethod
    def parse(cls, value: object) -> Areas:
        d = _object(value, "areas", ("constant_size", "mutable_size", "activations_size",
                                     "alignment"))
        alignment = _int(d["alignment"], "areas.alignment", MAX_ALIGNMENT)
        if alignment == 0 or alignment & (alignment - 1):
            raise _Bad("areas.alignment", f"is {alignment}, not a power of two")
        constant, mutable, activations = (_int(d[k], f"areas.{k}") for k in (
            "constant_size", "mutable_size", "activations_size"))
        return cls(constant, mutable, activations, alignment)


_CHECK_FIELDS = ("input", "what", "low", "high", "finite", "sizes")


def _range(value: object, path: str) -> tuple[float, float] | None:
    """A closed range [low, high] of floats, or None."""
    if value is None:
        return None
    pair = _list(value, path)
    if len(pair) != 2 or not all(type(v) in (int, float) for v in pair):
        raise _Bad(path, f"is {_describe(value)}, not two numbers")
    return float(pair[0]), float(pair[1])


def _signed(value: object, path: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or abs(value) > MAX_BYTES:
        raise _Bad(path, f"is {_describe(value)}, not an integer or null")
    return value


def _input_checks(value: object, names: list[str]) -> tuple[tuple[str, InputCheck], ...]:
    """The value checks of the inputs (`ir/input_checks.py`), each field checked."""
    found = []
    for i, item in enumerate(_list(value, "input_checks")):
        path = f"input_checks[{i}]"
        d = _object(item, path, _CHECK_FIELDS, ("allowed", "between"))
        name = _str(d["input"], f"{path}.input")
        if name not in names:
            raise _Bad(f"{path}.input", f"is '{name}', not an input")
        if not isinstance(d["finite"], bool):
            raise _Bad(f"{path}.finite", f"is {_describe(d['finite'])}, not a boolean")
        sizes = tuple(_int(v, f"{path}.sizes[{k}]")
                      for k, v in enumerate(_list(d["sizes"], f"{path}.sizes")))
        found.append((name, InputCheck(_str(d["what"], f"{path}.what"),
                                       _signed(d["low"], f"{path}.low"),
                                       _signed(d["high"], f"{path}.high"), d["finite"], sizes,
                                       _signed(d.get("allowed"), f"{path}.allowed"),
                                       _range(d.get("between"), f"{path}.between"))))
    return tuple(found)


@dataclass(frozen=True)
class SavedManifest:
    """A saved model's manifest, checked (`parse`)."""

    glow_mlir: str
    llvmlite: str
    llvm: str
    backend: str
    network: str
    target: Target
    inputs: tuple[Signature, ...]
    outputs: tuple[Signature, ...]
    areas: Areas
    memory: dict[str, int] | None
    objects: tuple[str, ...]
    input_checks: tuple[tuple[str, InputCheck], ...] = ()
    num_threads: int | None = None
    """The threads the code was compiled for (None: a file written before it was saved)."""

    FIELDS = ("glow_mlir", "llvmlite", "llvm", "backend", "network", "target", "inputs",
              "outputs", "areas", "memory", "objects")
    # input_checks: written only when the model checks input values; num_threads: not in
    # files saved before it was added, which load as before
    OPTIONAL = ("input_checks", "num_threads")

    @classmethod
    def parse(cls, manifest: object, sections: Mapping[str, memoryview],
              what: str) -> SavedManifest:
        """The checked manifest of file `what`, whose sections are `sections`; a
        `DamagedError` naming the first field that fails."""
        try:
            return cls._parse(manifest, sections)
        except _Bad as err:
            raise DamagedError(f"{what} is damaged: its manifest field {err}") from None

    @classmethod
    def _parse(cls, manifest: object, sections: Mapping[str, memoryview]) -> SavedManifest:
        d = _object(manifest, "", cls.FIELDS, cls.OPTIONAL)
        areas = Areas.parse(d["areas"])
        signature = {}
        for key in ("inputs", "outputs"):
            items = tuple(Signature.parse(v, f"{key}[{i}]")
                          for i, v in enumerate(_list(d[key], key)))
            names = [s.name for s in items]
            for i, name in enumerate(names):
                if name in names[:i]:
                    raise _Bad(f"{key}[{i}].name", f"repeats '{name}'")
            signature[key] = items
        if not signature["outputs"]:
            raise _Bad("outputs", "is empty")
        _check_mutable_area(signature["inputs"] + signature["outputs"], areas)
        memory = None if d["memory"] is None else _memory(d["memory"], areas)
        objects = tuple(_str(v, f"objects[{i}]") for i, v in
                        enumerate(_list(d["objects"], "objects")))
        _check_sections(objects, sections, areas)
        glow_mlir, llvmlite, llvm, backend, network = (_str(d[k], k) for k in (
            "glow_mlir", "llvmlite", "llvm", "backend", "network"))
        checks = _input_checks(d.get("input_checks", []),
                               [s.name for s in signature["inputs"]])
        threads = d.get("num_threads")
        if threads is not None:
            from glow_mlir.ir.native_runtime import MAX_THREADS

            threads = _int(threads, "num_threads")
            if not 1 <= threads <= MAX_THREADS:
                raise _Bad("num_threads", f"is {threads}, not in [1, {MAX_THREADS}]")
        return cls(glow_mlir, llvmlite, llvm, backend, network, Target.parse(d["target"]),
                   signature["inputs"], signature["outputs"], areas, memory, objects, checks,
                   threads)


def _check_mutable_area(signature: tuple[Signature, ...], areas: Areas) -> None:
    """The inputs and outputs tile the mutable area as the layout places them (each at an
    aligned offset, none overlapping another, the area ending at the last one, aligned):
    the compiled code reads and writes them at those offsets, and a mutable area smaller
    than it addresses would be written past its end."""
    spans = sorted((s.slot.offset, s.slot.offset + s.slot.size, s.name) for s in signature)
    for (_, end, name), (start, _, other) in pairwise(spans):
        if start < end:
            raise _Bad("inputs/outputs", f"place '{other}' at offset {start}, inside "
                       f"'{name}' (which ends at {end})")
    for s in signature:
        if s.slot.offset % areas.alignment:
            raise _Bad("inputs/outputs", f"place '{s.name}' at offset {s.slot.offset}, "
                       f"not a multiple of the alignment {areas.alignment}")
    end = max((e for _, e, _ in spans), default=0)
    want = -(-end // areas.alignment) * areas.alignment
    if areas.mutable_size != want:
        raise _Bad("areas.mutable_size", f"is {areas.mutable_size}: the inputs and outputs "
                   f"end at {end}, so the mutable area is {want} bytes")


def _memory(value: object, areas: Areas) -> dict[str, int]:
    d = _object(value, "memory", MEMORY_FIELDS)
    memory = {k: _int(d[k], f"memory.{k}") for k in MEMORY_FIELDS}
    for used, area in (("constant_bytes", "constant_size"),
                       ("mutable_bytes", "mutable_size"),
                       ("activations_bytes", "activations_size")):
        if memory[used] > getattr(areas, area):  # the area is the plan, aligned, and more
            raise _Bad(f"areas.{area}", f"is {getattr(areas, area)}, less than the "
                       f"memory plan's {memory[used]} bytes (memory.{used})")
    if memory["peak_live_bytes"] > memory["activations_bytes"]:
        raise _Bad("memory.peak_live_bytes", "is more than memory.activations_bytes, "
                   "its upper bound")
    return memory


def _check_sections(objects: tuple[str, ...], sections: Mapping[str, memoryview],
                    areas: Areas) -> None:
    """One section per object and the constant area's, and nothing else."""
    if not objects:
        raise _Bad("objects", "is empty: there is no entry point")
    for i, name in enumerate(objects):
        if name == CONSTANT_SECTION or name not in sections:
            raise _Bad(f"objects[{i}]", f"names '{name}', not an object section")
        if name in objects[:i]:
            raise _Bad(f"objects[{i}]", f"repeats '{name}'")
    if CONSTANT_SECTION not in sections:
        raise _Bad("sections", f"have no '{CONSTANT_SECTION}' section")
    extra = sorted(set(sections) - set(objects) - {CONSTANT_SECTION})
    if extra:
        raise _Bad("sections", f"hold '{extra[0]}', which no field names")
    constant = len(sections[CONSTANT_SECTION])
    if constant != areas.constant_size:
        raise _Bad("areas.constant_size", f"is {areas.constant_size}; the constant "
                   f"section has {constant} bytes")
