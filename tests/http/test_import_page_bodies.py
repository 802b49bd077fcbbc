"""The moment import page takes what ``POST /api/moment-imports/`` takes, through the real
server (``deploy.asgi`` with its body limits, uvicorn in a child process): a file past the
2 MiB every other page may receive is previewed, kept, and imported by name."""

from __future__ import annotations

import json
import re

import pytest
import requests
from django.conf import settings
from django.test import Client

from deploy.body_limits import limit_for
from tests.http import live_server

pytestmark = pytest.mark.django_db(transaction=True)
embedded = live_server.embedded  # the uvicorn child fixture (tests/http/live_server.py)
MIB = 1024 * 1024
ROW = json.dumps({"qid": 1, "query": "a person waves", "vid": "vid_a", "duration": 30, "relevant_windows": [[0, 4]]})


def test_the_page_and_the_api_take_the_same_bodies():
    assert limit_for("/imports/moments/") == limit_for("/api/moment-imports/") > settings.FRAMELEDGER_MAX_BODY_BYTES


def test_a_6_mib_file_is_previewed_and_imported_through_the_server(
    embedded, maintainer, annotator_a, annotator_b, adjudicator
):
    client = Client()
    client.force_login(maintainer)
    port, _ = embedded()
    base = f"http://127.0.0.1:{port}"
    session = requests.Session()
    session.cookies.set(settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value)
    form = session.get(f"{base}/imports/moments/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)[1]
    people = {"annotator_a": annotator_a.pk, "annotator_b": annotator_b.pk, "adjudicator": adjudicator.pk}
    fields = {"csrfmiddlewaretoken": token, "source": "qvhighlights", **people}
    data = (ROW + " " * (6 * MIB - len(ROW))).encode()
    preview = session.post(
        f"{base}/imports/moments/", data={"op": "preview", **fields}, files={"rows": ("rows.jsonl", data)}, timeout=60
    )
    assert preview.status_code == 200, preview.text[:300]
    assert 'id="do-import" >' in preview.text
    hidden = dict(re.findall(r'<input type="hidden" name="(sha256|staged|name)" value="([^"]*)"', preview.text))
    assert hidden["staged"] == hidden["sha256"]
    done = session.post(f"{base}/imports/moments/", data={"op": "import", **fields, **hidden}, timeout=60)
    assert done.status_code == 200 and "1 created, 0 updated, 0 unchanged" in done.text
