"""QVHighlights / Charades-STA rows imported from the browser: a dry run listing every
refused row with its reason, then the import of the bytes previewed; maintainers only."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.base.canonical import sha256_hex
from annotator.models import GroundTruthVersion, Packet
from tests.factories import client_for

QV_VAL = Path(settings.BASE_DIR) / "data" / "qvhighlights" / "highlight_val_release.jsonl"


def good_row(qid, vid="vid_a", windows=((0, 4),)):
    return json.dumps({"qid": qid, "query": f"query {qid}", "vid": vid, "duration": 30, "relevant_windows": windows})


BAD = "\n".join(
    [
        good_row(1),
        "{not json",
        json.dumps({"qid": 3, "query": "q", "vid": "v", "duration": 30}),
        good_row(4, windows=((9, 2),)),
        good_row(1, vid="vid_b"),  # repeats query id qv1: a reason spanning rows
    ]
).encode()


def people_form(annotator_a, annotator_b, adjudicator) -> dict:
    return {"annotator_a": annotator_a.pk, "annotator_b": annotator_b.pk, "adjudicator": adjudicator.pk}


def preview(client, data, **form):
    body = {"op": "preview", "source": "qvhighlights", "rows": SimpleUploadedFile("rows.jsonl", data), **form}
    return client.post("/imports/moments/", body)


def commit(client, data, sha=None, **form):
    body = {"op": "import", "source": "qvhighlights", "name": "rows.jsonl", "sha256": sha or sha256_hex(data),
            "data_b64": base64.b64encode(data).decode(), **form}  # fmt: skip
    return client.post("/imports/moments/", body)


@pytest.mark.django_db
def test_qvhighlights_rows_preview_then_import_two_videos(maintainer, annotator_a, annotator_b, adjudicator):
    client = client_for(maintainer)
    data = QV_VAL.read_bytes()
    form = {**people_form(annotator_a, annotator_b, adjudicator), "limit": "2"}
    page = preview(client, data, **form).content.decode()
    assert re.search(r"<strong>2</strong> videos of \d+ · \d+ queries in the file", page)
    assert "<strong>0</strong> refused rows" in page and 'id="do-import" >' in page  # enabled
    assert not Packet.objects.exists()  # the dry run wrote nothing
    done = commit(client, data, **form)
    assert done.status_code == 200 and b"2 created, 0 updated, 0 unchanged" in done.content
    assert Packet.objects.filter(task_kind__slug="moment-queries-published").count() == 2
    assert GroundTruthVersion.objects.filter(tier="provisional").count() == 2
    for version in GroundTruthVersion.objects.all():  # each packet and its version's anchors, one click away
        assert f'href="/packets/{version.packet_id}/"'.encode() in done.content
        assert f'href="/grading/versions/{version.pk}/"'.encode() in done.content
    # annotation-only videos: the way forward (CLIP features, their layouts) on the result
    body = done.content.decode()
    assert 'id="import-annotation-only"' in body and "2 of these packets have no video file" in body
    assert "an .npz with the key features, or an .npy" in body
    assert body.count('class="needs-features"') == 2
    again = commit(client, data, **form)
    assert b"0 created, 0 updated, 2 unchanged" in again.content


@pytest.mark.django_db
def test_every_refused_row_is_listed_and_nothing_is_imported(maintainer, annotator_a, annotator_b, adjudicator):
    client = client_for(maintainer)
    form = people_form(annotator_a, annotator_b, adjudicator)
    page = preview(client, BAD, **form).content.decode()
    rows = re.findall(r"<tr><td>(\d+)</td><td><code>.*?</code></td><td>([^<]+)</td></tr>", page)
    assert [n for n, _ in rows] == ["2", "3", "4", "5"]
    reasons = dict(rows)
    assert reasons["2"].startswith("not JSON") and reasons["3"] == "no &#x27;relevant_windows&#x27;"
    assert "reversed or negative" in reasons["4"] and "query id qv1 repeats" in reasons["5"]
    assert 'id="do-import" disabled' in page and "Fix the refused rows first." in page
    refused = commit(client, BAD, **form)
    assert refused.status_code == 400 and not Packet.objects.exists()
    changed = commit(client, QV_VAL.read_bytes(), sha=sha256_hex(BAD), **form)
    assert changed.status_code == 409 and not Packet.objects.exists()


@pytest.mark.django_db
def test_the_same_person_twice_is_refused_with_the_reason(maintainer, annotator_a, adjudicator):
    data = good_row(1).encode()
    form = {"annotator_a": annotator_a.pk, "annotator_b": annotator_a.pk, "adjudicator": adjudicator.pk}
    response = commit(client_for(maintainer), data, **form)
    assert response.status_code == 400 and b"three different people" in response.content
    assert not Packet.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("places", "reason"),
    [
        (("a", "a", "adj"), "must be three different people"),
        (("a", "b", "a"), "must be three different people"),
        (("a", "b", None), "are all required"),
    ],
)
def test_the_dry_run_refuses_what_the_import_would(maintainer, annotator_a, annotator_b, adjudicator, places, reason):
    """The dry run checks the assignment with packet creation's own rule, says why and
    disables the import; the import of the same form is refused with the same words."""
    people = {"a": annotator_a, "b": annotator_b, "adj": adjudicator}
    keys = ("annotator_a", "annotator_b", "adjudicator")
    form = {key: people[place].pk if place else "" for key, place in zip(keys, places, strict=True)}
    client = client_for(maintainer)
    page = preview(client, good_row(1).encode(), **form).content.decode()
    assert re.search(r'<ul class="banner bad" id="preview-refusals"[^>]*><li>[^<]*' + reason, page), page
    assert 'id="do-import" disabled' in page
    refused = commit(client, good_row(1).encode(), **form)
    assert refused.status_code == 400 and reason in refused.content.decode()
    assert not Packet.objects.exists()


@pytest.mark.django_db
def test_the_form_starts_with_three_different_people(maintainer, annotator_a, annotator_b, adjudicator):
    """By role (the people page's), never one person twice; the maintainer, listed
    first among the people here, is not picked while people with the roles exist."""
    from django.contrib.auth.models import Group

    Group.objects.get_or_create(name="annotators")[0].user_set.add(annotator_a, annotator_b)
    Group.objects.get_or_create(name="adjudicators")[0].user_set.add(adjudicator)
    page = client_for(maintainer).get("/imports/moments/").content.decode()
    selected = {
        key: re.search(rf'<select name="{key}"[^>]*>.*?<option value="(\d+)" selected', page, re.S)[1]
        for key in ("annotator_a", "annotator_b", "adjudicator")
    }
    assert len(set(selected.values())) == 3
    assert selected["adjudicator"] == str(adjudicator.pk)
    assert {selected["annotator_a"], selected["annotator_b"]} == {str(annotator_a.pk), str(annotator_b.pk)}
    # Without roles: still three different people, in the list's order.
    Group.objects.filter(name__in=["annotators", "adjudicators"]).delete()
    page = client_for(maintainer).get("/imports/moments/").content.decode()
    picked = re.findall(r'<option value="(\d+)" selected', page)
    assert len(picked) == 3 and len(set(picked)) == 3


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["annotator_a", "adjudicator", "outsider"])
def test_the_moment_import_page_is_404_for_non_maintainers(persona, request, annotator_b, maintainer):
    user = request.getfixturevalue(persona)
    client = client_for(user)
    assert client.get("/imports/moments/").status_code == 404
    form = {"annotator_a": maintainer.pk, "annotator_b": annotator_b.pk, "adjudicator": user.pk}
    assert commit(client, good_row(1).encode(), **form).status_code == 404
    assert not Packet.objects.exists()


OWN_PACKET = "you annotate or adjudicate its packet"


@pytest.mark.django_db
@pytest.mark.parametrize("place", ["annotator_a", "annotator_b", "adjudicator"])
def test_the_dry_run_refuses_a_maintainer_who_names_himself(maintainer, annotator_a, annotator_b, adjudicator, place):
    """The import refuses a maintainer who puts himself on a packet (he would hold the key
    of his own blind packet: ``access.may_import_labels``); the dry run says so first and
    disables the import, and the import of the same form is refused with the same words."""
    form = {**people_form(annotator_a, annotator_b, adjudicator), place: maintainer.pk}
    client = client_for(maintainer)
    page = preview(client, good_row(1).encode(), **form).content.decode()
    assert re.search(r'<ul class="banner bad" id="preview-refusals"[^>]*><li>[^<]*' + OWN_PACKET, page), page
    assert "Change the assignment above" in page
    assert 'id="do-import" disabled' in page
    refused = commit(client, good_row(1).encode(), **form)
    assert refused.status_code == 400 and OWN_PACKET in refused.content.decode()
    assert not Packet.objects.exists()


@pytest.mark.django_db
def test_the_dry_run_refuses_a_maintainer_on_an_existing_packet(maintainer, annotator_a, annotator_b, adjudicator):
    """Importing the same video again reuses its packet: a maintainer who annotates it is
    refused by the import, and so by the dry run, whatever the form assigns."""
    from tests.factories import make_user

    blind = make_user("maintainer_b", maintainer=True)
    data = good_row(1).encode()
    first = commit(client_for(maintainer), data, **people_form(annotator_a, blind, adjudicator))
    assert first.status_code == 200 and Packet.objects.count() == 1
    client = client_for(blind)
    form = people_form(annotator_a, annotator_b, adjudicator)
    page = preview(client, data, **form).content.decode()
    assert re.search(r'id="preview-refusals"[^>]*><li>Video vid_a: ' + OWN_PACKET, page), page
    assert "Change the assignment above" not in page  # the assignment is not what is wrong
    assert 'id="do-import" disabled' in page
    refused = commit(client, data, **form)
    assert refused.status_code == 400 and OWN_PACKET in refused.content.decode()
    assert GroundTruthVersion.objects.count() == 1


@pytest.mark.django_db
def test_the_form_never_starts_with_the_maintainer_himself(maintainer, annotator_a, annotator_b):
    """Even when he holds the roles, or nobody else is left: the import would refuse him."""
    from django.contrib.auth.models import Group

    Group.objects.get_or_create(name="annotators")[0].user_set.add(maintainer, annotator_a, annotator_b)
    Group.objects.get_or_create(name="adjudicators")[0].user_set.add(maintainer)
    page = client_for(maintainer).get("/imports/moments/").content.decode()
    picked = re.findall(r'<option value="(\d+)" selected', page)
    assert str(maintainer.pk) not in picked, picked
    assert sorted(picked) == sorted([str(annotator_a.pk), str(annotator_b.pk)])
