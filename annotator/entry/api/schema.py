"""OpenAPI generation for views that present plain dicts rather than serializers.

The views carry no schema decorators; what the schema says about each operation lives
here, in tables keyed by view class and method:

- the success status and its media types (JSON object or list, zip, CSV, raw bytes);
- the request body (JSON or multipart fields, with their types) and query parameters;
- every error status the operation can answer, each with the one JSON error body
  (``annotator.entry.api.errors``): 400 for a bad body or query, 403 when not signed in (session
  authentication answers first, so 401 is never sent), 404 for what the user may not see,
  409 for workflow conflicts, 412 for a stale ledger version, 413 for a body over the
  path's limit (``deploy.body_limits``), 415 for a media type the view does not parse,
  429 for sign-in lock-outs. 405 (a method the path does not have) has the same body.

Shapes of the JSON success bodies are described in docs/api.md.
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter

JSON = "application/json"
OBJECT = {"type": "object", "additionalProperties": True}
LIST = {"type": "array", "items": OBJECT}
BINARY = {"type": "string", "format": "binary"}
TEXT = {"type": "string"}

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "invalid, not_found, conflict, stale_version, ..."},
                "message": {"type": "string"},
                "field": {"type": "string", "description": "the request field at fault, when there is one"},
            },
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}

ERROR_DESCRIPTIONS = {
    400: "Invalid request: bad body, field or query parameter.",
    403: "Not signed in, or not allowed.",
    404: "Not found, or not visible to this user.",
    409: "Conflict with the workflow state (frozen, not yet frozen, undecided items, ...).",
    412: "Stale ledger version (If-Match or version); on /api/uploads/: no Tus-Resumable: 1.0.0 header.",
    413: "Request body larger than this path accepts.",
    415: "Unsupported request media type.",
    429: "Too many failed sign-in attempts; see Retry-After.",
    500: "Server error; code `integrity_error` when stored frozen data no longer matches its SHA-256.",
}

# (view, method) -> success status, when it is not 200.
SUCCESS_STATUS = {
    ("TaskKindListView", "POST"): 201,
    ("PacketListView", "POST"): 201,
    ("LedgerEventListView", "POST"): 201,
    ("PublishView", "POST"): 201,
    ("ReadyView", "POST"): 201,
    ("SubmissionListView", "POST"): 201,
    ("ScoringRunListView", "POST"): 202,
    ("VideoListView", "POST"): 202,
    ("VersionBundlesView", "POST"): 202,
    ("MomentImportView", "POST"): 201,
    ("VideoSearchIndexView", "POST"): 202,
    ("UploadListView", "POST"): 201,
    ("UploadDetailView", "PATCH"): 204,
    ("UploadDetailView", "DELETE"): 204,
    ("TokenDetailView", "DELETE"): 204,
}

# The tus views answer 412 to a request without ``Tus-Resumable: 1.0.0``.
TUS_VIEWS = {"UploadListView", "UploadDetailView"}

# (view, method) -> another success status the route also answers.
ALSO_SUCCESS = {
    ("PublishView", "POST"): 200,  # nothing changed since the latest version: that version
    ("AgreementView", "GET"): 202,  # the report is still being computed after the freeze: its job
}

# Views that read a frozen ledger's or version's canonical JSON (verified on every read).
FROZEN_READERS = {
    "OwnLedgerView", "LedgerBySideView", "UnionView", "DecisionView", "PublishView", "PacketVersionListView",
    "VersionDetailView", "VersionExportView", "AgreementView", "ScoringRunListView", "ScoreDiagnosticsView",
    "LeaderboardView", "CalibrationView", "ReadyView",
}  # fmt: skip

# Reads that answer 409 when what they read is not ready (a video's search index).
NOT_READY_READERS = {("PacketSearchView", "GET")}

LIST_VIEWS = {"AuditLogView", "VersionBundlesView"}  # besides the GET of every *ListView

# (view, method) -> media type -> schema of the success body, when it is not JSON.
SUCCESS_MEDIA = {
    ("VersionExportView", "GET"): {"application/zip": BINARY, "application/octet-stream": BINARY},
    ("SubmissionContentView", "GET"): {"application/octet-stream": BINARY},
    ("ScoreFileView", "GET"): {JSON: OBJECT, "text/plain": TEXT},
}


def _string(description: str, **extra) -> dict:
    return {"type": "string", "description": description, **extra}


def _json_body(properties: dict, required: list[str]) -> dict:
    schema = {"type": "object", "properties": properties}
    return {JSON: {**schema, "required": required} if required else schema}


VERSION_FIELD = {"type": "integer", "description": "the ledger version last seen (or If-Match)"}
SUBMISSION_FORM = {
    "type": "object",
    "properties": {
        "file": BINARY,
        "label": _string("label of `file`"),
        "files": {"type": "array", "items": BINARY},
        "labels": {"type": "array", "items": TEXT, "description": "one per file in `files`"},
        "archive": {**BINARY, "description": "a zip of submission files"},
        "include": _string("glob on the archive's file names, e.g. *solution.json"),
        "file_upload": {
            "type": "array",
            "items": TEXT,
            "description": "keys of finished submission uploads, as `file`",
        },
        "archive_upload": {
            "type": "array",
            "items": TEXT,
            "description": "keys of finished submission uploads, as `archive`",
        },
    },
}
BUNDLE_FORM = {
    "type": "object",
    "properties": {
        "bundle": {**BINARY, "description": "a zip with build.sh and run.sh"},
        "bundle_upload": _string("key of a finished bundle upload (/api/uploads/), in place of `bundle`"),
        "label": TEXT,
        "device": {"type": "string", "enum": ["cpu", "cuda"]},
        "reference": _string("true: grade the repository's own reference bundle instead of an upload"),
    },
}

# (view, method) -> media type -> request body schema.
REQUEST_BODIES = {
    ("TokenView", "POST"): _json_body({"username": TEXT, "password": TEXT}, ["username", "password"]),
    ("TaskKindListView", "POST"): _json_body(
        {"slug": TEXT, "name": TEXT, "scorer_id": TEXT, "schema": OBJECT, "description": TEXT},
        ["slug", "name", "scorer_id", "schema"],
    ),
    ("PacketListView", "POST"): _json_body(
        {
            "title": TEXT,
            "video": {"type": "integer"},
            "task_kind": _string("task kind slug"),
            "annotator_a": _string("username"),
            "annotator_b": _string("username"),
            "adjudicator": _string("username"),
            "instructions": TEXT,
            "parameters": OBJECT,
        },
        ["title", "video", "task_kind", "annotator_a", "annotator_b", "adjudicator"],
    ),
    ("LedgerEventListView", "POST"): _json_body({"data": OBJECT, "version": VERSION_FIELD}, ["data"]),
    ("LedgerEventDetailView", "PUT"): _json_body({"data": OBJECT, "version": VERSION_FIELD}, ["data"]),
    ("FreezeView", "POST"): _json_body({"attestation": TEXT, "version": VERSION_FIELD}, ["attestation"]),
    ("DecisionView", "POST"): _json_body(
        {
            "action": _string("take_a, take_b, merge, drop, ..."),
            "final_value": {"description": "the decided event, for actions that need one"},
            "rationale": TEXT,
        },
        ["action", "rationale"],
    ),
    ("ScoringRunListView", "POST"): _json_body(
        {
            "version": {"type": "integer"},
            "tier": _string("adjudicated (default) or provisional"),
            "scorer_id": TEXT,
            "submissions": {"type": "array", "items": {"type": "integer"}},
            "batch": TEXT,
        },
        [],
    ),
    ("CalibrationView", "POST"): _json_body({"scorer_id": TEXT}, []),
    ("VideoListView", "POST"): {
        "multipart/form-data": {"type": "object", "properties": {"file": BINARY, "title": TEXT}, "required": ["file"]}
    },
    ("SubmissionListView", "POST"): {
        "multipart/form-data": SUBMISSION_FORM,
        JSON: {
            "type": "object",
            "properties": {
                k: SUBMISSION_FORM["properties"][k] for k in ("label", "include", "file_upload", "archive_upload")
            },
        },
    },
    ("VersionBundlesView", "POST"): {
        "multipart/form-data": BUNDLE_FORM,
        JSON: {"type": "object", "properties": {k: v for k, v in BUNDLE_FORM["properties"].items() if k != "bundle"}},
    },
    ("MomentImportView", "POST"): {
        "multipart/form-data": {
            "type": "object",
            "properties": {
                "file": {**BINARY, "description": "QVHighlights or Charades-STA annotation .jsonl"},
                "reannotated": {"type": "array", "items": BINARY, "description": "Charades-STA re-annotation CSVs"},
                "source": _string("qvhighlights or charades-sta"),
                "annotator_a": _string("username"),
                "annotator_b": _string("username"),
                "adjudicator": _string("username"),
                "videos": _string("comma-separated video ids to import (default: all)"),
                "limit_videos": _string("import at most this many videos"),
            },
            "required": ["file"],
        }
    },
}

SEARCH_FIELDS = {
    "text": _string("a description (text search)"),
    "example": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                "description": "[start_frame, end_frame]: find intervals similar to this one"},
    "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "how many intervals (default 10)"},
}  # fmt: skip
REQUEST_BODIES[("PacketSearchView", "POST")] = _json_body(SEARCH_FIELDS, [])
REQUEST_BODIES[("VideoSearchIndexView", "POST")] = {
    "multipart/form-data": {
        "type": "object",
        "properties": {
            "features": {**BINARY, "description": "CLIP frame features: .npz (key features) or .npy, L x D"},
            "clip_length": _string("seconds per feature row (required with features)"),
            "text_features": {**BINARY, "description": ".npz with texts and embeddings in the same space"},
        },
    },
    **_json_body({}, []),
}

QUERY_PARAMETERS = {
    ("PacketSearchView", "GET"): [
        OpenApiParameter("text", str, description="a description: search by text"),
        OpenApiParameter("start_frame", int, description="first frame of an example interval (find similar)"),
        OpenApiParameter("end_frame", int, description="last frame of the example interval"),
        OpenApiParameter("k", int, description="how many intervals (1-50, default 10)"),
    ],
    ("TokenListView", "GET"): [
        OpenApiParameter("user", int, description="another person's tokens (maintainers who may administer accounts)")
    ],
    ("VersionExportView", "GET"): [
        OpenApiParameter("file", str, description="one file of the export (e.g. gt.json) instead of the zip")
    ],
    ("LeaderboardView", "GET"): [
        OpenApiParameter("scorer", str, description="scorer id (default: the task kind's)"),
        OpenApiParameter("sort", str, description="column to sort by, '-' for descending (default -reward)"),
    ],
}

LEDGER_WRITES = {("LedgerEventListView", "POST"), ("LedgerEventDetailView", "PUT"),
                 ("LedgerEventDetailView", "DELETE"), ("FreezeView", "POST")}  # fmt: skip
IF_MATCH = OpenApiParameter(
    "If-Match", str, OpenApiParameter.HEADER, description='"ledger-<id>-v<version>" (or version in the body)'
)

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
BODY_METHODS = {"POST", "PUT", "PATCH"}


class AutoSchema(SpectacularAutoSchema):
    @property
    def key(self) -> tuple[str, str]:
        return type(self.view).__name__, self.method.upper()

    # ----------------------------------------------------------------- requests

    def _get_serializer(self):
        try:
            return super()._get_serializer()
        except Exception:  # the base class raises when a view has no serializer
            return None

    def get_request_serializer(self):
        return None  # request bodies come from REQUEST_BODIES

    def get_response_serializers(self):
        return None  # responses come from _get_response_bodies

    def get_override_parameters(self):
        parameters = list(QUERY_PARAMETERS.get(self.key, []))
        if self.key in LEDGER_WRITES:
            parameters.append(IF_MATCH)
        return parameters + list(super().get_override_parameters())

    def _get_request_body(self, direction="request"):
        if self.method.upper() not in BODY_METHODS:
            return None
        media = REQUEST_BODIES.get(self.key, {JSON: OBJECT})
        required = any(schema.get("required") for schema in media.values())
        return {"content": {mt: {"schema": schema} for mt, schema in media.items()}, "required": required}

    # ---------------------------------------------------------------- responses

    def _is_list_view(self, serializer=None):
        name, method = self.key
        return method == "GET" and (name.endswith("ListView") or name in LIST_VIEWS)

    def _success_media(self) -> dict:
        if self.key in SUCCESS_MEDIA:
            return SUCCESS_MEDIA[self.key]
        if self.path.endswith(".csv"):
            return {"text/csv": TEXT}
        return {JSON: LIST if self._is_list_view() else OBJECT}

    def error_statuses(self) -> list[int]:
        name, method = self.key
        if name == "TokenView":
            return [400, 409, 413, 415, 429]
        statuses = {403}
        if name != "MeView":
            statuses.add(404)
        if method in WRITE_METHODS or self.key in QUERY_PARAMETERS:
            statuses.add(400)
        if method in WRITE_METHODS or self.key in NOT_READY_READERS:
            statuses.add(409)
        if method in BODY_METHODS:
            statuses.update({413, 415})
        if self.key in LEDGER_WRITES or name in TUS_VIEWS:
            statuses.add(412)
        if name in FROZEN_READERS:
            statuses.add(500)
        return sorted(statuses)

    def _error_ref(self) -> dict:
        component = ResolvedComponent(name="Error", type=ResolvedComponent.SCHEMA, object="Error", schema=ERROR_SCHEMA)
        self.registry.register_on_missing(component)
        return component.ref

    def _get_response_bodies(self, direction="response"):
        status = SUCCESS_STATUS.get(self.key, 200)
        media = self._success_media()
        content = {"content": {mt: {"schema": s} for mt, s in media.items()}}
        responses = {str(status): {"description": "", **content}}
        if self.key in ALSO_SUCCESS:
            responses[str(ALSO_SUCCESS[self.key])] = {"description": "", **content}
        error = {"content": {JSON: {"schema": self._error_ref()}}}
        for code in self.error_statuses():
            responses[str(code)] = {"description": ERROR_DESCRIPTIONS[code], **error}
        return responses
