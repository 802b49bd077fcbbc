"""The bundles service's privileges, each taken away in turn (``python -m deploy.image
privileges``; docs/deploy.md, "The bundles worker in a container").

The ``worker-bundles`` service of deploy/compose.yaml declares the least its sandbox needs in a
container that is not privileged: ``cap_drop: [ALL]`` and a list of ``cap_add``, the loop devices,
and ``deploy/bundles-worker`` in front of its command (which makes the container's own cgroup
mounts writable). This runs ``deploy/sandbox_check.py`` (a small bundle through the worker's own
sandbox calls: the probe, a leased uid, the job's loop-mounted filesystem, a build and a call,
each stage in its cgroups) in that service's container from the image, first as declared, then
with one privilege taken away at a time, and reports how each run ends: ``done`` as declared, and
``refused`` with the reason for every one taken away (never a bundle run without its sandbox).
"""

from __future__ import annotations

import json
import re
import sys

WRAPPER = "deploy/bundles-worker"
SERVICE = "worker-bundles"


def variants(service: dict) -> list[tuple[str, dict]]:
    """The service as declared, then once without each of its privileges."""
    found = [("as declared", service)]
    for cap in service.get("cap_add", []):
        found.append((f"without cap_add {cap}", {**service, "cap_add": [c for c in service["cap_add"] if c != cap]}))
    devices = list(service.get("devices", []))
    if "/dev/loop-control" in devices:
        kept = [d for d in devices if d != "/dev/loop-control"]
        found.append(("without the device /dev/loop-control", {**service, "devices": kept}))
    loops = [d for d in devices if re.fullmatch(r"/dev/loop\d+", d)]
    if loops:
        kept = [d for d in devices if d not in loops]
        found.append((f"without the devices {loops[0]}..{loops[-1]}", {**service, "devices": kept}))
    command = [str(part) for part in service["command"]]
    if command[0] == WRAPPER:
        label = "without deploy/bundles-worker (the cgroup mounts stay read-only)"
        found.append((label, {**service, "command": command[1:]}))
    return found


def check_command(service: dict) -> list[str]:
    """The check in place of the service's Celery worker, behind the same wrapper."""
    prefix = [WRAPPER] if str(service["command"][0]) == WRAPPER else []
    return [*prefix, ".venv/bin/python", "-m", "deploy.sandbox_check"]


def run_check(drill, label: str, service: dict, timeout: float = 300) -> dict:
    from deploy.image import IMAGE

    args = drill.run_args("bundles-check", service, {}, None)
    done = drill.podman(*args, "--rm", IMAGE, *check_command(service), capture=True, check=False, timeout=timeout)
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        report = {"status": "no report", "output": (done.stdout + done.stderr)[-1500:]}
    return {"variant": label, "exit": done.returncode, **report}


def privileges(drill, only: list[str] | None = None) -> dict:
    """Every variant (or those whose label contains one of ``only``), each in a fresh container."""
    drill.prepare_state()
    service = drill.compose["services"][SERVICE]
    runs = []
    for label, variant in variants(service):
        if only and label != "as declared" and not any(word in label for word in only):
            continue
        ran = run_check(drill, label, variant)
        runs.append(ran)
        print(f"[privileges] {label}: {ran['status']} {ran.get('reason', '')}", file=sys.stderr, flush=True)
    declared = runs[0]
    ok = (
        declared["status"] == "done"
        and all(set(cgroups) >= {"pids", "memory", "cpu"} for cgroups in declared.get("stage_cgroups", {}).values())
        and all(run["status"] == "refused" and run.get("reason") for run in runs[1:])
    )
    return {"ok": ok, "service": SERVICE, "runs": runs}
