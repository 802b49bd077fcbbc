"""The embedded default's web server: uvicorn, one process, HTTP and websockets.

``bin/run-demo`` starts it as ``python -m deploy.serve -b 127.0.0.1 -p 8000
deploy.asgi:application``. It runs Django's system checks first and does not start on an
error (a weak ``DJANGO_SECRET_KEY``, ``annotator.E020``), then serves with uvicorn, the
server the production stack's gunicorn workers run (``deploy/gunicorn.conf.py``).

Why uvicorn (Daphne served here before): both directions of a body have flow control.

- **Request bodies** reach the application as they arrive: uvicorn pauses reading the socket
  once 64 KiB wait unread and resumes when the application asks for more (``receive``). So the
  layers of ``deploy.asgi`` decide before a body is read: ``BodyLimitMiddleware`` refuses one
  over the path's limit from its ``Content-Length`` (or as it counts a chunked one), and
  ``UploadAuthMiddleware`` refuses a large body on an upload route from a client that is not
  signed in (no valid session cookie or API token). Django's ASGI handler then spools the body
  to a temporary file past ``FILE_UPLOAD_MAX_MEMORY_SIZE``, and its multipart parser writes
  each file part past the same threshold to another; nothing keeps a whole body in memory.
  (Twisted, under Daphne, read every body and parsed multipart bodies in memory itself before
  the application was called: 13× the upload's size in server memory, and a bare ``400`` with
  no headers for a malformed multipart body.)
- **Response bodies** are sent as fast as the socket drains: ``send`` waits while the
  transport's buffer is full, so a media response (``annotator.base.media.ranges``) reads the file
  no faster than the client takes it, and a client that stops reading stops the reads. The
  listening socket (:func:`listening_socket`) fixes each connection's kernel send buffer at
  ``FRAMELEDGER_SEND_BUFFER_BYTES`` (128 KiB; Linux doubles it for its bookkeeping) instead of
  letting it grow to megabytes: what a ``<video>`` abandons at a seek is what the socket held
  then, so seeking sends at most about twice what the player read (docs/media.md §8.4). 128 KiB
  still carries ~20 Mbit/s per connection at 100 ms round trip (the proxy needs ~1); ``0``
  leaves the kernel's own sizing.

The access log is ``deploy.access_log`` (one readable line per request with the bytes
actually sent); uvicorn's own lines keep its format. ``--http`` picks uvicorn's HTTP parser
(``h11``, the default here, or ``httptools``).
"""

from __future__ import annotations

import argparse
import os
import socket

SEND_BUFFER_BYTES = 128 * 1024


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m deploy.serve", description=__doc__.split("\n")[0])
    parser.add_argument("-b", "--bind", default="127.0.0.1", help="address to listen on")
    parser.add_argument("-p", "--port", type=int, default=8000)
    parser.add_argument("--http", choices=["h11", "httptools"], default="h11")
    parser.add_argument(
        "--proxy-headers",
        action="store_true",
        help="trust X-Forwarded-For/-Proto from FORWARDED_ALLOW_IPS (default 127.0.0.1): behind a reverse proxy only",
    )
    parser.add_argument("--no-checks", action="store_true", help="skip the system checks (tests only)")
    parser.add_argument("application", nargs="?", default="deploy.asgi:application")
    return parser.parse_args(argv)


def send_buffer_bytes() -> int:
    """``FRAMELEDGER_SEND_BUFFER_BYTES`` (128 KiB by default; 0: the kernel's own sizing)."""
    value = os.environ.get("FRAMELEDGER_SEND_BUFFER_BYTES", "").strip()
    if not value:
        return SEND_BUFFER_BYTES
    if not (value.isascii() and value.isdigit()):
        raise SystemExit(f"FRAMELEDGER_SEND_BUFFER_BYTES must be a number of bytes, not {value!r}")
    return int(value)


def listening_socket(host: str, port: int, send_buffer: int | None = None) -> socket.socket:
    """The server's listening socket on ``host``:``port`` (0: any free port). Its send buffer
    size (``send_buffer``, else :func:`send_buffer_bytes`; 0 leaves the kernel's) is inherited
    by every connection it accepts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    size = send_buffer_bytes() if send_buffer is None else send_buffer
    if size:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    listener.bind(("127.0.0.1" if host == "localhost" else host, port))
    listener.listen(2048)
    return listener


def server_config(
    application, *, host: str, port: int, http: str = "h11", fd: int | None = None, proxy_headers: bool = False
):
    """The uvicorn configuration every embedded server uses (``bin/run-demo``, the browser
    and HTTP tests): websockets by the ``websockets`` library, no lifespan (Django has none),
    uvicorn's access log off (``deploy.access_log`` writes it with byte counts)."""
    import uvicorn

    kwargs = {"fd": fd} if fd is not None else {"host": host, "port": port}
    return uvicorn.Config(
        application,
        http=http,
        ws="websockets-sansio",  # the websockets library (its sans-I/O protocol; uvicorn deprecates the other)
        lifespan="off",
        access_log=False,
        log_config=None,  # Django's LOGGING (deploy/logs.py: text or JSON lines) formats uvicorn's too
        timeout_keep_alive=20,
        server_header=False,
        # Off unless asked: the sign-in limits count by client address, which a forwarded
        # header from an untrusted client must not choose.
        proxy_headers=proxy_headers,
        forwarded_allow_ips=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
        **kwargs,
    )


def main(argv=None):
    """Run the system checks (an error, such as a weak secret key, stops the start), then uvicorn."""
    args = parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")
    os.environ.setdefault("FRAMELEDGER_ACCESS_LOG", "1")  # deploy.access_log: this server's only access log
    import django
    import uvicorn
    from django.core.management import call_command

    django.setup()
    if not args.no_checks:
        call_command("check", fail_level="ERROR")
    listener = listening_socket(args.bind, args.port)
    uvicorn.Server(
        server_config(
            args.application, host=args.bind, port=args.port, http=args.http, proxy_headers=args.proxy_headers
        )
    ).run(sockets=[listener])


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
