"""Exceptions raised by the scoring library.

Every exception is a ``ValueError`` subclass so callers can catch bad parameters or
a bad ground truth with one clause. A malformed *submission* never raises: it scores
0 with a reason. These errors are for the inputs the caller controls.
"""


class ScoringError(ValueError):
    """Base class of every error the scoring library raises on purpose."""


class UnknownScorer(ScoringError):
    """The scorer id is not in the registry."""


class ParameterError(ScoringError):
    """A task parameter (tolerance, frame count, vocabulary, corpus, ...) is invalid."""


class GroundTruthError(ScoringError):
    """The ground-truth object does not have the shape the scorer reads."""


class CapExceeded(ScoringError):
    """A ledger handed to an alignment or agreement function is over a scorer cap."""


class SolutionRejected(ScoringError):
    """A file-layer rejection of a submission (not a regular file, too large, ...).

    The command line passes an instance to :func:`scoring.score_submission` in place of
    the submission bytes; the scorer turns it into a zero score with the scorer's own
    reason prefix, exactly as the published verifier does.
    """
