"""The Graphbook server: HTTP API, websocket event stream and interactive runs (aiohttp).
`graphbook.server.app.create_app` builds it from `graphbook.server.settings.ServerSettings`."""
