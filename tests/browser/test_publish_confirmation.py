"""Issue 14 in real Chromium: publishing asks first and shows what will be published, the
adjudication page warns about unpublished changes, the home page says "published v1"
afterwards, the agreement report names its sides, the waiting state has no empty
cards, and the leaderboard fits 1440 px and 1280x720. Screenshots under
artifacts/screenshots/issue14-*.png."""

from __future__ import annotations

import re

import pytest

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.union import do_build_union
from annotator.models import GroundTruthVersion, Ledger
from tests.browser.ledger_pages import screenshot, wait_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIDEO = "h264-2997-gop12"  # 240 frames
ATTESTATION = "I labelled this video alone, from the video only."
A_EVENTS = [("take", ["cup"], 10, 40), ("put", ["plate"], 60, 90), ("cut", ["bagel"], 120, 150)]
B_EVENTS = [("take", ["cup"], 10, 40), ("put", ["plate"], 64, 95), ("open", ["fridge"], 180, 200)]
WIDE, SMALL = {"width": 1440, "height": 900}, {"width": 1280, "height": 720}


def freeze(packet, side, user, events):
    ledger = Ledger.objects.get(packet=packet, side=side)
    for version, (verb, nouns, start, end) in enumerate(events):
        data = {"verb": verb, "nouns": nouns, "start_frame": start, "end_frame": end}
        do_add_event(ledger, data, actor=user, expected_version=version)
    do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=len(events))


def decided_union(packet, annotator_a, annotator_b, adjudicator):
    freeze(packet, "A", annotator_a, A_EVENTS)
    freeze(packet, "B", annotator_b, B_EVENTS)
    union = do_build_union(packet, actor=adjudicator)
    for item in union.items.exclude(status="agreed"):
        action = "take_a" if item.a_value else "drop"
        do_decide_item(item, actor=adjudicator, action=action, rationale="checked against the video")
    return union


def overflow(page) -> int:
    """How many pixels the page is wider than the window (0 when it fits)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_publishing_asks_first_and_the_page_warns_about_unpublished_changes(
    page_as, media_packet, annotator_a, annotator_b, adjudicator, maintainer
):
    packet = media_packet(VIDEO)
    union = decided_union(packet, annotator_a, annotator_b, adjudicator)
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    page.set_viewport_size(SMALL)
    wait_ready(page)
    assert page.is_hidden("#unpublished"), "nothing published yet: nothing to warn about"

    page.click("#publish")
    page.wait_for_selector("#publish-dialog[open]")
    summary = page.inner_text("#publish-summary")
    assert "This publishes adjudicated v1 with 3 event(s) from 4 union item(s)." in summary
    assert "First adjudicated version of this packet." in summary
    counts = dict(
        row.split("\t") for row in page.locator("#publish-counts tr").all_inner_texts()
    )  # decision name -> count
    assert counts["take A"] == "2" and counts["dropped"] == "1" and counts["agreed (no decision needed)"] == "1"
    assert page.inner_text("#publish-dialog-title") == "Publish adjudicated v1?"
    screenshot(page, "issue14-publish-confirmation-1280x720.png", full_page=False)
    assert not GroundTruthVersion.objects.filter(packet=packet).exists(), "the dialog alone publishes nothing"

    page.click("#publish-cancel")
    assert not GroundTruthVersion.objects.filter(packet=packet).exists()
    page.click("#publish")
    page.wait_for_selector("#publish-dialog[open]")
    page.click("#publish-confirm")
    page.wait_for_selector("#version-link")
    assert "Published adjudicated v1" in page.inner_text("#published")
    assert GroundTruthVersion.objects.filter(packet=packet, tier="adjudicated").count() == 1
    # The header's next step says so at once, not after a reload.
    next_step = "nothing: adjudicated v1 is published (you publish again after a changed decision)"
    page.wait_for_function("(t) => document.querySelector('#next-step').textContent === t", arg=next_step)
    screenshot(page, "37-next-step-after-publishing.png", full_page=False)

    # A decision changes after publication (here from another session): the page warns.
    a_only = union.items.get(status="a_only")
    do_decide_item(a_only, actor=adjudicator, action="drop", rationale="the cut is off screen after all")
    page.reload()
    page.set_viewport_size(WIDE)
    wait_ready(page)
    page.wait_for_selector("#unpublished:not([hidden])")
    banner = page.inner_text("#unpublished")
    assert banner.startswith("Unpublished changes: the decisions differ from the published adjudicated v1")
    assert "0 added, 1 removed" in banner
    page.click("#publish")
    page.wait_for_selector("#publish-dialog[open]")
    assert page.inner_text("#publish-dialog-title") == "Publish adjudicated v2?"
    assert "Against adjudicated v1: 0 added, 1 removed, 0 changed, 2 kept." in page.inner_text("#publish-summary")
    assert "cut" in page.inner_text("#publish-summary")  # the removed event, readable
    screenshot(page, "issue14-publish-changelog-1440x900.png", full_page=False)
    page.click("#publish-cancel")
    screenshot(page, "issue14-unpublished-banner-1440x900.png", full_page=False)

    # Home pages say "published", not "ready for adjudication".
    for person in (adjudicator, annotator_a, maintainer):
        home = page_as(person, "/")
        home.set_viewport_size(SMALL)
        home.wait_for_selector("#packets tbody tr")
        status = home.inner_text("#packets tbody tr td[data-column=status]")
        assert status == "published adjudicated v1", (person.username, status)
    screenshot(home, "issue14-home-published-1280x720.png", full_page=False)

    # The maintainer's packet page names the version by tier and leads to grading.
    progress = page_as(maintainer, f"/packets/{packet.pk}/")
    progress.set_viewport_size(SMALL)
    wait_ready(progress)
    assert "Published: adjudicated v1." in progress.inner_text("#union-state")
    assert progress.inner_text("#versions tbody tr td a") == "adjudicated v1"
    screenshot(progress, "issue14-maintainer-packet-1280x720.png", full_page=False)
    progress.click("#grading-link")
    progress.wait_for_selector("#grading-packet[data-state=ready]")
    assert progress.locator("#grading-versions tbody tr td a").first.inner_text() == "adjudicated v1"

    # The agreement report names what each section compares.
    report = page_as(maintainer, f"/grading/packets/{packet.pk}/agreement/")
    report.set_viewport_size(SMALL)
    report.wait_for_selector("#agreement[data-state=ready]")
    text = report.inner_text("#agreement")
    assert "frames (adjudicated v1 minus A)" in text and "frames (B minus A)" in text
    assert "first [" not in text and "second [" not in text
    assert "1 event(s) only in A (#3)" in text
    assert overflow(report) <= 0
    screenshot(report, "issue14-agreement-1280x720.png")


def test_the_adjudicator_sees_only_a_waiting_state_before_both_freezes(page_as, packet, annotator_a, adjudicator):
    freeze(packet, "A", annotator_a, A_EVENTS[:1])
    page = page_as(adjudicator, f"/packets/{packet.pk}/")
    wait_ready(page)
    assert page.get_attribute("#adjudication", "data-state") == "waiting"
    assert "Waiting for both ledgers to freeze (A: frozen, B: not frozen yet)" in page.inner_text("#waiting")
    assert not page.is_visible(".adj-grid") and not page.is_visible("#timeline") and not page.is_visible("#publish")
    screenshot(page, "issue14-adjudicator-waiting-1280x720.png", full_page=False)


def test_the_leaderboard_fits_the_window_with_readable_names_and_times(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    import hashlib
    import json

    from annotator.actions.grading import do_mark_version_ready, do_start_scoring_run, do_upload_submissions
    from annotator.actions.versions import do_import_provisional_version
    from annotator.base.grading.uploads import byte_cap, make_file
    from tests.factories import make_packet, make_ready_video
    from tests.grading.conftest import TENNIS_FRAMES, TENNIS_ORACLE, score_in_process, tennis_submissions

    video = make_ready_video("Medvedev v De Minaur, US Open 2023", frame_count=TENNIS_FRAMES, fps=(30000, 1001))
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="break-point-ledger", video=video)
    data = TENNIS_ORACLE.read_bytes()
    version = do_import_provisional_version(
        packet, json.loads(data)["break_points"], actor=maintainer, source="oracle solution.json",
        source_sha256=hashlib.sha256(data).hexdigest(),
    )  # fmt: skip
    do_mark_version_ready(version, actor=maintainer)
    cap = byte_cap(packet.task_kind.scorer_id)
    files = [make_file(name, path.name, [path.read_bytes()], cap) for name, path in tennis_submissions().items()]
    submissions = do_upload_submissions(packet, files, actor=maintainer)
    score_in_process(do_start_scoring_run(version, submissions, actor=maintainer, dispatch=False))

    page = page_as(maintainer, f"/grading/versions/{version.pk}/")
    for size, name in ((WIDE, "1440x900"), (SMALL, "1280x720")):
        page.set_viewport_size(size)
        page.wait_for_selector("#grading-version[data-state=ready]")
        page.wait_for_selector("#leaderboard tbody tr")
        assert overflow(page) <= 0, f"the leaderboard page is {overflow(page)} px wider than {name}"
        headers = page.locator("#leaderboard thead th").all_inner_texts()
        assert headers and not [h for h in headers if "_" in h], headers
        body = page.inner_text("body")
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", body), "a raw ISO timestamp is shown"
        page.evaluate("document.querySelector('#leaderboard').scrollIntoView()")
        screenshot(page, f"issue14-leaderboard-{name}.png", full_page=False)
        inner = page.evaluate(
            "(() => { const b = document.querySelector('.lb-scroll'); return b.scrollWidth - b.clientWidth; })()"
        )
        assert inner <= 0, f"the leaderboard table scrolls {inner} px inside its card at {name}"


def test_a_tennis_packet_made_in_the_browser_names_its_two_players(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    from annotator.models import Packet
    from tests.factories import make_ready_video

    video = make_ready_video("Alcaraz v Sinner", frame_count=3000, fps=(30, 1))
    page = page_as(maintainer, "/maintainer/packets/new/")
    page.set_viewport_size(SMALL)
    wait_ready(page)
    page.select_option("#existing-video", str(video.pk))
    page.wait_for_selector("#step-packet[aria-disabled=false]")
    assert page.is_hidden("#players-field"), "the action ledger takes no players"
    page.select_option("#task-kind-select", "moment-queries")  # asks for the grid only
    assert page.is_visible("#grid-field") and page.is_hidden("#players-field")
    page.select_option("#task-kind-select", "break-point-ledger")
    assert page.is_visible("#players-field") and page.is_hidden("#grid-field")
    page.fill("#player-1", "Carlos Alcaraz")
    page.fill("#player-2", "Jannik Sinner")
    for field, person in (("#annotator-a", annotator_a), ("#annotator-b", annotator_b), ("#adjudicator", adjudicator)):
        page.select_option(field, person.username)
    screenshot(page, "issue14-new-tennis-packet-1280x720.png")
    page.click("#create-packet")
    page.wait_for_url(re.compile(r"/packets/\d+/$"))
    packet = Packet.objects.get(video=video)
    assert packet.parameters == {"players": ["Carlos Alcaraz", "Jannik Sinner"]}
