from django.urls import path

import annotator.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator import consumers, realtime

websocket_urlpatterns = [
    path("ws/jobs/<id:job_id>/", consumers.JobProgressConsumer.as_asgi()),
    path("ws/packets/<id:packet_id>/", realtime.PacketConsumer.as_asgi()),
]
