"""A worker in a container finds its own cgroup where the hierarchy is mounted: inside a podman or
Docker container ``/proc/self/cgroup`` names the path from the host's root, while
``/sys/fs/cgroup/<controller>`` is mounted from the container's own cgroup (mountinfo's root
field). Without taking that prefix off, every stage's cgroup was looked for where it does not
exist and the bundles worker in the image ran stages with no memory, pids or CPU limit."""

from __future__ import annotations

from annotator.base.grading.sandbox_host import _own_cgroup

CONTAINER = "/libpod_parent/libpod-56cc3fbe"
CGROUPS_V1 = f"12:pids:{CONTAINER}\n4:memory:{CONTAINER}\n3:cpu,cpuacct:{CONTAINER}\n1:name=systemd:{CONTAINER}\n"
MOUNTINFO_V1 = (
    "600 599 0:60 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw\n"
    f"601 600 0:30 {CONTAINER} /sys/fs/cgroup/memory rw,nosuid shared:9 - cgroup cgroup rw,memory\n"
    f"602 600 0:31 {CONTAINER} /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n"
    f"603 600 0:32 {CONTAINER} /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
)
HOST_MOUNTINFO_V1 = (
    "30 25 0:30 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
    "31 25 0:31 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n"
)


def test_inside_a_container_the_path_is_relative_to_the_mounted_hierarchy():
    for controller in ("memory", "pids", "cpu"):
        assert _own_cgroup(controller, CGROUPS_V1, MOUNTINFO_V1) == "/"
    nested = CGROUPS_V1.replace(f"memory:{CONTAINER}", f"memory:{CONTAINER}/worker")
    assert _own_cgroup("memory", nested, MOUNTINFO_V1) == "/worker"


def test_on_a_host_the_path_is_kept_whole():
    cgroups = "4:memory:/system.slice/frameledger.service\n12:pids:/system.slice/frameledger.service\n"
    assert _own_cgroup("memory", cgroups, HOST_MOUNTINFO_V1) == "/system.slice/frameledger.service"
    assert _own_cgroup("pids", cgroups, HOST_MOUNTINFO_V1) == "/system.slice/frameledger.service"


def test_cgroup_v2_takes_the_unified_mounts_root_off_too():
    cgroups = "0::/machine.slice/libpod-1/worker\n"
    mountinfo = "700 699 0:40 /machine.slice/libpod-1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    assert _own_cgroup("", cgroups, mountinfo) == "/worker"
    assert _own_cgroup("", "0::/user.slice\n", "40 1 0:40 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n") == "/user.slice"
