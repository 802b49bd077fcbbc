"""Task-ready export of a ground-truth version: files that drop into a verifier folder.

- ``gt.json``: the ground truth in the format the published verifier reads
  (``json.dumps(indent=2)`` + newline for the action ledger, as published);
- ``vocabulary.json``: the closed vocabulary (for the action ledger: the verbs and
  nouns that occur in the ground truth, which is what the verifier derives);
- ``oracle.json`` (``oracle.jsonl`` for moment queries): a submission scoring 1.0;
- ``manifest.json``: the version manifest plus SHA-256 and byte length of each file.
"""

from __future__ import annotations

import io
import json
import zipfile
from fractions import Fraction

from annotator.canonical import sha256_hex
from annotator.documents import version_submission
from annotator.filenames import safe_filename
from annotator.models import GroundTruthVersion


def _dumps(obj, *, newline: bool = True) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + ("\n" if newline else "")).encode("utf-8")


def _moment_oracle(packet, queries: list[dict]) -> bytes:
    """One row per query: the best interval on the packet's grid (the scorer's witness;
    the first acceptable interval itself when it is on the grid), so the file scores 1.0."""
    from annotator.grading.inputs import task_parameters  # task imports this module
    from scoring.moments import best_grid_interval, corpus_grids

    grid = next(iter(corpus_grids(task_parameters(packet, packet.task_kind.scorer_id)["corpus"]).values()))
    rows = []
    for q in queries:
        first = q["intervals"][0]
        legal = all(any(abs(t - g) <= 1e-6 for g in grid) for t in first)
        start, end = first if legal else best_grid_interval(grid, q["intervals"])[1]
        rows.append((json.dumps({"query_id": q["query_id"], "start": start, "end": end}) + "\n").encode())
    return b"".join(rows)


def export_files(version: GroundTruthVersion) -> dict[str, bytes]:
    packet = version.packet
    schema = packet.task_kind.schema
    submission = version_submission(version)
    files: dict[str, bytes] = {}
    family = schema["family"]
    if family == "actions":
        files["gt.json"] = _dumps(submission)
        actions = submission["actions"]
        fps = Fraction(packet.video.frame_rate_num, packet.video.frame_rate_den or 1)
        vocabulary = {
            "fps": int(fps) if fps.denominator == 1 else float(fps),
            "verbs": sorted({a["verb"] for a in actions}),
            "nouns": sorted({n for a in actions for n in a["nouns"]}),
        }
        files["vocabulary.json"] = _dumps(vocabulary)
        files["oracle.json"] = files["gt.json"]
    elif family == "break_points":
        files["gt.json"] = _dumps(submission, newline=False)
        files["vocabulary.json"] = _dumps(
            {f["name"]: f.get("choices") or f.get("subfields") for f in schema["fields"] if f.get("export", True)}
        )
        files["oracle.json"] = files["gt.json"]
    else:
        video_id = packet.params.get("video_id") or f"video-{packet.video_id}"
        source = packet.params.get("source", "frameledger")
        queries = [
            {"query_id": q["query_id"], "video_id": video_id, "source": source, "intervals": q["intervals"]}
            for q in submission["queries"]
        ]
        files["gt.json"] = _dumps({"queries": queries})
        files["vocabulary.json"] = _dumps({q["query_id"]: q["query"] for q in submission["queries"]})
        files["oracle.jsonl"] = _moment_oracle(packet, queries)
    manifest = {
        "version": {
            "id": version.pk,
            "tier": version.tier,
            "number": version.number,
            "sha256": version.sha256,
            "created_at": version.created_at.isoformat(),
        },
        "manifest": {k: v for k, v in version.manifest.items() if k != "adjudication_log"},
        "files": {name: {"sha256": sha256_hex(data), "bytes": len(data)} for name, data in sorted(files.items())},
    }
    files["manifest.json"] = _dumps(manifest)
    return files


def export_zip(version: GroundTruthVersion) -> bytes:
    buffer = io.BytesIO()
    prefix = safe_filename(f"{version.packet.task_kind.slug}-{version.tier}-v{version.number}")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(export_files(version).items()):
            info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()
