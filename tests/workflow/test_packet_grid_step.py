"""A moment packet's own grid step (the new-packet page's field): the workspace's schema
and the scorer's task parameters both use it; a bad step is refused."""

from __future__ import annotations

import pytest

from annotator.base.families import adapter_for
from annotator.models.taskkind_schema import packet_schema
from tests.factories import client_for, ensure_builtin_rows, make_ready_video


@pytest.mark.django_db
def test_a_moment_packet_takes_its_own_grid_step(maintainer, annotator_a, annotator_b, adjudicator):
    from annotator.models import Packet

    ensure_builtin_rows()
    video = make_ready_video("clips")
    client = client_for(maintainer)
    body = {
        "title": "clips",
        "video": video.pk,
        "task_kind": "moment-queries",
        "annotator_a": "annotator_a",
        "annotator_b": "annotator_b",
        "adjudicator": "adjudicator",
        "instructions": "",
    }
    created = client.post("/api/packets/", {**body, "parameters": {"grid": {"step": 1}}}, format="json")
    assert created.status_code == 201, created.content
    packet = Packet.objects.get(pk=created.json()["id"])
    (intervals,) = [f for f in packet_schema(packet)["fields"] if f["type"] == "interval_list"]
    assert intervals["grid_step"] == 1.0
    task = adapter_for("moments").task_parameters(packet)
    assert task["corpus"][0]["grid"] == {"step": 1.0}
    refused = client.post("/api/packets/", {**body, "parameters": {"grid": {"step": -2}}}, format="json")
    assert refused.status_code == 400 and "grid" in refused.content.decode()
