"""The signing key lives outside the database and the media: a file only the service user can
read (made on first use for an empty audit log, never silently for a log with entries), or an
environment secret. Rotation keeps every entry verifiable under the key that signed it; the
public key is printed by ``manage.py signing_key``."""

from __future__ import annotations

import base64
import io
import json
import stat

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command

from annotator.actions.ledgers import do_add_event
from annotator.base import signing
from annotator.models import AuditEntry, Ledger
from tests.integrity.tampering import verify

pytestmark = pytest.mark.django_db


@pytest.fixture
def own_key(settings, tmp_path, monkeypatch):
    """A key file of this test's own (none made yet), read afresh."""
    monkeypatch.delenv("FRAMELEDGER_SIGNING_KEY", raising=False)
    settings.FRAMELEDGER_SIGNING_KEY_FILE = str(tmp_path / "keys" / "signing-key.pem")
    settings.FRAMELEDGER_PUBLIC_KEYS_FILE = ""
    signing.forget()
    yield tmp_path / "keys" / "signing-key.pem"
    signing.forget()


def add_event(packet, user, start: int) -> None:
    ledger = Ledger.objects.get(packet=packet, side="A")
    data = {"verb": "take", "nouns": ["cup"], "start_frame": start, "end_frame": start + 10}
    do_add_event(ledger, data, actor=user, expected_version=ledger.version)


def printed(*args) -> str:
    out = io.StringIO()
    call_command("signing_key", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_key_is_made_on_first_use_readable_by_the_service_user_only(own_key, settings, packet, annotator_a):
    # make_packet appended the first entries: the key was made for the empty log.
    assert stat.S_IMODE(own_key.stat().st_mode) == 0o600
    assert settings.MEDIA_ROOT not in str(own_key)
    assert "PRIVATE KEY" in own_key.read_text()
    assert set(AuditEntry.objects.values_list("key_id", flat=True)) == {signing.current_key_id()}
    assert verify()[0] == 0


def test_no_key_is_made_silently_for_a_log_that_has_entries(own_key, packet, annotator_a):
    own_key.unlink()
    own_key.with_name("public-keys.json").unlink()
    signing.forget()
    with pytest.raises(signing.NoSigningKey):
        add_event(packet, annotator_a, 10)
    assert not own_key.exists()


def test_rotation_keeps_old_entries_verifiable_under_the_key_that_signed_them(own_key, packet, annotator_a):
    add_event(packet, annotator_a, 10)
    old = signing.current_key_id()
    printed("--rotate")
    new = signing.current_key_id()
    assert new != old
    add_event(packet, annotator_a, 40)
    kids = list(AuditEntry.objects.order_by("seq").values_list("key_id", flat=True))
    assert kids[0] == old and kids[-1] == new
    assert verify()[0] == 0
    assert set(printed("--all").split()) >= {old, new}


def test_a_key_forgotten_from_the_keyring_leaves_its_entries_unverifiable(own_key, packet, annotator_a):
    # Removing the keyring (host access) is not a database-only attack; it shows that the
    # entries are checked against the keys kept outside the database, not the one at hand.
    printed("--rotate")
    own_key.with_name("public-keys.json").unlink()
    signing.forget()
    code, out = verify()
    assert code == 1 and "signed by an unknown key" in out


def test_an_environment_secret_signs_instead_of_the_file(own_key, monkeypatch, packet, annotator_a):
    secret = Ed25519PrivateKey.generate()
    seed = secret.private_bytes_raw()
    monkeypatch.setenv("FRAMELEDGER_SIGNING_KEY", base64.b64encode(seed).decode())
    signing.forget()
    add_event(packet, annotator_a, 10)
    entry = AuditEntry.objects.order_by("-seq").first()
    assert entry.key_id == signing.key_id(secret.public_key())
    assert entry.signature_problem() is None


def test_the_command_prints_the_public_key_that_verifies_the_entries(own_key, packet):
    out = printed()
    kid = out.split("key id: ")[1].split()[0]
    public = signing.public_from_text(out.split("public key: ")[1].split()[0])
    entry = AuditEntry.objects.order_by("seq").first()
    assert kid == entry.key_id
    public.verify(bytes.fromhex(entry.signature), signing.ENTRY_CONTEXT + entry.sha256.encode())
    assert printed("--pem").startswith("-----BEGIN PUBLIC KEY-----")


def test_maintainers_see_the_public_key_and_each_entrys_signature(packet, maintainer, annotator_a):
    from tests.factories import client_for

    page = client_for(maintainer).get("/audit/")
    assert page.status_code == 200
    assert signing.current_public_text() in page.content.decode() and signing.current_key_id() in page.content.decode()
    assert client_for(annotator_a).get("/audit/").status_code == 404
    [first, *_] = client_for(maintainer).get(f"/api/packets/{packet.pk}/audit/").json()
    assert first["key_id"] == signing.current_key_id() and len(first["signature"]) == 128


def test_a_process_learns_a_key_rotated_elsewhere(own_key, packet, annotator_a):
    # This process has read the keyring; another one rotates the key and writes with it.
    assert signing.keyring().keys
    old = signing.current_key_id()
    new_key = Ed25519PrivateKey.generate()
    document = json.loads(own_key.with_name("public-keys.json").read_text())
    document["keys"][signing.key_id(new_key.public_key())] = signing.public_text(new_key.public_key())
    own_key.with_name("public-keys.json").write_text(json.dumps(document))
    entry = AuditEntry.objects.order_by("-seq").first()
    signature = new_key.sign(signing.ENTRY_CONTEXT + entry.sha256.encode()).hex()
    assert signing.valid(signing.ENTRY_CONTEXT, entry.sha256, signing.key_id(new_key.public_key()), signature)
    assert signing.current_key_id() == old
