"""Every response carries a Content-Security-Policy (django-csp): scripts from this origin
and inline module scripts only with the response's nonce, no inline event handlers, no
other origins, no framing. The pages' own inline scripts carry the nonce."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.factories import client_for

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "frontend" / "templates"


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_pages_carry_the_policy_and_their_inline_scripts_the_nonce(packet, maintainer):
    client = client_for(maintainer)
    urls = ["/", f"/packets/{packet.pk}/", "/audit/", "/dashboard/", f"/grading/packets/{packet.pk}/", "/people/"]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        directives = policy(response)
        nonces = [s for s in directives["script-src"] if s.startswith("'nonce-")]
        assert directives["script-src"] == ["'self'", *nonces] and len(nonces) <= 1
        assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]
        assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
        html = response.content.decode()
        for tag in re.findall(r"<script\b[^>]*>", html):
            if "src=" not in tag and "application/json" not in tag:
                assert nonces and f'nonce="{nonces[0][7:-1]}"' in tag, (url, tag)


def test_api_answers_carry_the_policy_too(maintainer):
    response = client_for(maintainer).get("/api/me/")
    assert response.status_code == 200 and "default-src 'self'" in response["Content-Security-Policy"]


def test_no_template_has_an_inline_event_handler_or_an_unnonced_inline_script():
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        assert not re.search(r"\son[a-z]+=\"", text), f"{path}: inline event handlers are refused by the policy"
        for tag in re.findall(r"<script\b[^>]*>", text):
            if "src=" not in tag and "application/json" not in tag:
                assert "nonce=" in tag, f"{path}: {tag}"
