"""Fault drill against ``bin/run-stack``, on loopback only and bounded in time.

The stack runs on its own PostgreSQL database (reached through a TCP proxy the drill can
cut, so the shared server itself is never touched) and its own Redis database index.
Annotators autosave events as the page does (``If-Match``; after an error, the same event
again, first checking whether the server already has it), a scoring run is in flight during
every fault, and one fault at a time is injected:

* ``web-worker``: a uvicorn worker SIGKILLed (gunicorn forks another);
* ``web-master``: the gunicorn master SIGKILLed (its workers die with it; the stack starts it
  again);
* ``scoring-worker``: the scoring Celery worker SIGKILLed mid-run (its batch's lease runs out,
  the sweep sends it again);
* ``database``: PostgreSQL cut for ``--database-seconds`` (the proxy refuses and drops
  connections), then back;
* ``broker-emptied``: the stack's Redis database flushed mid-run (as a Redis restarted
  without its data: the queued batches are gone; the sweep finds them).

Per fault it prints one JSON line: acknowledged saves, lost (acknowledged but missing) and
duplicated events, the 5xx window (first to last 5xx, seconds, and how many), the recovery
seconds (from the fault's end to the first acknowledged save), and the scoring run's end state
and time; at the end ``verify_integrity``. Usage (root not needed; nginx must be installed)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/fl_faults REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/faults.py --annotators 2 --submissions 400
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
import requests  # noqa: E402

from tests.deploy.stack import EGOCENTRIC_SOLUTION, run_stack, stack_database_url, wait_for  # noqa: E402
from tests.deploy.tcp_proxy import TcpProxy  # noqa: E402

FINAL = {"done", "failed"}
DRILL_ENV = {
    "FRAMELEDGER_SCORING_LEASE_SECONDS": "10",
    "FRAMELEDGER_SCORING_SWEEP_SECONDS": "2",
    "FRAMELEDGER_INGEST_LEASE_SECONDS": "15",
    "FRAMELEDGER_INGEST_SWEEP_SECONDS": "2",
    "FRAMELEDGER_DERIVED_STALE_SECONDS": "30",
}


class Saver(threading.Thread):
    """One annotator autosaving new events, one at a time, as the page does."""

    def __init__(self, stack, username: str, offset: int):
        super().__init__(daemon=True)
        self.session = stack.session(username)
        self.base = stack.base
        self.packet = self.session.get(f"{self.base}/api/packets/", timeout=30).json()[0]["id"]
        self.url = f"{self.base}/api/packets/{self.packet}/ledger/"
        self.next_frame = offset
        self.acked: list[int] = []
        self.log: list[tuple[float, int]] = []  # (time, status or 0 for no answer)
        self.stop = threading.Event()
        self.etag = None

    def _refresh(self) -> dict | None:
        try:
            answer = self.session.get(self.url, timeout=5)
        except requests.RequestException:
            return None
        if answer.status_code != 200:
            return None
        self.etag = answer.headers["ETag"]
        return answer.json()

    def run(self) -> None:
        while not self.stop.is_set():
            if self.etag is None and self._refresh() is None:
                time.sleep(0.5)
                continue
            start = self.next_frame
            event = {"data": {"verb": "take", "nouns": ["cup"], "start_frame": start, "end_frame": start + 1}}
            try:
                answer = self.session.post(f"{self.url}events/", json=event, headers={"If-Match": self.etag}, timeout=6)
                status = answer.status_code
            except requests.RequestException:
                answer, status = None, 0
            self.log.append((time.monotonic(), status))
            if status == 201:
                self.etag = answer.headers["ETag"]
                self.acked.append(start)
                self.next_frame += 2
            elif status == 412 or status == 0 or status >= 500:
                ledger = self._refresh()  # a save whose answer was lost: the server may have it
                if ledger is not None and any(e["data"]["start_frame"] == start for e in ledger["events"]):
                    self.acked.append(start)  # what the page does: found there, not sent again
                    self.next_frame += 2
                time.sleep(0.5 if status else 1.0)
            else:
                raise RuntimeError(f"unexpected answer {status}: {answer.text[:300]}")
            time.sleep(0.2)

    def check(self) -> tuple[int, int]:
        """(lost, duplicated) against the ledger as stored."""
        ledger = wait_for(self._refresh, 60, "the ledger")
        starts = [e["data"]["start_frame"] for e in ledger["events"]]
        lost = len(set(self.acked) - set(starts))
        duplicated = len(starts) - len(set(starts))
        return lost, duplicated


def start_run(maintainer, base: str, packet_id: int, submissions: int) -> str:
    solutions = sorted(EGOCENTRIC_SOLUTION.glob("*.solution.json"))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for n in range(submissions):
            zf.writestr(f"s{n:04d}.solution.json", solutions[n % len(solutions)].read_bytes())
    body = archive.getvalue()
    uploaded = _retrying(
        lambda: maintainer.post(f"{base}/api/packets/{packet_id}/submissions/", files={"archive": ("b.zip", body)})
    )
    assert uploaded.status_code == 201, uploaded.text
    run = _retrying(
        lambda: maintainer.post(f"{base}/api/packets/{packet_id}/scoring-runs/", json={"tier": "provisional"})
    )
    assert run.status_code == 202, run.text
    return f"{base}/api/scoring-runs/{run.json()['id']}/"


def _retrying(call, tries: int = 10):
    """A maintainer's request, sent again after a 503 (Retry-After) as a client would."""
    for _ in range(tries):
        answer = call()
        if answer.status_code != 503:
            return answer
        time.sleep(float(answer.headers.get("Retry-After", "2")))
    return answer


def run_state(maintainer, url: str) -> dict | None:
    try:
        answer = maintainer.get(url, timeout=5)
        return answer.json() if answer.status_code == 200 else None
    except requests.RequestException:
        return None


def drill(args) -> list[dict]:
    real = urlparse(args.database_url or stack_database_url())
    proxy = TcpProxy(real.hostname or "127.0.0.1", real.port or 5432)
    through_proxy = real._replace(netloc=f"{real.username}@127.0.0.1:{proxy.port}").geturl()
    redis_url = os.environ["REDIS_URL"]
    results = []
    tmp = Path(tempfile.mkdtemp(prefix="fl-faults-"))
    try:
        with run_stack(tmp, web_workers=2, database_url=through_proxy, extra_env=DRILL_ENV) as stack:
            base = stack.base
            maintainer = stack.session("maintainer")
            packet_id = maintainer.get(f"{base}/api/packets/").json()[0]["id"]
            version = maintainer.get(f"{base}/api/packets/{packet_id}/versions/").json()[0]
            maintainer.post(f"{base}/api/versions/{version['id']}/ready/", json={})
            users = ["annotator_a", "annotator_b"][: args.annotators]
            savers = [Saver(stack, user, 1000 + 5000 * i) for i, user in enumerate(users)]
            for saver in savers:
                saver.start()
            time.sleep(3)

            def kill(name: str, pick=None) -> None:
                pid = stack.state()["processes"][name]
                target = pick(pid) if pick else pid
                os.kill(target, signal.SIGKILL)

            def web_worker(pid: int) -> int:
                with open(f"/proc/{pid}/task/{pid}/children") as fh:
                    return int(fh.read().split()[0])

            faults = {
                "web-worker": (lambda: kill("web", web_worker), lambda: None),
                "web-master": (lambda: kill("web"), lambda: None),
                "scoring-worker": (lambda: kill("worker-scoring"), lambda: None),
                "database": (proxy.cut, lambda: (time.sleep(args.database_seconds), proxy.restore())),
                "broker-emptied": (lambda: redis.Redis.from_url(redis_url).flushdb(), lambda: None),
            }
            for name, (inject, restore) in faults.items():
                acked_before = sum(len(s.acked) for s in savers)
                run_url = start_run(maintainer, base, packet_id, args.submissions)
                wait_for(lambda u=run_url: (r := run_state(maintainer, u)) and r["counts"]["scored"] > 0, 120,
                         "the run's first scores", 0.05)  # fmt: skip
                injected = time.monotonic()
                inject()
                restore()
                ended = time.monotonic()
                recovered = wait_for(
                    lambda e=ended: any(t > e and st == 201 for s in savers for t, st in s.log[-50:])
                    and time.monotonic(),
                    args.timeout, f"a save after {name}", 0.1,
                )  # fmt: skip
                final = wait_for(
                    lambda u=run_url: (r := run_state(maintainer, u)) and r["job"]["status"] in FINAL and r,
                    args.timeout, f"the scoring run to end after {name}", 0.5,
                )  # fmt: skip
                run_seconds = time.monotonic() - ended
                errors = [t for s in savers for t, st in s.log if t >= injected and (st >= 500 or st == 0)]
                if errors:  # recovered: the first acknowledged save after the last failure
                    last = max(errors)
                    recovered = wait_for(
                        lambda e=last: min((t for s in savers for t, st in s.log if t > e and st == 201), default=None),
                        args.timeout, f"a save after the last failure of {name}", 0.1,
                    )  # fmt: skip
                results.append(
                    {
                        "fault": name,
                        "acknowledged_saves": sum(len(s.acked) for s in savers) - acked_before,
                        "5xx_or_no_answer": len(errors),
                        "5xx_window_s": round(max(errors) - min(errors), 1) if errors else 0.0,
                        "recovery_s": round(recovered - ended, 1),
                        "scoring_run": {
                            "status": final["job"]["status"],
                            "counts": final["counts"],
                            "ended_s_after_fault": round(run_seconds, 1),
                        },
                    }
                )
                print(json.dumps(results[-1]), flush=True)
                time.sleep(2)
            for saver in savers:
                saver.stop.set()
            for saver in savers:
                saver.join(timeout=20)
            checks = [saver.check() for saver in savers]
            verified = stack.manage("verify_integrity", "--no-record").strip().splitlines()[-1]
            summary = {
                "acknowledged_saves": sum(len(s.acked) for s in savers),
                "lost": sum(c[0] for c in checks),
                "duplicated": sum(c[1] for c in checks),
                "restarts": stack.state()["restarts"],
                "verify_integrity": verified,
            }
            print(json.dumps(summary), flush=True)
            results.append(summary)
    finally:
        proxy.close()
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=2, choices=[1, 2])
    parser.add_argument("--submissions", type=int, default=400)
    parser.add_argument("--database-seconds", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=240.0, help="the longest wait for any recovery")
    parser.add_argument("--database-url", help="the stack's database (default: DATABASE_URL's name + _stack)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    results = drill(args)
    print(json.dumps({"seconds": round(time.monotonic() - started, 1), "load": os.getloadavg()}), flush=True)
    return 0 if results and results[-1].get("lost") == 0 and results[-1].get("duplicated") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
