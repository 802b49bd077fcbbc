"""Pure helpers of the grading room (no database): upload expansion and caps, task
parameters, per-submission diagnostics, leaderboard rows and calibration checks.

``annotator.actions.grading`` loads rows, calls these and saves.
"""
