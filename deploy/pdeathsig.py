"""Children that die with their parent (Linux ``PR_SET_PDEATHSIG``).

``bin/run-stack`` starts nginx, gunicorn and the Celery workers as its children, and
gunicorn forks the web workers. A parent killed without warning (``kill -9``) cannot stop
its children, and orphans go on holding their ports: the next start then fails with
"Address already in use" or, worse, reports itself up on the orphans' answers. The kernel
ends that: a process that has asked for a *parent-death signal* gets it the moment its
parent exits, however the parent ended. :func:`die_with_parent` asks for it (used as
``preexec_fn`` by ``deploy/stack.py`` and in gunicorn's ``post_fork`` hook); it does nothing
where ``prctl`` does not exist.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent exits. ``parent``:
    the pid the parent had (default: the current one); if it has already exited by the time
    the request is made, ``sig`` is raised at once. False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    expected = os.getppid() if parent is None else parent
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        return False
    if os.getppid() != expected:  # the parent died before the request: act as the kernel would have
        os.kill(os.getpid(), sig)
    return True
