"""The NetDef schema: the messages of Caffe2's `caffe2/proto/caffe2.proto` the loader reads.

Caffe2 is retired and no package ships its generated protobuf code, so the schema is written
here as a `FileDescriptorProto` (the same thing `protoc` would embed) and turned into
message classes at run time by `google.protobuf`'s `message_factory`. The message names,
field names, numbers, labels and types are those of Caffe2's public schema, PyTorch 1.x's
`caffe2/proto/caffe2.proto`, as pytorch/glow copies it (`lib/Importer/caffe2.proto`, which
Glow's Caffe2ModelLoader is built on). Only the messages a NetDef reaches are written;
the few `required` fields (QTensorProto's) are written `optional`, and enums the loader
reads as numbers are `int32`, which decodes the same bytes; fields left out
(PartitionInfo) are skipped by the parser as unknown fields.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED, _REQUIRED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED, _F.LABEL_REQUIRED
_TYPES = {"string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "int64": _F.TYPE_INT64,
          "int32": _F.TYPE_INT32, "uint32": _F.TYPE_UINT32, "uint64": _F.TYPE_UINT64,
          "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "bool": _F.TYPE_BOOL}

# (label, type, name, number, packed): a type that is not a scalar names a message (or,
# with a leading "enum ", an enum) of the package.
_MESSAGES: dict[str, list[tuple[int, str, str, int, bool]]] = {
    "ExternalDataProto": [
        (_OPTIONAL, "int32", "source_type", 1, False),  # enum SourceType, read as int
        (_OPTIONAL, "string", "record_id", 2, False),
        (_OPTIONAL, "uint64", "record_size", 5, False),
        (_OPTIONAL, "int64", "offset", 3, False),
        (_REPEATED, "int64", "strides", 4, False),
    ],
    "TensorProto": [
        (_REPEATED, "int64", "dims", 1, False),
        (_OPTIONAL, "enum TensorProto.DataType", "data_type", 2, False),
        (_OPTIONAL, "int32", "storage_type", 12, False),  # enum StorageType, read as int
        (_REPEATED, "float", "float_data", 3, True),
        (_REPEATED, "int32", "int32_data", 4, True),
        (_OPTIONAL, "bytes", "byte_data", 5, False),
        (_REPEATED, "bytes", "string_data", 6, False),
        (_REPEATED, "double", "double_data", 9, True),
        (_REPEATED, "int64", "int64_data", 10, True),
        (_OPTIONAL, "bytes", "raw_data", 13, False),
        (_OPTIONAL, "ExternalDataProto", "external_data", 14, False),
        (_OPTIONAL, "string", "name", 7, False),
        (_OPTIONAL, "DeviceOption", "device_detail", 8, False),
    ],
    "QTensorProto": [
        (_REPEATED, "int64", "dims", 1, False),
        (_OPTIONAL, "int32", "precision", 2, False),  # required in caffe2.proto
        (_OPTIONAL, "double", "scale", 3, False),
        (_OPTIONAL, "double", "bias", 4, False),
        (_OPTIONAL, "bool", "is_signed", 5, False),
        (_REPEATED, "int32", "data", 6, True),
        (_OPTIONAL, "string", "name", 7, False),
        (_OPTIONAL, "enum TensorProto.DataType", "data_type", 8, False),
        (_REPEATED, "double", "scales", 9, False),
        (_REPEATED, "double", "biases", 10, False),
        (_OPTIONAL, "int32", "axis", 11, False),
        (_OPTIONAL, "bool", "is_multiparam", 12, False),
    ],
    "TensorShape": [
        (_REPEATED, "int64", "dims", 1, False),
        (_OPTIONAL, "enum TensorProto.DataType", "data_type", 2, False),
        (_REPEATED, "int32", "unknown_dims", 3, False),
        (_OPTIONAL, "bool", "unknown_shape", 4, False),
        (_OPTIONAL, "string", "name", 5, False),
    ],
    "Argument": [
        (_OPTIONAL, "string", "name", 1, False),
        (_OPTIONAL, "float", "f", 2, False),
        (_OPTIONAL, "int64", "i", 3, False),
        (_OPTIONAL, "bytes", "s", 4, False),
        (_OPTIONAL, "TensorProto", "t", 10, False),
        (_OPTIONAL, "NetDef", "n", 8, False),
        (_REPEATED, "float", "floats", 5, False),
        (_REPEATED, "int64", "ints", 6, False),
        (_REPEATED, "bytes", "strings", 7, False),
        (_REPEATED, "TensorProto", "tensors", 11, False),
        (_REPEATED, "NetDef", "nets", 9, False),
        (_REPEATED, "QTensorProto", "qtensors", 12, False),
    ],
    "DeviceOption": [
        (_OPTIONAL, "int32", "device_type", 1, False),
        (_OPTIONAL, "int32", "device_id", 2, False),
        (_OPTIONAL, "uint32", "random_seed", 3, False),
        (_OPTIONAL, "string", "node_name", 4, False),
        (_OPTIONAL, "int32", "numa_node_id", 5, False),
        (_REPEATED, "string", "extra_info", 6, False),
    ],
    "OperatorDef": [
        (_REPEATED, "string", "input", 1, False),
        (_REPEATED, "string", "output", 2, False),
        (_OPTIONAL, "string", "name", 3, False),
        (_OPTIONAL, "string", "type", 4, False),
        (_REPEATED, "Argument", "arg", 5, False),
        (_OPTIONAL, "DeviceOption", "device_option", 6, False),
        (_OPTIONAL, "string", "engine", 7, False),
        (_REPEATED, "string", "control_input", 8, False),
        (_OPTIONAL, "bool", "is_gradient_op", 9, False),
        (_OPTIONAL, "string", "debug_info", 10, False),
        (_OPTIONAL, "string", "domain", 11, False),
        (_OPTIONAL, "int64", "op_version", 12, False),
    ],
    "NetDef": [
        (_OPTIONAL, "string", "name", 1, False),
        (_REPEATED, "OperatorDef", "op", 2, False),
        (_OPTIONAL, "string", "type", 3, False),
        (_OPTIONAL, "int32", "num_workers", 4, False),
        (_OPTIONAL, "DeviceOption", "device_option", 5, False),
        (_REPEATED, "Argument", "arg", 6, False),
        (_REPEATED, "string", "external_input", 7, False),
        (_REPEATED, "string", "external_output", 8, False),
        # partition_info (9, PartitionInfo) is not written: it is skipped when present
    ],
}

DATA_TYPES = {"UNDEFINED": 0, "FLOAT": 1, "INT32": 2, "BYTE": 3, "STRING": 4, "BOOL": 5,
              "UINT8": 6, "INT8": 7, "UINT16": 8, "INT16": 9, "INT64": 10, "FLOAT16": 12,
              "DOUBLE": 13, "ZERO_COLLISION_HASH": 14}
"""TensorProto.DataType, the element types of tensors and of ConstantFill's `dtype`."""

_PACKAGE = "glow_mlir.caffe2"
"""Not caffe2.proto's `caffe2`: a process that also loads PyTorch's generated caffe2_pb2
keeps its own classes (a descriptor pool refuses two definitions of one name)."""


def _file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(name="glow_mlir/caffe2.proto", package=_PACKAGE,
                                           syntax="proto2")
    for name, fields in _MESSAGES.items():
        msg = f.message_type.add(name=name)
        if name == "TensorProto":
            enum = msg.enum_type.add(name="DataType")
            for key, number in DATA_TYPES.items():
                enum.value.add(name=key, number=number)
        for label, type_, fname, number, packed in fields:
            field = msg.field.add(name=fname, number=number, label=label)
            if type_ in _TYPES:
                field.type = _TYPES[type_]
            elif type_.startswith("enum "):
                field.type, field.type_name = _F.TYPE_ENUM, f".{_PACKAGE}.{type_[5:]}"
            else:
                field.type, field.type_name = _F.TYPE_MESSAGE, f".{_PACKAGE}.{type_}"
            if packed:
                field.options.packed = True
        if name == "TensorProto":  # caffe2.proto: [default = FLOAT]
            msg.field[1].default_value = "FLOAT"
        if name == "TensorShape":
            msg.field[1].default_value = "FLOAT"
    return f


@cache
def _classes() -> dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    return {name: message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")) for name in _MESSAGES}


def message_class(name: str) -> Any:
    """The class of one caffe2.proto message (`NetDef`, `OperatorDef`, `Argument`, ...)."""
    return _classes()[name]


def NetDef(**fields: Any) -> Any:  # noqa: N802 - named after the message
    """A new `caffe2.NetDef` message."""
    return message_class("NetDef")(**fields)


def is_net_def(obj: object) -> bool:
    """A NetDef message: ours, or one of PyTorch's `caffe2_pb2` (any class whose
    descriptor is named `caffe2.NetDef`)."""
    descriptor = getattr(obj, "DESCRIPTOR", None)
    return getattr(descriptor, "name", None) == "NetDef" and hasattr(obj, "SerializeToString")
