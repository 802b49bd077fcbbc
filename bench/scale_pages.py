"""The pages still over the issue-38 goal, measured on a database already grown (a ×100 one
made by ``bench/scale.py``), without writing to it: median and p95 ms, queries, KB.

Run: ``.venv/bin/python bench/scale_pages.py --database-url postgres://…/NAME [--rounds 20]``
with ``FRAMELEDGER_VAR_DIR`` (or ``FRAMELEDGER_SIGNING_KEY``) naming the key the database's
audit log was signed with: every row shown is read through its seals, as in production.

Pages: the leaderboard API's first page (of the version with the most scores), the audit
view, the union API of the largest union (its first and last pages, as its adjudicator), the people and projects
pages. Each is requested once (warm-up, query count), then ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import measure  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.test_settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db.models import Count

    from annotator.models import SubmissionScore, Union
    from tests.factories import client_for

    settings.DEBUG = False
    logging.getLogger("annotator").setLevel(logging.WARNING)
    maintainer = get_user_model().objects.filter(groups__name="maintainers").order_by("pk").first()
    version = (SubmissionScore.objects.values("version_id").annotate(n=Count("id")).order_by("-n").first() or {}).get(
        "version_id"
    )
    union = Union.objects.annotate(n=Count("items")).order_by("-n").select_related("packet").first()
    adjudicator = union.packet.adjudicator if union else None
    rows = [
        (maintainer, "leaderboard API", f"/api/versions/{version}/leaderboard/" if version else None),
        (maintainer, "audit view", "/audit/"),
        (adjudicator, "union API", f"/api/packets/{union.packet_id}/union/" if union else None),
        (
            adjudicator,
            "union API, last page",
            f"/api/packets/{union.packet_id}/union/?start={union.n - 1}" if union else None,
        ),
        (maintainer, "people page", "/people/"),
        (maintainer, "projects page", "/projects/"),
    ]
    print(f"rounds {args.rounds}; load {os.getloadavg()[0]:.2f}")
    print(f"{'page / API':20} {'median':>8} {'p95 ms':>8} {'queries':>8} {'KB':>7}")
    for user, label, path in rows:
        if path is None:
            continue
        median, p95, queries, _, size = measure(client_for(user), "GET", path, args.rounds)
        print(f"{label:20} {median:8.1f} {p95:8.1f} {queries:8d} {size:7.0f}")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
