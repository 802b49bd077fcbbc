"""In real Chromium: a tennis packet's import page takes Match Charting Project point rows;
the dry run counts the break points and lists each refused row with its reason, then the
import stores the provisional version. Screenshot: charting-import-1280x720.png."""

from __future__ import annotations

import pytest

from annotator.models import GroundTruthVersion
from tests.browser.ledger_pages import screenshot
from tests.factories import make_packet, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROWS = "data/mcp/medvedev-de-minaur-break-points-as-charting-rows.csv"


def test_charting_rows_preview_and_import(page_as, tmp_path):
    maintainer = make_user("maintainer", maintainer=True)
    a, b, j = make_user("annotator_a"), make_user("annotator_b"), make_user("adjudicator")
    packet = make_packet(maintainer, a, b, j, kind="break-point-ledger", title="US Open 2023 R16",
                         parameters={"players": ["Daniil Medvedev", "Alex De Minaur"]})  # fmt: skip
    broken = tmp_path / "points-with-mistakes.csv"
    lines = open(ROWS).read().splitlines()
    lines[3] = lines[3].replace("6b2f2n#", "6b2f2")  # a rally without its ending
    lines[5] = lines[5].replace(",4b2v3*,", ",S,")  # a point given to the server without codes
    broken.write_text("\n".join(lines) + "\n")

    page = page_as(maintainer, f"/packets/{packet.pk}/labels/import/")
    page.set_viewport_size({"width": 1280, "height": 720})
    assert page.locator("#player-one option").all_inner_texts() == ["Daniil Medvedev", "Alex De Minaur"]
    page.set_input_files("#labels-file", str(broken))
    page.click("#preview")
    page.wait_for_selector("#import-preview")
    counts = page.inner_text("#preview-counts")
    assert "16 points read · 14 valid break points" in counts and "2 refused rows" in counts
    reasons = page.locator("#invalid-rows tbody tr").all_inner_texts()
    assert len(reasons) == 2 and "the rally has no ending" in reasons[0] and "not charted shot by shot" in reasons[1]
    assert page.locator("#do-import").count() == 0
    first = page.locator("#preview-events tbody tr").first.inner_text()
    expected = ["1", "1–1", "30–40", "Daniil Medvedev", "1", "saved", "7", "Alex De Minaur: forced error"]
    assert first.split("\t") == expected
    page.locator("#import-preview").scroll_into_view_if_needed()
    screenshot(page, "charting-import-1280x720.png", full_page=False)

    page.set_input_files("#labels-file", ROWS)
    page.click("#preview")
    page.wait_for_selector("#do-import")
    assert page.locator("#preview-events tbody tr").count() == 16
    page.click("#do-import")
    page.wait_for_selector("#import-done")
    assert GroundTruthVersion.objects.get(packet=packet).source == f"mcp-charting:{ROWS.rsplit('/', 1)[1]}"
