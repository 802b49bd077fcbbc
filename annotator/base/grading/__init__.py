"""The grading room's helpers: upload expansion and caps, the scorer's inputs for a
version (``inputs``: reads rows, writes nothing), leaderboard rows and calibration
checks (pure, no database).

``annotator.actions.grading`` (writes) and ``annotator.reads.grading`` (reads) load
rows, call these and save or present.
"""
