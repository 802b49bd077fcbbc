"""The production image built and run here (``bin/run-image``; docs/deploy.md, "The image built
and run here"): the Dockerfile built by podman on a local bookworm base, every service of
deploy/compose.yaml started from it with host networking, and the protocol walked through its
nginx — tus upload, two ledgers frozen, union, a decision, publish, export, a scoring run on the
scoring worker, the reference bundle on the bundles worker inside its container — then
``verify_integrity`` clean.

It runs in ``bin/test``'s PostgreSQL + Redis pass where podman, runc and mmdebstrap are installed
and this is root, and is skipped with the reason otherwise. Its cost: the base once per machine
(~75 s), the build (~9 min at load 15-20 the first time; later only the layers from the code
copy on, as podman keeps the pip layer while the requirements are unchanged), ~3 min to start
the services and ~3 min of smoke."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.deploy.stack import stack_database_url, stack_redis_url
from tests.http.live_server import free_port

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


def needs_podman() -> None:
    missing = [tool for tool in ("podman", "runc", "mmdebstrap") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install podman runc mmdebstrap)")
    if os.geteuid() != 0:
        pytest.skip("the image drill runs podman as root")


def test_the_image_runs_every_service_and_the_whole_protocol(tmp_path):
    needs_podman()
    from deploy.image import Drill
    from deploy.image_smoke import smoke

    database = urlparse(stack_database_url())
    database_url = database._replace(path=database.path.removesuffix("_stack") + "_image").geturl()
    redis = urlparse(stack_redis_url())
    redis_url = redis._replace(path="/12").geturl()  # a database of its own: the compose queue names
    drill = Drill(tmp_path / "image", free_port(), free_port(), database_url, redis_url)
    try:
        drill.make_base()
        built = drill.build()
        assert built["bytes"] > 0
        up = drill.up()
        assert set(up["services"]) >= {"web", "nginx", "worker-ingest", "worker-scoring", "beat", "worker-bundles"}
        assert set(up["services"].values()) == {"running"}, up
        report = smoke(drill)
        steps = report["steps"]
        assert steps["tus upload and ingest"]["job"] == "done"
        assert any(k.startswith("annotator.ingest") for k in steps["tus upload and ingest"]["worker-ingest ran"])
        assert steps["union, decide, publish, export"]["version"] == "adjudicated v1"
        assert steps["score a submission"]["status"] == "done"
        assert "annotator.score_batch success" in steps["score a submission"]["worker-scoring ran"]
        assert steps["reference bundle"]["status"] == "done", steps["reference bundle"]
        assert "annotator.run_bundle success" in steps["reference bundle"]["worker-bundles ran"]
        users = steps["users"]
        assert users.pop("worker-bundles") == "root"
        assert set(users.values()) == {"frameledger"}, users
        assert any("all verified" in line for line in steps["verify_integrity"]), steps["verify_integrity"]
        assert report["ok"], report
    finally:
        drill.down()
        shutil.rmtree(Path(tmp_path / "image" / "media"), ignore_errors=True)
