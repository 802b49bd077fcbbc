"""Grading benchmark: a batch of generated submissions scored through the real queue.

Run: ``.venv/bin/python bench/grading.py [--count 1000] [--concurrency 1]``.

Against the published GTEA ground truth (imported as a provisional version, 25,692
frames at 24 fps), it generates ``--count`` action-ledger submissions (seeded
perturbations of the key: dropped actions, shifted boundaries, swapped nouns, spurious
actions, and a few malformed files), uploads them as one batch and times:

1. the raw scorer: ``scoring.score_submission`` on every file in a plain loop (best of 3);
2. the queue: a run dispatched as a Celery group to a real worker process (started
   here, ``--pool=solo`` or ``prefork`` with ``--concurrency``), from the request to the
   Job row saying done;
3. in-process: the same run body without the queue (what ``score_submissions`` does).

It prints wall times and the per-submission overhead beyond the raw scorer.

``--batch-rss 5000``: instead, the web process's memory while it takes one batch of that
many generated files (about 9.4 KB each: 5,000 make 47 MB) as one zip (stored) in one
multipart upload. A real server (``python -m deploy.serve``, uvicorn) is started on the database
named by ``DATABASE_URL`` (migrated here), its peak (VmHWM) reset once idle, and the peak
above idle printed (budget 300 MiB). ``--tree PATH`` serves another checkout (an older
commit exported there) with the same request, to compare. It uses a
fresh SQLite database and broker in a temporary folder unless ``DATABASE_URL`` /
``REDIS_URL`` say otherwise (then those are used as they are).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._django import REPO_ROOT, setup_django  # noqa: E402

LABELS = REPO_ROOT / "data/agentic-vbench/egocentric-activity-understanding/steps/solve/tests/Ahmad_American.txt"


def generate(truth: list[dict], count: int, seed: int = 7) -> list[bytes]:
    """Seeded submissions around the key (reward spread from 0 to 1)."""
    rng = random.Random(seed)
    nouns = sorted({n for a in truth for n in a["nouns"]})
    files = []
    for k in range(count):
        if k % 100 == 99:
            files.append(rng.choice([b"{not json", b"[]", b'{"actions": 3}']))
            continue
        keep = rng.uniform(0.2, 1.0)
        shift = rng.choice([0, 4, 10, 16, 30])
        actions = []
        for action in truth:
            if rng.random() > keep:
                continue
            delta = rng.randint(-shift, shift)
            item = {**action, "start_frame": max(0, action["start_frame"] + delta)}
            item["end_frame"] = max(item["start_frame"] + 1, action["end_frame"] + rng.randint(-shift, shift))
            if rng.random() < 0.1:
                item["nouns"] = [rng.choice(nouns)]
            actions.append(item)
        for _ in range(rng.randint(0, 40)):
            start = rng.randrange(0, 25000)
            actions.append(
                {"verb": "take", "nouns": [rng.choice(nouns)], "start_frame": start, "end_frame": start + 50}
            )
        actions.sort(key=lambda a: a["start_frame"])
        files.append(json.dumps({"actions": actions}).encode())
    return files


def start_worker(queue: str, concurrency: int, log_path: Path) -> subprocess.Popen:
    pool = ["--pool=solo"] if concurrency == 1 else ["--pool=prefork", f"--concurrency={concurrency}"]
    log = open(log_path, "w")  # noqa: SIM115 (closed with the process)
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "deploy", "worker", *pool, "-Q", queue, "--loglevel=INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        env={**os.environ, "CELERY_QUEUE": queue},
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO_ROOT,
    )  # fmt: skip
    process.log = log
    return process


def wait_ready(process: subprocess.Popen, log_path: Path, timeout: float = 60) -> None:
    """Until the worker logs that it is ready (so its start-up is not timed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the worker exited: {log_path.read_text()[-2000:]}")
        if " ready." in log_path.read_text():
            return
        time.sleep(0.2)
    raise SystemExit("the worker was not ready within a minute")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=1, help="worker processes (1: --pool=solo)")
    parser.add_argument("--chunk", type=int, default=None, help="submissions per Celery task (default: up to 25)")
    parser.add_argument("--batch-rss", type=int, default=0, help="files in one upload (see the module docstring)")
    parser.add_argument("--tree", type=Path, default=REPO_ROOT, help="the checkout the server runs (--batch-rss)")
    args = parser.parse_args()
    if args.batch_rss:
        batch_rss(args.batch_rss, args.tree)
        return

    workdir = Path(tempfile.mkdtemp(prefix="frameledger-bench-grading-"))
    if not os.environ.get("DATABASE_URL"):
        os.environ["FRAMELEDGER_VAR_DIR"] = str(workdir)
    queue = f"bench-grading-{os.getpid()}"
    os.environ["CELERY_QUEUE"] = queue
    setup_django()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from annotator.actions import grading
    from annotator.actions.packets import do_create_packet
    from annotator.actions.versions import do_import_provisional_version
    from annotator.base.grading.uploads import byte_cap, make_file
    from annotator.base.gtea import parse_gtea_labels
    from annotator.models import Job, SubmissionScore, TaskKind, Video
    from annotator.reads.grading_inputs import scoring_inputs
    from scoring import score_submission

    call_command("migrate", verbosity=0)
    people = [User.objects.create_user(n) for n in ("bench-maintainer", "bench-a", "bench-b", "bench-adjudicator")]
    video = Video.objects.create(title="GTEA (bench)", status="ready", frame_rate_num=24, frame_rate_den=1,
                                 frame_count=25692, duration=25692 / 24)  # fmt: skip
    packet = do_create_packet(
        actor=people[0], title="bench", video=video, task_kind=TaskKind.objects.get(slug="action-ledger"),
        annotator_a=people[1], annotator_b=people[2], adjudicator=people[3],
    )  # fmt: skip
    truth = parse_gtea_labels(LABELS.read_text())
    version = do_import_provisional_version(packet, truth, actor=people[0], source="bench", source_sha256="0" * 64)
    inputs = scoring_inputs(version, "egocentric-f1-v2")
    files = generate(truth, args.count)
    print(f"{len(files)} submissions, {sum(map(len, files)) / 1e6:.1f} MB, ground truth {len(truth)} actions")

    loops = []
    for _ in range(3):  # the best of three: the machine may be shared
        started = time.perf_counter()
        rewards = [score_submission("egocentric-f1-v2", inputs.ground_truth, f, **inputs.params).reward for f in files]
        loops.append(time.perf_counter() - started)
    raw = min(loops)
    print(f"raw scorer, plain loop, best of 3: {raw:7.2f} s  ({raw / len(files) * 1000:.2f} ms/submission)"
          f"  rewards {min(rewards):.3f}..{max(rewards):.3f}")  # fmt: skip

    cap = byte_cap("egocentric-f1-v2")
    started = time.perf_counter()
    batch = [make_file(f"agent-{k:04d}", f"agent-{k:04d}.json", [data], cap) for k, data in enumerate(files)]
    submissions = grading.do_upload_submissions(packet, batch, actor=people[0])
    print(f"upload (one batch, stored):  {time.perf_counter() - started:7.2f} s")

    worker = start_worker(queue, args.concurrency, workdir / "worker.log")
    try:
        wait_ready(worker, workdir / "worker.log")
        started = time.perf_counter()
        run = grading.do_start_scoring_run(version, submissions, actor=people[0], chunk_size=args.chunk)
        tasks = len(grading.chunked(list(range(len(submissions))), args.chunk))
        last = -1.0
        while True:
            job = Job.objects.get(pk=run.job_id)
            if job.progress >= last + 0.25 or job.status in {Job.Status.DONE, Job.Status.FAILED}:
                last = job.progress
                print(f"  {time.perf_counter() - started:7.2f} s  {job.status:8s} {job.progress:5.0%}  {job.message}")
            if job.status in {Job.Status.DONE, Job.Status.FAILED}:
                break
            if worker.poll() is not None:
                raise SystemExit(f"the worker exited: {Path(worker.log.name).read_text()[-2000:]}")
            time.sleep(0.2)
        queued = time.perf_counter() - started
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
        worker.log.close()
    scores = SubmissionScore.objects.filter(run=run)
    inside = sum(scores.values_list("scorer_seconds", flat=True))
    same = sorted(scores.values_list("reward", flat=True)) == sorted(rewards)
    worker_kind = "solo" if args.concurrency == 1 else f"prefork x{args.concurrency}"
    per = queued / len(files) * 1000
    print(f"queue ({tasks} tasks, {worker_kind} worker): {queued:7.2f} s wall, {per:.2f} ms/submission")
    print(f"  scorer time inside the worker: {inside:.2f} s; rewards equal to the plain loop: {same}")
    versus_loop = (queued - raw) / len(files) * 1000
    versus_worker = (queued - inside) / len(files) * 1000
    print(f"  overhead beyond the raw scorer: {versus_loop:.2f} ms/submission (vs the plain loop), "
          f"{versus_worker:.2f} ms/submission (vs the worker's own scorer time)")  # fmt: skip

    started = time.perf_counter()
    again = grading.do_start_scoring_run(version, submissions, actor=people[0], dispatch=False)
    for chunk in grading.run_chunks(again, args.chunk):
        grading.do_score_batch(again.pk, chunk)
    local = time.perf_counter() - started
    print(f"in-process (no queue):       {local:7.2f} s wall, overhead beyond the raw scorer "
          f"{(local - raw) / len(files) * 1000:.2f} ms/submission")  # fmt: skip
    identical = all(
        bytes(a.reward_json) == bytes(b.reward_json)
        for a, b in zip(run.results.order_by("submission_id"), again.results.order_by("submission_id"), strict=True)
    )
    print(f"  queue and in-process results byte-identical: {identical}")
    print(f"(database and broker in {workdir})" if not os.environ.get("DATABASE_URL") else "")


def batch_rss(count: int, tree: Path) -> None:
    """Peak web RSS above idle while one batch of ``count`` files is uploaded."""
    import urllib.request

    from bench.archive_bombs import MIB, memory
    from tests.http.live_server import free_port, wait_for_port

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "deploy.test_settings")}
    if not env.get("DATABASE_URL"):
        raise SystemExit("--batch-rss needs DATABASE_URL (a database of your own)")
    env.setdefault("FRAMELEDGER_VAR_DIR", tempfile.mkdtemp(prefix="frameledger-bench-batch-"))
    script = (
        "import django; django.setup()\n"
        "from django.core.management import call_command; call_command('migrate', verbosity=0)\n"
        "import os; from tests.factories import make_user, make_packet\n"
        "from annotator.actions.tokens import do_issue_token\n"
        "tag = os.urandom(3).hex()\n"
        "people = [make_user(f'bench-{n}-{tag}', maintainer=n == 'm') for n in ('m', 'a', 'b', 'c')]\n"
        "packet = make_packet(*people)\n"
        "print(do_issue_token(people[0])[1], packet.pk)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    token, packet = out.stdout.split()[-2:]
    truth = parse_gtea_labels_plain(LABELS.read_text())
    files = generate(truth, count)
    body, content_type = multipart_many(files)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {count} files, {len(body) / MIB:.1f} MiB as multipart")
    port = free_port()
    command = [sys.executable, "-m", "deploy.serve", "-b", "127.0.0.1", "-p", str(port), "deploy.asgi:application"]
    server = subprocess.Popen(command, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, server)
        time.sleep(2.0)
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
        idle = memory(server.pid)["VmRSS"]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/packets/{packet}/submissions/", data=body, method="POST",
            headers={"Authorization": f"Token {token}", "Content-Type": content_type},
        )  # fmt: skip
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=1200) as response:
                status, answer = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, answer = error.code, error.read()
        elapsed = time.monotonic() - started
        time.sleep(0.5)
        peak = memory(server.pid)["VmHWM"] - idle
    finally:
        server.terminate()
        server.wait(timeout=30)
    stored = len(json.loads(answer)["submissions"]) if status == 201 else answer[:300]
    print(f"answer {status} ({stored} stored) in {elapsed:.1f} s; web RSS idle {idle / MIB:.0f} MiB, "
          f"peak above idle {peak / MIB:.0f} MiB ({'within' if peak <= 300 * MIB else 'OVER'} 300 MiB); "
          f"load average after: {os.getloadavg()[0]:.2f}")  # fmt: skip


def parse_gtea_labels_plain(text: str) -> list[dict]:
    setup_django()
    from annotator.base.gtea import parse_gtea_labels

    return parse_gtea_labels(text)


def multipart_many(files: list[bytes]) -> tuple[bytes, str]:
    """The files as one zip (stored, not deflated: the upload is as large as its content) in
    the ``archive`` field: a form takes at most 100 files (``DATA_UPLOAD_MAX_NUMBER_FILES``)."""
    import io
    import zipfile

    from bench.archive_bombs import multipart

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for k, data in enumerate(files):
            archive.writestr(f"batch/agent-{k:05d}/solution.json", data)
    return multipart({}, {"archive": ("batch.zip", buffer.getvalue())})


if __name__ == "__main__":
    main()
