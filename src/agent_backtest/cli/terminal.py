"""Text from traces made safe to print: no control character reaches the terminal raw.

A trace is someone else's data. Its text, ids and file names may hold escape sequences (``ESC ]0;…``
retitles the window, ``ESC [2J`` clears the screen, others rewrite what was printed before) or
bidirectional overrides that make a line read other than it is. Every one of those is shown as
its escape (``\\x1b``, ``\\u202e``); line breaks and tabs stay, since messages have lines.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape as escape_markup
from rich.segment import Segment

_KEPT = {"\n", "\t"}
_CONTROLS = [chr(code) for code in (*range(0x00, 0x20), *range(0x7F, 0xA0))]
_BIDI = [
    chr(code) for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
]
_VISIBLE = str.maketrans(
    {
        char: (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        for char in (*_CONTROLS, *_BIDI)
        if char not in _KEPT
    }
)


def printable(text: str) -> str:
    """``text`` with every control character (but line breaks and tabs) shown as its escape."""
    return text.translate(_VISIBLE)


def one_line(text: str) -> str:
    """``text`` as one printed line: every control character shown as its escape, line breaks
    and tabs too (a file name holding a newline cannot forge a second line)."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def escape(text: str) -> str:
    """``text`` ready for rich markup: control characters shown, markup brackets escaped."""
    return escape_markup(printable(text))


def print_warnings(console: Console, warnings: Iterable[str]) -> None:
    """Each warning on its own line, in yellow."""
    for warning in warnings:
        console.print(f"warning: {warning}", style="yellow", markup=False)


class SafeConsole(Console):
    """A rich console that shows every control character in what it prints as its escape.

    The text of each segment is made printable just before it is styled, so rich's own codes
    (colours, the progress bar's cursor moves, which travel as control segments) still work.
    Rich drops BEL, BS, VT, FF and CR from text before that; :func:`escape` text first to show
    those too.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(printable(segment.text), segment.style)
            for segment in buffer
        )
