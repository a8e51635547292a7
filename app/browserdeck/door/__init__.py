"""The front door's vocabulary: requests that describe themselves, calls, and addons.

``request``: the base of every request model (its answer, its name in the activity log,
its MCP tool and CLI command). ``call``: who calls (``Caller``) and one call as addons
see it (``Call``). ``addons``: the seam every call passes (``Addon``, ``Addons``) and
``activity``, the first addon. The door itself is ``browserdeck.deck.Deck``; see
docs/architecture.md, "The front door".

Nothing is imported here: the CLI reads ``words`` without pydantic.
"""
