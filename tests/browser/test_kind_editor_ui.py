"""In real Chromium: the task-kind editor's live preview draws the annotation form the
schema describes as it is typed, and the created kind is listed."""

from __future__ import annotations

import pytest

from annotator.entry.pages.taskkinds import schema_from_form
from annotator.models import TaskKind
from tests.browser.ledger_pages import screenshot
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1280, "height": 720}


def test_the_preview_follows_the_form_and_the_kind_is_created(page_as):
    maintainer = make_user("maintainer", maintainer=True)
    page = page_as(maintainer, "/task-kinds/")
    page.set_viewport_size(VIEWPORT)
    preview = page.locator("#kind-preview")
    # The starting point (a copy of the first built-in kind) is drawn as annotators see it.
    preview.locator("form.event-form").wait_for()
    assert preview.locator("[data-field=verb]").count() == 1
    # A new field with a closed vocabulary appears as it is typed.
    page.fill("[name=field-4-name]", "hand")
    assert "hand: needs a vocabulary" in page.inner_text("#kind-preview-notes")
    assert preview.locator("[data-field=hand]").count() == 0
    page.fill("[name=field-4-choices]", "left\nright")
    preview.locator("[data-field=hand] select").wait_for()
    options = preview.locator("[data-field=hand] select option").all_inner_texts()
    assert options == ["—", "left", "right"]
    assert page.inner_text("#kind-preview-notes") == ""
    # A closed list: the scorer list follows the family.
    page.select_option("#kind-family", "moments")
    visible = [o for o in page.locator("#kind-scorer option").all() if not o.evaluate("o => o.hidden")]
    assert [o.get_attribute("data-family") for o in visible] == ["moments"] * len(visible) and visible
    # The preview lays the form out as the family's adapter says (its ui's sections, sent
    # with the page): the break-point family puts the frames under "In the video".
    page.select_option("#kind-family", "break_points")
    page.wait_for_function("() => document.querySelectorAll('#kind-preview legend').length > 0")
    assert preview.locator("legend").all_inner_texts() == ["In the video", "Other"]
    page.select_option("#kind-family", "actions")
    page.wait_for_function("() => document.querySelectorAll('#kind-preview legend').length === 0")
    page.click("#add-field")
    assert page.input_value("#field-count") == "7"
    page.fill("#kind-slug", "kitchen-hands")
    page.fill("#kind-name", "Kitchen actions with hands")
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "task-kind-editor-1280x720.png", full_page=False)
    page.click("#create-kind")
    page.wait_for_selector("#kind-created")
    kind = TaskKind.objects.get(slug="kitchen-hands")
    assert [f["name"] for f in kind.schema["fields"]] == ["verb", "nouns", "start_frame", "end_frame", "hand"]
    assert kind.schema["fields"][4] == {"name": "hand", "type": "enum", "choices": ["left", "right"]}
    assert page.locator('#kinds tr[data-slug="kitchen-hands"]').count() == 1


def test_the_preview_builds_the_schema_the_server_builds(page_as):
    """kind_editor_model.js (the preview) and pages_taskkinds.schema_from_form (the POST)
    turn the same form into the same schema, invalid values included."""
    maintainer = make_user("maintainer", maintainer=True)
    page = page_as(maintainer, "/task-kinds/")
    form = {"family": "actions", "root_key": " actions ", "tolerance": "five", "boundary_start": "start_frame",
            "boundary_end": "", "sort_keys": "start_frame, verb,"}  # fmt: skip
    rows = [
        {"name": "verb", "type": "enum", "required": True, "identity": True, "choices": "a\n b \n\n", "min": "",
         "max": "", "frame": False},
        {"name": "nouns", "type": "enum_set", "required": False, "identity": False, "choices": "x", "min": "2",
         "max": "", "frame": False},
        {"name": "start_frame", "type": "int", "required": True, "identity": False, "choices": "", "min": "-3",
         "max": "x9", "frame": True},
        {"name": "", "type": "enum", "required": True, "identity": False, "choices": "", "min": "", "max": "",
         "frame": False},
    ]  # fmt: skip
    built = page.evaluate(
        """async (values) => {
             const model = await import("/static/frontend/js/kind_editor_model.js");
             return model.schemaFromForm(values);
           }""",
        {**form, "fields": rows},
    )
    server_rows = [row for row in rows if row["name"] or row["choices"].strip()]  # as form_rows keeps them
    assert built == schema_from_form(form, server_rows)
    helped = page.evaluate(
        """async (values) => (await import("/static/frontend/js/kind_editor_model.js")).schemaFromForm(values)""",
        {**form, "assistance": True, "fields": rows},
    )
    assert helped == schema_from_form({**form, "assistance": "on"}, server_rows)
    assert helped["annotator_assistance"] is True
    assert built["fields"][1] == {"name": "nouns", "type": "enum_set", "choices": ["x"], "min_items": 2,
                                  "required": False}  # fmt: skip
