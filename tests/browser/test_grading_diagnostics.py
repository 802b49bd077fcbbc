"""A submission's diagnostics in real headless Chromium: clicking an unmatched event on
the timeline seeks the player to that event's start frame, and the frame on screen
(read from its barcode) is that frame. Then the version page shows the calibration
anchors and marks the version ready."""

from __future__ import annotations

import json

import pytest

from annotator.actions.grading import do_score_batch, do_start_scoring_run, do_upload_submissions, run_chunks
from annotator.actions.versions import do_import_provisional_version
from annotator.base.grading.uploads import byte_cap, make_file
from annotator.base.media import synthetic

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ENCODING = "h264-24-gop250"  # 300 frames at 24 fps
BOXES = synthetic.cell_boxes(160, 96)
TRUTH = [
    {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 60},
    {"verb": "pour", "nouns": ["milk"], "start_frame": 97, "end_frame": 150},
    {"verb": "put", "nouns": ["cup"], "start_frame": 180, "end_frame": 230},
]
SUBMISSION = {
    "actions": [
        {"verb": "take", "nouns": ["cup"], "start_frame": 12, "end_frame": 58},  # matched
        {"verb": "put", "nouns": ["cup"], "start_frame": 200, "end_frame": 250},  # 20 frames late: a false positive
    ]
}


def scored_submission(packet, maintainer):
    version = do_import_provisional_version(packet, TRUTH, actor=maintainer, source="test", source_sha256="3" * 64)
    cap = byte_cap(packet.task_kind.scorer_id)
    (submission,) = do_upload_submissions(
        packet, [make_file("agent", "agent.json", [json.dumps(SUBMISSION).encode()], cap)], actor=maintainer
    )
    run = do_start_scoring_run(version, [submission], actor=maintainer, dispatch=False)
    for chunk in run_chunks(run):
        do_score_batch(run.pk, chunk)
    return run.results.get()


def shown_frame(page) -> int | None:
    return synthetic.decode_cell_means(page.evaluate("(boxes) => window.__flReadCells(boxes)", BOXES))


def test_clicking_an_unmatched_event_shows_its_start_frame(page_as, media_packet, maintainer):
    packet = media_packet(ENCODING)
    score = scored_submission(packet, maintainer)
    assert score.reward == 0.4  # 1 of 2 predictions, 1 of 3 references
    page = page_as(maintainer, f"/grading/scores/{score.pk}/")
    page.wait_for_function(
        "() => window.frameledger && (window.frameledger.diagnostics || window.frameledger.loadError)"
    )
    assert page.evaluate("window.frameledger.loadError || null") is None
    assert page.locator('rect[data-status="matched"]').count() == 2  # one pair: a bar in each lane

    for status, start in (("false_positive", 200), ("missed", 97), ("missed", 180)):
        bar = page.locator(f'rect[data-status="{status}"][data-start="{start}"]')
        bar.click()
        page.wait_for_function(
            f"() => window.frameledger.player.currentFrame === {start} && !window.frameledger.player.seeking"
        )
        assert page.get_attribute("#grading-diagnostics", "data-seeked-frame") == str(start)
        assert shown_frame(page) == start, status
        detail = page.inner_text("#diag-detail")
        assert f"frames {start}–" in detail

    # The table rows seek too, and the false positive explains itself.
    page.locator('tr[data-item="reference-0"]').click()
    page.wait_for_function("() => window.frameledger.player.currentFrame === 10 && !window.frameledger.player.seeking")
    assert shown_frame(page) == 10
    page.locator('tr[data-item="predictions-1"]').click()
    page.wait_for_function("() => window.frameledger.player.currentFrame === 200 && !window.frameledger.player.seeking")
    detail = page.inner_text("#diag-detail")
    assert "closest reference #3 (overlapping); differs in start_frame, end_frame; start +20, end +20 frames" in detail

    # The version page carries the calibration anchors of the version it shows.
    page.goto(page.url.split("/grading/")[0] + f"/versions/{score.version_id}/")
    page.wait_for_selector("#calibration-card[data-state=ready]")
    oracle = page.locator('#calibration tr[data-anchor="oracle"] td')
    assert oracle.nth(1).inner_text() == "1" and oracle.nth(3).inner_text() == "✓"
    page.click("#calibration [data-action=ready]")
    page.wait_for_function("() => document.querySelector('[data-field=ready-message]').textContent.startsWith('Ready')")
