"""The module names a PyInstaller executable carries, read from its archive without PyInstaller.

Why: the image and the linux/amd64 plugin are frozen by PyInstaller (scripts/freeze.py). Their pure-Python
modules are not files one can list but entries of a PYZ archive inside the executable's appended CArchive,
and the tests must show what is (kube-rehash, its dependencies) and what is not in there (pip, the build
tools, the API simulator, cryptography). The format is PyInstaller's (PyInstaller/archive/readers.py): a
cookie at the end (magic, archive length, table offset and length), a table of entries, one of type `z` the
PYZ: magic, the Python magic number, the offset of a marshalled table of module names.
"""

from __future__ import annotations

import marshal
import struct

COOKIE_MAGIC = b"MEI\014\013\012\013\016"
COOKIE = "!8sIIII64s"
ENTRY = "!IIIIBc"
PYZ_MAGIC = b"PYZ\0"


def frozen_modules(executable: bytes) -> set[str]:
    """Every module name in the PYZ archives of `executable` (a PyInstaller onedir or onefile executable)."""
    cookie_at = executable.rfind(COOKIE_MAGIC)
    assert cookie_at >= 0, "not a PyInstaller executable (no archive cookie)"
    _, length, toc_offset, toc_length, _, _ = struct.unpack_from(COOKIE, executable, cookie_at)
    start = cookie_at + struct.calcsize(COOKIE) - length
    toc = executable[start + toc_offset : start + toc_offset + toc_length]
    modules: set[str] = set()
    at = 0
    while at < len(toc):
        entry_length, offset, _, _, _, typecode = struct.unpack_from(ENTRY, toc, at)
        at += entry_length
        if typecode != b"z":
            continue
        pyz = start + offset
        assert executable[pyz : pyz + 4] == PYZ_MAGIC, "a PYZ entry without the PYZ magic"
        (table_offset,) = struct.unpack_from("!i", executable, pyz + 8)
        modules |= {str(name) for name, _ in marshal.loads(executable[pyz + table_offset :])}  # noqa: S302 (our own build)
    return modules
