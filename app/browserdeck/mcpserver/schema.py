"""Tool input schemas, written by hand, and the small validator that checks calls against them.

Hand-written because the schema is context every agent pays for on every turn
(playwright-mcp #1290: 14.4k tokens of schemas): no generated titles, no
``$schema``, one short line per field. The validator covers exactly the JSON
Schema subset used here and words its errors for an LLM.
"""

from __future__ import annotations

from typing import Any

from browserdeck.errors import InvalidInput

JSON = dict[str, Any]

# Arguments Playwright MCP clients send that we accept without declaring them (so the
# schema stays small): ``element``/``startElement``/``endElement`` (human descriptions,
# used there for permission prompts) and options that change nothing here are ignored;
# ``target``/``startTarget``/``endTarget`` are Playwright MCP's names for our refs.
# (``filename``, "save the result to this file", is handled by the server.)
IGNORED = frozenset({"element", "startElement", "endElement", "scale", "static", "all", "boxes"})
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


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _check(value: Any, schema: JSON, where: str) -> Any:
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _TYPES[kind]) and not (
            kind in ("integer", "number") and isinstance(value, bool)
        )
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            value, ok = int(value), True
        if not ok:
            raise InvalidInput(
                f"{where} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, "
                f"not {type(value).__name__} {value!r}"[:300]
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
