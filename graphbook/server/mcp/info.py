"""server_info: where the server is and the folders it works in, as it resolves them (an
agent sees neither the server's working folder nor its file system)."""

from __future__ import annotations

import os
from typing import Any

from aiohttp import web
from mcp.server.mcpserver import Context, MCPServer

from graphbook import about
from graphbook.server.keys import SETTINGS
from graphbook.server.mcp.images import server_address
from graphbook.server.mcp.tools import READS, add


class InfoTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    def server_info(self, ctx: Context[Any, Any] | None = None) -> dict[str, Any]:
        """The server's version, its address (over HTTP; none over stdio) and its folders as
        absolute paths: the working folder (relative paths in parameters and outputs are
        resolved against it), workflows, nodes, components, data (run store, thumbnails,
        trash) and the media folders images are shown from."""
        settings = self.app[SETTINGS]
        return {
            "version": about.version(),
            "url": server_address(ctx),
            "folders": {
                "working": os.getcwd(),
                "workflows": str(settings.workflows.resolve()),
                "nodes": str(settings.nodes.resolve()),
                "components": str(settings.library.resolve()),
                "data": str(settings.data.resolve()),
                "media": [str(folder.resolve()) for folder in settings.media],
            },
        }


def register(server: MCPServer[Any], app: web.Application) -> None:
    add(server, InfoTools(app).server_info, READS)
