"""Weights held by reference, one table per module (DESIGN.md section 4).

`glow.constant` refers to its bytes with a builtin `dense_resource<handle>` attribute. The
bytes live in a `ResourceTable` attached to the top-level module, as numpy arrays that may
view memory owned elsewhere (an ONNX initializer), so no weight ever goes through a Python
list or a per-element attribute.

Workaround for xDSL 0.74: the builtin dialect keeps ONE blob store (hex strings) for every
Context in the process, and its parser renames a handle that is already in the store, so a
second module with the same handle loses its data. `parse_module`/`print_module` in
`glow_mlir.ir.text` therefore parse with a private, empty store whose blobs go to the
module's table, and print with a store holding this module's blobs, restoring the global
store afterwards. Modules parsed by plain `xdsl-opt` keep their blobs in the global store;
`resource_value` falls back to it. A module copied with `clone()` has no table of its own
(copy through text, or `attach_table` the original's).
"""

from __future__ import annotations

import re
import struct
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import Builtin, DenseResourceAttr, ModuleOp, ShapedType
from xdsl.ir import Attribute, Operation

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


class BlobError(ValueError):
    """A resource blob that does not fit the attribute referring to it; `op` is the op
    holding that attribute (text.parse_module reports it there)."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


def decode_blob(hex_blob: str, tensor: Attribute) -> np.ndarray:
    """MLIR's blob text: `0x`, a little-endian u32 alignment, then the raw bytes.

    The array is a read-only view of the decoded bytes (no per-element Python objects).
    """
    if not isinstance(tensor, ShapedType):
        raise ValueError(f"dense_resource needs a shaped type, got {tensor}")
    dtype = numpy_dtype(tensor.get_element_type()).newbyteorder("<")
    shape = tuple(tensor.get_shape())
    if any(d < 0 for d in shape):
        raise ValueError(f"dense_resource type {tensor} must have a static shape")
    try:
        raw = bytes.fromhex(hex_blob[2:])
    except ValueError:
        raise ValueError("resource blob is not a hex string after its 0x") from None
    if len(raw) < 4:
        raise ValueError("resource blob is too short to hold its 4-byte alignment header")
    data_len = len(raw) - 4
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if data_len != expected:
        raise ValueError(
            f"resource blob holds {data_len} bytes, but {tensor} needs {expected}"
        )
    return np.frombuffer(raw, dtype=dtype, offset=4).reshape(shape)


def encode_blob(array: np.ndarray) -> str:
    """MLIR's blob text for `array`: alignment header, then its little-endian bytes."""
    arr = np.ascontiguousarray(array)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    align = max(arr.dtype.itemsize, 1)
    return "0x" + struct.pack("<I", align).hex() + arr.tobytes().hex()


def resource_value(attr: DenseResourceAttr, anchor: Operation) -> np.ndarray:
    """The array behind `attr`, looked up in the table of the module holding `anchor`."""
    handle = attr.resource_handle.data
    table = resource_table(top_module(anchor))
    value = table.get(handle)
    if value is None:
        blob = _global_store().lookup(handle)
        if not blob:
            raise KeyError(f"no data for dense_resource<{handle}>")
        value = decode_blob(blob, attr.type)
        table.set(handle, value)
    return value


@contextmanager
def private_blob_store() -> Iterator[dict[str, str]]:
    """Swap xDSL's process-wide blob store for an empty one while parsing; yields the
    private store, which holds what the parser read (handle -> hex) afterwards."""
    iface = _global_store()
    saved = iface._blob_storage  # noqa: SLF001 - see module docstring
    private: dict[str, str] = {}
    iface._blob_storage = private  # noqa: SLF001
    try:
        yield private
    finally:
        iface._blob_storage = saved  # noqa: SLF001


def take_parsed_blobs(module: ModuleOp, blobs: Mapping[str, str]) -> None:
    """Decode the blobs a parse read (handle -> hex) into `module`'s table.

    Blobs no attribute refers to are dropped (as mlir-opt does); a blob that does not fit
    its attribute's type raises `BlobError` at the op holding the attribute.
    """
    table = resource_table(module)
    users: dict[str, tuple[Operation, DenseResourceAttr]] = {}
    for op in module.walk():
        for a in (*op.attributes.values(), *op.properties.values()):
            if isinstance(a, DenseResourceAttr):
                users.setdefault(a.resource_handle.data, (op, a))
    for handle, blob in blobs.items():
        if not blob or handle not in users:
            continue
        op, attr = users[handle]
        try:
            table.set(handle, decode_blob(blob, attr.type))
        except ValueError as err:  # includes UnsupportedElementType
            raise BlobError(op, f"dense_resource<{handle}>: {err}") from None


class blobs_for_printing:
    """Context manager: let xDSL's printer see `module`'s table (over whatever the global
    store holds), then restore the global store."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.saved: dict[str, str] | None = None

    def __enter__(self):
        iface = _global_store()
        self.saved = iface._blob_storage  # noqa: SLF001 - see module docstring
        store = dict(self.saved)
        for handle, array in resource_table(self.module).items():
            store[handle] = encode_blob(array)
        iface._blob_storage = store  # noqa: SLF001
        return self

    def __exit__(self, *exc):
        assert self.saved is not None
        _global_store()._blob_storage = self.saved  # noqa: SLF001
        return False
