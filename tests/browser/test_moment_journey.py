"""Moment retrieval from import to search, in real Chromium with real ffmpeg ingest
(Celery tasks inline in the server):

the maintainer imports a slice of QVHighlights val (3 rows, ``data/qvhighlights``) on the
moment import page (dry run, then import: the provisional tier of each packet is
published and its calibration anchors computed) → the result links each packet and its
version → the version page shows the anchors (oracle, empty, constant-window prior, and
the zero-shot ranker row, which says why it is not computed: an imported packet has no
``parameters.features``; the search index's features are the video's, not the packet's)
→ on the first packet's page the maintainer's index card shows the CLIP-layout
features uploaded for its video (through the card's API, 2 s clips, 512-d,
made here with a fixed seed: each scene of the video a fixed direction, the first query's
text embedding along the green scene's) → both annotators freeze their ledgers → the
adjudicator opens the adjudication view, searches by the imported query's text (the top
result lies in the green scene, the player seeks to it) and by example (the other red
scene comes first), and clicks a result (the player seeks to its first frame).

The video for that packet is a generated one of flat-coloured scenes, ingested under the
name the import gives the source's video (``qvhighlights:<vid>``), so the import uses it.

Screenshots (1280×720): ``artifacts/screenshots/moment_journey/``."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.files import File
from rest_framework.test import APIClient

from annotator.actions.ingest import do_ingest_video
from annotator.actions.ledgers import do_add_event, do_freeze_ledger
from annotator.models import GroundTruthVersion, Job, Ledger, Packet, Video, VideoSearchIndex
from tests.browser.ledger_pages import SCREENSHOTS, wait_frame, wait_ready
from tests.frontend.test_moment_import_page import QV_VAL
from tests.scene_video import write_scene_video

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = SCREENSHOTS / "moment_journey"
VIEWPORT = {"width": 1280, "height": 720}
ATTESTATION = "I labelled this video alone, from the video only."
FPS = 12
CLIP = 2.0  # seconds per feature row, as QVHighlights' (Moment-DETR) CLIP features
DIM = 512
# 150 s, the source's duration: (colour, seconds); the two red scenes look alike.
SCENES = (("red", 30), ("blue", 30), ("green", 20), ("red", 30), ("yellow", 20), ("blue", 20))
GREEN = (60.0, 80.0)
SECOND_RED = (80.0, 110.0)


def slice_rows(count: int = 3) -> tuple[bytes, list[dict]]:
    lines = QV_VAL.read_bytes().splitlines()[:count]
    return b"\n".join(lines) + b"\n", [json.loads(line) for line in lines]


def clip_features(query: str, seed: int = 13) -> tuple[bytes, bytes]:
    """One 512-d row per 2 s clip: the scene's direction plus noise; the text features
    put ``query`` along the green scene's direction (planted at 60–80 s)."""
    rng = np.random.default_rng(seed)
    directions = {name: rng.standard_normal(DIM) for name, _ in SCENES}
    rows = [directions[c] + 0.6 * rng.standard_normal(DIM) for c, seconds in SCENES for _ in range(int(seconds / CLIP))]
    features = io.BytesIO()
    np.savez(features, features=np.asarray(rows, dtype=np.float32))
    text = io.BytesIO()
    np.savez(text, texts=np.array([query]), embeddings=directions["green"][None, :].astype(np.float32))
    return features.getvalue(), text.getvalue()


@pytest.fixture
def shots():
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()
    taken = []

    def take(page, name: str, at: str | None = None) -> None:
        page.set_viewport_size(VIEWPORT)
        page.evaluate("window.scrollTo(0, 0)")
        if at:
            page.locator(at).first.scroll_into_view_if_needed()
        path = SHOTS / f"{len(taken) + 1:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=False)
        taken.append(path)

    return take


def ingest_source_video(tmp_path, vid: str, maintainer) -> Video:
    """The media of the source video ``vid``, under the name the import looks for."""
    source, frames = write_scene_video(tmp_path / "qv.mp4", scenes=SCENES, fps=FPS)
    video = Video.objects.create(title=vid, original_name=f"qvhighlights:{vid}", created_by=maintainer)
    with open(source, "rb") as handle:
        video.original.save(source.name, File(handle), save=True)
    do_ingest_video(video, Job.objects.create(kind="ingest", video=video, created_by=maintainer))
    video.refresh_from_db()
    assert video.status == Video.Status.READY and video.frame_count == frames, video.error
    return video


def spans(page) -> list[tuple[float, float]]:
    texts = page.locator("#search-results .ms-span").all_inner_texts()
    return [tuple(float(x) for x in t.replace(" s", "").split("–")) for t in texts]


def test_a_qvhighlights_slice_from_import_to_search(page_as, maintainer, annotator_a, annotator_b, adjudicator,
                                                    eager_celery, shots, tmp_path, live_server):  # fmt: skip
    data, rows = slice_rows()
    first = rows[0]
    video = ingest_source_video(tmp_path, first["vid"], maintainer)
    rows_file = tmp_path / "highlight_val_slice.jsonl"
    rows_file.write_bytes(data)

    # 1. The maintainer imports the slice: a dry run, then the import.
    page = page_as(maintainer, "/imports/moments/")
    page.set_input_files("#moments-file", str(rows_file))
    page.select_option("select[name=annotator_a]", str(annotator_a.pk))
    page.select_option("select[name=annotator_b]", str(annotator_b.pk))
    page.select_option("select[name=adjudicator]", str(adjudicator.pk))
    page.click("#moments-preview")
    page.wait_for_selector("#import-preview")
    counts = page.inner_text("#preview-counts")
    assert counts.startswith("3 videos of 3 · 3 queries in the file") and "0 refused rows" in counts, counts
    assert page.locator("#preview-videos tbody tr").count() == 3
    assert not Packet.objects.exists()
    shots(page, "import-dry-run", at="#import-preview")
    page.click("#do-import")
    page.wait_for_selector("#import-done")
    assert page.inner_text("#import-done").startswith("3 created, 0 updated, 0 unchanged")
    packet = Packet.objects.get(video=video)
    assert Packet.objects.count() == 3 and packet.task_kind.slug == "moment-queries-published"
    version = GroundTruthVersion.objects.get(packet=packet)
    assert version.tier == "provisional"
    assert page.locator("#imported-packets tbody tr").count() == 3
    shots(page, "import-done", at="#imported-packets")

    # 2. The published provisional version: its anchors, one click from the result.
    packet_link = page.locator(f'#imported-packets tr[data-packet="{packet.pk}"] a[href="/packets/{packet.pk}/"]')
    packet_url = live_server.url + packet_link.get_attribute("href")
    page.click(f'#imported-packets tr[data-packet="{packet.pk}"] a[href="/grading/versions/{version.pk}/"]')
    page.wait_for_selector("#calibration table.anchors tr[data-anchor]")
    anchors = {r.get_attribute("data-anchor"): r for r in page.locator("#calibration tr[data-anchor]").all()}
    assert {"oracle", "empty", "constant_window_prior", "retrieval_zero_shot"} <= set(anchors), list(anchors)
    assert float(anchors["oracle"].locator("td").nth(1).inner_text()) == 1.0
    assert float(anchors["empty"].locator("td").nth(1).inner_text()) == 0.0
    assert anchors["constant_window_prior"].locator("td").nth(1).inner_text() != "—"
    zero_shot = anchors["retrieval_zero_shot"].inner_text()
    assert "not computed: the packet has no frame features" in zero_shot, zero_shot
    shots(page, "version-anchors", at="#calibration")

    # 3. The packet's page: features uploaded through the index card's API; the card shows them.
    page.goto(packet_url)  # the import result's other link
    page.locator("#search-index [data-field=status]").wait_for()
    features, text = clip_features(first["query"])
    api = APIClient()
    api.force_login(maintainer)
    response = api.post(
        f"/api/videos/{video.pk}/search-index/",
        {"features": File(io.BytesIO(features), name="features.npz"), "clip_length": str(CLIP),
         "text_features": File(io.BytesIO(text), name="text.npz")},
        format="multipart",
    )  # fmt: skip
    assert response.status_code == 202, response.content
    index = VideoSearchIndex.objects.get(video=video)
    assert index.status == "ready" and index.source == "uploaded" and index.text_vectors, index.error
    page.reload()
    page.wait_for_function("() => document.querySelector('#search-index [data-field=status]')?.textContent === 'ready'")
    assert page.locator("#search-index [data-field=clips]").inner_text() == "75 × 512 (2 s each)"
    assert page.locator("#search-index [data-field=source]").inner_text() == "uploaded"
    shots(page, "maintainer-index-card", at="#search-index")

    # 4. Both annotators mark the query (the first red scene) and freeze.
    query_id = f"qv{first['qid']}"
    for side, user, end in (("A", annotator_a, 30.0), ("B", annotator_b, 28.0)):
        ledger = Ledger.objects.get(packet=packet, side=side)
        event = {"query_id": query_id, "query": first["query"], "intervals": [[0.0, end]]}
        do_add_event(ledger, event, actor=user, expected_version=0)
        do_freeze_ledger(ledger, actor=user, attestation=ATTESTATION, expected_version=1)

    # 5. The adjudicator searches by the imported query's text: the green scene first.
    judge = page_as(adjudicator, f"/packets/{packet.pk}/")
    judge.set_viewport_size(VIEWPORT)
    wait_ready(judge)
    assert judge.locator("#moment-search").is_visible()
    reason = judge.inner_text("#search-reason")
    assert "Text search knows the 1 description(s)" in reason, reason
    shots(judge, "adjudication-with-search")
    judge.locator("#search-text").fill(first["query"])
    judge.keyboard.press("Enter")
    judge.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0")
    top = spans(judge)[0]
    assert GREEN[0] <= top[0] < top[1] <= GREEN[1], spans(judge)
    wait_frame(judge, round(top[0] * FPS))
    shots(judge, "text-search", at="#moment-search")

    # 6. By example (the selected item's interval: A's, the first red scene): the other red scene first.
    judge.locator("#search-similar").click()
    judge.wait_for_function("() => document.querySelector('#search-status').textContent.includes('(s) like frames 0–')")
    found = spans(judge)
    assert SECOND_RED[0] <= found[0][0] < found[0][1] <= SECOND_RED[1], found
    wait_frame(judge, round(found[0][0] * FPS))
    shots(judge, "find-similar", at="#moment-search")

    # 7. A click on the second result: the player seeks to its start.
    second = found[1]
    judge.locator("#search-results .ms-result").nth(1).click()
    wait_frame(judge, round(second[0] * FPS))
    assert judge.locator("#search-results li.highlighted .ms-span").inner_text().startswith(f"{second[0]:g} s")
    shots(judge, "result-clicked", at="#moment-search")
    frame = round(second[0] * FPS)
    assert judge.inner_text(".fl-readout").startswith(f"Frame {frame} / 1800"), judge.inner_text(".fl-readout")
    shots(judge, "player-at-result")  # the player, at the clicked result's first frame
