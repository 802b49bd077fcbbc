"""Personas shared by every suite (as healthchecks' Alice/Bob/Charlie):
``annotator_a``, ``annotator_b``, ``adjudicator``, ``maintainer``, ``outsider``."""

from __future__ import annotations

import pytest

from tests.factories import make_packet, make_user


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def annotator_a(db):
    return make_user("annotator_a")


@pytest.fixture
def annotator_b(db):
    return make_user("annotator_b")


@pytest.fixture
def adjudicator(db):
    return make_user("adjudicator")


@pytest.fixture
def maintainer(db):
    return make_user("maintainer", maintainer=True)


@pytest.fixture
def outsider(db):
    return make_user("outsider")


@pytest.fixture
def packet(maintainer, annotator_a, annotator_b, adjudicator):
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator)
