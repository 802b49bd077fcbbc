"""REST endpoints. Each view: authenticate, ``access_*``, call one ``check_*`` (user input:
files, form and body fields) or ``do_*`` (a write that takes none), present.

Errors are raised as ``annotator.base.errors`` / ``annotator.reads.access`` exceptions and turned
into one error body by ``annotator.entry.api.errors.exception_handler``.
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import HttpResponse
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.actions.adjudication import do_decide_item
from annotator.actions.ledgers import do_add_event, do_delete_event, do_freeze_ledger, do_update_event
from annotator.actions.packets import do_create_packet, user_by_username
from annotator.actions.taskkinds import check_create_task_kind
from annotator.actions.union import do_build_union
from annotator.actions.versions import do_publish_adjudicated_version
from annotator.base.errors import InvalidInput, StaleVersion
from annotator.base.filenames import attachment
from annotator.base.urlconverters import parse_id
from annotator.entry.api.query import whole_number, with_query
from annotator.models import AuditEntry, TaskKind, Video
from annotator.reads import access, present
from annotator.reads.export import export_files, export_zip
from annotator.reads.overview import shown_details
from annotator.reads.publishing import publication_preview
from annotator.reads.sealed_rows import verify_decisions

ETAG = re.compile(r'^(?:W/)?"ledger-(?P<id>\d+)-v(?P<version>\d+)"$')


def body_field(request, name: str, *, required: bool = True, kind: type | tuple = str):
    if not isinstance(request.data, dict):
        raise InvalidInput("the request body must be a JSON object", field="body")
    value = request.data.get(name)
    if value is None:
        if required:
            raise InvalidInput(f"{name} is required", field=name)
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise InvalidInput(f"{name} has the wrong type", field=name)
    if isinstance(value, int) and not isinstance(value, bool) and parse_id(abs(value)) is None:
        # bounded like ids in URLs: a number no column holds is a 400, never the driver's OverflowError
        raise InvalidInput(f"{name} is out of range", field=name)
    return value


def expected_version(request, ledger) -> int | None:
    """The version the client last saw: ``If-Match: "ledger-<id>-v<n>"`` or ``version`` in the body."""
    header = request.headers.get("If-Match")
    if header:
        match = ETAG.match(header.strip())
        if match is None or int(match["id"]) != ledger.pk:
            raise StaleVersion("If-Match does not name this ledger's current version")
        return int(match["version"])
    if isinstance(request.data, dict):
        return request.data.get("version")
    return None


def with_etag(response: Response, ledger) -> Response:
    response["ETag"] = ledger.etag
    return response


class MeView(APIView):
    def get(self, request):
        user = request.user
        return Response({"username": user.username, "is_maintainer": access.is_maintainer(user)})


class UserListView(APIView):
    def get(self, request):
        access.require_maintainer(request.user)
        users = get_user_model().objects.filter(is_active=True).order_by("username")
        return Response([{"username": u.username, "name": u.get_full_name()} for u in users])


class TaskKindListView(APIView):
    def get(self, request):
        return Response([present.task_kind_view(k) for k in TaskKind.objects.all()])

    def post(self, request):
        access.require_maintainer(request.user)
        kind = check_create_task_kind(
            actor=request.user,
            slug=body_field(request, "slug"),
            name=body_field(request, "name"),
            scorer_id=body_field(request, "scorer_id"),
            schema=body_field(request, "schema", kind=dict),
            description=body_field(request, "description", required=False) or "",
        )
        return Response(present.task_kind_view(kind), status=status.HTTP_201_CREATED)


class TaskKindDetailView(APIView):
    def get(self, request, slug):
        kind = TaskKind.objects.filter(slug=slug).first()
        if kind is None:
            raise access.NotFound("task kind")
        return Response(present.task_kind_view(kind))


PACKET_WINDOW = 100


class PacketListView(APIView):
    def get(self, request):
        """The packets the viewer has a role on, newest first, ``PACKET_WINDOW`` at a time
        (``?page=``); a ``Link`` header names the next window (and ``X-Total-Count`` all)."""
        packets = access.visible_packets(request.user).select_related("annotator_a", "annotator_b", "adjudicator")
        packets = packets.order_by("-created_at", "-pk")
        page = parse_id(request.query_params.get("page")) or 1
        total = packets.count()
        window = list(packets[(page - 1) * PACKET_WINDOW : page * PACKET_WINDOW])
        response = Response(present.packet_views(access.packet_accesses(request.user, window)))
        response["X-Total-Count"] = str(total)
        if page * PACKET_WINDOW < total:
            response["Link"] = f'<{request.path}?page={page + 1}>; rel="next"'
        return response

    def post(self, request):
        access.require_maintainer(request.user)
        video_id = body_field(request, "video", kind=int)
        video = Video.objects.filter(pk=video_id).first()
        if video is None:
            raise InvalidInput(f"no video {video_id}", field="video")
        kind = TaskKind.objects.filter(slug=body_field(request, "task_kind")).first()
        if kind is None:
            raise InvalidInput("no such task kind", field="task_kind")
        parameters = body_field(request, "parameters", required=False, kind=dict) or {}
        packet = do_create_packet(
            actor=request.user,
            title=body_field(request, "title"),
            video=video,
            task_kind=kind,
            annotator_a=user_by_username(body_field(request, "annotator_a")),
            annotator_b=user_by_username(body_field(request, "annotator_b")),
            adjudicator=user_by_username(body_field(request, "adjudicator")),
            instructions=body_field(request, "instructions", required=False) or "",
            parameters=parameters,
        )
        return Response(present.packet_view(access.access_packet(request.user, packet.pk)), status=201)


class PacketDetailView(APIView):
    def get(self, request, packet_id):
        return Response(present.packet_view(access.access_packet(request.user, packet_id)))


class OwnLedgerView(APIView):
    def get(self, request, packet_id):
        ledger = access.access_own_ledger(request.user, packet_id)
        return with_etag(Response(present.own_ledger_view(ledger)), ledger)


class LedgerEventListView(APIView):
    def post(self, request, packet_id):
        with transaction.atomic():
            ledger = access.access_own_ledger(request.user, packet_id, for_update=True)
            event = do_add_event(
                ledger, body_field(request, "data", kind=dict), actor=request.user,
                expected_version=expected_version(request, ledger),
            )  # fmt: skip
        body = {"event": present.event_view(event), "version": ledger.version}
        return with_etag(Response(body, status=status.HTTP_201_CREATED), ledger)


class LedgerEventDetailView(APIView):
    def put(self, request, packet_id, event_uid):
        with transaction.atomic():
            ledger = access.access_own_ledger(request.user, packet_id, for_update=True)
            event = do_update_event(
                ledger, event_uid, body_field(request, "data", kind=dict), actor=request.user,
                expected_version=expected_version(request, ledger),
            )  # fmt: skip
        return with_etag(Response({"event": present.event_view(event), "version": ledger.version}), ledger)

    def delete(self, request, packet_id, event_uid):
        with transaction.atomic():
            ledger = access.access_own_ledger(request.user, packet_id, for_update=True)
            do_delete_event(ledger, event_uid, actor=request.user, expected_version=expected_version(request, ledger))
        return with_etag(Response({"version": ledger.version}), ledger)


class FreezeView(APIView):
    def post(self, request, packet_id):
        with transaction.atomic():
            ledger = access.access_own_ledger(request.user, packet_id, for_update=True)
            do_freeze_ledger(
                ledger, actor=request.user, attestation=body_field(request, "attestation"),
                expected_version=expected_version(request, ledger),
            )  # fmt: skip
        return with_etag(Response(present.own_ledger_view(ledger)), ledger)


class LedgerBySideView(APIView):
    def get(self, request, packet_id, side):
        ledger = access.access_ledger(request.user, packet_id, side)
        if ledger.is_frozen:
            return Response(present.frozen_ledger_view(ledger))
        return with_etag(Response(present.own_ledger_view(ledger)), ledger)


class UnionView(APIView):
    """The union a page of items at a time: ``?start=POSITION`` (default 0) and ``?limit=N``
    (default 256, at most 1,024); ``count`` is every item, ``next`` the following page's URL
    (null on the last). Each page verifies the union row and the blocks of items it serves."""

    def get(self, request, packet_id):
        start = whole_number(request, "start", 0, 2**31 - 1)
        limit = whole_number(request, "limit", access.UNION_PAGE_SIZE, access.UNION_MAX_PAGE_SIZE, least=1)
        packet_access, union, count, items = access.access_union_page(request.user, packet_id, start, limit)
        verify_decisions(item.decision for item in items if hasattr(item, "decision"))
        following = start + limit < count
        return Response(
            {
                "packet": packet_access.packet.pk,
                "scorer_id": union.scorer_id,
                "ledger_a_sha256": union.ledger_a_sha256,
                "ledger_b_sha256": union.ledger_b_sha256,
                "count": count,
                "start": start,
                "items": [present.union_item_view(item) for item in items],
                "next": with_query(request, start=start + limit, limit=limit) if following else None,
            }
        )

    def post(self, request, packet_id):
        with transaction.atomic():
            packet_access = access.access_union_build(request.user, packet_id, for_update=True)
            do_build_union(packet_access.packet, actor=request.user)
        return self.get(request, packet_id)


class DecisionView(APIView):
    def post(self, request, packet_id, position):
        with transaction.atomic():
            access.access_adjudication(request.user, packet_id, for_update=True)
            _, item = access.access_union_item(request.user, packet_id, position)
            # "replaces": the decision this page saw (its decided_at, or null): checked when sent.
            checked = {"replaces": request.data.get("replaces")} if "replaces" in request.data else {}
            do_decide_item(
                item, actor=request.user, action=body_field(request, "action"),
                final_value=request.data.get("final_value"), rationale=body_field(request, "rationale"), **checked,
            )  # fmt: skip
        item.refresh_from_db()
        return Response(present.union_item_view(item))


class PublishView(APIView):
    def get(self, request, packet_id):
        """The confirmation before publishing: what the publish call would store now."""
        packet_access, _ = access.access_union(request.user, packet_id)
        return Response(publication_preview(packet_access.packet))

    def post(self, request, packet_id):
        with transaction.atomic():
            packet_access = access.access_adjudication(request.user, packet_id, for_update=True)
            version = do_publish_adjudicated_version(packet_access.packet, actor=request.user)
        # Publishing again with nothing changed answers the existing version with 200.
        answer = status.HTTP_201_CREATED if version.created else status.HTTP_200_OK
        return Response(present.version_view(version), status=answer)


class PacketVersionListView(APIView):
    def get(self, request, packet_id):
        packet_access = access.access_packet(request.user, packet_id)
        versions = access.visible_versions(request.user, packet_access)
        return Response([present.version_view(v) for v in versions])


class VersionDetailView(APIView):
    def get(self, request, version_id):
        _, version = access.access_version(request.user, version_id)
        return Response(present.version_view(version, include_events=True))


class VersionExportView(APIView):
    def get(self, request, version_id):
        _, version = access.access_version(request.user, version_id)
        name = request.query_params.get("file")
        if name:
            files = export_files(version)
            if name not in files:
                raise access.NotFound("file")
            return HttpResponse(files[name], content_type="application/octet-stream")
        response = HttpResponse(export_zip(version), content_type="application/zip")
        response["Content-Disposition"] = attachment(
            f"{version.packet.task_kind.slug}-{version.tier}-v{version.number}.zip"
        )
        return response


class AuditLogView(APIView):
    def get(self, request, packet_id):
        packet_access = access.access_audit_log(request.user, packet_id)
        entries = AuditEntry.objects.filter(packet=packet_access.packet).select_related("actor")[:1000]
        contents = access.sees_ledger_contents(packet_access)
        return Response(
            [
                {
                    "seq": e.seq,
                    "sha256": e.sha256,
                    "prev_sha256": e.prev_sha256,
                    "key_id": e.key_id,
                    "signature": e.signature,
                    "at": e.at.isoformat(),
                    "actor": e.actor.username if e.actor else None,
                    "operation": e.operation,
                    "object": f"{e.object_type}:{e.object_id}",
                    "hashes": e.hashes,
                    "details": shown_details(e, contents=contents),
                }
                for e in entries
            ]
        )
