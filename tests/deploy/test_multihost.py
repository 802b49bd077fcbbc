"""The multi-machine layout at a small size, with network namespaces as hosts
(``deploy/multihost.py``): a ``db`` host with its own PostgreSQL cluster and Redis, a ``web``
host (nginx in front of gunicorn), a ``worker`` host (Celery, the beat), a ``bundles`` host (the
bundles queue as root, the sandbox's jobs folder in its own ``var/``), each with its own
``/tmp`` and ``var/``, sharing only the media folder; a ``client`` host talks to nginx's
address. An upload through the web host is ingested on the worker host and its proxy served
back through nginx from the shared media; a save goes through the web host into the db host's
database; the reference bundle submitted through the web host runs in the sandbox on the bundles
host and is scored. Needs root and ``ip``; runs in bin/test's PostgreSQL pass with the other deploy tests
(it starts its own PostgreSQL and Redis, inside the db host)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

import pytest

from annotator.base.grading import sandbox_host
from annotator.base.media import synthetic
from deploy import multihost

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


def _require_layout() -> None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        # like the other deploy tests: once per bin/test run, in its PostgreSQL pass
        pytest.skip("runs in bin/test's PostgreSQL + Redis pass (DATABASE_URL on PostgreSQL)")
    missing = []
    if os.geteuid() != 0:
        missing.append("root")
    for tool in ("ip", "unshare", "runuser", "redis-server"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            missing.append(tool)
    if not list(multihost.Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        missing.append("PostgreSQL's initdb")
    if missing:
        reason = "the multi-host layout needs " + ", ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def test_hosts_mount_this_machines_cgroup_hierarchies():
    mounts = (
        "sysfs /sys sysfs rw 0 0\n"
        "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
        "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
        "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    )
    assert multihost.cgroup_mounts(mounts) == (
        "mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup && "
        "mkdir -p /sys/fs/cgroup/pids && mount -t cgroup -o rw,relatime,pids cgroup /sys/fs/cgroup/pids && "
        "mkdir -p /sys/fs/cgroup/memory && mount -t cgroup -o rw,relatime,memory cgroup /sys/fs/cgroup/memory && "
    )
    unified = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n"
    assert multihost.cgroup_mounts(unified) == (
        "mkdir -p /sys/fs/cgroup && mount -t cgroup2 -o rw,nosuid,nodev,noexec,relatime cgroup2 /sys/fs/cgroup && "
    )
    assert multihost.cgroup_mounts("proc /proc proc rw 0 0\n") == ""


def passwords_from(output: str) -> dict:
    return dict(re.findall(r"^\s+(\w+)\s+(\S+)$", output, re.M))


def test_upload_and_save_across_hosts(tmp_path):
    _require_layout()
    with multihost.Layout() as layout:
        db, web = layout.add_host("db", 2), layout.add_host("web", 10)
        worker, client = layout.add_host("worker", 20), layout.add_host("client", 100)
        bundles = layout.add_host("bundles", 30)
        database_url, redis_url = multihost.start_db(layout, db)
        env = multihost.app_env(layout, database_url, redis_url, web.address, FRAMELEDGER_INGEST_CHUNK_FRAMES="60")
        layout.run(web, [sys.executable, "manage.py", "migrate", "--noinput"], env)
        passwords = passwords_from(layout.run(web, [sys.executable, "manage.py", "seed_demo"], env))
        (layout.dir / "passwords.json").write_text(json.dumps(passwords))
        multihost.start_web(layout, web, env, workers=1)
        multihost.start_nginx(layout, web, env, [web])
        multihost.start_worker(layout, worker, env, "frameledger,ingest,scoring", "all")
        multihost.start_bundles_worker(layout, bundles, env)
        base = f"http://{web.address}"
        multihost.wait_http(layout, client, f"{base}/healthz")

        # upload -> web host; ingest (chunks) -> worker host; proxy <- nginx from the shared media
        video = synthetic.write_video(layout.media.parent / "clip.mp4", "h264-vfr-bframes", 150)
        client_cmd = [sys.executable, "-m", "deploy.multihost_client"]
        up = json.loads(
            layout.run(client, [*client_cmd, "upload", base, str(layout.dir / "passwords.json"), str(video)], env)
        )
        assert up["job"]["status"] == "done", (up, layout.log("worker", "worker-all")[-3000:])
        assert up["range_status"] == 206 and up["range_ftyp"], up
        log = layout.log("worker", "worker-all")
        assert "annotator.ingest_chunk[" in log and "annotator.ingest_join[" in log
        assert "ingest_video" not in layout.log("web", "web")  # not run in the web process
        # written by the worker host into the one shared folder
        assert list((layout.media / "videos/proxy").iterdir()) and list((layout.media / "videos/original").iterdir())
        assert not list((web.dir / "tmp").glob("ingest*")) and not (worker.dir / "var/static").exists()

        # the worker host's own task metrics: its folder exists and its worker serves them
        metrics = multihost.fetch(layout, client, f"http://{worker.address}:9100/metrics")
        assert 'frameledger_task_duration_seconds_count{outcome="success",task="annotator.ingest_chunk"}' in metrics
        assert (worker.dir / "tmp/frameledger-metrics").is_dir()

        # a save through the web host, stored in the db host's database
        saved = json.loads(layout.run(client, [*client_cmd, "save", base, str(layout.dir / "passwords.json")], env))
        assert saved["status"] == 201 and saved["stored"], saved

        # the reference bundle, run in the sandbox on the bundles host: its jobs folder in its own
        # var/, the version's features read from the shared media (written there by the web host)
        moment = multihost.moment_version(layout, web, env)
        ran = json.loads(
            layout.run(
                client, [*client_cmd, "bundle", base, str(layout.dir / "passwords.json"), str(moment["version"])], env
            )
        )
        assert ran["status"] == "done" and ran["outcome"] == "ok", (
            ran,
            layout.log("bundles", "worker-bundles")[-3000:],
        )
        assert ran["reward"] > 0 and [s["name"] for s in ran["stages"]] == ["build", "call-1"], ran
        assert ran["enforcement"]["sandbox"].startswith("bubblewrap"), ran
        # the host's stages get the cgroups this machine has (ip netns exec hides /sys/fs/cgroup)
        assert ran["enforcement"]["cgroups"] == sandbox_host.cgroup_support() or not sandbox_host.cgroup_support(), ran
        assert "annotator.run_bundle[" in layout.log("bundles", "worker-bundles")
        assert (bundles.dir / "var/sandbox").is_dir() and not list((bundles.dir / "var/sandbox").glob("bundle-*"))
        assert not (web.dir / "var/sandbox").exists() and not (worker.dir / "var/sandbox").exists()

        check = layout.run(worker, [sys.executable, "manage.py", "verify_integrity"], env)
        assert "all verified" in check, check  # exits non-zero (layout.run raises) on a problem
        names = [host.netns for host in layout.hosts.values()] + [layout.switch]
        folder = layout.dir
    assert not folder.exists()
    left = set(names) & set(multihost.namespaces())
    assert not left, f"namespaces left behind: {left}"
