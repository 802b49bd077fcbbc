"""Moment search in the adjudication view, in real Chromium: the adjudicator of a moment
packet searches its video by text (uploaded CLIP-layout features with text features,
generated here with a fixed seed) and by example, clicks a result (the player seeks to
it) and presses ``c`` (the result becomes an interval of the final value). An annotator
of the same (blind) packet gets no search panel.

Screenshots: ``artifacts/screenshots/moment_search/``."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.files import File

from annotator.actions.ingest import do_ingest_video
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.actions.search import do_upload_search_features
from annotator.actions.union import do_build_union
from annotator.models import Job, Ledger, Video, VideoSearchIndex
from tests.browser.ledger_pages import SCREENSHOTS, wait_frame, wait_ready
from tests.factories import make_packet
from tests.scene_video import COLOURS, SCENES, write_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENSHOTS / "moment_search"
ATTESTATION = "I labelled this video alone, from the video only."
DIM = 512


def clip_features(seed: int = 11) -> tuple[bytes, bytes]:
    """CLIP-layout features (one 512-d row per 1 s clip) of the scene video: each colour
    a fixed direction plus noise; text features: "a <colour> scene" along its colour."""
    import io

    rng = np.random.default_rng(seed)
    directions = {name: rng.standard_normal(DIM) for name in COLOURS}
    rows = []
    for colour, seconds in SCENES:
        for _ in range(seconds):
            rows.append(directions[colour] + 0.6 * rng.standard_normal(DIM))
    features = io.BytesIO()
    np.savez(features, features=np.asarray(rows, dtype=np.float32))
    texts = [f"a {name} scene" for name in COLOURS]
    text = io.BytesIO()
    np.savez(text, texts=np.array(texts), embeddings=np.stack([directions[n] for n in COLOURS]).astype(np.float32))
    return features.getvalue(), text.getvalue()


@pytest.fixture
def search_packet(tmp_path, maintainer, annotator_a, annotator_b, adjudicator, eager_celery,
                  django_capture_on_commit_callbacks):  # fmt: skip
    source, _ = write_scene_video(tmp_path / "scenes.mp4")
    video = Video.objects.create(title="scenes", original_name=source.name, created_by=maintainer)
    with open(source, "rb") as handle:
        video.original.save(source.name, File(handle), save=True)
    job = Job.objects.create(kind="ingest", video=video, created_by=maintainer)
    with django_capture_on_commit_callbacks(execute=True):
        do_ingest_video(video, job)
    video.refresh_from_db()
    assert video.status == Video.Status.READY, video.error
    with django_capture_on_commit_callbacks(execute=True):
        packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries", video=video,
                             title="scenes", instructions="Mark every red scene.")  # fmt: skip
    features, text = clip_features()
    with django_capture_on_commit_callbacks(execute=True):
        do_upload_search_features(video, actor=maintainer, features=features, name="scenes.npz", clip_length=1.0,
                                  text_features=text)  # fmt: skip
    row = VideoSearchIndex.objects.get(video=video)
    assert row.status == "ready" and row.source == "uploaded" and row.text_vectors, row.error
    a, b = (Ledger.objects.get(packet=packet, side=s) for s in "AB")
    do_add_event(a, {"query_id": "q1", "query": "a red scene", "intervals": [[0.0, 6.0]]}, actor=annotator_a,
                 expected_version=0)  # fmt: skip
    do_add_event(b, {"query_id": "q1", "query": "a red scene", "intervals": [[0.0, 8.0]]}, actor=annotator_b,
                 expected_version=0)  # fmt: skip
    do_freeze_ledger(a, actor=annotator_a, attestation=ATTESTATION, expected_version=1)
    do_freeze_ledger(b, actor=annotator_b, attestation=ATTESTATION, expected_version=1)
    do_build_union(packet, actor=adjudicator)
    return packet


def results(page) -> list[str]:
    return page.locator("#search-results .ms-span").all_inner_texts()


def test_the_adjudicator_searches_by_text_and_by_example_and_takes_a_result(page_as, search_packet, adjudicator):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = page_as(adjudicator, f"/packets/{search_packet.pk}/")
    wait_ready(page)
    panel = page.locator("#moment-search")
    assert panel.is_visible()
    reason = page.locator("#search-reason").inner_text()
    assert "Text search knows the 4 description(s)" in reason, reason
    page.screenshot(path=str(SHOTS / "01-adjudication-with-search.png"), full_page=True)

    # Text: the green scene (18-24 s) comes first; the player goes to its start.
    page.locator("#search-text").fill("a green scene")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0")
    assert results(page)[0] == "18 s–24 s", results(page)
    wait_frame(page, 18 * 12)
    # The results lane (zoomed to the highlighted result: those in view are drawn).
    assert page.locator(".tl-lane.lane-search .tl-item.ms-highlighted").count() == 1
    page.screenshot(path=str(SHOTS / "02-text-search-green.png"), full_page=True)

    # By example: the selected item's interval (A: red, 0-6 s); the other red scene first.
    page.locator("#search-similar").click()
    page.wait_for_function(
        "() => document.querySelector('#search-status').textContent.includes('(s) like frames 0–72')"
    )
    assert results(page)[0] == "12 s–18 s", results(page)
    spans = [[int(x) for x in r.replace(" s", "").split("–")] for r in results(page)]
    assert not [s for s in spans if s[0] >= 0 and s[1] <= 6]  # the example (or a part of it) is left out
    wait_frame(page, 12 * 12)
    page.screenshot(path=str(SHOTS / "03-find-similar-red.png"), full_page=True)

    # A click on the second result seeks there; c makes it an interval of the final value.
    second = page.locator("#search-results .ms-result").nth(1)
    second_span = results(page)[1]
    start = int(second_span.split(" s")[0])
    second.click()
    wait_frame(page, start * 12)
    assert page.locator("#search-results li.highlighted .ms-span").inner_text() == second_span
    page.keyboard.press("c")
    page.wait_for_function("() => !document.querySelector('#edit-box').hidden")
    assert page.locator('#decision-form input[value="edit"]').is_checked()
    rows = page.locator("#edit-form .interval-row")
    values = [[float(rows.nth(i).locator("input").nth(k).input_value()) for k in range(2)] for i in range(rows.count())]
    end = int(second_span.split("–")[1].split(" s")[0])
    assert values == [[0.0, 6.0], [float(start), float(end)]], values
    assert "added to the final value" in page.locator("#live-notice").inner_text()
    page.screenshot(path=str(SHOTS / "04-candidate-in-final-value.png"), full_page=True)


def test_an_annotator_of_a_blind_packet_gets_no_search(page_as, search_packet, annotator_a):
    page = page_as(annotator_a, f"/packets/{search_packet.pk}/")
    wait_ready(page)
    assert page.locator("#moment-search").is_hidden()
    assert page.locator("#moment-search .ms-form").count() == 0


def test_an_annotator_searches_where_the_task_kind_allows_assistance(page_as, search_packet, annotator_b, maintainer):
    from annotator.actions.taskkinds import do_create_task_kind
    from annotator.models import Packet

    base = search_packet.task_kind
    kind = do_create_task_kind(
        actor=maintainer, slug="moment-queries-assisted", name="Moment queries (assisted)",
        scorer_id=base.scorer_id, schema={**base.schema, "annotator_assistance": True},
    )  # fmt: skip
    packet = make_packet(maintainer, search_packet.annotator_a, annotator_b, search_packet.adjudicator,
                         kind=kind.slug, video=search_packet.video, title="assisted")  # fmt: skip
    assert Packet.objects.get(pk=packet.pk).task_kind.schema["annotator_assistance"] is True
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = page_as(annotator_b, f"/packets/{packet.pk}/")
    wait_ready(page)
    page.locator("#search-similar").click()
    assert "Mark an interval first" in page.locator("#search-status").inner_text()
    page.locator("#search-text").fill("a yellow scene")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#search-status').textContent.includes('(s) for')")
    assert results(page)[0] == "30 s–36 s", results(page)
    page.locator("#search-results .ms-result").first.click()
    wait_frame(page, 30 * 12)
    page.keyboard.press("c")
    rows = page.locator("#event-form .interval-row")
    page.wait_for_function("() => document.querySelectorAll('#event-form .interval-row').length === 1")
    assert [rows.nth(0).locator("input").nth(k).input_value() for k in range(2)] == ["30", "36"]
    assert "search result 1" in page.locator("#notice").inner_text()
    page.screenshot(path=str(SHOTS / "05-workspace-assisted.png"), full_page=True)


def test_a_maintainer_sees_the_index_and_rebuilds_it(page_as, search_packet, maintainer):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = page_as(maintainer, f"/packets/{search_packet.pk}/")
    card = page.locator("#search-index")
    card.locator("[data-field=status]").wait_for()
    assert card.locator("[data-field=status]").inner_text() == "ready"
    assert card.locator("[data-field=source]").inner_text() == "uploaded"
    assert card.locator("[data-field=clips]").inner_text() == "36 × 512 (1 s each)"
    before = VideoSearchIndex.objects.get(video=search_packet.video).built_at
    page.locator("#search-index-rebuild").click()
    page.wait_for_function("() => document.querySelector('#search-index').textContent.includes('Rebuild queued.')")
    page.wait_for_function("() => document.querySelector('#search-index [data-field=status]').textContent === 'ready'")
    assert VideoSearchIndex.objects.get(video=search_packet.video).built_at > before
    page.screenshot(path=str(SHOTS / "06-maintainer-index-card.png"), full_page=True)
