"""web/src/protocol.ts declares exactly the messages and payloads of graphbook/protocol/."""

from __future__ import annotations

import difflib
import re

import protocol_ts

from graphbook import protocol


def ts_text() -> str:
    return protocol_ts.PROTOCOL_TS.read_text(encoding="utf-8")


def ts_list(name: str) -> list[str]:
    match = re.search(rf"export const {name} = \[(.*?)\] as const;", ts_text(), re.S)
    assert match, f"protocol.ts declares no {name}"
    return re.findall(r"'(\w+)'", match.group(1))


def test_server_message_types_match() -> None:
    assert ts_list("SERVER_MESSAGE_TYPES") == list(protocol.SERVER_TYPES)


def test_client_message_types_match() -> None:
    assert ts_list("CLIENT_MESSAGE_TYPES") == list(protocol.CLIENT_TYPES)


def test_every_dataclass_has_an_interface_with_the_same_fields() -> None:
    text = ts_text()
    for cls in protocol_ts.dataclasses_of_module():
        assert protocol_ts.interface(cls) in text, (
            f"protocol.ts: interface {cls.__name__} differs from graphbook.protocol; "
            "run `python tests/web/protocol_ts.py --write`"
        )


def test_generated_block_is_current() -> None:
    expected = protocol_ts.generated()
    current = protocol_ts.current_block(ts_text())
    diff = "\n".join(difflib.unified_diff(current.splitlines(), expected.splitlines(), lineterm=""))
    assert current == expected, f"run `python tests/web/protocol_ts.py --write`:\n{diff}"
