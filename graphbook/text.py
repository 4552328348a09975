"""Text that every boundary can encode as UTF-8: the wire, the run store, workflow files, the
terminal and `run --json`.

A Python string may hold lone surrogates, which UTF-8 cannot encode: a file name that is not
UTF-8 (`os.listdir` decodes its bad bytes as U+DC80..U+DCFF, "surrogateescape"), a client's
JSON `"\\ud800"`, a row an older version wrote. Each one is written as the six characters of
its Python escape, `\\udcxx` (so the byte 0xE9 of a file name shows as `\\udce9`), and
everything else is left as it is (docs/protocol.md, "Text"). Strings only: making a value
JSON-safe is graphbook/plain.py's.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _escape_in_json(match: re.Match[str]) -> str:
    return f"\\\\u{ord(match.group()):04x}"  # in a JSON string literal, the backslash escaped


def encodable_text(text: str) -> str:
    """`text` with each lone surrogate written as `\\udcxx`."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)


def encodable_json(text: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) whose strings hold lone surrogates,
    as the JSON of the same value with each one written as `\\udcxx`: cheap when
    there are none, which is nearly always."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape_in_json, text)
