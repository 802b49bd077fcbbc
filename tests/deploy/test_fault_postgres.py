"""Fault drill: PostgreSQL goes away under the running stack (a TCP proxy in front of it is
cut), then comes back. Users get clean 503s (JSON on the API, a page elsewhere), readiness
says which dependency failed, liveness stays up, and the same web processes serve again
once the database is back: no restart, no half-applied write."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.deploy.stack import run_stack, stack_database_url, wait_for
from tests.deploy.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

EVENT = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": 10, "end_frame": 20}}


def test_postgres_cut_gives_clean_503s_and_the_app_recovers_without_a_restart(tmp_path):
    real = urlparse(stack_database_url())
    proxy = TcpProxy(real.hostname or "127.0.0.1", real.port or 5432)
    through_proxy = real._replace(netloc=f"{real.username}@127.0.0.1:{proxy.port}").geturl()
    try:
        with run_stack(tmp_path, web_workers=2, database_url=through_proxy) as stack:
            base = stack.base
            web_pid = stack.state()["processes"]["web"]
            annotator = stack.session("annotator_a")
            packet_id = annotator.get(f"{base}/api/packets/").json()[0]["id"]
            ledger = annotator.get(f"{base}/api/packets/{packet_id}/ledger/")
            etag = ledger.headers["ETag"]
            saved = annotator.post(f"{base}/api/packets/{packet_id}/ledger/events/", json=EVENT,
                                   headers={"If-Match": etag})  # fmt: skip
            assert saved.status_code == 201, saved.text
            etag = saved.headers["ETag"]

            proxy.cut()
            refused = annotator.post(f"{base}/api/packets/{packet_id}/ledger/events/", json=EVENT,
                                     headers={"If-Match": etag})  # fmt: skip
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "unavailable" and refused.headers["Retry-After"] == "5"
            page = annotator.get(f"{base}/")
            assert page.status_code == 503 and "unavailable for a moment" in page.text
            assert page.headers["Content-Type"].startswith("text/html")
            ready = annotator.get(f"{base}/readyz")
            assert ready.status_code == 503
            checks = ready.json()["checks"]
            assert checks["database"]["ok"] is False and checks["broker"]["ok"] and checks["channel_layer"]["ok"]
            assert annotator.get(f"{base}/healthz").status_code == 200

            proxy.restore()
            wait_for(lambda: annotator.get(f"{base}/readyz").status_code == 200, 30, "readiness after the restore")
            again = annotator.post(f"{base}/api/packets/{packet_id}/ledger/events/", json=EVENT,
                                   headers={"If-Match": etag})  # fmt: skip
            assert again.status_code == 201, again.text  # the refused save changed nothing: same ETag
            body = annotator.get(f"{base}/api/packets/{packet_id}/ledger/").json()
            assert len(body["events"]) == 2 and body["version"] == 2
            assert annotator.get(f"{base}/").status_code == 200
            assert stack.state()["processes"]["web"] == web_pid  # the same web processes
            metrics = annotator.get(f"{base}/metrics").text
            assert 'status="500"' not in metrics
            assert 'status="503"' in metrics
    finally:
        proxy.close()
