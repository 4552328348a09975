"""The Graphbook server: HTTP API, websocket event stream and interactive runs (aiohttp)."""

from graphbook.server.app import create_app
from graphbook.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
