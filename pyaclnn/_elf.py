"""Just enough ELF reading to answer "would this shared library load here?" without running it.

:func:`dynamic_info` returns a library's NEEDED entries, its RPATH/RUNPATH and its undefined and
defined dynamic symbols (64-bit little-endian ELF, the only kind CANN and torch_npu ship for
x86_64 and aarch64). Used by ``python -m pyaclnn info`` to check torch_npu against the emulator.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ._exceptions import InvalidArgumentError

__all__ = ["DynamicInfo", "dynamic_info"]

_SHT_DYNSYM, _SHT_DYNAMIC = 11, 6
_DT_NEEDED, _DT_RPATH, _DT_RUNPATH = 1, 15, 29
_SHN_UNDEF = 0


@dataclass
class DynamicInfo:
    needed: list[str] = field(default_factory=list)
    rpath: list[str] = field(default_factory=list)
    undefined: set[str] = field(default_factory=set)   # undefined, non-weak dynamic symbols
    defined: set[str] = field(default_factory=set)     # exported (defined, global or weak)


def _cstr(blob: bytes, offset: int) -> str:
    end = blob.index(b"\0", offset)
    return blob[offset:end].decode("utf-8", "replace")


def dynamic_info(path: str) -> DynamicInfo:
    """Reads the dynamic section and symbol table of ``path``; raises ValueError if not ELF64 LE."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise InvalidArgumentError(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    info = DynamicInfo()
    for _name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if sh_type not in (_SHT_DYNSYM, _SHT_DYNAMIC):
            continue
        strtab_off, strtab_size = sections[link][4], sections[link][5]
        strtab = data[strtab_off:strtab_off + strtab_size]
        if sh_type == _SHT_DYNAMIC:
            for i in range(size // 16):
                tag, val = struct.unpack_from("<qQ", data, offset + 16 * i)
                if tag == _DT_NEEDED:
                    info.needed.append(_cstr(strtab, val))
                elif tag in (_DT_RPATH, _DT_RUNPATH):
                    info.rpath += _cstr(strtab, val).split(":")
            continue
        for i in range(1, size // (entsize or 24)):
            st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", data, offset + i * 24)
            name = _cstr(strtab, st_name)
            bind = st_info >> 4
            if not name:
                continue
            if st_shndx == _SHN_UNDEF:
                if bind != 2:             # STB_WEAK undefined symbols may stay unresolved
                    info.undefined.add(name)
            elif bind in (1, 2):          # STB_GLOBAL, STB_WEAK
                info.defined.add(name)
    return info
