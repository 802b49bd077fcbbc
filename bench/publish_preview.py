"""Publishing preview benchmark: ``GET /api/packets/<id>/publish/`` (the confirmation and
the adjudication page's "unpublished changes" check, asked after every decision) on the
published GTEA labels, against the publish call itself.

Run: ``.venv/bin/python bench/publish_preview.py [--repeat 20]``.

Both ledgers hold the published GTEA actions (B with every boundary moved by 20 frames,
beyond the scorer's 12-frame tolerance, so every item is a conflict), both frozen; the
union is built, every item decided (take A), adjudicated v1 published, then one decision
changed. It times the preview (``--repeat`` times, median) with one decision changed
since v1 and the POST that publishes v2. A fresh SQLite database in a temporary folder
unless ``DATABASE_URL`` says otherwise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402

LABELS = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"
ATTESTATION = "I labelled this video alone, from the video only."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="frameledger-bench-publish-"))
    if not os.environ.get("DATABASE_URL"):
        os.environ["FRAMELEDGER_VAR_DIR"] = str(workdir)
    setup_django()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from annotator.actions.adjudication import do_decide_item
    from annotator.actions.ledgers import do_freeze_ledger
    from annotator.actions.packets import do_create_packet
    from annotator.actions.union import do_build_union
    from annotator.actions.versions import do_publish_adjudicated_version
    from annotator.base.gtea import parse_gtea_labels
    from annotator.models import Ledger, LedgerEvent, TaskKind, Video

    call_command("migrate", verbosity=0)
    people = [User.objects.create_user(n) for n in ("bench-maintainer", "bench-a", "bench-b", "bench-adjudicator")]
    people[0].groups.add(Group.objects.get(name="maintainers"))
    video = Video.objects.create(title="GTEA (bench)", status="ready", frame_rate_num=24, frame_rate_den=1,
                                 frame_count=25692, duration=25692 / 24)  # fmt: skip
    packet = do_create_packet(
        actor=people[0], title="bench", video=video, task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotator_a=people[1], annotator_b=people[2], adjudicator=people[3],
    )  # fmt: skip
    truth = parse_gtea_labels(LABELS.read_text())
    for side, shift, person in (("A", 0, people[1]), ("B", 20, people[2])):
        ledger = Ledger.objects.get(packet=packet, side=side)
        events = [{**e, "start_frame": e["start_frame"] + shift, "end_frame": e["end_frame"] + shift} for e in truth]
        LedgerEvent.objects.bulk_create(LedgerEvent(ledger=ledger, data=e) for e in events)
        do_freeze_ledger(ledger, actor=person, attestation=ATTESTATION, expected_version=ledger.version)
    union = do_build_union(packet, actor=people[3])
    items = list(union.items.exclude(status="agreed").order_by("position"))
    for item in items:
        action = "take_a" if item.a_value else "drop"
        do_decide_item(item, actor=people[3], action=action, rationale="checked against the video")
    do_publish_adjudicated_version(packet, actor=people[3])
    do_decide_item(items[0], actor=people[3], action="drop", rationale="not visible after all")

    client = APIClient()
    client.force_authenticate(people[3])
    url = f"/api/packets/{packet.pk}/publish/"

    def preview() -> float:
        started = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - started
        if response.status_code != 200 or not response.json()["unpublished_changes"]:
            raise SystemExit(f"unexpected preview: {response.status_code} {response.content[:200]!r}")
        return elapsed

    preview()  # warm-up
    times = [preview() for _ in range(args.repeat)]
    started = time.perf_counter()
    published = client.post(url)
    post = time.perf_counter() - started
    if published.status_code != 201:
        raise SystemExit(f"unexpected publish: {published.status_code} {published.content[:200]!r}")
    count = union.items.count()
    print(f"GTEA ground truth: {len(truth)} actions per ledger; {count} union items, {len(items)} decided")
    median = statistics.median(times) * 1000
    print(f"publish preview GET (one decision changed since v1), median of {args.repeat}: {median:7.1f} ms")
    print(f"publish POST (stores v2, calibration and agreement report):        {post * 1000:7.1f} ms")
    print(f"(database in {workdir})" if not os.environ.get("DATABASE_URL") else "")


if __name__ == "__main__":
    main()
