"""The adapter interface of a task family and the registry of adapters.

A task family (``schema["family"]``) is what a scorer grades: the action ledger, the
break-point ledger, moment queries. Everything the application does differently per
family goes through the family's adapter, never through ``if family == …`` elsewhere:

* ``export_files``: the version's task-ready files (``gt.json``, ``vocabulary.json``,
  the oracle submission);
* ``task_parameters``: the scorer's task parameters for a packet;
* ``union``: the scorer's own alignment of two annotators' events;
* ``ledger_as_submission``: a frozen ledger scored like an agent's submission;
* ``check_parameters`` / ``packet_schema``: a packet's ``parameters`` (checked when the
  packet is made) and the task kind's schema with them applied (what that packet's
  events are validated against and its form shows);
* ``ui``: what the browser shows differently for the family (the parameters the pages
  ask for, form sections, an event's one-line summary, the form's warnings), sent inside
  every schema the API presents (``browser_schema``): the browser's code never names a
  family.

Facts of the scoring side (the file-size cap, the leaderboard's key metrics, which
scorers grade a family) come from the scorer registry (``scoring.registry``).
Imports only the standard library and ``scoring``; adapters read packets and videos
through their attributes and never query the database.
"""

from __future__ import annotations

import json

from scoring import get_scorer


class UnknownFamily(ValueError):
    """No adapter is registered for this family."""


class ParametersInvalid(ValueError):
    """A packet parameter the family does not accept; ``field`` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class FamilyAdapter:
    """One task family's behaviour in the application. Subclass, set ``family`` and
    override what differs; register an instance with :func:`register_adapter`."""

    family: str = ""
    # Whether calibration adds reference rows (a no-media prior and the retrieval ranker,
    # ``annotator.reads.moment_corpus``) to the scorer's anchors.
    reference_calibration: bool = False
    # Whether maintainers may submit executable bundles (``annotator.actions.bundles``).
    executable_bundles: bool = False
    # Its packets ask for intervals on a time grid: their videos get a moment-search index
    # (annotator.reads.search); task_parameters gives the grid.
    moment_search: bool = False
    # The label file the packet page imports into the provisional tier
    # (``annotator.reads.label_imports.PREVIEWS``), or None.
    label_format: str | None = None
    # The packet parameters a person gives on the new-packet and project pages
    # ("players", "grid"): those pages show these fields for the family's kinds.
    asks: tuple[str, ...] = ()
    # The most events one ledger of the family holds: what its union and agreement compare
    # per side (``scoring.align.LEDGER_EVENT_CAPS``). The save refuses the event past it.
    max_events: int = 5000

    def ui(self) -> dict:
        """What the browser does differently for this family, as ``schema["ui"]`` of the
        schemas the API and the pages present (``browser_schema``; never stored, never
        hashed). ``asks`` is always there; the rest only when the family has it:

        * ``asks``: :attr:`asks`, the packet parameters the pages ask for;
        * ``sections``: the form in sections, ``[[title, [field, …]], …]`` (fields not
          listed go last); without it, one section;
        * ``summary``: an event in one line (tables, timeline tooltips), parts joined
          with " · ": ``{"text": "{server|surname} serves", "if": field}``; ``{field}``
          is its value ("?" when missing), ``|surname`` the last word of a name,
          ``|words`` underscores as spaces, ``|count:noun`` a list's length and noun;
          a part with ``if`` is left out while that field is empty. Without it: the
          values of the fields, the boundaries left out;
        * ``checks``: consistency warnings the form shows while an event is edited
          (advice, never a refusal): ``[{"rule": name, …the rule's fields}]``, the
          rules of ``frontend/static/frontend/js/event_schema.js`` (``CHECKS``).
        """
        return {"asks": list(self.asks)}

    def check_parameters(self, parameters: dict) -> dict:
        """The packet parameters this family accepts, cleaned (``ParametersInvalid``
        otherwise). By default any JSON object is kept as given."""
        return parameters

    def packet_schema(self, schema: dict, parameters: dict) -> dict:
        """The task kind's ``schema`` as it applies to a packet with ``parameters``."""
        return schema

    def task_parameters(self, packet) -> dict:
        """The scorer's task parameters for ``packet`` (the same for all its versions)."""
        return {}

    def check_project_parameters(self, params: dict) -> dict:
        """A project's parameters (which its packets are created with), checked: the
        cleaned dict, or ``ValueError`` whose message names the offending key. Narrower
        than :meth:`check_parameters`: a project sets what a person chooses (players, a
        grid), not what an import records (a source, a video id). Families without
        project parameters accept only ``{}``."""
        if params:
            raise ValueError(f"this task kind takes no parameters (got {', '.join(sorted(map(str, params)))})")
        return {}

    def export_files(self, packet, submission: dict) -> dict[str, bytes]:
        """``gt.json``, ``vocabulary.json`` and the oracle submission of a version whose
        events, in the scorer's ground-truth shape, are ``submission``."""
        raise NotImplementedError

    def union(self, a_scored: list, b_scored: list, *, schema: dict, scorer) -> list:
        """Union items (``scoring.UnionItem`` or dicts with ``status``, ``a_index``,
        ``b_index``, ``differing_fields``) of two event lists in the scorer's shape."""
        raise NotImplementedError

    def ledger_as_submission(self, packet, document: dict) -> tuple[dict, bytes]:
        """A frozen ledger's ``document`` (scorer shape) as the scorer's ledger shape and
        as the bytes of a submission file."""
        return document, json.dumps(document).encode("utf-8")


_ADAPTERS: dict[str, FamilyAdapter] = {}


def register_adapter(adapter: FamilyAdapter) -> FamilyAdapter:
    if not adapter.family:
        raise ValueError("an adapter needs a family name")
    if adapter.family in _ADAPTERS:
        raise ValueError(f"an adapter for the {adapter.family} family is registered already")
    _ADAPTERS[adapter.family] = adapter
    return adapter


def unregister_adapter(family: str) -> None:
    _ADAPTERS.pop(family, None)


def family_names() -> list[str]:
    return sorted(_ADAPTERS)


def adapter_for(family: str) -> FamilyAdapter:
    try:
        return _ADAPTERS[family]
    except KeyError:
        raise UnknownFamily(f"no adapter for the task family {family!r} (known: {', '.join(family_names())})") from None


def adapter_for_scorer(scorer_id: str) -> FamilyAdapter:
    """The adapter of the family the scorer grades (``UnknownScorer`` is a ValueError)."""
    return adapter_for(get_scorer(scorer_id).kind)


def browser_schema(schema: dict) -> dict:
    """``schema`` as the browser gets it: with its family's :meth:`FamilyAdapter.ui`."""
    return {**schema, "ui": adapter_for(schema["family"]).ui()}


def dumps(obj, *, newline: bool = True) -> bytes:
    """JSON as the export writes it: indented, UTF-8, a final newline unless told."""
    return (json.dumps(obj, indent=2, ensure_ascii=False) + ("\n" if newline else "")).encode("utf-8")
