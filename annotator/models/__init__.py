"""FrameLedger's domain model. Rows are written only through ``annotator.actions``."""

from annotator.models.audit import AuditEntry, Job
from annotator.models.bundles import BundleRun
from annotator.models.grading import (
    AgreementReport,
    ScoringBatch,
    ScoringRun,
    Submission,
    SubmissionScore,
    VersionCalibration,
    VersionReadiness,
)
from annotator.models.packets import Ledger, LedgerEvent, Packet
from annotator.models.projects import Project
from annotator.models.search import VideoSearchIndex
from annotator.models.taskkinds import TaskKind
from annotator.models.tokens import ApiToken
from annotator.models.truth import Decision, GroundTruthVersion, Union, UnionItem
from annotator.models.uploads import ResumableUpload
from annotator.models.videos import Video

__all__ = [
    "ApiToken",
    "BundleRun",
    "AgreementReport",
    "ScoringBatch",
    "ScoringRun",
    "Submission",
    "SubmissionScore",
    "VersionCalibration",
    "VersionReadiness",
    "AuditEntry",
    "Decision",
    "GroundTruthVersion",
    "Job",
    "Ledger",
    "LedgerEvent",
    "Packet",
    "Project",
    "ResumableUpload",
    "TaskKind",
    "Union",
    "UnionItem",
    "Video",
    "VideoSearchIndex",
]
