"""``ws/jobs/<id>/`` relays a job's progress from the database to the browser.

The worker writes progress to the Job row in another process; the web process reads
it back, so progress reaches the page with the in-memory channel layer too.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from annotator.entry.routing import websocket_urlpatterns
from annotator.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


async def connect(job, user):
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{job.pk}/")
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    return communicator, connected, code


def update(job_id, **fields):
    Job.objects.filter(pk=job_id).update(**fields)


def test_a_maintainer_sees_each_change_until_the_job_ends(maintainer):
    job = Job.objects.create(kind="ingest", created_by=maintainer)

    async def scenario():
        communicator, connected, _ = await connect(job, maintainer)
        assert connected
        first = await communicator.receive_json_from(timeout=5)
        assert (first["status"], first["progress"]) == ("queued", 0.0)
        await database_sync_to_async(update)(job.pk, status="running", progress=0.5, message="proxy")
        second = await communicator.receive_json_from(timeout=5)
        assert (second["status"], second["progress"], second["message"]) == ("running", 0.5, "proxy")
        await database_sync_to_async(update)(job.pk, status="done", progress=1.0)
        third = await communicator.receive_json_from(timeout=5)
        assert third["status"] == "done"
        assert await communicator.receive_nothing(timeout=1.0)
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_someone_else_cannot_follow_a_job(maintainer, annotator_a):
    job = Job.objects.create(kind="ingest", created_by=maintainer)

    async def scenario():
        _, connected, code = await connect(job, annotator_a)
        assert not connected and code == 4404

    async_to_sync(scenario)()
