"""Player pages; included at the root by ``frontend.urls``."""

from django.urls import path

from frontend import player_views

urlpatterns = [
    path("packets/<int:packet_id>/player/", player_views.packet_player, name="packet-player"),
]
