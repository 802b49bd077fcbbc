"""Projects: parameters checked against the kind, bulk packets with round-robin blind
assignment, reassignment of an annotator whose ledger is still empty."""

from __future__ import annotations

import pytest

from annotator.actions.ledgers import do_add_event, do_delete_event, do_freeze_ledger
from annotator.actions.projects import do_create_project, do_create_project_packets, do_reassign_annotator
from annotator.base.errors import Conflict, InvalidInput
from annotator.models import AuditEntry, Ledger, Packet, Project, TaskKind, Video
from tests.factories import client_for, ensure_builtin_rows, make_ready_video, make_user

EVENT = {"verb": "take", "nouns": ["cup"], "start_frame": 1, "end_frame": 20}


@pytest.fixture
def crew(db):
    return {name: make_user(name) for name in ["ann", "bea", "cid", "dee", "judge", "jury"]}


def make_project(maintainer, crew, *, kind="action-ledger", parameters=None, annotators=("ann", "bea", "cid", "dee")):
    ensure_builtin_rows()
    return do_create_project(
        actor=maintainer,
        title=f"project {kind}",
        task_kind=TaskKind.objects.get(slug=kind),
        parameters=parameters or {},
        annotators=[crew[n] for n in annotators],
        adjudicators=[crew["judge"], crew["jury"]],
    )


@pytest.mark.django_db
def test_parameters_are_checked_against_the_task_kind(maintainer, crew):
    ensure_builtin_rows()
    with pytest.raises(InvalidInput, match="takes no parameters"):
        make_project(maintainer, crew, parameters={"players": ["A", "B"]})
    with pytest.raises(InvalidInput, match="players: the two players must have different names"):
        make_project(maintainer, crew, kind="break-point-ledger", parameters={"players": ["Sinner", "sinner "]})
    with pytest.raises(InvalidInput, match="players: players must be a list of the two players"):
        make_project(maintainer, crew, kind="break-point-ledger", parameters={"players": ["Sinner"]})
    with pytest.raises(InvalidInput, match="grid"):
        make_project(maintainer, crew, kind="moment-queries", parameters={"grid": {"step": 0}})
    with pytest.raises(InvalidInput, match="unknown parameter"):
        make_project(maintainer, crew, kind="moment-queries", parameters={"grid": {"step": 2}, "fps": 3})
    tennis = make_project(maintainer, crew, kind="break-point-ledger", parameters={"players": [" Sinner", "Alcaraz"]})
    assert tennis.parameters == {"players": ["Sinner", "Alcaraz"]}
    moments = make_project(maintainer, crew, kind="moment-queries", parameters={"grid": {"step": 1}})
    assert moments.parameters == {"grid": {"step": 1.0}}


@pytest.mark.django_db
def test_pools_need_two_annotators_and_three_distinct_people(maintainer, crew):
    ensure_builtin_rows()
    kind = TaskKind.objects.get(slug="action-ledger")
    with pytest.raises(InvalidInput, match="two annotators"):
        do_create_project(
            actor=maintainer, title="x", task_kind=kind, annotators=[crew["ann"]], adjudicators=[crew["judge"]]
        )
    with pytest.raises(InvalidInput, match="three different people"):
        do_create_project(
            actor=maintainer,
            title="x",
            task_kind=kind,
            annotators=[crew["ann"], crew["bea"]],
            adjudicators=[crew["ann"]],
        )


@pytest.mark.django_db
def test_bulk_packets_rotate_a_and_b_and_keep_three_people_apart(maintainer, crew):
    project = make_project(maintainer, crew, annotators=("ann", "bea", "cid", "judge"))
    videos = [make_ready_video(f"clip {i}") for i in range(6)]
    packets = do_create_project_packets(actor=maintainer, project=project, videos=videos[:4])
    packets += do_create_project_packets(actor=maintainer, project=project, videos=videos[4:])
    triples = [(p.annotator_a.username, p.annotator_b.username, p.adjudicator.username) for p in packets]
    assert triples == [
        ("ann", "bea", "judge"),
        ("bea", "cid", "jury"),
        ("cid", "judge", "jury"),
        ("judge", "ann", "jury"),
        ("ann", "bea", "judge"),
        ("bea", "cid", "jury"),
    ]
    assert all(len(set(t)) == 3 for t in triples)
    assert {p.project_id for p in Packet.objects.filter(pk__in=[p.pk for p in packets])} == {project.pk}
    assert [p.title for p in packets][0] == "project action-ledger · clip 0"
    assert Ledger.objects.filter(packet__project=project).count() == 12


@pytest.mark.django_db
def test_bulk_packets_refuse_a_video_that_is_not_ready_and_make_none(maintainer, crew):
    project = make_project(maintainer, crew)
    pending = Video.objects.create(title="uploading", status=Video.Status.PROCESSING)
    with pytest.raises(InvalidInput, match="not ready: uploading"):
        do_create_project_packets(actor=maintainer, project=project, videos=[make_ready_video("ok"), pending])
    assert not Packet.objects.exists()
    project.refresh_from_db()
    assert project.next_slot == 0


@pytest.mark.django_db
def test_packets_carry_the_project_parameters_in_their_hash(maintainer, crew):
    one = make_project(maintainer, crew, kind="break-point-ledger", parameters={"players": ["Sinner", "Alcaraz"]})
    [packet] = do_create_project_packets(actor=maintainer, project=one, videos=[make_ready_video("final")])
    assert packet.parameters == {"players": ["Sinner", "Alcaraz"]}
    view = client_for(packet.annotator_a).get(f"/api/packets/{packet.pk}/").json()
    assert view["parameters"] == {"players": ["Sinner", "Alcaraz"]}


@pytest.mark.django_db
def test_reassignment_while_the_ledger_is_empty_is_audited(maintainer, packet, annotator_a, outsider):
    ledger = do_reassign_annotator(actor=maintainer, packet=packet, side="a", person=outsider)
    packet.refresh_from_db()
    assert packet.annotator_a == outsider and ledger.annotator == outsider
    entry = AuditEntry.objects.filter(operation="reassign_annotator").get()
    assert entry.packet_id == packet.pk and entry.details == {"side": "A", "from": "annotator_a", "to": "outsider"}
    # The old annotator lost the packet; the new one has the empty ledger.
    assert client_for(annotator_a).get(f"/api/packets/{packet.pk}/").status_code == 404
    assert client_for(outsider).get(f"/api/packets/{packet.pk}/ledger/").status_code == 200


@pytest.mark.django_db
def test_reassignment_is_refused_once_the_annotator_started_or_froze(
    maintainer, packet, annotator_a, annotator_b, outsider
):
    a = Ledger.objects.get(packet=packet, side="A")
    event = do_add_event(a, EVENT, actor=annotator_a, expected_version=0)
    with pytest.raises(Conflict, match="annotator A cannot be replaced: the ledger has events"):
        do_reassign_annotator(actor=maintainer, packet=packet, side="A", person=outsider)
    do_delete_event(a, event.uid, actor=annotator_a, expected_version=1)  # empty again: allowed
    b = Ledger.objects.get(packet=packet, side="B")
    do_freeze_ledger(
        b, actor=annotator_b, attestation="I labelled this video alone, from the video only.", expected_version=0
    )
    with pytest.raises(Conflict, match="the ledger is frozen"):
        do_reassign_annotator(actor=maintainer, packet=packet, side="B", person=outsider)
    with pytest.raises(InvalidInput, match="another role on this packet"):
        do_reassign_annotator(actor=maintainer, packet=packet, side="A", person=annotator_b)
    packet.refresh_from_db()
    assert (packet.annotator_a, packet.annotator_b) == (annotator_a, annotator_b)
    assert not AuditEntry.objects.filter(operation="reassign_annotator").exists()


@pytest.mark.django_db
def test_assignment_page_shows_the_reason_and_replaces_through_the_form(maintainer, packet, annotator_a, outsider):
    a = Ledger.objects.get(packet=packet, side="A")
    do_add_event(a, EVENT, actor=annotator_a, expected_version=0)
    client = client_for(maintainer)
    page = client.get(f"/packets/{packet.pk}/assignment/").content.decode()
    assert "cannot be replaced: the ledger has events" in page
    refused = client.post(f"/packets/{packet.pk}/assignment/", {"side": "A", "person": outsider.pk})
    assert refused.status_code == 400 and b"the ledger has events" in refused.content
    done = client.post(f"/packets/{packet.pk}/assignment/", {"side": "B", "person": outsider.pk})
    assert done.status_code == 200 and b"Annotator B is now outsider" in done.content
    packet.refresh_from_db()
    assert packet.annotator_b == outsider


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ["annotator_a", "annotator_b", "adjudicator", "outsider"])
def test_project_and_assignment_pages_answer_404_to_non_maintainers(persona, request, maintainer, packet, crew):
    project = make_project(maintainer, crew)
    client = client_for(request.getfixturevalue(persona))
    for url in [
        "/projects/",
        f"/projects/{project.pk}/",
        f"/packets/{packet.pk}/assignment/",
        "/dashboard/",
        "/audit/",
    ]:
        assert client.get(url).status_code == 404, url
    assert client.post(f"/projects/{project.pk}/", {"videos": [make_ready_video("v").pk]}).status_code == 404
    assert client.post(f"/packets/{packet.pk}/assignment/", {"side": "A", "person": crew["ann"].pk}).status_code == 404
    assert client.post("/projects/", {"title": "t", "task_kind": "action-ledger"}).status_code == 404
    assert Packet.objects.count() == 1
    packet.refresh_from_db()
    assert packet.annotator_a.username == "annotator_a"


@pytest.mark.django_db
def test_project_pages_create_a_project_and_its_packets(maintainer, crew):
    ensure_builtin_rows()
    client = client_for(maintainer)
    bad = client.post("/projects/", {"title": "Finals", "task_kind": "break-point-ledger", "parameters": "{players}"})
    assert bad.status_code == 400 and b"parameters are not JSON" in bad.content
    form = {
        "title": "Finals",
        "task_kind": "break-point-ledger",
        "parameters": '{"players": ["Sinner", "Alcaraz"]}',
        "annotators": [crew["ann"].pk, crew["bea"].pk],
        "adjudicators": [crew["judge"].pk],
    }
    created = client.post("/projects/", form)
    assert created.status_code == 302
    videos = [make_ready_video(f"match {i}") for i in range(3)]
    page = client.post(created["Location"], {"videos": [v.pk for v in videos]})
    assert page.status_code == 200 and b"3 packets created." in page.content
    assert Packet.objects.filter(project__title="Finals").count() == 3


@pytest.mark.django_db
def test_the_project_form_takes_the_players_and_the_grid_step_as_fields(maintainer, crew):
    from annotator.models import Project

    ensure_builtin_rows()
    client = client_for(maintainer)
    pools = {"annotators": [crew["ann"].pk, crew["bea"].pk], "adjudicators": [crew["judge"].pk]}
    page = client.get("/projects/").content.decode()
    assert 'id="project-player-1"' in page and 'id="project-grid-step"' in page
    tennis = {"title": "Finals", "task_kind": "break-point-ledger", "player_1": "Sinner", "player_2": "Alcaraz"}
    assert client.post("/projects/", {**tennis, **pools}).status_code == 302
    assert Project.objects.get(title="Finals").parameters == {"players": ["Sinner", "Alcaraz"]}
    moments = {"title": "Clips", "task_kind": "moment-queries", "grid_step": "1.5"}
    assert client.post("/projects/", {**moments, **pools}).status_code == 302
    assert Project.objects.get(title="Clips").parameters == {"grid": {"step": 1.5}}
    # A field the kind does not take is refused by its adapter, as in JSON.
    wrong = client.post("/projects/", {**moments, "title": "Wrong", "player_1": "X", **pools})
    assert wrong.status_code == 400
    bad = client.post("/projects/", {**moments, "title": "Bad", "grid_step": "two", **pools})
    assert bad.status_code == 400 and b"grid step is a number" in bad.content


@pytest.mark.django_db
def test_the_new_project_page_refuses_a_title_longer_than_its_column(maintainer, crew):
    """``check_create_project``: 300 characters (``Project.title``); a real request."""
    ensure_builtin_rows()
    form = {"task_kind": "action-ledger", "parameters": "{}", "annotators": [crew["ann"].pk, crew["bea"].pk],
            "adjudicators": [crew["judge"].pk]}  # fmt: skip
    client = client_for(maintainer)
    refused = client.post("/projects/", {**form, "title": "t" * 301})
    assert refused.status_code == 400 and b"a title is at most 300 characters" in refused.content
    assert not Project.objects.exists()
    made = client.post("/projects/", {**form, "title": "t" * 300})
    assert made.status_code == 302 and Project.objects.get().title == "t" * 300
