"""timeline_data.js (the pure half of the diagnostics page) on real diagnostics bodies,
run by Node as the ES module the page imports."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.factories import client_for
from tests.grading.conftest import EGOCENTRIC, TENNIS, scored, upload

MODULE = Path("frontend/static/frontend/js/grading/timeline_data.js").resolve()
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = """
import { timelineModel, FrameWindow, seekFrame } from %s;
const diagnostics = JSON.parse(await new Promise((resolve) => {
  let text = ""; process.stdin.on("data", (c) => (text += c)); process.stdin.on("end", () => resolve(text));
}));
const model = timelineModel(diagnostics);
const overlaps = [];
for (const lane of model.lanes) {
  const placed = model.items.filter((i) => i.lane === lane.key && !model.unplaced.includes(i));
  for (const a of placed) for (const b of placed)
    if (a !== b && a.row === b.row && a.start <= b.end && b.start <= a.end) overlaps.push([a.id, b.id]);
}
const view = new FrameWindow(model.frameCount).zoom(4, 1000);
console.log(JSON.stringify({
  lanes: model.lanes.map((l) => [l.key, l.rows]),
  items: model.items.length,
  unplaced: model.unplaced.length,
  links: model.links.map((l) => l.kind),
  overlaps,
  seeks: model.items.slice(0, 3).map(seekFrame),
  view: [view.first, view.visible, view.frameAt(view.x(1000, 800), 800)],
}));
"""


def run_model(diagnostics: dict) -> dict:
    script = SCRIPT % json.dumps(MODULE.as_uri())
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        input=json.dumps(diagnostics),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def diagnostics_of(version, maintainer, data: bytes) -> dict:
    score = scored(version, upload(version.packet, maintainer, {"x": data}), maintainer)["x"]
    return client_for(maintainer).get(f"/api/scores/{score.pk}/diagnostics/").json()


@pytest.mark.django_db
def test_action_items_are_packed_without_overlap_and_linked_like_the_scorer(gtea_version, maintainer):
    data = (EGOCENTRIC / "calibration/rollouts/claude-opus-4.8.solution.json").read_bytes()
    body = diagnostics_of(gtea_version, maintainer, data)
    model = run_model(body)
    assert model["items"] == len(body["reference"]) + len(body["predictions"]) and model["unplaced"] == 0
    assert model["overlaps"] == []
    assert model["links"].count("matched") == len(body["matched"]) == 4
    assert len(model["links"]) == 4 + len(body["near_misses"])
    assert model["seeks"] == [r["start_frame"] for r in body["reference"][:3]]
    # Zoom x4 around frame 1000 keeps frame 1000 where it was: 6423 frames shown from 750.
    assert model["view"] == [750, 6423, 1000]


@pytest.mark.django_db
def test_break_points_without_frames_are_listed_not_drawn(tennis_version, maintainer):
    data = (TENNIS / "rollouts/codex-gpt-5.6-sol-high-v10-full-media.submitted-solution.json").read_bytes()
    model = run_model(diagnostics_of(tennis_version, maintainer, data))
    assert model["items"] == 16 + 17 and model["unplaced"] == 33  # the published key has no frames
    assert model["links"] == ["matched"] * 16 and model["seeks"] == [None, None, None]
