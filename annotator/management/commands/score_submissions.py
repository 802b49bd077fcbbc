"""Score agent submissions against a ground-truth version, with a progress bar.

    manage.py score_submissions --version 12 --scorer egocentric-f1-v2 runs/*.json batch.zip

Each PATH is a submission file, a folder (every file below it, ``--include`` filters
names) or a zip archive. Labels come from the paths (``rollouts/x.submitted-solution.json``
is ``rollouts/x``); ``--label`` names a single file. The files are uploaded to the
version's packet exactly as the REST API does, then scored in this process (or, with
``--queue``, by the Celery workers while the bar follows the run's Job row).
"""

from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from annotator.actions import grading
from annotator.base.errors import WorkflowError
from annotator.base.grading import uploads
from annotator.management.base import VersionOptionCommand
from annotator.models import GroundTruthVersion, Job
from annotator.reads import grading as reads
from annotator.reads.grading_inputs import check_scorer_id

BAR_WIDTH = 30


class ProgressBar:
    def __init__(self, stream, total: int):
        self.stream, self.total, self.done = stream, total, 0
        self.started = time.monotonic()
        self.interactive = getattr(stream, "isatty", lambda: False)()
        self._last_drawn = -1

    def advance(self, count: int = 1) -> None:
        self.set(self.done + count)

    def set(self, done: int) -> None:
        self.done = min(done, self.total)
        step = max(1, self.total // 20)
        if not self.interactive and self.done != self.total and self.done - self._last_drawn < step:
            return  # a log file gets about twenty lines, a terminal a live bar
        self._last_drawn = self.done
        filled = int(BAR_WIDTH * self.done / self.total) if self.total else BAR_WIDTH
        elapsed = time.monotonic() - self.started
        line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.done}/{self.total} {elapsed:6.1f}s"
        self.stream.write(("\r" + line) if self.interactive else line + "\n", ending="")
        self.stream.flush()

    def close(self) -> None:
        if self.interactive:
            self.stream.write("\n", ending="")


class Command(VersionOptionCommand):
    help = "Upload submission files (or zips, or folders) and score them against a ground-truth version."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="submission files, folders or zip archives")
        parser.add_argument("--version", type=int, required=True, help="ground-truth version id")
        parser.add_argument("--scorer", required=True, help="scorer id, e.g. egocentric-f1-v2")
        parser.add_argument("--label", help="label of the submission (only with one file)")
        parser.add_argument("--include", help="glob for file names inside folders and zips, e.g. '*solution.json'")
        parser.add_argument("--actor", help="username recorded in the audit log")
        parser.add_argument("--queue", action="store_true", help="score on the Celery workers, follow the Job")

    def handle(self, *args, paths, version, scorer, label, include, actor, queue, **options):
        version_row = (
            GroundTruthVersion.objects.select_related("packet__task_kind", "packet__video").filter(pk=version).first()
        )
        if version_row is None:
            raise CommandError(f"no ground-truth version {version}")
        user = self._user(actor)
        try:
            scorer_id = check_scorer_id(version_row, scorer)
            files = self._files(paths, scorer_id, label, include)
            submissions = grading.do_upload_submissions(version_row.packet, files, actor=user)
            run = grading.do_start_scoring_run(
                version_row, submissions, actor=user, scorer_id=scorer_id, dispatch=queue
            )
        except WorkflowError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"run {run.pk}: {len(submissions)} submission(s) of packet {version_row.packet_id} against "
            f"{version_row.tier} version {version_row.number} (id {version_row.pk}) with {scorer_id}"
        )
        bar = ProgressBar(self.stderr, run.total)
        if queue:
            self._follow(run, bar)
        else:
            for chunk in grading.run_chunks(run):
                grading.do_score_batch(run.pk, chunk, progress=bar.advance)
        bar.close()
        self._report(run)

    def _user(self, actor: str | None):
        if not actor:
            return None
        user = get_user_model().objects.filter(username=actor).first()
        if user is None:
            raise CommandError(f"no user {actor!r}")
        return user

    def _files(self, paths: list[Path], scorer_id: str, label: str | None, include: str | None):
        ceiling = getattr(settings, "FRAMELEDGER_MAX_SUBMISSION_BYTES", uploads.DEFAULT_MAX_SUBMISSION_BYTES)
        cap = uploads.byte_cap(scorer_id, ceiling)
        if label and (len(paths) != 1 or not paths[0].is_file() or paths[0].suffix == ".zip"):
            raise CommandError("--label names exactly one submission file")
        files = []
        for path in paths:
            if path.is_dir():
                found = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
                for item in found:
                    relative = item.relative_to(path).as_posix()
                    if uploads.included(relative, include):
                        files.append(
                            uploads.make_file(uploads.label_for_path(relative), relative, [item.read_bytes()], cap)
                        )
            elif path.suffix.lower() == ".zip":
                try:
                    with path.open("rb") as archive:
                        files += uploads.expand_zip(archive, cap, include=include)
                except (OSError, uploads.UploadRefused) as error:
                    raise CommandError(f"{path}: {error}") from None
            elif path.is_file():
                files.append(
                    uploads.make_file(label or uploads.label_for_path(path.name), path.name, _chunks(path), cap)
                )
            else:
                raise CommandError(f"{path}: no such file or folder")
        if not files:
            raise CommandError("no submission files found")
        return files

    def _follow(self, run, bar: ProgressBar) -> None:
        while True:
            job = Job.objects.get(pk=run.job_id)
            bar.set(round(job.progress * run.total))
            if job.status in {Job.Status.DONE, Job.Status.FAILED}:
                return
            time.sleep(0.5)

    def _report(self, run) -> None:
        run.refresh_from_db()
        scored = set(run.results.values_list("submission_id", flat=True))
        every = reads.leaderboard_download(run.version, run.scorer_id)
        rows = [r for r in every if r["kind"] != "reference" and r["submission"] in scored]
        width = max([len(r["label"]) for r in rows] + [5])
        self.stdout.write(f"{'rank':>4}  {'label':<{width}}  {'reward':>8}  reason")
        for row in rows:
            reward = "-" if row["reward"] is None else f"{row['reward']:.6g}"
            self.stdout.write(f"{row['rank'] or '-':>4}  {row['label']:<{width}}  {reward:>8}  {row['reason'][:80]}")
        counts = reads.run_counts(run)
        self.stdout.write(
            self.style.SUCCESS(
                f"run {run.pk}: {counts['scored']} scored, {counts['error']} failed, {counts['pending']} pending"
            )
        )


def _chunks(path: Path):
    with path.open("rb") as handle:
        while chunk := handle.read(uploads.CHUNK):
            yield chunk
