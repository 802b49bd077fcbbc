"""Every browser test and bench types as a real keyboard does: a capital or a shifted symbol
is a Shift keydown, the key, a Shift keyup (tests/browser/real_keys.py). Playwright's own
``keyboard.type("I")`` sends the "I" alone, which no keyboard does, and hid a page that read
the Shift keydown as a key of its own.

Read from the source (AST): text is typed only through real_keys.py; a key pressed any other
way is a literal that needs no Shift ("Enter", "i", "Shift+ArrowRight", "Control+z").
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.browser.real_keys import needs_shift

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "tests" / "browser").rglob("*.py"), *(ROOT / "bench").glob("*.py")])
HELPER = ROOT / "tests" / "browser" / "real_keys.py"
TYPING = {"type", "press_sequentially"}  # a string typed key by key


def key_refusal(node: ast.AST) -> str | None:
    """Why pressing ``node`` is not as a keyboard does; None if it is."""
    if isinstance(node, ast.IfExp):  # "Enter" if … else "Tab": both literals
        return key_refusal(node.body) or key_refusal(node.orelse)
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return "a key that is not a literal (press it with real_keys.press_key)"
    parts = node.value.split("+") if node.value != "+" else ["+"]
    key = parts[-1] if parts[-1] or len(parts) < 2 else "+"
    if needs_shift(key) and "Shift" not in parts[:-1]:
        return f"{node.value!r} without its Shift keydown (use real_keys.press_key)"
    return None


def refusals(path: Path, root: Path = ROOT) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        receiver = ast.unparse(node.func.value)
        keyboard = receiver == "keyboard" or receiver.endswith(".keyboard")
        where = f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)[:80]}"
        name = node.func.attr
        if name == "press_sequentially" or (name == "type" and (keyboard or "locator" in receiver)):
            found.append(f"{where}: text typed without real_keys.type_keys")
        elif name in {"press", "down", "up"} and keyboard and node.args:
            why = key_refusal(node.args[0])
            if why:
                found.append(f"{where}: {why}")
        elif name == "press" and not keyboard and len(node.args) == 2 and receiver.split(".")[-1].startswith("page"):
            why = key_refusal(node.args[1])  # page.press(selector, key)
            if why:
                found.append(f"{where}: {why}")
        elif name == "press" and not keyboard and len(node.args) == 1 and "locator" in receiver:
            why = key_refusal(node.args[0])  # locator.press(key)
            if why:
                found.append(f"{where}: {why}")
    return found


def test_no_browser_test_types_a_capital_or_a_shifted_key_without_its_shift():
    found = [line for path in SOURCES if path != HELPER for line in refusals(path)]
    assert not found, "keys sent as no keyboard sends them:\n" + "\n".join(found)


def test_the_check_catches_a_capital_typed_or_pressed_without_shift(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "page.keyboard.type('34I')\n"
        "page.keyboard.press('I')\n"
        "page.keyboard.press('?')\n"
        "page.keyboard.press(key)\n"
        "page.locator('#x').press('O')\n"
        "page.press('#x', '>')\n"
        "page.keyboard.press('Shift+I')\n"
        "page.keyboard.press('Control+Shift+Z')\n"
        "page.keyboard.press('+')\n"
        "page.keyboard.press('Enter')\n"
        "page.keyboard.press('i')\n"
        "type_keys(page, '34I')\n"
    )
    found = refusals(sample, root=tmp_path)
    assert [line.split(":")[1] for line in found] == ["1", "2", "3", "4", "5", "6", "9"]
