"""The symbol table of an ELF64 little-endian object file (numba's cached object code).

Two readers need it: the cache loader (``_cache_load``), which takes the names a cached
library defines from its object code rather than from parsing its LLVM bitcode, and
``benchmarks/profile_stages.py``, which names the kernels' machine code for perf.

Layout read (the System V gABI): the ELF header gives the section header table's offset
(``e_shoff`` at 0x28), entry size and count (``e_shentsize``, ``e_shnum`` at 0x3A); a
section of type SHT_SYMTAB (2) holds 24-byte symbols, their names in the string table its
``sh_link`` names::

    symbol: st_name u32 | st_info u8 (binding << 4 | type) | st_other u8 | st_shndx u16
            | st_value u64 | st_size u64
"""

from __future__ import annotations

import struct
from typing import NamedTuple

SHT_SYMTAB = 2
STT_OBJECT = 1
STT_FUNC = 2
STB_GLOBAL = 1
STB_WEAK = 2
SHN_UNDEF = 0


class Symbol(NamedTuple):
    name: str
    kind: int  # STT_*
    binding: int  # STB_*
    defined: bool  # in a section of this object (not SHN_UNDEF)
    size: int  # [bytes]


def is_elf64(blob: bytes) -> bool:
    """Whether ``blob`` is an ELF64 little-endian object (Linux on x86-64 and arm64; macOS
    writes Mach-O, Windows COFF)."""
    return blob[:4] == b"\x7fELF" and len(blob) > 5 and blob[4] == 2 and blob[5] == 1


def symbols(blob: bytes) -> list[Symbol]:
    """Every named symbol of the object ``blob``. Raises ValueError when ``blob`` is not an
    ELF64 little-endian object."""
    if not is_elf64(blob):
        raise ValueError("not an ELF64 little-endian object")
    (shoff,) = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", blob, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize)
                for i in range(shnum)]
    out = []
    for _, kind, _, _, off, size, link, _, _, entsize in sections:
        if kind != SHT_SYMTAB or entsize == 0:
            continue
        strtab = sections[link][4]
        for name, info, _, shndx, _, sym_size in struct.iter_unpack(
                "<IBBHQQ", blob[off:off + size - size % entsize]):
            if name == 0:
                continue
            end = blob.index(b"\0", strtab + name)
            out.append(Symbol(blob[strtab + name:end].decode(), info & 0xF, info >> 4,
                              shndx != SHN_UNDEF, sym_size))
    return out


STT_SECTION = 3
STT_FILE = 4


def defined(blob: bytes) -> set[str]:
    """Names of the functions and data the object defines, of any binding (local ones are
    the module's internal definitions). Private definitions of the module it was compiled
    from have no symbol: their names are missing."""
    return {s.name for s in symbols(blob)
            if s.defined and s.kind not in (STT_SECTION, STT_FILE)}
