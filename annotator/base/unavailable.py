"""A database that cannot be reached is a clean ``503``, not a ``500`` with a traceback.

``DatabaseUnavailableMiddleware`` turns an ``OperationalError`` or ``InterfaceError`` raised by a
view into ``503 Service Unavailable`` with ``Retry-After``: the API's JSON error body on
``/api/`` paths, a short HTML page elsewhere. The same answer comes from the 500 handler
(``annotator.entry.api.errors.server_error`` calls :func:`unavailable_response`) for an error raised
outside a view (a middleware saving the session, say). Django drops a broken connection at the
end of the request, so the next request reconnects: the app recovers when the database is
back, without a restart.
"""

from __future__ import annotations

import logging
import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin
from django.utils.html import escape

logger = logging.getLogger("frameledger.unavailable")
RETRY_AFTER_SECONDS = 5
MESSAGE = "The database is unavailable for a moment. Please retry in a few seconds; nothing was lost."
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>FrameLedger is unavailable</title>
</head><body><h1>FrameLedger is unavailable for a moment</h1><p>{message}</p></body></html>"""

DB_ERRORS = (OperationalError, InterfaceError)


def is_db_unavailable(exc: BaseException | None) -> bool:
    while exc is not None:
        if isinstance(exc, DB_ERRORS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def unavailable_response(request) -> HttpResponse:
    if request.path.startswith("/api/"):
        response = JsonResponse({"error": {"code": "unavailable", "message": MESSAGE}}, status=503)
    else:
        response = HttpResponse(PAGE.format(message=escape(MESSAGE)), status=503, content_type="text/html")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def current_exception_is_db_unavailable() -> bool:
    return is_db_unavailable(sys.exc_info()[1])


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    def process_exception(self, request, exception):
        if not is_db_unavailable(exception):
            return None
        logger.warning("database unavailable on %s %s: %s", request.method, request.path, exception)
        return unavailable_response(request)
