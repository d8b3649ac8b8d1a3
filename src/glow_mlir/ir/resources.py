"""Weights held by reference, one table per module (docs/architecture.md §4).

`glow.constant` refers to its bytes with a builtin `dense_resource<handle>` attribute. The
bytes live in a `ResourceTable` attached to the top-level module, as numpy arrays that may
view memory owned elsewhere (an ONNX initializer), so no weight ever goes through a Python
list or a per-element attribute.

How the tables meet xDSL 0.74's resource mechanism (`OpAsmDialectInterface` of `builtin`:
the parser declares and fills handles in it, `Printer.print_metadata` asks it for the blobs
of the handles the printer saw):

- Parsing: that interface keeps ONE blob store for every Context in the process, and its
  parser renames a handle that is already in the store, so a second module with the same
  handle would lose its data. `glow_mlir.ir.text.parse_module` therefore parses with a
  private, empty store (`private_blob_store`) whose blobs go to the module's table. Modules
  parsed by plain xDSL keep their blobs in the global store; `resource_value` falls back
  to it.
- Printing: `ResourceStore` replaces builtin's interface (importing this module installs
  it), so every printer that calls `print_metadata` (xDSL's `Printer`, `xdsl-opt`, our
  `print_module`) emits the blobs of our tables, encoded only then. xDSL asks for blobs by
  handle alone, not by module: `blobs_for_printing(module)` says which module is printed;
  without it, the live module holding the handle is used (two live modules holding
  different data under one handle is an error, never a silent pick).
- `str(module)` never calls `print_metadata` in xDSL; `ModuleOp.__str__` is replaced so a
  top-level module prints its resources, as MLIR's `Operation::print` does.

The private names this takes are upstream's limits, not shortcuts: xDSL 0.74's
`xdsl/dialect_interfaces/op_asm.py` keeps the blobs in `OpAsmDialectInterface._blob_storage`
with no public way to scope or swap it, and `Dialect._interfaces` (xdsl/ir/core.py) has no
public setter (the interface and its store came with xdslproject/xdsl#4503, "core: Dialect
interfaces, OpAsmDialectInterface"). They are used in `private_blob_store` and
`_install_store` only.

A module copied with `clone()` has no table of its own (copy through text, or
`attach_table` the original's).
"""

from __future__ import annotations

import gc
import re
import struct
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from io import StringIO

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    ArrayAttr,
    Builtin,
    ContainerType,
    DenseResourceAttr,
    DictionaryAttr,
    ModuleOp,
    ShapedType,
)
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

from glow_mlir.ir.element_types import numpy_dtype


class ResourceTable:
    """Handle -> array for one module; handles are unique within the module. The arrays
    are never changed in place (a pass that computes new bytes adds a new handle)."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._digests: dict[str, bytes] = {}

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
        self._digests.pop(handle, None)

    def digest(self, handle: str, array: np.ndarray) -> bytes:
        """A hash of the bytes of `array`, the array held under `handle`, computed once:
        `merge-constants` runs at every round of the graph optimizer, and hashing the
        1.2 GB of ViT-L's weights each time was half of its compile."""
        d = self._digests.get(handle)
        if d is None:
            d = self._digests[handle] = bytes_digest(array)
        return d

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
            self._digests.pop(h, None)


_TABLES: weakref.WeakKeyDictionary[ModuleOp, ResourceTable] = weakref.WeakKeyDictionary()


def bytes_digest(array: np.ndarray) -> bytes:
    """A 16-byte hash of an array's bytes in row-major order (no copy when contiguous)."""
    import hashlib

    return hashlib.blake2b(np.ascontiguousarray(array).data, digest_size=16).digest()


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


def _global_store() -> ResourceStore:
    return _STORE


def missing_data_message(handle: str) -> str:
    """What parse and verify say about a `dense_resource` whose bytes are nowhere."""
    return (f"dense_resource<{handle}> has no data (no blob '{handle}' in a "
            "{-# dialect_resources #-} section)")


def has_data(attr: DenseResourceAttr, anchor: Operation) -> bool:
    """Whether the bytes behind `attr` are in the table of `anchor`'s module or in xDSL's
    global store (a plain-xDSL parse). Verifiers use it so that a handle with no blob is an
    error at verification, not a KeyError in a later pass. True for an op not (yet) in a
    module: there is no table to look in."""
    try:
        module = top_module(anchor)
    except ValueError:
        return True
    handle = attr.resource_handle.data
    table = _TABLES.get(module)
    return (table is not None and handle in table) or bool(_global_store().lookup(handle))


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
    if not isinstance(tensor, ShapedType) or not isinstance(tensor, ContainerType):
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


def resource_digest(attr: DenseResourceAttr, anchor: Operation) -> bytes:
    """`bytes_digest` of the array behind `attr`, computed once per handle."""
    value = resource_value(attr, anchor)
    return resource_table(top_module(anchor)).digest(attr.resource_handle.data, value)


def resource_value(attr: DenseResourceAttr, anchor: Operation) -> np.ndarray:
    """The array behind `attr`, looked up in the table of the module holding `anchor`."""
    handle = attr.resource_handle.data
    table = resource_table(top_module(anchor))
    value = table.get(handle)
    if value is None:
        blob = _global_store().lookup(handle)
        if not blob:
            raise KeyError(missing_data_message(handle))
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
    its attribute's type, and an attribute with no blob (the text lost its weights), raise
    `BlobError` at the op holding the attribute.
    """
    table = resource_table(module)
    users: dict[str, tuple[Operation, DenseResourceAttr]] = {}
    for op in module.walk():
        for a in _resource_attrs([*op.attributes.values(), *op.properties.values()]):
            users.setdefault(a.resource_handle.data, (op, a))
    for handle, (op, attr) in users.items():
        blob = blobs.get(handle)
        if not blob:
            raise BlobError(op, missing_data_message(handle))
        try:
            table.set(handle, decode_blob(blob, attr.type))
        except ValueError as err:  # includes UnsupportedElementType
            raise BlobError(op, f"dense_resource<{handle}>: {err}") from None


def _resource_attrs(attrs: Iterable[Attribute]) -> Iterator[DenseResourceAttr]:
    """The `dense_resource`s among `attrs` and inside their arrays and dictionaries (a
    function's argument attributes: a training step's `glow.initial`)."""
    for a in attrs:
        if isinstance(a, DenseResourceAttr):
            yield a
        elif isinstance(a, ArrayAttr):
            yield from _resource_attrs(a.data)
        elif isinstance(a, DictionaryAttr):
            yield from _resource_attrs(a.data.values())


_PRINTING: ContextVar[ModuleOp | None] = ContextVar("glow_printing_module", default=None)


@contextmanager
def blobs_for_printing(module: ModuleOp) -> Iterator[None]:
    """Within it, xDSL's printer takes blobs from `module`'s table (then from the global
    store), whatever other module holds the same handles."""
    token = _PRINTING.set(module)
    try:
        yield
    finally:
        _PRINTING.reset(token)


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.dtype == b.dtype and a.shape == b.shape
                      and a.tobytes() == b.tobytes())


def _live_array(handle: str) -> np.ndarray | None:
    """The array a live module's table holds under `handle`, when no module is named."""
    for _ in range(2):
        arrays: list[np.ndarray] = []
        for table in list(_TABLES.values()):
            a = table.get(handle)
            if a is not None and not any(_same_bytes(a, b) for b in arrays):
                arrays.append(a)
        if len(arrays) <= 1:
            return arrays[0] if arrays else None
        # A dropped module stays in _TABLES until the cycle collector frees it (its ops
        # point back at it): collect once before calling the handle ambiguous.
        gc.collect()
    raise ValueError(
        f"dense_resource<{handle}>: several modules hold different data under this handle; "
        "print inside glow_mlir.ir.resources.blobs_for_printing(module), or use str(module) "
        "or glow_mlir.ir.text.print_module")


class ResourceStore(OpAsmDialectInterface):
    """builtin's resource interface, answering xDSL's printer from our per-module tables
    (encoding a blob only when it is printed), then from its own global store."""

    def build_resources(self, keys: Iterable[str]) -> dict[str, str]:
        module = _PRINTING.get()
        out: dict[str, str] = {}
        for key in keys:
            if module is not None:
                table = _TABLES.get(module)
                array = table.get(key) if table is not None else None
            else:
                array = _live_array(key)
            blob = encode_blob(array) if array is not None else self._blob_storage.get(key)
            if blob:
                out[key] = blob
        return out


def _install_store() -> ResourceStore:
    """Put a `ResourceStore` in place of builtin's stock interface, keeping its blobs.

    Workaround for xDSL 0.74: a dialect's interfaces are fixed when it is built and the
    printer can only reach a resource's bytes through its owner's interface, so we swap
    the instance inside the `Builtin` dialect every Context shares.
    """
    stock = Builtin.get_interface(OpAsmDialectInterface)
    if isinstance(stock, ResourceStore):
        return stock
    store = ResourceStore()
    if stock is not None:
        store._blob_storage = stock._blob_storage  # noqa: SLF001
        Builtin._interfaces.remove(stock)  # noqa: SLF001
    Builtin._interfaces.append(store)  # noqa: SLF001
    return store


_STORE = _install_store()


def load_resource_dialect(ctx: Context) -> None:
    """Load `builtin`, the owner of `dense_resource` blobs, into `ctx`; a pass that adds
    resources calls it.

    Workaround for xDSL 0.74: xdsl-opt prints metadata with `ctx.loaded_dialects` and
    asserts that the owner of every printed resource is among them, while a context loads
    `builtin` only when parsing looked something up in it (an implicit module of func and
    glow ops does not), so `xdsl-opt -p lower-to-instr` ended in an AssertionError.
    """
    ctx.get_optional_dialect("builtin")


def _top_module_str(self: ModuleOp) -> str:
    """`str(module)` with its `{-# dialect_resources #-}` section when it is top-level.

    Workaround for xDSL 0.74: `Operation.__str__` prints the op alone and drops the blobs,
    so the text read back had no weights.
    """
    if self.parent is not None:
        return Operation.__str__(self)
    out = StringIO()
    printer = Printer(stream=out)
    with blobs_for_printing(self):
        printer.print_op(self)
        printer.print_metadata([Builtin])  # in xDSL 0.74 only builtin has resources
    return out.getvalue()


# Patched on purpose (module docstring); mypy sees a ModuleOp-only method on Operation.
ModuleOp.__str__ = _top_module_str  # type: ignore[method-assign,assignment]
