from django.urls import path

from annotator import consumers, realtime

websocket_urlpatterns = [
    path("ws/jobs/<int:job_id>/", consumers.JobProgressConsumer.as_asgi()),
    path("ws/packets/<int:packet_id>/", realtime.PacketConsumer.as_asgi()),
]
