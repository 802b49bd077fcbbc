"""Executable bundles shipped with the repository: the reference moment-search system."""

from __future__ import annotations

import importlib.util
import io
import zipfile
from pathlib import Path

REFERENCE_DIR = Path(__file__).parent / "reference"
REFERENCE_LABEL = "reference/retrieval-zero-shot"


def _add_package(archive: zipfile.ZipFile, package: Path) -> None:
    for path in sorted(package.rglob("*.py")):
        archive.write(path, f"{package.name}/{path.relative_to(package)}")


def reference_bundle(encoder: str = "hash") -> bytes:
    """The reference system as a zip: ``build.sh``, ``run.sh``, ``encoder.txt``, ``fallback.py``
    (middle thirds for a corpus without readable features) and the
    ``retrieval`` and ``scoring`` packages it runs (``retrieval`` imports ``scoring``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("build.sh", "run.sh"):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            archive.writestr(info, (REFERENCE_DIR / name).read_bytes())
        archive.writestr("encoder.txt", encoder)
        archive.write(REFERENCE_DIR / "fallback.py", "fallback.py")
        for package in ("retrieval", "scoring"):  # located, not imported (retrieval imports torch)
            _add_package(archive, Path(importlib.util.find_spec(package).origin).parent)
    return buffer.getvalue()
