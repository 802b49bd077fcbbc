"""Caps on uploaded arrays (``.npy``, and ``.npz``: a zip of ``.npy`` members), read
without ever holding an array in memory.

The same caps as every other archive-like upload (``annotator.base.grading.uploads``:
``ZipLimits``, the directory read before ``zipfile`` parses it, declared sizes and the
compression ratio checked before anything is inflated), plus the ``.npy`` header: the
shape and dtype it declares are judged (kind, rows, bytes) before one byte of data is
read, and the data is then streamed in chunks of ``CHUNK`` bytes, counted against what the
header declared, each chunk checked (finite numbers, non-empty texts) and dropped. So a
header that claims 10^16 floats, or a 1 MB member that inflates to 1 GiB, is refused with
the process's memory where it was; a valid file costs one chunk.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from annotator.base.grading.uploads import MiB, UploadRefused, ZipLimits, check_declared, check_directory

CHUNK = 1 * MiB


class ArrayRefused(UploadRefused):
    """An uploaded array that is not what it must be, or over a cap; the message says which."""


@dataclass(frozen=True)
class ArrayLimits:
    zip: ZipLimits  # for an .npz
    array_bytes: int  # declared shape x item size of one array
    rows: int  # its first dimension


# CLIP frame features and text features for moment search: 64 MiB of float32 is 16.7 M
# numbers (32,000 clips of 512: 18 hours of video at 2 s a clip).
SEARCH_FEATURES = ArrayLimits(
    zip=ZipLimits(entries=16, entry_bytes=64 * MiB + 4096, total_bytes=160 * MiB, ratio=100, directory_bytes=64 * 1024),
    array_bytes=64 * MiB,
    rows=200_000,
)


@dataclass(frozen=True)
class Declared:
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def read_header(stream: BinaryIO, name: str) -> Declared:
    """The shape and dtype an ``.npy`` stream declares (its header only)."""
    try:
        version = npy_format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(stream)
        elif version in {(2, 0), (3, 0)}:
            shape, fortran, dtype = npy_format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as error:
        raise ArrayRefused(f"{name}: not a readable .npy array ({error})") from None
    return Declared(tuple(int(n) for n in shape), dtype, bool(fortran))


def check_declared_array(declared: Declared, name: str, limits: ArrayLimits, kinds: str, ndim: tuple[int, ...]) -> None:
    """Kind, dimensions, rows and bytes of the declared array, before its data is read."""
    if declared.dtype.hasobject or declared.dtype.kind not in kinds:
        raise ArrayRefused(f"{name}: an array of {declared.dtype} is not accepted here")
    if len(declared.shape) not in ndim:
        raise ArrayRefused(f"{name}: expected {' or '.join(map(str, ndim))} dimensions, got shape {declared.shape}")
    rows = declared.shape[0] if declared.shape else 1
    if rows > limits.rows:
        raise ArrayRefused(f"{name}: {rows} rows declared; at most {limits.rows}")
    if declared.nbytes > limits.array_bytes:
        raise ArrayRefused(
            f"{name}: shape {declared.shape} of {declared.dtype} is {declared.nbytes} bytes;"
            f" at most {limits.array_bytes}"
        )


def scan_data(stream: BinaryIO, declared: Declared, name: str, check: Callable[[np.ndarray], str | None]) -> None:
    """Stream the array's data in chunks of whole items, exactly as many bytes as
    declared; ``check`` returns what is wrong with a chunk, or None."""
    item = declared.dtype.itemsize or 1
    step = max(item, CHUNK // item * item)
    left = declared.nbytes
    while left > 0:
        chunk = stream.read(min(step, left))
        if not chunk:
            raise ArrayRefused(f"{name}: the data ends before the {declared.nbytes} bytes its header declares")
        if len(chunk) % item:  # a short read mid-item: take the rest of the item
            rest = stream.read(item - len(chunk) % item)
            chunk += rest
            if len(chunk) % item:
                raise ArrayRefused(f"{name}: the data ends inside an item")
        left -= len(chunk)
        problem = check(np.frombuffer(chunk, dtype=declared.dtype))
        if problem:
            raise ArrayRefused(f"{name}: {problem}")
    if stream.read(1):
        raise ArrayRefused(f"{name}: more data than its header declares")


def finite_floats(values: np.ndarray) -> str | None:
    return None if np.all(np.isfinite(values)) else "numbers must be finite (no NaN or infinity)"


def non_empty_texts(values: np.ndarray) -> str | None:
    return None if all(str(t).strip() for t in values) else "texts must not be empty"


@dataclass(frozen=True)
class Member:
    kinds: str  # numpy dtype kinds accepted ("f" floats, "U" text)
    ndim: tuple[int, ...]
    check: Callable[[np.ndarray], str | None]


FEATURES = Member("f", (1, 2), finite_floats)


def inspect_npy(stream: BinaryIO, name: str, limits: ArrayLimits, member: Member) -> Declared:
    """An ``.npy`` stream judged whole without holding it: its declared shape."""
    declared = read_header(stream, name)
    check_declared_array(declared, name, limits, member.kinds, member.ndim)
    scan_data(stream, declared, name, member.check)
    return declared


def inspect_npz(
    archive: BinaryIO,
    name: str,
    limits: ArrayLimits,
    members: dict[str, Member],
    optional: frozenset[str] = frozenset(),
) -> dict[str, Declared]:
    """An ``.npz`` judged member by member without holding one: the declared shape of each
    named member (``members``; those in ``optional`` may be absent)."""
    check_directory(archive, limits.zip)
    try:
        with zipfile.ZipFile(archive) as opened:
            entries = opened.infolist()
            check_declared(entries, limits.zip)
            by_name = {info.filename: info for info in entries}
            found = {}
            for key, member in members.items():
                info = by_name.get(f"{key}.npy")
                if info is None:
                    if key in optional:
                        continue
                    raise ArrayRefused(
                        f"{name}: no '{key}' array (has {sorted(n.removesuffix('.npy') for n in by_name)})"
                    )
                with opened.open(info) as stream:
                    found[key] = inspect_npy(stream, f"{name}[{key}]", limits, member)
            return found
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError, zlib.error) as error:
        raise ArrayRefused(f"{name}: not a readable .npz ({error})") from None
