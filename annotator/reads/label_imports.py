"""Dry runs of label imports from the browser: what a file would import into a
packet's provisional tier, and which lines would be refused and why. Never writes;
the import itself is ``actions.versions.check_import_provisional_version``, which reads
the file again as the dry run does.

The moment import page keeps the files it previewed on the server (``STAGED_DIR``, named
by their SHA-256: ``actions.moment_imports.check_stage_moment_files``), so that its import
POST names them instead of carrying up to 64 MiB back; ``staged_moment_file`` reads one.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from annotator.base.canonical import sha256_hex
from annotator.base.charting import ChartingError, break_point_event, frames, number_opportunities, read_rows
from annotator.base.gtea import LabelFormatError, parse_gtea_line, sort_actions
from annotator.base.moment_sources import SourceError, SourceVideo, read_jsonl, size_refusal
from annotator.models import GroundTruthVersion, Packet
from annotator.models.taskkind_schema import EventInvalid, packet_schema, validate_event
from annotator.reads import access

# The largest label file any label import takes (the page and ``manage.py
# import_gtea_labels``, through ``actions.versions.check_import_provisional_version``).
# The page carries the previewed bytes back in its import form (base64, 4/3 as long), and
# a form body is at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2 MiB): 1 MiB leaves room for
# that. A GTEA Gaze+ label file is a few KB, a match's charted points about 100 KB.
MAX_LABEL_BYTES = 1024 * 1024
STAGED_DIR = "imports/moments"  # under MEDIA_ROOT
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
TOO_LARGE = f"label files are limited to {MAX_LABEL_BYTES // 1024**2} MiB ({MAX_LABEL_BYTES} bytes)"
# The task kind of imported moment packets (``actions.moment_imports.published_kind``).
PUBLISHED_KIND = "moment-queries-published"
# What a refused assignment asks of the person on the page.
CHANGE_ASSIGNMENT = "Change the assignment above and preview again"


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
        preview.invalid.append((0, "", TOO_LARGE))
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
    _previous_versions(packet, preview)
    return preview


@dataclass
class ChartingPreview(Preview):
    points: int = 0
    converted: int = 0
    saved: int = 0
    with_frames: int = 0

    @property
    def rows(self) -> list[dict]:
        """The events as the dry run lists them: each player's games and points, and the
        point's ending in words."""
        return [
            {
                **e,
                "games": f"{e['medvedev_games']}–{e['de_minaur_games']}",
                "points": f"{e['medvedev_points']}–{e['de_minaur_points']}",
                "ending": f"{e['terminal_player']}: {e['terminal_result'].replace('_', ' ')}",
            }
            for e in self.events
        ]


def _decoded(data: bytes, preview: Preview) -> str | None:
    if len(data) > MAX_LABEL_BYTES:
        preview.invalid.append((0, "", TOO_LARGE))
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        preview.invalid.append((0, "", f"not UTF-8 text (byte {error.start})"))
        return None


def charting_players(packet: Packet) -> list[str]:
    """The packet's two players (the choices of its ``server`` field), or ``[]``."""
    fields = packet_schema(packet)["fields"]
    return next((list(f.get("choices", [])) for f in fields if f["name"] == "server"), [])


def preview_charting_rows(packet: Packet, name: str, data: bytes, *, player_one: str = "first") -> ChartingPreview:
    """The break points of a Match Charting Project points file as ``packet``'s events
    (``annotator.base.charting``), every refused row with its reason. ``player_one``: whether
    the file's player 1 (who served first) is the packet's ``first`` or ``second`` player."""
    preview = ChartingPreview(name=name, sha256=sha256_hex(data))
    text = _decoded(data, preview)
    if text is None:
        return preview
    try:
        rows = read_rows(text)
    except (ChartingError, csv.Error) as error:
        preview.invalid.append((0, "", str(error)))
        return preview
    matches = {(row.cells.get("match_id") or "").strip() for row in rows} - {""}
    if len(matches) > 1:
        preview.invalid.append((0, "", f"the file holds {len(matches)} matches (match_id); keep one match's rows"))
        return preview
    schema = packet_schema(packet)
    names = charting_players(packet)
    players, first_slot = (names, 1) if player_one == "first" else (names[::-1], 2)
    events = []
    for row in rows:
        preview.points += 1
        try:
            event = break_point_event(row.cells, players, first_slot=first_slot)
            if event is None:  # not a break point (or a tiebreak point)
                continue
            event.update(frames(row.cells))
            events.append((row, event))
        except ChartingError as error:
            preview.invalid.append((row.number, row.text, error.reason))
    number_opportunities([event for _, event in events])
    video = packet.video
    for row, event in events:
        try:
            preview.events.append(validate_event(schema, event, frame_count=video.frame_count, duration=video.duration))
        except EventInvalid as error:
            preview.invalid.append((row.number, row.text, f"{error.field}: {error.reason}"))
    if not rows:
        preview.invalid.append((0, "", "the file holds no points"))
    elif not preview.events and not preview.invalid:
        preview.invalid.append((0, "", "no break point in these points"))
    preview.invalid.sort(key=lambda row: row[0])
    preview.converted = sum(e["outcome"] == "converted" for e in preview.events)
    preview.saved = len(preview.events) - preview.converted
    preview.with_frames = sum("start_frame" in e for e in preview.events)
    _previous_versions(packet, preview)
    return preview


def _previous_versions(packet: Packet, preview: Preview) -> None:
    previous = GroundTruthVersion.objects.filter(packet=packet, tier=GroundTruthVersion.Tier.PROVISIONAL)
    preview.next_number = previous.count() + 1
    latest = previous.order_by("-number").first()
    preview.unchanged = latest is not None and latest.manifest.get("source_sha256") == preview.sha256


@dataclass
class MomentPreview:
    source: str
    name: str
    sha256: str
    videos: list[SourceVideo] = field(default_factory=list)
    invalid: list[tuple[int, str, str]] = field(default_factory=list)  # (line, text, reason)
    refusals: list[str] = field(default_factory=list)  # what the import would refuse as a whole

    @property
    def queries(self) -> int:
        return sum(len(v.queries) for v in self.videos)

    @property
    def clipped(self) -> int:
        return sum(v.clipped for v in self.videos)

    @property
    def dropped(self) -> int:
        return sum(v.dropped for v in self.videos)

    @property
    def can_import(self) -> bool:
        return bool(self.videos) and not self.invalid and not self.refusals


def preview_moment_rows(
    source: str, name: str, data: bytes, *, reannotated=(), people: tuple | None = None
) -> MomentPreview:
    """QVHighlights / Charades-STA rows as ``annotator.base.moment_sources`` reads them; when
    the file is refused, every row is read on its own as well, so the preview lists each
    bad row with its reason (not only the first), plus any reason that spans rows.
    ``people`` (annotator A, annotator B, adjudicator; None: not chosen) are checked with
    the rule packet creation applies, so the dry run refuses what the import would."""
    preview = MomentPreview(source=source, name=name, sha256=sha256_hex(data))
    if people is not None:
        refusal = access.assignment_refusal(*people)
        if refusal is not None:
            preview.refusals.append(f"{refusal[0].upper()}{refusal[1:]}. {CHANGE_ASSIGNMENT}")
    for size in (len(data), *(len(extra) for extra in reannotated)):
        refusal = size_refusal(size)  # the import's own limit (``check_import_moment_packets``)
        if refusal is not None:
            preview.invalid.append((0, "", refusal))
            return preview
    try:
        preview.videos = read_jsonl(source, data, name=name, reannotated=reannotated)
        return preview
    except SourceError as error:
        first = str(error)
    if not first.startswith(f"{name} line "):  # about the file as a whole
        preview.invalid.append((0, "", first))
        return preview
    lines = data.decode("utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            read_jsonl(source, line.encode("utf-8"), name="row")
        except SourceError as error:
            preview.invalid.append((number, line.strip()[:200], str(error).removeprefix("row line 1: ")))
    # Reasons spanning rows (a repeated query id, two durations for a video): read the
    # file again without the rows refused so far, until it passes (at most 50 more).
    for _ in range(50):
        refused = {n for n, _, _ in preview.invalid}
        kept = "\n".join("" if n in refused else line for n, line in enumerate(lines, start=1))
        try:
            read_jsonl(source, kept.encode("utf-8"), name=name)
            break
        except SourceError as error:
            match = re.match(rf"^{re.escape(name)} line (\d+): ", str(error))
            if match is None:
                preview.invalid.append((0, "", str(error)))
                break
            number = int(match[1])
            preview.invalid.append((number, lines[number - 1].strip()[:200], str(error)[match.end() :]))
    preview.invalid.sort(key=lambda row: row[0])
    return preview


def own_packet_refusal(video_id: str) -> str:
    """The import's words for a maintainer who has another role on a video's packet."""
    return (
        f"video {video_id}: you annotate or adjudicate its packet, so its provisional labels "
        "are imported by another maintainer"
    )


def moment_import_refusals(actor, source: str, videos, people: tuple) -> list[str]:
    """What ``actions.moment_imports.do_import_moment_packets`` would refuse ``actor`` for
    these videos (``access.may_import_labels``, the first refused video): a video whose
    packet exists and on which ``actor`` annotates or adjudicates, or a new packet whose
    assignment (``people``: annotator A, annotator B, adjudicator) names ``actor``."""
    existing = {
        packet.parameters.get("video_id"): packet
        for packet in Packet.objects.filter(task_kind__slug=PUBLISHED_KIND, parameters__source=source)
    }
    named = {person.pk for person in people if person is not None}
    for video in videos:
        packet = existing.get(video.video_id)
        if packet is not None:
            if not access.may_import_labels(actor, packet):
                own = own_packet_refusal(video.video_id)
                return [own[0].upper() + own[1:]]
        elif actor.pk in named:
            own = own_packet_refusal(video.video_id)
            return [f"{own[0].upper()}{own[1:]}. {CHANGE_ASSIGNMENT}"]
    return []


def preview_label_file(packet: Packet, label_format: str, name: str, data: bytes, *, player_one: str = "first"):
    """The dry run of ``label_format`` (the packet family's ``label_format``):
    ``preview_gtea_labels`` or ``preview_charting_rows``; ``LookupError`` for another."""
    if label_format == "gtea":
        return preview_gtea_labels(packet, name, data)
    if label_format == "mcp-charting":
        return preview_charting_rows(packet, name, data, player_one=player_one)
    raise LookupError(label_format)


def staged_folder() -> Path:
    """The folder of the previewed moment files."""
    return Path(settings.MEDIA_ROOT) / STAGED_DIR


def staged_path(sha256: str) -> Path | None:
    """Where a previewed moment file with this SHA-256 is kept; None for a malformed name."""
    if not isinstance(sha256, str) or not SHA256_HEX.fullmatch(sha256):
        return None
    return staged_folder() / sha256


def staged_moment_file(sha256: str) -> bytes | None:
    """The bytes of a previewed moment file, or None when there is none by that name (never
    previewed, or expired); the bytes are checked against the name."""
    path = staged_path(sha256)
    try:
        data = path.read_bytes() if path is not None else None
    except FileNotFoundError:
        return None
    return data if data is not None and sha256_hex(data) == sha256 else None
