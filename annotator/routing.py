from django.urls import path

from annotator import consumers

websocket_urlpatterns = [
    path("ws/jobs/<int:job_id>/", consumers.JobProgressConsumer.as_asgi()),
]
