"""Published task constants, kept apart from the scorer modules so that the registry
and the file layer can name them without importing a scorer.

The scorer modules re-export these under their historical names
(``egocentric.MAX_SOLUTION_BYTES``, ``moments.DEFAULT_A``, ...).
"""

# egocentric-f1-*
EGOCENTRIC_DEFAULT_TOLERANCE = 12
EGOCENTRIC_PUBLISHED_FRAME_COUNT = 25692  # the published GTEA Gaze+ video (Ahmad_American)
EGOCENTRIC_MAX_BYTES = 2_000_000
EGOCENTRIC_DEPTH_LIMIT = 992  # the judge run as a script under CPython 3.11: 993 is rejected

# hierarchical-bottleneck-*
TENNIS_MAX_BYTES = 16 * 1024 * 1024  # ours: the judge reads without a cap
TENNIS_DEPTH_LIMIT = 994  # the judge run as a script under CPython 3.11: 995 is rejected

# moment-utility-v1 (no published verifier: our choices)
MOMENTS_DEFAULT_A = 15
MOMENTS_DEFAULT_B = 0.14696558206208937
MOMENTS_MAX_BYTES = 10_000_000
MOMENTS_DEPTH_LIMIT = 992  # per line, the egocentric judge's limit
