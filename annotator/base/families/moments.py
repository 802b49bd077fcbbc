"""Moment queries (natural-language query -> intervals of one video, QVHighlights rows)."""

from __future__ import annotations

import json

from annotator.base.families.base import FamilyAdapter, ParametersInvalid, dumps
from scoring import union_moments
from scoring.align import LEDGER_EVENT_CAPS


def video_id(packet) -> str:
    """The video id a packet's queries and corpus row carry (``parameters["video_id"]``)."""
    return packet.parameters.get("video_id") or f"video-{packet.video_id}"


def _rows(queries: list[dict]) -> bytes:
    """Submission rows: each query's first interval, one JSON object per line."""
    return b"".join(
        (
            json.dumps({"query_id": q["query_id"], "start": q["intervals"][0][0], "end": q["intervals"][0][1]}) + "\n"
        ).encode("utf-8")
        for q in queries
    )


class MomentsAdapter(FamilyAdapter):
    family = "moments"
    max_events = LEDGER_EVENT_CAPS["moments"]
    reference_calibration = True
    executable_bundles = True
    moment_search = True
    asks = ("grid",)

    def check_project_parameters(self, params: dict) -> dict:
        """``grid``: ``{"step": seconds}``, the moment grid (positive, at most 60 s);
        the task kind's own ``grid_step`` when absent."""
        unknown = set(params) - {"grid"}
        if unknown:
            raise ValueError(f"unknown parameter(s) for moment queries: {', '.join(sorted(map(str, unknown)))}")
        if "grid" not in params:
            return {}
        grid = params["grid"]
        step = grid.get("step") if isinstance(grid, dict) and set(grid) == {"step"} else None
        if isinstance(step, bool) or not isinstance(step, int | float) or not 0 < step <= 60:
            raise ValueError('grid: give {"step": seconds} with 0 < step <= 60')
        return {"grid": {"step": float(step)}}

    def check_parameters(self, parameters: dict) -> dict:
        """Kept as given (imports store their source, video id and grid), except that a
        grid given as ``{"step": s}`` must be a positive step of at most 60 s."""
        grid = parameters.get("grid")
        if isinstance(grid, dict):
            try:
                self.check_project_parameters({"grid": grid})
            except ValueError as error:
                raise ParametersInvalid("grid", str(error)) from None
            return {**parameters, "grid": {"step": float(grid["step"])}}
        return parameters

    def packet_schema(self, schema: dict, parameters: dict) -> dict:
        """A packet's own grid step (``{"grid": {"step": s}}``, chosen on the new-packet
        page or by its project) replaces the kind's ``grid_step``, so the workspace snaps
        marks to the grid the scorer uses. A field without a ``grid_step`` (the imported
        moment kinds, whose intervals keep the source's precision) stays as it is."""
        grid = parameters.get("grid") if isinstance(parameters, dict) else None
        step = grid.get("step") if isinstance(grid, dict) else None
        if not isinstance(step, int | float) or isinstance(step, bool) or step <= 0:
            return schema
        fields = [
            {**f, "grid_step": float(step)} if f.get("type") == "interval_list" and f.get("grid_step") else f
            for f in schema["fields"]
        ]
        return {**schema, "fields": fields}

    def task_parameters(self, packet) -> dict:
        steps = [f.get("grid_step") for f in packet.task_kind.schema["fields"] if f.get("type") == "interval_list"]
        step = next((s for s in steps if s), None)
        # A packet's own grid (imported published labels) wins over the task kind's step.
        grid = packet.parameters.get("grid") or ({"step": step} if step else [0.0, packet.video.duration])
        return {"corpus": [{"video_id": video_id(packet), "duration": packet.video.duration, "grid": grid}]}

    def _queries(self, packet, queries: list[dict]) -> list[dict]:
        source = packet.parameters.get("source", "frameledger")
        return [{**q, "video_id": video_id(packet), "source": source} for q in queries]

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        keys = ("query_id", "video_id", "source", "intervals")
        queries = [{k: q[k] for k in keys} for q in self._queries(packet, submission["queries"])]
        return {
            "gt.json": dumps({"queries": queries}),
            "vocabulary.json": dumps({q["query_id"]: q["query"] for q in submission["queries"]}),
            "oracle.jsonl": self._oracle_rows(packet, queries),
        }

    def _oracle_rows(self, packet, queries: list[dict]) -> bytes:
        """One row per query: the best interval on the packet's grid (the scorer's witness;
        the first acceptable interval itself when it is on the grid), so the file scores 1.0."""
        from scoring.moments import best_grid_interval, corpus_grids

        grid = next(iter(corpus_grids(self.task_parameters(packet)["corpus"]).values()))
        rows = []
        for q in queries:
            first = q["intervals"][0]
            legal = all(any(abs(t - g) <= 1e-6 for g in grid) for t in first)
            start, end = first if legal else best_grid_interval(grid, q["intervals"])[1]
            rows.append((json.dumps({"query_id": q["query_id"], "start": start, "end": end}) + "\n").encode())
        return b"".join(rows)

    def union(self, a_scored: list, b_scored: list, *, schema: dict, scorer) -> list:
        return union_moments(a_scored, b_scored)

    def ledger_as_submission(self, packet, document: dict) -> tuple[dict, bytes]:
        queries = self._queries(packet, document["queries"])
        return {"queries": queries}, _rows(queries)
