"""The HTTP face of the server: one RouteTableDef a module, one module an area of the API, each
handler reading the app's parts through their keys (keys.py)."""
