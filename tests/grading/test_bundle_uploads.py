"""Bundle zips that tried to break the upload (issue 22, case 8): every one is a 400 that
names the entry, nothing is stored, and a zip bomb is refused before it is inflated
(the caps of submission archives: ``annotator.base.grading.uploads``)."""

from __future__ import annotations

import io
import json
import os
import time
import zipfile

import pytest

from annotator.base.grading import bundle_zip
from annotator.base.grading.uploads import ZipLimits
from annotator.models import BundleRun
from tests.factories import client_for
from tests.grading.test_bundles import synthetic_version

MiB = 1024 * 1024


def plain(extra: dict[str, bytes] | None = None, names=("build.sh", "run.sh")) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.writestr(name, b"#!/bin/sh\nexit 0\n")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def patched(data: bytes, local_offset: int, central_offset: int, value: int) -> bytes:
    """Every local and central header with a 2-byte field set to ``value``."""
    body = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        start = 0
        while (at := body.find(signature, start)) >= 0:
            body[at + offset : at + offset + 2] = value.to_bytes(2, "little")
            start = at + 4
    return bytes(body)


def bomb(inflated: int) -> bytes:
    """A small zip of ``inflated`` zero bytes in one entry, sizes declared honestly."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("build.sh", "#!/bin/sh\n")
        archive.writestr("run.sh", "#!/bin/sh\n")
        with archive.open("weights.bin", "w", force_zip64=True) as sink:
            zeros = bytes(8 * MiB)
            for _ in range(inflated // len(zeros)):
                sink.write(zeros)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def big_bomb() -> bytes:
    return bomb(2000 * MiB)  # the 2,000 MiB entry of the attack, about 2 MB of zip


@pytest.mark.slow  # the 2,000 MiB entry is deflated once for the module (about 10 s)
@pytest.mark.django_db
def test_upload_tricks_are_400s_naming_the_entry(maintainer, annotator_a, annotator_b, adjudicator, tmp_path, big_bomb):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, tmp_path)
    client = client_for(maintainer)
    url = f"/api/versions/{version.pk}/bundles/"
    encrypted = patched(plain(), 6, 8, 0x1)  # general purpose flag bit 0: encrypted
    deflate64 = patched(plain(), 8, 10, 9)  # compression method 9
    cases = {
        "mixed absolute and relative names": (plain({"/etc/cron.d/x": b"x", "lib/a.py": b""}), "/etc/cron.d/x"),
        "a name that climbs out": (plain({"a/../../x": b""}), "a/../../x"),
        "a backslash name": (plain({"..\\x.sh": b""}), "x.sh' (absolute, a drive or a backslash)"),
        "an encrypted entry": (encrypted, "build.sh: encrypted"),
        "a deflate64 entry": (deflate64, "build.sh: compression method 9"),
        "a 2,000 MiB entry in a 2 MB zip": (big_bomb, "weights.bin"),
        "not a zip": (b"PK\x03\x04 truncated", "not a zip"),
    }
    for what, (data, named) in cases.items():
        upload = io.BytesIO(data)
        upload.name = "bundle.zip"
        started = time.monotonic()
        response = client.post(url, {"bundle": upload, "label": what}, format="multipart")
        assert response.status_code == 400, (what, response.status_code, response.content[:300])
        assert named in json.dumps(response.json()), (what, response.json())
        assert time.monotonic() - started < 5, f"{what}: refused only after inflating"
    assert len(big_bomb) < 3 * MiB
    assert BundleRun.objects.count() == 0


def test_a_lying_declared_size_and_a_total_over_the_cap_are_refused(tmp_path):
    honest = plain({"weights.bin": bytes(4 * MiB)})
    # the entry declares 1,000 bytes: the reader stops there and the checksum refuses it
    liar = bytearray(honest)
    at = liar.find(b"PK\x01\x02", liar.find(b"weights.bin") - 60)
    liar[at + 24 : at + 28] = (1000).to_bytes(4, "little")
    local = liar.rfind(b"PK\x03\x04", 0, liar.find(b"weights.bin"))
    liar[local + 22 : local + 26] = (1000).to_bytes(4, "little")
    with pytest.raises(bundle_zip.BundleError, match="weights.bin"):
        bundle_zip.extract(bytes(liar), tmp_path / "a")
    small = ZipLimits(entries=100, entry_bytes=10 * MiB, total_bytes=3 * MiB, ratio=200)
    with pytest.raises(bundle_zip.BundleError, match="may inflate to 3145728"):
        bundle_zip.extract(plain({"a.bin": os.urandom(2 * MiB), "b.bin": os.urandom(2 * MiB)}), None, small)
    assert bundle_zip.extract(plain({"lib/x.py": b"print(1)\n"}), tmp_path / "b") == ["build.sh", "run.sh", "lib/x.py"]
