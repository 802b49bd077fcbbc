"""REST endpoints of executable bundles (maintainers of the packet only; anyone else
gets the 404 of a missing object).

``POST /api/versions/<id>/bundles/`` (multipart ``bundle`` zip + ``label``, optional
``device`` cpu|cuda; or ``bundle_upload``, the key of the requester's finished resumable
upload of kind ``bundle`` (``/api/uploads/``), in place of the file, taken once; or
``reference=true`` for the repository's reference system) →
202 with the run; ``GET`` lists the version's runs; ``GET /api/bundle-runs/<id>/`` is
one run with its limits, what was enforced, each stage's timing, exit and logs.
"""

from __future__ import annotations

from django.urls import path
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

import annotator.base.urlconverters  # noqa: F401  (registers the <id:…> path converter)
from annotator.actions import bundles
from annotator.actions.uploads import do_consume_upload
from annotator.base.bundles import REFERENCE_LABEL, reference_bundle
from annotator.base.errors import InvalidInput
from annotator.models import BundleRun
from annotator.reads import access
from annotator.reads.sealed_rows import verify_bundle_runs, verify_scores


def access_bundle_run(user, run_id) -> BundleRun:
    rows = BundleRun.objects.select_related("version__packet", "score__submission").defer(
        "bundle", "score__submission__content"
    )
    run = access._graded_row(user, rows, run_id, lambda r: r.version.packet, "bundle run")
    verified([run])  # its version decided access: read through its seals
    return run


def verified(runs: list[BundleRun]) -> list[BundleRun]:
    """The runs, each through its seals, and the scores whose reward they show through theirs."""
    verify_bundle_runs(runs)
    verify_scores(r.score for r in runs if r.score_id)
    return runs


def bundle_run_view(run: BundleRun, *, logs: bool = True) -> dict:
    hidden = ("stdout", "stderr", "stdout_base64", "stderr_base64")
    stages = run.stages if logs else [{k: v for k, v in s.items() if k not in hidden} for s in run.stages]
    return {
        "id": run.pk,
        "version": run.version_id,
        "label": run.label,
        "reference": run.reference,
        "bundle_sha256": run.bundle_sha256,
        "device": run.device,
        "queue": run.queue,
        "status": run.status,
        "outcome": run.outcome,
        "limits": run.limits,
        "enforcement": run.enforcement,
        "stages": stages,
        "submission": run.submission_id,
        "score": run.score_id,
        "reward": run.score.reward if run.score_id else None,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }


def _truthy(value) -> bool:
    return str(value).lower() in {"1", "true", "yes", "on"}


class VersionBundlesView(APIView):
    def get(self, request, version_id):
        version = access.access_grading_version(request.user, version_id)
        runs = (
            BundleRun.objects.filter(version=version)
            .select_related("score__submission")
            .defer("bundle", "score__submission__content")
        )
        return Response([bundle_run_view(r, logs=False) for r in verified(list(runs))])

    def post(self, request, version_id):
        version = access.access_grading_version(request.user, version_id)
        device = request.data.get("device") or "cpu"
        if _truthy(request.data.get("reference")):
            data, label, reference = reference_bundle(), request.data.get("label") or REFERENCE_LABEL, True
        elif request.data.get("bundle_upload"):
            upload = access.access_upload(request.user, request.data["bundle_upload"])
            with do_consume_upload(upload=upload, kind="bundle", field="bundle_upload") as (row, path):
                run = bundles.do_submit_bundle(
                    version, path.read_bytes(), actor=request.user, label=request.data.get("label") or row.filename,
                    device=device,
                )  # fmt: skip
            return Response(bundle_run_view(run), status=status.HTTP_202_ACCEPTED)
        else:
            upload = request.FILES.get("bundle")
            if upload is None:
                raise InvalidInput(
                    "upload the bundle as a zip in the field 'bundle' (or name a finished upload in "
                    "'bundle_upload', or set reference)",
                    field="bundle",
                )
            data, label, reference = upload.read(), request.data.get("label") or upload.name, False
        run = bundles.do_submit_bundle(
            version, data, actor=request.user, label=label, device=device, reference=reference
        )
        return Response(bundle_run_view(run), status=status.HTTP_202_ACCEPTED)


class BundleRunView(APIView):
    def get(self, request, bundle_run_id):
        return Response(bundle_run_view(access_bundle_run(request.user, bundle_run_id)))


urlpatterns = [
    path("versions/<id:version_id>/bundles/", VersionBundlesView.as_view(), name="api-version-bundles"),
    path("bundle-runs/<id:bundle_run_id>/", BundleRunView.as_view(), name="api-bundle-run"),
]
