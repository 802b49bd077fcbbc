"""Dry runs of label imports from the browser: what a file would import into a
packet's provisional tier, and which lines would be refused and why. Never writes;
the import itself is ``actions.versions.do_import_provisional_version``, which checks
every event again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotator.canonical import sha256_hex
from annotator.gtea import LabelFormatError, parse_gtea_line, sort_actions
from annotator.models import GroundTruthVersion, Packet
from annotator.taskkinds import EventInvalid, validate_event

MAX_LABEL_BYTES = 2 * 1024 * 1024


@dataclass
class Preview:
    name: str
    sha256: str
    events: list[dict] = field(default_factory=list)
    invalid: list[tuple[int, str, str]] = field(default_factory=list)  # (line, text, reason)
    verbs: int = 0
    nouns: int = 0
    next_number: int = 1
    unchanged: bool = False

    @property
    def can_import(self) -> bool:
        return bool(self.events) and not self.invalid


def preview_gtea_labels(packet: Packet, name: str, data: bytes) -> Preview:
    """Parse and check every line of a GTEA label file against ``packet``'s task kind
    and video (frame range), collecting every refusal rather than stopping at the first."""
    preview = Preview(name=name, sha256=sha256_hex(data))
    if len(data) > MAX_LABEL_BYTES:
        preview.invalid.append((0, "", f"the file is larger than {MAX_LABEL_BYTES // 1024 // 1024} MiB"))
        return preview
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        preview.invalid.append((0, "", f"not UTF-8 text (byte {error.start})"))
        return preview
    schema, video = packet.task_kind.schema, packet.video
    events = []
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            action = parse_gtea_line(number, raw)
            if action is None:
                continue
            events.append(validate_event(schema, action, frame_count=video.frame_count, duration=video.duration))
        except LabelFormatError as error:
            preview.invalid.append((number, raw.strip()[:200], error.reason))
        except EventInvalid as error:
            preview.invalid.append((number, raw.strip()[:200], f"{error.field}: {error.reason}"))
    if not events and not preview.invalid:
        preview.invalid.append((0, "", "the file holds no labels"))
    preview.events = sort_actions(events)
    preview.verbs = len({e["verb"] for e in events})
    preview.nouns = len({n for e in events for n in e["nouns"]})
    previous = GroundTruthVersion.objects.filter(packet=packet, tier=GroundTruthVersion.Tier.PROVISIONAL)
    preview.next_number = previous.count() + 1
    latest = previous.order_by("-number").first()
    preview.unchanged = latest is not None and latest.manifest.get("source_sha256") == preview.sha256
    return preview
