r"""Making user-controlled text safe to show: the one function every renderer calls.

Test ids, tool, score, check and agent names, file paths, error messages and finding messages
come from the traces (or the user's agent), not from assay. Printed as they are, an ESC
(``\x1b[2J`` clears the screen), a carriage return (overwrites the line, hiding what came
before) or a bidirectional override (reorders what follows) changes what a terminal, a CI log
or a reader sees. :func:`visible` replaces each such character by its escape sequence, so the
text keeps every character and shows it; rich markup (``[red]``) is kept out of the renderers'
reach separately, by passing :class:`rich.text.Text` (never a markup string) to rich.
:func:`code_spans` turns the backtick-quoted names of assay's own sentences into HTML code.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line and paragraph separators, and the bidirectional formatting
# characters (the "Trojan Source" set): each changes layout or terminal state when printed.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_BUT_NEWLINE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value: object, *, newlines: bool = False) -> str:
    r"""``str(value)`` with every control character shown as its escape (``\x1b``, ``\r``).

    Args:
        value: Any value; it is converted with ``str``.
        newlines: Keep line feeds as they are (for text assay lays out over several lines
            itself); by default a line feed is shown as ``\n`` too, so that one name stays
            on one line.

    Returns:
        The text, printable as it is: no character left that moves the cursor, changes the
        terminal's state or reorders the line.
    """
    text = str(value)
    pattern = _UNSAFE_BUT_NEWLINE if newlines else _UNSAFE
    return pattern.sub(_escape, text)


def is_visible(text: str) -> bool:
    """Whether ``text`` holds no character that :func:`visible` would escape."""
    return _UNSAFE.search(text) is None


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_spans(escaped: str) -> str:
    """HTML-escaped prose with each backtick-quoted name as ``<code>name</code>``.

    assay's sentences quote names with backticks (calls to `search_kb`), as Markdown
    and the console show them; an HTML page would print the backticks. The text must be
    escaped already, so that a span's content stays text. A lone backtick is left as it is.
    """
    return _CODE_SPAN.sub(r"<code>\1</code>", escaped)
