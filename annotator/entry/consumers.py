"""Websocket consumers. They relay state that lives in the database, so a worker's
progress reaches the browser with the in-memory channel layer too (the worker and the
web server are separate processes); with Redis, group messages arrive immediately."""

from __future__ import annotations

import asyncio

from channels.db import database_sync_to_async

from annotator.base.sockets import GuardedJsonConsumer
from annotator.models import Job
from annotator.reads import access
from annotator.reads.present import job_view

POLL_SECONDS = 0.5


def job_state(user, job_id: int) -> dict | None:
    try:
        return job_view(access.access_job(user, job_id))
    except access.NotFound:
        return None


class JobProgressConsumer(GuardedJsonConsumer):
    """``/ws/jobs/<id>/``: sends the job's state whenever it changes, until it ends."""

    async def connect(self):
        self.job_id = int(self.scope["url_route"]["kwargs"]["job_id"])
        state = await database_sync_to_async(job_state)(self.scope["user"], self.job_id)
        if state is None:
            await self.close(code=4404)
            return
        await self.accept()
        self.relay = asyncio.ensure_future(self.relay_progress(state))

    async def relay_progress(self, state: dict):
        last = None
        while True:
            if state != last:
                await self.send_json({"type": "job", **state})
                last = state
            if state["status"] in {Job.Status.DONE, Job.Status.FAILED}:
                return
            await asyncio.sleep(POLL_SECONDS)
            state = await database_sync_to_async(job_state)(self.scope["user"], self.job_id) or state

    async def cleanup(self):
        relay = getattr(self, "relay", None)
        if relay is not None:
            relay.cancel()
