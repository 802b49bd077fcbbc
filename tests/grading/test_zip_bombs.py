"""Submission archives are inflated under caps, checked while streaming, and a refused
archive leaves nothing behind.

Issue 10, item 11: a 510 KB zip holding a 512 MiB entry was inflated and hashed in full;
there was no cap on total inflated bytes or on the compression ratio.
"""

from __future__ import annotations

import io
import os
import struct
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.grading.uploads import ByteCap, InflateCounter, UploadRefused, ZipLimits, expand_zip
from annotator.models import AuditEntry, Submission
from tests.factories import client_for

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> bytes:
    """About 510 KB of zip holding one 512 MiB entry of zeros (deflate's best ratio)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.zip"
    zero = bytes(MiB)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("agent/solution.json", "w", force_zip64=True) as entry:
            for _ in range(512):
                entry.write(zero)
    return path.read_bytes()


def zip_of(entries: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    buffer.seek(0)
    return buffer


def post_archive(packet, user, data: bytes):
    upload = SimpleUploadedFile("batch.zip", data, content_type="application/zip")
    return client_for(user).post(f"/api/packets/{packet.pk}/submissions/", {"archive": upload}, format="multipart")


@pytest.mark.django_db
def test_a_510_kb_zip_holding_a_512_mib_entry_is_refused_before_it_is_inflated(bomb, gtea_packet, maintainer):
    assert len(bomb) < 600_000
    started = time.perf_counter()
    response = post_archive(gtea_packet, maintainer, bomb)
    seconds = time.perf_counter() - started
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["field"] == "archive" and "agent/solution.json" in error["message"], error
    assert "declares 536870912 bytes; an entry may inflate to 67108864" in error["message"]
    assert not Submission.objects.exists()
    assert seconds < 30  # not a speed target: inflating and hashing 512 MiB is what this refuses


def test_an_entry_over_the_per_entry_cap_is_refused():
    data = os.urandom(300_000)  # incompressible: the ratio cap does not fire
    limits = ZipLimits(entry_bytes=200_000)
    with pytest.raises(UploadRefused, match=r"a\.json declares 300000 bytes; an entry may inflate to 200000"):
        expand_zip(zip_of({"a.json": data}), ByteCap(10 * MiB, ""), limits=limits)


def stream(archive: io.BytesIO, counter: InflateCounter) -> int:
    """Inflate every entry of ``archive`` through ``counter``; the bytes seen."""
    seen = 0
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            with zipped.open(info) as handle:
                chunks = iter(lambda: handle.read(64 * 1024), b"")
                seen += sum(len(c) for c in counter.count(info.filename, info.compress_size, chunks))
    return seen


def test_inflated_bytes_are_counted_while_streaming_whatever_the_headers_say():
    # The counter sees only the bytes the reader hands over, never a header.
    with pytest.raises(UploadRefused, match=r"a\.json inflates past 200000 bytes"):
        stream(zip_of({"a.json": os.urandom(300_000)}), InflateCounter(ZipLimits(entry_bytes=200_000)))
    with pytest.raises(UploadRefused, match="inflate past 500000 bytes in all"):
        stream(
            zip_of({f"{n}.json": os.urandom(200_000) for n in range(3)}), InflateCounter(ZipLimits(total_bytes=500_000))
        )
    with pytest.raises(UploadRefused, match="compressed more than 50:1"):
        stream(zip_of({"z.json": bytes(MiB)}), InflateCounter(ZipLimits(ratio=50, ratio_grace=1000)))
    assert stream(zip_of({"ok.json": os.urandom(100_000)}), InflateCounter(ZipLimits())) == 100_000


def test_the_whole_archive_is_capped_in_inflated_bytes():
    entries = {f"run-{n}.json": os.urandom(400_000) for n in range(3)}
    with pytest.raises(
        UploadRefused, match="the archive declares 1200000 bytes; entries may inflate to 1000000 in all"
    ):
        expand_zip(zip_of(entries), ByteCap(10 * MiB, ""), limits=ZipLimits(total_bytes=1_000_000))
    # Under the cap, the same archive is taken.
    assert len(expand_zip(zip_of(entries), ByteCap(10 * MiB, ""), limits=ZipLimits(total_bytes=1_300_000))) == 3


def test_an_entry_compressed_past_the_ratio_cap_is_refused():
    limits = ZipLimits(ratio=100, ratio_grace=64 * 1024)
    with pytest.raises(UploadRefused, match="compressed more than 100:1"):
        expand_zip(zip_of({"zeros.json": bytes(4 * MiB)}), ByteCap(10 * MiB, ""), limits=limits)
    # Ordinary JSON compresses far less than that.
    ordinary = b'{"actions": [' + b",".join(
        b'{"verb": "take", "nouns": ["cup"], "start_frame": %d, "end_frame": %d}' % (n, n + 7) for n in range(20000)
    ) + b"]}"  # fmt: skip
    [file] = expand_zip(zip_of({"ok.json": ordinary}), ByteCap(10 * MiB, ""), limits=limits)
    assert file.content == ordinary


def test_too_many_entries_are_refused_before_any_is_read():
    entries = {f"d{n}/": b"" for n in range(30)} | {f"run-{n}.json": b"{}" for n in range(30)}
    with pytest.raises(UploadRefused, match="holds 60 entries; at most 50"):
        expand_zip(zip_of(entries), ByteCap(100, ""), limits=ZipLimits(entries=50))


def understate_sizes(data: bytes, real: int, claimed: int) -> bytes:
    """Rewrite every size field equal to ``real`` (local header and central directory) as ``claimed``."""
    return data.replace(struct.pack("<I", real), struct.pack("<I", claimed))


def test_header_sizes_are_not_trusted_an_understated_entry_is_refused():
    data = os.urandom(200_000)
    forged = understate_sizes(zip_of({"a.json": data}, compression=zipfile.ZIP_STORED).getvalue(), len(data), 1000)
    with pytest.raises(UploadRefused, match="cannot read a.json"):
        expand_zip(io.BytesIO(forged), ByteCap(10 * MiB, ""))


def test_a_declared_size_over_the_caps_is_refused_without_inflating():
    data = os.urandom(1000)
    forged = understate_sizes(zip_of({"a.json": data}, compression=zipfile.ZIP_STORED).getvalue(), 1000, 2**31)
    with pytest.raises(UploadRefused, match="a.json declares 2147483648 bytes"):
        expand_zip(io.BytesIO(forged), ByteCap(10 * MiB, ""))


@pytest.mark.django_db
def test_a_refused_archive_leaves_nothing_on_disk_or_in_the_database(bomb, gtea_packet, maintainer, settings, tmp_path):
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(uploads)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every upload goes through a temporary file
    audit = AuditEntry.objects.count()
    response = post_archive(gtea_packet, maintainer, bomb)
    assert response.status_code == 400
    assert list(uploads.iterdir()) == []
    media = [p for p in (tmp_path / "media").rglob("*") if p.is_file()] if (tmp_path / "media").exists() else []
    assert media == []
    assert not Submission.objects.exists() and AuditEntry.objects.count() == audit
    # The same upload path takes an ordinary archive.
    ok = post_archive(gtea_packet, maintainer, zip_of({"r/one.solution.json": b'{"actions": []}'}).getvalue())
    assert ok.status_code == 201
    assert list(uploads.iterdir()) == []


@pytest.mark.django_db
def test_the_caps_come_from_the_settings(gtea_packet, maintainer, settings):
    settings.FRAMELEDGER_ZIP_MAX_RATIO = 10
    response = post_archive(gtea_packet, maintainer, zip_of({"zeros.json": bytes(2 * MiB)}).getvalue())
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "zeros.json is compressed more than 10:1"
    settings.FRAMELEDGER_ZIP_MAX_RATIO = 200
    settings.FRAMELEDGER_ZIP_MAX_ENTRIES = 1
    response = post_archive(gtea_packet, maintainer, zip_of({"a.json": b"{}", "b.json": b"{}"}).getvalue())
    assert response.json()["error"]["message"] == "the archive holds 2 entries; at most 1"
