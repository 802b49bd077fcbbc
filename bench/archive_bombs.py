"""Web-process memory for archive-like bombs: the peak resident memory above idle while a
real server refuses each one.

Starts ``python -m deploy.serve`` (uvicorn, as ``bin/run-demo``) on a fresh SQLite database
under a temporary folder, with a maintainer (API token) and a ready video, then posts, one
at a time, with the server's peak (VmHWM) reset before each (``/proc/<pid>/clear_refs``):

- ``features.npz``: ~1 MB that inflates to 1 GiB of zeros (``POST /api/videos/<id>/search-index/``);
- ``text_features.npz``: valid features, text embeddings inflating to 1 GiB;
- ``features.npy`` whose header claims 10^16 floats;
- a 60 MB moment import of 400,000 rows (``POST /api/moment-imports/``);

then uploads valid features at the caps and builds the index in a child process, as the
worker does, printing its peak memory above what the process held before the build (budget
300 MB; Django, numpy and torch imported weigh about 400 MiB on their own).

    .venv/bin/python bench/archive_bombs.py

Prints the answer, the idle RSS and the peak above idle for each; the budget is 64 MiB.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MIB = 1024 * 1024
BUDGET = 64 * MIB


def npy_header(shape, dtype="<f4") -> bytes:
    from numpy.lib import format as npy_format

    buffer = io.BytesIO()
    npy_format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    value = buffer.getvalue()
    return value if value.startswith(b"\x93NUMPY") else npy_format.magic(1, 0) + value


def npz(members: dict[str, tuple[tuple[int, ...], str, bytes | None]]) -> bytes:
    """Members of zeros (``None``) or of the given bytes, deflated as they stream."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for key, (shape, dtype, data) in members.items():
            with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                member.write(npy_header(shape, dtype))
                if data is not None:
                    member.write(data)
                    continue
                left = 4
                for n in shape:
                    left *= n
                zeros = bytes(MIB)
                while left > 0:
                    member.write(zeros[: min(MIB, left)])
                    left -= MIB
    return out.getvalue()


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, data) in files.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
        parts.append(head.encode() + b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def memory(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in {"VmRSS", "VmHWM"}:
            fields[name] = int(value.split()[0]) * 1024
    return fields


def prepare(env: dict[str, str]) -> tuple[str, int]:
    """Migrate the database and make a maintainer's token and a ready video (in a child
    process, so this one never imports Django)."""
    script = (
        "import django; django.setup()\n"
        "from django.core.management import call_command; call_command('migrate', verbosity=0)\n"
        "from tests.factories import make_user, make_ready_video\n"
        "from annotator.actions.tokens import do_issue_token\n"
        "user = make_user('bench_maintainer', maintainer=True)\n"
        "video = make_ready_video('bench', frame_count=30 * 600, fps=(30, 1))\n"
        "for name in ('a', 'b', 'c'): make_user('bench_' + name)\n"
        "print(do_issue_token(user)[1], video.pk)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    token, video = out.stdout.split()[-2:]
    return token, int(video)


def bombs(video: int) -> list[tuple[str, str, dict, dict]]:
    import numpy as np

    features = io.BytesIO()
    np.save(features, np.random.default_rng(1).normal(size=(300, 512)).astype(np.float32))
    rows = b"".join(
        b'{"qid": %d, "query": "a person opens the door of the kitchen and walks in slowly", "vid": "v%d", '
        b'"duration": 30, "relevant_windows": [[0, 2], [4, 6]]}\n' % (i, i % 500)
        for i in range(400_000)
    )
    search = f"/api/videos/{video}/search-index/"
    return [
        ("features.npz inflating to 1 GiB", search, {"clip_length": "2"},
         {"features": ("f.npz", npz({"features": ((262144, 1024), "<f4", None)}))}),
        ("text_features.npz inflating to 1 GiB", search, {"clip_length": "2"},
         {"features": ("f.npy", features.getvalue()),
          "text_features": ("t.npz", npz({"texts": ((1,), "<U4", "door".encode("utf-32-le")),
                                          "embeddings": ((524288, 512), "<f4", None)}))}),
        (".npy header claiming 10^16 floats", search, {"clip_length": "2"},
         {"features": ("f.npy", npy_header((10**8, 10**8)) + bytes(4096))}),
        ("moment import, 400,000 rows", "/api/moment-imports/",
         {"source": "qvhighlights", "annotator_a": "bench_a", "annotator_b": "bench_b", "adjudicator": "bench_c"},
         {"file": (f"rows-{len(rows) // MIB}MiB.jsonl", rows)}),
    ]  # fmt: skip


def main() -> None:
    from tests.http.live_server import server

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "deploy.test_settings",
            "FRAMELEDGER_VAR_DIR": folder,
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
        }
        env.pop("REDIS_URL", None)
        token, video = prepare(env)
        os.environ.update(env)
        failures = 0
        with server({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "FRAMELEDGER_VAR_DIR", "DATABASE_URL")}) as (
            port,
            process,
        ):
            time.sleep(1.0)
            for label, path, fields, files in bombs(video):
                body, content_type = multipart(fields, files)
                Path(f"/proc/{process.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
                idle = memory(process.pid)["VmRSS"]
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}{path}", data=body, method="POST",
                    headers={"Authorization": f"Token {token}", "Content-Type": content_type},
                )  # fmt: skip
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        status, text = response.status, response.read()[:160]
                except urllib.error.HTTPError as error:
                    status, text = error.code, error.read()[:160]
                time.sleep(0.5)
                peak = memory(process.pid)["VmHWM"] - idle
                failures += peak > BUDGET or status >= 500
                print(
                    f"{label}: upload {len(body) / MIB:.1f} MiB, answer {status} {text.decode(errors='replace')!r}; "
                    f"web RSS idle {idle / MIB:.0f} MiB, peak above idle {peak / MIB:.1f} MiB "
                    f"({'within' if peak <= BUDGET else 'OVER'} {BUDGET // MIB} MiB)",
                    flush=True,
                )
            failures += worker_peak(env, port, process.pid, token, video)
        sys.exit(1 if failures else 0)


def worker_peak(env: dict[str, str], port: int, pid: int, token: str, video: int) -> int:
    """Upload features at the caps (32,768 x 512 float32, 64 MiB), then build the index in
    a child process as the worker would, and print that process's peak memory."""
    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, np.random.default_rng(2).normal(size=(32768, 512)).astype(np.float32))
    body, content_type = multipart({"clip_length": "2"}, {"features": ("f.npy", buffer.getvalue())})
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/videos/{video}/search-index/", data=body, method="POST",
        headers={"Authorization": f"Token {token}", "Content-Type": content_type},
    )  # fmt: skip
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    idle = memory(pid)["VmRSS"]
    with urllib.request.urlopen(request, timeout=600) as response:
        status = response.status
    web = memory(pid)["VmHWM"] - idle
    print(f"valid features at the caps: upload {len(body) / MIB:.0f} MiB, web peak above idle {web / MIB:.1f} MiB")
    script = (
        "import resource, django; django.setup()\n"
        "from annotator.actions.search import do_build_search_index\n"
        "import retrieval.features, numpy\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"row = do_build_search_index({video})\n"
        "print(row.status, base * 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    state, base, peak = out.stdout.split()[-3:]
    over = int(peak) - int(base) > 300 * 1000 * 1000  # the build's own cost (the imports weigh ~400 MiB)
    print(
        f"worker build of features at the caps (upload answered {status}): index {state}; worker peak "
        f"{int(peak) / MIB:.0f} MiB, {(int(peak) - int(base)) / MIB:.0f} MiB above its {int(base) / MIB:.0f} MiB "
        f"before the build ({'OVER' if over else 'within'} 300 MB)",
        flush=True,
    )
    return int(over)


if __name__ == "__main__":
    main()
