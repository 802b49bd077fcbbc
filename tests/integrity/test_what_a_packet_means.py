"""What a packet's frozen ledgers and versions mean depends on rows beside them: the packet's
parameters, its video's frame rate and frame count, its task kind's schema and scorer. They are
covered by the packet's SHA-256 (recorded, signed, by ``create_packet``): each changed by SQL is
an integrity error on every read of the packet and its export, and ``verify_integrity`` names the
packet; rehashing the packet and appending a ``create_packet`` entry without the key does not help."""

from __future__ import annotations

import pytest

from annotator.base.canonical import canonical_sha256
from annotator.base.seals import packet_content
from annotator.models import Packet
from tests.factories import client_for
from tests.integrity.tampering import forge_entry, tamper, verify

pytestmark = pytest.mark.django_db

CHANGES = [
    ("packet", {"parameters": {"players": ["someone", "else"]}}),
    ("packet", {"instructions": "label something else"}),
    ("video", {"frame_rate_num": 30000, "frame_rate_den": 1001}),
    ("video", {"frame_count": 1}),
    ("task_kind", {"scorer_id": "egocentric-f1-v1"}),
    ("task_kind", {"schema": {"family": "other"}}),
]


def rehash(packet) -> None:
    """Give the packet the SHA-256 of its content as it now stands, and a create record for it."""
    packet = Packet.objects.select_related("video", "task_kind").get(pk=packet.pk)
    content = packet_content(
        title=packet.title, video=packet.video, task_kind=packet.task_kind, instructions=packet.instructions,
        parameters=packet.parameters,
    )  # fmt: skip
    digest = canonical_sha256(content)[1]
    tamper(packet, sha256=digest)
    forge_entry("create_packet", packet, packet_id=packet.pk, hashes={"packet": digest})


@pytest.mark.parametrize("rehashed", [False, True], ids=["as changed", "rehashed and re-recorded"])
@pytest.mark.parametrize(("row", "columns"), CHANGES, ids=[f"{r}.{next(iter(c))}" for r, c in CHANGES])
def test_a_change_to_what_a_packet_means_is_an_integrity_error(
    row, columns, rehashed, packet, frozen, adjudicated, maintainer, annotator_a
):
    url = f"/api/versions/{adjudicated.pk}/export/?file=gt.json"
    assert client_for(annotator_a).get(url).status_code == 200
    tamper(packet if row == "packet" else getattr(packet, row), **columns)
    if rehashed:
        rehash(packet)
    for user, path in (
        (maintainer, f"/api/packets/{packet.pk}/"),
        (annotator_a, f"/api/packets/{packet.pk}/ledger/"),
        (annotator_a, url),
        (maintainer, f"/api/versions/{adjudicated.pk}/"),
    ):
        response = client_for(user).get(path)
        assert response.status_code == 500, (path, response.status_code)
        assert response.json()["error"]["code"] == "integrity_error", path
    code, out = verify()
    assert code == 1 and f"PROBLEM packet {packet.pk}: " in out, out
