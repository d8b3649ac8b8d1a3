"""Crafted saved models (issue 14 item 5): a `.glow` whose manifest was edited and its
digest made right again, as a tool with a bug or a hand with an editor would leave it.
Every kind is one clear `UserError` from `glow_mlir.load` (a `DamagedError` naming the
field, or the error of a file not ours / of another version) and one line from
`glow-run m.glow` (exit 1, no traceback), never another exception and never a crash
(llvmlite crashes the process on an object LLVM cannot parse: `object_check`)."""

import copy
import hashlib
import json
import struct

import numpy as np
import pytest

import glow_mlir
from glow_mlir import model_zoo
from glow_mlir.ir.errors import UserError
from glow_mlir.runtime import saved_model
from glow_mlir.runtime.saved_manifest import SavedManifest
from glow_mlir.runtime.saved_model import IncompatibleModelError
from glow_mlir.runtime.section_file import (
    DamagedError,
    OtherFormatError,
    WrongKindError,
)
from glow_mlir.targets.cpu.object_check import check_object
from glow_mlir.tools import glow_run
from tool_testing import in_process

HEADER = struct.Struct("<8sIQQ32s")  # the layout section_file.py documents


def _align(n: int) -> int:
    return -(-n // 64) * 64


class Saved:
    """A saved model taken apart: its manifest (with the section table) and the bytes
    of its sections, to put together again with a right digest (`forge`)."""

    def __init__(self, data: bytes):
        _, self.format, manifest_len, _, _ = HEADER.unpack_from(data)
        self.manifest = json.loads(data[HEADER.size:HEADER.size + manifest_len])
        self.sections_bytes = data[_align(HEADER.size + manifest_len):]

    def forge(self, manifest: dict | None = None, sections_bytes: bytes | None = None,
              text: bytes | None = None, manifest_len: int | None = None) -> bytes:
        """The file with `manifest` (or its JSON `text`) and `sections_bytes`, the
        header's lengths and digest computed as the writer does (`manifest_len`
        overrides the header's manifest length)."""
        text = json.dumps(manifest or self.manifest).encode() if text is None else text
        body = text + bytes(_align(HEADER.size + len(text)) - HEADER.size - len(text)) \
            + (self.sections_bytes if sections_bytes is None else sections_bytes)
        length = len(text) if manifest_len is None else manifest_len
        head = HEADER.pack(saved_model.MAGIC, self.format, length, len(body), bytes(32))
        digest = hashlib.sha256(head[:HEADER.size - 32] + body).digest()
        return head[:HEADER.size - 32] + digest + body


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Saved:
    """An MLP (three kernels, one input, one output) saved."""
    model = glow_mlir.compile(model_zoo.mlp(), backend="cpu", cache=False)
    return Saved(bytes(saved_model.to_bytes(model)))


def _edited(saved: Saved, edit) -> bytes:
    manifest = copy.deepcopy(saved.manifest)
    edit(manifest)
    return saved.forge(manifest)


def _refused(tmp_path, capsys, data: bytes, error: type, message: str) -> None:
    """`data` as a file: `load` raises `error` matching `message`, `glow-run` prints it
    in one line and exits 1."""
    path = tmp_path / "m.glow"
    path.write_bytes(data)
    with pytest.raises(error, match=message) as info:
        glow_mlir.load(path)
    assert isinstance(info.value, UserError) and f"'{path}'" in str(info.value)
    code, _, err = in_process(glow_run.main, capsys, path)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"glow-run: error: '{path}'") and info.value.args[0] in err


def test_the_forger_writes_what_save_writes(saved, tmp_path):
    """The helper is right: with nothing edited, the file loads and runs."""
    path = tmp_path / "m.glow"
    path.write_bytes(saved.forge())
    model = glow_mlir.load(path)
    x = np.ones(model.input_shapes["input"], np.float32)
    assert model.run({"input": x})[0].shape == model.output_shapes["logits"]


def _at(manifest: dict, path: tuple):
    """The object holding `path`'s last step, and that step."""
    node = manifest
    for step in path[:-1]:
        node = node[step]
    return node, path[-1]


def _set(*path_and_value):
    """An edit putting the last argument at the path of the others."""
    *path, value = path_and_value

    def edit(manifest):
        node, last = _at(manifest, tuple(path))
        node[last] = value
    return edit


def _drop(*path):
    def edit(manifest):
        node, last = _at(manifest, path)
        del node[last]
    return edit


def _grow(*path_and_step):
    """An edit adding the last argument to the number at the path of the others."""
    *path, step = path_and_step

    def edit(manifest):
        node, last = _at(manifest, tuple(path))
        node[last] += step
    return edit


def _resize_constant(change):
    """An edit of the constant section's [offset, length] in the section table."""
    def edit(manifest):
        span = manifest["sections"]["constant"]
        span[:] = change(*span)
    return edit


MANIFEST_EDITS = [
    # a field missing, unknown, of the wrong type, out of its range
    *[(_drop(f), f"'{f}' is missing") for f in SavedManifest.FIELDS],
    (_set("extra", 1), "'extra' is not a field of this format"),
    # the optional input value checks (ir/input_checks.py)
    (_set("input_checks", {}), "'input_checks' is an object, not a list"),
    (_set("input_checks", [{"input": "nope", "what": "w", "low": 0, "high": 2,
                            "finite": False, "sizes": []}]),
     r"'input_checks\[0\].input' is 'nope', not an input"),
    (_set("input_checks", [{"input": "input", "what": "w", "low": 0.5, "high": 2,
                            "finite": False, "sizes": []}]),
     r"'input_checks\[0\].low' is a number, not an integer or null"),
    (_set("input_checks", [{"input": "input", "what": "w", "low": None, "high": None,
                            "finite": 1, "sizes": []}]),
     r"'input_checks\[0\].finite' is an integer, not a boolean"),
    (_set("input_checks", [{"input": "input", "what": "w", "low": None, "high": None,
                            "finite": False, "sizes": [-3]}]),
     r"'input_checks\[0\].sizes\[0\]' is -3, not in"),
    (_set("input_checks", [{"input": "input"}]), r"'input_checks\[0\].what' is missing"),
    # the optional thread count the code was compiled for
    (_set("num_threads", "2"), "'num_threads' is a string, not an integer"),
    (_set("num_threads", 0), r"'num_threads' is 0, not in \[1, 256\]"),
    (_set("num_threads", 999), r"'num_threads' is 999, not in \[1, 256\]"),
    (_set("network", 5), "'network' is an integer, not a string"),
    (_set("network", ""), "'network' is empty"),
    (_set("network", "a\0b"), "'network' holds a NUL"),
    (_set("network", "other_net"), "cannot be linked .*no function @other_net"),
    (_set("glow_mlir", None), "'glow_mlir' is null, not a string"),
    (_set("target", []), "'target' is a list, not an object"),
    (_drop("target", "cpu"), "'target.cpu' is missing"),
    (_set("target", "loop_unrolling", 1), "'target.loop_unrolling' is an integer, not a"),
    (_set("target", "features", "avx2"), r"'target.features' is not a list of \+feature"),
    (_set("inputs", {}), "'inputs' is an object, not a list"),
    (_set("inputs", [7]), r"'inputs\[0\]' is an integer, not an object"),
    (_set("outputs", []), "'outputs' is empty"),
    (_drop("inputs", 0, "dtype"), r"'inputs\[0\].dtype' is missing"),
    (_set("inputs", 0, "dtype", "object"), r"'inputs\[0\].dtype' is 'object', not a numeric"),
    (_set("inputs", 0, "dtype", "float99"), r"'inputs\[0\].dtype' is 'float99', not a dtype"),
    (_set("inputs", 0, "dtype", "float64"), r"'inputs\[0\].size' is 3136: a float64 array"),
    (_set("inputs", 0, "shape", "1x784"), r"'inputs\[0\].shape' is a string, not a list"),
    (_set("inputs", 0, "shape", [1, -784]), r"'inputs\[0\].shape\[1\]' is -784, not in"),
    (_set("inputs", 0, "shape", [1, 78.4]), r"'inputs\[0\].shape\[1\]' is a number"),
    (_set("inputs", 0, "shape", [1 << 40, 1 << 40]), r"'inputs\[0\].size' is 3136: a "),
    (_set("inputs", 0, "shape", [1] * 65), r"'inputs\[0\].shape' has 65 dimensions"),
    (_set("inputs", 0, "size", 3140), r"'inputs\[0\].size' is 3140: a float32 array of "),
    (_set("inputs", 0, "offset", True), r"'inputs\[0\].offset' is a boolean, not an int"),
    (_set("inputs", 0, "offset", -64), r"'inputs\[0\].offset' is -64, not in"),
    (_set("inputs", 0, "offset", 1 << 60), r"'inputs\[0\].offset' is 1152921504606846976"),
    (_set("inputs", 0, "offset", 3136), "place '(input|logits)' at offset 3136, inside"),
    (_set("inputs", 0, "offset", 32), "place 'logits' at offset 3136, inside 'input'"),
    (_set("outputs", 0, "offset", 3200), ("'areas.mutable_size' is 3200: the inputs and "
                                         "outputs end at 3240, so the mutable area is 3264")),
    (_set("outputs", 0, "offset", 3140), "place 'logits' at offset 3140, not a multiple"),
    (_set("outputs", 0, "name", 7), r"'outputs\[0\].name' is an integer"),
    (_set("outputs", [{"name": "logits", "dtype": "float32", "shape": [1, 10], "offset":
                       3136, "size": 40}] * 2), r"'outputs\[1\].name' repeats 'logits'"),
    # the memory plan against the signature and the sections
    (_set("areas", "mutable_size", 64), "'areas.mutable_size' is 64: the inputs and "),
    (_set("areas", "mutable_size", -1), "'areas.mutable_size' is -1, not in"),
    (_set("areas", "activations_size", 0), ("'areas.activations_size' is 0, less than the "
                                           "memory plan's 1536")),
    (_set("areas", "activations_size", 1 << 62), ("'areas.activations_size' is "
                                                 "4611686018427387904, not in")),
    (_set("areas", "constant_size", 64), ("'areas.constant_size' is 64, less than the "
                                         "memory plan's 940584 bytes")),
    (_grow("areas", "constant_size", 64), (r"'areas.constant_size' is 940672; the constant "
                                          r"section has 940608 bytes")),
    (_set("areas", "alignment", 48), "'areas.alignment' is 48, not a power of two"),
    (_set("areas", "alignment", 0), "'areas.alignment' is 0, not a power of two"),
    (_set("areas", {"constant_size": 0}), "'areas.mutable_size' is missing"),
    (_set("memory", "none"), "'memory' is a string, not an object"),
    (_set("memory", "peak_live_bytes", 1 << 20), "'memory.peak_live_bytes' is more than"),
    (_drop("memory", "unshared_bytes"), "'memory.unshared_bytes' is missing"),
    (_set("objects", []), "'objects' is empty"),
    (_set("objects", "entry.o"), "'objects' is a string, not a list"),
    (_set("objects", ["constant"]), r"'objects\[0\]' names 'constant', not an object"),
    (_set("objects", ["entry.o", "entry.o"]), r"'objects\[1\]' repeats 'entry.o'"),
    (_set("objects", ["entry.o", "none.o"]), r"'objects\[1\]' names 'none.o'"),
    (_set("objects", ["entry.o"]), "'sections' hold 'kernel.0.o', which no field names"),
    # the section table: overlapping, out of the file, of the wrong type
    (_drop("sections"), "section table is missing"),
    (_set("sections", [1, 2]), "section table is a JSON list, not an object"),
    (_set("sections", "entry.o", None), "gives section 'entry.o' as null, not"),
    (_set("sections", "entry.o", [0, "1"]), "gives section 'entry.o' as .*, not"),
    (_resize_constant(lambda o, n: [0, n]), "puts section 'constant' at offset 0, where"),
    (_resize_constant(lambda o, n: [o + 64, n - 64]), "puts section 'constant' at offset"),
    (_resize_constant(lambda o, n: [o, 1 << 40]), (r"gives section 'constant' 1099511627776 "
                                                  r"bytes at offset \d+, past the end")),
    (_resize_constant(lambda o, n: [o, -5]), "gives section 'constant' -5 bytes"),
    (_resize_constant(lambda o, n: [o, n - 1]), "ends its sections at"),
    (_set("sections", "", [0, 0]), "section table has a section without a name"),
]


@pytest.mark.parametrize("edit,message", MANIFEST_EDITS,
                         ids=[f"{i}" for i in range(len(MANIFEST_EDITS))])
def test_an_edited_manifest_is_one_clear_error(saved, tmp_path, capsys, edit, message):
    _refused(tmp_path, capsys, _edited(saved, edit), DamagedError, message)


def test_the_versions_and_backend_are_checked_after_the_types(saved, tmp_path, capsys):
    _refused(tmp_path, capsys, _edited(saved, _set("backend", "interpreter")),
             IncompatibleModelError, "holds code of backend 'interpreter'")
    _refused(tmp_path, capsys, _edited(saved, _set("llvm", "1.0")),
             IncompatibleModelError, "was saved by LLVM 1.0")
    _refused(tmp_path, capsys, _edited(saved, _set("target", "triple", "riscv64-linux")),
             IncompatibleModelError, "holds code for riscv64-linux")


@pytest.mark.parametrize("how,error,message", [
    ("empty", WrongKindError, "is not a glow-mlir saved model"),
    ("magic", WrongKindError, "is not a glow-mlir saved model"),
    ("cut-in-header", DamagedError, "is truncated: 40 bytes"),
    ("truncated", DamagedError, "is truncated: .* its header says"),
    ("body-length-edited", DamagedError, "its header says .* \\(or that length is damaged\\)"),
    ("other-format", OtherFormatError, "in format 1; this glow-mlir reads format 2"),
    ("header-edited", DamagedError, "do not match their sha256 digest"),
    ("section-edited", DamagedError, "do not match their sha256 digest"),
    ("manifest-longer-than-body", DamagedError, "a manifest of 99999999 bytes in a body of"),
    ("manifest-not-json", DamagedError, "its manifest is not JSON"),
    ("manifest-not-utf8", DamagedError, "its manifest is not JSON"),
    ("manifest-too-deep", DamagedError, "its manifest is not JSON"),
    ("manifest-a-list", DamagedError, "its manifest is a JSON list, not an object"),
])
def test_a_bad_file_is_one_clear_error(saved, tmp_path, capsys, how, error, message):
    good = saved.forge()
    data = {
        "empty": lambda: b"",
        "magic": lambda: b"GLOWMLIX" + good[8:],
        "cut-in-header": lambda: good[:40],
        "truncated": lambda: good[:-1],
        "body-length-edited": lambda: good[:20]
        + struct.pack("<Q", HEADER.unpack_from(good)[3] + 119) + good[28:],
        "other-format": lambda: good[:8] + struct.pack("<I", 1) + good[12:],
        "header-edited": lambda: good[:12] + struct.pack("<Q", HEADER.unpack_from(good)[2] - 1)
        + good[20:],
        "section-edited": lambda: good[:-1] + bytes([good[-1] ^ 1]),
        "manifest-longer-than-body": lambda: saved.forge(manifest_len=99999999),
        "manifest-not-json": lambda: saved.forge(text=b"{not json"),
        "manifest-not-utf8": lambda: saved.forge(text=b'{"a": "\xff"}'),
        "manifest-too-deep": lambda: saved.forge(text=b"[" * 100000 + b"]" * 100000),
        "manifest-a-list": lambda: saved.forge(text=b"[]"),
    }[how]()
    _refused(tmp_path, capsys, data, error, message)


# ---------------------------------------------------------------- forged object code


def _forge_object(saved: Saved, name: str, change) -> bytes:
    """The file with object section `name`'s bytes changed (its length kept)."""
    offset, length = saved.manifest["sections"][name]
    code = bytearray(saved.sections_bytes[offset:offset + length])
    change(code)
    data = bytearray(saved.sections_bytes)
    data[offset:offset + length] = code
    return saved.forge(sections_bytes=bytes(data))


def _put(offset: int, fmt: str, value):
    return lambda code: struct.pack_into(fmt, code, offset, value)


def _zero_from(offset: int):
    def change(code):
        code[offset:] = bytes(len(code) - offset)
    return change


@pytest.mark.parametrize("change,message", [
    (_zero_from(0), "not an ELF file"),
    (_put(4, "B", 1), "not a little-endian 64-bit ELF"),
    (_put(16, "<H", 2), "of ELF type 2, not relocatable"),
    (_put(18, "<H", 40), "for ELF machine 40, not x86_64"),
    (_put(58, "<H", 32), "wrong entry sizes"),
    (_put(40, "<Q", 1 << 62), "section table lies outside it"),
    (_put(60, "<H", 0xFFFF), "section table lies outside it"),
    (_put(62, "<H", 0xFFFF), "section table lies outside it"),
])
def test_forged_object_headers_are_refused_before_llvm_sees_them(saved, tmp_path, capsys,
                                                                change, message):
    """llvmlite turns an object LLVM cannot parse into a null one, and using it crashes
    the process: reaching LLVM with one of these would end the test run."""
    _refused(tmp_path, capsys, _forge_object(saved, "entry.o", change), DamagedError,
             f"its code cannot be linked \\(an object('s)? .*{message}")


def _sections_of(code: bytes) -> np.ndarray:
    from glow_mlir.targets.cpu.object_check import _EHDR, _SHDR

    fields = _EHDR.unpack_from(code)
    return np.frombuffer(code, _SHDR, fields[12], fields[6])


def _edit_section(kind: int, field: str, value_of):
    """A change of `field` of the object's first section of ELF type `kind`, to
    `value_of(its section header, the object's length)`."""
    def change(code):
        from glow_mlir.targets.cpu.object_check import _EHDR, _SHDR

        table = _EHDR.unpack_from(code)[6]
        sections = _sections_of(bytes(code))
        i = int(np.flatnonzero(sections["type"] == kind)[0])
        where = table + i * _SHDR.itemsize + _SHDR.fields[field][1]
        fmt = "<Q" if _SHDR.fields[field][0].itemsize == 8 else "<I"
        struct.pack_into(fmt, code, where, value_of(sections[i], len(code)))
    return change


def _edit_relocation(field: str, value_of):
    """A change of the first relocation of the object (`value_of(its section's header
    and of the relocated section's)`)."""
    def change(code):
        from glow_mlir.targets.cpu.object_check import _RELA

        sections = _sections_of(bytes(code))
        i = int(np.flatnonzero(sections["type"] == 4)[0])
        where = int(sections[i]["offset"]) + _RELA.fields[field][1]
        struct.pack_into("<Q", code, where, value_of(sections[i],
                                                     sections[sections[i]["info"]]))
    return change


@pytest.mark.parametrize("change,message", [
    (_edit_section(1, "offset", lambda s, n: n + 1), "sections lie outside it"),
    (_edit_section(1, "size", lambda s, n: 1 << 63), "sections lie outside it"),
    (_edit_section(2, "link", lambda s, n: 999), "sections lie outside it"),
    (_edit_section(2, "entsize", lambda s, n: 16), "has entries of a wrong size"),
    (_edit_section(2, "type", lambda s, n: 3), "symbol table|section names"),
    (_edit_section(3, "size", lambda s, n: 0), "names lie outside their table"),
    (_edit_section(4, "info", lambda s, n: 0), "relocations apply to no section"),
    (_edit_section(4, "type", lambda s, n: 9), "REL relocations"),
    (_edit_relocation("info", lambda s, t: (1 << 40) | 2), "relocations name symbols"),
    (_edit_relocation("offset", lambda s, t: int(t["size"]) - 2), "relocations lie outside"),
    (_edit_relocation("offset", lambda s, t: (1 << 64) - 1), "relocations lie outside"),
])
def test_forged_object_tables_are_refused_before_llvm_sees_them(saved, tmp_path, capsys,
                                                               change, message):
    _refused(tmp_path, capsys, _forge_object(saved, "entry.o", change), DamagedError,
             f"its code cannot be linked \\(an object('s)? .*({message})")


def test_the_object_check_passes_what_llvm_writes(saved):
    """Every object of a compiled model passes (a check that refused good code would
    refuse every saved model): here the MLP's, and ResNet-like kernels with their
    relocations to the constant pools."""
    model = glow_mlir.compile(model_zoo.resnet18(image=32, classes=10), backend="cpu",
                              cache=False)
    objects = model.executor.entry.object_code
    assert len(objects) > 5
    for code in objects:
        check_object(code, "x86_64")
    with pytest.raises(ValueError, match="for ELF machine 62, not aarch64"):
        check_object(objects[0], "aarch64")


def _leaves(node, path=()):
    """The path of every value in a JSON tree that is not a list or an object, and of
    every list and object too."""
    yield path
    children = node.items() if isinstance(node, dict) else \
        enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _leaves(child, (*path, key))


ODD_VALUES = [None, True, -1, 1 << 70, 2.5, "", "x", [], {}, [-1, 1 << 63]]


def test_any_field_replaced_by_any_odd_value_is_a_user_error_or_loads(saved):
    """Every field of the manifest, one at a time, replaced by values of every JSON type
    and out of range: loading raises a UserError or (for a value that happens to fit)
    gives a model; never another exception (and never a crash)."""
    refused = 0
    for path in list(_leaves(saved.manifest))[1:]:
        for value in ODD_VALUES:
            data = _edited(saved, _set(*path, value))
            try:
                saved_model.from_bytes(data)
            except UserError:
                refused += 1
    assert refused > 0.9 * (len(list(_leaves(saved.manifest))) - 1) * len(ODD_VALUES)
