"""The three seed task kinds FrameLedger ships with (created by a data migration).

Vocabularies are the published ones: GTEA Gaze+ verbs and nouns for the action
ledger (data/agentic-vbench/egocentric-activity-understanding/environment/vocabulary.json),
the closed lists of SCORING.md section 2 for the break-point ledger.
"""

from scoring import tennis
from scoring import tennis_vocabulary as vocabulary

GTEA_VERBS = [
    "close", "compress", "crack", "cut", "flip", "mix", "move around", "open", "pour", "put",
    "spread", "take", "transfer", "turn off", "turn on",
]  # fmt: skip
GTEA_NOUNS = [
    "bacon", "bacon_container", "bagel", "bagel_container", "bowl", "burner", "cabinet", "cheese",
    "cheese_container", "cup", "egg", "egg_container", "egg_mixture", "egg_shells", "fork", "freezer",
    "fridge", "fridge_drawer", "knife", "milk", "milk_container", "oil", "oil_container", "orange_juice",
    "orange_juice_container", "plastic_holed", "plastic_spatula", "plate", "plate_container",
    "plate_pronged_spoon", "salt", "salt_container", "skillet", "trash", "utensils",
]  # fmt: skip

ACTION_LEDGER = {
    "family": "actions",
    "root_key": "actions",
    "fields": [
        {"name": "verb", "type": "enum", "choices": GTEA_VERBS},
        {"name": "nouns", "type": "enum_set", "choices": GTEA_NOUNS, "min_items": 1},
        {"name": "start_frame", "type": "int", "frame": True},
        {"name": "end_frame", "type": "int", "frame": True},
    ],
    "identity_fields": [],
    "boundary_fields": ["start_frame", "end_frame"],
    "tolerance": 12,
    "sort_keys": ["start_frame", "verb", "nouns", "end_frame"],
}

# The closed lists of SCORING.md section 2 (one source: ``scoring.tennis_vocabulary``).
PLAYERS = list(vocabulary.PLAYERS)
POINTS = list(vocabulary.POINTS)
STROKES = list(vocabulary.STROKES)
SERVE_DIRECTIONS = list(vocabulary.SERVE_DIRECTIONS)
RALLY_DIRECTIONS = list(vocabulary.RALLY_DIRECTIONS)

BREAK_POINT_LEDGER = {
    "family": "break_points",
    "root_key": "break_points",
    "fields": [
        {"name": "set", "type": "int", "min": 1, "max": 5},
        {"name": "medvedev_games", "type": "int", "min": 0, "max": 7},
        {"name": "de_minaur_games", "type": "int", "min": 0, "max": 7},
        {"name": "medvedev_points", "type": "enum", "choices": POINTS},
        {"name": "de_minaur_points", "type": "enum", "choices": POINTS},
        {"name": "server", "type": "enum", "choices": PLAYERS},
        {"name": "opportunity", "type": "int", "min": 1},
        {"name": "first_serve_in", "type": "bool"},
        {"name": "outcome", "type": "enum", "choices": list(vocabulary.OUTCOMES)},
        {"name": "serve_direction", "type": "enum", "choices": SERVE_DIRECTIONS},
        {"name": "rally_shots", "type": "int", "min": 0},
        {"name": "terminal_player", "type": "enum", "choices": PLAYERS},
        {"name": "terminal_stroke", "type": "enum", "choices": STROKES},
        {"name": "terminal_court_position", "type": "enum", "choices": list(vocabulary.COURT_POSITIONS)},
        {"name": "terminal_result", "type": "enum", "choices": list(vocabulary.RESULTS)},
        {"name": "terminal_error", "type": "enum", "choices": list(vocabulary.ERRORS)},
        {
            "name": "shots",
            "type": "token_list",
            "max_items": 512,
            "subfields": [
                {"name": "stroke", "type": "enum", "choices": STROKES},
                {"name": "direction", "type": "enum", "choices": RALLY_DIRECTIONS},
            ],
            "first_token_choices": {"stroke": [vocabulary.SERVE], "direction": SERVE_DIRECTIONS},
        },
        # Where the point is in the video: for the player and timeline, not scored.
        {"name": "start_frame", "type": "int", "frame": True, "required": False, "export": False},
        {"name": "end_frame", "type": "int", "frame": True, "required": False, "export": False},
    ],
    # The scorer's identity key: events pair only when these are equal.
    "identity_fields": list(tennis.IDENTITY_FIELDS),
    "boundary_fields": ["start_frame", "end_frame"],
    "tolerance": 0,
    "sort_keys": ["set", "medvedev_games", "de_minaur_games", "opportunity", "start_frame"],
}

MOMENT_QUERIES = {
    "family": "moments",
    "root_key": "queries",
    "fields": [
        {"name": "query_id", "type": "string", "max_length": 200},
        {"name": "query", "type": "string", "max_length": 2000},
        {"name": "intervals", "type": "interval_list", "grid_step": 2.0},
    ],
    "identity_fields": ["query_id"],
    "boundary_fields": [],
    "tolerance": 0,
    "sort_keys": ["query_id"],
}

BUILTIN_KINDS = [
    {
        "slug": "action-ledger",
        "name": "Action ledger (GTEA Gaze+)",
        "description": "Verb + noun set + start/end frame for every action; four-field F1 with a 12-frame tolerance.",
        "scorer_id": "egocentric-f1-v2",
        "schema": ACTION_LEDGER,
    },
    {
        "slug": "break-point-ledger",
        "name": "Tennis break-point ledger",
        "description": "Identity, summary fields and ordered shot tokens for every break point.",
        "scorer_id": "hierarchical-bottleneck-v1",
        "schema": BREAK_POINT_LEDGER,
    },
    {
        "slug": "moment-queries",
        "name": "Moment queries",
        "description": "Acceptable intervals on a time grid for each text query.",
        "scorer_id": "moment-utility-v1",
        "schema": MOMENT_QUERIES,
    },
]


def install_builtin_rows(task_kind_model, group_model) -> None:
    """Create (or refresh) the seed task kinds and the maintainers group.

    Called by the data migration with historical models, and by test factories after
    a transactional test has flushed the tables.
    """
    for kind in BUILTIN_KINDS:
        task_kind_model.objects.update_or_create(slug=kind["slug"], defaults={**kind, "builtin": True})
    group_model.objects.get_or_create(name="maintainers")
