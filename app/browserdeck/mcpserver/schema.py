"""Tool input schemas and the small validator that checks the tools' own arguments.

A tool argument that is a field of a request (``engine/options.py``) takes its schema
from that model (``from_model``, ``field``): type, description, default and choices are
declared there once, and the model alone checks its value (bounds too) when the tool
builds the request: such an argument is checked once, by the model. Only the MCP tools'
own arguments (``snapshot``, Playwright MCP's spellings) are written here with
``s``/``b``/``i``/… and checked by ``validate_object``, which also refuses unknown
names and says which are missing. The schema is context every agent pays for on every
turn (playwright-mcp #1290: 14.4k tokens of schemas), so the derived one is compact
too: no titles, no ``$schema``, no self-evident defaults.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from browserdeck.engine.options import field_schemas, required_fields
from browserdeck.errors import InvalidInput

JSON = dict[str, Any]

# Arguments Playwright MCP clients send that we accept without declaring them (so the
# schema stays small): ``element``/``startElement``/``endElement`` (human descriptions,
# used there for permission prompts; the click-like tools check them against the ref)
# and options that change nothing here (ignored);
# ``target``/``startTarget``/``endTarget`` are Playwright MCP's names for our refs.
# (``filename``, "save the result to this file", is handled by the server.)
IGNORED = frozenset({"element", "startElement", "endElement", "scale", "static", "all", "boxes"})
# Of those, the descriptions are kept (when they are strings) for the tools that check them
# against the ref (mcpserver/element_guard.py); nothing passes them to the engine.
DESCRIPTIONS = frozenset({"element", "startElement", "endElement"})
ALIASES = {"target": "ref", "startTarget": "startRef", "endTarget": "endRef"}


def s(description: str | None = None, enum: list[str] | None = None) -> JSON:
    out: JSON = {"type": "string"}
    if enum:
        out["enum"] = enum
    if description:
        out["description"] = description
    return out


def i(description: str | None = None) -> JSON:
    out: JSON = {"type": "integer"}
    if description:
        out["description"] = description
    return out


def n(description: str | None = None) -> JSON:
    out: JSON = {"type": "number"}
    if description:
        out["description"] = description
    return out


def b(description: str | None = None) -> JSON:
    out: JSON = {"type": "boolean"}
    if description:
        out["description"] = description
    return out


def arr(items: JSON, description: str | None = None) -> JSON:
    out: JSON = {"type": "array", "items": items}
    if description:
        out["description"] = description
    return out


def obj(
    properties: JSON | None = None,
    required: list[str] | None = None,
    description: str | None = None,
) -> JSON:
    out: JSON = {"type": "object", "properties": properties or {}}
    if required:
        out["required"] = required
    if description:
        out["description"] = description
    return out


def from_model(
    model: type[BaseModel],
    *names: str,
    rename: dict[str, str] | None = None,
    extra: JSON | None = None,
    required: list[str] | None = None,
) -> JSON:
    """An object schema of ``model``'s fields ``names`` (JSON names), as the model declares
    them; ``rename`` gives a field the tool's own name (``fn`` -> ``function``), ``extra``
    adds the tool's own arguments. Required: what the model requires, of ``names``, or
    ``required`` where the tool needs more (a navigate needs its url; the model's
    ``back`` does not)."""
    rename = rename or {}
    properties = {rename.get(n, n): field(model, n) for n in names}
    if required is None:
        required = [rename.get(n, n) for n in required_fields(model) if n in names]
    return obj({**properties, **(extra or {})}, required)


# Bounds stay with the model, which enforces them and names the bound in its error; the
# tool schema leaves them out, as every agent pays for each character of it on every turn
# (tests/mcp/test_sessions.py bounds the size of `core`).
_BOUNDS = frozenset({"minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"})


def _unbounded(schema: JSON) -> JSON:
    out = {k: v for k, v in schema.items() if k not in _BOUNDS}
    if "items" in out:
        out["items"] = _unbounded(out["items"])
    if "properties" in out:
        out["properties"] = {k: _unbounded(v) for k, v in out["properties"].items()}
    return out


class FromModel(dict[str, Any]):
    """A property schema taken from a request model: the model checks its values."""


def field(model: type[BaseModel], name: str) -> JSON:
    """One field of ``model`` as the model declares it (by its JSON name), bounds aside."""
    return FromModel(_unbounded(field_schemas(model)[name]))


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _is(value: Any, kind: str) -> bool:
    return isinstance(value, _TYPES[kind]) and not (
        kind in ("integer", "number") and isinstance(value, bool)
    )


def _check(value: Any, schema: JSON, where: str) -> Any:
    if isinstance(schema, FromModel):
        return value  # the request model checks it, once, when the tool builds it
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        ok = any(_is(value, k) for k in kinds)
        if not ok and "integer" in kinds and isinstance(value, float) and value.is_integer():
            value, ok = int(value), True
        if not ok:
            words = " or ".join(f"{'an' if k[0] in 'aeiou' else 'a'} {k}" for k in kinds)
            raise InvalidInput(
                f"{where} must be {words}, not {type(value).__name__} {value!r}"[:300]
            )
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidInput(
            f"{where} must be one of {', '.join(map(str, schema['enum']))}, not {value!r}"
        )
    if kind == "array":
        return [_check(v, schema["items"], f"{where}[{k}]") for k, v in enumerate(value)]
    if kind == "object" and "properties" in schema:
        return validate_object(value, schema, where)
    return value


def validate_object(args: dict[str, Any], schema: JSON, where: str) -> dict[str, Any]:
    props: JSON = schema.get("properties", {})
    out: dict[str, Any] = {}
    for key, value in args.items():
        key = ALIASES.get(key, key) if key not in props else key
        if key in IGNORED and key not in props:
            if key in DESCRIPTIONS and isinstance(value, str):
                out[key] = value
            continue
        if key not in props:
            known = ", ".join(props) or "none"
            raise InvalidInput(
                f"{where}: unknown argument {key!r}", hint=f"arguments it takes: {known}"
            )
        if value is None:
            continue
        out[key] = _check(value, props[key], f"{where}.{key}")
    missing = [k for k in schema.get("required", []) if k not in out]
    if missing:
        raise InvalidInput(
            f"{where}: missing required argument(s) {', '.join(missing)}",
            hint=f"arguments it takes: {', '.join(props)}",
        )
    return out
