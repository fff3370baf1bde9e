"""BFCL's possible answers as answer keys, meaning what BFCL's own checker makes of them.

In a possible answer each parameter lists its acceptable values; ``""`` among them marks a
parameter that may be left out, and an object (or a list holding objects) holds the acceptable
values of each of its own keys. For a string parameter ``""`` is also a value like any other:
BFCL's checker accepts a call that sends it (a required parameter whose only listed value is
``""`` is right only when sent as ``""``, since a required parameter is never excused).

A parameter the function does not declare is left out of the key: BFCL's checker refuses every
parameter a function lacks, so leaving it out is the only answer it accepts, whatever values the
possible answer lists.
"""

from __future__ import annotations

from typing import Any

from agent_backtest.units.answer_key import ArgumentKey, CallKey

__all__ = ["answer_keys"]


def answer_keys(
    functions: list[dict[str, Any]], ground_truth: list[dict[str, dict[str, Any]]]
) -> list[CallKey]:
    """One call key per call of the possible answer, in its order."""
    declared = {f["name"]: f["parameters"].get("properties", {}) for f in functions}
    keys = []
    for call in ground_truth:
        name, params = next(iter(call.items()))
        known = declared.get(name, {})
        arguments = {
            key: _argument_key(opts, _is_string(known[key]))
            for key, opts in params.items()
            if key in known
        }
        keys.append(CallKey(name=name, arguments=arguments))
    return keys


def _is_string(schema: Any) -> bool:
    """Whether a parameter's schema declares a string (BFCL's checker tests the type first)."""
    return isinstance(schema, dict) and schema.get("type") == "string"


def _argument_key(options: Any, string: bool = False) -> ArgumentKey:
    """One parameter's acceptable values as an argument's key; ``string``: the parameter is a
    string, for which ``""`` is a value as well as the mark of leaving it out."""
    options = options if isinstance(options, list) else [options]
    optional = any(isinstance(o, str) and o == "" for o in options)
    values = [o for o in options if not (isinstance(o, str) and o == "")]
    nested = [o for o in values if isinstance(o, dict) or _holds_objects(o)]
    if not nested:
        return ArgumentKey(
            values=[*values, ""] if optional and string else values, optional=optional
        )
    if len(values) != 1:
        raise ValueError(f"nested options beside other values: {options}")
    (value,) = values
    if isinstance(value, dict):
        fields = {key: _argument_key(sub) for key, sub in value.items()}
        return ArgumentKey(fields=fields, optional=optional)
    items = [
        ArgumentKey(fields={key: _argument_key(sub) for key, sub in item.items()})
        if isinstance(item, dict)
        else ArgumentKey(values=[item])
        for item in value
    ]
    return ArgumentKey(items=items, optional=optional)


def _holds_objects(value: Any) -> bool:
    """A list with an object among its items (each such object holds options)."""
    return isinstance(value, list) and any(isinstance(item, dict) for item in value)
