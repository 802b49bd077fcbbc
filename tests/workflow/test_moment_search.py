"""Moment search in the app: the index built from each feature source in order, the
ranking (grid-legal, top-k, NMS, the example left out), the API's answers for every
role, and clear 4xx answers for a missing, building or damaged index."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from annotator.actions.search import do_build_search_index, request_search_index
from annotator.actions.taskkinds import do_create_task_kind
from annotator.base.builtin_kinds import BUILTIN_KINDS
from annotator.models import AuditEntry, TaskKind, Video, VideoSearchIndex
from annotator.reads.search import is_annotation_only, player_remedy
from retrieval.grid import iou
from retrieval.synthetic import SyntheticConfig, generate_corpus
from tests.factories import client_for, ensure_builtin_rows, make_packet, make_ready_video
from tests.scene_video import write_scene_video

DURATION = 240.0  # 5,760 frames at 24 fps; the moment-query kind's grid step is 2 s
FPS = 24


def synthetic(seed=3):
    config = SyntheticConfig(
        n_videos=1, min_duration=DURATION, max_duration=DURATION, queries_per_video=(4, 4), grid_steps=(2.0,),
        explicit_grid_share=0.0, clip_lengths=(2.0,), noise=0.4, clutter=0.2, seed=seed,
    )  # fmt: skip
    return generate_corpus(config)


def write_features(media_root: Path, corpus) -> tuple[str, str]:
    video = corpus.videos[0]
    folder = media_root / "features"
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "v.npz", features=video.features.astype("float16"))
    texts = [q["description"] for q in corpus.queries]
    np.savez(
        folder / "v-text.npz", texts=np.array(texts), embeddings=np.stack([corpus.encoder.encode(t) for t in texts])
    )
    return "features/v.npz", "features/v-text.npz"


@pytest.fixture
def moment_packet(settings, maintainer, annotator_a, annotator_b, adjudicator):
    corpus = synthetic()
    features, text = write_features(Path(settings.MEDIA_ROOT), corpus)
    packet = make_packet(
        maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
        video=make_ready_video("moments", frame_count=int(DURATION * FPS), fps=(FPS, 1)),
        parameters={"features": features, "clip_length": 2.0, "text_features": text},
    )  # fmt: skip
    do_build_search_index(packet.video_id)
    packet.corpus = corpus
    return packet


def scene_packet(settings, maintainer, annotator_a, annotator_b, adjudicator, *, kind="moment-queries"):
    """A moment packet on a real video of coloured scenes (red 0-6 s, blue 6-12 s, red
    12-18 s, green, blue, yellow), set as its proxy."""
    path, frames = write_scene_video(Path(settings.MEDIA_ROOT) / "videos" / "proxy" / "scenes.mp4")
    video = make_ready_video("scenes", frame_count=frames, fps=(12, 1))
    video.proxy.name = "videos/proxy/scenes.mp4"
    video.save()
    return make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind=kind, video=video)


# ------------------------------------------------------------------ building


@pytest.mark.django_db
def test_uploaded_features_with_text_features_make_a_ready_index_that_finds_the_described_moments(moment_packet):
    row = VideoSearchIndex.objects.get(video=moment_packet.video)
    assert row.status == "ready" and row.source == "uploaded" and row.clip_length == 2.0
    assert row.clip_count == 120 and row.dim == 512 and row.text_vectors and row.built_at
    client = client_for(moment_packet.adjudicator)
    info = client.get(f"/api/packets/{moment_packet.pk}/search/").json()
    assert (
        info["text"] is True
        and info["example"] is True
        and len(info["texts"]) == len({q["description"] for q in moment_packet.corpus.queries})
    )
    assert "description" in info["reason"]
    hits = 0
    for query in moment_packet.corpus.queries:
        body = client.post(f"/api/packets/{moment_packet.pk}/search/", {"text": query["description"], "k": 5},
                           format="json").json()  # fmt: skip
        results = body["results"]
        assert 1 <= len(results) <= 5 and [r["rank"] for r in results] == list(range(1, len(results) + 1))
        for r in results:  # grid-legal, frames consistent with seconds
            assert r["start"] % 2 == 0 and r["end"] % 2 == 0 and 0 <= r["start"] < r["end"] <= DURATION
            assert r["start_frame"] == round(r["start"] * FPS) and r["end_frame"] == min(round(r["end"] * FPS), 5759)
        for i, a in enumerate(results):  # non-maximum suppression
            for b in results[i + 1 :]:
                assert iou((a["start"], a["end"]), (b["start"], b["end"])) <= 0.3
        assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
        hits += max(iou((results[0]["start"], results[0]["end"]), g) for g in query["intervals"]) >= 0.5
    assert hits >= 3, "the zero-shot ranker finds most synthetic moments at IoU 0.5"


@pytest.mark.django_db
def test_find_similar_leaves_the_example_out_and_unknown_text_is_a_clear_400(moment_packet):
    client = client_for(moment_packet.adjudicator)
    url = f"/api/packets/{moment_packet.pk}/search/"
    body = client.post(url, {"example": [24 * 10, 24 * 30], "k": 8}, format="json").json()
    assert body["query"]["example"] == [10.0, 30.0]
    assert body["results"] and all(iou((r["start"], r["end"]), (10, 30)) < 0.5 for r in body["results"])
    inside = [r for r in body["results"] if r["start"] >= 10 and r["end"] <= 30]
    assert inside == []  # a part of the example is the example itself
    same = client.get(url, {"start_frame": 240, "end_frame": 720, "k": 8}).json()
    assert same["results"] == body["results"]
    unknown = client.post(url, {"text": "a sentence nobody uploaded"}, format="json")
    assert unknown.status_code == 400 and "no text features" in unknown.json()["error"]["message"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, field",
    [
        ({}, None),
        ({"k": 0, "example": [0, 48]}, "k"),
        ({"k": "5x", "example": [0, 48]}, "k"),
        ({"example": [48, 0]}, "example"),
        ({"example": [0, 10**9]}, "example"),
        ({"example": "0-48"}, "example"),
        ({"example": [True, 48]}, "example"),
        ({"text": ["a"]}, "text"),
        ({"text": "x" * 501}, "text"),
    ],
)
def test_bad_search_input_is_a_400_naming_the_field(moment_packet, body, field):
    response = client_for(moment_packet.adjudicator).post(
        f"/api/packets/{moment_packet.pk}/search/", body, format="json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"].get("field") == field


@pytest.mark.django_db
def test_a_missing_or_corrupt_vectors_file_is_a_409_asking_for_a_rebuild(settings, moment_packet):
    client = client_for(moment_packet.adjudicator)
    url = f"/api/packets/{moment_packet.pk}/search/"
    row = VideoSearchIndex.objects.get(video=moment_packet.video)
    vectors = Path(settings.MEDIA_ROOT) / row.vectors
    vectors.write_bytes(b"not a numpy file at all")
    response = client.post(url, {"example": [0, 48]}, format="json")
    assert response.status_code == 409 and response.json()["error"]["code"] == "index_not_ready"
    assert "damaged" in response.json()["error"]["message"] and "rebuild" in response.json()["error"]["message"]
    info = client.get(url)
    assert info.status_code == 200 and info.json()["example"] is False and "damaged" in info.json()["reason"]
    vectors.unlink()
    response = client.post(url, {"example": [0, 48]}, format="json")
    assert response.status_code == 409 and "missing" in response.json()["error"]["message"]
    # The maintainer rebuilds; the search works again.
    rebuilt = client_for(moment_packet.created_by).post(f"/api/videos/{moment_packet.video_id}/search-index/")
    assert rebuilt.status_code == 202 and rebuilt.json()["index"]["status"] == "pending"
    assert AuditEntry.objects.filter(operation="search_index.rebuild").count() == 1
    do_build_search_index(moment_packet.video_id)
    assert client.post(url, {"example": [0, 48]}, format="json").status_code == 200


@pytest.mark.django_db
def test_no_index_yet_and_a_building_index_are_409_with_the_reason(maintainer, annotator_a, annotator_b, adjudicator):
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
                         video=make_ready_video("m", frame_count=480))  # fmt: skip
    client = client_for(adjudicator)
    url = f"/api/packets/{packet.pk}/search/"
    assert client.get(url).json()["index"]["status"] == "pending"  # queued when the packet was made
    response = client.post(url, {"example": [0, 48]}, format="json")
    assert response.status_code == 409 and "being built" in response.json()["error"]["message"]
    VideoSearchIndex.objects.all().delete()
    response = client.post(url, {"example": [0, 48]}, format="json")
    assert response.status_code == 409 and "no search index" in response.json()["error"]["message"]
    # Neither features nor media: nothing to search with, and the page says so.
    do_build_search_index(packet.video_id)
    row = VideoSearchIndex.objects.get(video=packet.video)
    assert row.status == "unavailable" and "no media" in row.error
    assert "nothing to search with" in client.get(url).json()["reason"]


@pytest.mark.django_db
def test_the_descriptor_index_of_a_real_video_finds_the_similar_scene_and_refuses_text(
    settings, maintainer, annotator_a, annotator_b, adjudicator
):
    packet = scene_packet(settings, maintainer, annotator_a, annotator_b, adjudicator)
    do_build_search_index(packet.video_id)
    row = VideoSearchIndex.objects.get(video=packet.video)
    assert row.status == "ready" and row.source == "descriptor" and row.clip_length == 1.0 and row.clip_count == 36
    client = client_for(adjudicator)
    url = f"/api/packets/{packet.pk}/search/"
    info = client.get(url).json()
    assert info["example"] is True and info["text"] is False
    assert "Text search needs a text encoder" in info["reason"] and "search by example" in info["reason"]
    # The first red scene (0-6 s) as the example: the other red scene (12-18 s) comes first.
    body = client.post(url, {"example": [0, 72], "k": 3}, format="json").json()
    best = body["results"][0]
    assert iou((best["start"], best["end"]), (12, 18)) >= 0.5, body["results"]
    text = client.post(url, {"text": "a red scene"}, format="json")
    assert text.status_code == 400 and "needs a text encoder" in text.json()["error"]["message"]


@pytest.mark.django_db
def test_a_local_encoder_from_the_settings_supports_text_search(
    settings, maintainer, annotator_a, annotator_b, adjudicator
):
    settings.FRAMELEDGER_SEARCH_ENCODER = "tests.retrieval.toy_encoder:make"
    packet = scene_packet(settings, maintainer, annotator_a, annotator_b, adjudicator)
    do_build_search_index(packet.video_id)
    row = VideoSearchIndex.objects.get(video=packet.video)
    assert row.status == "ready" and row.source == "encoder" and row.dim == 4
    client = client_for(adjudicator)
    assert client.get(f"/api/packets/{packet.pk}/search/").json()["text"] is True
    body = client.post(f"/api/packets/{packet.pk}/search/", {"text": "the green one", "k": 2}, format="json").json()
    best = body["results"][0]
    assert iou((best["start"], best["end"]), (18, 24)) >= 0.5, body["results"]
    settings.FRAMELEDGER_SEARCH_ENCODER = "tests.retrieval.no_such_module:make"
    do_build_search_index(packet.video_id)
    row.refresh_from_db()
    assert row.status == "failed" and "could not be loaded" in row.error


@pytest.mark.django_db
def test_a_maintainer_uploads_features_through_the_api(settings, maintainer, annotator_a, annotator_b, adjudicator):
    corpus = synthetic(seed=4)
    packet = make_packet(maintainer, annotator_a, annotator_b, adjudicator, kind="moment-queries",
                         video=make_ready_video("up", frame_count=int(DURATION * FPS), fps=(FPS, 1)))  # fmt: skip
    url = f"/api/videos/{packet.video_id}/search-index/"
    features = io.BytesIO()
    np.save(features, corpus.videos[0].features)
    texts = io.BytesIO()
    np.savez(texts, texts=np.array(["x"]), embeddings=np.ones((1, 7)))
    client = client_for(maintainer)
    features.name, texts.name = "v.npy", "t.npz"
    features.seek(0)
    texts.seek(0)
    bad = client.post(url, {"features": features, "clip_length": "2", "text_features": texts}, format="multipart")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "text_features", bad.content
    garbage = io.BytesIO(b"garbage")
    garbage.name = "v.npz"
    bad = client.post(url, {"features": garbage, "clip_length": "2"}, format="multipart")
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "features"
    features.seek(0)
    missing = client.post(url, {"features": features}, format="multipart")
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "clip_length"
    features.seek(0)
    ok = client.post(url, {"features": features, "clip_length": "2"}, format="multipart")
    assert ok.status_code == 202, ok.content
    do_build_search_index(packet.video_id)
    status = client.get(url).json()["index"]
    assert status["status"] == "ready" and status["source"] == "uploaded" and status["clips"] == 120
    assert VideoSearchIndex.objects.get(video=packet.video).encoder == "uploaded"


# ------------------------------------------------------------------ who may search


def assisted_kind(maintainer) -> TaskKind:
    ensure_builtin_rows()
    base = next(k for k in BUILTIN_KINDS if k["slug"] == "moment-queries")
    return do_create_task_kind(
        actor=maintainer, slug="moment-queries-assisted", name="Moment queries (assisted)",
        scorer_id=base["scorer_id"], schema={**base["schema"], "annotator_assistance": True},
    )  # fmt: skip


@pytest.mark.django_db
def test_who_may_search(moment_packet, maintainer, annotator_a, annotator_b, adjudicator, outsider):
    url = f"/api/packets/{moment_packet.pk}/search/"
    for user, allowed in [(adjudicator, True), (maintainer, True), (annotator_a, False), (annotator_b, False),
                          (outsider, False)]:  # fmt: skip
        client = client_for(user)
        for response in (client.get(url), client.post(url, {"example": [0, 48]}, format="json")):
            assert response.status_code == (200 if allowed else 404), (user.username, response.content)
            if not allowed:
                assert response.json() == {"error": {"code": "not_found", "message": "Not found."}}
    index_url = f"/api/videos/{moment_packet.video_id}/search-index/"
    for user in (adjudicator, annotator_a, outsider):
        assert client_for(user).get(index_url).status_code == 404
        assert client_for(user).post(index_url).status_code == 404
    assert client_for(maintainer).get(index_url).status_code == 200


@pytest.mark.django_db
def test_annotators_search_only_when_the_task_kind_allows_assistance(
    settings, maintainer, annotator_a, annotator_b, adjudicator
):
    kind = assisted_kind(maintainer)
    packet = scene_packet(settings, maintainer, annotator_a, annotator_b, adjudicator, kind=kind.slug)
    do_build_search_index(packet.video_id)
    for user in (annotator_a, annotator_b):
        response = client_for(user).post(f"/api/packets/{packet.pk}/search/", {"example": [0, 72]}, format="json")
        assert response.status_code == 200 and response.json()["results"]


@pytest.mark.django_db
def test_the_assistance_flag_must_be_a_boolean(maintainer):
    ensure_builtin_rows()
    base = next(k for k in BUILTIN_KINDS if k["slug"] == "moment-queries")
    from annotator.base.errors import InvalidInput

    with pytest.raises(InvalidInput, match="annotator_assistance"):
        do_create_task_kind(actor=maintainer, slug="m-bad", name="bad", scorer_id=base["scorer_id"],
                            schema={**base["schema"], "annotator_assistance": "yes"})  # fmt: skip


@pytest.mark.django_db
def test_a_packet_without_intervals_says_so(packet, adjudicator):
    client = client_for(adjudicator)
    info = client.get(f"/api/packets/{packet.pk}/search/")
    assert info.status_code == 200 and info.json()["example"] is False and "moment-query" in info.json()["reason"]
    response = client.post(f"/api/packets/{packet.pk}/search/", {"example": [0, 10]}, format="json")
    assert response.status_code == 400
    assert not VideoSearchIndex.objects.filter(video=packet.video).exists()  # no index for an action ledger


@pytest.mark.django_db
def test_only_an_imported_video_row_without_files_is_annotation_only(packet):
    """The workspace loads no player for these (docs/ui.md); any other row without files
    is a video that should have media, and its player tries and says why it cannot."""
    video = packet.video
    assert not is_annotation_only(packet)  # a ready row whose files are missing
    video.original_name = "qvhighlights:NUsG9BgSes0_210.0_360.0"
    video.save()
    assert is_annotation_only(packet)
    assert "ingest it as qvhighlights:NUsG9BgSes0_210.0_360.0" in player_remedy(packet)
    video.proxy.name = "videos/1/proxy.mp4"
    assert not is_annotation_only(packet)  # ingested under the import's name: a real video
    video.proxy.name = ""
    video.original_name = "lecture:part 1.mp4"  # a colon, but no moment source
    assert not is_annotation_only(packet)


@pytest.mark.django_db
def test_an_index_is_queued_only_for_ready_videos_with_a_moment_packet(packet):
    video = packet.video
    assert request_search_index(video) is None  # its only packet is an action ledger
    assert request_search_index(video, force=True).status == "pending"
    video.status = Video.Status.PROCESSING
    assert request_search_index(video, force=True) is None


@pytest.mark.django_db
def test_deleting_a_video_removes_its_index_files(settings, maintainer, django_capture_on_commit_callbacks):
    from annotator.actions.videos import do_delete_video

    write_scene_video(Path(settings.MEDIA_ROOT) / "videos" / "proxy" / "alone.mp4")
    video = make_ready_video("alone", frame_count=432, fps=(12, 1))
    video.proxy.name = "videos/proxy/alone.mp4"
    video.save()
    row = do_build_search_index(video.pk)  # a maintainer's rebuild works on any ready video
    folder = Path(settings.MEDIA_ROOT) / "search-index" / str(video.pk)
    assert row.status == "ready" and (Path(settings.MEDIA_ROOT) / row.vectors).is_file()
    with django_capture_on_commit_callbacks(execute=True):
        do_delete_video(actor=maintainer, video=video)
    assert not folder.exists() and not VideoSearchIndex.objects.exists()
