"""Weights held by reference, one table per module (DESIGN.md section 4).

`glow.constant` refers to its bytes with a builtin `dense_resource<handle>` attribute. The
bytes live in a `ResourceTable` attached to the top-level module, as numpy arrays that may
view memory owned elsewhere (an ONNX initializer), so no weight ever goes through a Python
list or a per-element attribute.

Workaround for xDSL 0.74: the builtin dialect keeps ONE blob store (hex strings) for every
Context in the process, and its parser renames a handle that is already in the store, so a
second module with the same handle loses its data. `parse_module`/`print_module` in
`glow_mlir.ir.text` therefore move blobs out of that store right after parsing and put them
back only for the duration of printing. Modules parsed by plain `xdsl-opt` keep their blobs
in the global store; `resource_value` falls back to it.
"""

from __future__ import annotations

import re
import struct
import weakref
from collections.abc import Iterable

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr, ModuleOp, TensorType
from xdsl.ir import Operation

from glow_mlir.ir.element_types import numpy_dtype


class ResourceTable:
    """Handle -> array for one module; handles are unique within the module."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def __contains__(self, handle: str) -> bool:
        return handle in self._arrays

    def __len__(self) -> int:
        return len(self._arrays)

    def get(self, handle: str) -> np.ndarray | None:
        return self._arrays.get(handle)

    def items(self):
        return self._arrays.items()

    def set(self, handle: str, array: np.ndarray) -> None:
        self._arrays[handle] = array

    def add(self, name_hint: str, array: np.ndarray) -> str:
        """Store `array` under a fresh handle derived from `name_hint`; return the handle."""
        base = _sanitize(name_hint)
        handle, n = base, 0
        while handle in self._arrays:
            n += 1
            handle = f"{base}_{n}"
        self._arrays[handle] = array
        return handle

    def retain(self, handles: Iterable[str]) -> None:
        """Drop every entry not in `handles` (after dead constants were erased)."""
        keep = set(handles)
        for h in [h for h in self._arrays if h not in keep]:
            del self._arrays[h]


_TABLES: weakref.WeakKeyDictionary[ModuleOp, ResourceTable] = weakref.WeakKeyDictionary()


def _sanitize(name: str) -> str:
    """Resource handles are bare identifiers in MLIR's text."""
    s = re.sub(r"[^A-Za-z0-9_.$]", "_", name)
    if not s or not (s[0].isalpha() or s[0] == "_"):
        s = "_" + s
    return s


def top_module(op: Operation) -> ModuleOp:
    """The outermost builtin.module holding `op` (owner of the resource table)."""
    top: Operation = op
    while top.parent_op() is not None:
        top = top.parent_op()  # type: ignore[assignment]
    if not isinstance(top, ModuleOp):
        raise ValueError(f"{op.name} is not inside a builtin.module")
    return top


def resource_table(module: ModuleOp) -> ResourceTable:
    """The module's table, created empty on first use."""
    table = _TABLES.get(module)
    if table is None:
        table = ResourceTable()
        _TABLES[module] = table
    return table


def attach_table(module: ModuleOp, table: ResourceTable) -> None:
    _TABLES[module] = table


def add_resource(module: ModuleOp, name_hint: str, array: np.ndarray) -> DenseResourceAttr:
    """A `dense_resource` attribute for `array`, stored (not copied) in the module's table."""
    from glow_mlir.ir.element_types import tensor_type_of

    handle = resource_table(module).add(name_hint, array)
    return DenseResourceAttr.from_params(handle, tensor_type_of(array))


def _global_store() -> OpAsmDialectInterface:
    iface = Builtin.get_interface(OpAsmDialectInterface)
    assert iface is not None
    return iface


def decode_blob(hex_blob: str, tensor: TensorType) -> np.ndarray:
    """MLIR's blob text: `0x`, a little-endian u32 alignment, then the raw bytes."""
    raw = bytes.fromhex(hex_blob[2:])
    data = raw[4:]
    dtype = numpy_dtype(tensor.get_element_type())
    shape = tensor.get_shape()
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise ValueError(
            f"resource blob holds {len(data)} bytes, but {tensor} needs {expected}"
        )
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def encode_blob(array: np.ndarray) -> str:
    arr = np.ascontiguousarray(array)
    align = max(arr.dtype.itemsize, 1)
    return "0x" + struct.pack("<I", align).hex() + arr.tobytes().hex()


def resource_value(attr: DenseResourceAttr, anchor: Operation) -> np.ndarray:
    """The array behind `attr`, looked up in the table of the module holding `anchor`."""
    handle = attr.resource_handle.data
    tensor = attr.type
    assert isinstance(tensor, TensorType)
    table = resource_table(top_module(anchor))
    value = table.get(handle)
    if value is None:
        blob = _global_store().lookup(handle)
        if not blob:
            raise KeyError(f"no data for dense_resource<{handle}>")
        value = decode_blob(blob, tensor)
        table.set(handle, value)
    return value


def take_parsed_blobs(module: ModuleOp, handles: Iterable[str]) -> None:
    """Move the blobs that parsing left in the global store into `module`'s table."""
    store = _global_store()
    table = resource_table(module)
    types = {
        a.resource_handle.data: a.type
        for op in module.walk()
        for a in (*op.attributes.values(), *op.properties.values())
        if isinstance(a, DenseResourceAttr)
    }
    for handle in handles:
        blob = store._blob_storage.pop(handle, "")  # noqa: SLF001 - see module docstring
        if blob and handle in types:
            t = types[handle]
            assert isinstance(t, TensorType)
            table.set(handle, decode_blob(blob, t))


class blobs_for_printing:
    """Context manager: expose `module`'s table to xDSL's printer, then withdraw it."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.added: list[str] = []

    def __enter__(self):
        store = _global_store()._blob_storage  # noqa: SLF001 - see module docstring
        for handle, array in resource_table(self.module).items():
            if not store.get(handle):
                store[handle] = encode_blob(array)
                self.added.append(handle)
        return self

    def __exit__(self, *exc):
        store = _global_store()._blob_storage  # noqa: SLF001
        for handle in self.added:
            store.pop(handle, None)
        return False
