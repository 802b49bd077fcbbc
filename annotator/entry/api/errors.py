"""One error body for every API failure: ``{"error": {"code", "message", "field"?}}``."""

from __future__ import annotations

import sys

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.utils.html import escape
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from annotator.base.disk import is_out_of_space, out_of_space
from annotator.base.errors import WorkflowError
from annotator.base.unavailable import current_exception_is_db_unavailable, unavailable_response
from annotator.reads.access import Forbidden, NotFound
from annotator.reads.integrity import TamperedData, audit_integrity_failure

KEPT_HEADERS = ("WWW-Authenticate", "Retry-After", "Allow")


def error_response(code: str, message: str, http_status: int, field: str | None = None) -> Response:
    body = {"code": code, "message": message}
    if field:
        body["field"] = field
    return Response({"error": body}, status=http_status)


def exception_handler(exc, context):
    if isinstance(exc, TamperedData):
        # The view's transaction is over by now, so the audit entry stays.
        audit_integrity_failure(exc)
    if isinstance(exc, WorkflowError):
        return error_response(exc.code, exc.message, exc.status, exc.field)
    if isinstance(exc, (NotFound, Http404)):
        # The same answer whether the object is missing or hidden from this user.
        return error_response("not_found", "Not found.", status.HTTP_404_NOT_FOUND)
    if isinstance(exc, Forbidden):
        return error_response("forbidden", str(exc), status.HTTP_403_FORBIDDEN)
    if is_out_of_space(exc):  # a write met ENOSPC outside the paths that check for it
        full = out_of_space(settings.MEDIA_ROOT)
        return error_response(full.code, full.message, full.status)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    rebuilt = _rebuild(exc, response)
    for header in KEPT_HEADERS:  # 401's WWW-Authenticate, 429's Retry-After
        if header in response:
            rebuilt[header] = response[header]
    return rebuilt


def _rebuild(exc, response) -> Response:
    if isinstance(exc, exceptions.ValidationError) and isinstance(exc.detail, dict):
        field, messages = next(iter(exc.detail.items()))
        message = messages[0] if isinstance(messages, list) and messages else str(messages)
        return error_response("invalid", f"{field}: {message}", response.status_code, field)
    detail = getattr(exc, "detail", str(exc))
    code = getattr(exc, "default_code", "error")
    return error_response(code, str(detail), response.status_code)


# Django's own error views, for failures outside DRF (an unknown /api/ URL, a body Django
# refuses, an uncaught exception): the same JSON body on /api/ paths, Django's pages elsewhere.

_PAGE_ERRORS = {
    400: ("invalid", "Bad request."),
    403: ("forbidden", "Forbidden."),
    404: ("not_found", "Not found."),
    500: ("server_error", "Internal server error."),
}


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def json_error_page(request, status_code: int):
    code, message = _PAGE_ERRORS[status_code]
    return JsonResponse({"error": {"code": code, "message": message}}, status=status_code)


def bad_request(request, exception=None):
    return json_error_page(request, 400) if _is_api(request) else defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    return json_error_page(request, 403) if _is_api(request) else defaults.permission_denied(request, exception)


def page_not_found(request, exception=None):
    return json_error_page(request, 404) if _is_api(request) else defaults.page_not_found(request, exception)


def server_error(request):
    if current_exception_is_db_unavailable():  # raised outside a view (a middleware)
        return unavailable_response(request)
    exc = sys.exc_info()[1]
    if isinstance(exc, TamperedData):  # a page that read tampered data: say so, as the API does
        audit_integrity_failure(exc)
        if _is_api(request):
            return JsonResponse({"error": {"code": exc.code, "message": exc.message}}, status=500)
        body = f"<!doctype html><title>Integrity error</title><h1>Integrity error</h1><p>{escape(exc.message)}</p>"
        return HttpResponse(body, status=500, headers={"X-FrameLedger-Error": exc.code})
    return json_error_page(request, 500) if _is_api(request) else defaults.server_error(request)
