"""HTTP compression for JSON answers (API responses, frame tables, thumbnail meta).

Only ``application/json`` bodies that are not streamed are compressed: pages keep
their CSRF tokens out of compressed responses, and media answered by byte range
(``annotator.base.media.ranges``) must stay byte-addressable. Django's ``GZipMiddleware``
does the rest (``Accept-Encoding`` negotiation, ``Vary``, weak ETags, BREACH padding).
"""

from __future__ import annotations

from django.middleware.gzip import GZipMiddleware


def accepts_gzip(request) -> bool:
    """Whether ``Accept-Encoding`` allows gzip (``gzip;q=0`` refuses it, unlike Django's check)."""
    for item in request.headers.get("Accept-Encoding", "").split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() == "gzip":
            qvalue = params.replace(" ", "").lower().removeprefix("q=")
            try:
                return not params or float(qvalue) > 0
            except ValueError:
                return True
    return False


class JsonGZipMiddleware(GZipMiddleware):
    def process_response(self, request, response):
        if response.streaming or not response.get("Content-Type", "").startswith("application/json"):
            return response
        if not accepts_gzip(request):
            return response
        return super().process_response(request, response)
