"""ServerError: a request the server refuses, with its HTTP status and protocol error code."""

from __future__ import annotations

from graphbook import protocol as p
from graphbook.errors import Problem


class ServerError(Exception):
    """Raised by handlers and the run manager; replied as `ErrorReply` (HTTP) or `error` (ws)."""

    def __init__(
        self,
        status: int,
        code: p.ErrorCode,
        message: str,
        problems: list[Problem] | None = None,
        fields: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code: p.ErrorCode = code
        self.message = message
        self.problems = list(problems or [])
        self.fields = dict(fields or {})
        """What is wrong with each field of a form (an app's inputs), by its name."""
        self.close = False
        """Close the connection once the reply is sent (the rest of a body too large is not
        read: a compressed body would be decompressed to the end just to be dropped)."""

    def body(self) -> p.ErrorReply:
        return p.ErrorReply(p.ErrorBody(self.code, self.message, self.problems, self.fields))


def not_found(what: str) -> ServerError:
    return ServerError(404, "not_found", what)


def bad_message(message: str) -> ServerError:
    return ServerError(400, "bad_message", message)


def conflict(message: str, code: p.ErrorCode = "conflict") -> ServerError:
    return ServerError(409, code, message)
