"""Safe HTML building: every string is escaped unless it is already :class:`Markup`.

Trace text reaches the page only through :func:`escape` here or through ``textContent`` in the
page's script, so a trace holding ``<script>`` is shown as text and never runs.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterable, Mapping

import orjson

# Characters that could end a <script> block or start markup inside one, and the two line
# separators that older JavaScript parsers reject in strings: written as JSON \u escapes.
_SCRIPT_UNSAFE = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_VOID = frozenset({"input", "br", "meta", "hr", "img"})
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


class Markup(str):
    """A string that is already HTML and is inserted as is."""


def escape(text: object) -> Markup:
    """Text as HTML: ``<``, ``>``, ``&`` and quotes escaped."""
    if isinstance(text, Markup):
        return text
    return Markup(html.escape("" if text is None else str(text), quote=True))


def tag(name: str, *children: object, attrs: Mapping[str, object] | None = None) -> Markup:
    """``<name attrs>children</name>`` with attribute values and text children escaped."""
    attributes = "".join(
        f' {key}="{escape(value)}"'
        for key, value in (attrs or {}).items()
        if value is not None and value is not False
    )
    if name in _VOID:
        return Markup(f"<{name}{attributes}>")
    return Markup(f"<{name}{attributes}>{join(children)}</{name}>")


def join(children: Iterable[object]) -> Markup:
    """Children concatenated; nested lists are flattened, None is skipped."""
    parts: list[str] = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, (list, tuple)) or (
            not isinstance(child, str) and isinstance(child, Iterable)
        ):
            parts.append(join(child))
        else:
            parts.append(escape(child))
    return Markup("".join(parts))


def script_json(value: object) -> Markup:
    """``value`` as JSON that is safe inside ``<script type="application/json">``."""
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    for char, replacement in _SCRIPT_UNSAFE.items():
        text = text.replace(char, replacement)
    return Markup(text)


def script_hash(source: str) -> str:
    """The CSP source expression that allows exactly this inline script and no other."""
    digest = hashlib.sha256(source.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def fill(template: str, parts: Mapping[str, str]) -> str:
    """Replace each ``{{name}}`` in one pass, so inserted text is never scanned again."""
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], template)
