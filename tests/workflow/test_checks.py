"""System checks for the media tools and the media folder."""

from __future__ import annotations

from annotator.entry import system_checks as checks


def test_checks_pass_on_a_complete_installation(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    assert checks.check_media_tools(None) == []
    assert checks.check_media_root(None) == []


def test_a_missing_ffmpeg_is_reported_as_e002(monkeypatch):
    monkeypatch.setattr(checks, "ffmpeg_binary", lambda: None)
    assert [e.id for e in checks.check_media_tools(None)] == ["annotator.E002"]


def test_an_unwritable_media_root_is_reported_as_e003(settings):
    # Nobody, root included, can create a folder inside /proc.
    settings.MEDIA_ROOT = "/proc/frameledger-media"
    assert [e.id for e in checks.check_media_root(None)] == ["annotator.E003"]
