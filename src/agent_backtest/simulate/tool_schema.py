"""Whether a tool call's arguments are ones the tool's JSON Schema accepts.

The check holds a call to the keywords a tool-calling API enforces on arguments: ``type``,
``enum``, ``const``, ``required``, ``properties``, ``additionalProperties`` and ``items``, and
``anyOf``/``oneOf`` as "one of these is met". Other keywords (formats, patterns, bounds) are not
checked: a value they would refuse is left to the judge, never failed on a guess.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 32
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def schema_problems(value: Any, schema: Any, path: str = "arguments", depth: int = 0) -> list[str]:
    """What ``schema`` refuses in ``value``, one line per problem naming its path ([] if none)."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return []
    problems = _type_problem(value, schema.get("type"), path)
    if problems:
        return problems  # a value of the wrong type has no properties or items worth checking
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: must be {schema['const']!r}")
    if isinstance(value, dict):
        problems += _object_problems(value, schema, path, depth)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problems += schema_problems(item, schema["items"], f"{path}[{index}]", depth + 1)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if (
            isinstance(options, list)
            and options
            and all(schema_problems(value, option, path, depth + 1) for option in options)
        ):
            problems.append(f"{path}: matches none of the {key} schemas")
    return problems


def _type_problem(value: Any, expected: Any, path: str) -> list[str]:
    """The problem when ``value`` is of none of the ``expected`` JSON types."""
    names = [expected] if isinstance(expected, str) else expected
    if not isinstance(names, list) or not all(name in _TYPES for name in names):
        return []  # no type, or one this check does not know: not refused on a guess
    for name in names:
        # JSON has one number type; a bool is not a number, and 2.0 is an integer.
        if isinstance(value, bool) and name not in ("boolean",):
            continue
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return []
        if isinstance(value, _TYPES[name]):
            return []
    return [f"{path}: expected {' or '.join(names)}, got {_json_type(value)}"]


def _object_problems(value: dict[str, Any], schema: dict[str, Any], path: str, depth: int) -> list:
    """Missing required properties, properties refused, and each property's own problems."""
    problems = []
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    problems += [f"{path}.{name}: required, missing" for name in required if name not in value]
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problems += schema_problems(item, properties[name], f"{path}.{name}", depth + 1)
        elif extra is False:
            problems.append(f"{path}.{name}: not a parameter of the tool")
        elif isinstance(extra, dict):
            problems += schema_problems(item, extra, f"{path}.{name}", depth + 1)
    return problems


def _json_type(value: Any) -> str:
    """The JSON name of a value's type."""
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if name == "integer" and isinstance(value, bool):
            continue
        if isinstance(value, _TYPES[name]):
            return name
    return type(value).__name__
