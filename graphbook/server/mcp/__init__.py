"""The MCP front end: the server's catalog, workflow files and runs as tools and resources for
agents, over stdio (`graphbook mcp`) or streamable HTTP (`/mcp` on `graphbook serve`)."""

from __future__ import annotations

MISSING = (
    "the MCP server needs the `mcp` package (the official MCP Python SDK); install it with "
    "pip install 'graphbook[mcp]'"
)
