from django.urls import path

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.entry import consumers
from annotator.reads import realtime

websocket_urlpatterns = [
    path("ws/jobs/<id:job_id>/", consumers.JobProgressConsumer.as_asgi()),
    path("ws/packets/<id:packet_id>/", realtime.PacketConsumer.as_asgi()),
]
