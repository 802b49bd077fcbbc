"""Render the nginx configuration that fronts FrameLedger (Debian's ``nginx`` package).

    python -m deploy.nginx > /etc/nginx/nginx.conf            # a whole nginx.conf
    python -m deploy.nginx --site > /etc/nginx/sites-enabled/frameledger   # upstream + server only

It reads the same settings as the application (so the body limits, the static and media
folders and the X-Accel prefix can never disagree with Django's) plus these variables:

=================================  ============================================  ======================
``FRAMELEDGER_NGINX_UPSTREAMS``    web processes, ``host:port`` comma-separated   ``127.0.0.1:8000``
``FRAMELEDGER_NGINX_LISTEN``       address/port nginx listens on                  ``80`` (``443`` TLS)
``FRAMELEDGER_SERVER_NAME``        ``server_name``                                first allowed host
``FRAMELEDGER_TLS_CERT``/``_KEY``  certificate chain and key: TLS on when set      unset
``FRAMELEDGER_NGINX_REDIRECT_LISTEN``  with TLS: a plain-HTTP listener that 301s   ``80``
``FRAMELEDGER_METRICS_ALLOW``      addresses/CIDRs allowed ``/metrics``           ``127.0.0.1,::1``
``FRAMELEDGER_NGINX_RUNTIME_DIR``  pid, logs and temp files (whole-file mode)     ``/var/lib/nginx``
``FRAMELEDGER_SEND_BUFFER_BYTES``  each connection's kernel send buffer (``0``:   ``131072``
                                   the kernel's own sizing); the embedded server's
                                   rule too (``deploy/serve.py``)
=================================  ============================================  ======================

What the configuration does:

- ``/static/`` straight from ``STATIC_ROOT`` (run ``manage.py collectstatic``);
- media: the application checks access and answers ``X-Accel-Redirect`` to
  ``FRAMELEDGER_MEDIA_ACCEL_PREFIX`` (an ``internal`` location aliased to ``MEDIA_ROOT``), so nginx
  sends the file with ``sendfile`` and answers ``Range``/``If-Range`` itself;
- websocket upgrade on every path (the Channels routes are under ``/ws/``);
- ``Host`` forwarded as the client sent it, port included (``$http_host``; ``$host`` only when
  the client sent none), so Django's CSRF origin check and ``ALLOWED_HOSTS`` see the address
  the browser used: a stack on ``:8080`` signs in (``Origin: http://127.0.0.1:8080``);
- ``client_max_body_size``: ``FRAMELEDGER_MAX_BODY_BYTES`` everywhere, the larger limit only on the
  upload routes of ``FRAMELEDGER_UPLOAD_PATHS`` (``deploy/body_limits.py``), where the body streams
  to the application unbuffered; over the limit nginx answers the API's JSON 413;
- TLS (TLS 1.2/1.3, session cache) when a certificate is given, ``X-Forwarded-Proto`` for
  ``DJANGO_SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto:https``, and HSTS from
  ``DJANGO_SECURE_HSTS_*`` on every answer (the application's own header is hidden so it is sent once);
- a 502/504 (no web process answers) becomes a clean 503;
- ``listen ... sndbuf=``: the send buffer fixed as the embedded server fixes it, so a seek that
  drops a media response has cost what the player read plus at most that buffer, instead of
  the megabytes Linux grows a fast connection's buffer to (docs/media.md §8.4).
"""

from __future__ import annotations

import argparse
import os
import sys

TOO_LARGE_JSON = '{"error": {"code": "too_large", "message": "the request body is larger than this path accepts"}}'
UNAVAILABLE_JSON = '{"error": {"code": "unavailable", "message": "FrameLedger is unavailable for a moment; retry."}}'


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def render(*, site: bool = False) -> str:
    from django.conf import settings

    from deploy.serve import send_buffer_bytes

    upstreams = [u.strip() for u in env("FRAMELEDGER_NGINX_UPSTREAMS", "127.0.0.1:8000").split(",") if u.strip()]
    cert, key = env("FRAMELEDGER_TLS_CERT"), env("FRAMELEDGER_TLS_KEY")
    tls = bool(cert and key)
    listen = env("FRAMELEDGER_NGINX_LISTEN", "443" if tls else "80")
    send_buffer = send_buffer_bytes()
    sndbuf = f" sndbuf={send_buffer}" if send_buffer else ""
    hosts = [h for h in settings.ALLOWED_HOSTS if h and h != "*"]
    server_name = env("FRAMELEDGER_SERVER_NAME", hosts[0] if hosts else "_")
    metrics_allow = list(settings.FRAMELEDGER_METRICS_ALLOW)
    runtime = env("FRAMELEDGER_NGINX_RUNTIME_DIR", "/var/lib/nginx")
    static_url = "/" + settings.STATIC_URL.strip("/") + "/"
    accel = settings.FRAMELEDGER_MEDIA_ACCEL_PREFIX
    default_limit = settings.FRAMELEDGER_MAX_BODY_BYTES

    hsts = ""
    if tls and settings.SECURE_HSTS_SECONDS:
        value = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            value += "; includeSubDomains"
        if settings.SECURE_HSTS_PRELOAD:
            value += "; preload"
        hsts = f'    add_header Strict-Transport-Security "{value}" always;\n'

    proxy = (
        "        proxy_pass http://frameledger;\n"
        "        proxy_http_version 1.1;\n"
        "        proxy_set_header Host $frameledger_host;\n"
        "        proxy_set_header X-Real-IP $remote_addr;\n"
        "        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n"
        "        proxy_set_header X-Forwarded-Proto $scheme;\n"
        "        proxy_set_header Upgrade $http_upgrade;\n"
        "        proxy_set_header Connection $connection_upgrade;\n"
        "        proxy_hide_header Strict-Transport-Security;\n"
        "        proxy_read_timeout 3600s;\n"
        "        proxy_send_timeout 3600s;\n"
    )
    uploads = ""
    for pattern, limit in settings.FRAMELEDGER_UPLOAD_PATHS:
        uploads += (
            f'    location ~ "{pattern}" {{\n'
            f"        client_max_body_size {int(limit)};\n"
            "        proxy_request_buffering off;\n"
            f"{proxy}"
            "    }\n"
        )
    accel_block = ""
    if accel:
        accel_block = (
            f"    location {accel.rstrip('/')}/ {{\n"
            "        internal;\n"
            f"        alias {os.fspath(settings.MEDIA_ROOT).rstrip('/')}/;\n"
            "        sendfile on;\n"
            "        tcp_nopush on;\n"
            "    }\n"
        )
    metrics_rules = "".join(f"        allow {a};\n" for a in metrics_allow)
    tls_block = ""
    if tls:
        tls_block = (
            f"    ssl_certificate {cert};\n"
            f"    ssl_certificate_key {key};\n"
            "    ssl_protocols TLSv1.2 TLSv1.3;\n"
            "    ssl_prefer_server_ciphers off;\n"
            "    ssl_session_cache shared:FrameLedgerTLS:10m;\n"
            "    ssl_session_timeout 1d;\n"
            "    ssl_session_tickets off;\n"
        )
    redirect = ""
    if tls:
        redirect = (
            "server {\n"
            f"    listen {env('FRAMELEDGER_NGINX_REDIRECT_LISTEN', '80')};\n"
            f"    server_name {server_name};\n"
            "    return 301 https://$host$request_uri;\n"
            "}\n"
        )

    body = (
        "map $http_upgrade $connection_upgrade {\n"
        "    default upgrade;\n"
        "    '' '';\n"
        "}\n"
        "map $http_host $frameledger_host {\n"
        "    default $http_host;\n"
        "    '' $host;\n"
        "}\n"
        "upstream frameledger {\n"
        "    least_conn;\n" + "".join(f"    server {u} max_fails=0;\n" for u in upstreams) + "    keepalive 64;\n"
        "}\n"
        f"{redirect}"
        "server {\n"
        f"    listen {listen}{' ssl' if tls else ''}{sndbuf};\n"
        f"    server_name {server_name};\n"
        f"{tls_block}"
        f"{hsts}"
        f"    client_max_body_size {default_limit};\n"
        "    error_page 413 = @too_large;\n"
        "    error_page 502 504 = @unavailable;\n"
        f"    location {static_url} {{\n"
        f"        alias {os.fspath(settings.STATIC_ROOT).rstrip('/')}/;\n"
        "        expires 7d;\n"
        "        access_log off;\n"
        "    }\n"
        f"{accel_block}"
        "    location = /metrics {\n"
        f"{metrics_rules}"
        "        deny all;\n"
        f"{proxy}"
        "    }\n"
        f"{uploads}"
        "    location / {\n"
        f"{proxy}"
        "    }\n"
        "    location @too_large {\n"
        "        default_type application/json;\n"
        f"        return 413 '{TOO_LARGE_JSON}';\n"
        "    }\n"
        "    location @unavailable {\n"
        "        default_type application/json;\n"
        "        add_header Retry-After 5 always;\n"
        f"        return 503 '{UNAVAILABLE_JSON}';\n"
        "    }\n"
        "}\n"
    )
    if site:
        return "# FrameLedger: rendered by `python -m deploy.nginx --site`\n" + body
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.splitlines())
    return (
        "# FrameLedger: rendered by `python -m deploy.nginx`\n"
        "worker_processes auto;\n"
        f"pid {runtime}/nginx.pid;\n"
        f"error_log {runtime}/error.log warn;\n"
        "events {\n    worker_connections 4096;\n}\n"
        "http {\n"
        "    include /etc/nginx/mime.types;\n"
        "    default_type application/octet-stream;\n"
        "    sendfile on;\n"
        "    tcp_nopush on;\n"
        "    server_tokens off;\n"
        "    keepalive_timeout 65s;\n"
        f"    client_body_temp_path {runtime}/client_body;\n"
        f"    proxy_temp_path {runtime}/proxy;\n"
        f"    fastcgi_temp_path {runtime}/fastcgi;\n"
        f"    uwsgi_temp_path {runtime}/uwsgi;\n"
        f"    scgi_temp_path {runtime}/scgi;\n"
        '    log_format frameledger_json escape=json \'{"time":"$time_iso8601","remote":"$remote_addr",'
        '"method":"$request_method","uri":"$request_uri","status":$status,"bytes":$body_bytes_sent,'
        '"seconds":$request_time,"upstream":"$upstream_addr","upstream_seconds":"$upstream_response_time"}\';\n'
        f"    access_log {runtime}/access.log frameledger_json;\n"
        f"{indented}"
        "}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", action="store_true", help="only the upstream and server blocks")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "the-nginx-renderer-signs-nothing-0123456789")
    import django

    django.setup()
    sys.stdout.write(render(site=args.site))
    return 0


if __name__ == "__main__":
    sys.exit(main())
