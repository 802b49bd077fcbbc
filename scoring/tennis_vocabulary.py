"""The closed lists of the break-point ledger (SCORING.md section 2), in its order.

The scorer checks no value against these (an unknown string simply never matches); they
are what the editor offers. One source: the seed task kind
(``annotator.base.builtin_kinds``), the Match Charting reader (``annotator.base.charting``),
the calibration anchors' random guess (``scoring.anchors``) and the form's consistency
warnings (the break-point adapter sends them to the browser) all read them from here. The
data migration that created the seed kind keeps its own frozen copy.
"""

PLAYERS = ("Daniil Medvedev", "Alex De Minaur")  # the published match's; a packet names its own
POINTS = ("0", "15", "30", "40", "AD")
OUTCOMES = ("converted", "saved")
SERVE_DIRECTIONS = ("wide", "body", "down_the_t", "unknown")  # also shot token 0's direction
RALLY_DIRECTIONS = ("receiver_forehand", "middle", "receiver_backhand", "unknown")  # tokens 1…
SERVE = "serve"  # the stroke of shot token 0
STROKES = (
    SERVE,
    "forehand_groundstroke",
    "backhand_groundstroke",
    "forehand_slice",
    "backhand_slice",
    "forehand_volley",
    "backhand_volley",
    "overhead",
    "backhand_overhead",
    "forehand_drop_shot",
    "backhand_drop_shot",
    "forehand_lob",
    "backhand_lob",
    "forehand_half_volley",
    "backhand_half_volley",
    "forehand_swinging_volley",
    "backhand_swinging_volley",
    "trick_shot",
    "unknown",
)
COURT_POSITIONS = ("baseline", "net", "serve", "unknown")
RESULTS = ("winner", "forced_error", "unforced_error", "error_unknown", "ace", "unreturnable")
ERRORS = ("net", "wide", "deep", "wide_and_deep", "shank", "unknown", "none")
NO_ERROR = "none"  # the terminal_error of a point not ending in an error

# How a point ends: in a shot that stays in (no missed stroke: as many shot tokens as
# rally_shots, terminal_error "none") or in an error (one token more, the missed stroke).
CLEAN_RESULTS = ("winner", "ace", "unreturnable")
ERROR_RESULTS = ("forced_error", "unforced_error", "error_unknown")
# Points that end on the serve: exactly one shot token.
SERVE_RESULTS = ("ace", "unreturnable")
