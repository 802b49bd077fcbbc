"""What every websocket consumer of the app does with frames it did not expect, and how
it always cleans up.

Browsers never need to send more than ``{"type": "ping"}``. Any other frame — not JSON,
not an object, binary, over ``MAX_FRAME_CHARS``, nested too deeply, an unknown type — is
answered ``{"type": "error", "error": {"code": "bad_frame", "message": ...}}`` and the
socket lives on; after ``MAX_BAD_FRAMES`` of them on one connection the server closes it
with ``BAD_FRAMES_CLOSE_CODE``. A consumer's :meth:`GuardedJsonConsumer.cleanup` (leave
presence, cancel background tasks, leave groups) runs exactly once however the socket
ends: a normal disconnect, the bad-frame cap, an exception in a handler, or the server
cancelling the consumer. Before this, a non-JSON frame killed the packet consumer
without ``disconnect()``, and its heartbeat task kept announcing a ghost to staff.
"""

from __future__ import annotations

import json
import logging

from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer

logger = logging.getLogger(__name__)

MAX_FRAME_CHARS = 4096
MAX_BAD_FRAMES = 10
BAD_FRAMES_CLOSE_CODE = 4400


class BadFrame(ValueError):
    pass


def decode_frame(text_data: str | None, bytes_data: bytes | None) -> dict:
    """The frame as a JSON object, or :class:`BadFrame` saying what is wrong with it."""
    if text_data is None:
        raise BadFrame("binary frames are not accepted; send JSON text")
    if len(text_data) > MAX_FRAME_CHARS:
        raise BadFrame(f"a frame holds at most {MAX_FRAME_CHARS} characters")
    try:
        content = json.loads(text_data)
    except (ValueError, RecursionError):
        raise BadFrame("a frame must be JSON") from None
    if not isinstance(content, dict):
        raise BadFrame("a frame must be a JSON object")
    return content


class GuardedJsonConsumer(AsyncJsonWebsocketConsumer):
    """A JSON consumer that survives bad frames and always runs :meth:`cleanup` once.

    Subclasses put their teardown in ``cleanup`` (not ``disconnect``) and handle frames
    in ``receive_json``; raising :class:`BadFrame` there counts as a bad frame.
    """

    bad_frames = 0
    _cleaned = False

    async def __call__(self, scope, receive, send):
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._cleanup_once()  # also when the server cancels the consumer

    async def dispatch(self, message):
        try:
            await super().dispatch(message)
        except StopConsumer:
            raise
        except Exception:
            logger.exception("websocket consumer %s failed; cleaning up", type(self).__name__)
            await self._cleanup_once()
            raise

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        try:
            await self.receive_json(decode_frame(text_data, bytes_data), **kwargs)
        except BadFrame as problem:
            await self._bad_frame(str(problem))

    async def receive_json(self, content, **kwargs):
        if content.get("type") == "ping":
            await self.send_json({"type": "pong"})
            return
        raise BadFrame('the only frame a client sends is {"type": "ping"}')

    async def _bad_frame(self, problem: str) -> None:
        self.bad_frames += 1
        if self.bad_frames > MAX_BAD_FRAMES:
            await self.close(code=BAD_FRAMES_CLOSE_CODE)
            await self._cleanup_once()
            raise StopConsumer()
        await self.send_json({"type": "error", "error": {"code": "bad_frame", "message": problem}})

    async def disconnect(self, code):
        await self._cleanup_once()

    async def _cleanup_once(self) -> None:
        if self._cleaned:
            return
        self._cleaned = True
        try:
            await self.cleanup()
        except Exception:
            logger.exception("websocket consumer %s: cleanup failed", type(self).__name__)

    async def cleanup(self) -> None:
        """Leave presence, cancel background tasks, leave groups. Runs at most once."""
