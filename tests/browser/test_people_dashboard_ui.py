"""In real Chromium: a maintainer invites a person, the invitee sets a password through
the one-time link and signs in; the maintainer filters the dashboard and reads the
audit view with its attestation text. Screenshots at 1280×720 go to artifacts/screenshots/."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.models import Ledger
from tests.browser.ledger_pages import screenshot
from tests.factories import make_packet, make_ready_video, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1280, "height": 720}
ATTESTATION = "I labelled every action in this video alone and without seeing other labels."


def test_invite_set_password_and_sign_in(page_as, chromium, live_server):
    maintainer = make_user("maintainer", maintainer=True)
    page = page_as(maintainer, "/people/")
    page.set_viewport_size(VIEWPORT)
    page.fill("#invite-username", "carol")
    page.check("input[name=roles][value=annotator]")
    page.click("#invite")
    page.wait_for_selector("#invite-result")
    link = page.input_value("#invite-link")
    assert link.startswith(live_server.url + "/people/set-password/")
    assert page.locator('#people tr[data-username="carol"]').inner_text().count("invited (no password yet)") == 1
    screenshot(page, "people-invite-1280x720.png", full_page=False)

    context = chromium.new_context(viewport=VIEWPORT)  # the invitee: nobody signed in
    try:
        invitee = context.new_page()
        invitee.goto(link)
        assert invitee.inner_text("#link-username") == "carol"
        invitee.fill("#new-password", "carol's own secret")
        invitee.fill("#new-password-again", "carol's own secret")
        screenshot(invitee, "invitee-set-password-1280x720.png", full_page=False)
        invitee.click("#set-password")
        invitee.wait_for_selector("#password-set")
        invitee.fill("#id_username", "carol")
        invitee.fill("#id_password", "carol's own secret")
        invitee.click("button[type=submit]")
        invitee.wait_for_url(live_server.url + "/")
        assert invitee.inner_text(".topbar .who") == "carol"
        assert invitee.locator(".maint-nav").count() == 0  # an annotator has no maintainers' navigation
        assert invitee.goto(live_server.url + "/dashboard/").status == 404
        assert invitee.goto(link).status == 404  # the link worked once
        assert "used already" in invitee.inner_text("#link-invalid")
    finally:
        context.close()
    assert User.objects.get(username="carol").has_usable_password()


def test_dashboard_filters_and_audit_view(page_as):
    maintainer = make_user("maintainer", maintainer=True)
    a, b, j = make_user("annotator_a"), make_user("annotator_b"), make_user("adjudicator")
    idle = make_packet(maintainer, a, b, j, title="Kitchen idle", video=make_ready_video("idle"))
    busy = make_packet(maintainer, a, b, j, title="Kitchen busy", video=make_ready_video("busy"))
    ledger_a = Ledger.objects.get(packet=busy, side="A")
    do_add_event(ledger_a, {"verb": "take", "nouns": ["cup"], "start_frame": 3, "end_frame": 30},
                 actor=a, expected_version=0)  # fmt: skip
    do_freeze_ledger(ledger_a, actor=a, attestation=ATTESTATION, expected_version=1)

    page = page_as(maintainer, "/dashboard/")
    page.set_viewport_size(VIEWPORT)
    assert page.locator("#dashboard-rows tbody tr").count() == 2
    busy_row = page.locator(f'#dashboard-rows tr[data-packet="{busy.pk}"]')
    assert busy_row.get_attribute("data-state") == "in progress"
    assert "1 event · frozen" in busy_row.inner_text()
    assert "0 events" in page.locator(f'#dashboard-rows tr[data-packet="{idle.pk}"]').inner_text()
    screenshot(page, "dashboard-1280x720.png", full_page=False)
    page.select_option("#dashboard-filters select[name=state]", "assigned")
    page.click("#apply-filters")
    page.wait_for_url("**state=assigned**")
    assert [r.get_attribute("data-packet") for r in page.locator("#dashboard-rows tbody tr").all()] == [str(idle.pk)]

    page.click(".maint-nav >> text=Audit")
    page.wait_for_selector("#audit-rows")
    page.select_option("#audit-filters select[name=operation]", "freeze_ledger")
    page.click("#apply-audit-filters")
    page.wait_for_url("**operation=freeze_ledger**")
    rows = page.locator("#audit-rows tbody tr")
    assert rows.count() == 1
    assert ATTESTATION in rows.first.inner_text()
    assert "T" not in rows.first.locator("td").first.inner_text().split(",")[0]  # "30 Nov 2026, …", not ISO
    screenshot(page, "audit-view-1280x720.png", full_page=False)


def test_project_with_round_robin_packets_and_a_label_import_preview(page_as):
    from pathlib import Path

    maintainer = make_user("maintainer", maintainer=True)
    for name in ["ann", "bea", "cid", "judge"]:
        make_user(name)
    videos = [make_ready_video(f"Kitchen {i}") for i in range(3)]
    page = page_as(maintainer, "/projects/")
    page.set_viewport_size(VIEWPORT)
    page.fill("#project-title", "Kitchens")
    # The parameter fields follow what the chosen kind asks for (its schema's ui.asks).
    shown = {}
    for kind in ("break-point-ledger", "moment-queries", "action-ledger"):
        page.select_option("#project-kind", kind)
        shown[kind] = [box for box in ("#project-players", "#project-grid") if page.is_visible(box)]
    assert shown == {
        "break-point-ledger": ["#project-players"],
        "moment-queries": ["#project-grid"],
        "action-ledger": [],
    }
    page.select_option("#project-annotators", label=["ann", "bea", "cid"])
    page.select_option("#project-adjudicators", label=["judge"])
    page.click("#create-project")
    page.wait_for_selector("#bulk-form")
    page.select_option("#bulk-videos", [str(v.pk) for v in videos])
    page.click("#create-packets")
    page.wait_for_selector("#made")
    rows = page.locator("#dashboard-rows tbody tr")
    assert rows.count() == 3
    people = [rows.nth(i).locator("td").nth(3).inner_text().split("\n")[0] for i in range(3)]
    assert sorted(people) == ["ann", "bea", "cid"]  # each annotator is A once
    screenshot(page, "project-1280x720.png", full_page=False)

    packet_id = rows.first.get_attribute("data-packet")
    page.goto(page.url.split("/projects/")[0] + f"/packets/{packet_id}/labels/import/")
    labels = Path("data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt")
    page.set_input_files("#labels-file", files=[{
        "name": "mixed.txt", "mimeType": "text/plain",
        "buffer": labels.read_bytes() + b"\nnot a label\n<take><cup> (30-10)\n",
    }])  # fmt: skip
    page.click("#preview")
    page.wait_for_selector("#import-preview")
    counts = page.inner_text("#preview-counts")
    assert "172 valid actions" in counts and "2 refused lines" in counts
    assert page.locator("#do-import").count() == 0
    screenshot(page, "gtea-import-preview-1280x720.png", full_page=False)
