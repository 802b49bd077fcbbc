"""Every export carries a signature over its manifest (``signature.json``), and
``python -m exportcheck DIR --public-key KEY`` checks it offline: run here from a folder that
holds nothing of the repository but ``exportcheck/`` (a clean clone's view with only the public
key), with only the standard library and pyca/cryptography. A changed ``gt.json``, a changed
manifest or another key's signature is named; the GTEA seed task's export verifies."""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command

from annotator.base import signing
from tests.factories import client_for
from tests.grading.conftest import gtea_packet, gtea_version  # noqa: F401

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def exported(version, folder: Path) -> Path:
    call_command("export_ground_truth", "--version", str(version.pk), "--out", str(folder), stdout=io.StringIO())
    return folder


def exportcheck(tmp_path: Path, folder: Path, public_key: str) -> subprocess.CompletedProcess:
    clone = tmp_path / "clone"
    if not clone.exists():
        shutil.copytree(ROOT / "exportcheck", clone / "exportcheck")
    command = [sys.executable, "-E", "-s", "-m", "exportcheck", str(folder), "--public-key", public_key]
    return subprocess.run(command, cwd=clone, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)


def test_the_gtea_seed_export_verifies_offline_with_only_the_public_key(gtea_version, tmp_path):  # noqa: F811
    folder = exported(gtea_version, tmp_path / "export")
    signature = json.loads((folder / "signature.json").read_text())
    assert signature["public_key"] == signing.current_public_text()  # the public key ships with it
    result = exportcheck(tmp_path, folder, signing.current_public_text())
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = json.loads((folder / "manifest.json").read_text())["manifest"]
    expected = f"verified: provisional version 1 of packet {gtea_version.packet_id} "
    assert result.stdout.startswith(expected) and manifest["ground_truth_sha256"] in result.stdout


def test_a_changed_file_manifest_or_key_is_named(gtea_version, tmp_path):  # noqa: F811
    public = signing.current_public_text()
    folder = exported(gtea_version, tmp_path / "export")
    gt = folder / "gt.json"
    original = gt.read_bytes()
    gt.write_bytes(original.replace(b'"take"', b'"cut"', 1))
    result = exportcheck(tmp_path, folder, public)
    assert result.returncode == 1 and "PROBLEM gt.json: differs from the SHA-256" in result.stdout
    gt.write_bytes(original)
    # the manifest made to list the changed file: its signature no longer verifies
    manifest = (folder / "manifest.json").read_text()
    (folder / "manifest.json").write_text(manifest.replace('"tier": "provisional"', '"tier": "adjudicated"'))
    result = exportcheck(tmp_path, folder, public)
    assert result.returncode == 1 and "PROBLEM manifest.json: the signature does not verify" in result.stdout
    # signed again by someone else's key under FrameLedger's key id
    forger = Ed25519PrivateKey.generate()
    digest = __import__("hashlib").sha256((folder / "manifest.json").read_bytes()).hexdigest()
    signature = json.loads((folder / "signature.json").read_text())
    signature["signature"] = forger.sign(b"frameledger export v1\n" + digest.encode()).hex()
    (folder / "signature.json").write_text(json.dumps(signature))
    result = exportcheck(tmp_path, folder, public)
    assert result.returncode == 1 and "the signature does not verify under the given key" in result.stdout
    # and under another public key, nothing verifies
    other = signing.public_text(forger.public_key())
    assert "not by the given key" in exportcheck(tmp_path, folder, other).stdout


def test_the_api_export_zip_carries_the_signature(gtea_version, maintainer, tmp_path):  # noqa: F811
    response = client_for(maintainer).get(f"/api/versions/{gtea_version.pk}/export/")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        archive.extractall(tmp_path / "zip")
    [folder] = list((tmp_path / "zip").iterdir())
    assert (folder / "signature.json").is_file()
    assert exportcheck(tmp_path, folder, signing.current_public_text()).returncode == 0


def test_exportcheck_imports_only_the_standard_library_and_cryptography():
    allowed = set(sys.stdlib_module_names) | {"cryptography", "exportcheck"}
    for path in (ROOT / "exportcheck").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert {name.split(".")[0] for name in names} <= allowed, (path, names)
