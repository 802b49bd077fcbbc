"""Pages get their scripts and styles without DEBUG (WhiteNoise serves them)."""

from __future__ import annotations


def test_static_files_are_served_without_debug(client, settings):
    assert settings.DEBUG is False
    response = client.get("/static/frontend/js/api.js")
    assert response.status_code == 200
    assert b"export const api" in b"".join(response.streaming_content)
