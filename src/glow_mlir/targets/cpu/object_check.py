"""A structural check of an ELF64 relocatable object before LLVM links it.

llvmlite wraps a failed parse (`ObjectFile::createObjectFile`'s error) as an object
that crashes the process when it is used, and MCJIT aborts on an object its loader
refuses; so bytes that did not come straight from our compile (a saved model, a cache
entry) are checked here first: the header, the section table, every section's bounds,
the symbol table and each relocation's symbol and place. A ValueError says what is
wrong. This finds damage and a manifest that points at the wrong bytes; it does not
make machine code from someone else safe to run.
"""

from __future__ import annotations

import struct

import numpy as np

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = np.dtype([("name", "<u4"), ("type", "<u4"), ("flags", "<u8"), ("addr", "<u8"),
                  ("offset", "<u8"), ("size", "<u8"), ("link", "<u4"), ("info", "<u4"),
                  ("addralign", "<u8"), ("entsize", "<u8")])
_SYM = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"),
                 ("value", "<u8"), ("size", "<u8")])
_RELA = np.dtype([("offset", "<u8"), ("info", "<u8"), ("addend", "<i8")])

ET_REL = 1
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 2, 3, 4, 8, 9
SHN_LORESERVE = 0xFF00
WIDE = (1, 24, 257, 260)
"""Relocation types that write 8 bytes (x86-64's R_X86_64_64 and PC64, AArch64's ABS64
and PREL64); the others write at most 4."""
MACHINES = {"x86_64": 62, "aarch64": 183}
"""e_machine of the architectures an LLVM triple names (others are not checked)."""


def check_object(data: bytes | memoryview, arch: str) -> None:
    """Raise ValueError unless `data` is a little-endian ELF64 relocatable object for
    `arch` (a triple's first part) whose tables all lie inside it."""
    size = len(data)
    if size < _EHDR.size or bytes(data[:4]) != b"\x7fELF":
        raise ValueError("an object is not an ELF file")
    (ident, etype, machine, _, _, _, shoff, _, ehsize, _, _, shentsize, shnum,
     shstrndx) = _EHDR.unpack_from(data)
    if ident[4:7] != b"\x02\x01\x01":
        raise ValueError("an object is not a little-endian 64-bit ELF file")
    if etype != ET_REL:
        raise ValueError(f"an object is of ELF type {etype}, not relocatable")
    if arch in MACHINES and machine != MACHINES[arch]:
        raise ValueError(f"an object is for ELF machine {machine}, not {arch}")
    if ehsize != _EHDR.size or shentsize != _SHDR.itemsize:
        raise ValueError("an object's ELF header gives wrong entry sizes")
    if not 0 < shnum or shoff % 8 or shoff + shnum * _SHDR.itemsize > size \
            or shstrndx >= shnum:
        raise ValueError("an object's section table lies outside it")
    sections = np.frombuffer(data, _SHDR, shnum, shoff)
    stored = sections["type"] != SHT_NOBITS
    ends = sections["offset"].astype(object) + sections["size"].astype(object)
    if any(e > size for e, s in zip(ends, stored) if s) or (sections["link"] >= shnum).any():
        raise ValueError("an object's sections lie outside it")
    if (sections["type"][shstrndx] != SHT_STRTAB
            or (sections["name"] >= sections["size"][shstrndx]).any()):
        raise ValueError("an object's section names lie outside their table")
    symtabs = np.flatnonzero(sections["type"] == SHT_SYMTAB)
    if len(symtabs) > 1:
        raise ValueError("an object has more than one symbol table")
    symbols = _symbols(data, sections, int(symtabs[0])) if len(symtabs) else None
    for rel in np.flatnonzero((sections["type"] == SHT_RELA) | (sections["type"] == SHT_REL)):
        _check_relocations(data, sections, int(rel), symbols)


def _table(data, sections, i: int, entry: np.dtype) -> np.ndarray:
    s = sections[i]
    if s["entsize"] != entry.itemsize or s["size"] % entry.itemsize:
        raise ValueError(f"an object's section {i} has entries of a wrong size")
    return np.frombuffer(data, entry, int(s["size"]) // entry.itemsize, int(s["offset"]))


def _symbols(data, sections, i: int) -> np.ndarray:
    symbols = _table(data, sections, i, _SYM)
    names = sections[sections["link"][i]]
    if names["type"] != SHT_STRTAB or (symbols["name"] >= names["size"]).any():
        raise ValueError("an object's symbol names lie outside their table")
    shndx = symbols["shndx"]
    if ((shndx >= len(sections)) & (shndx < SHN_LORESERVE)).any():
        raise ValueError("an object's symbols name sections it does not have")
    return symbols


def _check_relocations(data, sections, i: int, symbols: np.ndarray | None) -> None:
    if sections["type"][i] == SHT_REL:
        raise ValueError("an object has REL relocations (LLVM writes RELA on x86-64)")
    relocations = _table(data, sections, i, _RELA)
    if not len(relocations):
        return
    if symbols is None or sections["link"][i] != np.flatnonzero(
            sections["type"] == SHT_SYMTAB)[0]:
        raise ValueError("an object's relocations have no symbol table")
    target = int(sections["info"][i])
    if not 0 < target < len(sections):
        raise ValueError("an object's relocations apply to no section")
    if ((relocations["info"] >> 32) >= len(symbols)).any():
        raise ValueError("an object's relocations name symbols it does not have")
    room = np.uint64(sections["size"][target])
    offsets = relocations["offset"]
    widths = np.where(np.isin(relocations["info"] & 0xFFFFFFFF, WIDE), 8, 4).astype(np.uint64)
    if ((offsets > room) | (room - np.minimum(offsets, room) < widths)).any():
        raise ValueError("an object's relocations lie outside their section")
