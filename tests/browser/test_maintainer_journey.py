"""A maintainer runs a whole labelling project from the browser, from an empty database
(the migrations' rows only: built-in task kinds and the maintainers group), in real
Chromium with real ffmpeg ingest (Celery tasks inline in the server):

sign in → invite two annotators and an adjudicator (each sets a password through the
link) → make a task kind in the editor → create a project with it → upload three
generated videos → one packet per video → import provisional labels for one →
watch the dashboard while the annotators and the adjudicator work (annotator B in their
workspace by keyboard; annotator A and the adjudicator through the API as themselves) →
publish with confirmation → grade two submissions.

A screenshot of each page at 1280×720 goes to ``$FRAMELEDGER_SCREENSHOTS`` (default: a
temporary directory, printed at the end)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotator.models import GroundTruthVersion, Ledger, Packet, SubmissionScore, TaskKind, Union, Video
from tests.browser.ledger_pages import add_action_by_keyboard, wait_ready, wait_saved
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1280, "height": 720}
SOURCES = ["h264-2997-gop12", "h264-24-gop250", "h264-vfr-bframes"]  # 240, 300 and 240 frames
ATTESTATION = "I labelled every action in this video alone and without seeing other labels."
LABELS = b"<take><cup> (10-40)\n<open><fridge> (60-90)\n<put><cup> (120-150)\n"
A_EVENTS = [("take", ["cup"], 10, 40), ("open", ["fridge"], 60, 90), ("put", ["cup"], 120, 150)]
B_EVENTS = [("take", ["cup"], 12, 41), ("open", ["fridge"], 61, 92), ("close", ["fridge"], 180, 200)]


@pytest.fixture
def shots():
    """(page, name, at=selector) -> a 1280×720 screenshot in $FRAMELEDGER_SCREENSHOTS,
    scrolled to ``at`` when given."""
    folder = Path(os.environ.get("FRAMELEDGER_SCREENSHOTS") or tempfile.mkdtemp(prefix="frameledger-journey-"))
    folder.mkdir(parents=True, exist_ok=True)
    taken = []

    def take(page, name: str, at: str | None = None) -> None:
        page.set_viewport_size(VIEWPORT)
        page.evaluate("window.scrollTo(0, 0)")
        if at:  # the part of the page the step is about
            page.locator(at).first.scroll_into_view_if_needed()
        path = folder / f"{len(taken) + 1:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=False)
        taken.append(path)

    yield take
    print(f"\n{len(taken)} screenshots in {folder}")


def sign_in(chromium, live_server, username: str, password: str):
    page = chromium.new_context(viewport=VIEWPORT).new_page()
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    return page


def api_as(username: str) -> APIClient:
    client = APIClient()
    client.force_login(User.objects.get(username=username))
    return client


def invite(page, live_server, chromium, username: str, role: str, shots) -> None:
    page.goto(live_server.url + "/people/")
    page.fill("#invite-username", username)
    page.check(f"input[name=roles][value={role}]")
    page.click("#invite")
    page.wait_for_selector("#invite-result")
    link = page.input_value("#invite-link")
    if username == "ana":
        shots(page, "people-invited")
    invitee = chromium.new_context(viewport=VIEWPORT).new_page()
    invitee.goto(link)
    invitee.fill("#new-password", f"{username} own secret 1")
    invitee.fill("#new-password-again", f"{username} own secret 1")
    if username == "ana":
        shots(invitee, "invitee-sets-password")
    invitee.click("#set-password")
    invitee.wait_for_selector("#password-set")
    invitee.context.close()


def work_on_ledger(packet: Packet, side: str, events) -> None:
    ledger = Ledger.objects.select_related("annotator").get(packet=packet, side=side)
    client = api_as(ledger.annotator.username)
    url = f"/api/packets/{packet.pk}/ledger/"
    for version, (verb, nouns, start, end) in enumerate(events):
        data = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
        response = client.post(url + "events/", {"data": data, "version": version}, format="json")
        assert response.status_code == 201, response.content
    response = client.post(url + "freeze/", {"attestation": ATTESTATION, "version": len(events)}, format="json")
    assert response.status_code == 200, response.content


def work_in_the_workspace(page, events) -> None:
    """Annotator B's ledger through their own page: each event by keyboard, then the freeze
    with its attestation."""
    wait_ready(page)
    for start_frame_, end_frame_, verb, nouns in events:
        add_action_by_keyboard(page, start_frame_, end_frame_, verb, nouns)
        wait_saved(page)
    page.click("#freeze-open")
    page.fill("#attestation", ATTESTATION)
    page.click("#freeze-confirm")
    page.wait_for_selector("#frozen-banner:not([hidden])")


def adjudicate(packet: Packet) -> None:
    client = api_as(packet.adjudicator.username)
    assert client.post(f"/api/packets/{packet.pk}/union/", {}, format="json").status_code in {200, 201}
    union = Union.objects.get(packet=packet)
    for item in union.items.exclude(status="agreed").order_by("position"):
        action = "take_a" if item.a_value else "take_b"
        body = {"action": action, "rationale": "checked against the video frame by frame"}
        response = client.post(f"/api/packets/{packet.pk}/union/items/{item.position}/decision/", body, format="json")
        assert response.status_code == 200, response.content


def test_a_maintainer_runs_a_project_from_an_empty_database(chromium, live_server, migration_rows, eager_celery,
                                                           synthetic_source, shots, tmp_path):  # fmt: skip
    assert not Video.objects.exists() and not Packet.objects.exists() and User.objects.count() == 0
    make_user("maria", maintainer=True)

    # 1. Sign in.
    page = sign_in(chromium, live_server, "maria", "maria-password")
    page.wait_for_selector("#no-packets:not([hidden])")
    assert "To start a project" in page.inner_text("#no-packets")
    shots(page, "home-empty")

    # 2. People: two annotators and an adjudicator, each through a one-time link.
    for username, role in (("ana", "annotator"), ("ben", "annotator"), ("jude", "adjudicator")):
        invite(page, live_server, chromium, username, role, shots)
    page.goto(live_server.url + "/people/")
    assert [r.get_attribute("data-username") for r in page.locator("#people tbody tr").all()] == [
        "ana", "ben", "jude", "maria"]  # fmt: skip
    shots(page, "people")

    # 3. A task kind made in the editor: a copy of the action ledger with a tolerance of 8.
    page.goto(live_server.url + "/task-kinds/?from=action-ledger")
    page.locator("#kind-preview form.event-form").wait_for()
    page.fill("#kind-slug", "kitchen-actions")
    page.fill("#kind-name", "Kitchen actions")
    page.fill("#kind-tolerance", "8")
    shots(page, "task-kind-editor")
    page.click("#create-kind")
    page.wait_for_selector("#kind-created")
    kind = TaskKind.objects.get(slug="kitchen-actions")
    assert kind.schema["tolerance"] == 8 and kind.schema["fields"] == TaskKind.objects.get(
        slug="action-ledger").schema["fields"]  # fmt: skip

    # 4. A project with that kind; its link to the editor is on the form.
    page.goto(live_server.url + "/projects/")
    assert page.locator("#new-kind-link").count() == 1
    page.fill("#project-title", "Kitchen study")
    page.select_option("#project-kind", "kitchen-actions")
    ids = {u.username: str(u.pk) for u in User.objects.all()}
    page.select_option("#project-annotators", [ids["ana"], ids["ben"]])
    page.select_option("#project-adjudicators", [ids["jude"]])
    shots(page, "project-form")
    page.click("#create-project")
    page.wait_for_selector("#bulk-form")

    # 5. Three generated videos, uploaded and ingested.
    project_url = page.url
    upload = chromium.new_context(viewport=VIEWPORT)
    upload.add_cookies(page.context.cookies())
    uploader = upload.new_page()
    for number, name in enumerate(SOURCES, start=1):
        uploader.goto(live_server.url + "/maintainer/packets/new/")
        wait_ready(uploader)
        uploader.fill("#video-title", f"Kitchen {number}")
        uploader.set_input_files("#video-file", str(synthetic_source(name)))
        uploader.click("#upload")
        uploader.wait_for_selector("#step-ingest[data-status=done]", timeout=120000)
        if number == 1:
            shots(uploader, "upload-ingested")
    assert Video.objects.filter(status=Video.Status.READY).count() == 3

    # 6. One packet per video, assigned by round robin.
    page.goto(project_url)
    page.select_option("#bulk-videos", [str(v.pk) for v in Video.objects.order_by("title")])
    page.click("#create-packets")
    page.wait_for_selector("#made")
    assert "3 packets created." in page.inner_text("#made")
    shots(page, "project-packets")
    packets = list(Packet.objects.order_by("pk"))
    assert len(packets) == 3 and {p.task_kind.slug for p in packets} == {"kitchen-actions"}
    first = packets[0]

    # 7. Provisional labels for the first packet: dry run, then import.
    labels = tmp_path / "kitchen-1.txt"
    labels.write_bytes(LABELS)
    page.goto(live_server.url + f"/packets/{first.pk}/labels/import/")
    page.set_input_files("#labels-file", str(labels))
    page.click("#preview")
    page.wait_for_selector("#import-preview")
    assert "<strong>3</strong>" in page.inner_html("#preview-counts")
    shots(page, "labels-dry-run")
    page.click("#do-import")
    page.wait_for_selector("#import-done")
    assert GroundTruthVersion.objects.get(packet=first).tier == "provisional"

    # 8. The dashboard while the three people work.
    page.goto(live_server.url + "/dashboard/")
    assert page.locator("#dashboard-rows tbody tr").count() == 3
    shots(page, "dashboard-assigned")
    work_on_ledger(first, "A", A_EVENTS)
    annotator_a = first.annotator_a.username
    home = sign_in(chromium, live_server, annotator_a, f"{annotator_a} own secret 1")
    shots(home, "annotator-home")
    home.goto(live_server.url + f"/packets/{first.pk}/")
    wait_ready(home)
    shots(home, "annotator-workspace-frozen")
    page.reload()
    assert page.locator(f'#dashboard-rows tr[data-packet="{first.pk}"]').get_attribute("data-state") == "in progress"
    shots(page, "dashboard-one-frozen")
    annotator_b = first.annotator_b.username
    workspace = sign_in(chromium, live_server, annotator_b, f"{annotator_b} own secret 1")
    workspace.goto(live_server.url + f"/packets/{first.pk}/")
    work_in_the_workspace(workspace, [(s, e, v, n) for v, n, s, e in B_EVENTS])
    shots(workspace, "annotator-b-frozen-by-keyboard")
    assert Ledger.objects.get(packet=first, side="B").events.count() == len(B_EVENTS)
    adjudicate(first)
    page.reload()
    shots(page, "dashboard-adjudicating")

    # 9. The adjudicator publishes, after the confirmation.
    judge = sign_in(chromium, live_server, "jude", "jude own secret 1")
    judge.goto(live_server.url + f"/packets/{first.pk}/")
    wait_ready(judge)
    judge.click("#publish")
    judge.wait_for_selector("#publish-dialog[open]")
    assert "This publishes adjudicated v1" in judge.inner_text("#publish-summary")
    shots(judge, "publish-confirmation")
    judge.click("#publish-confirm")
    judge.wait_for_selector("#version-link")
    shots(judge, "published")
    version = GroundTruthVersion.objects.get(packet=first, tier="adjudicated")
    page.reload()
    assert page.locator(f'#dashboard-rows tr[data-packet="{first.pk}"]').get_attribute("data-state") == "published"
    shots(page, "dashboard-published")

    # 10. Two submissions graded against the published version, once it is marked ready
    # (its calibration anchors were computed at publication).
    page.goto(live_server.url + f"/grading/versions/{version.pk}/")
    page.wait_for_selector("#grading-version[data-state=ready]")
    page.click("button[data-action=ready]", timeout=60000)
    page.wait_for_function(
        "() => document.querySelector('[data-field=ready-message]').textContent.includes('Ready for grading')"
    )
    shots(page, "version-ready")
    good = tmp_path / "agent-good.json"
    good.write_text(json.dumps({"actions": [
        {"verb": v, "nouns": n, "start_frame": s, "end_frame": e} for v, n, s, e in A_EVENTS]}))  # fmt: skip
    poor = tmp_path / "agent-poor.json"
    poor.write_text(json.dumps({"actions": [{"verb": "take", "nouns": ["cup"], "start_frame": 100, "end_frame": 130}]}))
    page.goto(live_server.url + f"/grading/packets/{first.pk}/")
    page.wait_for_selector("#grading-packet[data-state=ready]")
    page.set_input_files("#grading-upload input[name=files]", [str(good), str(poor)])
    page.fill("#grading-upload textarea[name=labels]", "good agent\npoor agent")
    page.click("#grading-upload button[type=submit]")
    page.wait_for_function("() => document.querySelector('[data-field=upload-message]').textContent.includes('stored')")
    page.click(f'button[data-start="{version.pk}"]')
    page.wait_for_selector("#grading-runs tr[data-run] [data-field=job]:text-matches('done')", timeout=60000)
    shots(page, "grading-run", at="#grading-submissions")
    page.goto(live_server.url + f"/grading/versions/{version.pk}/")
    page.wait_for_selector("#grading-version[data-state=ready]")
    page.wait_for_selector("#leaderboard td")
    board = page.inner_text("#leaderboard")
    assert "good agent" in board and "poor agent" in board
    rewards = {s.submission.label: s.reward for s in SubmissionScore.objects.select_related("submission")}
    assert rewards["good agent"] > rewards["poor agent"] == 0
    shots(page, "leaderboard", at="#leaderboard")
