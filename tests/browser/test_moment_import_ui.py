"""Moment imports as a new maintainer meets them, in real Chromium (issue 29, items 1–3):

1. the import form starts with three different people, and its dry run refuses (with the
   reason, the import button disabled) what the import would refuse;
2. an annotation-only packet (no video, no features) says what to do: the import result,
   the packet page (upload CLIP features, the accepted layouts) and the adjudicator's
   search panel (Search and Find similar disabled); features uploaded on the packet page
   compute the version's zero-shot calibration anchor; the annotator's workspace says the
   packet has no video (play and the frame steps disabled, their keys refused) and a typed
   interval saves, while a video that should have media and does not load keeps the
   player's load error;
3. the adjudicator has the search panel before both ledgers freeze (results depend on the
   video's features only); an annotator of the blind packet still has no search at all.

Screenshots (1280×720): ``artifacts/screens/``."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from annotator.actions.search import do_upload_search_features
from annotator.models import Ledger, Packet, VersionCalibration, VideoSearchIndex
from tests.browser.ledger_pages import wait_ready, wait_saved
from tests.browser.real_keys import press_key
from tests.browser.screens import VIEWPORT, shot
from tests.browser.test_moment_search_ui import clip_features
from tests.factories import make_packet, make_ready_video
from tests.grading.test_moment_imports import QV_VAL, people
from tests.scene_video import SCENES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rows_file(tmp_path, count: int = 2):
    lines = QV_VAL.read_text().splitlines()[:count]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, [json.loads(line) for line in lines]


def with_roles(annotator_a, annotator_b, adjudicator):
    Group.objects.get_or_create(name="annotators")[0].user_set.add(annotator_a, annotator_b)
    Group.objects.get_or_create(name="adjudicators")[0].user_set.add(adjudicator)


def selected(page) -> dict[str, str]:
    return {key: page.input_value(f"select[name={key}]") for key in ("annotator_a", "annotator_b", "adjudicator")}


def test_the_import_form_starts_with_three_people_and_the_dry_run_refuses_what_the_import_would(
    page_as, maintainer, annotator_a, annotator_b, adjudicator, tmp_path
):
    with_roles(annotator_a, annotator_b, adjudicator)
    path, rows = rows_file(tmp_path)
    page = page_as(maintainer, "/imports/moments/")
    page.set_viewport_size(VIEWPORT)
    # 1. Three different people by default, by role.
    first = selected(page)
    assert len(set(first.values())) == 3, first
    assert first["adjudicator"] == str(adjudicator.pk)
    assert {first["annotator_a"], first["annotator_b"]} == {str(annotator_a.pk), str(annotator_b.pk)}
    # One person twice: the dry run says so and the import cannot be pressed.
    page.select_option("select[name=annotator_b]", str(annotator_a.pk))
    page.set_input_files("#moments-file", str(path))
    page.click("#moments-preview")
    page.wait_for_selector("#import-preview")
    assert "three different people" in page.inner_text("#preview-refusals")
    assert page.is_disabled("#do-import")
    assert "would be refused" in page.inner_text("#import-blocked")
    shot(page, "29-1-dry-run-refuses-one-person-twice", at="#import-preview")
    assert not Packet.objects.exists()
    # The maintainer himself on the packet: the import's access check refuses him, so the dry run does.
    page.select_option("select[name=annotator_b]", str(maintainer.pk))
    page.set_input_files("#moments-file", str(path))
    page.click("#moments-preview")
    page.wait_for_selector("#import-preview")
    assert "you annotate or adjudicate its packet" in page.inner_text("#preview-refusals")
    assert page.is_disabled("#do-import")
    shot(page, "29-1-dry-run-refuses-the-maintainer-himself", at="#import-preview")
    # Fixed: the dry run passes, the import runs.
    page.select_option("select[name=annotator_b]", str(annotator_b.pk))
    page.set_input_files("#moments-file", str(path))
    page.click("#moments-preview")
    page.wait_for_selector("#import-preview")
    assert page.locator("#preview-refusals").count() == 0 and page.is_enabled("#do-import")
    page.click("#do-import")
    page.wait_for_selector("#import-done")
    assert Packet.objects.count() == len({row["vid"] for row in rows})
    # 2. The result says which packets have nothing to search with, and what to do.
    note = page.inner_text("#import-annotation-only")
    assert "no video file and no features" in note and ".npz with the key features" in note, note
    links = page.locator("#imported-packets a.needs-features")
    assert links.count() == Packet.objects.count()
    shot(page, "29-2-import-result-annotation-only", at="#import-annotation-only")


def annotation_only_packet(annotator_a, annotator_b, adjudicator) -> Packet:
    call_command(
        "import_moments", str(QV_VAL), "--source=qvhighlights", "--limit-videos=1",
        *people(annotator_a, annotator_b, adjudicator), stdout=io.StringIO(),
    )  # fmt: skip
    return Packet.objects.get()


def test_an_annotation_only_packet_shows_the_way_forward_and_features_compute_the_anchor(
    page_as, maintainer, annotator_a, annotator_b, adjudicator, eager_celery, tmp_path
):
    packet = annotation_only_packet(annotator_a, annotator_b, adjudicator)
    version = VersionCalibration.objects.get(version__packet=packet).version
    anchor = {row["name"]: row for row in VersionCalibration.objects.get(version=version).anchors}
    assert anchor["retrieval_zero_shot"]["reward"] is None

    # The adjudicator (ledgers not frozen): the panel says why nothing runs, and what to do.
    page = page_as(adjudicator, f"/packets/{packet.pk}/adjudicate/")
    page.set_viewport_size(VIEWPORT)
    page.wait_for_selector("#moment-search:not([hidden]) #search-reason:not(:empty)")
    assert "nothing to search with" in page.inner_text("#search-reason")
    remedy = page.inner_text("#search-remedy")
    assert "annotation-only" in remedy and "upload CLIP features" in remedy and ".npy" in remedy, remedy
    assert page.is_disabled("#search-run") and page.is_disabled("#search-similar") and page.is_disabled("#search-text")
    shot(page, "29-2-adjudicator-panel-nothing-to-search", at="#moment-search")

    # The maintainer's packet page: the way forward and the upload of CLIP features.
    page = page_as(maintainer, f"/packets/{packet.pk}/")
    page.set_viewport_size(VIEWPORT)
    page.wait_for_selector("#search-index-forward:not([hidden])")
    assert "upload its CLIP features" in page.inner_text("#search-index-forward")
    assert "an .npz with the key features, or an .npy" in page.inner_text("#features-layouts")
    shot(page, "29-2-packet-page-upload-features", at="#search-index")
    features = tmp_path / "clip.npy"
    rows = math.ceil(float(packet.video.duration) / 2)
    np.save(features, np.random.default_rng(3).standard_normal((rows, 512)).astype("float32"))
    page.set_input_files("#features-file", str(features))
    page.fill("#features-clip-length", "2")
    page.click("#features-upload")
    # The upload's answer comes after its commit, and eager Celery runs the index build and
    # the anchors' recomputation on that commit, inside the request: once the page says so,
    # the anchor is there.
    page.wait_for_selector("#search-index-message:has-text('Features stored')")
    anchor = {row["name"]: row for row in VersionCalibration.objects.get(version=version).anchors}
    assert anchor["retrieval_zero_shot"]["reward"] is not None, anchor["retrieval_zero_shot"]
    page.reload()
    page.wait_for_selector("#search-index-details [data-field=status]:has-text('ready')")
    assert page.locator("#search-index-forward").is_hidden()
    shot(page, "29-2-packet-page-features-uploaded", at="#search-index")


PLAYER_BUTTONS = ("back10", "back1", "play", "fwd1", "fwd10")


def test_the_annotator_of_an_annotation_only_packet_types_an_interval_without_a_video(
    page_as, annotator_a, annotator_b, adjudicator
):
    packet = annotation_only_packet(annotator_a, annotator_b, adjudicator)
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    page.set_viewport_size(VIEWPORT)
    wait_ready(page)
    # The player area says there is no video, why, and what to do; no load error.
    note = page.inner_text("#player-none")
    assert "This packet has no video: it was imported from annotations only" in note, note
    assert packet.video.original_name in note and "Type each interval's start and end" in note, note
    assert "ingest it as" in note, note
    assert page.locator("#player-error").is_hidden()
    assert page.locator("#player video").count() == 0
    # The controls that cannot work are disabled, and their keys say so instead of doing nothing.
    for act in PLAYER_BUTTONS:
        assert page.is_disabled(f"#player button[data-act={act}]"), act
    assert page.is_disabled("#player .fl-rate") and page.is_disabled("#player .fl-goto")
    page.locator("#workspace").focus()
    for key in (" ", "ArrowRight", "Shift+ArrowRight", "End"):
        page.evaluate("() => { document.querySelector('#notice').textContent = ''; }")
        press_key(page, key)
        page.wait_for_function("() => document.querySelector('#notice').textContent.includes('has no video')")
        assert page.evaluate("() => window.frameledger.player.currentFrame") == 0, key
    shot(page, "29-2-annotator-workspace-annotation-only")
    # Typing the interval and the query, then Enter, saves the event.
    page.fill("#ev-query_id", "typed1")
    page.fill("#ev-query", "a person talks to the camera")
    page.click("#event-form .interval-add")
    row = page.locator("#event-form .interval-row").first
    row.locator("input").nth(0).fill("12")
    row.locator("input").nth(1).fill("18.5")
    row.locator("input").nth(1).press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#ledger-table tbody tr').length === 1")
    wait_saved(page)
    [event] = Ledger.objects.get(packet=packet, annotator=annotator_a).events.all()
    assert event.data["query_id"] == "typed1" and event.data["query"] == "a person talks to the camera"
    assert event.data["intervals"] == [[12, 18.5]], event.data


def test_the_adjudicator_of_an_annotation_only_packet_sees_why_there_is_no_player(
    page_as, annotator_a, annotator_b, adjudicator
):
    from annotator.actions.ledgers import do_freeze_ledger

    packet = annotation_only_packet(annotator_a, annotator_b, adjudicator)
    for user in (annotator_a, annotator_b):
        ledger = Ledger.objects.get(packet=packet, annotator=user)
        attestation = "I marked every query of this packet myself, without seeing the other ledger."
        do_freeze_ledger(ledger, actor=user, attestation=attestation, expected_version=ledger.version)
    page = page_as(adjudicator, f"/packets/{packet.pk}/adjudicate/")
    page.set_viewport_size(VIEWPORT)
    page.wait_for_function("() => window.frameledger && window.frameledger.ready === true")
    note = page.inner_text("#player-none")
    assert "This packet has no video: it was imported from annotations only" in note, note
    assert "ingest it as" in note, note
    assert page.locator("#player-error").is_hidden(), page.inner_text("#player-error")
    assert page.locator("#player video").count() == 0
    for act in PLAYER_BUTTONS:
        assert page.is_disabled(f"#player button[data-act={act}]"), act
    shot(page, "29-2-adjudicator-annotation-only-player")


def test_a_video_that_should_have_media_and_does_not_load_keeps_the_load_error(
    page_as, maintainer, annotator_a, annotator_b, adjudicator
):
    # A ready video row whose files are missing (not an annotation-only import).
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
                         video=make_ready_video("lost", frame_count=240), title="lost")  # fmt: skip
    page = page_as(annotator_a, f"/packets/{packet.pk}/")
    wait_ready(page)
    assert "The video could not be loaded" in page.inner_text("#player-error")
    assert page.locator("#player-none").count() == 0
    assert page.is_enabled("#player button[data-act=play]")


@pytest.fixture
def unfrozen_search_packet(maintainer, annotator_a, annotator_b, adjudicator, eager_celery,
                           django_capture_on_commit_callbacks):  # fmt: skip
    """A moment packet (both ledgers open) whose video has CLIP features and text features."""
    seconds = sum(length for _, length in SCENES)
    with django_capture_on_commit_callbacks(execute=True):
        packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
                             video=make_ready_video("scenes", frame_count=24 * seconds), title="scenes")  # fmt: skip
    features, text = clip_features()
    with django_capture_on_commit_callbacks(execute=True):
        do_upload_search_features(packet.video, actor=maintainer, features=features, name="scenes.npz",
                                  clip_length=1.0, text_features=text)  # fmt: skip
    assert VideoSearchIndex.objects.get(video=packet.video).status == "ready"
    return packet


def test_the_adjudicator_searches_before_both_ledgers_freeze(page_as, unfrozen_search_packet, adjudicator, annotator_a):
    packet = unfrozen_search_packet
    page = page_as(adjudicator, f"/packets/{packet.pk}/adjudicate/")
    page.set_viewport_size(VIEWPORT)
    page.wait_for_selector("#waiting:not([hidden])")
    assert "Waiting for both ledgers to freeze" in page.inner_text("#waiting")
    page.wait_for_selector("#moment-search:not([hidden]) #search-reason:not(:empty)")
    assert page.is_enabled("#search-run")
    assert page.is_disabled("#search-similar")  # no union yet: no interval to start from
    page.fill("#search-text", "a red scene")
    page.click("#search-run")
    page.wait_for_selector("#search-results .ms-result")
    spans = page.locator("#search-results .ms-span").all_inner_texts()
    assert spans and spans[0].startswith(("0 s", "12 s")), spans  # the red scenes: 0–6 s and 12–18 s
    assert "union opens once both ledgers are frozen" in page.inner_text("#search-note")
    shot(page, "29-3-adjudicator-searches-while-waiting", at="#moment-search")
    # Blindness: an annotator of the packet gets neither the page nor the search.
    other = page_as(annotator_a, f"/api/packets/{packet.pk}/search/")
    assert "Not found" in other.content() or "not_found" in other.content(), other.content()[:300]
    assert page_as(annotator_a, f"/packets/{packet.pk}/adjudicate/").locator("#moment-search").count() == 0
