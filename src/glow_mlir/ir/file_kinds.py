"""What a model file is when it is not the kind a reader expected: a saved compiled model
(its magic) or MLIR text (glow graph, glow_ir program). The ONNX loader asks before it
parses, so `glow-compile m.glow` or `compile(mlir_text_bytes)` says what was given and
what to do with it, not "not a valid ONNX model".

It lives in `ir` (it imports nothing) because the saved-model format (`runtime`) and the
ONNX loader (`frontends`) both need the magic, and only `ir` is below both."""

from __future__ import annotations

import re

SAVED_MODEL_MAGIC = b"GLOWMLIR"
"""The first bytes of a saved model (`runtime/saved_model.py`, `runtime/section_file.py`)."""

SAVED_MODEL = "a saved compiled model"
ONNX_MODEL = "an ONNX model"

_SNIFF_BYTES = 4096  # enough for a header comment and the first ops
_COMMENT = re.compile(r"//[^\n]*")
_OP = re.compile(r"(?<![\w.])(glow_ir|glow_accel|glow|func|builtin|llvm|memref|arith)\.\w+")
# How MLIR text opens once its comments are gone: a module, an op in its custom
# (`func.func @f`) or generic (`"func.func"()`) form, an attribute or type alias, or the
# `{-# ... #-}` metadata. Prose that names an op (a README: "glow.relu ...") opens with none.
_START = re.compile(r"\s*(module\b|\"?[A-Za-z_]\w*\.[\w.]+\"?[\s(@%<{:]|[#!][\w.]+\s*="
                    r"|\{-#)")


def sniff(data: bytes) -> str | None:
    """`SAVED_MODEL`, "MLIR text (a glow graph)", "MLIR text (a glow_ir program)",
    "MLIR text", or None when `data` is neither (an ONNX model, or anything else).

    MLIR text is UTF-8 without control characters (an ONNX protobuf has some in its first
    bytes: field tags and lengths) that, past its comments, opens as MLIR does (`_START`);
    the dialects its ops name tell a glow graph from a glow_ir program."""
    if data.startswith(SAVED_MODEL_MAGIC):
        return SAVED_MODEL
    head = text_head(data)
    if head is None:
        return None
    code = _COMMENT.sub("", head)
    if not _START.match(code):
        return None
    ops = {m.group(1) for m in _OP.finditer(code)}
    if "glow_ir" in ops:
        return "MLIR text (a glow_ir program)"
    if "glow" in ops:
        return "MLIR text (a glow graph)"
    return "MLIR text"


def text_head(data: bytes) -> str | None:
    """The first characters of `data` when it is text (UTF-8 without control characters),
    else None."""
    prefix = bytes(data[:_SNIFF_BYTES])
    try:
        head = prefix.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(prefix) - 3:  # not UTF-8 (a character cut at the end is)
            return None
        head = prefix[:err.start].decode("utf-8")
    if any(ord(c) < 32 and c not in "\t\n\r" for c in head):
        return None
    return head


def not_a_model(data: bytes, path: str | None = None) -> str | None:
    """The message for data that the ONNX loader could not parse when it is text (a README,
    a script) rather than a damaged protobuf; None otherwise."""
    if text_head(data) is None:
        return None
    what = "the model bytes are" if path is None else f"'{path}' is"
    return (f"{what} a text file, not a model: give an ONNX model, MLIR text (a .mlir "
            f"file opening with a module or an op) or a saved compiled model (.glow)")


def not_onnx(data: bytes, path: str | None = None) -> str | None:
    """The message for model data handed to the ONNX loader, read from file `path` or
    given as bytes (None), when `data` is a kind `sniff` knows; None otherwise."""
    kind = sniff(data)
    if kind is None:
        return None
    what = "the model bytes are" if path is None else f"'{path}' is"
    if kind == SAVED_MODEL:
        use = ("load it with glow_mlir.load(data)" if path is None
               else "run it with glow-run or load it with glow_mlir.load")
        return f"{what} {kind}, not an ONNX model: {use} (it is compiled already)"
    use = ("parse it into a ModuleOp (or write it to a .mlir file) and compile that"
           if path is None else
           "give it a .mlir name to compile or run it (glow_mlir.compile, glow-run), or "
           "transform it with glow-opt")
    return f"{what} {kind}, not an ONNX model: {use}"


def looks_onnx(data: bytes, path: str | None = None) -> bool:
    """Whether `data` (read from `path`) is likely an ONNX model: named `.onnx`, or a
    protobuf that opens with ModelProto's field 1 (ir_version, a small varint), as every
    serializer writes it. A guess for messages only; the ONNX loader decides."""
    if path is not None and path.lower().endswith(".onnx"):
        return True
    return len(data) >= 2 and data[0] == 0x08 and 1 <= data[1] <= 32


def not_mlir(data: bytes, path: str) -> str | None:
    """The message for file `path` handed to a reader of MLIR text (glow-opt) when it is a
    saved model or an ONNX model; None otherwise."""
    if data.startswith(SAVED_MODEL_MAGIC):
        return (f"'{path}' is {SAVED_MODEL}, not MLIR text: run it with glow-run (it is "
                f"compiled already)")
    if sniff(data) is None and looks_onnx(data, path):
        return (f"'{path}' is {ONNX_MODEL}, not MLIR text: import it with glow-compile "
                f"(--emit graph prints the glow graph glow-opt takes)")
    return None


def not_saved(data: bytes | memoryview, what_is: str, path: str | None = None) -> str | None:
    """The message for data handed to the saved-model loader when it is an ONNX model or
    MLIR text; None otherwise. `what_is` opens the message ("'m.onnx' is")."""
    head = bytes(data[:_SNIFF_BYTES])
    if head.startswith(SAVED_MODEL_MAGIC):
        return None
    kind = sniff(head)
    if kind is None and looks_onnx(head, path):
        kind = ONNX_MODEL
    if kind is None:
        return None
    return (f"{what_is} {kind}, not a saved model: compile it with glow_mlir.compile "
            f"(and save that with .save)")
