"""Unpacking an executable bundle's zip, without Django: the same zip-bomb caps as
submission archives (``annotator.base.grading.uploads``: the end record, the declared sizes,
then the inflated bytes counted while they stream, per entry, in all and per compressed
byte), and every problem a :class:`BundleError` that names the entry (a 400 at upload).

The upload and the worker run the same :func:`extract` (the upload with no target: every
entry inflated and counted, nothing written), and every entry is judged by :func:`_layout`
before anything is written, so the two never disagree: a name the worker's filesystem would
refuse (a part longer than ``NAME_MAX``, a path longer than ``MAX_PATH_BYTES``, a file that
is also another entry's folder) is refused at upload, naming the entry. Errors name entries
as the zip names them, never a path of the worker's host."""

from __future__ import annotations

import io
import os
import posixpath
import zipfile
import zlib
from pathlib import Path

from annotator.base.grading.uploads import InflateCounter, UploadRefused, ZipLimits, check_declared, check_directory

ENTRY_POINTS = ("build.sh", "run.sh")
NAME_MAX = 255  # bytes of one part of a path (Linux's NAME_MAX, every filesystem the worker uses)
# Bytes of an entry's path inside the bundle: with the job's folder in front of it (well under
# 1 KiB: FRAMELEDGER_SANDBOX_DIR, the job's name, ``job/app/``), far below PATH_MAX (4096).
MAX_PATH_BYTES = 1024
MiB = 1024 * 1024
# A bundle may carry model weights: larger than a submission, the same ratio cap.
BUNDLE_ZIP_LIMITS = ZipLimits(entries=10_000, entry_bytes=1024 * MiB, total_bytes=1024 * MiB, ratio=200)


class BundleError(ValueError):
    """The bundle cannot be run (not a zip, no build.sh/run.sh, an unsafe path)."""


def _name(info: zipfile.ZipInfo) -> str:
    return info.filename


def _relative(name: str) -> str:
    """An entry's path, refused when it is absolute, has a drive, a backslash folder
    or climbs out (``..``)."""
    if not name or "\x00" in name:
        raise BundleError(f"unsafe path in the bundle: {name!r}")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or "\\" in name:
        raise BundleError(f"unsafe path in the bundle: {name!r} (absolute, a drive or a backslash)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts or not parts:
        raise BundleError(f"unsafe path in the bundle: {name!r}")
    return "/".join(parts)


def _shown(name: str) -> str:
    """An entry's name for a message (a long one shortened in the middle)."""
    return repr(name if len(name) <= 120 else f"{name[:60]}…{name[-40:]}")


def _layout(names: list[str], originals: list[str]) -> None:
    """Refuse what the worker's filesystem would refuse when it writes these files (their
    paths as unpacked): a part longer than ``NAME_MAX`` bytes, a path longer than
    ``MAX_PATH_BYTES``, a file that is also the folder of another file."""
    folders: dict[str, str] = {}
    for name, original in zip(names, originals, strict=True):
        encoded = os.fsencode(name)
        if len(encoded) > MAX_PATH_BYTES:
            raise BundleError(f"{_shown(original)}: the path is {len(encoded)} bytes; at most {MAX_PATH_BYTES}")
        for part in name.split("/"):
            if len(os.fsencode(part)) > NAME_MAX:
                raise BundleError(
                    f"{_shown(original)}: a part of the path is {len(os.fsencode(part))} bytes; at most {NAME_MAX}"
                )
        parts = name.split("/")
        for depth in range(1, len(parts)):
            folders.setdefault("/".join(parts[:depth]), original)
    for name, original in zip(names, originals, strict=True):
        if name in folders:
            raise BundleError(f"{_shown(original)} is a file, and {_shown(folders[name])} needs it as a folder")


def _common_folder(names: list[str]) -> str:
    if not names:
        return ""
    if len(names) == 1:
        return posixpath.dirname(names[0])
    common = posixpath.commonpath(names)  # every name is relative here: never mixed
    return common if all(n != common for n in names) else posixpath.dirname(common)


def extract(bundle: bytes, target: Path | None, limits: ZipLimits = BUNDLE_ZIP_LIMITS) -> list[str]:
    """Unpack ``bundle`` into ``target`` (made), or only check it when ``target`` is
    None (inflated and counted, nothing written). Returns the files' paths."""
    archive = io.BytesIO(bundle)
    try:
        check_directory(archive, limits)
        opened = zipfile.ZipFile(archive)
    except UploadRefused as error:
        raise BundleError(str(error)) from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise BundleError(f"the bundle is not a zip file ({error})") from None
    with opened:
        infos = opened.infolist()
        if len(infos) > limits.entries:
            raise BundleError(f"the bundle holds {len(infos)} entries; at most {limits.entries}")
        infos = [i for i in infos if not i.filename.startswith("__MACOSX/")]
        files = [i for i in infos if not i.is_dir()]
        for info in infos:  # folders too: an unsafe folder name is refused like a file's
            _relative(_name(info))
        file_names = [_relative(_name(i)) for i in files]
        for info in files:
            if info.flag_bits & 0x1:
                raise BundleError(f"{info.filename}: encrypted entries are not supported")
            if info.compress_type not in (
                zipfile.ZIP_STORED,
                zipfile.ZIP_DEFLATED,
                zipfile.ZIP_BZIP2,
                zipfile.ZIP_LZMA,
            ):
                raise BundleError(f"{info.filename}: compression method {info.compress_type} is not supported")
        if len(set(file_names)) != len(file_names):
            raise BundleError("the bundle names a file twice")
        try:
            check_declared(files, limits)
        except UploadRefused as error:
            raise BundleError(str(error)) from None
        prefix = _common_folder(file_names)
        relatives = [name[len(prefix) :].lstrip("/") if prefix else name for name in file_names]
        for info, relative in zip(files, relatives, strict=True):
            if not relative:
                raise BundleError(f"unsafe path in the bundle: {info.filename!r}")
        _layout(relatives, [i.filename for i in files])
        counter = InflateCounter(limits)
        written = []
        for info, relative in zip(files, relatives, strict=True):
            written.append(relative)
            destination = target.joinpath(*relative.split("/")) if target is not None else None
            try:
                if destination is not None:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                with opened.open(info) as source:
                    sink = open(destination, "wb") if destination is not None else None  # noqa: SIM115
                    try:
                        for chunk in counter.count(
                            info.filename, info.compress_size, iter(lambda: source.read(MiB), b"")
                        ):
                            if sink is not None:
                                sink.write(chunk)
                    finally:
                        if sink is not None:
                            sink.close()
            except UploadRefused as error:
                raise BundleError(str(error)) from None
            except OSError as error:  # its message alone: the error's file name is the worker's host path
                raise BundleError(f"cannot unpack {info.filename}: {error.strerror or type(error).__name__}") from None
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, zlib.error, EOFError) as error:
                raise BundleError(f"cannot read {info.filename} from the bundle: {error}") from None
            if destination is not None:
                executable = (info.external_attr >> 16) & 0o111
                os.chmod(destination, 0o755 if executable or relative in ENTRY_POINTS else 0o644)
    missing = [name for name in ENTRY_POINTS if name not in written]
    if missing:
        raise BundleError(f"the bundle has no {' and no '.join(missing)} at its top level")
    return written
