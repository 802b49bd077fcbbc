"""The task-kind editor's refused saves, in real Chromium (issue 29, item 4): only the
input in error is outlined, and the outline goes once it is fixed; a refused save adds
no field row; no "400 (Bad Request)" in the console; the assistance check box sits on its
label's line; the preview card does not move when the "Not shown" line goes.

Screenshots (1280×720): ``artifacts/screens/``."""

from __future__ import annotations

import pytest

from annotator.models import TaskKind
from tests.browser.screens import VIEWPORT, shot
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUTLINED = (
    "[...document.querySelectorAll('#kind-form .invalid, #kind-form [aria-invalid=true]')]"
    ".map(e => e.name || e.dataset.index)"
)


def open_editor(page_as):
    page = page_as(make_user("maintainer", maintainer=True), "/task-kinds/")
    console = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.set_viewport_size(VIEWPORT)
    page.locator("#kind-preview form.event-form").wait_for()
    return page, console


def test_a_refused_save_outlines_only_its_field_adds_no_row_and_logs_nothing(page_as):
    page, console = open_editor(page_as)
    rows = page.locator(".field-row").count()
    page.fill("#kind-slug", "kitchen-hands")
    page.fill("#kind-name", "Kitchen hands")
    page.fill("[name=field-4-name]", "verb")  # a duplicate field name: refused on row 5
    page.fill("[name=field-4-choices]", "left\nright")
    for _ in range(3):  # saved again and again, refused each time
        page.click("#create-kind")
        page.wait_for_selector("#kind-error:not([hidden])")
        assert "Field 5" in page.inner_text("#kind-error") and "unique" in page.inner_text("#kind-error")
        assert sorted(page.evaluate(OUTLINED), key=str) == sorted(["4", "field-4-name"], key=str)
        assert page.locator("#kind-name.invalid").count() == 0  # the kind's Name is not the field in error
        assert page.locator(".field-row").count() == rows
    shot(page, "29-4-refused-save-outlines-its-field", at=".field-row[data-index='4']")
    # Fixed: the outline and the banner go, without saving.
    page.fill("[name=field-4-name]", "hand")
    page.wait_for_selector("#kind-error", state="hidden")
    assert page.evaluate(OUTLINED) == []
    shot(page, "29-4-fixed-outline-cleared", at=".field-row[data-index='4']")
    # A refusal of the kind's own Name outlines that input only.
    page.fill("#kind-name", "")
    page.click("#create-kind")
    page.wait_for_selector("#kind-error:not([hidden])")
    assert page.evaluate(OUTLINED) == ["name"]
    page.fill("#kind-name", "Kitchen hands")
    page.wait_for_selector("#kind-error", state="hidden")
    page.click("#create-kind")
    page.wait_for_selector("#kind-created")
    assert [f["name"] for f in TaskKind.objects.get(slug="kitchen-hands").schema["fields"]][-1] == "hand"
    assert not [line for line in console if line.startswith("error")], console


def test_the_check_box_sits_on_its_label_line_and_the_preview_does_not_jump(page_as):
    page, _ = open_editor(page_as)
    box = page.locator("#kind-assistance").bounding_box()
    label = page.locator("label:has(#kind-assistance)").bounding_box()
    line = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('label:has(#kind-assistance)')).lineHeight) || 20"
    )
    assert abs(box["x"] - label["x"]) < 3, (box, label)  # at the left of its label, not centred above it
    assert abs((box["y"] + box["height"] / 2) - (label["y"] + line / 2)) < 4, (box, label, line)

    # The preview card's form stays put (in its card) while the "Not shown" line comes and goes.
    def offset():
        card = page.locator("#kind-preview-card").bounding_box()
        return page.locator("#kind-preview").bounding_box()["y"] - card["y"]

    before = offset()
    page.fill("[name=field-4-name]", "hand")
    page.wait_for_selector("#kind-preview-notes:has-text('Not shown')")
    with_note = offset()
    page.fill("[name=field-4-choices]", "left\nright")
    page.wait_for_selector("#kind-preview [data-field=hand]")
    assert page.inner_text("#kind-preview-notes") == ""
    after = offset()
    assert abs(with_note - before) <= 1 and abs(after - with_note) <= 1, (before, with_note, after)
    shot(page, "29-4-check-box-and-preview")
