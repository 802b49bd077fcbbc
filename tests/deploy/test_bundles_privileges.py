"""The bundles service runs without ``privileged``: deploy/compose.yaml declares exactly the least
its sandbox needs in a container, as docs/deploy.md documents it ("The bundles worker in a
container"), and the worker checks for each of those capabilities itself. In the image's
container (podman, runc; skipped without them or without root) a small bundle runs through the
worker's own sandbox calls with that set, every stage in its pids, memory and CPU cgroups, and
with one privilege taken away the run is refused with the reason (``deploy/image_privileges.py``;
``python -m deploy.image privileges`` takes each one away in turn, ~45 s with the image built)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from annotator.base.grading import sandbox_host
from tests.deploy.test_image_run import needs_podman
from tests.http.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]
PRIVILEGES = ("user", "privileged", "cap_drop", "cap_add", "devices", "security_opt", "cgroup")
LOOPS = [f"/dev/loop{n}" for n in range(8)]


def documented() -> dict:
    """The block of docs/deploy.md that states the bundles service's privileges."""
    text = (ROOT / "docs/deploy.md").read_text()
    [block] = re.findall(r"```yaml\n# worker-bundles: the least the sandbox needs\n(.*?)```", text, re.DOTALL)
    return yaml.safe_load(block)


def services() -> dict:
    return yaml.safe_load((ROOT / "deploy/compose.yaml").read_text())["services"]


def test_the_bundles_service_declares_exactly_the_documented_privileges():
    docs, bundles = documented(), services()["worker-bundles"]
    assert {k: bundles[k] for k in PRIVILEGES if k in bundles} == docs
    assert "privileged" not in docs and docs["cap_drop"] == ["ALL"]
    # what the worker checks for itself (sandbox_host.CAPABILITIES) is what the container is given
    assert sorted(f"CAP_{cap}" for cap in docs["cap_add"]) == sorted(sandbox_host.CAPABILITIES)
    assert docs["devices"] == ["/dev/loop-control", *LOOPS]
    assert bundles["environment"]["FRAMELEDGER_SANDBOX_CGROUPS"] == "pids,memory,cpu"
    assert bundles["command"][0] == "deploy/bundles-worker"
    # the GPU worker: the same, and the GPU
    gpu = services()["worker-gpu"]
    assert {k: gpu[k] for k in PRIVILEGES if k in gpu and k != "devices"} == {
        k: v for k, v in docs.items() if k != "devices"
    }
    assert gpu["devices"] == ["nvidia.com/gpu=all", *docs["devices"]] and gpu["command"][0] == "deploy/bundles-worker"
    # no other service is given anything: the image's user, the engine's defaults
    others = {name: [k for k in PRIVILEGES if k in s] for name, s in services().items()}
    assert not any(v for name, v in others.items() if name not in ("worker-bundles", "worker-gpu")), others


@pytest.mark.slow
def test_in_the_image_a_bundle_runs_with_them_and_is_refused_without_one(tmp_path):
    needs_podman()
    from deploy.image import Drill
    from deploy.image_privileges import privileges

    # no database and no Redis: the check runs the sandbox alone, as the worker calls it
    drill = Drill(tmp_path / "image", free_port(), free_port(), "postgres://unused/none", "redis://unused/0")
    drill.make_base()
    drill.build()
    report = privileges(drill, only=["cap_add SYS_ADMIN", "devices /dev/loop0"])
    declared, *without = report["runs"]
    assert declared["status"] == "done", declared
    for stage, cgroups in declared["stage_cgroups"].items():
        assert set(cgroups) == {"pids", "memory", "cpu"}, (stage, cgroups)
    status = {run["variant"]: run["status"] for run in without}
    reasons = {run["variant"]: run.get("reason", "") for run in without}
    loops = "without the devices /dev/loop0../dev/loop7"
    assert status == {"without cap_add SYS_ADMIN": "refused", loops: "refused"}, without
    assert "lacks CAP_SYS_ADMIN (" in reasons["without cap_add SYS_ADMIN"], reasons
    assert "failed to setup loop device" in reasons[loops], reasons
    assert report["ok"], report


def test_the_drill_refuses_a_compose_field_it_does_not_apply(tmp_path):
    from deploy.image import ORDER, Drill, not_applied

    drill = Drill(tmp_path, 1, 2, "postgres://unused/none", "redis://unused/0")
    compose = drill.compose["services"]
    assert {name: not_applied(compose[name]) for name in ["migrate", *ORDER]} == {n: [] for n in ["migrate", *ORDER]}
    args = drill.run_args("worker-bundles", compose["worker-bundles"], {}, None)
    assert "--cap-drop=ALL" in args and "--cap-add=SYS_ADMIN" in args and "--device=/dev/loop-control" in args
    assert "--cgroupns=private" in args and "--privileged" not in args
    with pytest.raises(SystemExit, match="has tmpfs, which the drill does not apply"):
        drill.run_args("worker-bundles", {**compose["worker-bundles"], "tmpfs": ["/run"]}, {}, None)
    assert not_applied({**compose["worker-bundles"], "volumes": ["scratch:/x"]}) == ["volume scratch:/x"]
