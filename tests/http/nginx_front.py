"""nginx, configured by ``deploy/nginx.py`` as in production, in front of a test server.

``nginx_front(upstream, folder)`` renders the configuration the way ``deploy/stack.py`` does
(whole-file mode, the runtime folder under ``folder``, ``user root`` when run as root so its
workers can read the test's media), starts Debian's nginx on a free port and yields
``(port, access_log)``; the access log is nginx's JSON lines (``bytes``: what it sent).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

from tests.http import live_server

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
HAVE_NGINX = os.path.exists(NGINX)


@contextmanager
def nginx_front(upstream: int, folder: Path, **env: str):
    """``env``: settings for the renderer (``FRAMELEDGER_SEND_BUFFER_BYTES``...)."""
    from deploy import nginx

    port, runtime = live_server.free_port(), folder
    runtime.mkdir(parents=True)
    variables = {
        "FRAMELEDGER_NGINX_LISTEN": f"127.0.0.1:{port}",
        "FRAMELEDGER_NGINX_UPSTREAMS": f"127.0.0.1:{upstream}",
        "FRAMELEDGER_NGINX_RUNTIME_DIR": str(runtime),
        **env,
    }
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        rendered = nginx.render()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    conf = runtime / "nginx.conf"
    conf.write_text(("user root;\n" if os.geteuid() == 0 else "") + rendered)
    command = [NGINX, "-c", str(conf), "-e", str(runtime / "error.log"), "-g", "daemon off;"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        live_server.wait_listening(port)
        yield port, runtime / "access.log"
    finally:
        server.terminate()
        server.wait(20)


def access_entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
