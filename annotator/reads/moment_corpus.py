"""What a moment-query version hands to a retrieval system: the corpus records (video
id, duration, grid the scorer uses), the packet's frame-feature file if it has one (its
``parameters.features``, else the CLIP features a maintainer uploaded for its video), and
the requests (query id, video id, description; never intervals). Used by the executable
bundle runner and by the reference calibration rows."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings

from annotator.models import GroundTruthVersion, VideoSearchIndex
from annotator.reads.export import export_files
from annotator.reads.grading_inputs import ScoringInputs, task_parameters


def moment_corpus(version: GroundTruthVersion) -> tuple[list[dict], dict[str, Path], list[dict]]:
    packet = version.packet
    files = export_files(version)
    texts = json.loads(files["vocabulary.json"])
    requests = [
        {"query_id": q["query_id"], "video_id": q["video_id"], "description": texts[q["query_id"]]}
        for q in json.loads(files["gt.json"])["queries"]
    ]
    records = [dict(r) for r in task_parameters(packet, packet.task_kind.scorer_id)["corpus"]]
    features: dict[str, Path] = {}
    source, clip_length = packet.parameters.get("features"), packet.parameters.get("clip_length")
    if not source:
        upload = VideoSearchIndex.objects.filter(video=packet.video).exclude(features_upload="").first()
        if upload is not None:
            source, clip_length = upload.features_upload, upload.upload_clip_length
    if source:
        path = Path(settings.MEDIA_ROOT) / source
        if path.is_file():
            name = f"features/{records[0]['video_id']}{path.suffix}"
            features[name] = path
            records[0]["features"] = name
            if clip_length:
                records[0]["clip_length"] = clip_length
    return records, features, requests


def reference_calibration_rows(version: GroundTruthVersion, inputs: ScoringInputs) -> list[dict]:
    """Constant-window prior and the retrieval zero-shot ranker, scored like submissions."""
    from annotator.base.grading.reference_anchors import reference_rows
    from scoring import score_submission

    def run(data: bytes) -> float:
        return score_submission(inputs.scorer_id, inputs.ground_truth, data, **inputs.params).reward

    records, features, requests = moment_corpus(version)
    return reference_rows(
        run, records, features, requests, inputs.params, encoder=settings.FRAMELEDGER_RETRIEVAL_ENCODER
    )
