"""``manage.py verify_integrity``: every frozen ledger, version, manifest and the audit chain.

Prints one line per problem, naming the object, and exits 1 when there is any (0 when
all is well). The problems found are appended to the audit log (``integrity_check``
entry) unless ``--no-record``. The last line gives the audit chain head; every head anchored
outside the database (``annotator.reads.anchors``: after publications, freezes, backups and clean
checks, which append theirs) is checked by default, and ``--expect-head SEQ:SHA256`` checks
one kept elsewhere.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from annotator.models.audit_log import append_entry
from annotator.reads.anchors import anchor_head
from annotator.reads.rescore import rescore, scores_to_check
from annotator.reads.verify import Problem, media_report, verify_all


class Command(BaseCommand):
    help = (
        "Verify every frozen ledger, ground-truth version, manifest, sealed row (submissions, runs, scores, "
        "decisions) and the audit hash chain; --rescore re-scores stored scores."
    )

    def add_arguments(self, parser):
        parser.add_argument("--expect-head", help="SEQ:SHA256 of an audit chain head printed earlier")
        parser.add_argument("--no-record", action="store_true", help="do not append the result to the audit log")
        parser.add_argument(
            "--rescore",
            action="store_true",
            help="also re-score stored scores from their submission bytes and compare the scorer's output bytes",
        )
        parser.add_argument("--sample", type=int, help="with --rescore: re-score this many scores chosen at random")
        parser.add_argument("--seed", type=int, help="with --sample: the random seed (to repeat a sample)")
        parser.add_argument(
            "--media",
            action="store_true",
            help="also hash every video's renditions and frame table against the hashes their ingest recorded",
        )

    def handle(self, *args, **options):
        report = verify_all()
        problems = list(report.problems)
        if options["expect_head"]:
            problems += self._head_problems(options["expect_head"])
        if options["media"]:
            problems += media_report()
        rescored = None
        if options["rescore"]:
            if options["sample"] is not None and options["sample"] < 1:
                raise CommandError("--sample takes a positive number of scores")
            rescored, mismatches = rescore(scores_to_check(options["sample"], options["seed"]))
            problems += mismatches
        for problem in problems:
            self.stdout.write(f"PROBLEM {problem}")
        seq, head = report.head
        summary = (
            f"checked {report.ledgers} frozen ledger(s), {report.versions} version(s) with their manifests, "
            f"{report.entries} audit entr{'y' if report.entries == 1 else 'ies'}"
        )
        if rescored is not None:
            summary += f", re-scored {rescored} score(s)"
        if problems:
            self.stdout.write(self.style.ERROR(f"{summary}: {len(problems)} problem(s)"))
        else:
            self.stdout.write(self.style.SUCCESS(f"{summary}: all verified"))
        self.stdout.write(f"audit chain head: {seq}:{head}")
        if not problems and seq:
            anchor_head("verify_integrity")  # a clean check anchors the head it saw
        if problems and not options["no_record"]:
            append_entry(
                actor_id=None,
                operation="integrity_check_failed",
                object_type="annotator.Database",
                object_id="-",
                packet_id=None,
                hashes={"chain_head": head},
                details={"problems": [str(p) for p in problems[:200]], "count": len(problems)},
            )
        if problems:
            sys.exit(1)

    def _head_problems(self, expected: str) -> list[Problem]:
        from annotator.models import AuditEntry

        try:
            seq_text, sha = expected.split(":", 1)
            seq = int(seq_text)
        except ValueError:
            raise CommandError("--expect-head takes SEQ:SHA256 as printed by this command") from None
        entry = AuditEntry.objects.filter(seq=seq).values("sha256").first()
        if entry is None:
            return [Problem(f"audit entry seq {seq}", "the recorded chain head is gone")]
        if entry["sha256"] != sha:
            return [Problem(f"audit entry seq {seq}", f"SHA-256 {entry['sha256']} is not the recorded head {sha}")]
        return []
