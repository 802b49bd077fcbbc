"""The rest of issue 34, through the real path (uploaded over the API, run by real Celery
workers in bwrap; on SQLite and, with ``DATABASE_URL``, on PostgreSQL): uploads the worker
would refuse are 400s naming the entry and a worker error shows no host path; inotify gives no
channel between jobs; a flood of output meets the kernel's bound, not the worker's reading; a
version imported from a published release says that its answers are public."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from annotator.reads.documents import version_events
from tests.factories import client_for
from tests.grading.sandbox_helpers import LEGAL_BUILD, bundle, needs_sandbox
from tests.grading.test_bundles import synthetic_version
from tests.grading.test_hostile_bundles import ARGS, bench, err, no_leftovers, out, two_workers  # noqa: F401

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MiB = 1024**2


CLASH = {"model": "weights", "model/config.json": "{}"}  # a file, and another file's folder
TRICKS = {
    "clash": (CLASH, "'model' is a file, and 'model/config.json' needs it as a folder"),
    "long-part": ({"w" * 300 + ".bin": "x"}, "a part of the path is 304 bytes; at most 255"),
    "long-path": ({"/".join(["d" * 200] * 6) + "/f": "x"}, "the path is 1207 bytes; at most 1024"),
}


def test_entries_the_worker_would_refuse_are_400s_at_upload_naming_the_entry(
    settings, maintainer, annotator_a, annotator_b, adjudicator
):
    version, _ = synthetic_version(maintainer, annotator_a, annotator_b, adjudicator, Path(settings.MEDIA_ROOT))
    client = client_for(maintainer)
    for label, (names, message) in TRICKS.items():
        upload = io.BytesIO(bundle(**names))
        upload.name = f"{label}.zip"
        response = client.post(f"/api/versions/{version.pk}/bundles/", {"bundle": upload, "label": label})
        assert response.status_code == 400, (label, response.content[:300])
        assert message in json.dumps(response.json()), (label, response.json())


def test_a_stored_bundle_the_worker_refuses_names_the_entry_and_no_host_path(bench, monkeypatch):  # noqa: F811
    """A run stored before the upload check knew the entry (the check turned off here, in the
    test's process only): the worker refuses it with the upload's message, before writing."""
    monkeypatch.setattr("annotator.actions.bundles.validate_bundle", lambda data: None)
    run_id = bench.submit(bundle(**CLASH), "stored-clash")
    body = bench.wait(run_id)[0]
    base = str(Path(django_settings.FRAMELEDGER_SANDBOX_DIR or "/tmp").resolve())
    assert body["status"] == "error", body
    assert "'model' is a file, and 'model/config.json' needs it as a folder" in body["outcome"], body["outcome"]
    assert f"bundle-{run_id}-" not in json.dumps(body) and f"{base}/" not in body["outcome"], body["outcome"]
    no_leftovers(run_id)


INOTIFY = (  # watch the shared runtime for another job's opens: a channel between jobs
    "python3 - <<'PY'\nimport ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "fd = libc.inotify_init1(0)\nprint('inotify_init1', 'ok' if fd >= 0 else errno.errorcode[ctypes.get_errno()])\n"
    "w = libc.inotify_add_watch(fd, b'/usr/bin', 0x20)\n"
    "print('inotify_add_watch', 'ok' if w >= 0 else errno.errorcode[ctypes.get_errno()])\nPY\n"
    "tail -f /job/app/build.sh >/dev/null 2>&1 & sleep 1; kill $!\n"
    "sed 's/^/MOUNT /' /proc/self/mountinfo\n"
)
FLOOD = (  # 200 MB on stdout, then what the stage's stdout is
    'stat -L -c "stdout is a %F" /dev/stdout >&2\n'
    "head -c 200000000 /dev/zero | tr '\\0' x || true\n"
    'echo "after the flood" >&2\n'
)


def test_inotify_and_a_flood_of_output_meet_the_kernel_beside_a_well_behaved_job(two_workers, bench):  # noqa: F811
    ids = {
        "inotify": bench.submit(bundle(build=INOTIFY + LEGAL_BUILD), "inotify"),
        "well-behaved": bench.submit(bundle(build="sleep 2\n" + LEGAL_BUILD), "well-behaved"),
        "flood": bench.submit(bundle(build=FLOOD + LEGAL_BUILD), "flood"),
    }
    bodies = dict(zip(ids, bench.wait(*ids.values()), strict=True))
    assert all(b["status"] == "done" for b in bodies.values()), {k: b["outcome"] for k, b in bodies.items()}
    found = dict(line.split(" ", 1) for line in out(bodies["inotify"]).splitlines() if line.startswith("inotify"))
    assert found == {"inotify_init1": "ENOSYS", "inotify_add_watch": "ENOSYS"}, out(bodies["inotify"])
    # the job's folders are named by their paths in the job's own filesystems, not the host's
    roots = {line.split()[5]: line.split()[4] for line in out(bodies["inotify"]).splitlines() if line[:6] == "MOUNT "}
    assert roots["/job/app"] == "/app" and roots["/job/task"] == "/task" and roots["/etc"] == "/etc"
    assert roots["/job/out"] == "/out" and roots["/job/logs/stdout"] == "/", roots
    base = str(Path(django_settings.FRAMELEDGER_SANDBOX_DIR or "/tmp").resolve())
    assert "bundle-" not in out(bodies["inotify"]) and f" {base}/" not in out(bodies["inotify"]), roots
    flood = bodies["flood"]
    build = flood["stages"][0]
    assert err(flood).startswith("stdout is a regular"), err(flood)  # not a pipe the worker reads
    assert "No space left on device" in err(flood) and "after the flood" in err(flood), err(flood)
    limits = flood["limits"]
    assert out(flood) == "x" * limits["log_bytes"] and flood["outcome"] == "ok", flood["outcome"]
    assert build["dropped_bytes"] == 64 * MiB - limits["log_bytes"]  # the stdout file stopped at its tmpfs's size
    assert "log filesystem" in build["enforced"]["logs"]
    well = bodies["well-behaved"]
    assert well["outcome"] == "ok" and well["stages"][1]["rows"] == 3, well
    for run_id in ids.values():
        no_leftovers(run_id)


def test_a_version_imported_from_a_release_says_its_answers_are_public(bench):  # noqa: F811
    answers = [
        {"query_id": q["query_id"], "start": q["intervals"][0][0], "end": q["intervals"][0][1]}
        for q in version_events(bench.version)
    ]
    embedded = ARGS + 'cat /job/app/answers.jsonl > "$out"\n'
    rows = "".join(json.dumps(a) + "\n" for a in answers)
    body = bench.run(bundle(run=embedded, **{"answers.jsonl": rows}), "embedded-answers")
    assert body["status"] == "done" and body["reward"] == 1.0, body
    board = bench.client.get(f"/api/versions/{bench.version.pk}/leaderboard/").json()
    assert board["version"]["answers"]["public"] is True
    assert "its answers are public, executable bundles can embed them" in board["version"]["answers"]["why"]
    assert [r for r in board["rows"] if r["label"] == "embedded-answers"][0]["reward"] == 1.0
    version = bench.client.get(f"/api/versions/{bench.version.pk}/").json()
    assert version["answers"]["public"] is True and version["answers"]["source"] == "synthetic"
    page = bench.client.get(f"/grading/versions/{bench.version.pk}/").content.decode()
    assert 'data-field="answers-public"' in page and "its answers are public" in page
