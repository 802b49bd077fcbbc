"""REST endpoints of grading (maintainers of the packet only, see ``annotator.reads.access``;
anyone else gets the 404 a missing object gets). Each view: ``access_*``, call one
``do_*`` or read function, present.

The agreement report is also open to the packet's adjudicator, once both ledgers are
frozen (they have seen both ledgers by then).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from itertools import islice

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.http import HttpResponse, StreamingHttpResponse
from django.urls import reverse
from rest_framework import status
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from annotator.actions import grading
from annotator.actions.uploads import do_consume_upload
from annotator.base.errors import InvalidInput
from annotator.base.filenames import attachment
from annotator.base.grading import uploads
from annotator.base.grading.leaderboard import csv_lines, json_chunks
from annotator.base.urlconverters import parse_id
from annotator.entry.api.query import whole_number
from annotator.models import ScoringRun, Submission, SubmissionScore
from annotator.reads import access
from annotator.reads import grading as reads
from annotator.reads import leaderboard as ranked
from annotator.reads.grading_inputs import check_scorer_id
from annotator.reads.present import (
    SCORE_FILES,
    calibration_view,
    job_view,
    readiness_view,
    run_score_view,
    run_view,
    score_view,
    submission_view,
)
from annotator.reads.sealed_rows import verify_runs, verify_scores, verify_submissions

# ----------------------------------------------------------------------- submissions


def _form_list(request, name: str) -> list[str]:
    getlist = getattr(request.data, "getlist", None)
    if getlist is not None:
        return [str(v) for v in getlist(name)]
    value = request.data.get(name) if isinstance(request.data, dict) else None
    return [str(v) for v in value] if isinstance(value, list) else ([] if value is None else [str(value)])


def taken_uploads(request, stack: ExitStack) -> dict[str, list]:
    """``file_upload`` and ``archive_upload``: keys of the requester's finished resumable
    uploads of kind ``submission``, each taken (consumed) when ``stack`` closes without an
    error, as ``(row, path)`` per field."""
    taken, seen = {}, set()
    for field in ("file_upload", "archive_upload"):
        taken[field] = []
        for key in _form_list(request, field):
            if key in seen:
                raise InvalidInput(f"upload {key} is named twice", field=field)
            seen.add(key)
            upload = access.access_upload(request.user, key)
            taken[field].append(stack.enter_context(do_consume_upload(upload=upload, kind="submission", field=field)))
    return taken


def stored_chunks(path):
    with open(path, "rb") as fh:
        while chunk := fh.read(uploads.CHUNK):
            yield chunk


def uploaded_files(request, scorer_id: str, taken: dict[str, list] | None = None) -> list[uploads.SubmissionFile]:
    """``file`` (+ ``label``), ``files`` (+ ``labels``, one per file) and/or ``archive``
    (a zip; ``include`` filters its file names with a glob such as ``*solution.json``);
    ``file_upload`` and ``archive_upload`` (``taken_uploads``) are taken as ``file`` and
    ``archive`` are, under the same caps."""
    taken = taken or {"file_upload": [], "archive_upload": []}
    ceiling = getattr(settings, "FRAMELEDGER_MAX_SUBMISSION_BYTES", uploads.DEFAULT_MAX_SUBMISSION_BYTES)
    cap = uploads.byte_cap(scorer_id, ceiling)
    files = []
    single = request.FILES.getlist("file")
    many = request.FILES.getlist("files")
    labels = _form_list(request, "labels")
    if labels and len(labels) != len(many):
        raise InvalidInput(f"{len(labels)} labels for {len(many)} files", field="labels")
    for position, upload in enumerate(single + many):
        if position < len(single):
            label = _form_list(request, "label")[0] if _form_list(request, "label") else ""
        else:
            label = labels[position - len(single)] if labels else ""
        files.append(uploads.make_file(label, upload.name, upload.chunks(), cap))
    for row, path in taken["file_upload"]:
        label = _form_list(request, "label")[0] if _form_list(request, "label") else ""
        files.append(uploads.make_file(label, row.filename, stored_chunks(path), cap))
    include = (_form_list(request, "include") or [None])[0]
    limits = uploads.ZipLimits(
        entries=settings.FRAMELEDGER_ZIP_MAX_ENTRIES,
        entry_bytes=settings.FRAMELEDGER_ZIP_MAX_ENTRY_BYTES,
        total_bytes=settings.FRAMELEDGER_ZIP_MAX_TOTAL_BYTES,
        ratio=settings.FRAMELEDGER_ZIP_MAX_RATIO,
    )
    archives = [(archive, "archive") for archive in request.FILES.getlist("archive")]
    archives += [(open(path, "rb"), "archive_upload") for _row, path in taken["archive_upload"]]
    for archive, field in archives:
        try:
            with archive:
                files += uploads.expand_zip(archive, cap, include=include, limits=limits)
        except uploads.UploadRefused as error:
            raise InvalidInput(str(error), field=field) from None
    if len(files) > uploads.MAX_BATCH_FILES:
        raise InvalidInput(f"a batch takes at most {uploads.MAX_BATCH_FILES} files", field="files")
    return files


class SubmissionListView(APIView):
    def get(self, request, packet_id):
        packet = access.access_grading_packet(request.user, packet_id)
        rows = Submission.objects.filter(packet=packet).defer("content").order_by("id")
        rows = list(rows.annotate(kept=ExpressionWrapper(Q(content__isnull=False), output_field=BooleanField())))
        verify_submissions(rows)
        return Response([submission_view(s) for s in rows])

    def post(self, request, packet_id):
        packet = access.access_grading_packet(request.user, packet_id)
        with ExitStack() as stack:  # the named uploads are consumed with the batch, or not at all
            files = uploaded_files(request, packet.task_kind.scorer_id, taken_uploads(request, stack))
            created = grading.do_upload_submissions(packet, files, actor=request.user)
        return Response(
            {"batch": created[0].batch, "submissions": [submission_view(s) for s in created]},
            status=status.HTTP_201_CREATED,
        )


class SubmissionDetailView(APIView):
    def get(self, request, submission_id):
        submission = access.access_submission(request.user, submission_id)
        scores = submission.results.exclude(status=SubmissionScore.Status.PENDING).order_by("-id")
        scores = list(scores.select_related("submission").defer("submission__content"))
        verify_scores(scores)
        body = submission_view(submission)
        body["scores"] = [
            {"id": s.pk, "run": s.run_id, "version": s.version_id, "scorer_id": s.scorer_id, "reward": s.reward,
             "status": s.status}
            for s in scores
        ]  # fmt: skip
        return Response(body)


class SubmissionContentView(APIView):
    def get(self, request, submission_id):
        submission = access.access_submission(request.user, submission_id)
        if submission.content is None:
            raise access.NotFound("content")
        response = HttpResponse(bytes(submission.content), content_type="application/octet-stream")
        response["Content-Disposition"] = attachment(submission.original_name)
        return response


# ---------------------------------------------------------------------- scoring runs


def _body(request) -> dict:
    if not isinstance(request.data, dict) and not hasattr(request.data, "getlist"):
        raise InvalidInput("the request body must be a JSON object", field="body")
    return request.data


class ScoringRunListView(APIView):
    def get(self, request, packet_id):
        packet = access.access_grading_packet(request.user, packet_id)
        runs = list(ScoringRun.objects.filter(version__packet=packet).select_related("version", "job")[:200])
        verify_runs(runs)
        return Response([run_view(run) for run in runs])

    def post(self, request, packet_id):
        """Start a run: ``version`` (id) or ``tier`` (default ``adjudicated``: the latest
        adjudicated version), ``scorer_id`` (default the task kind's), ``submissions``
        (ids) or ``batch`` (an upload batch); default every submission of the packet."""
        body = _body(request)
        with transaction.atomic():
            packet = access.access_grading_packet(request.user, packet_id, for_update=True)
            version = reads.resolve_version(packet, version_id=_int_or_none(body.get("version"), "version"),
                                              tier=body.get("tier"))  # fmt: skip
            check_scorer_id(version, body.get("scorer_id") or None)  # a bad request is answered as one first
            reads.require_ready_for_grading(version)
            chosen = Submission.objects.filter(packet=packet).defer("content").order_by("id")
            ids = body.get("submissions")
            if ids is not None:
                # ids in bodies are bounded like ids in URLs (``parse_id``): 10**20 is no id, not a 500
                if not isinstance(ids, list) or not all(isinstance(i, int) and parse_id(i) is not None for i in ids):
                    raise InvalidInput("submissions must be a list of ids", field="submissions")
                chosen = chosen.filter(pk__in=ids)
                if chosen.count() != len(set(ids)):
                    raise InvalidInput("some submissions are not on this packet", field="submissions")
            if body.get("batch"):
                chosen = chosen.filter(batch=str(body["batch"]))
            run = grading.do_start_scoring_run(
                version, list(chosen), actor=request.user, scorer_id=body.get("scorer_id") or None
            )
        return Response(run_view(run), status=status.HTTP_202_ACCEPTED)


def _int_or_none(value, field: str):
    if value is None or value == "":
        return None
    found = parse_id(value)
    if found is None:
        raise InvalidInput(f"{field} must be an id", field=field)
    return found


class ScoringRunDetailView(APIView):
    """What the grading page polls while a run goes: the run, its job and its counts by
    status (a few rows whatever the run's size); its scores are ``…/scores/``, a page at a time."""

    def get(self, request, run_id):
        run = access.access_scoring_run(request.user, run_id)
        body = run_view(run)
        body["scores"] = request.build_absolute_uri(reverse("api-scoring-run-scores", args=[run.pk]))
        return Response(body)


class ScorePages(CursorPagination):
    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ScoringRunScoresView(APIView):
    """The scores of a run in id order, a page at a time (``next`` / ``previous``: cursors)."""

    def get(self, request, run_id):
        run = access.access_scoring_run(request.user, run_id)
        pages = ScorePages()
        scores = run.results.select_related("submission").defer("submission__content")
        found = pages.paginate_queryset(scores, request, view=self)
        verify_scores(found)
        return pages.get_paginated_response([run_score_view(s) for s in found])


class ScoreDetailView(APIView):
    def get(self, request, score_id):
        return Response(score_view(access.access_score(request.user, score_id)))


class ScoreFileView(APIView):
    """The scorer's output files, byte for byte (what the verifier CLI writes)."""

    def get(self, request, score_id, name):
        score = access.access_score(request.user, score_id)
        field = SCORE_FILES.get(name)
        data = getattr(score, field) if field else None
        if data is None:
            raise access.NotFound("file")
        content_type = "application/json" if name.endswith(".json") else "text/plain"
        return HttpResponse(bytes(data), content_type=content_type)


class ScoreDiagnosticsView(APIView):
    def get(self, request, score_id):
        return Response(reads.score_diagnostics(access.access_score(request.user, score_id)))


# ------------------------------------------------------------------------ leaderboard


class LeaderboardView(APIView):
    """``?scorer=ID`` (default the task kind's), ``?sort=COLUMN`` (``-`` for descending;
    default ``-reward``), ``?page_size=N`` and ``?cursor=`` (the ``next`` of the page
    before). ``export`` in the URL: ``csv`` or ``json`` files of every row, streamed."""

    def get(self, request, version_id, export=None):
        version = access.access_grading_version(request.user, version_id)
        scorer_id = check_scorer_id(version, request.query_params.get("scorer") or None)
        sort = request.query_params.get("sort")
        if export is not None:
            return _leaderboard_file(request, version, scorer_id, sort, export)
        cursor = request.query_params.get("cursor") or None
        table = reads.leaderboard(
            version,
            scorer_id,
            sort=sort,
            cursor=cursor,
            size=whole_number(request, "page_size", ranked.PAGE_SIZE, ranked.MAX_PAGE_SIZE, least=1),
        )
        if table["next"] is not None:
            table["next"] = replace_query_param(request.build_absolute_uri(), "cursor", table["next"])
        job = reads.calibration_job(version) if scorer_id == version.packet.task_kind.scorer_id else None
        if job is not None:  # the reference rows come from anchors still on their way (or failed)
            table["calibration_job"] = job_view(job)
        return Response(table)


def _leaderboard_file(request, version, scorer_id: str, sort: str | None, export: str) -> StreamingHttpResponse:
    """Every row (reference rows after the ranked ones), streamed a page at a time."""
    rows = reads.leaderboard_download(version, scorer_id, sort=sort)
    name = f"leaderboard-{version.packet.task_kind.slug}-{version.tier}-v{version.number}-{scorer_id}.{export}"
    if export == "csv":
        response = StreamingHttpResponse(streamed(request, csv_lines(rows, scorer_id)), content_type="text/csv")
    else:
        chunks = json_chunks(reads.leaderboard_head(version, scorer_id), rows)
        response = StreamingHttpResponse(streamed(request, chunks), content_type="application/json")
    response["Content-Disposition"] = attachment(name)
    return response


STREAM_PIECES = 500


def streamed(request, pieces: Iterator[str]) -> Iterator[str] | AsyncIterator[str]:
    """``pieces`` ``STREAM_PIECES`` at a time, in the iterator the server streams: served over
    ASGI, Django reads a synchronous iterator whole before sending its first byte (what
    streaming is meant to avoid), so there an asynchronous one reads the next pieces, and
    their queries, in the request's own thread (``sync_to_async``) as the client takes them;
    under WSGI, which reads an asynchronous iterator whole, a synchronous one."""

    def take() -> str:
        return "".join(islice(pieces, STREAM_PIECES))

    async def chunks() -> AsyncIterator[str]:
        while text := await sync_to_async(take)():
            yield text

    return chunks() if isinstance(getattr(request, "_request", request), ASGIRequest) else iter(take, "")


# ------------------------------------------------------------------------ calibration


class CalibrationView(APIView):
    def get(self, request, version_id):
        version = access.access_grading_version(request.user, version_id)
        readiness = reads.version_readiness(version)
        body = {
            "version": version.pk,
            "task_scorer_id": version.packet.task_kind.scorer_id,
            "calibrations": [calibration_view(c) for c in reads.version_calibrations(version)],
            "ready": readiness_view(readiness),
        }
        job = reads.calibration_job(version)
        if job is not None:  # the anchors the publication queued: still on their way, or failed
            body["job"] = job_view(job)
        return Response(body)

    def post(self, request, version_id):
        """(Re)compute the anchors, for the task scorer or ``scorer_id``."""
        version = access.access_grading_version(request.user, version_id)
        scorer_id = _body(request).get("scorer_id") or None
        with transaction.atomic():
            calibration = grading.do_compute_calibration(version, scorer_id=scorer_id)
        return Response(calibration_view(calibration))


class ReadyView(APIView):
    def post(self, request, version_id):
        version = access.access_grading_version(request.user, version_id)
        readiness = grading.do_mark_version_ready(version, actor=request.user)
        return Response(readiness_view(readiness), status=status.HTTP_201_CREATED)


# -------------------------------------------------------------------------- agreement


class AgreementView(APIView):
    def get(self, request, packet_id):
        packet_access = access.access_agreement(request.user, packet_id)
        # A read: the report stored after the second freeze (or the latest adjudicated
        # publication); 202 with the job's state while the task that stores it is queued
        # or running; else one computed now and not stored (id and created_at null), with
        # the job when it failed.
        read = reads.agreement_read(packet_access.packet)
        report = read.report
        if report is None:
            body = {"id": None, "packet": packet_access.packet.pk, "created_at": None, "status": read.job.status}
            return Response({**body, "job": job_view(read.job)}, status=status.HTTP_202_ACCEPTED)
        body = {
            "id": report.pk,
            "packet": report.packet_id,
            "created_at": report.created_at.isoformat() if report.created_at else None,
            **report.report,
        }
        if read.job is not None:
            body["job"] = job_view(read.job)
        return Response(body)
