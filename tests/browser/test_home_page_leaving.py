"""Opening a packet from the home page before its list has come: the navigation aborts
the list's fetch (Firefox rejects it with a NetworkError), and that is no error of the
page: nothing uncaught is logged, nothing is shown."""

from __future__ import annotations

import time

import pytest

from annotator.entry.api import views

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SERVER = "uvicorn"  # a child process: the slow list below is in it from the start


@pytest.mark.parametrize("browser_name", ["firefox"])
def test_leaving_the_home_page_while_it_lists_the_packets_logs_no_error(
    page_in, media_packet, annotator_a, browser_name, monkeypatch
):
    packet = media_packet("h264-2997-gop12")
    answer = views.PacketListView.get

    def slow(self, request):
        time.sleep(1.5)  # the list is still on its way when the packet is opened
        return answer(self, request)

    monkeypatch.setattr(views.PacketListView, "get", slow)
    page = page_in(annotator_a, "/")
    page.evaluate("(path) => { window.location.href = path; }", f"/packets/{packet.pk}/")
    page.wait_for_function(
        "(path) => window.location.pathname === path && document.readyState === 'complete'", f"/packets/{packet.pk}/"
    )
    time.sleep(2)  # the aborted fetch's rejection has had its time
    assert page.uncaught() == []
